package main

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/r2med/r2med/synth"
)

func newSynthCmd() *cobra.Command {
	var out string
	var scale float64
	var seed int64
	var combined int
	cmd := &cobra.Command{
		Use:    "synth",
		Short:  "Write synthetic tasks shaped like the 8 R2MED tasks (for benchmarks)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if out == "" {
				return fmt.Errorf("--out DIR is required")
			}
			if cmd.Flags().Changed("combined") {
				t := synth.Combined(combined, seed)
				if err := synth.WriteR2MED(t, out); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s\t%d docs\t%d queries\n", out, len(t.Corpus), len(t.Queries))
				return nil
			}
			for _, spec := range synth.R2MEDSpecs() {
				if scale != 1 {
					spec = spec.Scale(scale)
				}
				t := synth.Generate(spec, seed)
				dir := filepath.Join(out, spec.Name)
				if err := synth.WriteR2MED(t, dir); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s\t%d docs\t%d queries\n", dir, len(t.Corpus), len(t.Queries))
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "directory to write one sub-directory per task into")
	cmd.Flags().Float64Var(&scale, "scale", 1, "fraction of each task's documents and queries")
	cmd.Flags().Int64Var(&seed, "seed", 1, "random seed")
	cmd.Flags().IntVar(&combined, "combined", 0, "write the eight tasks as one corpus of about N documents (0: all 357,080) with all 876 queries into --out, the set the engine benchmarks and their Lucene peer run on")
	return cmd
}
