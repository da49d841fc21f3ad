package main

import (
	"strings"
	"testing"
)

// TestReproduceOffline is what .ci/run does: every spec listed, the one on
// local data run and passed, per metric, within the spec's tolerance and
// naming the source of its expected values, the others skipped with what
// they need; exit 0.
func TestReproduceOffline(t *testing.T) {
	needShared(t)
	t.Setenv("HF_HOME", t.TempDir()) // an empty Hub cache
	stdout, stderr, code := r2med(t, "", "reproduce", "--offline", "--local-data", shared, "--out", t.TempDir(), "--quiet")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	// Columns are padded to the longest spec name: compare words.
	squeeze := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	flat := squeeze(stdout)
	for _, want := range []string{
		"spec                              task",
		"reference/nfcorpus-bm25           NFCorpus   ndcg_at_10       0.319     0.31898  -0.00002  ±0.0001  ✓",
		"mrr              0.5006    0.50061  +0.00001  ±0.0001  ✓",
		"reference/nfcorpus-bm25: expected from trec_eval 9.0.8 on the run R2MED's own Python BM25 pipeline made of NFCorpus test (../shared/data/eval-reference) (bm25), read from eval-reference/nfcorpus.bm25.trec_eval",
		"✓: |got − expected| ≤ within, the spec's tolerance",
		"r2med/bm25                        (8 tasks)  skipped: needs its data cached (r2med pull)",
		"nano/bm25-candidates              (8 tasks)  skipped: needs its data cached (r2med pull --suite nano)",
		"r2med/nv                          (8 tasks)  skipped: needs a server for nvidia/NV-Embed-v2 (not offline)",
		"r2med/openai                      (8 tasks)  skipped: needs the API key in OPENAI_API_KEY (not offline)",
		"87 specs: 1 passed, 0 failed, 86 skipped",
	} {
		if !strings.Contains(flat, squeeze(want)) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
}

func TestReproduceList(t *testing.T) {
	stdout, _, code := r2med(t, "", "reproduce", "--list", "r2med/bm25", "nano")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if len(lines) != 6 || !strings.HasPrefix(lines[4], "r2med/bm25  ") || !strings.Contains(lines[4], "R2MED (Hub)") || !strings.HasPrefix(lines[5], "4 specs;") {
		t.Errorf("list:\n%s", stdout)
	}
	_, stderr, code := r2med(t, "", "reproduce", "--list", "r2med/bm52")
	if code != 2 || !strings.Contains(stderr, `no spec named "r2med/bm52" (did you mean "r2med/bm25"?`) {
		t.Errorf("unknown spec: exit %d, %s", code, stderr)
	}
}
