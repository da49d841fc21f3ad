// Package config describes an experiment's pipeline: Config, every knob
// that changes a run's numbers (its stages as a plan.Spec, the expansion,
// the bounds on calls to model servers), and the one schema that gives
// it: a pipeline file (File, read by FromYAML with errors that name the
// line and the key) and the flags of `r2med run` laid over that file's
// keys (Flags), so a setting means the same whichever way it was given.
// Pipeline files are what `r2med run --pipeline`, sweeps and the
// regression specs of package reproduce are written in.
package config

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/r2med/r2med/expand"
	"github.com/r2med/r2med/fusion"
	"github.com/r2med/r2med/gar"
	"github.com/r2med/r2med/internal/httpx"
	"github.com/r2med/r2med/internal/yamlx"
	"github.com/r2med/r2med/plan"
	"github.com/r2med/r2med/rerank"
	"github.com/r2med/r2med/retrieve"
	"github.com/r2med/r2med/sysname"
)

// Config holds every knob that changes a run's numbers. Its stages run in
// the order data flows: expand (GAR) → retrieve with one or more retrievers
// → fuse → rerank → evaluate. A pipeline file (ParseFile) and the flags of
// `r2med run` (Flags) both become a Config through FromYAML.
type Config struct {
	// Name labels the system in run tags and result files; empty derives
	// one from the stages (ModelName).
	Name string
	// Retrievers rank the task; several are fused (Fuse).
	Retrievers []retrieve.Spec
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
	Generate *gar.Spec
	// Remote tunes every call to a model server (embeddings, chat,
	// rerank). It changes how long a run may take, never its numbers, so
	// it is no part of the settings a manifest records.
	Remote Remote
}

// Remote bounds calls to model servers. Its zero value is the clients'
// defaults: 120 s per request, 5 retries, no per-server bound beyond
// each stage's own concurrency.
type Remote struct {
	// Timeout bounds one request, answer included (request_timeout,
	// --request-timeout); 0 means 120 s.
	Timeout time.Duration
	// Retries is how often a failed request is tried again (retries,
	// --retries; 0: never); nil means 5.
	Retries *int
	// EndpointConcurrency bounds the requests in flight to each server of
	// a fleet (endpoint_concurrency, --endpoint-concurrency); 0 leaves it
	// to each stage's own concurrency.
	EndpointConcurrency int
}

// Client is the retry policy of Remote for one kind of request, retries
// reported to log as the word what ("embedding", "LLM", "rerank").
func (r Remote) Client(log io.Writer, what string) httpx.Client {
	c := httpx.Client{Timeout: r.Timeout}
	if r.Retries != nil {
		c.MaxAttempts = *r.Retries + 1
	}
	if log != nil {
		c.Notify = httpx.LogRetries(log, what)
	}
	return c
}

// Fleet is the fleet policy of Remote, servers taken out and let back
// reported to log.
func (r Remote) Fleet(log io.Writer) httpx.FleetOptions {
	f := httpx.FleetOptions{PerEndpoint: r.EndpointConcurrency}
	if log != nil {
		f.Notify = httpx.LogFleet(log)
	}
	return f
}

// Generation is the options of an LLM generation whose calls r bounds,
// retried requests and a fleet's servers taken out and let back told to
// log.
func (r Remote) Generation(log io.Writer) gar.Options {
	return gar.Options{Log: log, HTTP: r.Client(log, "LLM"), Fleet: r.Fleet(log)}
}

// Or fills the fields r leaves unset from def.
func (r Remote) Or(def Remote) Remote {
	if r.Timeout == 0 {
		r.Timeout = def.Timeout
	}
	if r.Retries == nil {
		r.Retries = def.Retries
	}
	if r.EndpointConcurrency == 0 {
		r.EndpointConcurrency = def.EndpointConcurrency
	}
	return r
}

