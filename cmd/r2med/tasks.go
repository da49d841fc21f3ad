package main

import (
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/r2med/r2med/hub"
	"github.com/r2med/r2med/internal/progress"
	"github.com/r2med/r2med/pipeline"
	"github.com/r2med/r2med/tasks"
)

func newTasksCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "tasks",
		Short: "List the R2MED tasks: family, sizes, Hugging Face repositories and pinned revisions",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
			fmt.Fprintln(w, "task\tfamily\tqueries\tdocuments\tnano split\tnano docs\trepository (suite r2med)")
			q, d := 0, 0
			for _, t := range tasks.All() {
				fmt.Fprintf(w, "%s\t%s\t%d\t%d\t%s\t%d\t%s\n", t.Name, t.Family.Title(), t.Size.Queries, t.Size.Documents, t.NanoSplit, t.NanoSize.Documents, t.HubURI(tasks.R2MED))
				q += t.Size.Queries
				d += t.Size.Documents
			}
			fmt.Fprintf(w, "all\t\t%d\t%d\t\t\t%s\n", q, d, "suite nano: "+tasks.All()[0].HubURI(tasks.Nano))
			return w.Flush()
		},
	}
}

func newPullCmd() *cobra.Command {
	var suite string
	var quiet bool
	cmd := &cobra.Command{
		Use:   "pull [TASK...]",
		Short: "Download tasks into the Hugging Face cache at their pinned revisions, for offline runs",
		Long: `pull fills the local Hugging Face cache ($HF_HOME/hub, shared with Python
tools) with the tasks' repositories at the revisions the published numbers
used, so later runs work offline (HF_HUB_OFFLINE=1). Without arguments it
pulls all eight tasks. HF_ENDPOINT selects a mirror; HF_TOKEN is sent if set.`,
		Example: `  r2med pull                      # all 8 R2MED tasks
  r2med pull --suite nano         # NanoR2MED
  r2med pull MedQA-Diag PMC-Clinical`,
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := tasks.ParseSuite(suite)
			if err != nil {
				return usage(err)
			}
			if len(args) == 0 {
				args = []string{"all"}
			}
			ts, err := tasks.Expand(args...)
			if err != nil {
				return taskError(err)
			}
			c := hub.FromEnv()
			c.Progress = progress.Auto(quiet)
			snaps, err := pipeline.Pull(cmd.Context(), c, s, ts)
			for i, snap := range snaps {
				fmt.Fprintf(cmd.OutOrStdout(), "%s\t%s\t%d files\t%s\n", ts[i].Name, snap.Commit[:min(12, len(snap.Commit))], len(snap.Files), snap.Dir)
			}
			return err
		},
	}
	cmd.Flags().StringVar(&suite, "suite", string(tasks.R2MED), "r2med (full tasks) or nano (NanoR2MED splits)")
	cmd.Flags().BoolVar(&quiet, "quiet", false, "no progress bars")
	return cmd
}
