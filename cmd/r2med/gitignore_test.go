package main

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// The README's commands write under out/ (the default results directory);
// those runs must not show up as files to commit.
func TestDefaultResultsDirIsIgnored(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git not found")
	}
	root, _ := filepath.Abs(filepath.Join("..", ".."))
	if exec.Command(git, "-C", root, "rev-parse", "--git-dir").Run() != nil {
		t.Skip("not a git checkout")
	}
	for _, p := range []string{"out/demo/run.trec", "out/bm25/Biology/manifest.json"} {
		if err := exec.Command(git, "-C", root, "check-ignore", "-q", p).Run(); err != nil {
			t.Errorf("git does not ignore %s (%v); add /out/ to .gitignore", p, err)
		}
	}
	// Only the top-level folder: a package named out elsewhere stays.
	if exec.Command(git, "-C", root, "check-ignore", "-q", "cmd/r2med/out/x.go").Run() == nil {
		t.Error("git ignores cmd/r2med/out/x.go; ignore /out/ at the root only")
	}
}