// Remote reads the file's keys of Remote (a sweep file has them too),
// validated; an error names the key (LineOf finds its line).
func (f File) Remote() (Remote, error) {
	r := Remote{Retries: f.Retries, EndpointConcurrency: f.EndpointConcurrency}
	if f.RequestTimeout != "" {
		d, err := time.ParseDuration(f.RequestTimeout)
		if err != nil || d <= 0 {
			return r, keyErrorf("request_timeout", "request_timeout %q: want a positive duration such as 90s or 2m", f.RequestTimeout)
		}
		r.Timeout = d
	}
	return r, r.validate()
}

func (r Remote) validate() error {
	switch {
	case r.Timeout < 0:
		return keyErrorf("request_timeout", "the request timeout must be positive, got %v", r.Timeout)
	case r.Retries != nil && *r.Retries < 0:
		return keyErrorf("retries", "retries must be 0 or more, got %d", *r.Retries)
	case r.EndpointConcurrency < 0:
		return keyErrorf("endpoint_concurrency", "endpoint concurrency must be positive (0: no bound), got %d", r.EndpointConcurrency)
	}
	return nil
}

// SetGenerate makes the run generate its expansions with g; GAR names
// them as the generated files are named.
func (c *Config) SetGenerate(g gar.Spec) {
	c.Generate = &g
	c.GAR = expand.Source{Method: g.Method, LLM: g.LLMName()}
}

// Fuse says how several runs become one: fusion's Spec, so that the
// search service fuses by the same rules.
type Fuse = fusion.Spec

// Rerank describes a reranking stage.
type Rerank struct {
	// Kind is one of rerank.Kinds: tei, cohere (the /v1/rerank shape of
	// Cohere, Jina and Voyage), jina, voyage, llm-pointwise,
	// llm-listwise, onnx, the reasoning rerankers insertrank, rank1,
	// reasonrank and grouprank, or diver (DIVER's merge of two of them).
	Kind  string `yaml:"kind"`
	Model string `yaml:"model"`
	// BaseURLs are the reranker's servers: one, or a fleet of servers of
	// the same model (a value may be a file of URLs, httpx.ReadURLs).
	BaseURLs yamlx.Strings `yaml:"base_url"`
	ModelDir string        `yaml:"model_dir"` // onnx
	Depth    int           `yaml:"depth"`     // documents reranked per query; 0 means 100
	// KeepTail keeps the documents below Depth after the reranked ones;
	// R2MED keeps only the reranked documents.
	KeepTail bool `yaml:"keep_tail"`
	// WithoutSafeguard drops a NanoR2MED reranking_hybrid list's rank-101
	// safeguard document before reranking (HAKARI's
	// reranking_without_safeguard target).
	WithoutSafeguard bool `yaml:"without_safeguard"`
	BatchSize        int  `yaml:"batch_size"`
	Concurrency      int  `yaml:"concurrency"`

	// The reasoning rerankers' settings (rerank.Spec), named as `r2med
	// rerank` names them: edited prompt templates (--rerank-templates),
	// insertrank's scores shown raw, minmax or percent
	// (--insertrank-scores) with Decimals digits (--insertrank-decimals),
	// the most tokens per answer (--rerank-max-tokens), rank1 without
	// logprobs (--rerank-text-only), grouprank's group size and passes
	// (--grouprank-size, --grouprank-repeats), diver's two rerankers and
	// weight (merge: {pointwise, listwise, weight}; --merge-pointwise,
	// --merge-listwise, --merge-weight).
	Templates string      `yaml:"templates"`
	Scores    string      `yaml:"scores"`
	Decimals  int         `yaml:"decimals"`
	MaxTokens int         `yaml:"max_tokens"`
	TextOnly  bool        `yaml:"text_only"`
	GroupSize int         `yaml:"group_size"`
	Repeats   int         `yaml:"repeats"`
	Merge     RerankMerge `yaml:"merge"`
}

