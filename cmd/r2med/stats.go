package main

import (
	"encoding/json"

	"github.com/spf13/cobra"

	"github.com/r2med/r2med/dataset"
	"github.com/r2med/r2med/pipeline"
)

func newStatsCmd() *cobra.Command {
	var data, task string
	var opts dataset.Options
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "stats",
		Short: "Print a task's profile: counts, positives per query, text lengths",
		Example: `  r2med stats --task demo
  r2med stats --data ../shared/data/nfcorpus --split test --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			t, err := pipeline.LoadTask(task, data, opts)
			if err != nil {
				return err
			}
			p := dataset.Stats(t)
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(p)
			}
			return p.WriteText(cmd.OutOrStdout())
		},
	}
	addDataFlags(cmd, &data, &task, &opts)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON instead of a table")
	return cmd
}

func addDataFlags(cmd *cobra.Command, data, task *string, opts *dataset.Options) {
	cmd.Flags().StringVar(data, "data", "", "task directory (R2MED or BEIR layout, detected)")
	cmd.Flags().StringVar(task, "task", "", `built-in task ("demo")`)
	cmd.Flags().StringVar(&opts.Split, "split", "test", "BEIR qrels split")
	cmd.Flags().BoolVar(&opts.AllowMissingDocs, "allow-missing-docs", false, "accept judgments of documents the corpus lacks (a sampled corpus); they count as unretrievable relevant documents")
}
