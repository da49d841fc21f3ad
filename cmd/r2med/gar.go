package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/r2med/r2med/cache"
	"github.com/r2med/r2med/config"
	"github.com/r2med/r2med/expand"
	"github.com/r2med/r2med/gar"
	"github.com/r2med/r2med/internal/progress"
	"github.com/r2med/r2med/llm"
	"github.com/r2med/r2med/pipeline"
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

// garFlags are gar generate's flags beyond the generation settings.
type garFlags struct {
	seed           int64 // -1: none; gar.Spec takes a pointer
	out, cacheDir  string
	noCache, quiet bool
	calls          callFlags
	remote         *config.RemoteFlags
}

func newGarGenerateCmd() *cobra.Command {
	var d dataFlags
	var gen gar.Spec
	var g garFlags
	cmd := &cobra.Command{
		Use:   "generate",
		Short: "Ask an OpenAI-compatible LLM server for HyDE, Query2doc, LameR or query-reasoning expansions of a task's queries",
		Long: `generate renders one prompt per query (templates per task style: post,
exam, case, similar-case; see r2med gar templates), asks the LLM server, and
writes OUT/<method>/<llm-name>/query_with_hydoc.jsonl in R2MED's layout
with generation_manifest.json beside it (both query-reasoning modes write
OUT/reasoning/<llm-name>/: the BRIGHT-style reasoning about the query, which
run --gar reasoning retrieves with instead of the query and run --gar
reasoning-append after it). With --data DIR, OUT defaults to
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
(OPENAI_API_KEY), never from a flag. --llm-base-url may be repeated (or
name a file of URLs) for a fleet of servers of one model; --replay answers
from the cache alone and sends nothing.`,
		Example: `  r2med gar generate --method hyde --llm-model Qwen/Qwen2.5-7B-Instruct \
      --llm-base-url http://localhost:8000/v1 --llm-name qwen-7b --data data/Biology
  r2med run --data data/Biology --gar hyde --gar-llm qwen-7b`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runGarGenerate(cmd, &d, gen, &g)
		},
	}
	addDataFlags(cmd, &d)
	f := cmd.Flags()
	f.StringVar(&gen.Method, "method", "", "hyde, query2doc or lamer (lamer puts each query's BM25 top 10 in its prompt); reasoning or reasoning-append (BRIGHT-style query reasoning, one set for both); search-r1 or search-o1 for agentic search over the task's BM25 index")
	f.IntVar(&gen.MaxSearches, "max-searches", 5, "search-r1/search-o1: most searches per query")
	f.IntVar(&gen.SearchK, "search-k", 3, "search-r1/search-o1: passages per search")
	f.IntVar(&gen.TokenBudget, "token-budget", 16384, "search-r1/search-o1: most completion tokens per query over all turns (--max-tokens caps each turn)")
	f.StringVar(&gen.Model, "llm-model", "", "model name the server serves (required)")
	f.StringArrayVar(&gen.BaseURLs, "llm-base-url", nil, "OpenAI-compatible API root, e.g. http://localhost:8000/v1 (default $OPENAI_BASE_URL, then https://api.openai.com/v1); repeat it, or give a file of URLs, for a fleet of servers of one model")
	f.StringVar(&gen.KeyEnv, "llm-api-key-env", "OPENAI_API_KEY", "environment variable holding the API key (unset or empty: no key)")
	f.StringVar(&gen.Label, "llm-name", "", "the LLM's name in paths and R2MED's rules (default: from --llm-model, e.g. qwen2.5-7b-instruct)")
	f.Float64Var(&gen.Temperature, "temperature", 0.7, "sampling temperature (R2MED's vLLM runs: 0.7; its OpenAI runs: 0.8)")
	f.Float64Var(&gen.TopP, "top-p", 0, "nucleus sampling top_p (0: the server's default; R2MED's OpenAI runs: 0.8)")
	f.Int64Var(&g.seed, "seed", 42, "sampling seed (R2MED: 42); -1 sends none")
	f.IntVar(&gen.MaxTokens, "max-tokens", 10240, "most tokens per answer (R2MED: 10240); 0: the server's default")
	f.IntVar(&gen.Concurrency, "concurrency", 8, "requests in flight")
	f.StringVar(&gen.Style, "style", "", "prompt style: post, exam, case or similar-case (default: the task's)")
	f.StringVar(&gen.Domain, "domain", "", `the post style's domain ("Biology", "Medical Science", …; default: the task's)`)
	f.StringVar(&gen.Templates, "templates", "", "directory of edited templates (from r2med gar templates); files it lacks come from the built-in set")
	f.StringVar(&g.out, "out", "", "root directory for <method>/<llm-name>/ (default: the --data directory; required with --task); several tasks go to OUT/<task>/")
	f.StringVar(&g.cacheDir, "cache", "", "answer cache directory (default $R2MED_CACHE or the user cache dir)")
	f.BoolVar(&g.noCache, "no-cache", false, "do not read or write the answer cache")
	f.BoolVar(&g.quiet, "quiet", false, "no progress bars")
	g.calls.add(f, "answer from the cache alone and send nothing; a prompt the cache lacks is an error",
		"price table (as r2med run --prices): print what each task's answers cost")
	g.remote = config.AddRemoteFlags(f)
	return cmd
}

