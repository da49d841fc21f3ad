package pipeline

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/r2med/r2med/bm25"
	"github.com/r2med/r2med/expand"
	"github.com/r2med/r2med/fusion"
)

// Config holds every knob that changes a run's numbers. Its stages run in
// the order data flows: expand (GAR) → retrieve with one or more retrievers
// → fuse → rerank → evaluate.
type Config struct {
	// Name labels the system in run tags and result files; empty derives
	// one from the stages (ModelName).
	Name string
	// Retrieval is the first (usually the only) retriever.
	Retrieval
	// Also lists further retrievers; their runs are fused with the first.
	Also []Retrieval
	// Fuse says how several retrievers' runs become one.
	Fuse Fuse
	// Rerank, when its Kind is set, reorders the top of the (fused) run.
	Rerank Rerank
	TopK   int // documents kept per query
	// GAR, when its Method is set, replaces each query by R2MED's
	// combination of the query and an LLM generation: BM25 gets the
	// combined text, dense retrievers R2MED's embedding average.
	GAR expand.Source
	// GARDir holds generations in R2MED's layout
	// (<dir>/<method>/<llm>/query_with_hydoc.jsonl), as `r2med gar
	// generate` writes them; "{task}" is replaced by the task's name;
	// empty reads the task's own (published) ones.
	GARDir string
	// Generate, when set, makes the generations in the run with an LLM
	// instead of reading them (SetGenerate keeps GAR in step).
	Generate *Generate
}

// SetGenerate makes the run generate its expansions with g; GAR names
// them as the generated files are named.
func (c *Config) SetGenerate(g Generate) {
	c.Generate = &g
	c.GAR = expand.Source{Method: g.Method, LLM: g.LLMName()}
}

// Retrieval is one retriever and its settings.
type Retrieval struct {
	// Retriever is "bm25", "dense", "candidates:CONFIG" (a published
	// candidate list) or "run:PATH" (a TREC run file; "{task}" in PATH is
	// replaced by the task name).
	Retriever string
	Analyzer  string      // bm25: analysis.Get name
	BM25      bm25.Params // bm25
	Dense     Dense       // dense
}

// Dense describes a dense retriever: a registry model (package models)
// with its R2MED recipe, or any model an HTTP backend serves.
type Dense struct {
	Model   string `yaml:"model"`    // registry name or alias, or a model id for HTTP backends
	Backend string `yaml:"backend"`  // onnx, openai, tei, voyage; empty: the registry's choice
	BaseURL string `yaml:"base_url"` // HTTP backends; empty: the backend's default or environment
	// ModelDir is a local ONNX model directory (model.onnx or
	// onnx/model.onnx, tokenizer.json); empty: the Hub cache's copy of
	// the registry model, fetched by `r2med model pull`.
	ModelDir string `yaml:"model_dir"`
	// QueryPrefix and DocPrefix replace the registry's instructions when
	// set ("" for a model outside the registry means none).
	QueryPrefix *string `yaml:"query_prefix"`
	DocPrefix   *string `yaml:"doc_prefix"`
	MaxLength   int     `yaml:"max_length"`  // tokens; 0: the registry's
	Dimensions  int     `yaml:"dimensions"`  // requested output dimension (OpenAI, Voyage, Matryoshka); 0: native
	Normalize   bool    `yaml:"normalize"`   // L2-normalize embeddings (cosine scoring normalizes anyway)
	BatchSize   int     `yaml:"batch_size"`  // 0: the backend's default
	Concurrency int     `yaml:"concurrency"` // HTTP requests in flight; 0: the backend's default
	// Pooling (cls, mean, last) says how a local model outside the
	// registry pools token vectors; registry models bring their own.
	Pooling string `yaml:"pooling"`
	// Quantize searches an int8 or binary copy of the document vectors
	// (HAKARI-Bench's embedding variants); Rescore reorders the quantized
	// top candidates by their float32 scores.
	Quantize string `yaml:"quantize"`
	Rescore  bool   `yaml:"rescore"`
}

// Fuse says how several runs become one.
type Fuse struct {
	Method  string    `yaml:"method"`  // "rrf" (default) or "combsum"
	K       float64   `yaml:"k"`       // RRF constant; 0 means 60
	Norm    string    `yaml:"norm"`    // combsum: minmax (default), zscore, none
	Weights []float64 `yaml:"weights"` // combsum: one per retriever; nil means all 1
	Depth   int       `yaml:"depth"`   // documents each retriever contributes; 0 means max(TopK, 100)
}

