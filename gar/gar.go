// Package gar makes the generations of generation-augmented retrieval
// with an LLM: HyDE, Query2doc and LameR prompts and BRIGHT-style query
// reasoning (package expand's prompts and R2MED's rules for their
// output), and agentic search (package agent: Search-R1, Search-o1) over
// the task's corpus; LameR's passages and the agents' searches come from
// R2MED's BM25 (package retrieve). A generation set is written in R2MED's
// layout and used by the retrievers exactly like a published one.
package gar

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/r2med/r2med/agent"
	"github.com/r2med/r2med/expand"
	"github.com/r2med/r2med/internal/httpx"
	"github.com/r2med/r2med/internal/progress"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/llm"
	"github.com/r2med/r2med/retrieve"
	"github.com/r2med/r2med/usage"
)

// Spec says how an LLM expands a task's queries: HyDE, Query2doc and
// LameR prompts, BRIGHT-style query reasoning, or agentic search
// (search-r1, search-o1) over the task's BM25 index. The result is a
// generation set in R2MED's layout, used by the retrievers exactly like a
// published one.
type Spec struct {
	Method string // one of Methods
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

// Default is R2MED's vLLM sampling: temperature 0.7, seed 42, 10,240
// tokens, with agentic bounds of 5 searches of 3 passages and 16,384
// completion tokens per query.
func Default() Spec {
	seed := int64(42)
	return Spec{Temperature: 0.7, Seed: &seed, MaxTokens: 10240, Concurrency: 8, MaxSearches: 5, SearchK: 3, TokenBudget: 16384}
}

// LLMName is the label the generations are stored and ruled under.
func (g Spec) LLMName() string {
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

// Methods are the methods a Spec makes: expand's prompted ones
// (expand.GenerationMethods: hyde, query2doc, lamer and both
// query-reasoning modes) and agentic search (search-r1, search-o1).
func Methods() []string {
	return append(expand.GenerationMethods(), expand.SearchR1, expand.SearchO1)
}

// Validate checks the settings before any LLM is asked.
func (g Spec) Validate() error {
	methods := Methods()
	switch {
	case g.Method == "":
		return fmt.Errorf("a generation method is required: %s", strings.Join(methods, ", "))
	case !slices.Contains(methods, g.Method):
		return fmt.Errorf("generation method %q: generation supports %s", g.Method, strings.Join(methods, ", "))
	}
	if g.Model == "" {
		return errors.New("the LLM model is required: the name your server serves (e.g. Qwen/Qwen2.5-7B-Instruct, gpt-4o)")
	}
	switch {
	case g.Temperature < 0:
		return fmt.Errorf("sampling temperature %v: want 0 (greedy) or more", g.Temperature)
	case g.TopP < 0 || g.TopP > 1:
		return fmt.Errorf("sampling top_p %v: want a probability mass in (0, 1], or 0 for the server's default", g.TopP)
	case g.MaxTokens < 0:
		return fmt.Errorf("max_tokens %d: want a number of tokens, or 0 for the server's default", g.MaxTokens)
	}
	if g.Method == expand.SearchR1 || g.Method == expand.SearchO1 {
		for _, b := range []struct {
			name string
			v    int
		}{{"max_searches", g.MaxSearches}, {"search_k", g.SearchK}, {"token_budget", g.TokenBudget}} {
			if b.v < 1 {
				return fmt.Errorf("%s %d: want at least 1", b.name, b.v)
			}
		}
	}
	if g.Style != "" {
		if _, err := expand.ParseStyle(g.Style); err != nil {
			return err
		}
	}
	_, err := expand.LoadPrompts(g.Templates)
	return err
}

// Describe lists the settings that change the generations (the prompts'
// text included), for manifests and fingerprints.
func (g Spec) Describe() map[string]any {
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

// Options are the generation's run-time companions: they change speed,
// logging and accounting, never the answers.
type Options struct {
	Cache    llm.Store // answers reused across runs; nil asks every time
	Progress progress.Factory
	// Log hears a fleet's servers taken out and let back (already
	// redacted); nil is silent.
	Log io.Writer
	// HTTP bounds each request (timeout, retries, who hears them: zero,
	// httpx's defaults); Fleet tunes fleets of servers.
	HTTP  httpx.Client
	Fleet httpx.FleetOptions
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
func (g Spec) Client(opt Options) (*llm.Client, error) {
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
	hc := opt.HTTP
	lo := llm.Options{APIKey: os.Getenv(keyEnv), Model: g.Model, Cache: opt.Cache, HTTP: &hc, Fleet: opt.Fleet,
		Concurrency: g.Concurrency, Meter: opt.Meter, Replay: opt.Replay}
	if len(urls) > 0 {
		lo.BaseURL, lo.BaseURLs = urls[0], urls[1:]
	}
	return llm.New(lo)
}

// Request is the model and sampling every prompt is sent with (messages
// are set per query).
func (g Spec) Request() llm.Request {
	return llm.Request{Model: g.Model, Temperature: g.Temperature, TopP: g.TopP, MaxTokens: g.MaxTokens, Seed: g.Seed}
}

// Expand asks the LLM for every query of task and returns the generation
// set; queries whose answer was unusable keep their own text, and the
// manifest lists them.
//
// The manifest names the models the server said answered where they are
// not the one asked for (served, as a run manifest's usage names them).
func Expand(ctx context.Context, task *ir.Task, g Spec, opt Options) (*expand.GenerateResult, error) {
	if err := g.Validate(); err != nil {
		return nil, err
	}
	// The generation's own meter hears every answer, so the manifest can
	// name who answered whether or not the caller meters; the caller's
	// meter gets the same tallies.
	own := &usage.Meter{}
	defer func() { opt.Meter.Merge(own.Lines(), false) }()
	withOwn := opt
	withOwn.Meter = own
	client, err := g.Client(withOwn)
	if err != nil {
		return nil, err
	}
	res, err := expandWith(ctx, client, task, g, opt)
	if err != nil {
		return nil, err
	}
	res.Manifest.Served = []string{}
	for _, l := range own.Lines() {
		res.Manifest.Served = append(res.Manifest.Served, l.Served...)
	}
	slices.Sort(res.Manifest.Served)
	res.Manifest.Served = slices.Compact(res.Manifest.Served)
	return res, nil
}

// expandWith is Expand with its client.
func expandWith(ctx context.Context, client *llm.Client, task *ir.Task, g Spec, opt Options) (*expand.GenerateResult, error) {
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
		if cfg.Passages, err = lamerPassages(ctx, task); err != nil {
			return nil, fmt.Errorf("lamer's BM25 passages: %w", err)
		}
	}
	return expand.Generate(ctx, client, task, cfg, tick)
}

func expandAgent(ctx context.Context, client *llm.Client, task *ir.Task, g Spec, subject expand.Subject, req llm.Request, tick func(int, int)) (*expand.GenerateResult, error) {
	bm, err := newBM25(ctx, task)
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
	traces, err := agent.RunAll(ctx, client, bm.search, task.Queries, cfg, concurrency, tick)
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
			if st.Estimated != "" {
				m.Usage.Estimated = st.Estimated
				m.EstimatedAnswers++
			}
		}
	}
	m.Usage.TotalTokens = m.Usage.PromptTokens + m.Usage.CompletionTokens
	return expand.NewResult(task, agent.Generations(task.Queries, traces, label), m), nil
}

// SubjectOf is how prompts address the task's queries: the task's own
// style and domain, or the ones given.
func SubjectOf(task string, g Spec) (expand.Subject, error) {
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

// bm25 is R2MED's BM25 over a task's corpus (retrieve's), which gives
// LameR's prompts their passages and answers the agents' searches.
type bm25 struct {
	r    retrieve.Retriever
	text map[string]string
}

func newBM25(ctx context.Context, task *ir.Task) (*bm25, error) {
	r, err := retrieve.New(ctx, retrieve.DefaultBM25(), task, retrieve.Env{})
	if err != nil {
		return nil, err
	}
	text := make(map[string]string, len(task.Corpus))
	for _, d := range task.Corpus {
		text[d.ID] = d.Text
	}
	return &bm25{r: r, text: text}, nil
}

// search ranks the corpus for query: the top k documents with their
// texts (an agent.Searcher).
func (b *bm25) search(ctx context.Context, query string, k int) ([]agent.Passage, error) {
	hits, err := retrieve.SearchOne(ctx, b.r, retrieve.Query{Text: query}, k)
	if err != nil {
		return nil, err
	}
	out := make([]agent.Passage, len(hits))
	for i, h := range hits {
		out[i] = agent.Passage{ID: h.DocID, Text: b.text[h.DocID], Score: h.Score}
	}
	return out, nil
}

// lamerPassages are each query's top expand.LameRDepth document texts by
// R2MED's BM25, as LameR's prompts take them.
func lamerPassages(ctx context.Context, task *ir.Task) ([][]string, error) {
	bm, err := newBM25(ctx, task)
	if err != nil {
		return nil, err
	}
	out := make([][]string, len(task.Queries))
	for i, q := range task.Queries {
		ps, err := bm.search(ctx, q.Text, expand.LameRDepth)
		if err != nil {
			return nil, err
		}
		for _, p := range ps {
			out[i] = append(out[i], p.Text)
		}
	}
	return out, nil
}
