package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReportCLI makes two demo runs (BM25 as R2MED scores it and
// Lucene's BM25) and reports them as HTML and as chart files; the
// per-query scatter needs the demo task's judgments, which the loader
// finds from the manifests.
func TestReportCLI(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	for name, args := range map[string][]string{"r2med": nil, "lucene": {"--bm25", "lucene"}} {
		a := append([]string{"run", "--task", "demo", "--quiet", "--out", filepath.Join(out, name)}, args...)
		if _, errOut, code := r2med(t, "", a...); code != 0 {
			t.Fatalf("run %s: %s", name, errOut)
		}
	}
	page := filepath.Join(dir, "report.html")
	stdout, stderr, code := r2med(t, "", "report", "--results", out, "--out", page)
	if code != 0 || strings.TrimSpace(stdout) != page {
		t.Fatalf("report (%d): %s%s", code, stdout, stderr)
	}
	html, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`id="bars"`, `id="scatter"`, "demo (N=15)", `data-n="15"`} {
		if !strings.Contains(string(html), want) {
			t.Errorf("report lacks %q", want)
		}
	}
	// The scatter counts the queries compare counts: every judged one.
	cmpOut, stderr, code := r2med(t, "", "compare", filepath.Join(out, "lucene"), filepath.Join(out, "r2med"), "--format", "json")
	var rep struct{ Queries int }
	if code != 0 || json.Unmarshal([]byte(cmpOut), &rep) != nil || rep.Queries != 15 {
		t.Errorf("compare (%d %s): %d queries, the scatter 15", code, stderr, rep.Queries)
	}
	for _, f := range []string{"pdf", "png"} {
		stdout, stderr, code = r2med(t, "", "report", "--results", out, "--format", f, "--out", filepath.Join(dir, f))
		if code != 0 || strings.Count(stdout, "."+f) != 3 {
			t.Errorf("report --format %s (%d): %s%s", f, code, stdout, stderr)
		}
	}
	figs := filepath.Join(dir, "figs")
	stdout, stderr, code = r2med(t, "", "report", "--results", out, "--format", "svg", "--out", figs)
	if code != 0 || strings.Count(stdout, ".svg") != 3 {
		t.Fatalf("report --format svg (%d): %s%s", code, stdout, stderr)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--out", page, "--format", "gif"}, `unknown --format "gif"`},
		{[]string{"--out", page, "--systems", "nosuch"}, `no system "nosuch"`},
		{[]string{"--out", page, "--metric", "bleu"}, "unknown leaderboard metric"},
		{nil, "--out is required"},
	} {
		_, stderr, code := r2med(t, "", append([]string{"report", "--results", out}, c.args...)...)
		if code == 0 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: code %d, %q; want %q", c.args, code, stderr, c.want)
		}
	}
	if _, stderr, code := r2med(t, "", "report", "--results", filepath.Join(dir, "none"), "--out", page); code == 0 || !strings.Contains(stderr, "--results") {
		t.Errorf("a missing --results directory: %d %q", code, stderr)
	}
}