// depth is how deep each fused list is: fusing only the final top-k would
// drop what one retriever ranks 11th and the other 1st.
func (f Fuse) depth(topK int) int {
	if f.Depth > 0 {
		return f.Depth
	}
	return max(topK, 100)
}

// Rerank describes a reranking stage.
type Rerank struct {
	// Kind is tei, cohere (the /v1/rerank shape of Cohere, Jina and
	// Voyage), jina, voyage, llm-pointwise, llm-listwise or onnx.
	Kind     string `yaml:"kind"`
	Model    string `yaml:"model"`
	BaseURL  string `yaml:"base_url"`
	ModelDir string `yaml:"model_dir"` // onnx
	Depth    int    `yaml:"depth"`     // documents reranked per query; 0 means 100
	// KeepTail keeps the documents below Depth after the reranked ones;
	// R2MED keeps only the reranked documents.
	KeepTail bool `yaml:"keep_tail"`
	// WithoutSafeguard drops a NanoR2MED reranking_hybrid list's rank-101
	// safeguard document before reranking (HAKARI's
	// reranking_without_safeguard target).
	WithoutSafeguard bool `yaml:"without_safeguard"`
	BatchSize        int  `yaml:"batch_size"`
	Concurrency      int  `yaml:"concurrency"`
}

// DefaultConfig is R2MED's BM25 setup.
func DefaultConfig() Config {
	return Config{Retrieval: DefaultBM25(), TopK: 100}
}

// DefaultBM25 is R2MED's BM25 retriever.
func DefaultBM25() Retrieval {
	return Retrieval{Retriever: "bm25", Analyzer: "lucene-english", BM25: bm25.DefaultParams(bm25.R2MED)}
}

// Retrievers lists every retriever, the first one first.
func (c Config) Retrievers() []Retrieval {
	return append([]Retrieval{c.Retrieval}, c.Also...)
}

// Name is the retriever as results files name it.
func (r Retrieval) Name() string {
	switch {
	case r.Retriever == "bm25" && r.BM25.Scheme != bm25.R2MED:
		return "bm25-" + string(r.BM25.Scheme)
	case r.Retriever == "dense" && r.Dense.Model != "":
		return r.Dense.Model
	}
	return r.Retriever
}

// RetrieverName is the retriever part of the system name: the retrievers
// joined with "+" when several are fused.
func (c Config) RetrieverName() string {
	var names []string
	for _, r := range c.Retrievers() {
		names = append(names, r.Name())
	}
	return strings.Join(names, "+")
}

// ModelName names the whole system in run tags: the retrievers, preceded
// by the generation set when there is one and followed by the reranker
// ("hyde-gpt4-bm25", "bm25+bge-tei@10").
func (c Config) ModelName() string {
	if c.Name != "" {
		return c.Name
	}
	s := c.RetrieverName()
	if c.GAR.Method != "" {
		s = c.GAR.Method + "-" + c.GAR.LLM + "-" + s
	}
	if c.Rerank.Kind != "" {
		s += "-" + c.Rerank.Kind
		if c.Rerank.Model != "" {
			s += ":" + c.Rerank.Model
		}
		s += fmt.Sprintf("@%d", c.Rerank.depth())
	}
	return s
}

func (r Rerank) depth() int {
	if r.Depth <= 0 {
		return 100
	}
	return r.Depth
}

func (f Fuse) k() float64 {
	if f.K == 0 {
		return 60
	}
	return f.K
}

func (f Fuse) norm() (fusion.Norm, error) {
	if f.Norm == "" {
		return fusion.MinMax, nil
	}
	return fusion.ParseNorm(f.Norm)
}

