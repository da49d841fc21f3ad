package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/r2med/r2med/internal/latextest"
	"github.com/r2med/r2med/leaderboard"
	"github.com/r2med/r2med/measure"
	"github.com/r2med/r2med/results"
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
	if code != 0 || !strings.Contains(stdout, "| 1 | nv | **27.15** |") || !strings.Contains(stdout, "| 15.13 |") {
		t.Fatalf("leaderboard (%d):\n%s%s", code, stdout, stderr)
	}
	// Our demo run is on the board, first, with its demo score in a
	// column after the average; external results are there by default.
	stdout, stderr, code = r2med(t, "", "leaderboard", "--results", out)
	lines := strings.Split(stdout, "\n")
	if code != 0 || !strings.Contains(lines[1], "demo") || !strings.Contains(lines[2], "bm25") || !strings.Contains(lines[2], "ours") || !strings.Contains(lines[2], "63.81") ||
		!strings.Contains(stdout, "ReasonEmbed-Qwen3-8B") || !strings.Contains(stdout, "ext = figures printed by later papers") {
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

// TestLeaderboardFitsTerminalAndPage: COLUMNS=120 r2med leaderboard
// keeps to 120 columns (the board is 180 wide), and --top 10 --format
// latex compiles on a plain article page without an overfull box.
func TestLeaderboardFitsTerminalAndPage(t *testing.T) {
	out := t.TempDir()
	if _, errOut, code := r2med(t, "", "run", "--task", "demo", "--quiet", "--out", filepath.Join(out, "demo")); code != 0 {
		t.Fatalf("run: %s", errOut)
	}
	t.Setenv("COLUMNS", "120")
	stdout, stderr, code := r2med(t, "", "leaderboard", "--results", out)
	if code != 0 {
		t.Fatalf("leaderboard (%d): %s", code, stderr)
	}
	for i, l := range strings.Split(stdout, "\n") {
		if n := utf8.RuneCountInString(l); n > 120 {
			t.Errorf("line %d is %d columns wide:\n%s", i+1, n, l)
		}
	}
	if !strings.Contains(stdout, "InsertRank (DeepSeek-R1 listwise") || !strings.Contains(stdout, "reranker given BM25 scores)") {
		t.Errorf("a long name was cut rather than wrapped:\n%s", stdout)
	}
	stdout, stderr, code = r2med(t, "", "leaderboard", "--results", out, "--top", "10", "--format", "latex")
	if code != 0 {
		t.Fatalf("latex (%d): %s", code, stderr)
	}
	latextest.CompilePage(t, leaderboard.LaTeXPackages(11), stdout)
	stdout, _, code = r2med(t, "", "leaderboard", "--results", out, "--systems", "bm25,nv", "--tasks", "Biology,IIYi", "--no-pin", "--format", "csv")
	if lines := strings.Split(strings.TrimSpace(stdout), "\n"); code != 0 || len(lines) != 4 || !strings.HasPrefix(lines[0], "rank,system,id,kind,source,Biology,IIYi-Clinical,avg,") {
		t.Errorf("--systems --tasks (%d):\n%s", code, stdout)
	}
}

// TestFusedRunFromFileOnBoard fuses BM25 with a run file on the demo
// task: the manifest records the built-in task as the data (not the run
// file's neighbourhood), and the parts by name; the leaderboard lists
// the run as kind fusion, named by method and parts, the run file by the
// tag its lines carry (the system that made it, bm25-robertson), not by
// the file's name; compare reloads its data and tests it against BM25.
func TestFusedRunFromFileOnBoard(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "results")
	t.Setenv("R2MED_RESULTS", root)
	mustRun(t, "run", "--task", "demo", "--quiet", "--bm25", "robertson", "--out", filepath.Join(dir, "robertson"))
	file := filepath.Join(dir, "runs", "robertson.trec")
	os.MkdirAll(filepath.Dir(file), 0o755)
	os.WriteFile(file, []byte(readFileString(t, filepath.Join(dir, "robertson", "run.trec"))), 0o644)
	mustRun(t, "run", "--task", "demo", "--quiet")
	stdout := mustRun(t, "run", "--task", "demo", "--quiet", "--retriever", "bm25,run:"+file, "--fuse", "rrf")
	name := "rrf(bm25,run:bm25-robertson)"
	if !strings.Contains(stdout, name) {
		t.Fatalf("run names the system otherwise:\n%s", stdout)
	}
	fused := filepath.Join(root, "rrf_bm25_run_bm25-robertson", "demo") // results.DirName(name)
	m := readManifest(t, fused)
	if m.Task.Source != "embedded:demo" || m.Task.SourceGiven != "" {
		t.Errorf("task %+v: the data is the built-in demo task", m.Task)
	}
	f, _ := m.Config["fusion"].(map[string]any)
	if parts, _ := f["retrievers"].([]any); len(parts) != 2 || parts[0] != "bm25" || parts[1] != "run:bm25-robertson" {
		t.Errorf("fusion %v", f)
	}

	var board struct {
		Rows []struct{ Name, Kind, Source string }
	}
	out := mustRun(t, "leaderboard", "--format", "json", "--no-published", "--no-external")
	if err := json.Unmarshal([]byte(out), &board); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range board.Rows {
		if strings.Contains(r.Name, dir) || strings.Contains(r.Name, "/") {
			t.Errorf("row %q names a path", r.Name)
		}
		if r.Name == name {
			found = true
			if r.Kind != "fusion" || r.Source != "ours" {
				t.Errorf("%s: kind %s, source %s", name, r.Kind, r.Source)
			}
		}
	}
	if !found {
		t.Errorf("%s is not on the board:\n%s", name, out)
	}
	// The body_system breakdown needs the task's queries, reloaded from
	// what the manifests say.
	stdout = mustRun(t, "compare", filepath.Join(root, "bm25", "demo"), fused)
	if !strings.Contains(stdout, "on 15 queries") || !strings.Contains(stdout, "By body_system:") {
		t.Errorf("compare:\n%s", stdout)
	}
}

