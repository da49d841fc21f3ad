package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSweepCommand(t *testing.T) {
	dir := t.TempDir()
	sweep := filepath.Join(dir, "sweep.yaml")
	os.WriteFile(sweep, []byte(`tasks: [demo]
pipelines:
  - retrieve: [{bm25: {}}]
  - name: hybrid
    retrieve: [{bm25: {}}, {bm25: {scheme: robertson}}]
    fuse: {method: rrf, k: 100}
`), 0o644)
	out := filepath.Join(dir, "res")
	stdout, stderr, code := r2med(t, "", "sweep", sweep, "--out", out, "--quiet")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if strings.Count(stdout, "done ") != 2 || !strings.Contains(stdout, "2 cells in "+out) {
		t.Fatalf("first sweep printed:\n%s", stdout)
	}
	for _, p := range []string{"bm25/demo/results.json", "hybrid/demo/results.json", "hybrid/demo/stages/retrieve-1-bm25.trec"} {
		if _, err := os.Stat(filepath.Join(out, p)); err != nil {
			t.Errorf("missing %s: %v", p, err)
		}
	}
	stdout, _, code = r2med(t, "", "sweep", sweep, "--out", out, "--quiet")
	if code != 0 || strings.Count(stdout, "kept ") != 2 {
		t.Fatalf("second sweep should keep both cells:\n%s", stdout)
	}
	os.WriteFile(sweep, []byte("tasks: [demo]\npipelines: [{retrieve: [{run: missing.trec}]}]\n"), 0o644)
	stdout, stderr, code = r2med(t, "", "sweep", sweep, "--out", out, "--quiet")
	if code != 1 || !strings.Contains(stdout, "FAIL") || !strings.Contains(stderr, "1 of 1 cells failed") {
		t.Fatalf("failing cell: exit %d\n%s\n%s", code, stdout, stderr)
	}
}