// RerankMerge is diver's merge: the pointwise and listwise rerankers'
// kinds and the pointwise ranking's weight (rerank.MergeSpec).
type RerankMerge struct {
	Pointwise string  `yaml:"pointwise"`
	Listwise  string  `yaml:"listwise"`
	Weight    float64 `yaml:"weight"`
}

// Spec is the reranker's rerank.Spec, without the run's servers, cache
// and meter.
func (r Rerank) Spec() rerank.Spec {
	return rerank.Spec{Kind: r.Kind, Model: r.Model, ModelDir: r.ModelDir, Concurrency: r.Concurrency,
		Templates: r.Templates, Scores: rerank.ScoreScale(r.Scores), Decimals: r.Decimals, MaxTokens: r.MaxTokens, TextOnly: r.TextOnly,
		GroupSize: r.GroupSize, Repeats: r.Repeats, Merge: rerank.MergeSpec(r.Merge)}
}

// Default is R2MED's BM25 setup.
func Default() Config {
	return Config{Retrievers: []retrieve.Spec{retrieve.DefaultBM25()}, TopK: 100}
}

// fused reports whether several retrievers' runs are fused.
func (c Config) fused() bool { return len(c.Retrievers) > 1 }

// Plan is the stage plan the config describes: its retrievers, fusion,
// rerank (the reranker's settings, without the run's servers, cache and
// meter) and cut, the expansion named. The plan's rules (depth, naming,
// safeguard, ties, fingerprints) are what a run follows.
func (c Config) Plan() plan.Spec {
	s := plan.Spec{Name: c.Name, Expansion: c.GAR, Fuse: c.Fuse, K: c.TopK}
	for _, r := range c.Retrievers {
		s.Retrievers = append(s.Retrievers, plan.Retriever{Spec: r})
	}
	if r := c.Rerank; r.Kind != "" {
		s.Rerank = &plan.Rerank{Scorer: r.Spec(), Depth: r.Depth, KeepTail: r.KeepTail, WithoutSafeguard: r.WithoutSafeguard,
			BatchSize: r.BatchSize, Workers: r.Concurrency}
	}
	return s
}

// Stages are the system's stages by their short names, the input of the
// one naming rule (sysname).
func (c Config) Stages() sysname.Stages { return c.Plan().Stages() }

// RetrieverName is the retriever part of the system name: the retriever's
// name, or for several the fusion method and the parts,
// "rrf(bm25,bge)".
func (c Config) RetrieverName() string { return c.Stages().Retrieval() }

// ModelName names the whole system in run tags, result files and tables:
// Name when set, else the stages by sysname's rule ("bm25",
// "hyde/gpt4 → bm25", "rrf(bm25,bge) → insertrank:deepseek-r1@20").
func (c Config) ModelName() string { return c.Plan().System() }

// keyError is a validation error about one key of the pipeline file, so
// that FromYAML can name its line.
type keyError struct {
	path []string // "fuse", "weights"
	msg  string
}

func (e *keyError) Error() string { return e.msg }

func keyErrorf(path string, format string, args ...any) error {
	return &keyError{path: strings.Split(path, "."), msg: fmt.Sprintf(format, args...)}
}

