package dataset

import (
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/r2med/r2med/ir"
)

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestLoadExclusions reads exclusions from every source a directory task
// has — BRIGHT's excluded_ids field ("N/A" meaning none, a repeated id
// once), the directory's exclusions file with its header, and a file named
// by Options.Exclude, gzipped — into Task.Excluded, out of the queries'
// extra fields, with the files read listed. A document the corpus lacks
// may be excluded (d9): that excludes nothing retrievable.
func TestLoadExclusions(t *testing.T) {
	corpus := `{"id":"d1","text":"aspirin"}` + "\n" + `{"id":"d2","text":"insulin"}` + "\n" + `{"id":"d3","text":"statin"}` + "\n" + `{"id":"d4","text":"metformin"}` + "\n"
	for _, layout := range []string{"r2med", "beir"} {
		t.Run(layout, func(t *testing.T) {
			dir := t.TempDir()
			files := map[string]string{ExclusionsFile: "query-id\tcorpus-id\nq2 d4\n\nq1\td3\n"}
			if layout == "r2med" {
				files["corpus.jsonl"] = corpus
				files["query.jsonl"] = `{"id":"q1","text":"pain","excluded_ids":["N/A"],"body_system":"x"}` + "\n" +
					`{"id":"q2","text":"diabetes","excluded_ids":["d1","d3","d1"]}` + "\n" +
					`{"id":"q3","text":"unjudged","excluded_ids":["d2"]}` + "\n"
				files["qrels.jsonl"] = `{"q_id":"q1","p_id":"d1","score":1}` + "\n" + `{"q_id":"q2","p_id":"d2","score":1}` + "\n"
			} else {
				files["corpus.jsonl"] = strings.ReplaceAll(corpus, `"id"`, `"_id"`)
				files["queries.jsonl"] = `{"_id":"q1","text":"pain","excluded_ids":null,"body_system":"x"}` + "\n" +
					`{"_id":"q2","text":"diabetes","excluded_ids":["d1","d3"]}` + "\n" +
					`{"_id":"q3","text":"unjudged","excluded_ids":["d2"]}` + "\n"
				files["qrels/test.tsv"] = "query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td2\t1\n"
			}
			writeFiles(t, dir, files)
			extra := filepath.Join(t.TempDir(), "more.tsv.gz")
			f, err := os.Create(extra)
			if err != nil {
				t.Fatal(err)
			}
			zw := gzip.NewWriter(f)
			zw.Write([]byte("q1 d4\nq2 d1\nq1 d9\n"))
			zw.Close()
			f.Close()

			task, err := Load(dir, Options{Exclude: extra})
			if err != nil {
				t.Fatal(err)
			}
			want := ir.Exclusions{"q1": {"d3": true, "d4": true, "d9": true}, "q2": {"d1": true, "d3": true, "d4": true}}
			if !reflect.DeepEqual(task.Excluded, want) {
				t.Errorf("exclusions %v, want %v (q3 is unjudged, so left out with its exclusions)", task.Excluded, want)
			}
			if task.Excluded.Len() != 6 || task.Excluded.Max() != 3 {
				t.Errorf("Len %d Max %d", task.Excluded.Len(), task.Excluded.Max())
			}
			for _, q := range task.Queries {
				if _, ok := q.Extra[ExcludedField]; ok {
					t.Errorf("query %s keeps excluded_ids in Extra", q.ID)
				}
			}
			if task.Queries[0].Extra == nil || task.Queries[1].Extra != nil {
				t.Errorf("extra fields %v, %v", task.Queries[0].Extra, task.Queries[1].Extra)
			}
			if n := len(task.Files); n != 5 || task.Files[3] != filepath.Join(dir, ExclusionsFile) || task.Files[4] != extra {
				t.Errorf("files %v", task.Files)
			}
		})
	}

	// A task without exclusions has none.
	task, err := Load(filepath.Join("testdata", "malformed", "tasks", "unknown-docs"), Options{AllowMissingDocs: true})
	if err != nil || task.Excluded != nil {
		t.Errorf("exclusions %v, %v", task.Excluded, err)
	}
}

func TestExcludedIDs(t *testing.T) {
	for in, want := range map[string][]string{
		`{}`:                           nil,
		`{"excluded_ids":null}`:        nil,
		`{"excluded_ids":[]}`:          nil,
		`{"excluded_ids":["N/A"]}`:     nil,
		`{"excluded_ids":["a",12]}`:    {"a", "12"},
		`{"excluded_ids":["N/A","b"]}`: {"b"},
	} {
		m := mustObject(t, in)
		got, err := ExcludedIDs(m)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %q %v, want %q", in, got, err, want)
		}
	}
	for in, msg := range map[string]string{
		`{"excluded_ids":"a"}`:     `"excluded_ids" is a string, want a list of document ids`,
		`{"excluded_ids":["a b"]}`: `element 1 of excluded_ids "a b" contains whitespace at byte 1`,
		`{"excluded_ids":[["a"]]}`: `element 1 of "excluded_ids" is an array, want a string (or a number)`,
		`{"excluded_ids":{"a":1}}`: `"excluded_ids" is an object, want a list of document ids`,
	} {
		if _, err := ExcludedIDs(mustObject(t, in)); err == nil || !strings.HasPrefix(err.Error(), msg) {
			t.Errorf("%s: %v, want %s…", in, err, msg)
		}
	}
}

func mustObject(t *testing.T, s string) map[string]json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// FuzzReadExclusions: any input is read or refused with a located error;
// what is read is every pair of two fields, each once, in order.
func FuzzReadExclusions(f *testing.F) {
	f.Add([]byte("query-id\tcorpus-id\nq1\td1\nq1 d2\n"))
	f.Add([]byte("q1 d1\nq1 d1\n"))
	f.Add([]byte("\ufeffq1\td1\n\n\nq2\td2 x\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		ex, err := ReadExclusions(strings.NewReader(string(data)), "x.tsv")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "x.tsv") {
				t.Fatalf("error without its file: %v", err)
			}
			return
		}
		seen := map[[2]string]bool{}
		for _, e := range ex {
			if len(e.DocIDs) != 1 || e.QueryID == "" || e.DocIDs[0] == "" || strings.ContainsAny(e.QueryID+e.DocIDs[0], " \t\n") {
				t.Fatalf("bad pair %+v", e)
			}
			k := [2]string{e.QueryID, e.DocIDs[0]}
			if seen[k] {
				t.Fatalf("pair %v twice", k)
			}
			seen[k] = true
		}
	})
}
