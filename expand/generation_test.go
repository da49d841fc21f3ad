package expand

import (
	"bytes"
	"compress/gzip"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/r2med/r2med/internal/fileio"
)

func TestReadGenerations(t *testing.T) {
	in := "\xef\xbb\xbf" + `{"id": "0", "text": "Why?", "hy_doc": "<think>a</think>b", "doc_id": ["x/1.txt"]}` + "\n" +
		"\n" +
		`{"id": 12, "text": "", "hy_doc": "", "extra": {"k": 1}}` + "\r\n" +
		`{"hy_doc": "line\nbreak", "text": "q\u00e9", "id": "a/b"}` // no final newline
	got, err := ReadGenerations(strings.NewReader(in), "g.jsonl", Query2Doc, "r1-qwen-32b")
	if err != nil {
		t.Fatal(err)
	}
	want := []Generation{
		{ID: "0", Text: "Why?", HyDoc: "<think>a</think>b", Method: Query2Doc, LLM: "r1-qwen-32b"},
		{ID: "12", Text: "", HyDoc: "", Method: Query2Doc, LLM: "r1-qwen-32b"},
		{ID: "a/b", Text: "qé", HyDoc: "line\nbreak", Method: Query2Doc, LLM: "r1-qwen-32b"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}

// TestMalformed checks the exact error for every file in testdata/malformed,
// so that none loses its file, line or advice unnoticed.
func TestMalformed(t *testing.T) {
	cases := []struct{ file, want string }{
		{"array-line.jsonl", `array-line.jsonl:2: line holds a JSON array, want one JSON object per line`},
		{"bad-json.jsonl", `bad-json.jsonl:2: malformed JSON at column 38: unexpected end of JSON input; each line must be one complete JSON object`},
		{"bom-inside.jsonl", `bom-inside.jsonl:2: line starts with a byte-order mark (U+FEFF, bytes EF BB BF), as where files with one were joined; remove it (sed -i '2,$ s/^\xEF\xBB\xBF//' FILE)`},
		{"bool-id.jsonl", `bool-id.jsonl:1: "id" is a boolean, want a string (or a number)`},
		{"cut-utf8.jsonl", `cut-utf8.jsonl:2: invalid UTF-8 (byte 0xe2) at byte offset 68 of the line; the file must be UTF-8 text: convert it from its real encoding (iconv -f WINDOWS-1252 -t UTF-8 for text from Windows tools, say), or drop the bad bytes with iconv -c -f UTF-8 -t UTF-8`},
		{"dup-id.jsonl", `dup-id.jsonl:4: query id "0" already has a generation on line 1; keep one per query`},
		{"empty-id.jsonl", `empty-id.jsonl:1: "id" is empty; every generation needs the id of its query`},
		{"empty.jsonl", `empty.jsonl: no generations; the file is empty`},
		{"lone-surrogate.jsonl", `lone-surrogate.jsonl:1: unpaired UTF-16 surrogate \ud83e (half of a character) at byte offset 36 of the line; write both halves of the pair (an emoji is two escapes, as in \ud83d\ude00) or remove the escape`},
		{"missing-hy_doc.jsonl", `missing-hy_doc.jsonl:1: missing "hy_doc" field; every generation needs the LLM output (it may be the empty string)`},
		{"missing-id.jsonl", `missing-id.jsonl:2: missing "id" field; every generation needs the id of its query`},
		{"missing-text.jsonl", `missing-text.jsonl:1: missing "text" field; every generation needs the query text (it may be the empty string)`},
		{"null-hy_doc.jsonl", `null-hy_doc.jsonl:1: "hy_doc" is null, want a string`},
		{"null-line.jsonl", `null-line.jsonl:1: line holds a JSON null, want one JSON object per line`},
		{"space-id.jsonl", `space-id.jsonl:2: "id" "1\u00a0a" contains U+00A0, which Python's str.split() takes for whitespace, at byte 1; pytrec_eval (and scripts that split TREC lines in Python) would cut the id there, so rename it`},
		{"number-text.jsonl", `number-text.jsonl:1: "text" is a number, want a string`},
	}
	files, _ := filepath.Glob("testdata/malformed/*")
	if len(files) != len(cases) {
		t.Errorf("%d files in testdata/malformed, %d cases", len(files), len(cases))
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			f, err := os.Open(filepath.Join("testdata/malformed", c.file))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			_, err = ReadGenerations(f, c.file, HyDE, "qwen-7b")
			var le *fileio.LineError
			if !errors.As(err, &le) {
				t.Fatalf("error %v is not a *fileio.LineError", err)
			}
			if err.Error() != c.want {
				t.Errorf("error %s\nwant      %s", err, c.want)
			}
		})
	}
}

