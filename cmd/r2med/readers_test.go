package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/r2med/r2med/demo"
	"github.com/r2med/r2med/expand"
	"github.com/r2med/r2med/internal/fileio"
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

// hubReadme is a dataset card whose configs corpus, queries and qrels
// have the split S in the files named (hub layout, read through package
// table).
func hubReadme(corpus, queries, qrels string) string {
	config := func(name, path string) string {
		return "  - config_name: " + name + "\n    data_files:\n      - split: S\n        path: " + path + "\n"
	}
	return "---\nconfigs:\n" + config("corpus", corpus) + config("queries", queries) + config("qrels", qrels) + "---\n"
}

// lineRuleReader is one of the commands that read text input lines: setup
// writes first and second as the first two lines of the file it reads
// (stdin, when it returns "" for the file) and returns the command line.
type lineRuleReader struct {
	name, kind    string
	first, second string
	setup         func(t *testing.T, dir string, lines []byte) (file string, args []string)
}

func lineRuleReaders() []lineRuleReader {
	at := func(rel string, args ...string) func(*testing.T, string, []byte) (string, []string) {
		return func(t *testing.T, dir string, lines []byte) (string, []string) {
			file := filepath.Join(dir, rel)
			writeTestFile(t, file, lines)
			out := make([]string, len(args))
			for i, a := range args {
				out[i] = strings.ReplaceAll(a, "DIR", dir)
			}
			return file, out
		}
	}
	hub := func(t *testing.T, dir string, lines []byte) (string, []string) {
		writeTestFile(t, filepath.Join(dir, "README.md"), []byte(hubReadme("corpus/S.jsonl", "queries/S.jsonl", "qrels/S.jsonl")))
		writeTestFile(t, filepath.Join(dir, "queries", "S.jsonl"), []byte(`{"_id":"q1","text":"a"}`+"\n"))
		writeTestFile(t, filepath.Join(dir, "qrels", "S.jsonl"), []byte(`{"query-id":"q1","corpus-id":"d1"}`+"\n"))
		return at("corpus/S.jsonl", "stats", "--data", "DIR", "--split", "S")(t, dir, lines)
	}
	task := func(t *testing.T, dir string, lines []byte) (string, []string) {
		writeTestFile(t, filepath.Join(dir, "query.jsonl"), []byte(`{"id":"q1","text":"a"}`+"\n"))
		writeTestFile(t, filepath.Join(dir, "qrels.jsonl"), []byte(`{"q_id":"q1","p_id":"d1","score":1}`+"\n"))
		return at("corpus.jsonl", "stats", "--data", "DIR")(t, dir, lines)
	}
	gar := func(t *testing.T, dir string, lines []byte) (string, []string) {
		data := demoDir(t)
		file := filepath.Join(data, "lamer", "x", expand.FileName)
		writeTestFile(t, file, lines)
		return file, []string{"run", "--data", data, "--gar", "lamer", "--gar-llm", "x", "--out", filepath.Join(dir, "out"), "--quiet"}
	}
	eval := func(t *testing.T, dir string, lines []byte) (string, []string) {
		writeTestFile(t, filepath.Join(dir, "qrels.txt"), []byte("q1 0 d1 1\n"))
		return at("run.trec", "eval", "DIR/qrels.txt", "DIR/run.trec")(t, dir, lines)
	}
	leakage := func(rel string) func(*testing.T, string, []byte) (string, []string) {
		return at(rel, "audit", "leakage", "--train", "DIR/"+rel, "--against", "demo", "--state", "DIR/state", "--quiet")
	}
	stdin := func(t *testing.T, dir string, lines []byte) (string, []string) { return "", []string{"analyze"} }
	return []lineRuleReader{
		{"analyze", "JSON-lines", `{"id":"1","text":"a"}`, `{"id":"2","text":"b"}`, stdin},
		{"run --gar (expand)", "JSON-lines", `{"id":"1","text":"a","hy_doc":"b"}`, `{"id":"2","text":"a","hy_doc":"b"}`, gar},
		{"audit leakage jsonl (audit)", "JSON-lines", `{"anchor":"a","positive":"b"}`, `{"anchor":"c","positive":"d"}`, leakage("train.jsonl")},
		{"audit leakage tsv (audit)", "TSV", "anchor\tpositive", "c\td", leakage("train.tsv")},
		{"audit leakage text (audit)", "text (one text per line)", "a", "b", leakage("train.txt")},
		{"stats hub (table)", "JSON-lines", `{"_id":"d1","text":"a"}`, `{"_id":"d2","text":"b"}`, hub},
		{"stats (dataset)", "JSON-lines or TSV", `{"id":"d1","text":"a"}`, `{"id":"d2","text":"b"}`, task},
		{"eval (trec)", "TREC run", "q1 Q0 d1 1 2 t", "q1 Q0 d2 2 1 t", eval},
	}
}