// Validate checks the settings before any work starts, so a typo fails in
// a second rather than after an hour of embedding.
func (c Config) Validate() error {
	if c.TopK <= 0 {
		return fmt.Errorf("top-k must be positive, got %d", c.TopK)
	}
	for i, r := range c.Retrievers() {
		if err := r.validate(); err != nil {
			if len(c.Also) > 0 {
				return fmt.Errorf("retriever %d: %w", i+1, err)
			}
			return err
		}
	}
	if (c.GAR.Method == "") != (c.GAR.LLM == "") {
		return errors.New("a GAR method and its LLM go together (e.g. --gar hyde --gar-llm gpt4)")
	}
	if g := c.Generate; g != nil {
		if err := g.validate(); err != nil {
			return err
		}
		if c.GAR != (expand.Source{Method: g.Method, LLM: g.LLMName()}) {
			return fmt.Errorf("the generation (%s/%s) and the GAR set (%s) disagree; set both with SetGenerate", g.Method, g.LLMName(), c.GAR)
		}
		if c.GARDir != "" {
			return errors.New("generations are either generated in the run or read from a directory, not both")
		}
	}
	if len(c.Also) > 0 {
		switch strings.ToLower(c.Fuse.Method) {
		case "", "rrf":
			if c.Fuse.K < 0 {
				return fmt.Errorf("RRF k must be ≥ 0, got %v", c.Fuse.K)
			}
		case "combsum":
			if _, err := c.Fuse.norm(); err != nil {
				return err
			}
			if c.Fuse.Weights != nil && len(c.Fuse.Weights) != len(c.Also)+1 {
				return fmt.Errorf("%d fusion weights for %d retrievers; give one per retriever", len(c.Fuse.Weights), len(c.Also)+1)
			}
		default:
			return fmt.Errorf("unknown fusion method %q (rrf or combsum)", c.Fuse.Method)
		}
	}
	if c.Rerank.Kind != "" && c.Rerank.Depth < 0 {
		return fmt.Errorf("rerank depth must be positive, got %d", c.Rerank.Depth)
	}
	return nil
}

func (r Retrieval) validate() error {
	switch {
	case r.Retriever == "bm25":
		if r.Analyzer == "" {
			return errors.New("bm25 needs an analyzer")
		}
		return nil
	case r.Retriever == "dense":
		if r.Dense.Model == "" {
			return errors.New("the dense retriever needs a model (--model NAME; `r2med models` lists the registry)")
		}
		switch r.Dense.Quantize {
		case "", "int8", "binary":
		default:
			return fmt.Errorf("unknown quantization %q (int8 or binary)", r.Dense.Quantize)
		}
		if r.Dense.Rescore && r.Dense.Quantize == "" {
			return errors.New("rescoring applies to a quantized search (--quantize int8|binary)")
		}
		return nil
	case strings.HasPrefix(r.Retriever, CandidatesPrefix) && len(r.Retriever) > len(CandidatesPrefix),
		strings.HasPrefix(r.Retriever, RunPrefix) && len(r.Retriever) > len(RunPrefix):
		return nil
	}
	return fmt.Errorf("unknown retriever %q (available: bm25, dense, candidates:CONFIG for a published candidate list such as candidates:bm25, run:PATH for a TREC run file)", r.Retriever)
}

// NeedsCache reports whether a stage can use the embedding and LLM cache.
func (c Config) NeedsCache() bool {
	for _, r := range c.Retrievers() {
		if r.Retriever == "dense" {
			return true
		}
	}
	return strings.HasPrefix(c.Rerank.Kind, "llm-")
}

// RunPrefix starts a retriever name that reads a TREC run file.
const RunPrefix = "run:"

// describe is what the manifest records and the fingerprint hashes: every
// setting that changes the numbers, and nothing else.
func (c Config) describe() map[string]any {
	m := c.Retrieval.describe()
	m["top_k"] = c.TopK
	if c.GAR.Method != "" {
		m["gar_method"] = c.GAR.Method
		m["gar_llm"] = c.GAR.LLM
	}
	if c.Generate != nil {
		m["generate"] = c.Generate.describe()
	}
	if len(c.Also) > 0 {
		var also []map[string]any
		for _, r := range c.Also {
			also = append(also, r.describe())
		}
		m["also"] = also
		f := map[string]any{"method": strings.ToLower(c.Fuse.Method)}
		if f["method"] == "" {
			f["method"] = "rrf"
		}
		if f["method"] == "rrf" {
			f["k"] = c.Fuse.k()
		} else {
			n, _ := c.Fuse.norm()
			f["norm"] = n.String()
			if c.Fuse.Weights != nil {
				f["weights"] = c.Fuse.Weights
			}
		}
		if c.Fuse.Depth > 0 {
			f["depth"] = c.Fuse.Depth
		}
		m["fuse"] = f
	}
	if c.Rerank.Kind != "" {
		r := map[string]any{"kind": c.Rerank.Kind, "depth": c.Rerank.depth()}
		if c.Rerank.Model != "" {
			r["model"] = c.Rerank.Model
		}
		if c.Rerank.KeepTail {
			r["keep_tail"] = true
		}
		if c.Rerank.WithoutSafeguard {
			r["without_safeguard"] = true
		}
		m["rerank"] = r
	}
	return m
}

