package main

import (
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/r2med/r2med/cache"
	"github.com/r2med/r2med/config"
	"github.com/r2med/r2med/internal/errtext"
	"github.com/r2med/r2med/internal/progress"
	"github.com/r2med/r2med/pipeline"
	"github.com/r2med/r2med/plan"
	"github.com/r2med/r2med/results"
	"github.com/r2med/r2med/retrieve"
	"github.com/r2med/r2med/tasks"
)

func newRunCmd() *cobra.Command {
	var d dataFlags
	var out, pipelineFile, cacheDir string
	var quiet, overwrite, noCache bool
	var calls callFlags
	var pf *config.Flags
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Index, retrieve and evaluate one task or all; write run.trec, results.json and manifest.json",
		Example: `  r2med run --task demo --out out/demo
  r2med run --data ../shared/data/nfcorpus --split test --out out/nfcorpus
  r2med run --data DIR --bm25 lucene --k1 0.9 --b 0.4 --top-k 1000 --out out/lucene
  r2med run --task all --out out/bm25                         # the 8 R2MED tasks from the Hugging Face Hub
  r2med run --task all --gar hyde --gar-llm gpt4 --out out/hyde-gpt4
  r2med run --task MedQA-Diag --suite nano --retriever candidates:reranking_hybrid --out out/nano
  r2med run --suite bright --task all --out out/bright-bm25          # BRIGHT's 12 tasks, their excluded_ids honoured
  r2med run --suite bright-long --task biology --out out/bright-long   # BRIGHT's long documents, judged by gold_ids_long
  r2med run --suite bright --task leetcode --gar reasoning --gar-llm gpt4   # BRIGHT's published GPT-4 reasoning as the query
  r2med run --data DIR --exclude excluded.tsv                       # documents each query must not retrieve (QUERY-ID DOC-ID lines)
  r2med run --task all --retriever dense --model bge                   # local ONNX (r2med model pull bge first)
  r2med run --task all --retriever dense --model nv --backend openai --base-url http://gpu:8000/v1
  r2med run --task Biology --retriever bm25,dense --model bge --fuse rrf --rerank tei --rerank-url http://localhost:8081
  r2med run --task all --pipeline hybrid.yaml
  r2med run --task all --pipeline hybrid.yaml --top-k 1000 --name hybrid-1000   # flags laid over the file
  r2med run --task Biology --gar hyde --gar-model Qwen/Qwen2.5-7B-Instruct --gar-base-url http://gpu:8000/v1 --gar-llm qwen-7b
  r2med run --data DIR --retriever run:runs/{task}.trec,bm25 --allow-missing-docs
  r2med run --task Biology --rerank insertrank --rerank-model deepseek-r1 --rerank-url http://gpu1:8000/v1 \
      --rerank-url http://gpu2:8000/v1 --rerank-depth 20 --prices prices.yaml   # a fleet of two, costs in the manifest
  r2med run --task Biology --gar reasoning --gar-model Qwen/Qwen3-8B --gar-base-url servers.txt --gar-llm qwen3-8b
  r2med run --task Biology --pipeline published.yaml --cache shared-cache --replay     # from an imported cache, no server
  r2med run --task demo --index demo.idx                       # search an index file (r2med index build): the same run, no indexing
  r2med run --task Biology --retriever dense --index biology.idx --base-url http://gpu:8000/v1   # its vectors; queries by its recipe
  r2med run --task all --pipeline hybrid.yaml --index 'indexes/{task}.idx'    # the file's bm25 and dense retrievers search the index
  r2med run --task demo --retriever weaviate:hybrid --weaviate-url http://localhost:8080 --collection Demo --model bge --backend openai --base-url http://gpu:8000/v1   # after r2med index push

A pipeline file (--pipeline) describes the stages; every pipeline flag sets
one of its keys, and flags given with --pipeline are laid over the file:
  name: hyde-gpt4-hybrid                     # --name
  top_k: 100                                 # --top-k
  expand: {method: hyde, llm: gpt4}          # --gar, --gar-llm; dir: DIR (--gar-dir) for generations
                                             # from 'r2med gar generate', or generate: {model: M,
                                             # base_url: URL, style: case, temperature: 0.7, seed: 42}
  retrieve:                                  # --retriever bm25,dense
    - bm25: {scheme: r2med, k1: 0.9}         # --bm25, --k1, --b, --analyzer
    - dense: {model: bge, backend: onnx}     # --model, --backend, --base-url, …
  fuse: {method: rrf, k: 60}                 # --fuse, --rrf-k; or {method: combsum, norm: zscore, weights: [0.3, 0.7]}
  rerank: {kind: tei, base_url: "http://localhost:8081", depth: 100}   # --rerank, --rerank-url, --rerank-depth
                                             # insertrank: {…, scores: raw, decimals: 2, templates: DIR}
                                             # grouprank: {…, group_size: 10, repeats: 2}
                                             # diver: {…, merge: {pointwise: rank1, listwise: reasonrank, weight: 0.6}}
  request_timeout: 90s                       # --request-timeout: model servers, per request
  retries: 3                                 # --retries
  endpoint_concurrency: 4                    # --endpoint-concurrency: per server of a fleet

A base_url (--base-url, --rerank-url, --gar-base-url) takes several servers
of one model, repeated or as a file with one URL per line: requests are
spread over them, a failing server is taken out for a while, and the run
goes on while one remains.

--index INDEX makes the bm25 and dense retrievers search an index file
instead of indexing or embedding the corpus ({task} in its path stands for
the task's name); the run, and its name, are those building in memory
gives. The file must hold the task's corpus and the part searched, and a
setting it fixed (--bm25, --k1, --b, --analyzer, --model, --backend, the
prefixes and lengths) may be given only as it was built; --base-url and
--model-dir say where the model that embeds queries is, --quantize and
--rescore how the stored vectors are searched. In a pipeline file:
  retrieve: [{index: {path: demo.idx, part: dense, base_url: "http://gpu:8000/v1"}}]

Several retrievers are fused; the system is named by its parts and method,
e.g. rrf(bm25,bge), unless --name names it.

Without --out, results go to out/SYSTEM/TASK (R2MED_RESULTS sets the
results directory), where 'r2med results' and 'r2med leaderboard' find them.
A rerun with the same data and settings reuses the outputs after checking
their checksums; a run with other settings into a directory that holds one
is refused unless --overwrite. --allow-missing-docs also lets a run:PATH
retriever drop (and count) queries and documents the task lacks; queries
of the task's query file that its split does not judge are left out as
trec_eval leaves them, and said. API keys
come from the environment only (OPENAI_API_KEY, VOYAGE_API_KEY, …), and
credentials in a URL never reach a manifest.

The manifest's usage, and the summary, say what the model calls cost:
prompt and completion tokens (the server's, else estimated and said) and
seconds, in total and per query, and in dollars with --prices (a YAML
table, model: {input: $, output: $, cached_input: $} per million tokens;
cached_input prices the prompt tokens a server read from its prompt cache,
else they cost input). The cache
entries a run used are listed beside its manifest, so 'r2med cache export
--manifest' can share exactly them, and --replay reruns the pipeline from
the cache alone: a call it lacks fails the run instead of reaching a server.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := pf.Config(pipelineFile)
			if err != nil {
				return err
			}
			srcs, err := d.sources()
			if err != nil {
				return err
			}
			prices, err := calls.read(noCache)
			if err != nil {
				return err
			}
			if out == "" {
				out = filepath.Join(resultsDir(), results.DirName(cfg.ModelName()))
			}
			var store *cache.Store
			if !noCache && cfg.NeedsCache() {
				if store, err = cache.Open(cacheDir, cache.Options{}); err != nil {
					return err
				}
				defer store.Close()
			}
			var done []*pipeline.Outcome
			for _, src := range srcs {
				t, err := src.Load(cmd.Context())
				if err != nil {
					return err
				}
				dir := out
				if len(srcs) > 1 || !cmd.Flags().Changed("out") {
					dir = filepath.Join(out, results.DirName(t.Name))
				}
				opt := pipeline.Options{Out: dir, Overwrite: overwrite, Progress: progress.Auto(quiet), Command: os.Args, Cache: store,
					AllowMissingDocs: d.opts.AllowMissingDocs, Replay: calls.replay, Prices: prices, Warn: cmd.ErrOrStderr()}
				if !quiet {
					opt.Log = cmd.ErrOrStderr()
				}
				res, err := pipeline.Run(cmd.Context(), t, cfg, opt)
				if err != nil {
					return keptForResume(fmt.Errorf("%s: %w", t.Name, err), resumable(dir, store)...)
				}
				if err := printSummary(cmd.OutOrStdout(), t.Name, res.Name, res, dir); err != nil {
					return err
				}
				done = append(done, res)
			}
			if len(done) > 1 {
				return printAverages(cmd.OutOrStdout(), done)
			}
			return nil
		},
	}
	addDataFlags(cmd, &d)
	f := cmd.Flags()
	pf = config.AddFlags(f)
	f.StringVar(&pipelineFile, "pipeline", "", "a YAML pipeline file (expand, retrieve, fuse, rerank); see above")
	f.StringVar(&cacheDir, "cache", "", "cache of embeddings and LLM answers shared by all runs (default: $R2MED_CACHE, else ~/.cache/r2med)")
	f.BoolVar(&noCache, "no-cache", false, "compute embeddings and LLM answers afresh, without reading or writing the cache")
	calls.add(f, "answer every model call from the cache and send nothing to any server; a call the cache lacks fails the run",
		"price table (YAML: MODEL: {input: DOLLARS, output: DOLLARS, cached_input: DOLLARS} per million tokens, cached_input optional; \"*\" for every other model) that puts dollars in the manifest's usage and the summary")
	f.StringVar(&out, "out", "", "output directory; with several tasks, one sub-directory per task (default: out/SYSTEM/TASK, or $R2MED_RESULTS/SYSTEM/TASK)")
	f.BoolVar(&quiet, "quiet", false, "no progress bars or stage messages")
	f.BoolVar(&overwrite, "overwrite", false, "redo the run even when --out already holds it, and replace a run with other settings there")
	return cmd
}

func printSummary(w io.Writer, task, system string, out *pipeline.Outcome, dir string) error {
	t := func(key string) float64 {
		// The unrounded mean, as trec_eval prints it, where the run was
		// evaluated (fresh or reused); else the result file's.
		if out.Eval != nil {
			if v, ok := out.Eval.Mean(key); ok {
				return v
			}
		}
		v, _ := out.Result.Metric(key)
		return v
	}
	state := ""
	if out.Skipped {
		state = " (unchanged, reused)"
	}
	mean := ""
	if note := results.MeanNote(out.Result, out.Manifest); note != "" {
		mean = "\n  " + note
	}
	if longBright(task) {
		mean = fmt.Sprintf("  Recall@1 %.4f (BRIGHT's long-document measure)", t("recall_at_1")) + mean
	}
	if n := out.Run.Depth(); n < 100 && out.Manifest != nil && n < out.Manifest.Counts["documents"] {
		// Measured at 100 from a shorter list than the corpus allows, as
		// trec_eval measures the file: said, so that Recall@100 is not
		// read as a deeper run's.
		mean += fmt.Sprintf("\n  %s ranks at most %d %s per query: Recall@100 and MAP@100 count those (as trec_eval does from the file)",
			pipeline.RunFile, n, errtext.Plural(n, "document", "documents"))
	}
	mrr := out.Manifest.MRRLabel()
	if note := results.MRRNote(mrr); note != "" {
		// BRIGHT's MRR reads each query's top 1000; this run's, its top k.
		mean += "\n  " + mrr + ": " + note
	}
	_, err := fmt.Fprintf(w, "%s  %s%s\n  nDCG@10 %.4f  Recall@100 %.4f  MAP@100 %.4f  %s %.4f  P@10 %.4f%s\n",
		task, system, state,
		t("ndcg_at_10"), t("recall_at_100"), t("map_at_100"), mrr, t("mrr"), t("precision_at_10"), mean)
	if err != nil {
		return err
	}
	if out.Manifest != nil {
		c := out.Manifest.Counts
		if c["excluded_pairs"] > 0 {
			fmt.Fprintf(w, "  excluded: %d %s for %d %s", c["excluded_pairs"], errtext.Plural(c["excluded_pairs"], "document", "documents"),
				c["excluded_queries"], errtext.Plural(c["excluded_queries"], "query", "queries"))
			if n, ok := c[retrieve.HitsExcluded]; ok {
				fmt.Fprintf(w, "; %d %s removed before the cut", n, errtext.Plural(n, "hit", "hits"))
			}
			fmt.Fprintln(w)
		}
		if n := c[plan.ResumedQueries]; n > 0 {
			fmt.Fprintf(w, "  resumed: %d %s reranked by an interrupted attempt: the model calls below count its calls too; the rerank_* counts and stage times in the manifest are this attempt's\n",
				n, errtext.Plural(n, "query was", "queries were"))
		}
		if u := out.Manifest.Usage; u != nil && u.Calls+u.Cached.Calls > 0 {
			printUsage(w, *u) // what the model calls cost, as the manifest records it
		}
	}
	if _, err := fmt.Fprintf(w, "  %s\n", filepath.Join(dir, pipeline.ResultsFile)); err != nil || out.Manifest == nil {
		return err
	}
	// What a retriever wants the reader to know about these numbers (an
	// approximate index answered, replicas disagreed), one line each.
	for _, key := range slices.Sorted(maps.Keys(out.Manifest.Details)) {
		if line, ok := out.Manifest.Details[key].(string); ok && strings.HasPrefix(key, retrieve.SummaryNote) {
			if _, err := fmt.Fprintf(w, "  %s\n", line); err != nil {
				return err
			}
		}
	}
	return nil
}

// longBright says whether the data named name is a BRIGHT task in the
// long-document setting, which BRIGHT reports by Recall@1 (the main score
// of MTEB's Bright*LongRetrieval tasks).
func longBright(name string) bool {
	_, s, err := tasks.Resolve(name)
	return err == nil && s == tasks.BrightLong
}

// printAverages prints the per-task means and the unweighted mean over
// tasks, ×100 with two decimals, as R2MED's tables report them.
func printAverages(w io.Writer, done []*pipeline.Outcome) error {
	mrr := "MRR"
	for _, o := range done {
		// One top k for the tasks of one command: the label a shallow
		// BRIGHT run takes holds for every row.
		if l := o.Manifest.MRRLabel(); l != "MRR" {
			mrr = l
		}
	}
	keys := []struct{ key, label string }{{"ndcg_at_10", "nDCG@10"}, {"recall_at_100", "Recall@100"}, {"mrr", mrr}}
	if longBright(done[0].Result.DatasetName) {
		keys = append(keys, struct{ key, label string }{"recall_at_1", "Recall@1"})
	}
	width := 18 // BRIGHT's names run longer than R2MED's
	for _, o := range done {
		width = max(width, len(o.Result.DatasetName))
	}
	fmt.Fprintf(w, "\n%-*s", width, "task")
	for _, k := range keys {
		fmt.Fprintf(w, " %10s", k.label)
	}
	fmt.Fprintln(w)
	sums := make([]float64, len(keys))
	for _, o := range done {
		fmt.Fprintf(w, "%-*s", width, o.Result.DatasetName)
		for i, k := range keys {
			v, _ := o.Result.Metric(k.key)
			v *= 100
			sums[i] += v
			fmt.Fprintf(w, " %10.2f", v)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "%-*s", width, fmt.Sprintf("average (%d)", len(done)))
	for i := range keys {
		fmt.Fprintf(w, " %10.2f", sums[i]/float64(len(done)))
	}
	if _, err := fmt.Fprintln(w); err != nil {
		return err
	}
	if rule := done[0].Result.MeanOver; rule != "" {
		_, err := fmt.Fprintf(w, "each task's means over %s; the average is over tasks, unweighted (R2MED's)\n", rule)
		return err
	}
	return nil
}

// resultsDir is where runs go without --out, and where results and
// leaderboard look: $R2MED_RESULTS, else ./out (results.Root).
func resultsDir() string { return results.Root() }
