package hubrepo

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/parquet-go/parquet-go"
	"github.com/r2med/r2med/dataset"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/trec"
)

const r2medMini = "testdata/r2med-mini"

// TestLoadHubR2MED reads a repository shaped like R2MED/<Task> and checks it
// against Load on the same files, which are R2MED's task layout too.
func TestLoadHubR2MED(t *testing.T) {
	task, err := Load(r2medMini, Spec{})
	if err != nil {
		t.Fatal(err)
	}
	if task.Name != "r2med-mini" || task.Dir != r2medMini || task.Layout != ir.LayoutR2MEDHub || task.Split != "" {
		t.Errorf("Name, Dir, ir.Layout, Split = %q, %q, %q, %q", task.Name, task.Dir, task.Layout, task.Split)
	}
	wantFiles := []string{"README.md", "corpus.jsonl", "query.jsonl", "qrels.jsonl"}
	for i, f := range wantFiles {
		wantFiles[i] = filepath.Join(r2medMini, f)
	}
	if !reflect.DeepEqual(task.Files, wantFiles) {
		t.Errorf("Files %q, want %q", task.Files, wantFiles)
	}
	ref, err := dataset.Load(r2medMini, dataset.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(task.Corpus, ref.Corpus) || !reflect.DeepEqual(task.Queries, ref.Queries) ||
		!reflect.DeepEqual(task.Qrels, ref.Qrels) || task.UnjudgedQueries != ref.UnjudgedQueries {
		t.Errorf("hub load differs from Load:\n%+v\n%+v", task, ref)
	}
	// R2MED keeps empty documents, and the queries' extra fields.
	if len(task.Corpus) != 5 || task.EmptyDocs != 0 || task.UnjudgedQueries != 1 || len(task.Queries) != 2 {
		t.Errorf("%d documents (%d empty), %d queries, %d unjudged", len(task.Corpus), task.EmptyDocs, len(task.Queries), task.UnjudgedQueries)
	}
	if got := string(task.Queries[0].Extra["body_system"]); got != `"Cardiovascular"` {
		t.Errorf("body_system %s", got)
	}

	named, err := Load(r2medMini, Spec{Shape: R2MED, Split: "test", Name: "Mini"})
	if err != nil || named.Name != "Mini" {
		t.Errorf("named load: %v, %v", named, err)
	}
	for _, c := range []struct {
		spec Spec
		want string
	}{
		{Spec{Split: "dev"}, `testdata/r2med-mini/README.md: split "dev" given, but an R2MED task has only test queries; use the split "test" or none`},
		{Spec{Shape: Nano}, `testdata/r2med-mini/README.md has no config "queries"; its configs (declared): qrels, corpus, query, hyde, query2doc`},
		{Spec{Shape: "beir"}, `unknown repository kind "beir" (want "r2med", "nano" or "bright")`},
		{Spec{QrelsConfig: "hyde"}, `testdata/r2med-mini/README.md: config "hyde" has no split "hyde"; its splits: o3_mini, qwen_7b`},
	} {
		if _, err := Load(r2medMini, c.spec); err == nil || err.Error() != c.want {
			t.Errorf("%+v:\n got %v\nwant %s", c.spec, err, c.want)
		}
	}
	if _, err := Load(filepath.Join(r2medMini, "corpus.jsonl"), Spec{}); err == nil || !strings.Contains(err.Error(), "is not a directory") {
		t.Errorf("a file as the repository: %v", err)
	}
}

// TestLoadHubR2MEDParquet writes the same task as parquet, the way the
// Hub's parquet export would serve it, and expects the same task.
func TestLoadHubR2MEDParquet(t *testing.T) {
	ref, err := Load(r2medMini, Spec{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	type doc struct {
		ID   string `parquet:"id"`
		Text string `parquet:"text"`
	}
	type query struct {
		ID         string   `parquet:"id"`
		Text       string   `parquet:"text"`
		DocID      []string `parquet:"doc_id,list"`
		Answer     string   `parquet:"answer"`
		BodySystem string   `parquet:"body_system"`
	}
	type judgment struct {
		QID   string `parquet:"q_id"`
		PID   string `parquet:"p_id"`
		Score int64  `parquet:"score"`
	}
	var docs []doc
	for _, d := range ref.Corpus {
		docs = append(docs, doc{d.ID, d.Text})
	}
	var queries []query
	raw, err := os.ReadFile(filepath.Join(r2medMini, "query.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range bytes.Split(bytes.TrimSpace(raw), []byte("\n")) {
		var q struct {
			ID, Text, Answer string
			DocID            []string `json:"doc_id"`
			BodySystem       string   `json:"body_system"`
		}
		if err := json.Unmarshal(line, &q); err != nil {
			t.Fatal(err)
		}
		queries = append(queries, query{q.ID, q.Text, q.DocID, q.Answer, q.BodySystem})
	}
	var qrels []judgment
	for _, qid := range trec.QueryIDs(ref.Qrels) {
		for _, did := range trec.QueryIDs(ref.Qrels[qid]) {
			qrels = append(qrels, judgment{qid, did, int64(ref.Qrels[qid][did])})
		}
	}
	writeParquetFile(t, filepath.Join(dir, "corpus", "corpus", "0000.parquet"), docs)
	writeParquetFile(t, filepath.Join(dir, "query", "query", "0000.parquet"), queries)
	writeParquetFile(t, filepath.Join(dir, "qrels", "qrels", "0000.parquet"), qrels)

	// No README: the configs come from the export's file names.
	task, err := Load(dir, Spec{Shape: R2MED})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(task.Corpus, ref.Corpus) || !reflect.DeepEqual(task.Qrels, ref.Qrels) {
		t.Errorf("corpus or qrels differ from the JSON-lines load")
	}
	// Parquet columns come back as compact JSON; the values are the same.
	for i, q := range task.Queries {
		r := ref.Queries[i]
		if q.ID != r.ID || q.Text != r.Text || len(q.Extra) != len(r.Extra) {
			t.Fatalf("query %d: %+v, want %+v", i, q, r)
		}
		for k, v := range r.Extra {
			var a, b any
			json.Unmarshal(v, &a)
			json.Unmarshal(q.Extra[k], &b)
			if !reflect.DeepEqual(a, b) {
				t.Errorf("query %s %s: %s, want %s", q.ID, k, q.Extra[k], v)
			}
		}
	}
	if len(task.Files) != 3 {
		t.Errorf("files %q; a repository without README lists only its data", task.Files)
	}
}

func writeParquetFile[T any](t *testing.T, path string, rows []T, opts ...parquet.WriterOption) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[T](&buf, opts...)
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestReadHubGenerations(t *testing.T) {
	g, err := ReadGenerations(r2medMini, "hyde", "qwen-7b")
	if err != nil {
		t.Fatal(err)
	}
	if g.Config != "hyde" || g.Split != "qwen_7b" || len(g.Rows) != 2 ||
		g.Rows[1] != (Generation{ID: "1", Text: "A 54-year-old with new type 2 diabetes and normal kidneys: which drug first?", HyDoc: "<think>renal function is normal</think>Metformin is first-line."}) {
		t.Errorf("generations %+v", g)
	}
	if want := []string{filepath.Join(r2medMini, "hyde/qwen-7b/query_with_hydoc.jsonl")}; !reflect.DeepEqual(g.Files, want) {
		t.Errorf("files %q", g.Files)
	}
	// The split's own spelling works too, and a JSON array file reads
	// like JSON lines.
	g, err = ReadGenerations(r2medMini, "query2doc", "gpt4")
	if err != nil || len(g.Rows) != 2 || g.Rows[0].HyDoc != "Platelet inhibition." {
		t.Errorf("query2doc: %+v, %v", g, err)
	}
	for _, c := range []struct{ method, llm, want string }{
		{"hyde", "o3-mini", `testdata/r2med-mini/README.md: config "hyde" split "o3_mini": no file matches "hyde/o3-mini/query_with_hydoc.jsonl"; was the repository downloaded with this config's files?`},
		{"hyde", "llama-70b", `testdata/r2med-mini/README.md: config "hyde" has no split "llama-70b"; its splits: o3_mini, qwen_7b`},
		{"lamer", "gpt4", `testdata/r2med-mini/README.md has no config "lamer"; its configs (declared): qrels, corpus, query, hyde, query2doc`},
	} {
		if _, err := ReadGenerations(r2medMini, c.method, c.llm); err == nil || err.Error() != c.want {
			t.Errorf("%s/%s:\n got %v\nwant %s", c.method, c.llm, err, c.want)
		}
	}
}

const nanoMini = "testdata/nano-mini"

// TestLoadHubNano reads a Nano set written by DuckDB, an independent
// parquet writer: empty texts, a repeated judgment, an unjudged query.
func TestLoadHubNano(t *testing.T) {
	task, err := Load(nanoMini, Spec{})
	if err != nil {
		t.Fatal(err)
	}
	if task.Name != "NanoMini" || task.Split != "NanoMini" || task.Layout != ir.LayoutNanoHub {
		t.Errorf("Name, Split, ir.Layout = %q, %q, %q", task.Name, task.Split, task.Layout)
	}
	var ids []string
	for _, d := range task.Corpus {
		ids = append(ids, d.ID)
	}
	if strings.Join(ids, " ") != "d1 d3 d4 d5" || task.EmptyDocs != 2 {
		t.Errorf("corpus %v with %d empty, want d1 d3 d4 d5 with 2", ids, task.EmptyDocs)
	}
	if len(task.Queries) != 2 || task.Queries[0].ID != "q1" || task.Queries[1].ID != "q2" || task.Queries[0].Extra != nil ||
		task.EmptyQueries != 1 || task.UnjudgedQueries != 1 {
		t.Errorf("queries %+v, %d empty, %d unjudged", task.Queries, task.EmptyQueries, task.UnjudgedQueries)
	}
	// d2 is empty but stays judged, relevant and unretrievable as in
	// HAKARI; q3 went with its text.
	if want := (ir.Qrels{"q1": {"d1": 1}, "q2": {"d2": 1, "d3": 1}}); !reflect.DeepEqual(task.Qrels, want) {
		t.Errorf("qrels %v, want %v", task.Qrels, want)
	}
	wantFiles := []string{"README.md", "corpus/NanoMini-00000-of-00001.parquet", "queries/NanoMini-00000-of-00001.parquet", "qrels/NanoMini-00000-of-00001.parquet"}
	for i, f := range wantFiles {
		wantFiles[i] = filepath.Join(nanoMini, f)
	}
	if !reflect.DeepEqual(task.Files, wantFiles) {
		t.Errorf("files %q", task.Files)
	}

}

// hubFS builds a repository in memory; files maps paths to contents.
func hubFS(files map[string]string) fstest.MapFS {
	fsys := fstest.MapFS{}
	for p, s := range files {
		fsys[p] = &fstest.MapFile{Data: []byte(s)}
	}
	return fsys
}

const nanoReadme = `---
configs:
- config_name: corpus
  data_files:
  - {split: A, path: corpus/A.jsonl}
  - {split: B, path: corpus/B.jsonl}
- config_name: queries
  data_files:
  - {split: A, path: queries/A.jsonl}
  - {split: B, path: queries/B.jsonl}
- config_name: qrels
  data_files:
  - {split: A, path: qrels/A.jsonl}
  - {split: B, path: qrels/B.jsonl}
- config_name: bm25
  data_files:
  - {split: A, path: bm25/A.jsonl}
---
`

func TestLoadHubNanoSplits(t *testing.T) {
	fsys := hubFS(map[string]string{
		"README.md":       nanoReadme,
		"corpus/A.jsonl":  `{"_id": "d1", "text": "a"}` + "\n" + `{"_id": "d2", "text": "b", "title": "ignored"}`,
		"queries/A.jsonl": `{"_id": "q1", "text": "x"}`,
		// A list-valued corpus-id, a repeat, and a number as an id.
		"qrels/A.jsonl":   `{"query-id": "q1", "corpus-id": ["d1", "d2"]}` + "\n" + `{"query-id": "q1", "corpus-id": "d2", "score": 1.0}`,
		"corpus/B.jsonl":  `{"_id": 7, "text": "c"}`,
		"queries/B.jsonl": `{"_id": "q1", "text": "y"}`,
		"qrels/B.jsonl":   `{"query-id": "q1", "corpus-id": 7}`,
		"bm25/A.jsonl":    `{"query-id": "q1", "corpus-ids": ["d2", "d1", "d2"]}`,
	})
	if _, err := LoadFS(fsys, ".", Spec{}); err == nil || err.Error() != `README.md: the set has 2 tasks; name one of its splits: A, B` {
		t.Errorf("no split: %v", err)
	}
	if _, err := LoadFS(fsys, ".", Spec{Split: "C"}); err == nil || err.Error() != `README.md: config "queries" has no split "C"; its splits: A, B` {
		t.Errorf("unknown split: %v", err)
	}
	a, err := LoadFS(fsys, ".", Spec{Split: "A"})
	if err != nil {
		t.Fatal(err)
	}
	if a.Name != "A" || len(a.Corpus) != 2 || a.Corpus[1].Text != "b" || !reflect.DeepEqual(a.Qrels, ir.Qrels{"q1": {"d1": 1, "d2": 1}}) {
		t.Errorf("split A: %+v", a)
	}
	b, err := LoadFS(fsys, ".", Spec{Split: "B", Name: "bee"})
	if err != nil {
		t.Fatal(err)
	}
	if b.Name != "bee" || b.Corpus[0].ID != "7" || b.Qrels["q1"]["7"] != 1 {
		t.Errorf("split B: %+v", b)
	}
	c, err := LoadCandidatesFS(fsys, ".", "bm25", "")
	if err != nil || !reflect.DeepEqual(c.Lists["q1"], []string{"d2", "d1", "d2"}) || c.Split != "A" {
		t.Errorf("candidates %+v, %v", c, err)
	}
	if _, err := LoadCandidatesFS(fsys, ".", "corpus", ""); err == nil || err.Error() != `README.md: config "corpus" has 2 splits; name one: A, B` {
		t.Errorf("candidates without a split: %v", err)
	}
}

// TestLoadHubMalformed checks that each problem is reported with the file
// and line (or parquet row) where it is, and what to do.
func TestLoadHubMalformed(t *testing.T) {
	r2med := func(files map[string]string) fstest.MapFS {
		base := map[string]string{
			"corpus.jsonl": `{"id": "d1", "text": "a"}`,
			"query.jsonl":  `{"id": "q1", "text": "x"}`,
			"qrels.jsonl":  `{"q_id": "q1", "p_id": "d1", "score": 1}`,
		}
		for k, v := range files {
			if v == "" {
				delete(base, k)
			} else {
				base[k] = v
			}
		}
		return hubFS(base)
	}
	nano := func(files map[string]string) fstest.MapFS {
		base := map[string]string{
			"corpus/N.jsonl":  `{"_id": "d1", "text": "a"}`,
			"queries/N.jsonl": `{"_id": "q1", "text": "x"}`,
			"qrels/N.jsonl":   `{"query-id": "q1", "corpus-id": "d1"}`,
		}
		for k, v := range files {
			base[k] = v
		}
		return hubFS(base)
	}
	for _, c := range []struct {
		name string
		fsys fstest.MapFS
		want string
	}{
		{"r2med dup pair", r2med(map[string]string{"qrels.jsonl": `{"q_id": "q1", "p_id": "d1", "score": 1}` + "\n\n" + `{"q_id": "q1", "p_id": "d1", "score": 2}`}),
			`qrels.jsonl:3: document "d1" is judged twice for query "q1"; keep one judgment per pair`},
		{"r2med nano names", r2med(map[string]string{"qrels.jsonl": `{"query-id": "q1", "corpus-id": "d1"}`}),
			`qrels.jsonl:1: missing "q_id" field (the line has "query-id": R2MED's qrels name their fields "q_id", "p_id" and "score")`},
		{"r2med unknown doc", r2med(map[string]string{"qrels.jsonl": `{"q_id": "q1", "p_id": "d9", "score": 1}`}),
			`qrels.jsonl:1: 1 judged document is not in corpus.jsonl (1 judgment): "d9"; check that the qrels belong to this corpus, or, if the corpus is a deliberate sample, allow missing documents (they then count as relevant but unretrievable)`},
		{"r2med no qrels file", r2med(map[string]string{"qrels.jsonl": ""}),
			`. has no config "qrels"; its configs (inferred from file names): corpus, query`},
		{"no kind", hubFS(map[string]string{"corpus.jsonl": `{"id": "d1", "text": "a"}`}),
			`.: cannot tell the repository kind from its configs (a Nano set has a "queries" config, an R2MED repository a "query" config, BRIGHT "examples" and "documents"); its configs (inferred from file names): corpus`},
		{"corpus dup across shards", hubFS(map[string]string{
			"README.md":      "---\nconfigs:\n- config_name: corpus\n  data_files: [{split: corpus, path: corpus-*.jsonl}]\n- config_name: query\n  data_files: [{split: query, path: query.jsonl}]\n- config_name: qrels\n  data_files: [{split: qrels, path: qrels.jsonl}]\n---\n",
			"corpus-0.jsonl": `{"id": "d1", "text": "a"}` + "\n" + `{"id": "d2", "text": "b"}`,
			"corpus-1.jsonl": `{"id": "d3", "text": "c"}` + "\n" + `{"id": "d2", "text": "b"}`,
			"query.jsonl":    `{"id": "q1", "text": "x"}`,
			"qrels.jsonl":    `{"q_id": "q1", "p_id": "d1", "score": 1}`,
		}), `corpus-1.jsonl:2: document id "d2" already appeared in corpus-0.jsonl; ids must be unique, remove or rename one of the two`},
		{"json array element", r2med(map[string]string{"query.jsonl": "", "query.json": "[\n  {\"id\": \"q1\", \"text\": \"x\"},\n  [1]\n]"}),
			`query.json:3: element holds a JSON array, want one JSON object per array element`},
		{"json array broken", r2med(map[string]string{"query.jsonl": "", "query.json": "[\n  {\"id\": \"q1\", \"text\": \"x\"}\n  {\"id\": \"q2\"}\n]"}),
			`query.json:3: malformed JSON: expected comma after array element; the file must be one JSON array of objects`},
		{"json array invalid UTF-8", r2med(map[string]string{"query.jsonl": "", "query.json": "[\n  {\"id\": \"q1\", \"text\": \"x\"},\n  {\"id\": \"q2\", \"text\": \"\xe9\"}\n]"}),
			`query.json:3: invalid UTF-8 (byte 0xe9) at byte offset 24 of the line; the file must be UTF-8 text: convert it from its real encoding (iconv -f WINDOWS-1252 -t UTF-8 for text from Windows tools, say), or drop the bad bytes with iconv -c -f UTF-8 -t UTF-8`},
		{"json array lone surrogate", r2med(map[string]string{"query.jsonl": "", "query.json": `[{"id": "q1", "text": "x"}, {"id": "q2", "text": "\ud800"}]`}),
			`query.json:1: unpaired UTF-16 surrogate \ud800 (half of a character) at byte offset 50 of the line; write both halves of the pair (an emoji is two escapes, as in \ud83d\ude00) or remove the escape`},
		{"jsonl invalid UTF-8", r2med(map[string]string{"corpus.jsonl": "{\"id\": \"d1\", \"text\": \"a\"}\n{\"id\": \"d\xff2\", \"text\": \"b\"}"}),
			`corpus.jsonl:2: invalid UTF-8 (byte 0xff) at byte offset 9 of the line; the file must be UTF-8 text: convert it from its real encoding (iconv -f WINDOWS-1252 -t UTF-8 for text from Windows tools, say), or drop the bad bytes with iconv -c -f UTF-8 -t UTF-8`},
		{"plain and gzipped", r2med(map[string]string{"corpus.jsonl.gz": `{"id": "d2", "text": "b"}`}),
			`both corpus.jsonl and corpus.jsonl.gz exist and they differ; reading one would silently ignore the other, so remove the one you do not mean`},
		{"json array trailing", r2med(map[string]string{"query.jsonl": "", "query.json": `[{"id": "q1", "text": "x"}] []`}),
			`query.json:1: data after the JSON array; the file must be one JSON array of objects`},
		{"nano grade conflict", nano(map[string]string{"qrels/N.jsonl": `{"query-id": "q1", "corpus-id": "d1"}` + "\n" + `{"query-id": "q1", "corpus-id": ["d1"], "score": 2}`}),
			`qrels/N.jsonl:2: document "d1" is judged again for query "q1", with grade 2 after 1`},
		{"nano bad list element", nano(map[string]string{"qrels/N.jsonl": `{"query-id": "q1", "corpus-id": ["d1", true]}`}),
			`qrels/N.jsonl:1: element 2 of "corpus-id" is a boolean, want a string (or a number)`},
		{"nano r2med names", nano(map[string]string{"corpus/N.jsonl": `{"id": "d1", "text": "a"}`}),
			`corpus/N.jsonl:1: missing "_id" field (the line has "id": Nano sets name their fields "_id", "query-id" and "corpus-id"; check the repository kind)`},
		{"nano null text", nano(map[string]string{"queries/N.jsonl": `{"_id": "q1", "text": null}`}),
			`queries/N.jsonl:1: "text" is null, want a string (use "" for an empty text)`},
		{"nano only empty docs", nano(map[string]string{"corpus/N.jsonl": `{"_id": "d1", "text": ""}`}),
			`corpus/N.jsonl: no documents with text (1 empty)`},
		{"nano only empty queries", nano(map[string]string{"queries/N.jsonl": `{"_id": "q1", "text": ""}`}),
			`queries/N.jsonl: every judged query has an empty text, so no query is left to evaluate`},
		{"nano dup query", nano(map[string]string{"queries/N.jsonl": `{"_id": "q1", "text": "x"}` + "\n" + `{"_id": "q1", "text": ""}`}),
			`queries/N.jsonl:2: query id "q1" already appeared at queries/N.jsonl:1; ids must be unique, remove or rename one of the two`},
		// In the split's second file, after a row that lists good ids.
		{"nano unknown doc in a list", hubFS(map[string]string{
			"README.md":       "---\nconfigs:\n- config_name: corpus\n  data_files: [{split: N, path: corpus/N.jsonl}]\n- config_name: queries\n  data_files: [{split: N, path: queries/N.jsonl}]\n- config_name: qrels\n  data_files: [{split: N, path: qrels/N-*.jsonl}]\n---\n",
			"corpus/N.jsonl":  `{"_id": "d1", "text": "a"}` + "\n" + `{"_id": "d2", "text": "b"}`,
			"queries/N.jsonl": `{"_id": "q1", "text": "x"}` + "\n" + `{"_id": "q2", "text": "y"}`,
			"qrels/N-0.jsonl": `{"query-id": "q1", "corpus-id": ["d1", "d2"]}`,
			"qrels/N-1.jsonl": `{"query-id": "q1", "corpus-id": "d2"}` + "\n\n" + `{"query-id": "q2", "corpus-id": ["d1", "d7", "d8"]}`,
		}), `qrels/N-1.jsonl:3: 2 judged documents are not in corpus/N.jsonl (2 judgments, the first on this line): "d7", "d8"; check that the qrels belong to this corpus, or, if the corpus is a deliberate sample, allow missing documents (they then count as relevant but unretrievable)`},
		{"nano unknown query", nano(map[string]string{"qrels/N.jsonl": `{"query-id": "q2", "corpus-id": "d1"}`}),
			`qrels/N.jsonl:1: 1 judged query is not in queries/N.jsonl (1 judgment): "q2"; the qrels must come from the same task as the queries`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := LoadFS(c.fsys, ".", Spec{})
			if err == nil || err.Error() != c.want {
				t.Errorf("\n got %v\nwant %s", err, c.want)
			}
		})
	}
}

func TestLoadHubCandidatesMalformed(t *testing.T) {
	readme := "---\nconfigs:\n- config_name: bm25\n  data_files: [{split: N, path: bm25.jsonl}]\n---\n"
	for _, c := range []struct{ body, want string }{
		{`{"query-id": "q1", "corpus-ids": ["a"]}` + "\n" + `{"query-id": "q1", "corpus-ids": []}`,
			`bm25.jsonl:2: query "q1" already has its candidates at bm25.jsonl:1; keep one row per query`},
		{`{"query-id": "q1"}`, `bm25.jsonl:1: missing "corpus-ids" field; every candidate row needs its list of document ids`},
		{`{"query-id": "q1", "corpus-ids": "a"}`, `bm25.jsonl:1: "corpus-ids" is a string, want a list of document ids`},
		{`{"query-id": "q1", "corpus-ids": ["a b"]}`, `bm25.jsonl:1: element 1 of corpus-ids "a b" contains whitespace at byte 1; TREC run and qrels files separate fields by whitespace, so rename the id`},
		{`{"corpus-ids": ["a"]}`, `bm25.jsonl:1: missing "query-id" field; every candidate row needs an id`},
	} {
		fsys := hubFS(map[string]string{"README.md": readme, "bm25.jsonl": c.body})
		if _, err := LoadCandidatesFS(fsys, ".", "bm25", "N"); err == nil || err.Error() != c.want {
			t.Errorf("%s:\n got %v\nwant %s", c.body, err, c.want)
		}
	}
	// HAKARI's script also takes these spellings; null is no candidates.
	fsys := hubFS(map[string]string{"README.md": readme, "bm25.jsonl": `{"qid": 5, "doc_ids": ["a", 7]}` + "\n" + `{"query_id": "q2", "corpus_ids": null}`})
	c, err := LoadCandidatesFS(fsys, ".", "bm25", "N")
	if err != nil || !reflect.DeepEqual(c.Lists, map[string][]string{"5": {"a", "7"}, "q2": nil}) || !reflect.DeepEqual(c.Queries, []string{"5", "q2"}) {
		t.Errorf("aliases: %+v, %v", c, err)
	}
}

func TestRepoName(t *testing.T) {
	for dir, want := range map[string]string{
		"/cache/hub/datasets--R2MED--Medical-Sciences/snapshots/1b48911514c80bf9182222d99752ad75e23b4b47": "Medical-Sciences",
		"/cache/hub/datasets--hakari-bench--NanoR2MED/snapshots/abc":                                      "NanoR2MED",
		"/data/r2med/Biology":             "Biology",
		"/elsewhere/snapshots/abcdef":     "abcdef",
		"/cache/models--x--y/snapshots/z": "z",
	} {
		if got := repoName(dir); got != want {
			t.Errorf("repoName(%q) = %q, want %q", dir, got, want)
		}
	}
}

// TestParquetRowErrors: a parquet file has no lines, so problems are
// placed by row.
func TestParquetRowErrors(t *testing.T) {
	dir := t.TempDir()
	type row struct {
		QID  string   `parquet:"query-id"`
		Docs []string `parquet:"corpus-ids,list"`
	}
	writeParquetFile(t, filepath.Join(dir, "bm25", "N-00000-of-00001.parquet"), []row{{"q1", []string{"a"}}, {"q2", []string{"b", "c d"}}})
	_, err := LoadCandidates(dir, "bm25", "N")
	want := filepath.Join(dir, "bm25", "N-00000-of-00001.parquet") + `: row 2: element 2 of corpus-ids "c d" contains whitespace at byte 1; TREC run and qrels files separate fields by whitespace, so rename the id`
	if err == nil || err.Error() != want {
		t.Errorf("\n got %v\nwant %s", err, want)
	}
}

// TestParquetInvalidUTF8: a string cell that is not UTF-8 is an error
// naming the file, the column and the row, not a silent U+FFFD.
func TestParquetInvalidUTF8(t *testing.T) {
	dir := t.TempDir()
	type row struct {
		QID  string   `parquet:"query-id"`
		Docs []string `parquet:"corpus-ids,list"`
	}
	path := filepath.Join(dir, "bm25", "N-00000-of-00001.parquet")
	fix := "strings in a parquet file must be UTF-8: write the table again from text decoded in its real encoding"
	writeParquetFile(t, path, []row{{"q1", []string{"a"}}, {"q2", []string{"b"}}, {"q\xff3", []string{"c"}}})
	_, err := LoadCandidates(dir, "bm25", "N")
	want := path + `: column "query-id": row 3: invalid UTF-8 (byte 0xff) at byte offset 1 of the value; ` + fix
	if err == nil || err.Error() != want {
		t.Errorf("\n got %v\nwant %s", err, want)
	}
	writeParquetFile(t, path, []row{{"q1", []string{"a"}}, {"q2", []string{"b", "ok", "caf\xe9"}}})
	_, err = LoadCandidates(dir, "bm25", "N")
	want = path + `: column "corpus-ids": row 2: invalid UTF-8 (byte 0xe9) at byte offset 3 of the value; ` + fix
	if err == nil || err.Error() != want {
		t.Errorf("\n got %v\nwant %s", err, want)
	}
}

func TestCandidatesRun(t *testing.T) {
	c := &Candidates{Lists: map[string][]string{
		"q1": {"a", "b", "a", "c"},
		"q2": {},
		"q3": {"z"},
	}}
	run := c.Run()
	want := ir.Run{
		"q1": {{DocID: "a", Score: 3}, {DocID: "b", Score: 2}, {DocID: "c", Score: 0}},
		"q3": {{DocID: "z", Score: 0}},
	}
	if !reflect.DeepEqual(run, want) {
		t.Errorf("run %v, want %v", run, want)
	}
}

// TestParquetNaNScore: a parquet float score column holding NaN (or an
// infinity) is an error naming the value and the row, where it was called
// a string (the form JSON, having no NaN, gives it on the way).
func TestParquetNaNScore(t *testing.T) {
	dir := t.TempDir()
	type text struct {
		ID   string `parquet:"id"`
		Text string `parquet:"text"`
	}
	type judgment struct {
		QID   string  `parquet:"q_id"`
		PID   string  `parquet:"p_id"`
		Score float64 `parquet:"score"`
	}
	writeParquetFile(t, filepath.Join(dir, "corpus", "corpus", "0000.parquet"), []text{{"d1", "a"}, {"d2", "b"}})
	writeParquetFile(t, filepath.Join(dir, "query", "query", "0000.parquet"), []text{{"q1", "x"}})
	for _, c := range []struct {
		score float64
		want  string
	}{{math.NaN(), "NaN"}, {math.Inf(-1), "-Inf"}} {
		qrels := filepath.Join(dir, "qrels", "qrels", "0000.parquet")
		writeParquetFile(t, qrels, []judgment{{"q1", "d1", 1}, {"q1", "d2", c.score}})
		_, err := Load(dir, Spec{Shape: R2MED})
		want := qrels + `: row 2: "score" is ` + c.want + `, not a number a grade can be; give every judgment an integer grade`
		if err == nil || err.Error() != want {
			t.Errorf("\n got %v\nwant %s", err, want)
		}
	}
}
