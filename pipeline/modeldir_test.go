package pipeline

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/r2med/r2med/dataset"
	"github.com/r2med/r2med/onnx/onnxtest"
	"github.com/r2med/r2med/retrieve"
)

// TestModelReplacedInItsDirectory: a dense run with --model-dir whose
// model is replaced in that directory (another export, other weights) is
// not taken for the run made with the old one: rerun into the same
// directory it is refused as a run with other settings, naming the
// model's revision, and redone with --overwrite, where it was reused as
// "unchanged" with the old model's numbers. The tiny encoders are
// encoder-reference's (random weights: bge-tiny, then contriever-tiny's
// weights under the same name).
func TestModelReplacedInItsDirectory(t *testing.T) {
	onnxtest.Require(t)
	needShared(t)
	ref := filepath.Join(shared, "encoder-reference")
	task, err := LoadTask("demo", "", dataset.Options{})
	if err != nil {
		t.Fatal(err)
	}
	model := filepath.Join(t.TempDir(), "model")
	put := func(from string) { copyModel(t, filepath.Join(ref, from), model, "onnx/model.onnx") }
	put("bge-tiny")
	cfg := Config{Retrievers: []retrieve.Spec{retrieve.Dense{Model: "bge", Backend: "onnx", ModelDir: model}}, TopK: 100}
	dir := t.TempDir()
	first, err := Run(context.Background(), task, cfg, Options{Out: dir})
	if err != nil {
		t.Fatal(err)
	}
	put("contriever-tiny")
	again, err := Run(context.Background(), task, cfg, Options{Out: dir})
	if err == nil {
		t.Fatalf("rerun with the model replaced: skipped %v, nDCG@10 %v, first %v", again.Skipped, again.Result.Test["ndcg_at_10"], first.Result.Test["ndcg_at_10"])
	}
	if !strings.Contains(err.Error(), "other settings (model_revision") {
		t.Errorf("refused: %v", err)
	}
	redone, err := Run(context.Background(), task, cfg, Options{Out: dir, Overwrite: true})
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := Run(context.Background(), task, cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if redone.Skipped || redone.Result.Test["ndcg_at_10"] != fresh.Result.Test["ndcg_at_10"] || fresh.Result.Test["ndcg_at_10"] == first.Result.Test["ndcg_at_10"] {
		t.Errorf("overwritten: skipped %v, nDCG@10 %v; fresh %v; the old model's %v", redone.Skipped, redone.Result.Test["ndcg_at_10"], fresh.Result.Test["ndcg_at_10"], first.Result.Test["ndcg_at_10"])
	}
}

// TestRerankModelDirChanged: an onnx rerank's cross-encoder is part of
// what a finished run was made with: another --rerank-model-dir, or the
// model replaced in its directory, makes a run with other settings
// (refused, naming the model's revision), not one reused as unchanged.
func TestRerankModelDirChanged(t *testing.T) {
	onnxtest.Require(t)
	task, err := LoadTask("demo", "", dataset.Options{})
	if err != nil {
		t.Fatal(err)
	}
	model := filepath.Join(t.TempDir(), "cross")
	put := func(from string) { copyModel(t, onnxtest.Model(from), model, "model.onnx") }
	put("tiny-cross-1")
	cfg := DefaultConfig()
	cfg.Rerank = Rerank{Kind: "onnx", ModelDir: model, Depth: 20}
	dir := t.TempDir()
	if _, err := Run(context.Background(), task, cfg, Options{Out: dir}); err != nil {
		t.Fatal(err)
	}
	other := cfg
	other.Rerank.ModelDir = onnxtest.Model("tiny-cross-2")
	for name, c := range map[string]Config{"another directory": other, "replaced": cfg} {
		if name == "replaced" {
			put("tiny-cross-2")
		}
		out, err := Run(context.Background(), task, c, Options{Out: dir})
		if err == nil {
			t.Errorf("%s: skipped %v", name, out.Skipped)
		} else if !strings.Contains(err.Error(), "other settings (rerank ") || !strings.Contains(err.Error(), `"model_revision":"local:`) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// copyModel writes a model directory's graph (at graph), tokenizer and
// config into dir, over what it holds.
func copyModel(t *testing.T, from, dir, graph string) {
	t.Helper()
	for _, f := range []string{"config.json", "tokenizer.json", graph} {
		data, err := os.ReadFile(filepath.Join(from, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
