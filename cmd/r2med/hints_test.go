package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// checkHintFlags fails when stderr names a flag (--name) that the command
// the user ran does not have.
func checkHintFlags(t *testing.T, command, stderr string) {
	t.Helper()
	cmd, _, err := newRoot().Find([]string{command})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`--([a-z][a-z0-9-]*)`).FindAllStringSubmatch(stderr, -1) {
		if cmd.Flags().Lookup(m[1]) == nil {
			t.Errorf("r2med %s's error names --%s, which it does not have:\n%s", command, m[1], stderr)
		}
	}
}

// A hosted rerank API without its key: run and rerank both say which
// environment variable to set (keys come from the environment), and name
// no flag the command lacks.
func TestRerankKeyHintNamesWhatExists(t *testing.T) {
	t.Setenv("COHERE_API_KEY", "")
	dir := t.TempDir()
	mustRun(t, "run", "--task", "demo", "--out", dir, "--quiet")
	for _, args := range [][]string{
		{"run", "--task", "demo", "--rerank", "cohere", "--rerank-model", "rerank-v3.5", "--out", filepath.Join(dir, "run"), "--quiet"},
		{"rerank", "--task", "demo", "--run", filepath.Join(dir, "run.trec"), "--rerank", "cohere", "--rerank-model", "rerank-v3.5", "--out", filepath.Join(dir, "r.trec"), "--quiet"},
	} {
		_, stderr, code := r2med(t, "", args...)
		if code == 0 || !strings.Contains(stderr, "cohere's API needs a key: set COHERE_API_KEY in the environment") {
			t.Errorf("%s: exit %d, stderr %q", args[0], code, stderr)
		}
		checkHintFlags(t, args[0], stderr)
	}
}
