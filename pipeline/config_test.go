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
	"github.com/r2med/r2med/expand"
	"github.com/r2med/r2med/fusion"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/results"
	"github.com/r2med/r2med/retrieve"
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
		Retrievers: []retrieve.Spec{
			retrieve.BM25{Analyzer: "lucene-english", Params: bm25.Params{Scheme: bm25.Lucene, K1: 1.2, B: 0.4}},
			retrieve.Dense{Model: "bge", Backend: "onnx", QueryPrefix: &empty, MaxLength: 256},
			retrieve.Candidates{Config: "reranking_hybrid"},
			retrieve.RunFile{Path: "runs/{task}.trec"},
		},
		Fuse:   Fuse{Method: "combsum", Norm: "zscore", Weights: []float64{1, 2, 3, 4}},
		Rerank: Rerank{Kind: "tei", BaseURLs: []string{"http://localhost:8081"}, Depth: 10},
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
	if got := cfg.ModelName(); got != "hyde/gpt4 → combsum(bm25-lucene,bge,candidates:reranking_hybrid,run:{task}) → tei@10" {
		t.Errorf("derived ModelName = %q", got)
	}
}

func TestParseFileErrors(t *testing.T) {
	for _, c := range []struct{ yaml, want string }{
		{"", "empty pipeline file"},
		{"retrieve: []", "at least one retriever"},
		{"retreive:\n  - bm25: {}", `line 1: unknown key "retreive" in the pipeline (did you mean "retrieve"?)`},
		{"retrieve:\n  - bm25: {}\n    dense: {model: x}", "line 2: each retriever is a mapping with one key, its kind"},
		{"retrieve:\n  - bm25: {scheme: okapi}", `line 2: unknown BM25 scheme "okapi"`},
		{"retrieve:\n  - bm25:\n      schem: lucene", `line 3: unknown key "schem" in bm25 (did you mean "scheme"?)`},
		{"retrieve:\n  - dense: {}", "line 2: the dense retriever needs a model"},
		{"retrieve:\n  - bm25: {}\n  - bm25: {scheme: lucene}\nfuse: {method: max}", `line 4: unknown fusion method "max"`},
		{"retrieve:\n  - bm25: {}\n  - bm25: {scheme: lucene}\nfuse:\n  method: combsum\n  weights: [1]", "line 6: 1 fusion weights for 2 retrievers"},
		{"retrieve:\n  - bm25: {}\nfuse: {k: high}", `line 3: k in fuse must be a number, not "high"`},
		{"retrieve:\n  - bm25: {}\nexpand: {method: hyde}", "line 3: --gar and --gar-llm go together"},
		{"retrieve:\n  - bm25: {}\nrerank: {depth: 10}", "line 3: rerank: needs a kind"},
		{"retrieve:\n  - bm25: {}\nrerank: {kind: tei, dept: 10}", `line 3: unknown key "dept" in rerank (did you mean "depth"?)`},
		{"retrieve:\n  - bm25: {}\nexpand:\n  generate: {model: m, temprature: 1}", `line 4: unknown key "temprature" in expand.generate (did you mean "temperature"?)`},
		{"top_k: -1\nretrieve:\n  - bm25: {}", "line 1: top-k must be positive"},
		{"top_k: many\nretrieve:\n  - bm25: {}", `line 1: top_k in the pipeline must be a whole number, not "many"`},
		{"retrieve: bm25", "line 1: retrieve in the pipeline must be a list"},
		{"retrieve:\n  - bm25: {}\n  bad", "line 3: "},
		{"retrieve:\n  - bm25: {}\nrequest_timeout: soon", `line 3: request_timeout "soon": want a positive duration such as 90s or 2m`},
		{"retrieve:\n  - bm25: {}\nretries: -2", "line 3: retries must be 0 or more"},
		{"retrieve:\n  - bm25: {}\nendpoint_concurrency: x", `line 3: endpoint_concurrency in the pipeline must be a whole number, not "x"`},
		{"retrieve:\n  - bm25: {}\nrerank:\n  kind: insertrank\n  scores: log", `line 5: unknown InsertRank score scale "log"`},
		{"retrieve:\n  - bm25: {}\nrerank:\n  kind: insertrnak", `line 4: unknown reranker "insertrnak"`},
		{"retrieve:\n  - bm25: {}\nrerank: {kind: rank1, base_url: {a: b}}", "line 3: base_url in rerank must be text or a list of texts, not a mapping"},
		{"retrieve:\n  - bm25: {}\nexpand:\n  method: reasoning\n  mode: prepend\n  llm: x", `line 5: unknown query-reasoning mode "prepend"`},
		{"retrieve:\n  - bm25: {}\nexpand:\n  mode: append\n  llm: x", "line 4: mode: is query reasoning's (method: reasoning, mode: replace|append), not no method's"},
		{"retrieve:\n  - bm25: {}\nexpand:\n  method: summarize\n  llm: x\n  generate: {model: m}", `line 6: generation method "summarize": generation supports hyde, query2doc, lamer, reasoning, reasoning-append, search-r1, search-o1`},
	} {
		_, err := ParseFile([]byte(c.yaml))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want it to mention %q", c.yaml, err, c.want)
		}
		// Users read YAML keys, never Go type names.
		if err != nil && (strings.Contains(err.Error(), "pipeline.") || strings.Contains(err.Error(), "retrieve.") || strings.Contains(err.Error(), "float64")) {
			t.Errorf("%q: error %v speaks Go", c.yaml, err)
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
