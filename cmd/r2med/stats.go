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
			var profiles []taskstats.Profile
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
					profiles = append(profiles, p)
					continue
				}
				if i > 0 {
					fmt.Fprintln(cmd.OutOrStdout())
				}
				if err := p.WriteText(cmd.OutOrStdout()); err != nil {
					return err
				}
			}
			if !asJSON {
				return nil
			}
			// One JSON document, written once every task has loaded: one
			// task's profile as an object (as it always was), several as an
			// array in the order the tasks were named (jq '.[]',
			// pandas.json_normalize).
			var doc any = profiles
			if len(profiles) == 1 {
				doc = profiles[0]
			}
			enc := json.NewEncoder(cmd.OutOrStdout())
			enc.SetIndent("", "  ")
			return enc.Encode(doc)
		},
	}
	addDataFlags(cmd, &d)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON instead of a table: one task's profile as an object, several tasks' as an array")
	return cmd
}