func (r Retrieval) describe() map[string]any {
	m := map[string]any{"retriever": r.Retriever}
	switch r.Retriever {
	case "bm25":
		m["analyzer"] = r.Analyzer
		m["bm25_scheme"] = string(r.BM25.Scheme)
		m["k1"] = r.BM25.K1
		m["b"] = r.BM25.B
	case "dense":
		d := r.Dense
		m["model"] = d.Model
		put := func(k string, v any, set bool) {
			if set {
				m[k] = v
			}
		}
		put("backend", d.Backend, d.Backend != "")
		put("query_prefix", deref(d.QueryPrefix), d.QueryPrefix != nil)
		put("doc_prefix", deref(d.DocPrefix), d.DocPrefix != nil)
		put("max_length", d.MaxLength, d.MaxLength > 0)
		put("dimensions", d.Dimensions, d.Dimensions > 0)
		put("normalize", true, d.Normalize)
		put("pooling", d.Pooling, d.Pooling != "")
		put("quantize", d.Quantize, d.Quantize != "")
		put("rescore", true, d.Rescore)
	}
	return m
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// File is a pipeline as a YAML file writes it. Every field is optional
// but retrieve; unknown fields are errors, so a misspelt key does not
// silently fall back to a default.
//
//	name: hyde-gpt4-hybrid
//	top_k: 100
//	expand: {method: hyde, llm: gpt4, dir: gens}
//	retrieve:
//	  - bm25: {scheme: r2med, k1: 0.9, b: 0.4}
//	  - dense: {model: bge, backend: onnx}
//	fuse: {method: rrf, k: 60}
//	rerank: {kind: tei, base_url: "http://localhost:8080", depth: 10}
type File struct {
	Name     string          `yaml:"name"`
	TopK     int             `yaml:"top_k"`
	Expand   *FileExpand     `yaml:"expand"`
	Retrieve []FileRetriever `yaml:"retrieve"`
	Fuse     *Fuse           `yaml:"fuse"`
	Rerank   *Rerank         `yaml:"rerank"`
}

// FileExpand is the expand stage of a pipeline file: published (or
// earlier generated) generations by method and LLM, or generate: to make
// them in the run.
type FileExpand struct {
	Method   string        `yaml:"method"`
	LLM      string        `yaml:"llm"`
	Dir      string        `yaml:"dir"`
	Generate *FileGenerate `yaml:"generate"`
}

// FileGenerate asks an LLM server for the expansions.
type FileGenerate struct {
	Model       string   `yaml:"model"`
	BaseURL     string   `yaml:"base_url"`
	KeyEnv      string   `yaml:"key_env"`
	Temperature *float64 `yaml:"temperature"`
	TopP        float64  `yaml:"top_p"`
	Seed        *int64   `yaml:"seed"`
	MaxTokens   *int     `yaml:"max_tokens"`
	Concurrency int      `yaml:"concurrency"`
	Style       string   `yaml:"style"`
	Domain      string   `yaml:"domain"`
	Templates   string   `yaml:"templates"`
	MaxSearches int      `yaml:"max_searches"`
	SearchK     int      `yaml:"search_k"`
	TokenBudget int      `yaml:"token_budget"`
}

// FileRetriever is one retriever of a pipeline file; exactly one field is
// set.
type FileRetriever struct {
	BM25       *FileBM25 `yaml:"bm25"`
	Dense      *Dense    `yaml:"dense"`
	Candidates string    `yaml:"candidates"`
	Run        string    `yaml:"run"`
}

// FileBM25 is a BM25 retriever of a pipeline file.
type FileBM25 struct {
	Scheme   string   `yaml:"scheme"`
	K1       *float64 `yaml:"k1"`
	B        *float64 `yaml:"b"`
	Analyzer string   `yaml:"analyzer"`
}

// LoadFile reads a pipeline YAML file into a Config.
func LoadFile(path string) (Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("reading pipeline: %w", err)
	}
	cfg, err := ParseFile(data)
	if err != nil {
		return Config{}, fmt.Errorf("%s: %w", path, err)
	}
	return cfg, nil
}

