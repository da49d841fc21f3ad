package sweep

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/r2med/r2med/pipeline"
	"github.com/r2med/r2med/tasks"
)

func TestSweepRunsAndResumes(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "lucene.yaml"), []byte("name: bm25-lucene\nretrieve: [{bm25: {scheme: lucene}}]\n"), 0o644)
	sweepYAML := `
out: res
tasks: [demo]
pipelines:
  - file: lucene.yaml
  - retrieve: [{bm25: {}}]
    top_k: 10
`
	sweepYAML = strings.Replace(sweepYAML, "tasks: [demo]", "tasks: [demo]\ndata: [task]", 1)
	if err := os.CopyFS(filepath.Join(dir, "task"), os.DirFS("../demo/data")); err != nil {
		t.Fatal(err)
	}
	s, err := Parse([]byte(sweepYAML), dir)
	if err != nil {
		t.Fatal(err)
	}
	s.Out = filepath.Join(dir, s.Out)
	var cells []Cell
	var skipped int
	run := func() {
		cells, skipped = nil, 0
		failed, err := s.Run(context.Background(), Options{Done: func(c Cell, o *pipeline.Outcome, err error) {
			if err != nil {
				t.Errorf("%s × %s: %v", c.Task, c.Pipeline, err)
				return
			}
			cells = append(cells, c)
			if o.Skipped {
				skipped++
			}
		}})
		if err != nil || failed != 0 {
			t.Fatalf("sweep: %d failed, %v", failed, err)
		}
	}
	run()
	if len(cells) != 4 || skipped != 0 {
		t.Fatalf("first sweep: %d cells, %d skipped", len(cells), skipped)
	}
	for _, c := range cells {
		if _, err := os.Stat(filepath.Join(c.Dir, pipeline.ManifestFile)); err != nil {
			t.Errorf("cell %s × %s left no manifest: %v", c.Task, c.Pipeline, err)
		}
	}
	if cells[0].Dir != filepath.Join(s.Out, "bm25-lucene", cells[0].Task) {
		t.Errorf("cell dir %s", cells[0].Dir)
	}
	run()
	if skipped != 4 {
		t.Fatalf("second sweep skipped %d of 4 finished cells", skipped)
	}
}

func TestParseSweepErrors(t *testing.T) {
	for _, c := range []struct{ yaml, want string }{
		{"", "empty sweep file"},
		{"pipelines: [{retrieve: [{bm25: {}}]}]", "no tasks"},
		{"tasks: [Biology]", "no pipelines"},
		{"tasks: [Biology]\npipelines: [{file: x.yaml, name: y}]", "either file: or an inline pipeline"},
		{"tasks: [Biology]\npipelines: [{retrieve: [{bm25: {}}]}, {retrieve: [{bm25: {}}]}]", `both named "bm25"`},
		{"tasks: [Biology]\npipelines: [{file: missing.yaml}]", "missing.yaml"},
		{"taks: [Biology]", `line 1: unknown key "taks" in the sweep (did you mean "tasks"?)`},
		{"tasks: [Biologie]\npipelines: [{retrieve: [{bm25: {}}]}]", "Biologie"},
	} {
		_, err := Parse([]byte(c.yaml), t.TempDir())
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want it to mention %q", c.yaml, err, c.want)
		}
	}
}

// TestSweepBright: a sweep names BRIGHT's tasks in its suite.
func TestSweepBright(t *testing.T) {
	for _, c := range []struct {
		doc   string
		suite tasks.Suite
		n     int
	}{
		{"suite: bright\ntasks: [all]\npipelines: [{name: b, retrieve: [{bm25: {}}]}]\n", tasks.Bright, 12},
		{"suite: bright-long\ntasks: [biology, pony]\npipelines: [{name: b, retrieve: [{bm25: {}}]}]\n", tasks.BrightLong, 2},
	} {
		s, err := Parse([]byte(c.doc), t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		if len(s.Sources) != c.n || s.Sources[0].Suite != c.suite || s.Sources[0].Task != "biology" {
			t.Errorf("%s: sources %+v", c.suite, s.Sources)
		}
	}
	if _, err := Parse([]byte("suite: bright-long\ntasks: [aops]\npipelines: [{name: b, retrieve: [{bm25: {}}]}]\n"), t.TempDir()); err == nil || !strings.Contains(err.Error(), "no long documents") {
		t.Errorf("aops in the long setting: %v", err)
	}
}