// writeTiedRuns writes two systems of ours (bm25 at k1 0.9 and 1.2) on
// R2MED's eight tasks whose values differ unrounded and print alike:
// Biology 0.12346 and 0.12354 (12.35 both), 0.5 elsewhere, averages
// 45.29325 and 45.29425 (45.29 both). It returns the results directory.
func writeTiedRuns(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	for i, bio := range []float64{0.12346, 0.12354} {
		k1 := []float64{0.9, 1.2}[i]
		for _, task := range leaderboard.TaskNames("") {
			v := 0.5
			if task == "Biology" {
				v = bio
			}
			dir := filepath.Join(root, fmt.Sprintf("bm25-%v", k1), task)
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			res := &results.R2MED{DatasetName: task, ModelName: "bm25", MeanOver: measure.MeanOverJudged, Test: map[string]float64{"ndcg_at_10": v}}
			if err := res.WriteFile(filepath.Join(dir, results.ResultsFile)); err != nil {
				t.Fatal(err)
			}
			m := results.NewManifest(nil)
			m.Task = results.TaskInfo{Name: task}
			m.Config = map[string]any{"retriever": "bm25", "k1": k1, "fingerprint": fmt.Sprint(k1, task)}
			if err := m.WriteFile(filepath.Join(dir, results.ManifestFile)); err != nil {
				t.Fatal(err)
			}
		}
	}
	return root
}

// TestLeaderboardBestAsPrinted: two values that print alike (12.35 and
// 12.35, averages 45.29 and 45.29) are both marked best in every format
// that marks one (the terminal's *, Markdown's and LaTeX's bold, the
// report's bold), where only the higher unrounded one was, so that a
// reader saw one 12.35 marked best and the other not.
func TestLeaderboardBestAsPrinted(t *testing.T) {
	root := writeTiedRuns(t)
	count := func(format, want string) int {
		out := mustRun(t, "leaderboard", "--results", root, "--no-published", "--no-external", "--format", format)
		return strings.Count(out, want)
	}
	for _, c := range []struct{ format, bio, avg string }{
		{"table", "12.35*", "45.29*"},
		{"markdown", "**12.35**", "**45.29**"},
		{"latex", `\textbf{12.35}`, `\textbf{45.29}`},
	} {
		if n, m := count(c.format, c.bio), count(c.format, c.avg); n != 2 || m != 2 {
			t.Errorf("--format %s: %d of the two 12.35 and %d of the two 45.29 marked best, want both", c.format, n, m)
		}
	}
	page := filepath.Join(t.TempDir(), "report.html")
	mustRun(t, "report", "--results", root, "--out", page)
	html := readFileString(t, page)
	if n, m := strings.Count(html, `best" data-v="12.3`), strings.Count(html, `best avg" data-v="45.29"`); n != 2 || m != 2 {
		t.Errorf("report: %d of the two 12.35 and %d of the two 45.29 bold, want both", n, m)
	}
}

