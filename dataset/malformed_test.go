package dataset

import (
	"path"
	"path/filepath"
	"testing"

	"github.com/r2med/r2med/internal/fileio"
	"github.com/r2med/r2med/ir"
)

// TestMalformed reads every file under testdata/malformed with the reader its
// folder names (tasks/ holds whole task directories for Load) and checks the
// exact error, so a message cannot lose its file, line or advice unnoticed.
func TestMalformed(t *testing.T) {
	t.Chdir("testdata/malformed")
	cases := []struct{ path, want string }{
		{"corpus-beir/invalid-utf8-title.jsonl",
			`corpus-beir/invalid-utf8-title.jsonl:1: invalid UTF-8 (byte 0xc3) at byte offset 28 of the line; the file must be UTF-8 text: convert it from its real encoding (iconv -f WINDOWS-1252 -t UTF-8 for text from Windows tools, say), or drop the bad bytes with iconv -c -f UTF-8 -t UTF-8`},
		{"corpus-beir/r2med-id.jsonl",
			`corpus-beir/r2med-id.jsonl:1: missing "_id" field (the line has "id": R2MED files use "id", BEIR files "_id"; check that the directory's files are all from one layout)`},
		{"corpus-beir/title-number.jsonl",
			`corpus-beir/title-number.jsonl:2: "title" is a number, want a string`},
		{"corpus/array-line.jsonl",
			`corpus/array-line.jsonl:2: line holds a JSON array, want one JSON object per line`},
		{"corpus/bad-escape.jsonl",
			`corpus/bad-escape.jsonl:2: malformed JSON at column 26: invalid character 'p' in string escape code; each line must be one complete JSON object`},
		{"corpus/nbsp-id.jsonl",
			`corpus/nbsp-id.jsonl:2: id "d\u00a02" contains U+00A0, which Python's str.split() takes for whitespace, at byte 1; pytrec_eval (and scripts that split TREC lines in Python) would cut the id there, so rename it`},
		{"qrels-tsv/unicode-space-id.tsv",
			`qrels-tsv/unicode-space-id.tsv:2: corpus-id "d\u20031" contains U+2003, which Python's str.split() takes for whitespace, at byte 1; pytrec_eval (and scripts that split TREC lines in Python) would cut the id there, so rename it`},
		{"exclusions/separator-id.tsv",
			`exclusions/separator-id.tsv:1: document id "d\x1c1" contains U+001C, which Python's str.split() takes for whitespace, at byte 1; pytrec_eval (and scripts that split TREC lines in Python) would cut the id there, so rename it`},
		{"corpus/joined-bom.jsonl",
			`corpus/joined-bom.jsonl:2: line starts with a byte-order mark (U+FEFF, bytes EF BB BF), as where files with one were joined; remove it (sed -i '2,$ s/^\xEF\xBB\xBF//' FILE)`},
		{"corpus/bad-json.jsonl",
			`corpus/bad-json.jsonl:2: malformed JSON at column 35: unexpected end of JSON input; each line must be one complete JSON object`},
		{"corpus/beir-id.jsonl",
			`corpus/beir-id.jsonl:1: missing "id" field (the line has "_id": R2MED files use "id", BEIR files "_id"; check that the directory's files are all from one layout)`},
		{"corpus/bool-id.jsonl",
			`corpus/bool-id.jsonl:1: "id" is a boolean, want a string (or a number)`},
		{"corpus/control-char.jsonl",
			`corpus/control-char.jsonl:2: malformed JSON at column 26: invalid character '\t' in string literal; each line must be one complete JSON object`},
		{"corpus/dup-id.jsonl",
			`corpus/dup-id.jsonl:4: document id "d1" already appeared on line 1; ids must be unique, remove or rename one of the two`},
		{"corpus/empty-id.jsonl",
			`corpus/empty-id.jsonl:2: id is empty; give every record a non-empty id`},
		{"corpus/invalid-utf8-id.jsonl",
			`corpus/invalid-utf8-id.jsonl:1: invalid UTF-8 (byte 0xff) at byte offset 9 of the line; the file must be UTF-8 text: convert it from its real encoding (iconv -f WINDOWS-1252 -t UTF-8 for text from Windows tools, say), or drop the bad bytes with iconv -c -f UTF-8 -t UTF-8`},
		{"corpus/latin1-text.jsonl",
			`corpus/latin1-text.jsonl:2: invalid UTF-8 (byte 0xe9) at byte offset 25 of the line; the file must be UTF-8 text: convert it from its real encoding (iconv -f WINDOWS-1252 -t UTF-8 for text from Windows tools, say), or drop the bad bytes with iconv -c -f UTF-8 -t UTF-8`},
		{"corpus/lone-surrogate.jsonl",
			`corpus/lone-surrogate.jsonl:2: unpaired UTF-16 surrogate \ud83d (half of a character) at byte offset 36 of the line; write both halves of the pair (an emoji is two escapes, as in \ud83d\ude00) or remove the escape`},
		{"corpus/missing-id.jsonl",
			`corpus/missing-id.jsonl:2: missing "id" field; every document needs an id`},
		{"corpus/missing-text.jsonl",
			`corpus/missing-text.jsonl:2: missing "text" field; every record needs one (it may be the empty string)`},
		{"corpus/null-line.jsonl",
			`corpus/null-line.jsonl:2: line holds a JSON null, want one JSON object per line`},
		{"corpus/null-text.jsonl",
			`corpus/null-text.jsonl:2: "text" is null, want a string (use "" for an empty text)`},
		{"corpus/number-text.jsonl",
			`corpus/number-text.jsonl:2: "text" is a number, want a string`},
		{"corpus/space-id.jsonl",
			`corpus/space-id.jsonl:2: id "doc 2" contains whitespace at byte 3; TREC run and qrels files separate fields by whitespace, so rename the id`},
		{"corpus/trailing-garbage.jsonl",
			`corpus/trailing-garbage.jsonl:2: malformed JSON at column 27: invalid character 'e' after top-level value; each line must be one complete JSON object`},
		{"corpus/truncated.jsonl.gz",
			`corpus/truncated.jsonl.gz:99: file ends in the middle of its data (unexpected EOF); it is probably truncated, download or decompress it again`},
		{"corpus/two-objects.jsonl",
			`corpus/two-objects.jsonl:1: malformed JSON at column 26: invalid character '{' after top-level value; each line must be one complete JSON object`},
		{"exclusions/dup-pair.tsv",
			`exclusions/dup-pair.tsv:3: document "d1" is excluded for query "q1" again (first on line 1); list each pair once`},
		{"exclusions/three-fields.tsv",
			`exclusions/three-fields.tsv:3: line has 3 fields, want 2: a query id and the id of a document it must not retrieve`},
		{"qrels-jsonl/beir-names.jsonl",
			`qrels-jsonl/beir-names.jsonl:1: missing "q_id" field (the line has "query-id": R2MED's qrels.jsonl names its fields "q_id", "p_id" and "score")`},
		{"qrels-jsonl/dup-pair.jsonl",
			`qrels-jsonl/dup-pair.jsonl:3: document "d1" is judged twice for query "0"; keep one judgment per pair`},
		{"qrels-jsonl/fraction-score.jsonl",
			`qrels-jsonl/fraction-score.jsonl:2: "score" 1.5 is not an integer grade`},
		{"qrels-jsonl/huge-score.jsonl",
			`qrels-jsonl/huge-score.jsonl:1: "score" 1e30 is out of range for a grade`},
		// Past float64's range: ParseFloat gives +Inf and ErrRange.
		{"qrels-jsonl/overflow-score.jsonl",
			`qrels-jsonl/overflow-score.jsonl:1: "score" 1e400 is out of range for a grade`},
		{"qrels-jsonl/invalid-utf8-id.jsonl",
			`qrels-jsonl/invalid-utf8-id.jsonl:2: invalid UTF-8 (byte 0x80) at byte offset 24 of the line; the file must be UTF-8 text: convert it from its real encoding (iconv -f WINDOWS-1252 -t UTF-8 for text from Windows tools, say), or drop the bad bytes with iconv -c -f UTF-8 -t UTF-8`},
		{"qrels-jsonl/missing-p_id.jsonl",
			`qrels-jsonl/missing-p_id.jsonl:1: missing "p_id" field; every judgment needs an id`},
		{"qrels-jsonl/missing-score.jsonl",
			`qrels-jsonl/missing-score.jsonl:2: missing "score" field; every judgment needs an integer grade`},
		{"qrels-jsonl/string-score.jsonl",
			`qrels-jsonl/string-score.jsonl:2: "score" is a string, want an integer grade`},
		{"qrels-jsonl/word-score.jsonl",
			`qrels-jsonl/word-score.jsonl:2: "score" is a string, want an integer grade`},
		{"qrels-tsv/dup-pair.tsv",
			`qrels-tsv/dup-pair.tsv:4: document "d1" is judged twice for query "q1"; keep one judgment per pair`},
		{"qrels-tsv/empty.tsv",
			`qrels-tsv/empty.tsv: empty file: want a header line "query-id\tcorpus-id\tscore" and judgment rows`},
		{"qrels-tsv/float-score.tsv",
			`qrels-tsv/float-score.tsv:2: score "1.0" is not an integer grade`},
		{"qrels-tsv/invalid-utf8.tsv",
			`qrels-tsv/invalid-utf8.tsv:3: invalid UTF-8 (byte 0xe9) at byte offset 4 of the line; the file must be UTF-8 text: convert it from its real encoding (iconv -f WINDOWS-1252 -t UTF-8 for text from Windows tools, say), or drop the bad bytes with iconv -c -f UTF-8 -t UTF-8`},
		{"qrels-tsv/no-header.tsv",
			`qrels-tsv/no-header.tsv:1: first line is a judgment, not the header "query-id\tcorpus-id\tscore"; BEIR's loader skips the first line, so add the header`},
		{"qrels-tsv/short-row.tsv",
			`qrels-tsv/short-row.tsv:3: row has 2 fields, want 3 (query-id corpus-id score)`},
		{"qrels-tsv/trec-format.tsv",
			`qrels-tsv/trec-format.tsv:1: header has 4 columns, want 3 (query-id corpus-id score); is this a BEIR qrels file?`},
		{"qrels-tsv/word-score.tsv",
			`qrels-tsv/word-score.tsv:2: score "x" is not an integer grade`},
		{"queries/dup-id.jsonl",
			`queries/dup-id.jsonl:2: query id "0" already appeared on line 1; ids must be unique, remove or rename one of the two`},
		{"queries/excluded-empty-id.jsonl",
			`queries/excluded-empty-id.jsonl:1: element 2 of excluded_ids is empty; give every record a non-empty id`},
		{"queries/excluded-string.jsonl",
			`queries/excluded-string.jsonl:1: "excluded_ids" is a string, want a list of document ids`},
		{"queries/latin1-text.jsonl",
			`queries/latin1-text.jsonl:1: invalid UTF-8 (byte 0xef) at byte offset 23 of the line; the file must be UTF-8 text: convert it from its real encoding (iconv -f WINDOWS-1252 -t UTF-8 for text from Windows tools, say), or drop the bad bytes with iconv -c -f UTF-8 -t UTF-8`},
		{"queries/lone-surrogate.jsonl",
			`queries/lone-surrogate.jsonl:3: unpaired UTF-16 surrogate \udc00 (half of a character) at byte offset 21 of the line; write both halves of the pair (an emoji is two escapes, as in \ud83d\ude00) or remove the escape`},
		{"queries/missing-text.jsonl",
			`queries/missing-text.jsonl:1: missing "text" field; every record needs one (it may be the empty string)`},
		{"queries/text-array.jsonl",
			`queries/text-array.jsonl:1: "text" is an array, want a string`},
		{"tasks/bad-query-line",
			`tasks/bad-query-line/query.jsonl:3: missing "text" field; every record needs one (it may be the empty string)`},
		{"tasks/beir-qrels-plain-and-gz",
			`both tasks/beir-qrels-plain-and-gz/qrels/test.tsv and tasks/beir-qrels-plain-and-gz/qrels/test.tsv.gz exist; they hold the same data, so remove one of them (rm tasks/beir-qrels-plain-and-gz/qrels/test.tsv)`},
		{"tasks/beir-no-test",
			`tasks/beir-no-test has no qrels for split "test" (qrels/test.tsv does not exist); available splits: dev, train`},
		{"tasks/both-layouts",
			`tasks/both-layouts holds both query.jsonl (R2MED layout) and queries.jsonl (BEIR layout); keep the files of one layout per directory`},
		{"tasks/corpus-plain-and-gz",
			`both tasks/corpus-plain-and-gz/corpus.jsonl and tasks/corpus-plain-and-gz/corpus.jsonl.gz exist; they hold the same data, so remove one of them (rm tasks/corpus-plain-and-gz/corpus.jsonl)`},
		{"tasks/corpus-is-dir",
			`tasks/corpus-is-dir (R2MED layout) is missing corpus.jsonl; an R2MED task needs corpus.jsonl, query.jsonl and qrels.jsonl (or TREC qrels.txt); a BEIR task needs corpus.jsonl, queries.jsonl and qrels/<split>.tsv; any of them may be gzipped with .gz added`},
		{"tasks/empty-corpus",
			`tasks/empty-corpus/corpus.jsonl: no documents; the corpus file is empty`},
		{"tasks/empty-qrels",
			`tasks/empty-qrels/qrels.jsonl: no judgments; a task needs at least one to be evaluated`},
		{"tasks/no-query-file",
			`tasks/no-query-file has no query file (query.jsonl or queries.jsonl); an R2MED task needs corpus.jsonl, query.jsonl and qrels.jsonl (or TREC qrels.txt); a BEIR task needs corpus.jsonl, queries.jsonl and qrels/<split>.tsv; any of them may be gzipped with .gz added`},
		{"tasks/excluded-judged",
			`tasks/excluded-judged/query.jsonl (query "q2"): query "q2" excludes document "d2", which its judgments grade 1; a document cannot be both excluded and judged (BRIGHT's run.py asserts the same), so remove the judgment or the exclusion`},
		{"tasks/excluded-unknown-query",
			`tasks/excluded-unknown-query/excluded_ids.tsv:2: query "q7" is not one of the task's queries; the exclusions must come from the same task as the queries`},
		// The line of the first unknown judgment counts the header and
		// the blank line (CRLF line ends) as an editor does.
		{"tasks/beir-unknown-docs",
			`tasks/beir-unknown-docs/qrels/test.tsv:4: 1 judged document is not in tasks/beir-unknown-docs/corpus.jsonl (1 judgment): "d9"; check that the qrels belong to this corpus, or, if the corpus is a deliberate sample, allow missing documents (they then count as relevant but unretrievable)`},
		// A Hub export without its card: the error says what is missing.
		{"tasks/parquet-no-card",
			`tasks/parquet-no-card has no query file (query.jsonl or queries.jsonl); an R2MED task needs corpus.jsonl, query.jsonl and qrels.jsonl (or TREC qrels.txt); a BEIR task needs corpus.jsonl, queries.jsonl and qrels/<split>.tsv; any of them may be gzipped with .gz added; it holds parquet files (corpus/train-00000-of-00001.parquet), as a Hugging Face dataset repository does: copy the repository's README.md (its dataset card, whose configs say which files hold what) beside them, or give hf://datasets/OWNER/NAME`},
		// Ids compared as text: pandas' float ids are told apart.
		{"tasks/float-ids",
			`tasks/float-ids/qrels.jsonl:1: 1 judged document is not in tasks/float-ids/corpus.jsonl (1 judgment): "2"; tasks/float-ids/corpus.jsonl has "2.0" where the qrels have "2": ids are compared as text, and pandas writes an integer column with a missing value as floats (1.0), so write the ids as strings in both files; check that the qrels belong to this corpus, or, if the corpus is a deliberate sample, allow missing documents (they then count as relevant but unretrievable)`},
		{"tasks/r2med-no-qrels",
			`tasks/r2med-no-qrels (R2MED layout) is missing corpus.jsonl and qrels.jsonl (or qrels.txt); an R2MED task needs corpus.jsonl, query.jsonl and qrels.jsonl (or TREC qrels.txt); a BEIR task needs corpus.jsonl, queries.jsonl and qrels/<split>.tsv; any of them may be gzipped with .gz added`},
		{"tasks/r2med-two-qrels",
			`tasks/r2med-two-qrels holds both qrels.jsonl and qrels.txt; R2MED's code reads qrels.jsonl, so move qrels.txt away unless it is the one you mean`},
		{"tasks/unknown-docs",
			`tasks/unknown-docs/qrels.jsonl:2: 7 judged documents are not in tasks/unknown-docs/corpus.jsonl (8 judgments, the first on this line): "x1", "x2", "x3", "x4", "x5" and 2 more; check that the qrels belong to this corpus, or, if the corpus is a deliberate sample, allow missing documents (they then count as relevant but unretrievable)`},
		{"tasks/unknown-queries",
			`tasks/unknown-queries/qrels.txt:2: 1 judged query is not in tasks/unknown-queries/query.jsonl (2 judgments, the first on this line): "7"; the qrels must come from the same task as the queries`},
	}
	files, err := filepath.Glob("*/*")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != len(cases) {
		t.Errorf("%d entries under testdata/malformed, %d cases; give every file a case", len(files), len(cases))
	}
	for _, c := range cases {
		t.Run(c.path, func(t *testing.T) {
			err := readMalformed(t, c.path)
			if err == nil {
				t.Fatalf("no error, want %s", c.want)
			}
			if err.Error() != c.want {
				t.Errorf("error\n got: %s\nwant: %s", err, c.want)
			}
		})
	}
}

func readMalformed(t *testing.T, p string) error {
	t.Helper()
	kind := path.Dir(p)
	if kind == "tasks" {
		_, err := Load(p, Options{})
		return err
	}
	rc, err := fileio.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	switch kind {
	case "corpus":
		return ReadCorpus(rc, p, ir.LayoutR2MED, func(ir.Doc) error { return nil })
	case "corpus-beir":
		return ReadCorpus(rc, p, ir.LayoutBEIR, func(ir.Doc) error { return nil })
	case "queries":
		_, err = ReadQueries(rc, p, ir.LayoutR2MED)
	case "qrels-jsonl":
		_, err = ReadQrelsJSONL(rc, p)
	case "qrels-tsv":
		_, err = ReadBEIRQrels(rc, p)
	case "exclusions":
		_, err = ReadExclusions(rc, p)
	default:
		t.Fatalf("no reader for folder %s", kind)
	}
	return err
}
