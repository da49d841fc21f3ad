package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/r2med/r2med/agent"
	"github.com/r2med/r2med/expand"
	"github.com/r2med/r2med/internal/httpx"
	"github.com/r2med/r2med/internal/progress"
	"github.com/r2med/r2med/internal/reuse"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/llm"
	"github.com/r2med/r2med/results"
	"github.com/r2med/r2med/retrieve"
	"github.com/r2med/r2med/usage"
)

// Generate says how an LLM expands a task's queries: HyDE, Query2doc and
// LameR prompts, BRIGHT-style query reasoning, or agentic search
// (search-r1, search-o1) over the task's BM25 index. The result is a
// generation set in R2MED's layout, used by the retrievers exactly like a
// published one.
type Generate struct {
	Method string // one of GenerateMethods
	Model  string // the model the server serves
	// BaseURLs are the OpenAI-compatible API roots: one server, or a
	// fleet of servers of the same model; a value may be a file of URLs
	// (httpx.ReadURLs). Empty: $OPENAI_BASE_URL, then OpenAI.
	BaseURLs []string
	// KeyEnv names the environment variable holding the API key (default
	// OPENAI_API_KEY): keys never sit in pipeline files or manifests.
	KeyEnv string
	// Label names the LLM in paths and picks R2MED's rules for its output
	// (a reasoning name such as qwq-32b keeps "<think>…</think>answer");
	// empty derives one from Model.
	Label       string
	Temperature float64
	TopP        float64
	Seed        *int64
	MaxTokens   int
	Concurrency int
	Style       string // post, exam, case, similar-case; empty: the task's
	Domain      string // the post style's domain; empty: the task's
	Templates   string // directory of edited templates; empty: built in
	// Agentic search bounds.
	MaxSearches, SearchK, TokenBudget int
}

// DefaultGenerate is R2MED's vLLM sampling: temperature 0.7, seed 42,
// 10,240 tokens, with agentic bounds of 5 searches of 3 passages and
// 16,384 completion tokens per query.
func DefaultGenerate() Generate {
	seed := int64(42)
	return Generate{Temperature: 0.7, Seed: &seed, MaxTokens: 10240, Concurrency: 8, MaxSearches: 5, SearchK: 3, TokenBudget: 16384}
}