// TestLeaderboardRankNote: rows that print the same average and hold
// different ranks (ranked, as R2MED ranks, by the unrounded average) get
// a note giving the unrounded averages, in every format with a legend:
// R2MED's own 36.82 at ranks 12 and 13, and two runs of ours at 45.29.
func TestLeaderboardRankNote(t *testing.T) {
	out := mustRun(t, "leaderboard", "--results", t.TempDir(), "--no-external", "--format", "markdown")
	if !strings.Contains(out, "| 12 | hyde/llama-70b → nv | 31.21 |") || !strings.Contains(out, "| 13 | hyde/qwq-32b → nv | 32.26 |") ||
		!strings.Contains(out, "36.82 is 36.8231 for hyde/llama-70b → nv (#12), 36.8195 for hyde/qwq-32b → nv (#13)") {
		t.Errorf("R2MED's board does not say why two 36.82 rank 12 and 13:\n%s", out)
	}
	root := writeTiedRuns(t)
	for _, format := range []string{"table", "markdown", "latex"} {
		out := mustRun(t, "leaderboard", "--results", root, "--no-published", "--no-external", "--format", format)
		hash := "#"
		if format == "latex" {
			hash = `\#`
		}
		if !strings.Contains(out, "45.29 is 45.2943 for bm25 "+hash) || !strings.Contains(out, "("+hash+"1), 45.2933 for bm25 "+hash) {
			t.Errorf("--format %s does not say why two 45.29 rank 1 and 2:\n%s", format, out)
		}
	}
	page := filepath.Join(t.TempDir(), "report.html")
	mustRun(t, "report", "--results", root, "--out", page)
	if html := readFileString(t, page); !strings.Contains(html, "45.29 is 45.2943 for bm25 #") {
		t.Error("the report does not say why two 45.29 rank 1 and 2")
	}
}

