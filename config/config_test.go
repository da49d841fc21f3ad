package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/r2med/r2med/bm25"
	"github.com/r2med/r2med/expand"
	"github.com/r2med/r2med/retrieve"
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
		// A 0 written out is refused, not read as the default.
		{"retrieve:\n  - bm25: {}\n  - bm25: {scheme: lucene}\nfuse:\n  k: 0", "line 5: RRF k must be above 0, got 0 (leave k out for 60)"},
		{"retrieve:\n  - bm25: {}\n  - bm25: {scheme: lucene}\nfuse:\n  depth: 0", "line 5: fusion depth must be above 0, got 0 (leave depth out for"},
		{"retrieve:\n  - bm25: {}\nexpand: {method: hyde}", "line 3: --gar and --gar-llm go together"},
		{"retrieve:\n  - bm25: {}\nrerank: {depth: 10}", "line 3: rerank: needs a kind"},
		{"retrieve:\n  - bm25: {}\nrerank: {kind: tei, dept: 10}", `line 3: unknown key "dept" in rerank (did you mean "depth"?)`},
		{"retrieve:\n  - bm25: {}\nexpand:\n  generate: {model: m, temprature: 1}", `line 4: unknown key "temprature" in expand.generate (did you mean "temperature"?)`},
		{"top_k: -1\nretrieve:\n  - bm25: {}", "line 1: top-k must be positive"},
		{"retrieve:\n  - bm25: {}\nrerank:\n  kind: tei\n  depth: 0", "line 5: rerank depth must be positive (R2MED: 10 or 100), got 0"}, // 0 is not "the default"
		{"top_k: many\nretrieve:\n  - bm25: {}", `line 1: top_k in the pipeline must be a whole number, not "many"`},
		{"retrieve: bm25", "line 1: retrieve in the pipeline must be a list"},
		{"retrieve:\n  - bm25: {}\n  bad", "line 3: "},
		{"retrieve:\n  - bm25: {}\nrequest_timeout: soon", `line 3: request_timeout "soon": want a positive duration such as 90s or 2m`},
		{"retrieve:\n  - bm25: {}\nretries: -2", "line 3: retries must be 0 or more"},
		{"retrieve:\n  - bm25: {}\nendpoint_concurrency: x", `line 3: endpoint_concurrency in the pipeline must be a whole number, not "x"`},
		{"retrieve:\n  - bm25: {}\nrerank:\n  kind: insertrank\n  scores: log", `line 5: unknown InsertRank score scale "log"`},
		{"retrieve:\n  - bm25: {}\nrerank:\n  kind: insertrnak", `line 4: unknown reranker "insertrnak"`},
		{"retrieve:\n  - bm25: {}\nrerank:\n  kind: grouprank\n  group_size: -2", "line 5: grouprank needs a group size and repeats of at least 1, got -2 and 0"},
		{"retrieve:\n  - bm25: {}\nrerank:\n  kind: diver\n  merge: {pointwise: reasonrank}", `line 5: the diver merge's pointwise reranker is one of llm-pointwise, rank1, grouprank, not "reasonrank"`},
		{"retrieve:\n  - bm25: {}\nrerank:\n  kind: diver\n  merge: {weight: 0.12345}", "line 5: the diver merge's pointwise weight has at most three decimals"},
		{"retrieve:\n  - bm25: {}\nrerank:\n  kind: diver\n  merge: {pointwize: rank1}", `unknown key "pointwize" in rerank.merge (did you mean "pointwise"?)`},
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
		if err != nil && (strings.Contains(err.Error(), "pipeline.") || strings.Contains(err.Error(), "config.") || strings.Contains(err.Error(), "retrieve.") || strings.Contains(err.Error(), "float64")) {
			t.Errorf("%q: error %v speaks Go", c.yaml, err)
		}
	}
	p := filepath.Join(t.TempDir(), "p.yaml")
	os.WriteFile(p, []byte("retrieve:\n  - bm25: {k3: 1}\n"), 0o644)
	if _, err := LoadFile(p); err == nil || !strings.Contains(err.Error(), p+": ") || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("LoadFile error %v should name the file and line", err)
	}
}
