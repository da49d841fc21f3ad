package pipeline

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/r2med/r2med/bm25"
	"github.com/r2med/r2med/demo"
	"github.com/r2med/r2med/expand"
	"github.com/r2med/r2med/fusion"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/trec"
)

func TestParseFile(t *testing.T) {
	cfg, err := ParseFile([]byte(`
name: hyde-hybrid
top_k: 50
expand: {method: hyde, llm: gpt4, dir: gens}
retrieve:
  - bm25: {scheme: lucene, k1: 1.2}
  - dense: {model: bge, backend: onnx, query_prefix: "", max_length: 256}
  - candidates: reranking_hybrid
  - run: "runs/{task}.trec"
fuse: {method: combsum, norm: zscore, weights: [1, 2, 3, 4]}
rerank: {kind: tei, base_url: "http://localhost:8081", depth: 10}
`))
	if err != nil {
		t.Fatal(err)
	}
	empty := ""
	want := Config{
		Name: "hyde-hybrid",
		Retrieval: Retrieval{Retriever: "bm25", Analyzer: "lucene-english",
			BM25: bm25.Params{Scheme: bm25.Lucene, K1: 1.2, B: 0.4}},
		Also: []Retrieval{
			{Retriever: "dense", Dense: Dense{Model: "bge", Backend: "onnx", QueryPrefix: &empty, MaxLength: 256}},
			{Retriever: "candidates:reranking_hybrid"},
			{Retriever: "run:runs/{task}.trec"},
		},
		Fuse:   Fuse{Method: "combsum", Norm: "zscore", Weights: []float64{1, 2, 3, 4}},
		Rerank: Rerank{Kind: "tei", BaseURL: "http://localhost:8081", Depth: 10},
		TopK:   50,
		GAR:    expand.Source{Method: "hyde", LLM: "gpt4"},
		GARDir: "gens",
	}
	if !reflect.DeepEqual(cfg, want) {
		t.Fatalf("parsed\n%+v\nwant\n%+v", cfg, want)
	}
	if got := cfg.ModelName(); got != "hyde-hybrid" {
		t.Errorf("ModelName = %q", got)
	}
	cfg.Name = ""
	if got := cfg.ModelName(); got != "hyde-gpt4-bm25-lucene+bge+candidates:reranking_hybrid+run:runs/{task}.trec-tei@10" {
		t.Errorf("derived ModelName = %q", got)
	}
}

func TestParseFileErrors(t *testing.T) {
	for _, c := range []struct{ yaml, want string }{
		{"", "empty pipeline file"},
		{"retrieve: []", "at least one retriever"},
		{"retreive:\n  - bm25: {}", "line 1: field retreive not found"},
		{"retrieve:\n  - bm25: {}\n    dense: {model: x}", "exactly one of"},
		{"retrieve:\n  - bm25: {scheme: okapi}", "retrieve[0]"},
		{"retrieve:\n  - dense: {}", "needs a model"},
		{"retrieve:\n  - bm25: {}\n  - bm25: {scheme: lucene}\nfuse: {method: max}", `unknown fusion method "max"`},
		{"retrieve:\n  - bm25: {}\n  - bm25: {scheme: lucene}\nfuse: {method: combsum, weights: [1]}", "1 fusion weights for 2 retrievers"},
		{"retrieve:\n  - bm25: {}\nexpand: {method: hyde}", "go together"},
		{"retrieve:\n  - bm25: {}\nrerank: {depth: 10}", "rerank: needs a kind"},
		{"top_k: -1\nretrieve:\n  - bm25: {}", "top-k must be positive"},
	} {
		_, err := ParseFile([]byte(c.yaml))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want it to mention %q", c.yaml, err, c.want)
		}
	}
	p := filepath.Join(t.TempDir(), "p.yaml")
	os.WriteFile(p, []byte("retrieve:\n  - bm25: {k3: 1}\n"), 0o644)
	if _, err := LoadFile(p); err == nil || !strings.Contains(err.Error(), p+": ") || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("LoadFile error %v should name the file and line", err)
	}
}

