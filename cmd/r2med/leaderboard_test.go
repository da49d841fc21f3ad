package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestLeaderboardAndResultsCLI makes a demo run and a run of the demo
// data renamed as an R2MED task, then lists and ranks them.
func TestLeaderboardAndResultsCLI(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	if _, errOut, code := r2med(t, "", "run", "--task", "demo", "--quiet", "--out", filepath.Join(out, "demo")); code != 0 {
		t.Fatalf("run: %s", errOut)
	}
	stdout, stderr, code := r2med(t, "", "results", "--results", out)
	if code != 0 || !strings.Contains(stdout, "demo  bm25") || !strings.Contains(stdout, "63.81") {
		t.Fatalf("results (%d):\n%s%s", code, stdout, stderr)
	}
	stdout, stderr, code = r2med(t, "", "results", "--results", out, "--format", "json")
	var listing struct {
		Runs []struct{ Task, System string }
	}
	if err := json.Unmarshal([]byte(stdout), &listing); code != 0 || err != nil || len(listing.Runs) != 1 || listing.Runs[0].System != "bm25" {
		t.Fatalf("results json (%d, %v):\n%s%s", code, err, stdout, stderr)
	}

	stdout, stderr, code = r2med(t, "", "leaderboard", "--results", out, "--format", "markdown", "--kind", "base")
	if code != 0 || !strings.Contains(stdout, "| 1 | nv | 27.15 |") || !strings.Contains(stdout, "**15.13**") {
		t.Fatalf("leaderboard (%d):\n%s%s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "1 run(s) on data that is no R2MED task left out") {
		t.Errorf("the demo run is not reported as left out: %q", stderr)
	}
	stdout, _, code = r2med(t, "", "leaderboard", "--metric", "recall@100", "--format", "csv", "--no-published", "--results", out)
	if code == 0 {
		t.Errorf("an empty board succeeded:\n%s", stdout)
	}
	for _, args := range [][]string{
		{"leaderboard", "--metric", "bpref"},
		{"leaderboard", "--family", "cases"},
		{"leaderboard", "--rank", "elo"},
		{"leaderboard", "--format", "html"},
		{"leaderboard", "--results", filepath.Join(dir, "missing")},
		{"results", "--results", filepath.Join(dir, "missing")},
	} {
		if _, stderr, code := r2med(t, "", args...); code == 0 || stderr == "" {
			t.Errorf("%v: exit %d, stderr %q; want an error", args, code, stderr)
		}
	}
}