// Every command that reads text input lines reads them by one rule
// (fileio.Lines): a byte-order mark starting a later line is refused,
// naming the file and line (except in a one-text-per-line training file,
// where it is the text's own U+FEFF), and a line over the readers' limit
// is named with the file, the line and the kind of file expected, not
// bufio's "token too long" or an unbounded read.
func TestReadersShareTheLineRule(t *testing.T) {
	long := bytes.Repeat([]byte("x"), fileio.MaxLineBytes+1)
	for _, c := range lineRuleReaders() {
		t.Run(c.name, func(t *testing.T) {
			run := func(lines []byte) (string, string, int) {
				file, args := c.setup(t, t.TempDir(), lines)
				in := ""
				if file == "" {
					file, in = "stdin", string(lines)
				}
				_, stderr, code := r2med(t, in, args...)
				return file, stderr, code
			}
			file, stderr, code := run([]byte(c.first + "\n\xef\xbb\xbf" + c.second + "\n"))
			// Commands over several tasks put the task's name first.
			want := file + ":2: line starts with a byte-order mark (U+FEFF, bytes EF BB BF), as where files with one were joined; remove it"
			if c.kind == "text (one text per line)" {
				if code != 0 {
					t.Errorf("a text line starting with U+FEFF: exit %d, %s", code, stderr)
				}
			} else if code != 1 || !strings.HasPrefix(stderr, "r2med: ") || !strings.Contains(stderr, want) {
				t.Errorf("byte-order mark on line 2: exit %d, stderr %q\nwant it to hold %q", code, stderr, want)
			}

			file, stderr, code = run(append(append([]byte(c.first+"\n"), long...), '\n'))
			want = file + ":2: line is longer than 64 MiB, the most the readers accept; a " + c.kind + " file holds one record per line"
			if code != 1 || !strings.HasPrefix(stderr, "r2med: ") || !strings.Contains(stderr, want) {
				if len(stderr) > 500 {
					stderr = stderr[:500]
				}
				t.Errorf("over-long line 2: exit %d, stderr %q\nwant it to hold %q", code, stderr, want)
			}
		})
	}
}

// A table file that is one JSON array keeps the line rule for a
// byte-order mark (a later line starting with one is refused, naming it),
// but not the line limit: json.dump writes a whole array on one line.
func TestJSONArrayByteOrderMark(t *testing.T) {
	dir := t.TempDir()
	writeTestFile(t, filepath.Join(dir, "README.md"), []byte(hubReadme("corpus/S.json", "queries/S.jsonl", "qrels/S.jsonl")))
	writeTestFile(t, filepath.Join(dir, "queries", "S.jsonl"), []byte(`{"_id":"q1","text":"a"}`+"\n"))
	writeTestFile(t, filepath.Join(dir, "qrels", "S.jsonl"), []byte(`{"query-id":"q1","corpus-id":"d1"}`+"\n"))
	corpus := filepath.Join(dir, "corpus", "S.json")
	writeTestFile(t, corpus, []byte("\xef\xbb\xbf[\n"+`{"_id":"d1","text":"a"},`+"\n"+`{"_id":"d2","text":"b"}]`+"\n"))
	if _, stderr, code := r2med(t, "", "stats", "--data", dir, "--split", "S"); code != 0 {
		t.Fatalf("a byte-order mark at the start: exit %d, %s", code, stderr)
	}
	writeTestFile(t, corpus, []byte("[\n"+`{"_id":"d1","text":"a"},`+"\n\xef\xbb\xbf"+`{"_id":"d2","text":"b"}]`+"\n"))
	_, stderr, code := r2med(t, "", "stats", "--data", dir, "--split", "S")
	if want := "r2med: " + corpus + ":3: line starts with a byte-order mark (U+FEFF, bytes EF BB BF), as where files with one were joined; remove it"; code != 1 || !strings.HasPrefix(stderr, want) {
		t.Errorf("exit %d, stderr %q\nwant it to start %q", code, stderr, want)
	}
}

// lineEndsReader is a command reading a text input that it accepts:
// setup writes data where the command reads it and returns the command
// line; answer is what the command made of it (its output, with the
// temporary directory's name taken out).
type lineEndsReader struct {
	name  string
	lines []string
	setup func(t *testing.T, dir string, data []byte) (file string, args []string)
}

