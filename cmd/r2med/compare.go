package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/r2med/r2med/measure"
	"github.com/r2med/r2med/pipeline"
	"github.com/r2med/r2med/significance"
	"github.com/r2med/r2med/trec"
)

func init() { register(newCompareCmd) }

func newCompareCmd() *cobra.Command {
	var d dataFlags
	var qrelsPath, metric, format string
	var opt significance.Options
	cmd := &cobra.Command{
		Use:   "compare BASELINE SYSTEM [SYSTEM...]",
		Short: "Paired significance tests of systems against a baseline, per query, with breakdowns",
		Long: `compare tests each SYSTEM against BASELINE on per-query values of one
measure (default ndcg_cut.10, trec_eval's, as R2MED reports it): paired
randomization test (exact over all sign flips up to 20 differing queries,
else --permutations random ones), paired t-test, both two-sided; Cohen's d
(paired); a percentile bootstrap interval of the mean difference; wins,
losses and ties; Holm–Bonferroni over the systems; the queries that gain and
lose most. A query a system lacks counts 0 for it.

Each argument is a run file (TREC format), a run directory (run.trec and
manifest.json, as r2med run writes), or a results directory holding run
directories for several tasks (a sweep: r2med run --task all --out DIR).
With results directories, runs are paired by task, the test is over all
queries of the tasks they share, and the report breaks it down by task and
by task family.

Judgments come from --qrels FILE (one task), from --task/--data, or else
from the data each run's manifest names. Queries with R2MED's body_system
field (from --task/--data or the manifests' data) add a breakdown by it.`,
		Example: `  r2med compare out/bm25/Biology out/hyde/Biology
  r2med compare bm25.trec hyde.trec --qrels qrels.txt --metric recall.100
  r2med compare out/bm25 out/hyde-gpt4 out/query2doc-gpt4 --format markdown
  r2med compare a.trec b.trec --task MedQA-Diag --permutations 100000 --seed 7`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 2 {
				return fmt.Errorf("compare needs a baseline and at least one system to compare with it (got %d argument(s)); e.g. r2med compare out/bm25/Biology out/hyde/Biology", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := significance.ParseFormat(format)
			if err != nil {
				return err
			}
			ms, err := measure.Parse(metric)
			if err != nil {
				return err
			}
			if len(ms) != 1 || ms[0].Family.Hakari() {
				return fmt.Errorf("--metric %q: name one trec_eval measure, such as ndcg_cut.10, recall.100, map_cut.100, P.10 or recip_rank", metric)
			}
			var inputs []significance.Input
			for _, a := range args {
				in, err := significance.Open(a)
				if err != nil {
					return err
				}
				inputs = append(inputs, in)
			}
			gopt := significance.GatherOptions{Load: pipeline.LoadRunTask}
			if qrelsPath != "" {
				if d.task != "" || d.data != "" {
					return fmt.Errorf("give --qrels or --task/--data, not both")
				}
				if gopt.Qrels, err = trec.ReadQrelsFile(qrelsPath); err != nil {
					return err
				}
			} else if d.task != "" || d.data != "" {
				srcs, err := d.sources()
				if err != nil {
					return err
				}
				for _, src := range srcs {
					t, err := src.Load(cmd.Context())
					if err != nil {
						return err
					}
					gopt.Tasks = append(gopt.Tasks, t)
				}
			}
			systems, groupings, err := significance.Gather(cmd.Context(), inputs, ms[0], gopt)
			if err != nil {
				return err
			}
			rep, err := significance.Compare(ms[0].String(), systems, groupings, opt)
			if err != nil {
				return err
			}
			return rep.Write(cmd.OutOrStdout(), f)
		},
	}
	addDataFlags(cmd, &d)
	fl := cmd.Flags()
	fl.StringVar(&qrelsPath, "qrels", "", "TREC qrels file (one task); default: --task/--data, else the data in each run's manifest")
	fl.StringVar(&metric, "metric", "ndcg_cut.10", "trec_eval measure compared per query: ndcg_cut.10, recall.100, map_cut.100, P.10, recip_rank, …")
	fl.IntVar(&opt.Permutations, "permutations", 10000, "random sign flips of the randomization test when more than 20 queries differ")
	fl.IntVar(&opt.Resamples, "bootstrap", 10000, "bootstrap resamples of the confidence interval")
	fl.Float64Var(&opt.Level, "level", 0.95, "confidence level of the bootstrap interval")
	fl.Uint64Var(&opt.Seed, "seed", 1, "seed of the permutations and the bootstrap")
	fl.StringVar(&format, "format", "text", "output: text, markdown or json")
	return cmd
}