// runGarGenerate generates each task's set with gar.Expand and writes
// it beside the task (or under --out).
func runGarGenerate(cmd *cobra.Command, d *dataFlags, gen gar.Spec, g *garFlags) error {
	if g.seed >= 0 {
		gen.Seed = llm.Seed(g.seed)
	}
	if gen.Method == "" {
		return fmt.Errorf("--method is required: %s", strings.Join(gar.Methods(), ", "))
	}
	if gen.Model == "" {
		return errors.New("--llm-model is required: the model name your server serves (e.g. Qwen/Qwen2.5-7B-Instruct, gpt-4o)")
	}
	srcs, err := d.sources()
	if err != nil {
		return err
	}
	out := g.out
	if out == "" {
		if d.data == "" || strings.HasPrefix(d.data, pipeline.HubURIPrefix) {
			return errors.New("--out is required unless --data names a local task directory (the generations go into it)")
		}
		out = d.data
	}
	stderr := cmd.ErrOrStderr()
	remote, err := g.remote.Apply(config.Remote{})
	if err != nil {
		return err
	}
	opt := remote.Generation(stderr)
	opt.Progress, opt.Replay = progress.Auto(g.quiet), g.calls.replay
	prices, err := g.calls.read(g.noCache)
	if err != nil {
		return err
	}
	if !g.noCache {
		st, err := cache.Open(g.cacheDir, cache.Options{})
		if err != nil {
			return fmt.Errorf("%w (or pass --no-cache)", err)
		}
		defer st.Close()
		opt.Cache = st
	}
	label := gen.LLMName()
	for _, src := range srcs {
		task, err := src.Load(cmd.Context())
		if err != nil {
			return err
		}
		meter := newMeter()
		opt.Meter = meter
		res, err := gar.Expand(cmd.Context(), task, gen, opt)
		if err != nil {
			return fmt.Errorf("%s: %w", task.Name, err)
		}
		m := res.Manifest
		if err := m.Unusable(); err != nil {
			return fmt.Errorf("%s: nothing was written: %w", task.Name, err)
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
		w := cmd.OutOrStdout()
		fmt.Fprintf(w, "%s: %d generations (%d answers from the cache, %d requested, %d fallbacks) in %s\n",
			task.Name, m.Queries, m.Cached, m.Requested, len(m.Fallbacks), path)
		printUsage(w, meter.Summary(m.Queries, prices))
	}
	return nil
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
	cmd.Flags().StringVar(&out, "out", "", "directory to write system.tmpl, hyde.tmpl, query2doc.tmpl, lamer.tmpl, reasoning.tmpl and examples.json into")
	return cmd
}