// ParseFile reads a pipeline from YAML.
func ParseFile(data []byte) (Config, error) {
	var f File
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		if errors.Is(err, io.EOF) {
			return Config{}, errors.New("empty pipeline file; it needs at least a retrieve: list")
		}
		return Config{}, fmt.Errorf("%v (see `r2med run --help` for the pipeline file format)", err)
	}
	return f.Config()
}

// Config turns the file form into a Config and validates it.
func (f File) Config() (Config, error) {
	cfg := Config{Name: f.Name, TopK: f.TopK}
	if cfg.TopK == 0 {
		cfg.TopK = 100
	}
	if len(f.Retrieve) == 0 {
		return Config{}, errors.New("retrieve: needs at least one retriever (bm25, dense, candidates or run)")
	}
	for i, fr := range f.Retrieve {
		r, err := fr.retrieval()
		if err != nil {
			return Config{}, fmt.Errorf("retrieve[%d]: %w", i, err)
		}
		if i == 0 {
			cfg.Retrieval = r
		} else {
			cfg.Also = append(cfg.Also, r)
		}
	}
	if e := f.Expand; e != nil {
		cfg.GAR = expand.Source{Method: e.Method, LLM: e.LLM}
		cfg.GARDir = e.Dir
		if fg := e.Generate; fg != nil {
			g := DefaultGenerate()
			g.Method, g.Label, g.Model, g.BaseURL, g.KeyEnv = e.Method, e.LLM, fg.Model, fg.BaseURL, fg.KeyEnv
			g.TopP, g.Style, g.Domain, g.Templates = fg.TopP, fg.Style, fg.Domain, fg.Templates
			if fg.Temperature != nil {
				g.Temperature = *fg.Temperature
			}
			if fg.Seed != nil {
				g.Seed = fg.Seed
			}
			if fg.MaxTokens != nil {
				g.MaxTokens = *fg.MaxTokens
			}
			for _, kv := range []struct {
				dst *int
				v   int
			}{{&g.Concurrency, fg.Concurrency}, {&g.MaxSearches, fg.MaxSearches}, {&g.SearchK, fg.SearchK}, {&g.TokenBudget, fg.TokenBudget}} {
				if kv.v != 0 {
					*kv.dst = kv.v
				}
			}
			if e.Dir != "" {
				return Config{}, errors.New("expand: dir: reads generations and generate: makes them; give one")
			}
			cfg.SetGenerate(g)
		}
	}
	if f.Fuse != nil {
		cfg.Fuse = *f.Fuse
	}
	if f.Rerank != nil {
		if f.Rerank.Kind == "" {
			return Config{}, errors.New("rerank: needs a kind (tei, cohere, jina, voyage, llm-pointwise, llm-listwise or onnx)")
		}
		cfg.Rerank = *f.Rerank
	}
	return cfg, cfg.Validate()
}

func (fr FileRetriever) retrieval() (Retrieval, error) {
	set := 0
	for _, b := range []bool{fr.BM25 != nil, fr.Dense != nil, fr.Candidates != "", fr.Run != ""} {
		if b {
			set++
		}
	}
	if set != 1 {
		return Retrieval{}, errors.New("each retriever is exactly one of bm25:, dense:, candidates: or run:")
	}
	switch {
	case fr.BM25 != nil:
		r := DefaultBM25()
		if fr.BM25.Scheme != "" {
			sc, err := bm25.ParseScheme(fr.BM25.Scheme)
			if err != nil {
				return Retrieval{}, err
			}
			r.BM25 = bm25.DefaultParams(sc)
		}
		if fr.BM25.K1 != nil {
			r.BM25.K1 = *fr.BM25.K1
		}
		if fr.BM25.B != nil {
			r.BM25.B = *fr.BM25.B
		}
		if fr.BM25.Analyzer != "" {
			r.Analyzer = fr.BM25.Analyzer
		}
		return r, nil
	case fr.Dense != nil:
		return Retrieval{Retriever: "dense", Dense: *fr.Dense}, nil
	case fr.Candidates != "":
		return Retrieval{Retriever: CandidatesPrefix + fr.Candidates}, nil
	}
	return Retrieval{Retriever: RunPrefix + fr.Run}, nil
}
