package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/r2med/r2med/hub"
	"github.com/r2med/r2med/internal/progress"
	"github.com/r2med/r2med/internal/textwrap"
	"github.com/r2med/r2med/pipeline"
	"github.com/r2med/r2med/tasks"
)

func newTasksCmd() *cobra.Command {
	var suite string
	cmd := &cobra.Command{
		Use:   "tasks",
		Short: "List a suite's tasks: family, sizes, Hugging Face repositories and pinned revisions",
		Long: `tasks lists the tasks of a suite: R2MED's eight (--suite r2med, the
default, with their NanoR2MED splits), their NanoR2MED splits with the
sizes of HAKARI-Bench's task cards (--suite nano), or BRIGHT's twelve
(--suite bright) and the eight with long documents (--suite bright-long).
A task's data carries the name shown under "runs as": manifests, result
files and result directories use it.`,
		Example: `  r2med tasks
  r2med tasks --suite bright`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := tasks.ParseSuite(suite)
			if err != nil {
				return err
			}
			if s != tasks.R2MED { // NanoR2MED's splits or BRIGHT's tasks, in one repository
				w := newTableWriter(cmd.OutOrStdout(), textwrap.Layout{Wrap: []int{1, 5}, Below: 7}) // the repository under its task
				fmt.Fprintf(w, "task\tfamily\tqueries\tdocuments\trelevant\truns as\trepository (suite %s)\n", s)
				for _, t := range s.Tasks() {
					size := t.SizeIn(s)
					fmt.Fprintf(w, "%s\t%s\t%d\t%d\t%d\t%s\t%s\n", t.Name, t.Family.Title(), size.Queries, size.Documents, size.PositiveQrels, t.NameIn(s), t.HubURI(s))
				}
				// A corpus two tasks search is counted once, and the row
				// says so.
				tot := s.Total()
				fmt.Fprintf(w, "all\t\t%d\t%d\t\t\t%s\n", tot.Queries, tot.Documents, tot.Note())
				return w.Flush()
			}
			w := newTableWriter(cmd.OutOrStdout(), textwrap.Layout{Wrap: []int{1, 4}, Below: 7})
			fmt.Fprintln(w, "task\tfamily\tqueries\tdocuments\tnano split\tnano docs\trepository (suite r2med)")
			for _, t := range tasks.All() {
				fmt.Fprintf(w, "%s\t%s\t%d\t%d\t%s\t%d\t%s\n", t.Name, t.Family.Title(), t.Size.Queries, t.Size.Documents, t.NanoSplit, t.NanoSize.Documents, t.HubURI(tasks.R2MED))
			}
			tot := tasks.R2MED.Total()
			fmt.Fprintf(w, "all\t\t%d\t%d\t\t\t%s\n", tot.Queries, tot.Documents, "suite nano: "+tasks.All()[0].HubURI(tasks.Nano))
			return w.Flush()
		},
	}
	cmd.Flags().StringVar(&suite, "suite", string(tasks.R2MED), "r2med (R2MED's tasks), nano (their NanoR2MED splits), bright or bright-long (BRIGHT's)")
	return cmd
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
pulls all the suite's tasks. HF_ENDPOINT selects a mirror; HF_TOKEN is sent if set.`,
		Example: `  r2med pull                      # all 8 R2MED tasks
  r2med pull --suite nano         # NanoR2MED
  r2med pull MedQA-Diag PMC-Clinical
  r2med pull --suite bright biology leetcode   # BRIGHT's splits: queries, documents, LLM reasoning`,
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := tasks.ParseSuite(suite)
			if err != nil {
				return usage(err)
			}
			if len(args) == 0 {
				args = []string{"all"}
			}
			ts, err := tasks.ExpandIn(s, args...)
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
	cmd.Flags().StringVar(&suite, "suite", string(tasks.R2MED), "r2med (full tasks), nano (NanoR2MED splits), bright or bright-long (BRIGHT's tasks, short or long documents)")
	cmd.Flags().BoolVar(&quiet, "quiet", false, "no progress bars")
	return cmd
}