// LLMName is the label the generations are stored and ruled under.
func (g Generate) LLMName() string {
	if g.Label != "" {
		return g.Label
	}
	s := g.Model
	if i := strings.LastIndexAny(s, `/\`); i >= 0 {
		s = s[i+1:]
	}
	s = strings.ToLower(strings.Map(func(r rune) rune {
		if r == ':' || r == ' ' || r < ' ' {
			return '-'
		}
		return r
	}, s))
	if s == "" || s == "." || s == ".." {
		return "llm"
	}
	return s
}

// GenerateMethods are the methods Generate makes: expand's prompted ones
// (expand.GenerationMethods: hyde, query2doc, lamer and both
// query-reasoning modes) and agentic search (search-r1, search-o1).
func GenerateMethods() []string {
	return append(expand.GenerationMethods(), expand.SearchR1, expand.SearchO1)
}

func (g Generate) validate() error {
	methods := GenerateMethods()
	switch {
	case g.Method == "":
		return fmt.Errorf("a generation method is required: %s", strings.Join(methods, ", "))
	case !slices.Contains(methods, g.Method):
		return fmt.Errorf("generation method %q: generation supports %s", g.Method, strings.Join(methods, ", "))
	}
	if g.Model == "" {
		return errors.New("the LLM model is required: the name your server serves (e.g. Qwen/Qwen2.5-7B-Instruct, gpt-4o)")
	}
	if g.Style != "" {
		if _, err := expand.ParseStyle(g.Style); err != nil {
			return err
		}
	}
	_, err := expand.LoadPrompts(g.Templates)
	return err
}

func (g Generate) describe() map[string]any {
	m := map[string]any{"method": g.Method, "model": g.Model, "llm": g.LLMName(), "temperature": g.Temperature,
		"top_p": g.TopP, "max_tokens": g.MaxTokens}
	if g.Seed != nil {
		m["seed"] = *g.Seed
	}
	for k, v := range map[string]string{"style": g.Style, "domain": g.Domain, "templates": g.Templates} {
		if v != "" {
			m[k] = v
		}
	}
	if g.Method == expand.SearchR1 || g.Method == expand.SearchO1 {
		m["max_searches"], m["search_k"], m["token_budget"] = g.MaxSearches, g.SearchK, g.TokenBudget
	} else if p, err := expand.LoadPrompts(g.Templates); err == nil {
		// The prompts' text, not just their directory: an edited template
		// must not reuse answers to the old one.
		m["prompts_sha256"] = p.Digest()
	}
	return m
}

// generateStage makes the run's generations and keeps them, with their
// generation manifest, in Options.Out/stages/expand: a rerun with the same
// data and settings reads them back instead of asking again (and the LLM
// cache answers whatever an interrupted stage had asked). The generation
// manifest, agentic traces included, goes into the run manifest; what the
// answers cost and which cache entries they are, into cs.
func generateStage(ctx context.Context, task *ir.Task, g Generate, remote Remote, opt Options, m *results.Manifest, cs *calls) ([]expand.Generation, error) {
	fp := reuse.Of(dataFingerprint(m, expand.Source{}, nil), g.describe(), 0)
	st := opt.stages(cs, m)
	label := g.LLMName()
	dir := filepath.Join(st.dir, "expand")
	rel := func(name string) string {
		r, _ := filepath.Rel(st.dir, filepath.Join(expand.Dir(dir, g.Method, label), name))
		return filepath.ToSlash(r)
	}
	files := append([]string{rel(expand.FileName), rel(expand.ManifestName)}, callFiles("expand")...)
	if st.reusable("expand", fp, files...) {
		if gens, err := expand.LoadDir(dir, g.Method, label); err == nil {
			if counts, err := cs.reuse(st.dir, "expand"); err == nil {
				maps.Copy(m.Counts, counts)
				m.Details["expand"] = map[string]any{"reused": filepath.Join(expand.Dir(dir, g.Method, label), expand.ManifestName)}
				return gens, nil
			}
		}
	}
	sc := cs.begin()
	gopt := GenerateOptions{Progress: opt.Progress, Log: opt.warn(), Remote: remote, Meter: sc.meter, Replay: opt.Replay}
	if opt.Cache != nil {
		gopt.Cache = opt.Cache
	}
	var res *expand.GenerateResult
	err := m.Time("expand", func() error {
		var err error
		res, err = Expand(ctx, task, g, gopt)
		return err
	})
	if err == nil {
		err = res.Manifest.Unusable()
	}
	if err != nil {
		cs.end(sc, "", "expand", nil) // the usage counts; nothing is kept
		return nil, err
	}
	gm := res.Manifest
	if s := gm.FallbackSummary(); s != "" {
		logf(opt.Log, "%s: warning: %s", task.Name, s)
	}
	counts := map[string]int{"generation_fallbacks": len(gm.Fallbacks), "generations_requested": gm.Requested, "generations_cached": gm.Cached}
	maps.Copy(m.Counts, counts)
	m.Details["expand"] = gm
	if st.dir == "" {
		cs.end(sc, "", "expand", nil)
	} else {
		stage := st.stage("expand")
		if err := stage.Begin(); err != nil {
			return nil, err
		}
		if err := cs.end(sc, st.dir, "expand", counts); err != nil {
			return nil, err
		}
		if _, err := res.WriteDir(dir); err != nil {
			return nil, err
		}
		if err := stage.Keep(fp, files...); err != nil {
			return nil, err
		}
	}
	return res.Generations(), nil
}

// GenerateOptions are the generation's run-time companions: they change
// speed, logging and accounting, never the answers.
type GenerateOptions struct {
	Cache    llm.Store // answers reused across runs; nil asks every time
	Progress progress.Factory
	// Log hears retried requests and a fleet's servers taken out and let
	// back (already redacted); nil is silent.
	Log io.Writer
	// Remote bounds the requests (timeout, retries, per-server
	// concurrency).
	Remote Remote
	// Meter hears what every answer cost; nil counts nothing.
	Meter *usage.Meter
	// Replay answers from Cache only: a prompt the cache lacks fails,
	// and nothing is sent.
	Replay bool
}

// Client is the LLM client the generation asks (Expand's, and the
// search service's): g's servers (a fleet when several; files of URLs
// read), the key from g.KeyEnv, and opt's cache, bounds, meter and
// replay.
func (g Generate) Client(opt GenerateOptions) (*llm.Client, error) {
	keyEnv := g.KeyEnv
	if keyEnv == "" {
		keyEnv = "OPENAI_API_KEY"
	}
	urls, err := httpx.ReadURLs(g.BaseURLs)
	if err != nil {
		return nil, err
	}
	if opt.Replay && opt.Cache == nil {
		return nil, errors.New("replay answers from the cache, and there is none (drop --no-cache)")
	}
	hc := opt.Remote.Client(opt.Log, "LLM")
	lo := llm.Options{APIKey: os.Getenv(keyEnv), Model: g.Model, Cache: opt.Cache, HTTP: &hc, Fleet: opt.Remote.Fleet(opt.Log),
		Concurrency: g.Concurrency, Meter: opt.Meter, Replay: opt.Replay}
	if len(urls) > 0 {
		lo.BaseURL, lo.BaseURLs = urls[0], urls[1:]
	}
	return llm.New(lo)
}

// Request is the model and sampling every prompt is sent with (messages
// are set per query).
func (g Generate) Request() llm.Request {
	return llm.Request{Model: g.Model, Temperature: g.Temperature, TopP: g.TopP, MaxTokens: g.MaxTokens, Seed: g.Seed}
}

// Expand asks the LLM for every query of task and returns the generation
// set; queries whose answer was unusable keep their own text, and the
// manifest lists them.
func Expand(ctx context.Context, task *ir.Task, g Generate, opt GenerateOptions) (*expand.GenerateResult, error) {
	if err := g.validate(); err != nil {
		return nil, err
	}
	client, err := g.Client(opt)
	if err != nil {
		return nil, err
	}
	req := g.Request()
	subject, err := SubjectOf(task.Name, g)
	if err != nil {
		return nil, err
	}
	label := g.LLMName()
	bar := opt.Progress.New(len(task.Queries), fmt.Sprintf("%s %s/%s", task.Name, g.Method, label))
	defer bar.Done()
	tick := func(int, int) { bar.Add(1) }
	if g.Method == expand.SearchR1 || g.Method == expand.SearchO1 {
		return expandAgent(ctx, client, task, g, subject, req, tick)
	}
	prompts, err := expand.LoadPrompts(g.Templates)
	if err != nil {
		return nil, err
	}
	cfg := expand.GenerateConfig{Method: g.Method, LLM: label, Subject: subject, Prompts: prompts, Request: req, Settings: client.Describe(req)}
	if g.Method == expand.LameR {
		if cfg.Passages, err = bm25Passages(ctx, task, expand.LameRDepth); err != nil {
			return nil, fmt.Errorf("lamer's BM25 passages: %w", err)
		}
	}
	return expand.Generate(ctx, client, task, cfg, tick)
}

func expandAgent(ctx context.Context, client *llm.Client, task *ir.Task, g Generate, subject expand.Subject, req llm.Request, tick func(int, int)) (*expand.GenerateResult, error) {
	search, err := bm25Searcher(ctx, task)
	if err != nil {
		return nil, err
	}
	cfg := agent.Config{Protocol: agent.SearchR1, Request: req, MaxSearches: g.MaxSearches, K: g.SearchK, TokenBudget: g.TokenBudget}
	if g.Method == expand.SearchO1 {
		cfg.Protocol = agent.SearchO1
	}
	if subject.Style == expand.StyleSimilarCase {
		cfg.Target = "a similar patient case that helps diagnose this case"
	}
	concurrency := g.Concurrency
	if concurrency <= 0 {
		concurrency = 8
	}
	traces, err := agent.RunAll(ctx, client, search, task.Queries, cfg, concurrency, tick)
	if err != nil {
		return nil, err
	}
	label := g.LLMName()
	m := expand.GenerationManifest{
		Method: g.Method, LLM: label, Model: g.Model, Format: expand.FormatOf(label).String(),
		Task: task.Name, Style: subject.Style, Settings: client.Describe(req),
		System: "You are a helpful assistant.", Queries: len(task.Queries), Fallbacks: []expand.Fallback{}, Traces: traces,
	}
	m.Settings["max_searches"], m.Settings["search_k"], m.Settings["token_budget"] = g.MaxSearches, g.SearchK, g.TokenBudget
	for _, tr := range traces {
		m.Usage.PromptTokens += tr.PromptTokens
		m.Usage.CompletionTokens += tr.CompletionTokens
		if tr.Fallback {
			m.Fallbacks = append(m.Fallbacks, expand.Fallback{ID: tr.QueryID, Reason: tr.Stop + ": " + tr.Reason})
		}
		for _, st := range tr.Steps {
			if st.Cached {
				m.Cached++
			} else {
				m.Requested++
			}
		}
	}
	m.Usage.TotalTokens = m.Usage.PromptTokens + m.Usage.CompletionTokens
	return expand.NewResult(task, agent.Generations(task.Queries, traces, label), m), nil
}

// SubjectOf is how prompts address the task's queries: the task's own
// style and domain, or the ones given.
func SubjectOf(task string, g Generate) (expand.Subject, error) {
	s, err := expand.SubjectOf(task)
	if err != nil && g.Style == "" {
		return s, fmt.Errorf("%w: give a prompt style (--style post|exam|case|similar-case, and --domain for posts; r2med run: --gar-style and --gar-domain; a pipeline file: style: and domain: under expand: generate:)", err)
	}
	if g.Style != "" {
		style, err := expand.ParseStyle(g.Style)
		if err != nil {
			return s, err
		}
		if style != s.Style {
			s.Domain = ""
		}
		s.Style = style
	}
	if g.Domain != "" {
		s.Domain = g.Domain
	}
	if s.Style == expand.StylePost && s.Domain == "" {
		return s, fmt.Errorf("task %s: the post style needs a domain (--domain, e.g. Biology; r2med run: --gar-domain)", task)
	}
	return s, nil
}

// bm25Searcher answers an agent's searches with R2MED's BM25 over the
// task's corpus.
func bm25Searcher(ctx context.Context, task *ir.Task) (agent.Searcher, error) {
	r, err := retrieve.New(ctx, retrieve.DefaultBM25(), task, retrieve.Env{})
	if err != nil {
		return nil, err
	}
	text := make(map[string]string, len(task.Corpus))
	for _, d := range task.Corpus {
		text[d.ID] = d.Text
	}
	return func(ctx context.Context, query string, k int) ([]agent.Passage, error) {
		hits, err := retrieve.SearchOne(ctx, r, retrieve.Query{Text: query}, k)
		if err != nil {
			return nil, err
		}
		out := make([]agent.Passage, len(hits))
		for i, h := range hits {
			out[i] = agent.Passage{ID: h.DocID, Text: text[h.DocID], Score: h.Score}
		}
		return out, nil
	}, nil
}

// bm25Passages retrieves each query's top k document texts with R2MED's
// BM25, as LameR's prompts take them.
func bm25Passages(ctx context.Context, task *ir.Task, k int) ([][]string, error) {
	r, err := retrieve.New(ctx, retrieve.DefaultBM25(), task, retrieve.Env{})
	if err != nil {
		return nil, err
	}
	run, err := r.Search(ctx, retrieve.Queries(task.Queries), k)
	if err != nil {
		return nil, err
	}
	text := make(map[string]string, len(task.Corpus))
	for _, d := range task.Corpus {
		text[d.ID] = d.Text
	}
	out := make([][]string, len(task.Queries))
	for i, q := range task.Queries {
		for _, h := range run[q.ID] {
			out[i] = append(out[i], text[h.DocID])
		}
	}
	return out, nil
}