// Validate checks the settings before any work starts, so a typo fails in
// a second rather than after an hour of embedding.
func (c Config) Validate() error {
	if c.TopK <= 0 {
		return keyErrorf("top_k", "top-k must be positive, got %d", c.TopK)
	}
	if len(c.Retrievers) == 0 {
		return keyErrorf("retrieve", "no retriever: give at least one (--retriever, or retrieve: in a pipeline file)")
	}
	for i, r := range c.Retrievers {
		if r == nil {
			return keyErrorf("retrieve", "retriever %d is missing", i+1)
		}
		if err := r.Validate(); err != nil {
			if c.fused() {
				return keyErrorf("retrieve", "retriever %d (%s): %v", i+1, r.Kind(), err)
			}
			return keyErrorf("retrieve", "%v", err)
		}
	}
	if (c.GAR.Method == "") != (c.GAR.LLM == "") {
		return keyErrorf("expand", "--gar and --gar-llm go together (e.g. --gar hyde --gar-llm gpt4; in a pipeline file expand: {method: hyde, llm: gpt4}), unless --gar-model generates the expansions in the run")
	}
	if g := c.Generate; g != nil {
		if err := g.Validate(); err != nil {
			return keyErrorf("expand.generate", "%v", err)
		}
		if c.GAR != (expand.Source{Method: g.Method, LLM: g.LLMName()}) {
			return keyErrorf("expand", "the generation (%s/%s) and the GAR set (%s) disagree; set both with SetGenerate", g.Method, g.LLMName(), c.GAR)
		}
		if c.GARDir != "" {
			return keyErrorf("expand", "generations are either generated in the run (generate:, --gar-model) or read from a directory (dir:, --gar-dir), not both")
		}
	}
	if c.fused() {
		if err := c.Fuse.Validate(len(c.Retrievers)); err != nil {
			var fe *fusion.FieldError
			if errors.As(err, &fe) {
				return keyErrorf("fuse."+fe.Field, "%v", fe.Err)
			}
			return err
		}
	}
	if c.Rerank.Kind != "" {
		if err := c.Rerank.validate(); err != nil {
			return err
		}
	}
	return c.Remote.validate()
}

// rerankDepthError refuses a rerank depth below 1 (0 written out, or
// negative; left out, it is rerank.DefaultDepth).
func rerankDepthError(d int) error {
	return keyErrorf("rerank.depth", "rerank depth must be positive (R2MED: 10 or 100), got %d", d)
}

func (r Rerank) validate() error {
	if !slices.Contains(rerank.Kinds, strings.ToLower(r.Kind)) {
		return keyErrorf("rerank.kind", "unknown reranker %q (%s)", r.Kind, strings.Join(rerank.Kinds, ", "))
	}
	if r.Depth < 0 {
		return rerankDepthError(r.Depth)
	}
	if r.Decimals < 0 {
		return keyErrorf("rerank.decimals", "insertrank decimals must be positive, got %d", r.Decimals)
	}
	if _, err := rerank.ParseScoreScale(r.Scores); err != nil {
		return keyErrorf("rerank.scores", "%v", err)
	}
	if r.Templates != "" {
		if _, err := rerank.LoadPrompts(r.Templates); err != nil {
			return keyErrorf("rerank.templates", "%v", err)
		}
	}
	// grouprank's and diver's settings (group size, repeats, the merged
	// kinds and weight) are checked as rerank.New checks them.
	if _, err := r.Spec().Settings(); err != nil {
		key := "rerank"
		switch strings.ToLower(r.Kind) {
		case rerank.KindGroupRank:
			key = "rerank.repeats"
			if r.GroupSize < 0 {
				key = "rerank.group_size"
			}
		case rerank.KindDiver:
			key = "rerank.merge"
		}
		return keyErrorf(key, "%v", err)
	}
	return nil
}

// NeedsCache reports whether a stage can use the embedding and LLM cache.
func (c Config) NeedsCache() bool {
	for _, r := range c.Retrievers {
		if retrieve.UsesCache(r) {
			return true
		}
	}
	return c.Generate != nil || rerank.UsesLLM(c.Rerank.Kind)
}

// Describe is what the manifest records and the fingerprint hashes: every
// setting that changes the numbers, and nothing else: the stages' (s, the
// config's plan as resolved: plan.Spec.Describe) and how the expansions
// were generated.
func (c Config) Describe(s plan.Spec) map[string]any {
	m := s.Describe()
	if c.Generate != nil {
		m["generate"] = c.Generate.Describe()
	}
	return m
}

