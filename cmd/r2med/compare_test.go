package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/r2med/r2med/internal/latextest"
	"github.com/r2med/r2med/significance"
)

func TestCompareCLI(t *testing.T) {
	dir := t.TempDir()
	for name, extra := range map[string][]string{"a": nil, "b": {"--bm25", "robertson"}} {
		args := append([]string{"run", "--task", "demo", "--quiet", "--out", filepath.Join(dir, name, "demo")}, extra...)
		if _, stderr, code := r2med(t, "", args...); code != 0 {
			t.Fatalf("run: %s", stderr)
		}
	}
	a, b := filepath.Join(dir, "a", "demo"), filepath.Join(dir, "b", "demo")
	stdout, stderr, code := r2med(t, "", "compare", a, b, "--format", "json")
	if code != 0 {
		t.Fatalf("compare: %s", stderr)
	}
	var rep significance.Report
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatal(err)
	}
	// The demo task: 15 queries; robertson BM25 gains 2, loses 5, ties 8
	// (counted from r2med eval -q -m ndcg_cut.10 on the two run files).
	r := rep.Rows[0]
	if rep.Queries != 15 || r.Wins != 2 || r.Losses != 5 || r.Ties != 8 || !r.Exact || r.Permutations != 128 {
		t.Errorf("report %+v", r.Result)
	}
	if len(rep.Breakdowns) != 1 || rep.Breakdowns[0].By != "body_system" || rep.Breakdowns[0].Groups[0].Name != "Endocrine" {
		t.Errorf("breakdowns %+v", rep.Breakdowns)
	}
	// Bare run files with qrels give the same numbers.
	qrels := filepath.Join(dir, "qrels.txt")
	writeDemoQrels(t, qrels)
	out2, stderr, code := r2med(t, "", "compare", filepath.Join(a, "run.trec"), filepath.Join(b, "run.trec"), "--qrels", qrels, "--format", "json")
	var rep2 significance.Report
	if code != 0 || json.Unmarshal([]byte(out2), &rep2) != nil || rep2.Rows[0].Result != r.Result {
		t.Errorf("with --qrels (%d %s): %+v vs %+v", code, stderr, rep2.Rows, r.Result)
	}
	// Results directories: runs paired by task (one here: no breakdown by
	// task, which would repeat the whole).
	stdout, stderr, code = r2med(t, "", "compare", filepath.Join(dir, "a"), filepath.Join(dir, "b"))
	if code != 0 || !strings.Contains(stdout, "demo (15 q)") || !strings.Contains(stdout, "demo/q") || strings.Contains(stdout, "By task:") {
		t.Errorf("results dirs (%d):\n%s%s", code, stdout, stderr)
	}
	// Several metrics at once: one report each (a JSON array), and LaTeX.
	stdout, stderr, code = r2med(t, "", "compare", a, b, "--metric", "P.5,10", "--metric", "recip_rank", "--format", "json")
	var reps []significance.Report
	if code != 0 || json.Unmarshal([]byte(stdout), &reps) != nil || len(reps) != 3 || reps[0].Metric != "P.5" || reps[2].Metric != "recip_rank" {
		t.Errorf("several metrics (%d %s): %d reports", code, stderr, len(reps))
	}
	stdout, _, code = r2med(t, "", "compare", a, b, "--format", "latex")
	if code != 0 || !strings.Contains(stdout, `\toprule`) || !strings.Contains(stdout, "exact, all sign flips") {
		t.Errorf("latex (%d):\n%s", code, stdout)
	}
	latextest.CompilePage(t, []string{"booktabs", "graphicx"}, stdout)
	// ranx's table first: the systems by name, lettered, every pair
	// tested; then each against the baseline, rows by name too; no cost
	// section for BM25 runs that called no model.
	t.Setenv("COLUMNS", "250")
	stdout, stderr, code = r2med(t, "", "compare", a, b, "--metric", "ndcg@10", "--metric", "recall@100", "--test", "t")
	if code != 0 || !strings.HasPrefix(stdout, "All pairs: nDCG@10, Recall@100 of 2 systems") || !strings.Contains(stdout, "\na  bm25   ") ||
		!strings.Contains(stdout, "\nb  bm25-robertson") || !strings.Contains(stdout, "two-sided paired t-test, Holm–Bonferroni over the 1 pair of each column") ||
		!strings.Contains(stdout, "\n  bm25-robertson ") || strings.Contains(stdout, a) || strings.Contains(stdout, "Cost per query") {
		t.Errorf("all pairs (%d, %s):\n%s", code, stderr, stdout)
	}
	if _, stderr, code := r2med(t, "", "compare", a, b, "--test", "anova"); code != 2 || !strings.Contains(stderr, "tukey") {
		t.Errorf("--test anova: exit %d, %s", code, stderr)
	}
	if _, _, code := r2med(t, "", "compare", a, b, "--metric", "mrr@10"); code != 2 {
		t.Errorf("an unknown measure exits %d, want 2", code)
	}
	for _, args := range [][]string{
		{"compare", a},
		{"compare", a, filepath.Join(dir, "missing")},
		{"compare", a, b, "--metric", "mrr@10"},
		{"compare", a, b, "--format", "html"},
		{"compare", a, b, "--level", "2"},
		{"compare", filepath.Join(a, "run.trec"), filepath.Join(b, "run.trec")},
	} {
		if _, stderr, code := r2med(t, "", args...); code == 0 || stderr == "" {
			t.Errorf("%v: exit %d, stderr %q; want an error", args, code, stderr)
		}
	}
}

