package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/r2med/r2med/dataset"
	"github.com/r2med/r2med/leaderboard"
	"github.com/r2med/r2med/measure"
	"github.com/r2med/r2med/pipeline"
	"github.com/r2med/r2med/significance"
)

func init() { register(newCompareCmd) }

func newCompareCmd() *cobra.Command {
	var d dataFlags
	var qrelsPath, format, test string
	var metrics []string
	var opt significance.Options
	cmd := &cobra.Command{
		Use:   "compare BASELINE SYSTEM [SYSTEM...]",
		Short: "Systems × metrics × tasks in one table with all-pairs significance letters (ranx's comparison), then each system against a baseline, per query, with breakdowns",
		Long: `compare first puts every system beside every other, as ranx's compare does:
one table, a row per system (lettered a, b, c…) and a column per task and
measure (and all tasks pooled), each value the mean per query with the
letters of the systems it is significantly better than (--test: rand, the
paired randomization test, or t, the paired t-test, both Holm-adjusted over
the pairs of a column; or tukey, the randomised Tukey HSD test; at --max-p,
default 0.05). Every mark is explained under the table.

Then it tests each SYSTEM against BASELINE on per-query values of one or
more measures (default ndcg_cut.10, trec_eval's, as R2MED reports it, in any
spelling: ndcg@10, ndcg_cut_10, NDCG@10; repeat --metric or give trec_eval's
list, recall.10,100, for several): paired
randomization test (exact over all sign flips up to 20 differing queries,
else --permutations random ones), paired t-test, both two-sided; Cohen's d
(paired); a percentile bootstrap interval of the mean difference; wins,
losses and ties; Holm–Bonferroni over the systems; the queries that gain and
lose most. Every judged query of a task counts: a query a run did not answer
scores 0 for it, and how many there are is printed (the report's scatter and
the viewer count the same way). Breakdown groups under 5 queries are listed
without tests; the footer says "exact" only where every sign flip was
enumerated; Cohen's d is "—" where the differences do not vary; † and ‡ mark
Holm p < 0.05 and < 0.01. Systems are labelled by their names as the
leaderboard gives them (a bare run file by its path; two of one name told
apart by a hash of their settings, and a line saying which settings differ).
A cost section appears
when some run called a model, a breakdown when it has two groups or more.

Each argument is a run file (TREC format), a run directory (run.trec and
manifest.json, as r2med run writes), or a results directory holding run
directories for several tasks (a sweep: r2med run --task all --out DIR).
With results directories, runs are paired by task, the overall test pools
the queries of the tasks they share (and says so, naming them), and the
report breaks it down by task, testing each alone, and by task family.

Judgments come from --qrels FILE (one task), from --task/--data, or else
from the data each run's manifest names. Queries with R2MED's body_system
field (from --task/--data or the manifests' data) add a breakdown by it.

--format latex gives the all-pairs table (one column group per task, scaled
to the line width) and a table per measure against the baseline; they need
\usepackage{booktabs,graphicx}. As text, the all-pairs table keeps to
$COLUMNS (else the terminal's width, else 80), a table per few tasks.`,
		Example: `  r2med compare out/bm25/Biology out/hyde/Biology
  r2med compare bm25.trec hyde.trec --qrels qrels.txt --metric recall.100
  r2med compare out/bm25 out/hyde-gpt4 out/query2doc-gpt4 --format markdown
  r2med compare out/bm25 out/hybrid --metric ndcg_cut.10 --metric recall.100 --format latex
  r2med compare a.trec b.trec --task MedQA-Diag --permutations 100000 --seed 7
  r2med compare out/bm25 out/hyde-gpt4 out/hybrid --metric ndcg@10 --metric recall@100 --test tukey --max-p 0.01`,
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
			if opt.Test, err = significance.ParseTest(test); err != nil {
				return usage(err)
			}
			if !(opt.MaxP > 0 && opt.MaxP < 1) {
				return usage(fmt.Errorf("--max-p %v: give a significance level between 0 and 1, such as 0.05", opt.MaxP))
			}
			// significance.Options reads each of these at 0 as its
			// default: a 0 given here must not become 10,000 or 95%.
			if opt.Permutations < 1 {
				return usage(fmt.Errorf("--permutations %d: give how many random sign flips to draw, 1 or more (such as 10000)", opt.Permutations))
			}
			if opt.Resamples < 1 {
				return usage(fmt.Errorf("--bootstrap %d: give how many bootstrap resamples to draw, 1 or more (such as 10000)", opt.Resamples))
			}
			if !(opt.Level > 0 && opt.Level < 1) {
				return usage(fmt.Errorf("--level %v: give a confidence level between 0 and 1, such as 0.95", opt.Level))
			}
			// Measures without per-query numbers (measure decides which):
			// named, they are refused; in a set, left out and said.
			var ms []measure.Measure
			var left []string                // kinds, in order of appearance
			leftOut := map[string][]string{} // kind → names
			for _, metric := range metrics {
				parsed, err := measure.ParseIn(metric, measure.TrecProfile)
				if err != nil {
					return usage(fmt.Errorf("--metric: %w", err))
				}
				for _, m := range parsed {
					why := m.Family.NoPerQueryNumber()
					switch {
					case why == "":
						ms = append(ms, m)
					case len(parsed) == 1:
						return usage(fmt.Errorf("--metric %s: %s (trec_eval prints no per-query number for it), with nothing per query to test; compare map, or see it with r2med eval -m %s", metric, why, metric))
					default:
						if leftOut[why] == nil {
							left = append(left, why)
						}
						leftOut[why] = append(leftOut[why], m.Name())
					}
				}
			}
			if len(left) > 0 {
				var parts []string
				for _, why := range left {
					parts = append(parts, fmt.Sprintf("%s (%s)", strings.Join(leftOut[why], ", "), why))
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "r2med: compare leaves out %s: no per-query numbers to test\n", strings.Join(parts, ", "))
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
			if len(inputs) > significance.MaxSystems {
				return usage(fmt.Errorf("%d systems: compare letters at most %d (a–z)", len(inputs), significance.MaxSystems))
			}
			leaderboard.NameInputs(inputs)
			gopt := significance.GatherOptions{Load: pipeline.LoadRunTask}
			if qrelsPath != "" {
				if d.task != "" || d.data != "" {
					return fmt.Errorf("give --qrels or --task/--data, not both")
				}
				if gopt.Qrels, err = dataset.ReadQrelsFile(qrelsPath); err != nil {
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
			return significance.WriteAllWith(cmd.OutOrStdout(), reps, f, terminalWidth(cmd.OutOrStdout()))
		},
	}
	addDataFlags(cmd, &d)
	fl := cmd.Flags()
	fl.StringVar(&qrelsPath, "qrels", "", "qrels file (one task): TREC, R2MED's qrels.jsonl or BEIR's TSV; default: --task/--data, else the data in each run's manifest")
	fl.StringArrayVar(&metrics, "metric", []string{"ndcg_cut.10"}, "trec_eval measure(s) compared per query: ndcg_cut.10, recall.10,100, map_cut.100, P.10, recip_rank, …; repeat for several")
	fl.IntVar(&opt.Permutations, "permutations", 10000, "random sign flips of the randomization test when more than 20 queries differ")
	fl.IntVar(&opt.Resamples, "bootstrap", 10000, "bootstrap resamples of the confidence interval")
	fl.Float64Var(&opt.Level, "level", 0.95, "confidence level of the bootstrap interval")
	fl.Uint64Var(&opt.Seed, "seed", 1, "seed of the permutations and the bootstrap")
	fl.StringVar(&format, "format", "text", "output: text, markdown, json (several metrics: an array) or latex")
	fl.StringVar(&test, "test", "rand", "all-pairs test: rand (paired randomization, Fisher's), t (paired t-test, Student's) or tukey (randomised Tukey HSD)")
	fl.Float64Var(&opt.MaxP, "max-p", significance.DefaultMaxP, "all-pairs significance level: a letter marks an adjusted p at or below it")
	return cmd
}
