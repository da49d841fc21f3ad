package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/r2med/r2med/leaderboard"
)

func init() { register(newLeaderboardCmd) }

func newLeaderboardCmd() *cobra.Command {
	var dir, metric, family, kind, rank, format string
	var noPublished bool
	cmd := &cobra.Command{
		Use:   "leaderboard",
		Short: "Our runs next to R2MED's 71 published systems: per-task scores, the 8-task average, or Borda ranks",
		Long: `leaderboard puts the runs found under a results directory (every directory
holding results.json and manifest.json, at any depth; default ` + leaderboard.DefaultDir + `/) next to
R2MED's published results (71 systems × 8 tasks, marked "published").

The average is R2MED's: the unweighted mean of the per-task values ×100, two
decimals, shown only for systems with every task ("— (k/8)" otherwise). A
metric a system's files lack (dense retrievers have no MRR) is missing, not 0.
--rank borda ranks as HAKARI-Bench does: per task, competition ranks of the
systems complete on every task give 100·(n−rank)/(n−1) points, averaged.

Metrics are R2MED's result-file values: ndcg@K, recall@K, map@K, p@K, mrr.`,
		Example: `  r2med leaderboard                                  # nDCG@10, ours and published
  r2med leaderboard --no-published --results out
  r2med leaderboard --metric recall@100 --family evidence --kind gar
  r2med leaderboard --rank borda --format markdown`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var opt leaderboard.Options
			var err error
			if opt.Metric, err = leaderboard.ParseMetric(metric); err != nil {
				return err
			}
			if opt.Family, err = leaderboard.ParseFamily(family); err != nil {
				return err
			}
			if kind != "" {
				if opt.Kind, err = leaderboard.ParseKind(kind); err != nil {
					return err
				}
			}
			if opt.Ranking, err = leaderboard.ParseRanking(rank); err != nil {
				return err
			}
			f, err := leaderboard.ParseFormat(format)
			if err != nil {
				return err
			}
			if err := checkResultsDir(cmd, dir); err != nil {
				return err
			}
			b, err := leaderboard.Load(dir, !noPublished)
			if err != nil {
				return err
			}
			t, err := b.Table(opt)
			if err != nil {
				return err
			}
			if len(t.Rows) == 0 {
				return fmt.Errorf("no systems to show: no runs under %s and --no-published given", dir)
			}
			if err := t.Write(cmd.OutOrStdout(), f); err != nil {
				return err
			}
			// What is not on the board is said, on stderr so that
			// --format csv/json output stays clean.
			w := cmd.ErrOrStderr()
			if b.Listing != nil && len(b.Listing.Unfinished) > 0 {
				fmt.Fprintf(w, "note: %d unfinished run(s) left out (no manifest.json); r2med results lists them\n", len(b.Listing.Unfinished))
			}
			if len(b.Superseded) > 0 {
				fmt.Fprintf(w, "note: %d older run(s) of a system and task replaced by newer ones, e.g. %s\n", len(b.Superseded), b.Superseded[0].Dir)
			}
			if len(b.Other) > 0 {
				fmt.Fprintf(w, "note: %d run(s) on data that is no R2MED task left out, e.g. %s (r2med results lists them)\n", len(b.Other), b.Other[0].Dir)
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&dir, "results", resultsDir(), "results directory searched for runs (results.json + manifest.json), at any depth; default $R2MED_RESULTS, else out")
	fl.StringVar(&metric, "metric", "ndcg@10", "metric: ndcg@K, recall@K, map@K, p@K or mrr (R2MED's result-file values)")
	fl.StringVar(&family, "family", "all", "task family: qa (Q&A reference), evidence (clinical evidence), case (clinical case) or all; the average is over its tasks")
	fl.StringVar(&kind, "kind", "", "only systems of this kind: base, gar or reranker")
	fl.BoolVar(&noPublished, "no-published", false, "leave out R2MED's published systems")
	fl.StringVar(&rank, "rank", "avg", "ranking: avg (the task average, as R2MED) or borda (HAKARI-Bench's Borda count)")
	fl.StringVar(&format, "format", "table", "output: table, markdown, csv or json")
	return cmd
}

// checkResultsDir refuses a --results directory that was named but does
// not exist (a typo would otherwise show an empty board); the default may
// be missing.
func checkResultsDir(cmd *cobra.Command, dir string) error {
	if !cmd.Flags().Changed("results") {
		return nil
	}
	st, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("--results %s: %w", dir, err)
	}
	if !st.IsDir() {
		return fmt.Errorf("--results %s is not a directory", dir)
	}
	return nil
}
