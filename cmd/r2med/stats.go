package main

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/taskstats"
)

func newStatsCmd() *cobra.Command {
	var d dataFlags
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "stats",
		Short: "Print a task's profile: counts, positives per query, text lengths (and, for Nano sets, their candidate lists' scores)",
		Example: `  r2med stats --task demo
  r2med stats --data ../shared/data/nfcorpus --split test --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			srcs, err := d.sources()
			if err != nil {
				return err
			}
			for i, src := range srcs {
				t, err := src.Load(cmd.Context())
				if err != nil {
					return err
				}
				p := taskstats.Of(t)
				if t.Layout == ir.LayoutNanoHub {
					// A Nano set's card also scores its published candidate
					// lists, rounded as the cards round.
					if _, err := p.AddHubCandidates(t.Dir, t, taskstats.NanoR2MEDCandidates); err != nil {
						return err
					}
					p = p.CardRounded()
				}
				if asJSON {
					enc := json.NewEncoder(cmd.OutOrStdout())
					enc.SetIndent("", "  ")
					if err := enc.Encode(p); err != nil {
						return err
					}
					continue
				}
				if i > 0 {
					fmt.Fprintln(cmd.OutOrStdout())
				}
				if err := p.WriteText(cmd.OutOrStdout()); err != nil {
					return err
				}
			}
			return nil
		},
	}
	addDataFlags(cmd, &d)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON instead of a table")
	return cmd
}
