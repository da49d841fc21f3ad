package main

import (
	"bufio"

	"github.com/spf13/cobra"

	"github.com/r2med/r2med/analysis"
)

func newAnalyzeCmd() *cobra.Command {
	var name string
	cmd := &cobra.Command{
		Use:   "analyze",
		Short: "Tokenize JSONL {\"id\",\"text\"} from stdin into {\"id\",\"tokens\"} on stdout",
		Example: `  echo '{"id":"1","text":"The patient'"'"'s HbA1c was 9.8%"}' | r2med analyze
  r2med analyze --analyzer whitespace < texts.jsonl > tokens.jsonl`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a, err := analysis.Get(name)
			if err != nil {
				return err
			}
			w := bufio.NewWriter(cmd.OutOrStdout())
			if err := analysis.AnalyzeJSONL(cmd.InOrStdin(), w, a, "stdin"); err != nil {
				w.Flush()
				return err
			}
			return w.Flush()
		},
	}
	cmd.Flags().StringVar(&name, "analyzer", "lucene-english", "analyzer: "+joinNames(analysis.Names()))
	return cmd
}
