package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/r2med/r2med/dataset"
	"github.com/r2med/r2med/demo"
	"github.com/r2med/r2med/index"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/trec"
)

// TestIndexBuildMatchesRun builds an index with `r2med index build`,
// searches it, and requires exactly the top-100 run `r2med run` writes
// for the same data and settings (same documents, order and scores to the
// bit: the two run files are byte-identical), for the three BM25 schemes
// on the demo task and NFCorpus.
func TestIndexBuildMatchesRun(t *testing.T) {
	type data struct {
		name  string
		flags []string
		task  func(t *testing.T) *ir.Task
	}
	sets := []data{{"demo", []string{"--task", "demo"}, func(t *testing.T) *ir.Task {
		task, err := demo.Load()
		if err != nil {
			t.Fatal(err)
		}
		return task
	}}}
	if _, err := os.Stat(shared); err == nil {
		nf := filepath.Join(shared, "nfcorpus")
		sets = append(sets, data{"nfcorpus", []string{"--data", nf, "--split", "test"}, func(t *testing.T) *ir.Task {
			task, err := dataset.Load(nf, dataset.Options{Split: "test"})
			if err != nil {
				t.Fatal(err)
			}
			return task
		}})
	} else if os.Getenv("R2MED_CI") == "1" {
		t.Fatalf("shared reference data not found at %s", shared)
	}
	for _, set := range sets {
		task := set.task(t)
		for _, sc := range []string{"r2med", "lucene", "robertson"} {
			dir := t.TempDir()
			idx := filepath.Join(dir, "x.idx")
			args := append([]string{"index", "build", "--quiet", "--bm25", sc, "--out", idx}, set.flags...)
			if _, stderr, code := r2med(t, "", args...); code != 0 {
				t.Fatalf("%s: exit %d: %s", strings.Join(args, " "), code, stderr)
			}
			args = append([]string{"run", "--quiet", "--bm25", sc, "--top-k", "100", "--out", filepath.Join(dir, "run")}, set.flags...)
			if _, stderr, code := r2med(t, "", args...); code != 0 {
				t.Fatalf("%s: exit %d: %s", strings.Join(args, " "), code, stderr)
			}
			runFile, err := os.ReadFile(filepath.Join(dir, "run", "run.trec"))
			if err != nil {
				t.Fatal(err)
			}
			first, _, _ := strings.Cut(string(runFile), "\n")
			tag := first[strings.LastIndexByte(first, ' ')+1:]
			ix, err := index.Open(idx)
			if err != nil {
				t.Fatal(err)
			}
			if err := ix.CheckCorpus(task.Corpus); err != nil {
				t.Fatal(err)
			}
			s, err := ix.NewSearcher()
			if err != nil {
				t.Fatal(err)
			}
			got := ir.Run{}
			for _, q := range task.Queries {
				got[q.ID] = s.Search(q.Text, 100)
			}
			var buf bytes.Buffer
			if err := trec.WriteRun(&buf, got, tag); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(buf.Bytes(), runFile) {
				gl, wl := strings.Split(buf.String(), "\n"), strings.Split(string(runFile), "\n")
				for i := range min(len(gl), len(wl)) {
					if gl[i] != wl[i] {
						t.Fatalf("%s %s: line %d of the run differs:\nindex: %s\nrun:   %s", set.name, sc, i+1, gl[i], wl[i])
					}
				}
				t.Fatalf("%s %s: the index's run has %d lines, r2med run's %d", set.name, sc, len(gl), len(wl))
			}
			ix.Close()
		}
	}
}

func TestIndexInfo(t *testing.T) {
	idx := filepath.Join(t.TempDir(), "demo.idx")
	if _, stderr, code := r2med(t, "", "index", "build", "--quiet", "--task", "demo", "--bm25", "lucene", "--out", idx); code != 0 {
		t.Fatalf("build: exit %d: %s", code, stderr)
	}
	out, stderr, code := r2med(t, "", "index", "info", "--verify", idx)
	if code != 0 {
		t.Fatalf("info: exit %d: %s", code, stderr)
	}
	for _, want := range []string{"documents  79", "bm25       scheme lucene k1=0.9 b=0.4, analyzer lucene-english", "bm25.postdoc", "checked on first use", "verified   every checksum"} {
		if !strings.Contains(out, want) {
			t.Errorf("info output lacks %q:\n%s", want, out)
		}
	}
	out, _, code = r2med(t, "", "index", "info", "--json", idx)
	if code != 0 || !strings.Contains(out, `"scheme": "lucene"`) || !strings.Contains(out, `"format_version": 1`) {
		t.Errorf("info --json: exit %d:\n%s", code, out)
	}

	// A flipped byte in the middle of the file (the texts or postings):
	// --verify refuses, naming the section and what to do.
	b, err := os.ReadFile(idx)
	if err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(t.TempDir(), "bad.idx")
	b[len(b)/2] ^= 0x40
	if err := os.WriteFile(bad, b, 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code = r2med(t, "", "index", "info", "--verify", bad)
	if code == 0 || !strings.Contains(stderr, "checksum mismatch") || !strings.Contains(stderr, "rebuild it with `r2med index build`") {
		t.Errorf("info --verify of a corrupt file: exit %d: %s", code, stderr)
	}
}

func TestIndexBuildRefusesBadFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"index", "build", "--task", "demo"}, "--out INDEX is required"},
		{[]string{"index", "build", "--task", "demo", "--out", "x.idx", "--retriever", "splade"}, `--retriever "splade": want bm25 or dense`},
		{[]string{"index", "build", "--task", "demo", "--out", "x.idx", "--retriever", "dense"}, "--retriever dense: building an index needs the dense retriever's embedding"},
		{[]string{"index", "build", "--task", "demo", "--out", "x.idx", "--bm25", "okapi"}, `unknown BM25 scheme "okapi"`},
		{[]string{"index", "info", "nowhere.idx"}, "no such file"},
	} {
		_, stderr, code := r2med(t, "", c.args...)
		if code == 0 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q, want %q", c.args, code, stderr, c.want)
		}
	}
}
