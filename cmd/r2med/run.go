package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/r2med/r2med/bm25"
	"github.com/r2med/r2med/cache"
	"github.com/r2med/r2med/internal/progress"
	"github.com/r2med/r2med/leaderboard"
	"github.com/r2med/r2med/pipeline"
)

func newRunCmd() *cobra.Command {
	var d dataFlags
	var scheme, out, pipelineFile, retrievers string
	var queryPrefix, docPrefix, garModel, garBaseURL string
	var quiet, overwrite, noCache bool
	var cacheDir string
	cfg := pipeline.DefaultConfig()
	k1, b := -1.0, -1.0
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Index, retrieve and evaluate one task; write run.trec, results.json and manifest.json",
		Example: `  r2med run --task demo --out out/demo
  r2med run --data ../shared/data/nfcorpus --split test --out out/nfcorpus
  r2med run --data DIR --bm25 lucene --k1 0.9 --b 0.4 --top-k 1000 --out out/lucene
  r2med run --task all --out out/bm25                         # the 8 R2MED tasks from the Hugging Face Hub
  r2med run --task all --gar hyde --gar-llm gpt4 --out out/hyde-gpt4
  r2med run --task MedQA-Diag --suite nano --retriever candidates:reranking_hybrid --out out/nano
  r2med run --task all --retriever dense --model bge                   # local ONNX (r2med model pull bge first)
  r2med run --task all --retriever dense --model nv --backend openai --base-url http://gpu:8000/v1
  r2med run --task Biology --retriever bm25,dense --model bge --fuse rrf --rerank tei --rerank-url http://localhost:8081
  r2med run --task all --pipeline hybrid.yaml
  r2med run --task Biology --gar hyde --gar-model Qwen/Qwen2.5-7B-Instruct --gar-base-url http://gpu:8000/v1 --gar-llm qwen-7b

A pipeline file (--pipeline) describes the stages the flags cannot:
  name: hyde-gpt4-hybrid
  top_k: 100
  expand: {method: hyde, llm: gpt4}          # dir: DIR for generations from 'r2med gar generate', or
                                             # generate: {model: M, base_url: URL, temperature: 0.7, seed: 42}
  retrieve:
    - bm25: {scheme: r2med}
    - dense: {model: bge, backend: onnx}
  fuse: {method: rrf, k: 60}                 # or {method: combsum, norm: zscore, weights: [0.3, 0.7]}
  rerank: {kind: tei, base_url: "http://localhost:8081", depth: 100}

Without --out, results go to out/SYSTEM/TASK (R2MED_RESULTS sets the
results directory), where 'r2med results' and 'r2med leaderboard' find them.
API keys come from the environment only (OPENAI_API_KEY, VOYAGE_API_KEY,
…), so they never reach a manifest.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if pipelineFile != "" {
				for _, name := range pipelineFlags {
					if cmd.Flags().Changed(name) {
						return fmt.Errorf("--%s and --pipeline do not mix: put the setting in %s", name, pipelineFile)
					}
				}
				var err error
				if cfg, err = pipeline.LoadFile(pipelineFile); err != nil {
					return err
				}
			} else {
				sc, err := bm25.ParseScheme(scheme)
				if err != nil {
					return err
				}
				cfg.BM25 = bm25.DefaultParams(sc)
				if cmd.Flags().Changed("k1") {
					cfg.BM25.K1 = k1
				}
				if cmd.Flags().Changed("b") {
					cfg.BM25.B = b
				}
				if cmd.Flags().Changed("query-prefix") {
					cfg.Dense.QueryPrefix = &queryPrefix
				}
				if cmd.Flags().Changed("doc-prefix") {
					cfg.Dense.DocPrefix = &docPrefix
				}
				if err := setRetrievers(&cfg, retrievers); err != nil {
					return err
				}
				if garModel != "" {
					g := pipeline.DefaultGenerate()
					g.Method, g.Label, g.Model, g.BaseURL = cfg.GAR.Method, cfg.GAR.LLM, garModel, garBaseURL
					cfg.SetGenerate(g)
				} else if (cfg.GAR.Method == "") != (cfg.GAR.LLM == "") {
					return fmt.Errorf("--gar and --gar-llm go together (e.g. --gar hyde --gar-llm gpt4), unless --gar-model generates the expansions in the run")
				}
			}
			if err := cfg.Validate(); err != nil {
				return err
			}
			srcs, err := d.sources()
			if err != nil {
				return err
			}
			if out == "" {
				out = filepath.Join(resultsDir(), safePathPart(cfg.ModelName()))
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
					dir = filepath.Join(out, t.Name)
				}
				opt := pipeline.Options{Out: dir, Overwrite: overwrite, Progress: progress.Auto(quiet), Command: os.Args, Cache: store}
				if !quiet {
					opt.Log = cmd.ErrOrStderr()
				}
				res, err := pipeline.Run(cmd.Context(), t, cfg, opt)
				if err != nil {
					return fmt.Errorf("%s: %w", t.Name, err)
				}
				if err := printSummary(cmd.OutOrStdout(), t.Name, cfg.ModelName(), res, dir); err != nil {
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
	f.StringVar(&retrievers, "retriever", cfg.Retriever, "retriever: bm25, dense, candidates:CONFIG (a published candidate list; NanoR2MED: candidates:bm25, candidates:harrier_oss_v1_270m, candidates:reranking_hybrid) or run:PATH (a TREC run; {task} is replaced); several, comma-separated, are fused (--fuse)")
	f.StringVar(&pipelineFile, "pipeline", "", "a YAML pipeline file (expand, retrieve, fuse, rerank); see above")
	f.StringVar(&cfg.Dense.Model, "model", "", "dense: a registry model (r2med models) or, with an HTTP backend, any model the server serves")
	f.StringVar(&cfg.Dense.Backend, "backend", "", "dense: onnx (local), openai (any OpenAI-compatible server: vLLM, TEI, Ollama, llama.cpp), tei, voyage; default: the registry's")
	f.StringVar(&cfg.Dense.BaseURL, "base-url", "", "dense: the embedding server's base URL (default: OPENAI_BASE_URL or the backend's)")
	f.StringVar(&cfg.Dense.ModelDir, "model-dir", "", "dense, onnx: a local model directory (default: the Hub cache's copy from r2med model pull)")
	f.StringVar(&queryPrefix, "query-prefix", "", "dense: text put before each query (replaces the registry's instruction)")
	f.StringVar(&docPrefix, "doc-prefix", "", "dense: text put before each document (replaces the registry's)")
	f.IntVar(&cfg.Dense.MaxLength, "max-length", 0, "dense: maximum tokens per text (default: the registry's)")
	f.IntVar(&cfg.Dense.Dimensions, "dimensions", 0, "dense: output dimension for APIs and Matryoshka models (default: native)")
	f.IntVar(&cfg.Dense.BatchSize, "batch-size", 0, "dense: texts per batch (default: the backend's)")
	f.IntVar(&cfg.Dense.Concurrency, "concurrency", 0, "dense, HTTP: requests in flight (default: the backend's)")
	f.StringVar(&cfg.Dense.Pooling, "pooling", "", "dense, onnx: pooling of a model outside the registry: cls, mean, last")
	f.StringVar(&cfg.Dense.Quantize, "quantize", "", "dense: search int8 or binary copies of the document vectors (HAKARI-Bench's variants)")
	f.BoolVar(&cfg.Dense.Rescore, "rescore", false, "dense, with --quantize: reorder the quantized top candidates by their float32 scores")
	f.BoolVar(&cfg.Dense.Normalize, "normalize", false, "dense: L2-normalize embeddings (cosine scoring normalizes anyway; this matters for quantization)")
	f.StringVar(&cacheDir, "cache", "", "cache of embeddings and LLM answers shared by all runs (default: $R2MED_CACHE, else ~/.cache/r2med)")
	f.BoolVar(&noCache, "no-cache", false, "compute embeddings and LLM answers afresh, without reading or writing the cache")
	f.StringVar(&cfg.Fuse.Method, "fuse", "rrf", "with several retrievers: rrf or combsum")
	f.Float64Var(&cfg.Fuse.K, "rrf-k", 60, "RRF constant k (60 as Pyserini; HAKARI-Bench uses 100)")
	f.StringVar(&cfg.Fuse.Norm, "norm", "minmax", "combsum score normalization: minmax, zscore, none")
	f.Float64SliceVar(&cfg.Fuse.Weights, "weights", nil, "combsum weights, one per retriever")
	f.StringVar(&cfg.Rerank.Kind, "rerank", "", "rerank the top of the run: tei, cohere (/v1/rerank: Cohere, Jina, Voyage), llm-pointwise, llm-listwise, onnx")
	f.StringVar(&cfg.Rerank.Model, "rerank-model", "", "reranker model name (HTTP/LLM) ")
	f.StringVar(&cfg.Rerank.BaseURL, "rerank-url", "", "reranker server base URL")
	f.StringVar(&cfg.Rerank.ModelDir, "rerank-model-dir", "", "onnx reranker: a local cross-encoder directory")
	f.IntVar(&cfg.Rerank.Depth, "rerank-depth", 100, "documents reranked per query (R2MED: 10 or 100); only they are kept unless --keep-tail")
	f.BoolVar(&cfg.Rerank.KeepTail, "keep-tail", false, "keep the documents below --rerank-depth after the reranked ones")
	f.BoolVar(&cfg.Rerank.WithoutSafeguard, "without-safeguard", false, "drop a NanoR2MED reranking_hybrid list's rank-101 safeguard before reranking")
	f.StringVar(&garModel, "gar-model", "", "generate the --gar expansions in the run with this model of an OpenAI-compatible server (R2MED's sampling; the key from OPENAI_API_KEY; more settings in a pipeline file's expand: generate:)")
	f.StringVar(&garBaseURL, "gar-base-url", "", "with --gar-model: the LLM server's API root (default $OPENAI_BASE_URL, then OpenAI)")
	f.StringVar(&cfg.GARDir, "gar-dir", "", "directory of generations in R2MED's layout (METHOD/LLM/query_with_hydoc.jsonl), e.g. from r2med gar generate; {task} is replaced by the task name; default: the task's own")
	f.StringVar(&scheme, "bm25", "r2med", "BM25 scoring: r2med (gensim, as R2MED published), lucene (Lucene ≥8 BM25Similarity), robertson (bm25s, HAKARI-Bench)")
	f.Float64Var(&k1, "k1", 0, "BM25 k1 (default: the scheme's, 0.9 for r2med/lucene, 1.5 for robertson)")
	f.Float64Var(&b, "b", 0, "BM25 b (default: the scheme's, 0.4 for r2med/lucene, 0.75 for robertson)")
	f.StringVar(&cfg.GAR.Method, "gar", "", "generation-augmented retrieval with published LLM outputs: hyde, query2doc, lamer, search-o1, search-r1 (read from DATA/<method>/<llm>/query_with_hydoc.jsonl)")
	f.StringVar(&cfg.GAR.LLM, "gar-llm", "", "the LLM whose generations --gar uses (R2MED's names: gpt4, qwen-72b, r1-llama-70b, …)")
	f.StringVar(&cfg.Analyzer, "analyzer", cfg.Analyzer, "analyzer for documents and queries")
	f.IntVar(&cfg.TopK, "top-k", cfg.TopK, "documents kept per query")
	f.StringVar(&out, "out", "", "output directory; with several tasks, one sub-directory per task (default: out/SYSTEM/TASK, or $R2MED_RESULTS/SYSTEM/TASK)")
	f.BoolVar(&quiet, "quiet", false, "no progress bars or stage messages")
	f.BoolVar(&overwrite, "overwrite", false, "redo the run even when --out already holds it")
	return cmd
}

func printSummary(w io.Writer, task, system string, out *pipeline.Outcome, dir string) error {
	t := func(key string) float64 { v, _ := out.Result.Metric(key); return v }
	state := ""
	if out.Skipped {
		state = " (unchanged, reused)"
	}
	_, err := fmt.Fprintf(w, "%s  %s%s\n  nDCG@10 %.4f  Recall@100 %.4f  MAP@100 %.4f  MRR %.4f  P@10 %.4f\n  %s\n",
		task, system, state,
		t("ndcg_at_10"), t("recall_at_100"), t("map_at_100"), t("mrr"), t("precision_at_10"),
		filepath.Join(dir, pipeline.ResultsFile))
	return err
}

// printAverages prints the per-task means and the unweighted mean over
// tasks, ×100 with two decimals, as R2MED's tables report them.
func printAverages(w io.Writer, done []*pipeline.Outcome) error {
	keys := []struct{ key, label string }{{"ndcg_at_10", "nDCG@10"}, {"recall_at_100", "Recall@100"}, {"mrr", "MRR"}}
	fmt.Fprintf(w, "\n%-18s", "task")
	for _, k := range keys {
		fmt.Fprintf(w, " %10s", k.label)
	}
	fmt.Fprintln(w)
	sums := make([]float64, len(keys))
	for _, o := range done {
		fmt.Fprintf(w, "%-18s", o.Result.DatasetName)
		for i, k := range keys {
			v, _ := o.Result.Metric(k.key)
			v *= 100
			sums[i] += v
			fmt.Fprintf(w, " %10.2f", v)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "%-18s", fmt.Sprintf("average (%d)", len(done)))
	for i := range keys {
		fmt.Fprintf(w, " %10.2f", sums[i]/float64(len(done)))
	}
	_, err := fmt.Fprintln(w)
	return err
}

// pipelineFlags change the pipeline and so cannot be given with --pipeline.
var pipelineFlags = []string{"retriever", "bm25", "k1", "b", "gar", "gar-llm", "gar-dir", "analyzer", "top-k",
	"model", "backend", "base-url", "model-dir", "query-prefix", "doc-prefix", "max-length", "dimensions", "batch-size", "concurrency", "pooling", "quantize", "rescore", "normalize",
	"gar-model", "gar-base-url", "fuse", "rrf-k", "norm", "weights", "rerank", "rerank-model", "rerank-url", "rerank-model-dir", "rerank-depth", "keep-tail", "without-safeguard"}

// setRetrievers turns --retriever's comma-separated list into the first
// retriever and the fused rest; each kind takes its flags (bm25's, or the
// dense ones).
func setRetrievers(cfg *pipeline.Config, list string) error {
	first := cfg.Retrieval
	cfg.Also = nil
	for i, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			return fmt.Errorf("--retriever %q has an empty entry", list)
		}
		r := first
		r.Retriever = name
		if i == 0 {
			cfg.Retrieval = r
			continue
		}
		cfg.Also = append(cfg.Also, r)
	}
	return nil
}

// resultsDir is where runs go without --out, and where results and
// leaderboard look: $R2MED_RESULTS, else ./out.
func resultsDir() string {
	if d := os.Getenv("R2MED_RESULTS"); d != "" {
		return d
	}
	return leaderboard.DefaultDir
}

// safePathPart makes a system name usable as one directory name.
func safePathPart(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r == 0 || r == ':' {
			return '_'
		}
		return r
	}, s)
}
