package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestOneVocabulary: every command that takes a measure reads every
// documented spelling of it as the same measure (the trec profile's,
// unless eval's --profile says hakari), and a name none has exits 2.
func TestOneVocabulary(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	for name, extra := range map[string][]string{"a": nil, "b": {"--bm25", "robertson"}} {
		args := append([]string{"run", "--task", "demo", "--quiet", "--out", filepath.Join(out, name, "demo")}, extra...)
		if _, stderr, code := r2med(t, "", args...); code != 0 {
			t.Fatalf("run: %s", stderr)
		}
	}
	qrels := filepath.Join(dir, "qrels.txt")
	writeDemoQrels(t, qrels)
	run := filepath.Join(out, "a", "demo", "run.trec")
	spellings := []string{"ndcg@10", "ndcg_cut.10", "ndcg_cut_10", "NDCG@10", "ndcg_at_10"}

	want := mustRun(t, "eval", "-m", "ndcg_cut.10", qrels, run)
	if !strings.HasPrefix(want, "ndcg_cut_10") {
		t.Fatalf("eval -m ndcg_cut.10:\n%s", want)
	}
	for _, m := range spellings {
		if got := mustRun(t, "eval", "-m", m, qrels, run); got != want {
			t.Errorf("eval -m %s:\n%s\nwant (ndcg_cut.10)\n%s", m, got, want)
		}
		if got := mustRun(t, "leaderboard", "--results", out, "--metric", m, "--no-published", "--no-external", "--format", "csv"); !strings.Contains(got, ",63.81,") {
			t.Errorf("leaderboard --metric %s:\n%s", m, got)
		}
		if got := mustRun(t, "compare", filepath.Join(out, "a", "demo"), filepath.Join(out, "b", "demo"), "--metric", m, "--format", "json"); !strings.Contains(got, `"metric": "ndcg_cut.10"`) {
			t.Errorf("compare --metric %s:\n%.300s", m, got)
		}
	}
	// The profile is a flag: under hakari the same spelling is HAKARI's.
	if got := mustRun(t, "eval", "--profile", "hakari", "-m", "ndcg@10", qrels, run); !strings.HasPrefix(got, "ndcg@10") {
		t.Errorf("eval --profile hakari -m ndcg@10:\n%s", got)
	}
	for _, args := range [][]string{
		{"eval", "--profile", "hakari", "-m", "ndcg_cut.10", qrels, run},
		{"eval", "--profile", "nope", qrels, run},
		{"eval", "-m", "ndcg@x", qrels, run},
		{"leaderboard", "--results", out, "--metric", "ndcg@11"},
		{"compare", run, run, "--qrels", qrels, "--metric", "bogus"},
		{"report", "--results", out, "--metric", "bogus", "--out", filepath.Join(dir, "r.html")},
		{"serve", "--results", out, "--bogus-flag"},
	} {
		if _, stderr, code := r2med(t, "", args...); code != 2 || stderr == "" {
			t.Errorf("%v: exit %d (%s), want 2", args, code, stderr)
		}
	}
}

// TestUsageErrorsAndSuggestions: a misspelt task, flag, command or
// system exits 2 and names what was meant; a system the board left out
// names the flag that brings it in.
func TestUsageErrorsAndSuggestions(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	mustRun(t, "run", "--task", "demo", "--quiet", "--out", filepath.Join(out, "demo"))
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--task", "dmeo", "--out", filepath.Join(dir, "x")}, `unknown R2MED task "dmeo" (did you mean "demo"?)`},
		{[]string{"stats", "--task", "Biolgy"}, `(did you mean "Biology"?)`},
		{[]string{"model", "show", "nv", "--task", "MedQA-Dag"}, `(did you mean "MedQA-Diag"?)`},
		{[]string{"leaderboard", "--resuls", out}, "unknown flag: --resuls (did you mean --results?)"},
		// A subcommand's help is named by its whole path.
		{[]string{"index", "build", "--bogus"}, "r2med index build --help lists the flags"},
		{[]string{"audit", "dataset", "--quiet"}, "r2med audit dataset --help lists the flags"},
		{[]string{"runn"}, `unknown command "runn"`},
		{[]string{"index", "biuld"}, `unknown command "biuld" for "r2med index" (did you mean "build"?)`},
		{[]string{"results", "expotr"}, `unknown command "expotr" for "r2med results" (did you mean "export"?)`},
		{[]string{"results", out}, `to read the runs under ` + out + `: r2med results --results ` + out},
		{[]string{"cache", "lst"}, `unknown command "lst" for "r2med cache"`},
		{[]string{"eval", "one-file"}, "QRELS then RUN"},
		{[]string{"leaderboard", "--results", out, "--systems", "bm52"}, `unknown system "bm52" (did you mean "bm25"?)`},
		{[]string{"leaderboard", "--results", out, "--baseline", "bm52"}, `(did you mean "bm25"?)`},
		{[]string{"leaderboard", "--results", out, "--tasks", "Biolgy"}, `unknown task "Biolgy" (did you mean "Biology"?)`},
		{[]string{"leaderboard", "--results", out, "--no-published", "--systems", "nv"}, `"nv" is one of R2MED's published systems: drop --no-published`},
		{[]string{"report", "--results", out, "--systems", "nv", "--out", filepath.Join(dir, "r.html")}, `"nv" is one of R2MED's published systems: add --published`},
		{[]string{"report", "--results", out, "--systems", "ReasonEmbed-Qwen3-8B", "--out", filepath.Join(dir, "r.html")}, `a later paper's system: add --external`},
	} {
		_, stderr, code := r2med(t, "", c.args...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", c.args, code, stderr, c.want)
		}
		if strings.Contains(c.want, ": drop --") || strings.Contains(c.want, ": add --") {
			checkHintFlags(t, c.args[0], stderr)
		}
	}
	// A group of commands alone, or with help, shows its help.
	for _, args := range [][]string{{"index"}, {"index", "help"}, {"index", "--help"}} {
		stdout, stderr, code := r2med(t, "", args...)
		if code != 0 || !strings.Contains(stdout, "Available Commands:") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want its help", args, code, stdout, stderr)
		}
	}
}