// File is a pipeline as a YAML file writes it. Every key is optional but
// retrieve; unknown keys are errors naming their line, so a misspelt key
// does not silently fall back to a default.
//
//	name: hyde-gpt4-hybrid
//	top_k: 100
//	expand: {method: hyde, llm: gpt4, dir: gens}
//	retrieve:
//	  - bm25: {scheme: r2med, k1: 0.9, b: 0.4}
//	  - dense: {model: bge, backend: onnx}
//	fuse: {method: rrf, k: 60}
//	rerank: {kind: tei, base_url: "http://localhost:8080", depth: 10}
//	request_timeout: 60s       # calls to model servers: each request,
//	retries: 3                 # retries of a failed one,
//	endpoint_concurrency: 4    # requests in flight per server of a fleet
//
// The retrieve: entries are the retrieve package's kinds (retrieve.Kind).
// A base_url takes one URL or a list of them (a fleet of servers of one
// model).
type File struct {
	Name     string      `yaml:"name"`
	TopK     int         `yaml:"top_k"`
	Expand   *FileExpand `yaml:"expand"`
	Retrieve []yaml.Node `yaml:"retrieve"`
	Fuse     *Fuse       `yaml:"fuse"`
	Rerank   *Rerank     `yaml:"rerank"`

	RequestTimeout      string `yaml:"request_timeout"` // a Go duration: 90s, 2m
	Retries             *int   `yaml:"retries"`
	EndpointConcurrency int    `yaml:"endpoint_concurrency"`
}

// FileExpand is the expand stage of a pipeline file: published (or
// earlier generated) generations by method and LLM, or generate: to make
// them in the run.
type FileExpand struct {
	Method string `yaml:"method"`
	// Mode is query reasoning's: replace (the reasoning is the query, as
	// BRIGHT) or append (the query, then the reasoning).
	Mode     string        `yaml:"mode"`
	LLM      string        `yaml:"llm"`
	Dir      string        `yaml:"dir"`
	Generate *FileGenerate `yaml:"generate"`
}

// FileGenerate asks an LLM server for the expansions.
type FileGenerate struct {
	Model       string        `yaml:"model"`
	BaseURL     yamlx.Strings `yaml:"base_url"`
	KeyEnv      string        `yaml:"key_env"`
	Temperature *float64      `yaml:"temperature"`
	TopP        float64       `yaml:"top_p"`
	Seed        *int64        `yaml:"seed"`
	MaxTokens   *int          `yaml:"max_tokens"`
	Concurrency int           `yaml:"concurrency"`
	Style       string        `yaml:"style"`
	Domain      string        `yaml:"domain"`
	Templates   string        `yaml:"templates"`
	MaxSearches int           `yaml:"max_searches"`
	SearchK     int           `yaml:"search_k"`
	TokenBudget int           `yaml:"token_budget"`
}

// LoadFile reads a pipeline YAML file into a Config.
func LoadFile(path string) (Config, error) {
	doc, err := readFile(path)
	if err != nil {
		return Config{}, err
	}
	cfg, err := FromYAML(doc)
	if err != nil {
		return Config{}, fmt.Errorf("%s: %w", path, err)
	}
	return cfg, nil
}

// readFile reads a pipeline file's document.
func readFile(path string) (*yaml.Node, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading pipeline: %w", err)
	}
	doc, err := yamlx.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if doc == nil {
		return nil, fmt.Errorf("%s: empty pipeline file; it needs at least a retrieve: list", path)
	}
	return doc, nil
}

// ParseFile reads a pipeline from YAML.
func ParseFile(data []byte) (Config, error) {
	doc, err := yamlx.Parse(data)
	if err != nil {
		return Config{}, err
	}
	if doc == nil {
		return Config{}, errors.New("empty pipeline file; it needs at least a retrieve: list")
	}
	return FromYAML(doc)
}

