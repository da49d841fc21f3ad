package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/r2med/r2med/bm25"
	"github.com/r2med/r2med/internal/progress"
	"github.com/r2med/r2med/pipeline"
)

func newRunCmd() *cobra.Command {
	var d dataFlags
	var scheme, out string
	var quiet, overwrite bool
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
  r2med run --task MedQA-Diag --suite nano --retriever candidates:reranking_hybrid --out out/nano`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
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
			if (cfg.GAR.Method == "") != (cfg.GAR.LLM == "") {
				return fmt.Errorf("--gar and --gar-llm go together (e.g. --gar hyde --gar-llm gpt4)")
			}
			if out == "" {
				return fmt.Errorf("--out DIR is required: the run, results and manifest are written there")
			}
			srcs, err := d.sources()
			if err != nil {
				return err
			}
			var done []*pipeline.Outcome
			for _, src := range srcs {
				t, err := src.Load(cmd.Context())
				if err != nil {
					return err
				}
				dir := out
				if len(srcs) > 1 {
					dir = filepath.Join(out, t.Name)
				}
				opt := pipeline.Options{Out: dir, Overwrite: overwrite, Progress: progress.Auto(quiet), Command: os.Args}
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
	f.StringVar(&cfg.Retriever, "retriever", cfg.Retriever, "retriever: bm25, or candidates:CONFIG to evaluate a published candidate list (NanoR2MED: candidates:bm25, candidates:harrier_oss_v1_270m, candidates:reranking_hybrid)")
	f.StringVar(&scheme, "bm25", "r2med", "BM25 scoring: r2med (gensim, as R2MED published), lucene (Lucene ≥8 BM25Similarity), robertson (bm25s, HAKARI-Bench)")
	f.Float64Var(&k1, "k1", 0, "BM25 k1 (default: the scheme's, 0.9 for r2med/lucene, 1.5 for robertson)")
	f.Float64Var(&b, "b", 0, "BM25 b (default: the scheme's, 0.4 for r2med/lucene, 0.75 for robertson)")
	f.StringVar(&cfg.GAR.Method, "gar", "", "generation-augmented retrieval with published LLM outputs: hyde, query2doc, lamer, search-o1, search-r1 (read from DATA/<method>/<llm>/query_with_hydoc.jsonl)")
	f.StringVar(&cfg.GAR.LLM, "gar-llm", "", "the LLM whose generations --gar uses (R2MED's names: gpt4, qwen-72b, r1-llama-70b, …)")
	f.StringVar(&cfg.Analyzer, "analyzer", cfg.Analyzer, "analyzer for documents and queries")
	f.IntVar(&cfg.TopK, "top-k", cfg.TopK, "documents kept per query")
	f.StringVar(&out, "out", "", "output directory (required); with several tasks, one sub-directory per task")
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
