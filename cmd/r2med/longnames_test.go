package main

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/r2med/r2med/sysname"
)

// TestLongNamesFit runs systems with long names as GAR, fusion and
// reranking make them — BM25 fused with a run file and reranked to depth
// 20 by InsertRank and by ReasonRank asking one long-named model, and two
// runs of one long pipeline name with other settings (told apart by a
// hash) — and requires every text view to name them by the one rule
// (sysname: cut to 40 characters, the hash and the depth kept, no two
// alike): `COLUMNS=120 r2med leaderboard` keeps to 120 columns and says
// what "…" means, compare labels its rows so and gives the whole names
// in its JSON, the report's legends never read alike, and csv keeps the
// names whole.
func TestLongNamesFit(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "results")
	t.Setenv("R2MED_RESULTS", root)
	llm := rankingStub(t)
	mustRun(t, "run", "--task", "demo", "--quiet", "--bm25", "robertson", "--out", filepath.Join(dir, "robertson"))
	file := filepath.Join(dir, "runs", "robertson.trec")
	os.MkdirAll(filepath.Dir(file), 0o755)
	os.WriteFile(file, []byte(readFileString(t, filepath.Join(dir, "robertson", "run.trec"))), 0o644)
	const model = "deepseek-r1-distill-qwen-32b"
	pipelineName := "hyde/qwen2.5-72b-instruct → rrf(bm25,bge,e5-mistral-7b-instruct) → tei@100"
	runs := map[string][]string{
		"insertrank": {"--retriever", "bm25,run:" + file, "--rerank", "insertrank", "--rerank-model", model, "--rerank-url", llm, "--rerank-depth", "20", "--no-cache"},
		"reasonrank": {"--retriever", "bm25,run:" + file, "--rerank", "reasonrank", "--rerank-model", model, "--rerank-url", llm, "--rerank-depth", "20", "--no-cache"},
		"named-k09":  {"--name", pipelineName, "--k1", "0.9"},
		"named-k12":  {"--name", pipelineName, "--k1", "1.2"},
	}
	for _, out := range slices.Sorted(maps.Keys(runs)) {
		mustRun(t, append([]string{"run", "--task", "demo", "--quiet", "--out", filepath.Join(root, out, "demo")}, runs[out]...)...)
	}
	var board struct{ Rows []struct{ Name string } }
	if err := json.Unmarshal([]byte(mustRun(t, "leaderboard", "--format", "json", "--no-published", "--no-external")), &board); err != nil {
		t.Fatal(err)
	}
	var full []string
	for _, r := range board.Rows {
		full = append(full, r.Name)
	}
	shown := sysname.ShortAll(full, sysname.Width)
	for i, n := range full {
		if utf8.RuneCountInString(n) <= sysname.Width || shown[i] == n {
			t.Errorf("%q is not a long name", n)
		}
		if strings.Contains(n, "@20") && !strings.Contains(shown[i], "@20") || strings.Contains(n, " #") && !strings.HasSuffix(shown[i], n[strings.LastIndex(n, " #"):]) {
			t.Errorf("%q shown as %q: its depth or hash is lost", n, shown[i])
		}
	}

	t.Setenv("COLUMNS", "120")
	table := mustRun(t, "leaderboard")
	for _, l := range strings.Split(table, "\n") {
		if utf8.RuneCountInString(l) > 120 {
			t.Errorf("a line of %d columns: %q", utf8.RuneCountInString(l), l)
		}
	}
	flat := strings.Join(strings.Fields(table), " ")
	if !strings.Contains(flat, "…: a name over 40 characters cut in its middle") {
		t.Errorf("the table does not say what … means:\n%s", table)
	}
	for _, s := range shown {
		// A name wraps onto more lines; its start begins a row.
		if first := string([]rune(s)[:8]); !strings.Contains(table, " "+first) {
			t.Errorf("no row starts %q (%q):\n%s", first, s, table)
		}
	}
	csv := mustRun(t, "leaderboard", "--format", "csv", "--no-published", "--no-external")
	for _, n := range full {
		if !strings.Contains(csv, `"`+n+`"`) {
			t.Errorf("csv lacks the whole name %q", n)
		}
	}

	// compare labels its rows by the names the leaderboard shows.
	cmp := mustRun(t, "compare", filepath.Join(root, "insertrank", "demo"), filepath.Join(root, "reasonrank", "demo"))
	var a, b string
	for i, n := range full {
		switch {
		case strings.Contains(n, "insertrank"):
			a = shown[i]
		case strings.Contains(n, "reasonrank"):
			b = shown[i]
		}
	}
	if !strings.Contains(cmp, "a  "+a) || !strings.Contains(cmp, "b  "+b) || !strings.Contains(strings.Join(strings.Fields(cmp), " "), "…: names cut in the middle to fit;") {
		t.Errorf("compare's rows, want %q and %q:\n%s", a, b, cmp)
	}
	var reps []struct {
		FullNames map[string]string `json:"full_names"`
	}
	js := mustRun(t, "compare", "--format", "json", filepath.Join(root, "insertrank", "demo"), filepath.Join(root, "reasonrank", "demo"))
	if err := json.Unmarshal([]byte(js), &reps); err != nil {
		var one struct {
			FullNames map[string]string `json:"full_names"`
		}
		if err := json.Unmarshal([]byte(js), &one); err != nil {
			t.Fatal(err)
		}
		reps = append(reps, one)
	}
	if n := reps[0].FullNames[a]; !strings.Contains(n, "insertrank:"+model+"@20") {
		t.Errorf("compare's json: %q is %q", a, n)
	}

	// The report's legends: no two keys read alike, each whole on hover.
	page := filepath.Join(dir, "report.html")
	mustRun(t, "report", "--out", page)
	checkLegends(t, readFileString(t, page))
}
