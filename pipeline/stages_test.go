package pipeline

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/r2med/r2med/bm25"
	"github.com/r2med/r2med/demo"
	"github.com/r2med/r2med/fusion"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/results"
	"github.com/r2med/r2med/retrieve"
	"github.com/r2med/r2med/trec"
)

// TestHybridFusesRetrievers checks a two-retriever pipeline against the
// fusion package applied to the two single-retriever runs by hand.
func TestHybridFusesRetrievers(t *testing.T) {
	task, err := demo.Load()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	single := func(r retrieve.Spec) ir.Run {
		out, err := Run(ctx, task, Config{Retrievers: []retrieve.Spec{r}, TopK: 100}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		return out.Run
	}
	robertson := retrieve.DefaultBM25()
	robertson.Params = bm25.DefaultParams(bm25.Robertson)
	a, b := single(retrieve.DefaultBM25()), single(robertson)

	for _, fu := range []Fuse{{}, {Method: "rrf", K: 100}, {Method: "combsum", Norm: "zscore", Weights: []float64{0.3, 0.7}}} {
		cfg := Config{Retrievers: []retrieve.Spec{retrieve.DefaultBM25(), robertson}, Fuse: fu, TopK: 10}
		out, err := Run(ctx, task, cfg, Options{})
		if err != nil {
			t.Fatal(err)
		}
		var want ir.Run
		if fu.Method == "combsum" {
			want = fusion.CombSUM([]ir.Run{a, b}, fu.Weights, fusion.ZScore, 100)
		} else {
			want = fusion.RRF([]ir.Run{a, b}, fu.RRFK(), 100)
		}
		trec.Rank(want, ir.TiesAsListed) // as the fusion stage ranks it
		for qid, hits := range want {
			want[qid] = hits[:min(10, len(hits))]
		}
		if !reflect.DeepEqual(out.Run, want) {
			t.Errorf("%+v: fused run differs from fusion applied by hand", fu)
		}
		// A fused system is named by its method and parts, and its
		// manifest says it is fused.
		method := fu.Method
		if method == "" {
			method = "rrf"
		}
		if want := method + "(bm25,bm25-robertson)"; out.Result.ModelName != want {
			t.Errorf("model name %q, want %q", out.Result.ModelName, want)
		}
		if f, ok := out.Manifest.Config["fusion"].(map[string]any); !ok || f["method"] != method {
			t.Errorf("manifest fusion %v", out.Manifest.Config["fusion"])
		}
	}
}

// TestStagesResume checks that a multi-stage run keeps its retrieval
// stages and reuses them, that a stored stage whose file changed is
// recomputed rather than trusted, and that --overwrite recomputes them.
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
	cfg := Config{Retrievers: []retrieve.Spec{retrieve.DefaultBM25(), retrieve.RunFile{Path: runFile}}, TopK: 100}
	out := filepath.Join(dir, "out")
	made, err := Run(ctx, task, cfg, Options{Out: out})
	if err != nil {
		t.Fatal(err)
	}
	stage := filepath.Join(out, StagesDir, "retrieve-1-bm25.trec")
	for _, f := range []string{stage, filepath.Join(out, StagesDir, "retrieve-1-bm25.json"), filepath.Join(out, StagesDir, "fuse.trec")} {
		if _, err := os.Stat(f); err != nil {
			t.Fatalf("stage output not kept: %v", err)
		}
	}
	indexed := func(o *Outcome) bool {
		return slices.ContainsFunc(o.Manifest.Stages, func(s results.Stage) bool { return s.Name == "index" })
	}
	if !indexed(made) {
		t.Fatal("the first run did not index")
	}
	want := made.Run
	for qid := range want {
		want[qid] = want[qid][:min(99, len(want[qid]))]
	}

	cfg.TopK = 99 // a different final run, same retrieval stages
	var log strings.Builder
	reused, err := Run(ctx, task, cfg, Options{Out: out, Overwrite: true, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	if reused.Skipped || !reflect.DeepEqual(reused.Run, want) {
		t.Fatal("the second run is not the first one cut to 99")
	}
	// --overwrite redoes every stage.
	if !indexed(reused) {
		t.Fatal("--overwrite reused the stored BM25 stage")
	}
	cfg.TopK = 98
	for qid := range want {
		want[qid] = want[qid][:min(98, len(want[qid]))]
	}
	reused, err = Run(ctx, task, cfg, Options{Out: out, Replace: true, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	if indexed(reused) || !reflect.DeepEqual(reused.Run, want) {
		t.Fatalf("the stored BM25 stage was not reused (indexed: %v)", indexed(reused))
	}

	// A stage file replaced behind the record's back is not trusted.
	tampered := ir.Run{}
	for qid, hits := range first.Run {
		tampered[qid] = hits[:1]
	}
	if err := trec.WriteRunFile(stage, tampered, "tampered"); err != nil {
		t.Fatal(err)
	}
	cfg.TopK = 97
	for qid := range want {
		want[qid] = want[qid][:min(97, len(want[qid]))]
	}
	log.Reset()
	redone, err := Run(ctx, task, cfg, Options{Out: out, Replace: true, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	if !indexed(redone) || !reflect.DeepEqual(redone.Run, want) {
		t.Fatal("a tampered stage file was reused")
	}
	if !strings.Contains(log.String(), "stage retrieve-1-bm25: retrieve-1-bm25.trec changed since it was written") {
		t.Errorf("log %q does not say why the stage was recomputed", log.String())
	}
}
