package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/r2med/r2med/dataset"
	"github.com/r2med/r2med/demo"
	"github.com/r2med/r2med/internal/progress"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/nano"
	"github.com/r2med/r2med/retrieve"
	"github.com/r2med/r2med/synth"
)

// teiServer scores a document by how many times it contains "the" plus
// its length in thousandths: deterministic, and unrelated to BM25's order.
// It fails every request from call number failFrom on (0: never).
func teiServer(t *testing.T, calls *atomic.Int64, failFrom int64) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := calls.Add(1)
		if r.URL.Path != "/rerank" {
			http.NotFound(w, r)
			return
		}
		if failFrom > 0 && n >= failFrom {
			http.Error(w, "model unloaded", http.StatusBadRequest)
			return
		}
		var req struct {
			Query string   `json:"query"`
			Texts []string `json:"texts"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			t.Error(err)
		}
		type item struct {
			Index int     `json:"index"`
			Score float64 `json:"score"`
		}
		var out []item
		for i, text := range req.Texts {
			out = append(out, item{i, teiScore(text)})
		}
		sort.Slice(out, func(a, b int) bool { return out[a].Score > out[b].Score }) // TEI answers best first
		json.NewEncoder(w).Encode(out)
	}))
}

func teiScore(text string) float64 {
	return float64(strings.Count(strings.ToLower(text), "the")) + float64(len(text))/1000
}

func TestRerankStage(t *testing.T) {
	task, err := demo.Load()
	if err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int64
	srv := teiServer(t, &calls, 0)
	defer srv.Close()
	ctx := context.Background()
	plain, err := Run(ctx, task, DefaultConfig(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.Rerank = Rerank{Kind: "tei", BaseURLs: []string{srv.URL}, Depth: 10}
	out, err := Run(ctx, task, cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	text := map[string]string{}
	for _, d := range task.Corpus {
		text[d.ID] = d.Text
	}
	for qid, hits := range out.Run {
		base := plain.Run[qid]
		if len(hits) != min(10, len(base)) {
			t.Fatalf("query %s: %d documents kept after reranking the top 10", qid, len(hits))
		}
		want := map[string]bool{}
		for _, h := range base[:len(hits)] {
			want[h.DocID] = true
		}
		for i, h := range hits {
			if !want[h.DocID] {
				t.Errorf("query %s: %s was not in the BM25 top 10", qid, h.DocID)
			}
			if h.Score != teiScore(text[h.DocID]) {
				t.Errorf("query %s: %s scored %v, server said %v", qid, h.DocID, h.Score, teiScore(text[h.DocID]))
			}
			if i > 0 && hits[i-1].Score < h.Score {
				t.Errorf("query %s: not in reranker order at rank %d", qid, i+1)
			}
		}
	}
	if out.Result.Extra["reranker_name"] != "tei" || out.Result.Extra["topk"] != 10 || out.Result.ModelName != "" {
		t.Errorf("result file parts: %+v model %q", out.Result.Extra, out.Result.ModelName)
	}
	if _, ok := out.Result.Test["NDCG@10"]; !ok {
		t.Errorf("reranker results use R2MED's upper-case keys: %v", out.Result.Test)
	}
	if r, _ := out.Result.Metric("recall_at_100"); r != out.Result.Test["Recall@10"] {
		t.Errorf("with only 10 documents kept, recall@100 = recall@10 (R2MED): %v vs %v", r, out.Result.Test["Recall@10"])
	}
}

// TestRerankResumes interrupts a rerank (the server starts refusing) and
// checks that the rerun asks only for the queries not yet done.
func TestRerankResumes(t *testing.T) {
	task, err := demo.Load()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "out")
	var calls atomic.Int64
	failing := teiServer(t, &calls, 6)
	cfg := DefaultConfig()
	cfg.Rerank = Rerank{Kind: "tei", BaseURLs: []string{failing.URL}, Depth: 10}
	if _, err := Run(context.Background(), task, cfg, Options{Out: dir}); err == nil || !strings.Contains(err.Error(), "model unloaded") {
		t.Fatalf("the failing server should stop the run with its message: %v", err)
	}
	failing.Close()
	calls.Store(0)
	good := teiServer(t, &calls, 0)
	defer good.Close()
	cfg.Rerank.BaseURLs = []string{good.URL}
	var bar bytes.Buffer
	if _, err := Run(context.Background(), task, cfg, Options{Out: dir, Progress: progress.Factory{Out: &bar, Enabled: true}}); err != nil {
		t.Fatal(err)
	}
	if n := calls.Load(); n != int64(len(task.Queries))-5 {
		t.Fatalf("the resumed rerank asked %d times; %d queries were left", n, len(task.Queries)-5)
	}
	// The bar starts at the 5 checkpointed queries, shown as resumed and
	// left out of its pace.
	if b := bar.String(); !strings.Contains(b, "reranking demo (5 resumed") || !strings.Contains(b, fmt.Sprintf("(5/%d)", len(task.Queries))) {
		t.Errorf("the resumed rerank's bar does not start at 5 resumed queries:\n%q", b)
	}
}

// TestRerankNanoHybridSafeguard reranks NanoR2MED's reranking_hybrid
// lists as shipped, with the rank-101 safeguard kept (HAKARI's
// "reranking" target) and dropped ("reranking_without_safeguard").
func TestRerankNanoHybridSafeguard(t *testing.T) {
	ctx := context.Background()
	// A synthetic task of 400 documents, made a Nano set with a "dense"
	// list that ranks everything backwards: RRF then misses the positives
	// of some queries, which get the rank-101 safeguard.
	full := synth.Generate(synth.TaskSpec{Name: "Biology", Docs: 400, Queries: 20, QueryChars: 300, DocChars: 300, PositivesPerQuery: 2}, 7)
	set, err := nano.Build(full, nano.Options{Split: "NanoSynth", DocLimit: 400})
	if err != nil {
		t.Fatal(err)
	}
	backwards := ir.Run{}
	for qid, hits := range set.Subset("bm25").Run {
		rev := slices.Clone(hits)
		slices.Reverse(rev)
		backwards[qid] = rev
	}
	if err := set.AddDense(backwards); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := nano.WriteHub(set, dir, "NanoSynth"); err != nil {
		t.Fatal(err)
	}
	task, err := LoadTask("", dir, dataset.Options{Split: "NanoSynth"})
	if err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int64
	srv := teiServer(t, &calls, 0)
	defer srv.Close()
	base := Config{Retrievers: []retrieve.Spec{retrieve.Candidates{Config: "reranking_hybrid"}}, TopK: 200}
	plain, err := Run(ctx, task, base, Options{})
	if err != nil {
		t.Fatal(err)
	}
	safeguarded := 0
	for _, hits := range plain.Run {
		if len(hits) == 101 {
			safeguarded++
		}
	}
	if safeguarded == 0 {
		t.Fatal("the fixture has no list with a rank-101 safeguard; the test would prove nothing")
	}
	for _, without := range []bool{false, true} {
		cfg := base
		cfg.Rerank = Rerank{Kind: "tei", BaseURLs: []string{srv.URL}, Depth: 100, WithoutSafeguard: without}
		out, err := Run(ctx, task, cfg, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for qid, hits := range plain.Run {
			want := len(hits)
			if without && want == 101 {
				want = 100
			}
			if got := len(out.Run[qid]); got != want {
				t.Errorf("without safeguard %v: query %s keeps %d documents, want %d", without, qid, got, want)
			}
			if without && len(hits) == 101 {
				for _, h := range out.Run[qid] {
					if h.DocID == hits[100].DocID {
						t.Errorf("query %s: the safeguard %s survived --without-safeguard", qid, h.DocID)
					}
				}
			}
		}
	}
	cfg := DefaultConfig()
	cfg.Rerank = Rerank{Kind: "tei", BaseURLs: []string{srv.URL}, WithoutSafeguard: true}
	if _, err := Run(ctx, task, cfg, Options{}); err == nil || !strings.Contains(err.Error(), "reranking_hybrid") {
		t.Errorf("--without-safeguard on a BM25 run: %v", err)
	}
}

// TestRerankStageKeyHasReasoningSettings: a reasoning reranker's own
// settings (here InsertRank's decimals) are part of the rerank stage's
// fingerprint, so a sweep cell redone in place with another setting asks
// the LLM again instead of reusing the stage made with the old prompts;
// the stage's account (its usage) comes back with a reused stage.
func TestRerankStageKeyHasReasoningSettings(t *testing.T) {
	task, err := demo.Load()
	if err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		json.NewEncoder(w).Encode(map[string]any{
			"choices": []any{map[string]any{"message": map[string]any{"role": "assistant", "content": "[2] > [1]"}, "finish_reason": "stop"}},
			"usage":   map[string]int{"prompt_tokens": 7, "completion_tokens": 3},
		})
	}))
	defer srv.Close()
	out := t.TempDir()
	cfg := DefaultConfig()
	cfg.Rerank = Rerank{Kind: "insertrank", Model: "m", BaseURLs: []string{srv.URL}, Depth: 5}
	run := func(decimals int) *Outcome {
		t.Helper()
		cfg.Rerank.Decimals = decimals
		o, err := Run(context.Background(), task, cfg, Options{Out: out, Replace: true})
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	first := run(2)
	n := calls.Load()
	if n != int64(len(task.Queries)) || first.Manifest.Usage.PromptTokens != 7*n {
		t.Fatalf("%d calls, usage %+v", n, first.Manifest.Usage)
	}
	run(4)
	if calls.Load() != 2*n {
		t.Errorf("another decimals setting made %d calls, want %d: the old stage was reused", calls.Load()-n, n)
	}
	// Back to two decimals: the cell is redone; its rerank stage was
	// made with four, so it is asked again too.
	again := run(2)
	if calls.Load() != 3*n || again.Manifest.Usage.Calls != n {
		t.Errorf("%d calls, usage %+v", calls.Load()-2*n, again.Manifest.Usage)
	}
	// Only the name changes: the rerank stage is reused, and its cost
	// and counts are reported as made before.
	cfg.Name = "renamed"
	o := run(2)
	if calls.Load() != 3*n || o.Manifest.Usage.Calls != 0 || o.Manifest.Usage.Cached.Calls != n || o.Manifest.Counts["rerank_llm_calls"] != int(n) {
		t.Errorf("renamed: %d new calls, usage %+v, counts %v", calls.Load()-3*n, o.Manifest.Usage, o.Manifest.Counts)
	}
}