// TestCompareVerifiesRunFile: a run directory's run.trec that is no
// longer the file its manifest vouches for (a copy cut short at a line
// boundary, an edit) is refused naming it, as r2med run refuses to reuse
// it, where compare evaluated the cut file as the run. The file given
// by its own path is compared as it is.
func TestCompareVerifiesRunFile(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a", "demo"), filepath.Join(dir, "b", "demo")
	for _, out := range []string{a, b} {
		if _, stderr, code := r2med(t, "", "run", "--task", "demo", "--quiet", "--out", out); code != 0 {
			t.Fatalf("run: %s", stderr)
		}
	}
	runB := filepath.Join(b, "run.trec")
	data, err := os.ReadFile(runB)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	if err := os.WriteFile(runB, []byte(strings.Join(lines[:len(lines)/2], "")), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{a, b}, {filepath.Join(dir, "a"), filepath.Join(dir, "b")}} {
		_, stderr, code := r2med(t, "", append([]string{"compare"}, args...)...)
		if code != 1 || !strings.Contains(stderr, runB+" changed since the run wrote it") || !strings.Contains(stderr, "run it again") {
			t.Errorf("compare %v: exit %d, stderr %q; want the changed run.trec named", args, code, stderr)
		}
	}
	qrels := filepath.Join(dir, "qrels.txt")
	writeDemoQrels(t, qrels)
	if _, stderr, code := r2med(t, "", "compare", filepath.Join(a, "run.trec"), runB, "--qrels", qrels); code != 0 {
		t.Errorf("the cut file by its own path: exit %d, %s", code, stderr)
	}
}

// Two runs of one system name with other settings: compare, as the
// leaderboard, labels them by the name and a hash, and says what each
// hash stands for (the settings that differ), in text and JSON.
func TestCompareSaysWhatSetsTwinsApart(t *testing.T) {
	dir := t.TempDir()
	for name, extra := range map[string][]string{"deep": nil, "shallow": {"--top-k", "10"}} {
		args := append([]string{"run", "--task", "demo", "--quiet", "--out", filepath.Join(dir, name)}, extra...)
		if _, stderr, code := r2med(t, "", args...); code != 0 {
			t.Fatalf("run: %s", stderr)
		}
	}
	deep, shallow := filepath.Join(dir, "deep"), filepath.Join(dir, "shallow")
	stdout, stderr, code := r2med(t, "", "compare", deep, shallow, "--format", "json")
	var rep significance.Report
	if code != 0 || json.Unmarshal([]byte(stdout), &rep) != nil {
		t.Fatalf("compare (%d): %s%s", code, stdout, stderr)
	}
	if len(rep.Apart) != 2 || rep.Apart[rep.Baseline] != "top_k=100" || rep.Apart[rep.Rows[0].System] != "top_k=10" ||
		!strings.HasPrefix(rep.Baseline, "bm25 #") || !strings.HasPrefix(rep.Rows[0].System, "bm25 #") {
		t.Fatalf("baseline %q, system %q, apart %q", rep.Baseline, rep.Rows[0].System, rep.Apart)
	}
	text, _, _ := r2med(t, "", "compare", deep, shallow)
	flat := strings.Join(strings.Fields(text), " ")
	want := rep.Baseline + ": top_k=100; " + rep.Rows[0].System + ": top_k=10"
	if rep.Rows[0].System < rep.Baseline {
		want = rep.Rows[0].System + ": top_k=10; " + rep.Baseline + ": top_k=100"
	}
	if !strings.Contains(flat, "told apart by a hash of their settings; "+want) {
		t.Errorf("compare does not say what the hashes stand for (%q):\n%s", want, text)
	}
	board, _, _ := r2med(t, "", "leaderboard", "--results", dir, "--no-published", "--no-external")
	if !strings.Contains(strings.Join(strings.Fields(board), " "), rep.Baseline+": top_k=100") {
		t.Errorf("the leaderboard does not say what %s stands for:\n%s", rep.Baseline, board)
	}
	// results lists the runs under the same names, and says the same.
	list, _, _ := r2med(t, "", "results", "--results", dir)
	if !strings.Contains(list, "demo  "+rep.Baseline+" ") || !strings.Contains(list, "demo  "+rep.Rows[0].System+" ") || !strings.Contains(list, want) {
		t.Errorf("results does not name the runs %s and %s as the leaderboard does:\n%s", rep.Baseline, rep.Rows[0].System, list)
	}
	// In Markdown the note is a list item after the table, not a row.
	md, _, _ := r2med(t, "", "results", "--results", dir, "--format", "markdown")
	if !strings.Contains(md, "|\n\n- ") || !strings.Contains(md, "\n- "+want+"\n") {
		t.Errorf("results --format markdown: the note is not a list after a blank line:\n%s", md)
	}
}