// FromYAML turns a pipeline document (a mapping in File's form) into a
// validated Config; errors name the line of the key at fault.
func FromYAML(doc *yaml.Node) (Config, error) {
	var f File
	if err := yamlx.Decode(doc, &f, "the pipeline"); err != nil {
		return Config{}, err
	}
	cfg := Config{Name: f.Name, TopK: f.TopK}
	if yamlx.Get(doc, "top_k") == nil {
		cfg.TopK = 100
	}
	if len(f.Retrieve) == 0 {
		return Config{}, LineOf(doc, keyErrorf("retrieve", "retrieve: needs at least one retriever (%s)", retrieve.Usage()))
	}
	for i := range f.Retrieve {
		s, err := retrieve.ParseSpec(&f.Retrieve[i])
		if err != nil {
			return Config{}, err
		}
		cfg.Retrievers = append(cfg.Retrievers, s)
	}
	if e := f.Expand; e != nil {
		if e.Mode != "" {
			if e.Method != expand.Reasoning && e.Method != expand.ReasoningAppend {
				return Config{}, LineOf(doc, keyErrorf("expand.mode", "mode: is query reasoning's (method: reasoning, mode: replace|append), not %s's", orNone(e.Method)))
			}
			m, err := expand.ReasoningMethod(e.Mode)
			if err != nil {
				return Config{}, LineOf(doc, keyErrorf("expand.mode", "%v", err))
			}
			e.Method = m
		}
		cfg.GAR = expand.Source{Method: e.Method, LLM: e.LLM}
		cfg.GARDir = e.Dir
		if fg := e.Generate; fg != nil {
			if e.Dir != "" {
				return Config{}, LineOf(doc, keyErrorf("expand.dir", "expand: dir: reads generations and generate: makes them; give one"))
			}
			if fg.Model == "" {
				return Config{}, LineOf(doc, keyErrorf("expand.generate", "expand: generate: needs the model the LLM server serves (model:, or --gar-model)"))
			}
			cfg.SetGenerate(fg.generate(e))
		}
	}
	if f.Fuse != nil {
		fz := yamlx.Get(doc, "fuse")
		for field, zero := range map[string]bool{"k": f.Fuse.K == 0, "depth": f.Fuse.Depth == 0} {
			if zero && yamlx.Get(fz, field) != nil {
				return Config{}, LineOf(doc, keyErrorf("fuse."+field, "%v", fusion.WrittenZero(field)))
			}
		}
		cfg.Fuse = *f.Fuse
	}
	if f.Rerank != nil {
		if f.Rerank.Kind == "" {
			return Config{}, LineOf(doc, keyErrorf("rerank", "rerank: needs a kind (%s)", strings.Join(rerank.Kinds, ", ")))
		}
		// depth: 0 written out is refused, not read as the default (100).
		if yamlx.Get(yamlx.Get(doc, "rerank"), "depth") != nil && f.Rerank.Depth == 0 {
			return Config{}, LineOf(doc, rerankDepthError(0))
		}
		cfg.Rerank = *f.Rerank
	}
	remote, err := f.Remote()
	if err != nil {
		return Config{}, LineOf(doc, err)
	}
	cfg.Remote = remote
	if err := cfg.Validate(); err != nil {
		return Config{}, LineOf(doc, err)
	}
	return cfg, nil
}

func (fg *FileGenerate) generate(e *FileExpand) gar.Spec {
	g := gar.Default()
	g.Method, g.Label, g.Model, g.BaseURLs, g.KeyEnv = e.Method, e.LLM, fg.Model, fg.BaseURL, fg.KeyEnv
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
	return g
}

func orNone(s string) string {
	if s == "" {
		return "no method"
	}
	return s
}

// LineOf puts the line of the key a validation error is about in front of
// it, when the document has that key (a setting from a flag has none).
func LineOf(doc *yaml.Node, err error) error {
	var ke *keyError
	if !errors.As(err, &ke) {
		return err
	}
	n, at := doc, (*yaml.Node)(nil)
	for _, k := range ke.path {
		key, value := yamlx.Lookup(n, k)
		if key == nil {
			break
		}
		at, n = key, value
	}
	if at == nil || at.Line == 0 {
		return err
	}
	return &yamlx.Error{Line: at.Line, Msg: err.Error()}
}
