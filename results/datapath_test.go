package results

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// DataDir's rule for manifests that recorded a relative data path: the
// directory the run was started in comes from the run's own location and
// its recorded --out, never from the current directory.
func TestDataDirOfOldManifests(t *testing.T) {
	start := t.TempDir()
	os.MkdirAll(filepath.Join(start, "data", "nf"), 0o755)
	t.Chdir(t.TempDir())
	run := func(dir, source string, command ...string) Run {
		return Run{Dir: filepath.Join(start, dir), Manifest: &Manifest{Task: TaskInfo{Source: source}, Command: append([]string{"r2med"}, command...)}}
	}
	want := filepath.Join(start, "data", "nf")
	for _, c := range []struct {
		name string
		r    Run
		want string // "" : ErrDataNotFound, saying err
		err  string
	}{
		{"absolute", run("x", "/data/nf"), "/data/nf", ""},
		{"embedded", run("x", "embedded:demo"), "embedded:demo", ""},
		{"hf URI", run("x", "hf://datasets/me/nf"), "hf://datasets/me/nf", ""},
		{"--out DIR", run("runs/nf", "data/nf", "run", "--data", "data/nf", "--out", "runs/nf"), want, ""},
		{"--out=DIR, several tasks", run("runs/all/nf", "data/nf", "run", "--out=runs/all/", "--task", "all"), want, ""},
		{"sweep --out", run("res/bm25/nf", "data/nf", "sweep", "s.yaml", "--out", "res"), want, ""},
		{"no --out: out/SYSTEM/TASK", run("out/bm25/nf", "data/nf", "run", "--data", "data/nf"), want, ""},
		{"absolute --out", run("abs", "data/nf", "run", "--out", "/elsewhere/abs"), "", "which an absolute --out does not tell"},
		{"moved", run("moved/nf", "data/nf", "run", "--out", "runs/nf"), "", "does not end in it: was it moved?"},
		{"data gone", run("out/bm25/nf", "data/gone", "run"), "", "data/gone is not a directory"},
	} {
		got, err := c.r.DataDir()
		if c.err == "" {
			if err != nil || got != c.want {
				t.Errorf("%s: %q, %v; want %q", c.name, got, err, c.want)
			}
			continue
		}
		if !errors.Is(err, ErrDataNotFound) || !strings.Contains(err.Error(), c.err) || !strings.Contains(err.Error(), filepath.Join(c.r.Dir, ManifestFile)) {
			t.Errorf("%s: %q, %v; want an error saying %q", c.name, got, err, c.err)
		}
	}
}
