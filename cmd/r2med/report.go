package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/r2med/r2med/leaderboard"
	"github.com/r2med/r2med/pipeline"
	"github.com/r2med/r2med/report"
)

func init() { register(newReportCmd) }

func newReportCmd() *cobra.Command {
	var dir, metric, systems, out, format, title, baseline string
	var published, external bool
	cmd := &cobra.Command{
		Use:   "report",
		Short: "A self-contained HTML report (leaderboard, per-task bars, recall@k curves, per-query scatter), or the charts as PNG/SVG",
		Long: `report writes one HTML file that opens offline: CSS, JavaScript and the charts
(inline SVG) are inside it and it loads nothing from the network. It shows the
leaderboard (sortable by clicking a heading), the metric per task as grouped
bars, recall@k curves per task, and the per-query metric of two systems
against each other: one colour per task with its number of queries (every
judged query; a query a run did not answer scores 0), a test per task and one
over all tasks, labelled pooled.

Systems are our runs under --results (and R2MED's published systems with
--published, results later papers printed with --external). --baseline SYSTEM
marks the leaderboard's cells that differ significantly from that system of
ours († p < 0.05, ‡ p < 0.01; paired randomization test, Holm over tasks). Charts show at most 7 systems, one colour each (a colour-blind
safe palette): --systems picks them by ID or name, and the first two of ours
with run files make the scatter; by default our best runs are charted beside
R2MED's three best published systems when --published is given (with only
--external, the later papers' three best), so that each task's group of bars
puts our runs beside those references.

Per-query values come from each run's run.trec and the task's judgments,
loaded from where the run's manifest says its data came from (the demo task is
built in; R2MED tasks come from the Hub cache, so pull them first when
offline).

--format png, svg or pdf writes the three charts as separate files for papers
(bars, recall curves, scatter) into the directory --out names.`,
		Example: `  r2med run --task demo --out out/demo-bm25
  r2med run --task demo --bm25 lucene --out out/demo-lucene
  r2med report --results out --out report.html
  r2med report --results out --published --metric recall@100 --out report.html
  r2med report --results out --systems "ours/bm25 [bm25_scheme=lucene]",nv --format pdf --out figures/`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if out == "" {
				return fmt.Errorf("--out is required: the HTML file to write, or with --format png|svg|pdf the directory for the chart files")
			}
			m, err := leaderboard.ParseMetric(metric)
			if err != nil {
				return usage(err)
			}
			format = strings.ToLower(format)
			if format != "html" {
				if _, err := report.ParseChartFormat(format); err != nil {
					return usage(fmt.Errorf("unknown --format %q; want html, png, svg or pdf", format))
				}
			}
			if err := checkResultsDir(cmd, dir); err != nil {
				return err
			}
			d, err := report.Load(dir, leaderboard.Sources{Published: published, External: external}, pipeline.LoadRunTask)
			if err != nil {
				return err
			}
			if len(d.Board.Systems) == 0 {
				return fmt.Errorf("nothing to report: no runs under %s (make one with r2med run --task demo --out %s) and --published not given", dir, filepath.Join(dir, "demo"))
			}
			opt := report.Options{Metric: m, Title: title, Baseline: baseline}
			if systems != "" {
				opt.Systems = strings.Split(systems, ",")
			}
			r, err := report.Build(cmd.Context(), d, opt)
			if err != nil {
				hints := map[leaderboard.Origin]string{}
				if !published {
					hints[leaderboard.OriginPublished] = "add --published"
				}
				if !external {
					hints[leaderboard.OriginExternal] = "add --external"
				}
				return systemHint(err, append(slices.Clone(opt.Systems), baseline), hints)
			}
			if r.Sections, err = auditSections(dir); err != nil {
				return err
			}
			for _, n := range r.Notes {
				fmt.Fprintln(cmd.ErrOrStderr(), "note:", n)
			}
			if format == "html" {
				if err := r.WriteFile(out); err != nil {
					return err
				}
				fmt.Fprintln(cmd.OutOrStdout(), out)
				return nil
			}
			if err := os.MkdirAll(out, 0o755); err != nil {
				return err
			}
			files, err := r.WriteCharts(out, report.ChartFormat(format))
			if err != nil {
				return err
			}
			for _, f := range files {
				fmt.Fprintln(cmd.OutOrStdout(), f)
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&dir, "results", resultsDir(), "results directory searched for runs (results.json + manifest.json), at any depth; default $R2MED_RESULTS, else out")
	fl.BoolVar(&published, "published", false, "include R2MED's 71 published systems")
	fl.BoolVar(&external, "external", false, "include results printed by later papers (ReasonEmbed's Table 3, InsertRank) and R2MED's website")
	fl.StringVar(&baseline, "baseline", "", "mark leaderboard cells that differ significantly from this system of ours (ID or name)")
	fl.StringVar(&metric, "metric", "ndcg@10", "metric: ndcg@K, recall@K, map@K, p@K or mrr (R2MED's result-file values)")
	fl.StringVar(&systems, "systems", "", "comma-separated systems to chart (IDs or names, at most 7); the first two of ours make the scatter")
	fl.StringVar(&out, "out", "", "the HTML file to write; with --format png|svg, the directory for the chart files")
	fl.StringVar(&format, "format", "html", "html (one self-contained file), png, svg or pdf (the charts as separate files, for papers)")
	fl.StringVar(&title, "title", "", `the report's heading (default "R2MED results")`)
	return cmd
}