// TestUnansweredQueriesSaid: a run that left judged queries without a
// result (they count 0 in its means, as R2MED's files count them) says
// so wherever its numbers are read: r2med results (a line under the
// table; queries and queries_without_results in csv and json), the
// leaderboard's notes in every format, and the report. Before, only
// r2med run said it.
func TestUnansweredQueriesSaid(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "out")
	mustRun(t, "run", "--task", "demo", "--quiet", "--out", filepath.Join(root, "bm25"))
	// The run without its first three queries, as a run file.
	var kept []string
	skip := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSpace(readFileString(t, filepath.Join(root, "bm25", "run.trec"))), "\n") {
		q := strings.Fields(l)[0]
		if len(skip) < 3 && !skip[q] {
			skip[q] = true
		}
		if !skip[q] {
			kept = append(kept, l)
		}
	}
	file := filepath.Join(dir, "partial.trec")
	if err := os.WriteFile(file, []byte(strings.Join(kept, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mustRun(t, "run", "--task", "demo", "--quiet", "--retriever", "run:"+file, "--out", filepath.Join(root, "partial"))
	const note = "run:bm25 on demo: 3 of 15 judged queries got no results and count 0 in the means"
	if out := mustRun(t, "results", "--results", root); !strings.Contains(out, note) || strings.Count(out, "got no results") != 1 {
		t.Errorf("results does not say which run left queries unanswered:\n%s", out)
	}
	if out := mustRun(t, "results", "--results", root, "--format", "csv"); !strings.Contains(strings.Split(out, "\n")[0], ",queries,queries_without_results,dir") ||
		!strings.Contains(out, ",15,3,"+filepath.Join(root, "partial")+"\n") || !strings.Contains(out, ",15,0,"+filepath.Join(root, "bm25")+"\n") {
		t.Errorf("results --format csv lacks the counts:\n%s", out)
	}
	var listing struct {
		Runs []struct {
			System         string
			Queries        int `json:"queries"`
			WithoutResults int `json:"queries_without_results"`
		}
	}
	if err := json.Unmarshal([]byte(mustRun(t, "results", "--results", root, "--format", "json")), &listing); err != nil {
		t.Fatal(err)
	}
	for _, r := range listing.Runs {
		if want := map[string]int{"bm25": 0, "run:bm25": 3}[r.System]; r.Queries != 15 || r.WithoutResults != want {
			t.Errorf("results json: %s has %d queries, %d without results; want 15, %d", r.System, r.Queries, r.WithoutResults, want)
		}
	}
	for _, format := range []string{"table", "markdown", "latex"} {
		if out := mustRun(t, "leaderboard", "--results", root, "--no-published", "--no-external", "--format", format); !strings.Contains(out, note) {
			t.Errorf("leaderboard --format %s does not say it:\n%s", format, out)
		}
	}
	if out := mustRun(t, "leaderboard", "--results", root, "--no-published", "--no-external", "--format", "csv"); !strings.HasSuffix(strings.Split(out, "\n")[0], ",queries_without_results") || !strings.Contains(out, ",demo=3\n") {
		t.Errorf("leaderboard --format csv lacks the count:\n%s", out)
	}
	if out := mustRun(t, "leaderboard", "--results", root, "--no-published", "--no-external", "--format", "json"); !strings.Contains(out, "\"queries_without_results\": {\n        \"demo\": 3") {
		t.Errorf("leaderboard --format json lacks the count:\n%s", out)
	}
	page := filepath.Join(dir, "report.html")
	mustRun(t, "report", "--results", root, "--out", page)
	if !strings.Contains(readFileString(t, page), note) {
		t.Error("the report does not say it")
	}
}

// TestShallowRunSaid: a run kept 10 deep (r2med run --top-k 10) has a
// Recall@100 that counts its 10 documents, as trec_eval measures the
// file; r2med run said so, and now r2med results, the leaderboard at
// recall@100 (in every format) and the report say it too. R2MED's three
// reranker rows rank their retriever's top 10 alone (in all 24 files
// their Recall@100 is their Recall@10), which the board at recall@100
// says; at nDCG@10 there is nothing to say.
func TestShallowRunSaid(t *testing.T) {
	root := filepath.Join(t.TempDir(), "out")
	mustRun(t, "run", "--task", "demo", "--quiet", "--top-k", "10", "--out", filepath.Join(root, "top10"))
	const note = "bm25 on demo ranks at most 10 documents per query: its Recall@100 counts those, as trec_eval measures the file"
	unwrapped := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	if out := mustRun(t, "results", "--results", root); !strings.Contains(unwrapped(out), note) {
		t.Errorf("results does not say the run is 10 deep:\n%s", out)
	}
	if out := mustRun(t, "results", "--results", root, "--format", "json"); !strings.Contains(out, `"shallow_depth": 10`) {
		t.Errorf("results json lacks the depth:\n%s", out)
	}
	for _, format := range []string{"table", "markdown", "latex"} {
		out := mustRun(t, "leaderboard", "--results", root, "--no-external", "--metric", "recall@100", "--format", format)
		out = strings.ReplaceAll(unwrapped(out), `\_`, "_")
		if !strings.Contains(out, note) || strings.Count(out, "(R2MED's reranker files: its retriever's top 10 reranked) ranks at most 10 documents per query: its Recall@100 counts those") != 3 {
			t.Errorf("leaderboard --metric recall@100 --format %s does not say which rows rank 10 documents:\n%s", format, out)
		}
	}
	if out := mustRun(t, "leaderboard", "--results", root, "--no-external", "--metric", "recall@100", "--format", "csv"); !strings.Contains(out, ",demo=10\n") || strings.Count(out, ",Biology=10 Bioinformatics=10 Medical-Sciences=10") != 3 {
		t.Errorf("leaderboard --format csv lacks the depths:\n%s", out)
	}
	if out := mustRun(t, "leaderboard", "--results", root, "--no-external", "--metric", "recall@100", "--format", "json"); strings.Count(out, "\"shallow_depths\"") != 4 {
		t.Errorf("leaderboard --format json lacks the depths of 4 rows:\n%s", out)
	}
	if out := mustRun(t, "leaderboard", "--results", root, "--no-external"); strings.Contains(out, "ranks at most") {
		t.Errorf("the nDCG@10 board speaks of depths:\n%s", out)
	}
	page := filepath.Join(t.TempDir(), "report.html")
	mustRun(t, "report", "--results", root, "--metric", "recall@100", "--out", page)
	if !strings.Contains(readFileString(t, page), note) {
		t.Error("the report at recall@100 does not say the run is 10 deep")
	}
}

// TestValuesAsPrinted: InsertRank's abstract prints its average as 51.1,
// R2MED's website o3-mini + BM25's IIYi-Clinical as 7.8; every format
// shows 51.1 and 7.8, where they showed 51.10 and 7.80, a hundredths
// digit the source never printed (the note under the table says a digit
// may be lost).
func TestValuesAsPrinted(t *testing.T) {
	empty := t.TempDir()
	for _, c := range []struct{ format, avg, cell string }{
		{"table", "51.1 (printed)", " 7.8  41.00"},
		{"markdown", "**51.1 (printed)**", "| 7.8 | 41.00 (printed 41.01) |"},
		{"csv", ",51.1,0,51.1,", ",7.8,41.00,8,41.01,"},
		{"latex", `\textbf{51.1}$^{p}$`, ` & 7.8 & 41.00$^{p}$`},
	} {
		out := mustRun(t, "leaderboard", "--results", empty, "--no-published", "--format", c.format)
		if !strings.Contains(out, c.avg) || !strings.Contains(out, c.cell) || strings.Contains(out, "51.10") || strings.Contains(out, "7.80") {
			t.Errorf("--format %s: want %q and %q, no 51.10 or 7.80:\n%s", c.format, c.avg, c.cell, out)
		}
	}
	page := filepath.Join(t.TempDir(), "report.html")
	mustRun(t, "report", "--results", empty, "--external", "--out", page)
	html := readFileString(t, page)
	if !strings.Contains(html, `data-v="51.1" title="average printed by the paper; no per-task values">51.1<`) || !strings.Contains(html, `data-v="7.8">7.8<`) || strings.Contains(html, "51.10") || strings.Contains(html, ">7.80<") {
		t.Error("the report does not show InsertRank's 51.1 and o3-mini + BM25's 7.8 as printed")
	}
}
