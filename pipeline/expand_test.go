package pipeline

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/r2med/r2med/cache"
	"github.com/r2med/r2med/dataset"
	"github.com/r2med/r2med/expand"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/retrieve"
)

// chatServer answers every chat request with a passage built from the
// prompt's last line, and counts the requests; answers are empty for
// queries whose prompt mentions "EMPTY".
func chatServer(t *testing.T, calls *atomic.Int64) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		var req struct {
			Messages []struct{ Role, Content string }
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			t.Error(err)
		}
		user := req.Messages[len(req.Messages)-1].Content
		answer := "Hypothetical passage: thiamine deficiency and " + strings.Fields(user)[len(strings.Fields(user))/2]
		if strings.Contains(user, "EMPTY") {
			answer = ""
		}
		json.NewEncoder(w).Encode(map[string]any{"choices": []map[string]any{{"message": map[string]any{"role": "assistant", "content": answer}, "finish_reason": "stop"}}})
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestGenerateInRun runs expand → BM25 → evaluate with a loopback LLM and
// checks the stage: generations in R2MED's layout under stages/expand,
// R2MED's BM25 combination applied, the generation manifest in the run
// manifest, fallbacks recorded, and a rerun that asks nothing.
func TestGenerateInRun(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(filepath.Join(dir, "task"), os.DirFS("../demo/data")); err != nil {
		t.Fatal(err)
	}
	task, err := dataset.Load(filepath.Join(dir, "task"), dataset.Options{})
	if err != nil {
		t.Fatal(err)
	}
	task.Queries[0].Text += " EMPTY"
	var calls atomic.Int64
	srv := chatServer(t, &calls)
	g := DefaultGenerate()
	g.Method, g.Model, g.BaseURLs, g.Label, g.Style = "hyde", "tiny-llm", []string{srv.URL}, "qwen-7b", "exam"
	cfg := DefaultConfig()
	cfg.SetGenerate(g)
	store, err := cache.Open(filepath.Join(dir, "cache"), cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	out := filepath.Join(dir, "out")
	first, err := Run(context.Background(), task, cfg, Options{Out: out, Cache: store})
	if err != nil {
		t.Fatal(err)
	}
	if n := calls.Load(); n != int64(len(task.Queries)) {
		t.Fatalf("%d chat requests for %d queries", n, len(task.Queries))
	}
	gens, err := expand.LoadDir(filepath.Join(out, StagesDir, "expand"), "hyde", "qwen-7b")
	if err != nil {
		t.Fatal(err)
	}
	if gens[0].HyDoc != task.Queries[0].Text {
		t.Errorf("an empty answer must fall back to the query text, got %q", gens[0].HyDoc)
	}
	if !strings.HasPrefix(gens[1].HyDoc, "Hypothetical passage") {
		t.Errorf("generation 1: %q", gens[1].HyDoc)
	}
	if first.Manifest.Counts["generation_fallbacks"] != 1 {
		t.Errorf("fallbacks counted: %v", first.Manifest.Counts)
	}
	if gm, ok := first.Manifest.Details["expand"].(expand.GenerationManifest); !ok || len(gm.Fallbacks) != 1 || gm.Fallbacks[0].ID != task.Queries[0].ID {
		t.Errorf("the run manifest should carry the generation manifest with its fallback: %#v", first.Manifest.Details["expand"])
	}
	if first.Result.Extra["gar_method"] != "hyde" || first.Result.Extra["gar_llm"] != "qwen-7b" {
		t.Errorf("result parts %v", first.Result.Extra)
	}
	// The same as running BM25 over the generation files directly.
	// (From a per-task directory, as `r2med gar generate --task all` writes them.)
	if err := os.CopyFS(filepath.Join(dir, "gens", task.Name), os.DirFS(filepath.Join(out, StagesDir, "expand"))); err != nil {
		t.Fatal(err)
	}
	direct := DefaultConfig()
	direct.GAR, direct.GARDir = expand.Source{Method: "hyde", LLM: "qwen-7b"}, filepath.Join(dir, "gens", "{task}")
	want, err := Run(context.Background(), task, direct, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(first.Run, want.Run) {
		t.Error("generated-in-run and read-from-directory generations give different runs")
	}
	// A changed top-k redoes retrieval but reuses the generation stage.
	cfg.TopK = 50
	if _, err := Run(context.Background(), task, cfg, Options{Out: out, Cache: store, Replace: true}); err != nil {
		t.Fatal(err)
	}
	// An edited template means new prompts: the stage is redone and every
	// query is asked again (the cache holds answers to the old prompts).
	tmpl := filepath.Join(dir, "tmpl")
	if _, err := expand.WriteTemplates(tmpl); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(tmpl, "hyde.tmpl"))
	os.WriteFile(filepath.Join(tmpl, "hyde.tmpl"), append([]byte("Be brief. "), b...), 0o644)
	cfg.Generate.Templates = tmpl
	if _, err := Run(context.Background(), task, cfg, Options{Out: out, Cache: store, Replace: true}); err != nil {
		t.Fatal(err)
	}
	if n := calls.Load(); n != 2*int64(len(task.Queries)) {
		t.Fatalf("after the reuse and a new template: %d requests, want %d", n, 2*len(task.Queries))
	}
}

// TestGeneratedExpansionsInvalidateStages changes only the sampling
// temperature of a generated expansion: the kept retrieval stages of a
// multi-stage run must not be reused for the new generations.
func TestGeneratedExpansionsInvalidateStages(t *testing.T) {
	task, err := dataset.Load("../demo/data", dataset.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Temperature float64
			Messages    []struct{ Content string }
		}
		json.NewDecoder(r.Body).Decode(&req)
		// Cold answers repeat the prompt's words; warm ones say something else.
		answer := req.Messages[len(req.Messages)-1].Content
		if req.Temperature > 0.5 {
			answer = "vitamin deficiency anemia fatigue"
		}
		json.NewEncoder(w).Encode(map[string]any{"choices": []map[string]any{{"message": map[string]any{"content": answer}}}})
	}))
	defer srv.Close()
	robertson := retrieve.DefaultBM25()
	robertson.Params.Scheme = "robertson"
	cfg := Config{Retrievers: []retrieve.Spec{retrieve.DefaultBM25(), robertson}, TopK: 10}
	g := DefaultGenerate()
	g.Method, g.Model, g.BaseURLs, g.Style = "hyde", "m", []string{srv.URL}, "exam"
	out := t.TempDir()
	var runs []ir.Run
	for _, temp := range []float64{0.1, 0.9} {
		g.Temperature = temp
		cfg.SetGenerate(g)
		kept, err := Run(context.Background(), task, cfg, Options{Out: out, Replace: true})
		if err != nil {
			t.Fatal(err)
		}
		fresh, err := Run(context.Background(), task, cfg, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(kept.Run, fresh.Run) {
			t.Fatalf("temperature %v: the run reused stages made for other generations", temp)
		}
		runs = append(runs, kept.Run)
	}
	if reflect.DeepEqual(runs[0], runs[1]) {
		t.Fatal("the two temperatures gave the same run; the test proves nothing")
	}
}
