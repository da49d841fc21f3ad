package main

import (
	"github.com/spf13/cobra"

	"github.com/r2med/r2med/leaderboard"
	"github.com/r2med/r2med/results"
)

func init() { register(newResultsCmd) }

func newResultsCmd() *cobra.Command {
	var dir, format string
	cmd := &cobra.Command{
		Use:   "results",
		Short: "List the runs under a results directory: task, system, nDCG@10, Recall@100, MRR, time, path",
		Long: `results lists every run directory under the results directory (default
` + leaderboard.DefaultDir + `/), at any depth: a directory holding results.json, finished when
its manifest.json is there too. Unfinished runs are listed at the end.`,
		Example: `  r2med results
  r2med results --results out/bm25 --format csv`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f, err := leaderboard.ParseFormat(format)
			if err != nil {
				return err
			}
			if err := checkResultsDir(cmd, dir); err != nil {
				return err
			}
			l, err := results.Scan(dir)
			if err != nil {
				return err
			}
			return leaderboard.WriteRuns(cmd.OutOrStdout(), l, f)
		},
	}
	cmd.Flags().StringVar(&dir, "results", resultsDir(), "results directory searched for runs, at any depth; default $R2MED_RESULTS, else out")
	cmd.Flags().StringVar(&format, "format", "table", "output: table, markdown, csv or json")
	return cmd
}
