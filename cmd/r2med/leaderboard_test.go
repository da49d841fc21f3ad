package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLeaderboardAndResultsCLI makes a demo run and a run of the demo
// data renamed as an R2MED task, then lists and ranks them.
func TestLeaderboardAndResultsCLI(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
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

	stdout, stderr, code = r2med(t, "", "leaderboard", "--results", out, "--format", "markdown", "--kind", "base", "--no-external", "--no-pin")
	if code != 0 || !strings.Contains(stdout, "| 1 | nv | 27.15 |") || !strings.Contains(stdout, "**15.13**") {
		t.Fatalf("leaderboard (%d):\n%s%s", code, stdout, stderr)
	}
	// Our demo run is on the board, first, with its demo score in a
	// column after the average; external results are there by default.
	stdout, stderr, code = r2med(t, "", "leaderboard", "--results", out)
	lines := strings.Split(stdout, "\n")
	if code != 0 || !strings.Contains(lines[1], "demo") || !strings.Contains(lines[2], "bm25") || !strings.Contains(lines[2], "ours") || !strings.Contains(lines[2], "63.81") ||
		!strings.Contains(stdout, "ReasonEmbed-Qwen3-8B") || !strings.Contains(stdout, "external") {
		t.Fatalf("leaderboard (%d):\n%s%s", code, stdout, stderr)
	}
	for _, args := range [][]string{{"leaderboard", "--metric", "ndcg@11"}, {"leaderboard", "--kind", "dense"}, {"leaderboard", "--format", "html"}} {
		_, stderr, code := r2med(t, "", args...)
		if code != 2 || !strings.Contains(stderr, "unknown") {
			t.Errorf("%v: exit %d (%s), want 2", args, code, stderr)
		}
		if args[1] == "--metric" && !strings.Contains(stderr, "ndcg@10, ndcg@25") {
			t.Errorf("%v: the valid metrics are not listed: %s", args, stderr)
		}
	}
	stdout, _, code = r2med(t, "", "leaderboard", "--metric", "recall@100", "--format", "csv", "--no-published", "--no-external", "--results", filepath.Join(dir, "empty"))
	if code == 0 {
		t.Errorf("an empty board succeeded:\n%s", stdout)
	}
	// The export carries the page's rows: our demo run, its demo column.
	stdout, _, code = r2med(t, "", "leaderboard", "--metric", "recall@100", "--format", "csv", "--no-published", "--results", out)
	if code != 0 || !strings.Contains(strings.Split(stdout, "\n")[0], ",demo,") || !strings.Contains(stdout, ",ours,") {
		t.Errorf("csv of our demo run (%d):\n%s", code, stdout)
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
