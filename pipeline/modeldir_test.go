package pipeline

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/r2med/r2med/dataset"
	"github.com/r2med/r2med/hub/hubtest"
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
	put := func(from string) { onnxtest.WriteModel(t, filepath.Join(ref, from), model) }
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
		t.Errorf("renamed in its place: skipped %v, nDCG@10 %v; fresh %v; the old model's %v", redone.Skipped, redone.Result.Test["ndcg_at_10"], fresh.Result.Test["ndcg_at_10"], first.Result.Test["ndcg_at_10"])
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
	put := func(from string) { onnxtest.WriteModel(t, onnxtest.Model(from), model) }
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

// TestHubModelMainMoved: a registry model of the Hugging Face Hub cache
// is the commit its refs/main names when the run loads it. After a newer
// main is pulled (a second snapshot, refs/main moved to it), a finished run
// made with the old commit is refused as a run with other settings,
// naming the model's revision, where it was reused as "unchanged" with
// the old model's numbers; and the run renamed in its place (Replace)
// does not reuse the old commit's kept retrieval stage either: it ranks
// as a fresh run with the new commit. The cache
// is built here (two snapshots of BAAI/bge-large-en-v1.5: bge-tiny, then
// contriever-tiny's weights), and read offline, and online with a Hub
// that fails the test if asked anything.
func TestHubModelMainMoved(t *testing.T) {
	onnxtest.Require(t)
	needShared(t)
	for _, offline := range []bool{true, false} {
		t.Run(map[bool]string{true: "offline", false: "online"}[offline], func(t *testing.T) {
			ref := filepath.Join(shared, "encoder-reference")
			hf := hubtest.NewCache(t, t.TempDir())
			if offline {
				hf.Use("")
			} else {
				// A Hub with no repositories: asked anything, the run fails.
				srv := hubtest.NewServer(t)
				hf.Use(srv.URL())
				defer func() {
					if n := srv.Requests(); n > 0 {
						t.Errorf("the Hub was asked %d requests; the cache holds every file", n)
					}
				}()
			}
			const repo = "models/BAAI/bge-large-en-v1.5"
			const old, newer = "1111111111111111111111111111111111111111", "2222222222222222222222222222222222222222"
			task, err := LoadTask("demo", "", dataset.Options{})
			if err != nil {
				t.Fatal(err)
			}
			cfg := Config{Retrievers: []retrieve.Spec{retrieve.Dense{Model: "bge", Backend: "onnx"}}, TopK: 100}
			dir := t.TempDir()
			hf.Put(repo, old, onnxtest.Files(t, filepath.Join(ref, "bge-tiny")))
			first, err := Run(context.Background(), task, cfg, Options{Out: dir})
			if err != nil {
				t.Fatal(err)
			}
			if got := first.Manifest.Config["model_revision"]; got != old {
				t.Errorf("first run's model_revision %v, want the commit loaded, %s", got, old)
			}
			// A newer main pulled (hf download): contriever-tiny's weights.
			hf.Put(repo, newer, onnxtest.Files(t, filepath.Join(ref, "contriever-tiny")))
			again, err := Run(context.Background(), task, cfg, Options{Out: dir})
			if err == nil {
				t.Fatalf("rerun after main moved: skipped %v, nDCG@10 %v, first %v", again.Skipped, again.Result.Test["ndcg_at_10"], first.Result.Test["ndcg_at_10"])
			}
			if !strings.Contains(err.Error(), "other settings (model_revision") || !strings.Contains(err.Error(), newer) {
				t.Errorf("refused: %v", err)
			}
			// Renamed, in its place (Replace), it is another run whose
			// retrieval stage is the first's but for the model: the old
			// commit's kept stage must not be reused.
			renamed := cfg
			renamed.Name = "bge, renamed"
			redone, err := Run(context.Background(), task, renamed, Options{Out: dir, Replace: true})
			if err != nil {
				t.Fatal(err)
			}
			fresh, err := Run(context.Background(), task, renamed, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if redone.Skipped || redone.Result.Test["ndcg_at_10"] != fresh.Result.Test["ndcg_at_10"] || fresh.Result.Test["ndcg_at_10"] == first.Result.Test["ndcg_at_10"] {
				t.Errorf("renamed in its place: skipped %v, nDCG@10 %v; fresh %v; the old commit's %v", redone.Skipped, redone.Result.Test["ndcg_at_10"], fresh.Result.Test["ndcg_at_10"], first.Result.Test["ndcg_at_10"])
			}
			if got := redone.Manifest.Config["model_revision"]; got != newer {
				t.Errorf("redone run's model_revision %v, want %s", got, newer)
			}
		})
	}
}