// TestHybridFusesRetrievers checks a two-retriever pipeline against the
// fusion package applied to the two single-retriever runs by hand.
func TestHybridFusesRetrievers(t *testing.T) {
	task, err := demo.Load()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	single := func(r Retrieval) ir.Run {
		out, err := Run(ctx, task, Config{Retrieval: r, TopK: 100}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		return out.Run
	}
	lucene := DefaultBM25()
	lucene.BM25 = bm25.DefaultParams(bm25.Robertson)
	a, b := single(DefaultBM25()), single(lucene)

	for _, fu := range []Fuse{{}, {Method: "rrf", K: 100}, {Method: "combsum", Norm: "zscore", Weights: []float64{0.3, 0.7}}} {
		cfg := Config{Retrieval: DefaultBM25(), Also: []Retrieval{lucene}, Fuse: fu, TopK: 10}
		out, err := Run(ctx, task, cfg, Options{})
		if err != nil {
			t.Fatal(err)
		}
		var want ir.Run
		if fu.Method == "combsum" {
			want = fusion.CombSUM([]ir.Run{a, b}, fu.Weights, fusion.ZScore, 100)
		} else {
			want = fusion.RRF([]ir.Run{a, b}, fu.k(), 100)
		}
		for qid, hits := range want {
			want[qid] = hits[:min(10, len(hits))]
		}
		if !reflect.DeepEqual(out.Run, want) {
			t.Errorf("%+v: fused run differs from fusion applied by hand", fu)
		}
		if out.Result.ModelName != "bm25+bm25-robertson" {
			t.Errorf("model name %q", out.Result.ModelName)
		}
	}
}

// TestStagesResume checks that a multi-stage run keeps its retrieval
// stages and reuses them, and that --overwrite recomputes them.
func TestStagesResume(t *testing.T) {
	task, err := demo.Load()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	dir := t.TempDir()
	runFile := filepath.Join(dir, "other.trec")
	first, err := Run(ctx, task, DefaultConfig(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := trec.WriteRunFile(runFile, first.Run, "x"); err != nil {
		t.Fatal(err)
	}
	cfg := Config{Retrieval: DefaultBM25(), Also: []Retrieval{{Retriever: RunPrefix + runFile}}, TopK: 100}
	out := filepath.Join(dir, "out")
	if _, err := Run(ctx, task, cfg, Options{Out: out}); err != nil {
		t.Fatal(err)
	}
	stage := filepath.Join(out, StagesDir, "retrieve-1-bm25.trec")
	if _, err := os.Stat(stage + ""); err != nil {
		t.Fatalf("stage run not kept: %v", err)
	}
	// Replace the stored BM25 stage by one query's list only: a reuse shows
	// up as a run that lost the other queries' BM25 half.
	tampered := ir.Run{}
	for qid, hits := range first.Run {
		tampered[qid] = hits[:1]
	}
	if err := trec.WriteRunFile(stage, tampered, "tampered"); err != nil {
		t.Fatal(err)
	}
	cfg.TopK = 99 // a different final run, same retrieval stages
	reused, err := Run(ctx, task, cfg, Options{Out: out})
	if err != nil {
		t.Fatal(err)
	}
	want := fusion.RRF([]ir.Run{tampered, first.Run}, 60, 100)
	for qid := range want {
		want[qid] = want[qid][:min(99, len(want[qid]))]
	}
	if !reflect.DeepEqual(reused.Run, want) {
		t.Fatal("the second run did not reuse the stored retrieval stage")
	}
	redone, err := Run(ctx, task, cfg, Options{Out: out, Overwrite: true})
	if err != nil {
		t.Fatal(err)
	}
	if reflect.DeepEqual(redone.Run, reused.Run) {
		t.Fatal("--overwrite reused the stored stage")
	}
}
