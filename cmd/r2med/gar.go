package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/r2med/r2med/agent"
	"github.com/r2med/r2med/analysis"
	"github.com/r2med/r2med/bm25"
	"github.com/r2med/r2med/cache"
	"github.com/r2med/r2med/dataset"
	"github.com/r2med/r2med/expand"
	"github.com/r2med/r2med/internal/httpx"
	"github.com/r2med/r2med/internal/progress"
	"github.com/r2med/r2med/llm"
)

func init() { register(newGarCmd) }

func newGarCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "gar",
		Short: "Generation-augmented retrieval: generate LLM query expansions in R2MED's layout",
	}
	cmd.AddCommand(newGarGenerateCmd(), newGarTemplatesCmd())
	return cmd
}

// garFlags are the LLM settings of gar generate.
type garFlags struct {
	method, model, baseURL, keyEnv, label   string
	temperature, topP                       float64
	seed                                    int64
	maxTokens, concurrency                  int
	style, domain, templates, out, cacheDir string
	noCache, quiet                          bool
	maxSearches, searchK, tokenBudget       int
}

func newGarGenerateCmd() *cobra.Command {
	var d dataFlags
	g := garFlags{}
	cmd := &cobra.Command{
		Use:   "generate",
		Short: "Ask an OpenAI-compatible LLM server for HyDE, Query2doc or LameR expansions of a task's queries",
		Long: `generate renders one prompt per query (templates per task style: post,
exam, case, similar-case; see r2med gar templates), asks the LLM server, and
writes OUT/<method>/<llm-name>/query_with_hydoc.jsonl in R2MED's layout
with generation_manifest.json beside it. With --data DIR, OUT defaults to
DIR, so r2med run --data DIR --gar METHOD --gar-llm NAME uses the file
exactly like a published generation set.

The --llm-name label picks R2MED's rules for the output: one of R2MED's
reasoning names (qwq-32b, r1-qwen-32b, qwen3-32b, …) stores reasoning and
answer as "<think>…</think>answer" and gets the reasoning-model rules; any
other name stores the answer only (reasoning goes to an extra "reasoning"
field). A query whose answer is unusable (an error after retries, an empty
answer) uses its own text instead; these are listed on stderr and in the
manifest. Answers are cached (--cache), so a rerun or an interrupted run
asks only for what is missing.

The API key is read from the environment variable --llm-api-key-env
(OPENAI_API_KEY), never from a flag.`,
		Example: `  r2med gar generate --method hyde --llm-model Qwen/Qwen2.5-7B-Instruct \
      --llm-base-url http://localhost:8000/v1 --llm-name qwen-7b --data data/Biology
  r2med run --data data/Biology --gar hyde --gar-llm qwen-7b`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runGarGenerate(cmd, &d, &g)
		},
	}
	addDataFlags(cmd, &d)
	f := cmd.Flags()
	f.StringVar(&g.method, "method", "", "hyde, query2doc or lamer (lamer puts each query's BM25 top 10 in its prompt); search-r1 or search-o1 for agentic search over the task's BM25 index")
	f.IntVar(&g.maxSearches, "max-searches", 5, "search-r1/search-o1: most searches per query")
	f.IntVar(&g.searchK, "search-k", 3, "search-r1/search-o1: passages per search")
	f.IntVar(&g.tokenBudget, "token-budget", 16384, "search-r1/search-o1: most completion tokens per query over all turns (--max-tokens caps each turn)")
	f.StringVar(&g.model, "llm-model", "", "model name the server serves (required)")
	f.StringVar(&g.baseURL, "llm-base-url", "", "OpenAI-compatible API root, e.g. http://localhost:8000/v1 (default $OPENAI_BASE_URL, then https://api.openai.com/v1)")
	f.StringVar(&g.keyEnv, "llm-api-key-env", "OPENAI_API_KEY", "environment variable holding the API key (unset or empty: no key)")
	f.StringVar(&g.label, "llm-name", "", "the LLM's name in paths and R2MED's rules (default: from --llm-model, e.g. qwen2.5-7b-instruct)")
	f.Float64Var(&g.temperature, "temperature", 0.7, "sampling temperature (R2MED's vLLM runs: 0.7; its OpenAI runs: 0.8)")
	f.Float64Var(&g.topP, "top-p", 0, "nucleus sampling top_p (0: the server's default; R2MED's OpenAI runs: 0.8)")
	f.Int64Var(&g.seed, "seed", 42, "sampling seed (R2MED: 42); -1 sends none")
	f.IntVar(&g.maxTokens, "max-tokens", 10240, "most tokens per answer (R2MED: 10240); 0: the server's default")
	f.IntVar(&g.concurrency, "concurrency", 8, "requests in flight")
	f.StringVar(&g.style, "style", "", "prompt style: post, exam, case or similar-case (default: the task's)")
	f.StringVar(&g.domain, "domain", "", `the post style's domain ("Biology", "Medical Science", …; default: the task's)`)
	f.StringVar(&g.templates, "templates", "", "directory of edited templates (from r2med gar templates); files it lacks come from the built-in set")
	f.StringVar(&g.out, "out", "", "root directory for <method>/<llm-name>/ (default: the --data directory; required with --task); several tasks go to OUT/<task>/")
	f.StringVar(&g.cacheDir, "cache", "", "answer cache directory (default $R2MED_CACHE or the user cache dir)")
	f.BoolVar(&g.noCache, "no-cache", false, "do not read or write the answer cache")
	f.BoolVar(&g.quiet, "quiet", false, "no progress bars")
	return cmd
}

