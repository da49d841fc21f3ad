package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/r2med/r2med/internal/progress"
	"github.com/r2med/r2med/pipeline"
)

func init() { register(newSweepCmd) }

func newSweepCmd() *cobra.Command {
	var overwrite, quiet bool
	var out string
	cmd := &cobra.Command{
		Use:   "sweep SWEEP.yaml",
		Short: "Run every task × pipeline of a sweep file; finished cells are skipped",
		Long: `sweep runs a grid of tasks × pipelines. Each cell is an ordinary run written
to OUT/PIPELINE/TASK, so an interrupted sweep resumes where it stopped (cells
whose outputs match their data and settings are skipped unless --overwrite),
and 'r2med results' and 'r2med leaderboard' read what it wrote.

  out: results
  tasks: [all]                 # registry tasks; or data: [DIR, …]
  suite: r2med                 # or nano
  pipelines:
    - file: hybrid.yaml        # a pipeline file (see r2med run --help)
    - name: bm25-lucene        # or a pipeline inline
      retrieve: [{bm25: {scheme: lucene}}]`,
		Example: `  r2med sweep sweeps/r2med-bm25.yaml
  r2med sweep sweep.yaml --out /data/results --overwrite`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := pipeline.LoadSweep(args[0])
			if err != nil {
				return err
			}
			if out != "" {
				s.Out = out
			}
			w := cmd.OutOrStdout()
			opt := pipeline.SweepOptions{Overwrite: overwrite, Progress: progress.Auto(quiet), Command: os.Args,
				Done: func(c pipeline.Cell, o *pipeline.Outcome, err error) {
					switch {
					case err != nil:
						fmt.Fprintf(w, "FAIL  %-18s %-28s %v\n", c.Task, c.Pipeline, err)
					default:
						v, _ := o.Result.Metric("ndcg_at_10")
						state := "done"
						if o.Skipped {
							state = "kept"
						}
						fmt.Fprintf(w, "%-5s %-18s %-28s nDCG@10 %.4f  %s\n", state, c.Task, c.Pipeline, v, c.Dir)
					}
				}}
			failed, err := s.Run(cmd.Context(), opt)
			if err != nil {
				return err
			}
			cells := len(s.Sources) * len(s.Pipelines)
			if failed > 0 {
				return fmt.Errorf("%d of %d cells failed (see FAIL lines); rerun the sweep to retry them, finished cells are kept", failed, cells)
			}
			fmt.Fprintf(w, "%d cells in %s\n", cells, s.Out)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&out, "out", "", "results directory (default: the sweep file's out:, else results)")
	f.BoolVar(&overwrite, "overwrite", false, "redo cells whose outputs are up to date")
	f.BoolVar(&quiet, "quiet", false, "no progress bar")
	return cmd
}
