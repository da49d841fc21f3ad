package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestCompletion: the shell completes flag values, not only flag names:
// tasks (with their suites), BM25 schemes, metrics, measures by profile,
// formats by command, registry models, rerankers, and system IDs from the
// results directory; lists complete item by item.
func TestCompletion(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	mustRun(t, "run", "--task", "demo", "--quiet", "--out", filepath.Join(out, "demo"))
	for _, c := range []struct {
		args      []string
		want, not []string
	}{
		{[]string{"run", "--task", ""}, []string{"demo\t", "Biology\tQ&A reference retrieval; --suite nano: NanoR2MEDBiology", "IIYi-Clinical\t", "all\t"}, nil},
		{[]string{"run", "--task", "Biology,Med"}, []string{"Biology,MedQA-Diag\t", "Biology,Medical-Sciences\t"}, []string{"Biology,IIYi"}},
		{[]string{"run", "--suite", ""}, []string{"r2med\t", "nano\t"}, nil},
		{[]string{"run", "--bm25", ""}, []string{"r2med", "lucene", "robertson"}, nil},
		{[]string{"run", "--retriever", ""}, []string{"bm25\t", "dense\t", "run:PATH\t"}, nil},
		{[]string{"run", "--model", "b"}, []string{"bge\t"}, []string{"nv\t"}},
		{[]string{"run", "--rerank", ""}, []string{"insertrank", "tei"}, nil},
		{[]string{"leaderboard", "--metric", "ndcg"}, []string{"ndcg@10"}, []string{"recall@100"}},
		{[]string{"leaderboard", "--format", ""}, []string{"latex", "csv"}, []string{"html"}},
		{[]string{"report", "--format", ""}, []string{"html", "pdf"}, []string{"latex"}},
		{[]string{"leaderboard", "--kind", ""}, []string{"fusion"}, nil},
		{[]string{"leaderboard", "--results", out, "--baseline", ""}, []string{"ours/bm25\t"}, []string{"base/nv"}},
		{[]string{"leaderboard", "--results", out, "--systems", "ours/bm25,n"}, []string{"ours/bm25,nv\t"}, nil},
		{[]string{"eval", "-m", ""}, []string{"ndcg_cut.10"}, []string{"mrr@10"}},
		{[]string{"eval", "--profile", "hakari", "-m", ""}, []string{"mrr@10"}, []string{"ndcg_cut.10"}},
		{[]string{"model", "show", ""}, []string{"nv\t", "bge\t"}, nil},
		{[]string{"pull", ""}, []string{"MedQA-Diag\t"}, nil},
	} {
		stdout, stderr, code := r2med(t, "", append([]string{"__complete"}, c.args...)...)
		if code != 0 {
			t.Errorf("%v: exit %d: %s", c.args, code, stderr)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(stdout, w) {
				t.Errorf("%v: no %q in\n%s", c.args, w, stdout)
			}
		}
		for _, n := range c.not {
			if strings.Contains(stdout, n) {
				t.Errorf("%v: %q offered:\n%s", c.args, n, stdout)
			}
		}
	}
}
