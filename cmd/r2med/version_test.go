package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/r2med/r2med/results"
)

// A binary built from a git checkout names its commit in --version and in
// the manifests it writes, and says whether the checkout had uncommitted
// changes, as git status saw them.
//
// It builds from the checkout itself (the packages are in the build cache
// from this test's own build, so only the link is new). Go records the
// revision only where .git is a directory: in a git worktree (.git a
// file) there is nothing to check, and the test says so and skips.
func TestVersionNamesRevision(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	git, err := exec.LookPath("git")
	if err != nil {
		if os.Getenv("R2MED_CI") == "1" {
			t.Fatal("git not found but R2MED_CI=1")
		}
		t.Skip("git not found")
	}
	root, _ := filepath.Abs(filepath.Join("..", ".."))
	if st, err := os.Stat(filepath.Join(root, ".git")); err != nil || !st.IsDir() {
		t.Skipf("%s is not a git clone (a worktree, or no checkout): Go records no revision there", root)
	}
	run := func(name string, args ...string) string {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir = root
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s %s: %v", name, strings.Join(args, " "), err)
		}
		return string(out)
	}
	head := strings.TrimSpace(run(git, "rev-parse", "HEAD"))
	unix, err := strconv.ParseInt(strings.TrimSpace(run(git, "show", "-s", "--format=%ct", "HEAD")), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	when := time.Unix(unix, 0).UTC().Format(time.RFC3339)
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "r2med")
	// -buildvcs=true over a GOFLAGS that may turn it off; git status as
	// the build saw it (Go runs the same command).
	dirty := run(git, "status", "--porcelain") != ""
	if out, err := exec.Command("go", "build", "-buildvcs=true", "-o", bin, filepath.Join(root, "cmd", "r2med")).CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	if dirty != (run(git, "status", "--porcelain") != "") {
		t.Skip("the checkout changed during the build")
	}
	want := "devel " + head[:12] + " (" + when + ")"
	if dirty {
		want = "devel " + head[:12] + " (" + when + ", modified)"
	}
	if got := run(bin, "--version"); got != "r2med version "+want+"\n" {
		t.Errorf("--version: %q, want %q", got, "r2med version "+want+"\n")
	}

	// A run's manifest records the same, and the build it names.
	dir := filepath.Join(tmp, "demo")
	run(bin, "run", "--task", "demo", "--quiet", "--out", dir)
	b, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m results.Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if build := (results.Build{Revision: head, Time: when, Modified: dirty}); m.Version != want || m.Build == nil || *m.Build != build {
		t.Errorf("manifest: version %q build %+v, want %q %+v", m.Version, m.Build, want, build)
	}
}