func lineEndsReaders(t *testing.T) []lineEndsReader {
	task, err := demo.Load()
	if err != nil {
		t.Fatal(err)
	}
	var gens, train, tsv, texts []string
	for _, q := range task.Queries {
		b, _ := json.Marshal(map[string]string{"id": q.ID, "text": q.Text, "hy_doc": "a passage about " + q.Text})
		gens = append(gens, string(b))
	}
	for _, q := range task.Queries[:3] {
		b, _ := json.Marshal(map[string]string{"anchor": q.Text, "positive": task.Corpus[0].Text})
		train = append(train, string(b))
		tsv = append(tsv, q.Text+"\t"+task.Corpus[1].Text)
		texts = append(texts, q.Text)
	}
	leakage := func(rel string) func(*testing.T, string, []byte) (string, []string) {
		return func(t *testing.T, dir string, data []byte) (string, []string) {
			file := filepath.Join(dir, rel)
			writeTestFile(t, file, data)
			return file, []string{"audit", "leakage", "--train", file, "--against", "demo", "--documents", "all", "--format", "jsonl", "--state", filepath.Join(dir, "state"), "--quiet"}
		}
	}
	return []lineEndsReader{
		{"analyze", []string{`{"id":"1","text":"Fevers and chills"}`, `{"id":"2","text":"The patient's HbA1c"}`}, func(t *testing.T, dir string, data []byte) (string, []string) {
			return "", []string{"analyze"}
		}},
		{"run --gar (expand)", gens, func(t *testing.T, dir string, data []byte) (string, []string) {
			data0 := demoInto(t, filepath.Join(dir, "data"))
			file := filepath.Join(data0, "hyde", "x", expand.FileName)
			writeTestFile(t, file, data)
			return file, []string{"run", "--data", data0, "--gar", "hyde", "--gar-llm", "x", "--out", filepath.Join(dir, "out"), "--quiet"}
		}},
		{"audit leakage jsonl (audit)", train, leakage("train.jsonl")},
		{"audit leakage tsv (audit)", tsv, leakage("train.tsv")},
		{"audit leakage text (audit)", texts, leakage("train.txt")},
		{"stats hub (table)", []string{`{"_id":"d1","text":"insulin resistance"}`, `{"_id":"d2","text":"retinal detachment"}`}, func(t *testing.T, dir string, data []byte) (string, []string) {
			writeTestFile(t, filepath.Join(dir, "README.md"), []byte(hubReadme("corpus/S.jsonl", "queries/S.jsonl", "qrels/S.jsonl")))
			writeTestFile(t, filepath.Join(dir, "queries", "S.jsonl"), []byte(`{"_id":"q1","text":"a"}`+"\n"))
			writeTestFile(t, filepath.Join(dir, "qrels", "S.jsonl"), []byte(`{"query-id":"q1","corpus-id":"d1"}`+"\n"))
			file := filepath.Join(dir, "corpus", "S.jsonl")
			writeTestFile(t, file, data)
			return file, []string{"stats", "--data", dir, "--split", "S"}
		}},
	}
}

// Every reader gives the same answer for a file with CRLF line ends, one
// whose last line has no newline and one that starts with a byte-order
// mark as for the plain LF file, as dataset's and trec's readers do; an
// empty file (or one of blank lines) is an error naming it, as an empty
// corpus is to dataset. (Blank lines between records are skipped but
// counted, so that line numbers stay an editor's: TestLines.)
func TestReadersLineEndsAndEmptyFiles(t *testing.T) {
	for _, c := range lineEndsReaders(t) {
		t.Run(c.name, func(t *testing.T) {
			run := func(data []byte) (string, int, string, string) {
				dir := t.TempDir()
				file, args := c.setup(t, dir, data)
				in := ""
				if file == "" {
					file, in = "stdin", string(data)
				}
				stdout, stderr, code := r2med(t, in, args...)
				if runs, _ := filepath.Glob(filepath.Join(dir, "out", "*", "*", "run.trec")); len(runs) == 1 {
					b, err := os.ReadFile(runs[0])
					if err != nil {
						t.Fatal(err)
					}
					stdout += string(b)
				}
				return strings.ReplaceAll(stdout, dir, "DIR"), code, strings.ReplaceAll(stderr, dir, "DIR"), strings.ReplaceAll(file, dir, "DIR")
			}
			lf := strings.Join(c.lines, "\n") + "\n"
			want, code, stderr, _ := run([]byte(lf))
			if code != 0 || want == "" {
				t.Fatalf("LF: exit %d, stdout %q, stderr %q", code, want, stderr)
			}
			for _, v := range []struct{ name, data string }{
				{"CRLF", strings.Join(c.lines, "\r\n") + "\r\n"},
				{"no newline at the end", strings.TrimSuffix(lf, "\n")},
				{"byte-order mark", "\xef\xbb\xbf" + lf},
			} {
				if got, code, stderr, _ := run([]byte(v.data)); code != 0 || got != want {
					t.Errorf("%s: exit %d, stderr %q, stdout\n%s\nwant (as LF)\n%s", v.name, code, stderr, got, want)
				}
			}
			for _, empty := range []string{"", "\n \n\r\n"} {
				_, code, stderr, file := run([]byte(empty))
				if code != 1 || !strings.HasPrefix(stderr, "r2med: ") || !strings.Contains(stderr, file+": ") {
					t.Errorf("empty file %q: exit %d, stderr %q; want an error naming %s", empty, code, stderr, file)
				}
			}
		})
	}
}