// labelFromModel turns a model id into a directory name: its last path
// part, lower-cased, with characters unsafe in names replaced.
func labelFromModel(model string) string {
	s := model
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

func runGarGenerate(cmd *cobra.Command, d *dataFlags, g *garFlags) error {
	switch g.method {
	case expand.HyDE, expand.Query2Doc, expand.LameR, expand.SearchR1, expand.SearchO1:
	case "":
		return errors.New("--method is required: hyde, query2doc, lamer, search-r1 or search-o1")
	default:
		return fmt.Errorf("--method %q: generation supports hyde, query2doc, lamer, search-r1 and search-o1", g.method)
	}
	if g.model == "" {
		return errors.New("--llm-model is required: the model name your server serves (e.g. Qwen/Qwen2.5-7B-Instruct, gpt-4o)")
	}
	label := g.label
	if label == "" {
		label = labelFromModel(g.model)
	}
	var style expand.Style
	if g.style != "" {
		var err error
		if style, err = expand.ParseStyle(g.style); err != nil {
			return err
		}
	}
	prompts, err := expand.LoadPrompts(g.templates)
	if err != nil {
		return err
	}
	srcs, err := d.sources()
	if err != nil {
		return err
	}
	out := g.out
	if out == "" {
		if d.data == "" || strings.HasPrefix(d.data, "hf://") {
			return errors.New("--out is required unless --data names a local task directory (the generations go into it)")
		}
		out = d.data
	}
	var store llm.Store
	if !g.noCache {
		dir := g.cacheDir
		if dir == "" {
			dir = cache.DefaultDir()
		}
		st, err := cache.Open(dir, cache.Options{})
		if err != nil {
			return fmt.Errorf("%w (or pass --no-cache)", err)
		}
		defer st.Close()
		store = st
	}
	stderr := cmd.ErrOrStderr()
	hc := &httpx.Client{Notify: func(attempt int, wait time.Duration, err error) {
		fmt.Fprintf(stderr, "r2med: LLM request failed (attempt %d), retrying in %v: %v\n", attempt, wait.Round(1e6), err)
	}}
	client, err := llm.New(llm.Options{
		BaseURL: g.baseURL, APIKey: os.Getenv(g.keyEnv), Model: g.model,
		Cache: store, HTTP: hc, Concurrency: g.concurrency,
	})
	if err != nil {
		return err
	}
	req := llm.Request{Model: g.model, Temperature: g.temperature, TopP: g.topP, MaxTokens: g.maxTokens}
	if g.seed >= 0 {
		req.Seed = llm.Seed(g.seed)
	}
	bars := progress.Auto(g.quiet)
	for _, src := range srcs {
		task, err := src.Load(cmd.Context())
		if err != nil {
			return err
		}
		subject, err := garSubject(task.Name, style, g.domain)
		if err != nil {
			return err
		}
		var res *expand.GenerateResult
		if g.method == expand.SearchR1 || g.method == expand.SearchO1 {
			res, err = garAgent(cmd.Context(), client, task, g, label, subject, req, bars)
		} else {
			res, err = garGenerate(cmd.Context(), client, task, g, label, subject, prompts, req, bars)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", task.Name, err)
		}
		m := res.Manifest
		if len(m.Fallbacks) == m.Queries {
			return fmt.Errorf("%s: no query got a usable answer from %s, so nothing was written; the first failure: %s", task.Name, g.model, m.Fallbacks[0].Reason)
		}
		root := out
		if len(srcs) > 1 {
			root = filepath.Join(out, task.Name)
		}
		path, err := res.WriteDir(root)
		if err != nil {
			return err
		}
		if s := m.FallbackSummary(); s != "" {
			fmt.Fprintf(stderr, "r2med: %s: warning: %s\n", task.Name, s)
		}
		if m.ReasoningDropped > 0 {
			fmt.Fprintf(stderr, "r2med: %s: %d answers came with reasoning, kept out of hy_doc because %q is not one of R2MED's reasoning LLM names; name the LLM like one (e.g. --llm-name qwq-32b) to use R2MED's reasoning-model rules\n", task.Name, m.ReasoningDropped, label)
		}
		fmt.Fprintf(cmd.OutOrStdout(), "%s: %d generations (%d answers from the cache, %d requested, %d fallbacks) in %s\n",
			task.Name, m.Queries, m.Cached, m.Requested, len(m.Fallbacks), path)
	}
	return nil
}

func garGenerate(ctx context.Context, client *llm.Client, task *dataset.Task, g *garFlags, label string, subject expand.Subject, prompts *expand.Prompts, req llm.Request, bars progress.Factory) (*expand.GenerateResult, error) {
	cfg := expand.GenerateConfig{
		Method: g.method, LLM: label, Subject: subject, Prompts: prompts,
		Request: req, Settings: client.Describe(req),
	}
	if g.method == expand.LameR {
		var err error
		if cfg.Passages, err = bm25Passages(ctx, task, expand.LameRDepth, bars); err != nil {
			return nil, fmt.Errorf("lamer's BM25 passages: %w", err)
		}
	}
	bar := bars.New(len(task.Queries), fmt.Sprintf("%s %s/%s", task.Name, g.method, label))
	defer bar.Done()
	return expand.Generate(ctx, client, task, cfg, func(done, total int) { bar.Add(1) })
}

// garAgent runs agentic search over the task's own BM25 index and wraps
// the final answers as generations, with every query's trace in the
// manifest.
func garAgent(ctx context.Context, client *llm.Client, task *dataset.Task, g *garFlags, label string, subject expand.Subject, req llm.Request, bars progress.Factory) (*expand.GenerateResult, error) {
	search, err := bm25Searcher(task, bars)
	if err != nil {
		return nil, err
	}
	cfg := agent.Config{Protocol: agent.SearchR1, Request: req, MaxSearches: g.maxSearches, K: g.searchK, TokenBudget: g.tokenBudget}
	if g.method == expand.SearchO1 {
		cfg.Protocol = agent.SearchO1
	}
	if subject.Style == expand.StyleSimilarCase {
		cfg.Target = "a similar patient case that helps diagnose this case"
	}
	bar := bars.New(len(task.Queries), fmt.Sprintf("%s %s/%s", task.Name, g.method, label))
	traces, err := agent.RunAll(ctx, client, search, task.Queries, cfg, g.concurrency, func(int, int) { bar.Add(1) })
	bar.Done()
	if err != nil {
		return nil, err
	}
	m := expand.GenerationManifest{
		Method: g.method, LLM: label, Model: g.model, Format: expand.FormatOf(label).String(),
		Task: task.Name, Style: subject.Style, Settings: client.Describe(req),
		System: "You are a helpful assistant.", Queries: len(task.Queries), Fallbacks: []expand.Fallback{}, Traces: traces,
	}
	m.Settings["max_searches"], m.Settings["search_k"], m.Settings["token_budget"] = g.maxSearches, g.searchK, g.tokenBudget
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

// bm25Searcher is an agent.Searcher over the task's corpus with R2MED's
// BM25.
func bm25Searcher(task *dataset.Task, bars progress.Factory) (agent.Searcher, error) {
	an, ix, err := bm25Index(task, bars)
	if err != nil {
		return nil, err
	}
	var mu sync.Mutex
	s := ix.NewSearcher()
	return func(ctx context.Context, query string, k int) ([]agent.Passage, error) {
		mu.Lock()
		defer mu.Unlock()
		hits := s.Search(an.Analyze(nil, query), k)
		out := make([]agent.Passage, len(hits))
		for i, h := range hits {
			d := task.Corpus[h.Doc]
			out[i] = agent.Passage{ID: d.ID, Text: d.Text, Score: float64(h.Score)}
		}
		return out, nil
	}, nil
}

func garSubject(task string, style expand.Style, domain string) (expand.Subject, error) {
	s, err := expand.SubjectOf(task)
	if err != nil && style == "" {
		return s, fmt.Errorf("%w: pass --style (and --domain for posts)", err)
	}
	if style != "" {
		if style != s.Style {
			s.Domain = ""
		}
		s.Style = style
	}
	if domain != "" {
		s.Domain = domain
	}
	if s.Style == expand.StylePost && s.Domain == "" {
		return s, fmt.Errorf("task %s: the post style needs --domain (e.g. Biology)", task)
	}
	return s, nil
}

// bm25Passages retrieves each query's top k documents with R2MED's BM25
// (the Lucene English analyzer, gensim's LuceneBM25Model) and returns
// their texts, as LameR's prompts take them.
func bm25Passages(ctx context.Context, task *dataset.Task, k int, bars progress.Factory) ([][]string, error) {
	an, ix, err := bm25Index(task, bars)
	if err != nil {
		return nil, err
	}
	s := ix.NewSearcher()
	out := make([][]string, len(task.Queries))
	var toks []string
	for i, q := range task.Queries {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		toks = an.Analyze(toks[:0], q.Text)
		for _, h := range s.Search(toks, k) {
			out[i] = append(out[i], task.Corpus[h.Doc].Text)
		}
	}
	return out, nil
}

func bm25Index(task *dataset.Task, bars progress.Factory) (analysis.Analyzer, *bm25.Index, error) {
	an, err := analysis.Get("lucene-english")
	if err != nil {
		return nil, nil, err
	}
	ids := make([]string, len(task.Corpus))
	for i, doc := range task.Corpus {
		ids[i] = doc.ID
	}
	bar := bars.New(len(task.Corpus), "indexing "+task.Name)
	defer bar.Done()
	ix, err := bm25.Build(len(task.Corpus), func(i int, dst []string) []string { return an.Analyze(dst, task.Corpus[i].Text) },
		bm25.DefaultParams(bm25.R2MED), bm25.BuildOptions{IDs: ids, Progress: bar.Add})
	return an, ix, err
}

func newGarTemplatesCmd() *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "templates",
		Short: "Write the built-in prompt templates to a directory, to edit and pass to gar generate --templates",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if out == "" {
				return errors.New("--out DIR is required")
			}
			files, err := expand.WriteTemplates(out)
			for _, f := range files {
				fmt.Fprintln(cmd.OutOrStdout(), f)
			}
			return err
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "directory to write system.tmpl, hyde.tmpl, query2doc.tmpl, lamer.tmpl and examples.json into")
	return cmd
}
