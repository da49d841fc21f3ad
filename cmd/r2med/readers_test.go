package main

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeTestFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// A qrels file saved by a Windows tool starts with a byte-order mark; it
// must not turn the first judgment into one for another query.
func TestEvalSkipsByteOrderMark(t *testing.T) {
	dir := t.TempDir()
	qrels := "q1 0 d1 1\nq1 0 d2 1\nq2 0 d3 1\n"
	run := "q1 Q0 d1 1 3 t\nq1 Q0 d2 2 2 t\nq2 Q0 d3 1 1 t\n"
	writeTestFile(t, filepath.Join(dir, "plain.qrels"), []byte(qrels))
	writeTestFile(t, filepath.Join(dir, "bom.qrels"), []byte("\xef\xbb\xbf"+qrels))
	writeTestFile(t, filepath.Join(dir, "plain.run"), []byte(run))
	writeTestFile(t, filepath.Join(dir, "bom.run"), []byte("\xef\xbb\xbf"+run))
	want, stderr, code := r2med(t, "", "eval", "-q", "-m", "num_rel", "-m", "num_rel_ret", "-m", "map", filepath.Join(dir, "plain.qrels"), filepath.Join(dir, "plain.run"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(want, "num_rel               \tq1\t2\n") {
		t.Fatalf("unexpected reference output:\n%s", want)
	}
	for _, pair := range [][2]string{{"bom.qrels", "plain.run"}, {"plain.qrels", "bom.run"}, {"bom.qrels", "bom.run"}} {
		got, stderr, code := r2med(t, "", "eval", "-q", "-m", "num_rel", "-m", "num_rel_ret", "-m", "map", filepath.Join(dir, pair[0]), filepath.Join(dir, pair[1]))
		if code != 0 || got != want {
			t.Errorf("%s %s: exit %d, %s\n got:\n%s\nwant:\n%s", pair[0], pair[1], code, stderr, got, want)
		}
	}
}

const utf8Fix = "the file must be UTF-8 text: convert it from its real encoding (iconv -f WINDOWS-1252 -t UTF-8 for text from Windows tools, say), or drop the bad bytes with iconv -c -f UTF-8 -t UTF-8"

// Text that is not UTF-8 stops every reader with the file, line and byte,
// instead of becoming U+FFFD.
func TestReadersRefuseInvalidUTF8(t *testing.T) {
	dir := t.TempDir()
	qrels, run := filepath.Join(dir, "qrels.txt"), filepath.Join(dir, "run.trec")
	writeTestFile(t, qrels, []byte("q1 0 d1 1\n"))
	writeTestFile(t, run, []byte("q1 Q0 d1 1 3 t\nq1 Q0 caf\xe9 2 2 t\n"))
	_, stderr, code := r2med(t, "", "eval", qrels, run)
	if want := "r2med: " + run + ":2: invalid UTF-8 (byte 0xe9) at byte offset 9 of the line; " + utf8Fix + "\n"; code != 1 || stderr != want {
		t.Errorf("eval: exit %d, stderr %q\nwant %q", code, stderr, want)
	}

	_, stderr, code = r2med(t, "{\"id\": \"1\", \"text\": \"na\xefve\"}\n", "analyze")
	if want := "r2med: stdin:1: invalid UTF-8 (byte 0xef) at byte offset 23 of the line; " + utf8Fix + "\n"; code != 1 || stderr != want {
		t.Errorf("analyze: exit %d, stderr %q\nwant %q", code, stderr, want)
	}

	task := filepath.Join(dir, "task")
	writeTestFile(t, filepath.Join(task, "corpus.jsonl"), []byte(`{"id": "d1", "text": "one"}`+"\n"))
	writeTestFile(t, filepath.Join(task, "query.jsonl"), []byte(`{"id": "q1", "text": "half an emoji \ud83d"}`+"\n"))
	writeTestFile(t, filepath.Join(task, "qrels.txt"), []byte("q1 0 d1 1\n"))
	_, stderr, code = r2med(t, "", "stats", "--data", task)
	want := "r2med: " + filepath.Join(task, "query.jsonl") + `:1: unpaired UTF-16 surrogate \ud83d (half of a character) at byte offset 36 of the line; write both halves of the pair (an emoji is two escapes, as in \ud83d\ude00) or remove the escape` + "\n"
	if code != 1 || stderr != want {
		t.Errorf("stats: exit %d, stderr %q\nwant %q", code, stderr, want)
	}
}

// corpus.jsonl beside corpus.jsonl.gz: which one is meant cannot be known,
// so the run refuses and says which to remove.
func TestRunRefusesPlainAndGzippedCorpus(t *testing.T) {
	task := filepath.Join(t.TempDir(), "task")
	corpus := `{"id": "d1", "text": "one"}` + "\n"
	writeTestFile(t, filepath.Join(task, "corpus.jsonl"), []byte(corpus))
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(corpus))
	zw.Close()
	writeTestFile(t, filepath.Join(task, "corpus.jsonl.gz"), gz.Bytes())
	writeTestFile(t, filepath.Join(task, "query.jsonl"), []byte(`{"id": "q1", "text": "one"}`+"\n"))
	writeTestFile(t, filepath.Join(task, "qrels.txt"), []byte("q1 0 d1 1\n"))
	out := filepath.Join(t.TempDir(), "out")
	_, stderr, code := r2med(t, "", "run", "--data", task, "--out", out, "--quiet")
	plain := filepath.Join(task, "corpus.jsonl")
	want := "both " + plain + " and " + plain + ".gz exist; they hold the same data, so remove one of them (rm " + plain + ")"
	if code != 1 || !strings.Contains(stderr, want) {
		t.Errorf("exit %d, stderr %q\nwant it to say %q", code, stderr, want)
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("%s was written for a refused task", out)
	}
}