// TestCompareRefusesZeroSettings: --permutations 0, --bootstrap 0 and
// --level 0 were taken for "the default" (10,000 flips, 10,000
// resamples, 95%) by significance.Options' zero values, so the report
// said 95% where the user asked for something else; each is refused,
// naming the flag, before any run is read.
func TestCompareRefusesZeroSettings(t *testing.T) {
	for _, c := range []struct{ flag, value, want string }{
		{"--permutations", "0", "--permutations 0: give how many random sign flips to draw, 1 or more (such as 10000)"},
		{"--permutations", "-5", "--permutations -5: give how many random sign flips to draw, 1 or more (such as 10000)"},
		{"--bootstrap", "0", "--bootstrap 0: give how many bootstrap resamples to draw, 1 or more (such as 10000)"},
		{"--level", "0", "--level 0: give a confidence level between 0 and 1, such as 0.95"},
		{"--level", "95", "--level 95: give a confidence level between 0 and 1, such as 0.95"},
	} {
		_, stderr, code := r2med(t, "", "compare", "a.trec", "b.trec", "--qrels", "q.txt", c.flag, c.value)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%s %s: exit %d, stderr %q; want %q", c.flag, c.value, code, stderr, c.want)
		}
	}
}

// TestCompareSummaryMeasures: runid, num_q, gm_map and gm_bpref are a
// whole run's (trec_eval prints them in its summary alone) and relstring
// a text: compare, which tests per-query values, refuses them by name, and
// from trec_eval's official and all_trec sets compares the rest and says
// what it left out. iprec_at_recall reads as trec_eval prints it.
func TestCompareSummaryMeasures(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	mustRun(t, "run", "--task", "demo", "--quiet", "--out", a)
	mustRun(t, "run", "--task", "demo", "--quiet", "--top-k", "10", "--out", b)
	for m, want := range map[string]string{
		"runid": "a summary of the whole run", "num_q": "a summary of the whole run", "gm_map": "a summary of the whole run",
		"gm_bpref": "a summary of the whole run", "relstring": "a text of grades", "relstring.5": "a text of grades",
	} {
		_, stderr, code := r2med(t, "", "compare", a, b, "--metric", m)
		if code != 2 || !strings.Contains(stderr, "--metric "+m+": "+want) {
			t.Errorf("--metric %s: exit %d, %s", m, code, stderr)
		}
	}
	out, stderr, code := r2med(t, "", "compare", a, b, "--metric", "all_trec")
	if code != 0 || !strings.Contains(stderr, "leaves out runid, num_q, gm_map, gm_bpref (a summary of the whole run), relstring (a text of grades, not a number)") ||
		strings.Contains(out, "gm_bpref") || !strings.Contains(out, "set_F") || !strings.Contains(out, "Rprec_mult_0.20") {
		t.Errorf("--metric all_trec: exit %d\n%s\n%s", code, out, stderr)
	}
	out, stderr, code = r2med(t, "", "compare", a, b, "--metric", "official")
	if code != 0 || !strings.Contains(stderr, "leaves out runid, num_q, gm_map") || strings.Contains(out, "num_q") || !strings.Contains(out, "iprec_at_recall_0.10") {
		t.Errorf("--metric official: exit %d\n%s\n%s", code, out, stderr)
	}
}
