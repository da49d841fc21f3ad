package main

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/r2med/r2med/bm25"
	"github.com/r2med/r2med/nano"
	"github.com/r2med/r2med/tasks"
	"github.com/r2med/r2med/trec"
)

func newNanoCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "nano",
		Short: "Nano sets: compact versions of full tasks, built the HAKARI-Bench way",
	}
	cmd.AddCommand(newNanoBuildCmd())
	return cmd
}

func newNanoBuildCmd() *cobra.Command {
	var d dataFlags
	var out, denseRun string
	var nopt nano.Options
	scheme := string(bm25.Robertson)
	cmd := &cobra.Command{
		Use:   "build",
		Short: "Build a Nano set from a full task and write it in the hub layout (parquet + README configs)",
		Long: `build selects up to 200 queries and 10,000 documents from a full task with
HAKARI-Bench's algorithm (positives first, then hard negatives round-robin,
then corpus order; duplicates and empty texts skipped), ranks a BM25 top-500
candidate list over the Nano corpus, and, given a dense run of the Nano
queries over the Nano corpus, a dense list and the reranking_hybrid list
(RRF k=100, top 100, plus the rank-101 safeguard). The output directory gets
one parquet file per config and split, a README.md with the configs block,
and metadata/<split>.json with the candidate subsets' quality; the same
inputs give byte-identical files.

BM25 here is bm25s's Robertson scheme (k1=1.5, b=0.75) over the Lucene
English analyzer; HAKARI's own english_porter_stop tokenizer is not
reproduced, so candidate lists can differ from NanoR2MED's in places.`,
		Example: `  r2med nano build --task demo --name NanoDemo --out nano/
  r2med nano build --data R2MED/Biology --name NanoR2MEDBiology --out NanoR2MED/`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if out == "" {
				return fmt.Errorf("--out DIR is required")
			}
			sc, err := bm25.ParseScheme(scheme)
			if err != nil {
				return err
			}
			nopt.BM25 = bm25.DefaultParams(sc)
			srcs, err := d.sources()
			if err != nil {
				return err
			}
			if len(srcs) > 1 && (nopt.Split != "" || denseRun != "") {
				return fmt.Errorf("--name and --dense-run name one task's set; build several tasks without them, or one at a time")
			}
			if denseRun != "" {
				if nopt.Dense, err = trec.ReadRunFile(denseRun); err != nil {
					return err
				}
			}
			for _, src := range srcs {
				src.Suite = tasks.R2MED // a Nano set is built from the full task
				t, err := src.Load(cmd.Context())
				if err != nil {
					return err
				}
				o := nopt
				if reg, err := tasks.Lookup(src.Task); err == nil && o.Split == "" {
					o.Split = reg.NanoSplit // NanoR2MED's own split names
				}
				set, err := nano.Build(t, o)
				if err != nil {
					return fmt.Errorf("%s: %w", t.Name, err)
				}
				if err := nano.WriteHub(set, out, set.Split); err != nil {
					return err
				}
				meta, err := set.Metadata()
				if err != nil {
					return err
				}
				if err := printNano(cmd.OutOrStdout(), set, meta, out); err != nil {
					return err
				}
			}
			return nil
		},
	}
	addDataFlags(cmd, &d)
	f := cmd.Flags()
	f.StringVar(&out, "out", "", "directory to write the hub layout into (other splits already there are kept)")
	f.StringVar(&nopt.Split, "name", "", "split name the set is published under (default: NanoR2MED's name for R2MED tasks, else the task name); it seeds the safeguard draw")
	f.IntVar(&nopt.QueryLimit, "max-queries", nano.DefaultQueryLimit, "most queries kept")
	f.IntVar(&nopt.DocLimit, "max-docs", nano.DefaultDocLimit, "most documents kept")
	f.IntVar(&nopt.CandidateDepth, "depth", nano.DefaultCandidateDepth, "length of the bm25 and dense candidate lists")
	f.StringVar(&scheme, "bm25", scheme, "BM25 scheme for the bm25 candidates: robertson, r2med, lucene")
	f.StringVar(&nopt.Analyzer, "analyzer", nano.DefaultAnalyzer, "analyzer for the bm25 candidates")
	f.StringVar(&denseRun, "dense-run", "", "TREC run of a dense retriever over the Nano corpus; enables the dense and reranking_hybrid configs")
	f.StringVar(&nopt.DenseConfig, "dense-config", nano.DefaultDenseConfig, "hub config name for the dense list (NanoR2MED uses harrier_oss_v1_270m)")
	f.Int64Var(&nopt.Seed, "seed", nano.DefaultSeed, "seed of the rank-101 safeguard draw")
	return cmd
}

func printNano(w io.Writer, set *nano.Set, meta *nano.Metadata, out string) error {
	fmt.Fprintf(w, "%s: %d queries, %d documents, %d positive judgments (from %s)\n",
		set.Split, len(set.Queries), len(set.Corpus), set.Qrels.Len(), set.Source)
	for _, sub := range []*nano.SubsetMetrics{meta.CandidateSubsets.BM25, meta.CandidateSubsets.Dense, meta.CandidateSubsets.Hybrid} {
		if sub == nil {
			continue
		}
		fmt.Fprintf(w, "  %-20s nDCG@10 %.4f  hit@10 %.4f  recall@100 %.4f\n", sub.Config, float64(sub.NDCGAt10), float64(sub.HitAt10), float64(sub.RecallAt100))
	}
	_, err := fmt.Fprintf(w, "  %s\n", filepath.Join(out, "README.md"))
	return err
}