func TestReadGenerationsTooLong(t *testing.T) {
	defer func(n int) { maxLine = n }(maxLine)
	maxLine = 100
	in := `{"id": "0", "text": "", "hy_doc": ""}` + "\n" + strings.Repeat("x", 101)
	_, err := ReadGenerations(strings.NewReader(in), "big.jsonl", HyDE, "gpt4")
	want := "big.jsonl:2: line is longer than 100 bytes, the most the readers accept; a JSON-lines file holds one record per line, so check that this is one (a binary file, or one whose line breaks were lost, reads as one long line)"
	if err == nil || err.Error() != want {
		t.Errorf("error %v, want %s", err, want)
	}
}

func TestSourceChecks(t *testing.T) {
	cases := []struct{ method, llm, want string }{
		{"HyDE", "qwen-7b", `unknown GAR method "HyDE"; the methods are hyde, query2doc, lamer, search-o1, search-r1, reasoning, reasoning-append`},
		{"", "qwen-7b", `unknown GAR method ""; the methods are hyde, query2doc, lamer, search-o1, search-r1, reasoning, reasoning-append`},
		{HyDE, "", `LLM name "" is not a plain directory name such as qwen-7b`},
		{HyDE, "..", `LLM name ".." is not a plain directory name such as qwen-7b`},
		{HyDE, "qwen/7b", `LLM name "qwen/7b" is not a plain directory name such as qwen-7b`},
	}
	for _, c := range cases {
		_, err := ReadGenerations(strings.NewReader(""), "x", c.method, c.llm)
		if err == nil || err.Error() != c.want {
			t.Errorf("ReadGenerations(%q, %q): %v, want %s", c.method, c.llm, err, c.want)
		}
		_, err = LoadDir("testdata/biology-demo", c.method, c.llm)
		if err == nil || err.Error() != c.want {
			t.Errorf("LoadDir(%q, %q): %v, want %s", c.method, c.llm, err, c.want)
		}
	}
}

