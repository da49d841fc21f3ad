package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/r2med/r2med/rerank"
)

// The reasoning rerankers' flags and `r2med rerank templates` live here,
// apart from rerank.go's own flags.

func newRerankTemplatesCmd() *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "templates",
		Short: "Write the reasoning rerankers' prompt templates to a directory, to edit and pass to --rerank-templates",
		Long: `templates writes the built-in prompts of insertrank, rank1, reasonrank and
grouprank (diver asks its two rerankers' own): for each a system message
(METHOD.system.tmpl; empty sends none) and a user message
(METHOD.user.tmpl), Go text/template files. The listwise and grouprank
templates see .Query, .Num, .ScoreScale and .Passages (each .N, .Text, and
for insertrank .Score, the first-stage score as shown); rank1's sees .Query
and .Passage. An edited grouprank prompt must still ask for the scores as
"[n]": score pairs from 0 to 10 inside <answer></answer>, which is what its
parser reads. A directory given to --rerank-templates replaces the
built-in files it holds; the templates' digest is part of the checkpoint
key, so an edited prompt never reuses rankings made with the old one.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if out == "" {
				return errors.New("--out DIR is required")
			}
			files, err := rerank.WriteTemplates(out)
			for _, f := range files {
				fmt.Fprintln(cmd.OutOrStdout(), f)
			}
			return err
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "directory to write the templates into")
	return cmd
}

// addReasoningRerankFlags adds the settings of insertrank, rank1,
// reasonrank, grouprank and diver to spec's flags.
func addReasoningRerankFlags(f *pflag.FlagSet, spec *rerank.Spec) {
	f.StringVar(&spec.Templates, "rerank-templates", "", "insertrank/rank1/reasonrank/grouprank (and diver's rerankers): directory of edited prompt templates (from r2med rerank templates)")
	f.StringVar((*string)(&spec.Scores), "insertrank-scores", "raw", "insertrank: first-stage scores shown as raw, minmax (0 to 1 over each query's candidates) or percent (0 to 100)")
	f.IntVar(&spec.Decimals, "insertrank-decimals", 2, "insertrank: digits after the point of the scores shown, at least (more where a query's different scores would print alike)")
	f.IntVar(&spec.MaxTokens, "rerank-max-tokens", 0, "insertrank/rank1/reasonrank/grouprank: most tokens per answer, reasoning included (0: the server's default)")
	f.BoolVar(&spec.TextOnly, "rerank-text-only", false, "rank1: ask for no logprobs (servers that refuse them); answers are scored from their text")
	f.IntVar(&spec.GroupSize, "grouprank-size", rerank.DefaultGroupSize, "grouprank: passages judged together in one group (DIVER's default; its BRIGHT 46.8 run: 20)")
	f.IntVar(&spec.Repeats, "grouprank-repeats", rerank.DefaultRepeats, "grouprank: passes over the candidates, each in another order, scores averaged (DIVER's default; its BRIGHT 46.8 run: 6)")
	f.StringVar(&spec.Merge.Pointwise, "merge-pointwise", rerank.DefaultMergePointwise, "diver: the pointwise reranker merged: "+strings.Join(rerank.MergePointwiseKinds, ", "))
	f.StringVar(&spec.Merge.Listwise, "merge-listwise", rerank.DefaultMergeListwise, "diver: the listwise reranker merged: "+strings.Join(rerank.MergeListwiseKinds, ", "))
	f.Float64Var(&spec.Merge.Weight, "merge-weight", rerank.DefaultMergeWeight, "diver: weight of the pointwise ranking's -ln(rank), the listwise one's taking the rest (DIVER: 0.6)")
}

// printRerankTrace names the traces file, when the rerank wrote one.
func printRerankTrace(w io.Writer, checkpoint string) {
	if p := rerank.TraceFile(checkpoint); fileExists(p) {
		fmt.Fprintf(w, "  reasoning and answers: %s\n", p)
	}
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
