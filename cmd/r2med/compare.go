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
	var qrelsPath, format string
	var metrics []string
	var opt significance.Options
	cmd := &cobra.Command{
		Use:   "compare BASELINE SYSTEM [SYSTEM...]",
		Short: "Paired significance tests of systems against a baseline, per query, with breakdowns",
		Long: `compare tests each SYSTEM against BASELINE on per-query values of one or
more measures (default ndcg_cut.10, trec_eval's, as R2MED reports it; repeat
--metric or give trec_eval's list, recall.10,100, for several): paired
randomization test (exact over all sign flips up to 20 differing queries,
else --permutations random ones), paired t-test, both two-sided; Cohen's d
(paired); a percentile bootstrap interval of the mean difference; wins,
losses and ties; Holm–Bonferroni over the systems; the queries that gain and
lose most. Every judged query of a task counts: a query a run did not answer
scores 0 for it, and how many there are is printed (the report's scatter and
the viewer count the same way). Breakdown groups under 5 queries are listed
without tests; the footer says "exact" only where every sign flip was
enumerated; Cohen's d is "—" where the differences do not vary.

Each argument is a run file (TREC format), a run directory (run.trec and
manifest.json, as r2med run writes), or a results directory holding run
directories for several tasks (a sweep: r2med run --task all --out DIR).
With results directories, runs are paired by task, the overall test pools
the queries of the tasks they share (and says so, naming them), and the
report breaks it down by task, testing each alone, and by task family.

Judgments come from --qrels FILE (one task), from --task/--data, or else
from the data each run's manifest names. Queries with R2MED's body_system
field (from --task/--data or the manifests' data) add a breakdown by it.`,
		Example: `  r2med compare out/bm25/Biology out/hyde/Biology
  r2med compare bm25.trec hyde.trec --qrels qrels.txt --metric recall.100
  r2med compare out/bm25 out/hyde-gpt4 out/query2doc-gpt4 --format markdown
  r2med compare out/bm25 out/hybrid --metric ndcg_cut.10 --metric recall.100 --format latex
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
				return usage(err)
			}
			var ms []measure.Measure
			for _, metric := range metrics {
				parsed, err := measure.ParseIn(metric, measure.TrecProfile)
				if err != nil {
					return usage(fmt.Errorf("--metric: %w", err))
				}
				ms = append(ms, parsed...)
			}
			if len(ms) == 0 {
				return usage(fmt.Errorf("--metric: name at least one measure"))
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
			var reps []*significance.Report
			for _, m := range ms {
				systems, groupings, err := significance.Gather(cmd.Context(), inputs, m, gopt)
				if err != nil {
					return err
				}
				rep, err := significance.Compare(m.String(), systems, groupings, opt)
				if err != nil {
					return err
				}
				reps = append(reps, rep)
			}
			return significance.WriteAll(cmd.OutOrStdout(), reps, f)
		},
	}
	addDataFlags(cmd, &d)
	fl := cmd.Flags()
	fl.StringVar(&qrelsPath, "qrels", "", "TREC qrels file (one task); default: --task/--data, else the data in each run's manifest")
	fl.StringArrayVar(&metrics, "metric", []string{"ndcg_cut.10"}, "trec_eval measure(s) compared per query: ndcg_cut.10, recall.10,100, map_cut.100, P.10, recip_rank, …; repeat for several")
	fl.IntVar(&opt.Permutations, "permutations", 10000, "random sign flips of the randomization test when more than 20 queries differ")
	fl.IntVar(&opt.Resamples, "bootstrap", 10000, "bootstrap resamples of the confidence interval")
	fl.Float64Var(&opt.Level, "level", 0.95, "confidence level of the bootstrap interval")
	fl.Uint64Var(&opt.Seed, "seed", 1, "seed of the permutations and the bootstrap")
	fl.StringVar(&format, "format", "text", "output: text, markdown, json (several metrics: an array) or latex")
	return cmd
}