func TestLoadDirAndSources(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, data string, gz bool) {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if !gz {
			f.WriteString(data)
			return
		}
		zw := gzip.NewWriter(f)
		zw.Write([]byte(data))
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
	}
	write("hyde/qwen-7b/query_with_hydoc.jsonl", `{"id":"0","text":"q","hy_doc":"d"}`+"\n", false)
	write("lamer/gpt4/query_with_hydoc.jsonl.gz", `{"id":"0","text":"q","hy_doc":"gz"}`+"\n", true)
	write("lamer/empty-dir/.keep", "", false)
	write("rewrite/gpt4/query_with_hydoc.jsonl", `{"id":"0","text":"q","hy_doc":"d"}`+"\n", false)
	write("hyde/bad/query_with_hydoc.jsonl", "{\"id\": \n", false)

	got, err := LoadDir(dir, LameR, "gpt4")
	if err != nil {
		t.Fatal(err)
	}
	if want := []Generation{{ID: "0", Text: "q", HyDoc: "gz", Method: LameR, LLM: "gpt4"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("gzip file: %+v", got)
	}

	_, err = LoadDir(dir, HyDE, "bad")
	want := filepath.Join(dir, "hyde/bad/query_with_hydoc.jsonl") + ":1: malformed JSON at column 7: unexpected end of JSON input; each line must be one complete JSON object"
	if err == nil || err.Error() != want {
		t.Errorf("bad file: %v\nwant %s", err, want)
	}

	// A gzip stream cut off after three lines and part of a fourth: the
	// flushed blocks decode, then the reader reports the missing end.
	var cut bytes.Buffer
	zw := gzip.NewWriter(&cut)
	zw.Write([]byte(`{"id":"0","text":"q","hy_doc":"d"}` + "\n\n" + `{"id":"1","text":"q","hy_doc":"d"}` + "\n" + `{"id":"3"`))
	zw.Flush()
	write("lamer/cut/query_with_hydoc.jsonl.gz", cut.String(), false)
	_, err = LoadDir(dir, LameR, "cut")
	want = filepath.Join(dir, "lamer/cut/query_with_hydoc.jsonl.gz") + ":4: file ends in the middle of its data (unexpected EOF); it is probably truncated, download or decompress it again"
	if err == nil || err.Error() != want {
		t.Errorf("truncated gzip: %v\nwant %s", err, want)
	}

	// The same file plain and gzipped: refused, naming both.
	write("hyde/twice/query_with_hydoc.jsonl", `{"id":"0","text":"q","hy_doc":"plain"}`+"\n", false)
	write("hyde/twice/query_with_hydoc.jsonl.gz", `{"id":"0","text":"q","hy_doc":"gz"}`+"\n", true)
	old := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	os.Chtimes(filepath.Join(dir, "hyde/twice/query_with_hydoc.jsonl.gz"), old, old)
	_, err = LoadDir(dir, HyDE, "twice")
	twice := filepath.Join(dir, "hyde/twice/query_with_hydoc.jsonl")
	want = "both " + twice + " and " + twice + ".gz exist and they differ; reading one would silently ignore the other, so remove the one you do not mean (" + twice + " is the newer)"
	if err == nil || err.Error() != want {
		t.Errorf("plain and gzipped: %v\nwant %s", err, want)
	}
	os.RemoveAll(filepath.Join(dir, "hyde/twice"))

	srcs, err := Sources(dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := []Source{{HyDE, "bad"}, {HyDE, "qwen-7b"}, {LameR, "cut"}, {LameR, "gpt4"}}; !reflect.DeepEqual(srcs, want) {
		t.Errorf("Sources = %v, want %v", srcs, want)
	}

	_, err = LoadDir(dir, Query2Doc, "gpt4")
	want = "no query2doc/gpt4 generations: " + filepath.Join(dir, "query2doc/gpt4/query_with_hydoc.jsonl") +
		" does not exist; " + dir + " has hyde/bad, hyde/qwen-7b, lamer/cut, lamer/gpt4"
	if err == nil || err.Error() != want {
		t.Errorf("missing file: %v\nwant %s", err, want)
	}
	empty := t.TempDir()
	_, err = LoadDir(empty, HyDE, "gpt4")
	want = "no hyde/gpt4 generations: " + filepath.Join(empty, "hyde/gpt4/query_with_hydoc.jsonl") + " does not exist"
	if err == nil || err.Error() != want {
		t.Errorf("missing file, nothing else there: %v\nwant %s", err, want)
	}
}

func TestLists(t *testing.T) {
	if got := Methods(); !reflect.DeepEqual(got, []string{"hyde", "query2doc", "lamer", "search-o1", "search-r1", "reasoning", "reasoning-append"}) {
		t.Errorf("Methods = %q", got)
	}
	Methods()[0] = "x"
	LLMs()[0] = "x"
	if Methods()[0] != HyDE || LLMs()[0] != "qwen-7b" {
		t.Error("the lists can be changed through their results")
	}
	if n := len(LLMs()); n != 13 {
		t.Errorf("%d LLMs, want R2MED's 11 choices and 2 Search-R1 checkpoints", n)
	}
}
