// Command r2med evaluates reasoning-driven medical retrieval: R2MED's tasks,
// its BM25 and trec_eval numbers reproduced exactly, from one binary.
//
// This package only parses flags and wires packages together; the logic
// lives in the packages it imports.
package main

import (
	"context"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/r2med/r2med/results"

	// Retriever kinds with heavy clients live in packages of their own
	// and register with package retrieve when imported (as database/sql
	// drivers do): the binary offers them, the packages below it do not
	// link them.
	_ "github.com/r2med/r2med/retrieve/weaviatekind"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(execute(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// execute runs the CLI with the given arguments and streams; tests call it
// in-process.
func execute(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := newRoot()
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	if err := root.ExecuteContext(ctx); err != nil {
		return reportError(stderr, err)
	}
	return 0
}

func newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:   "r2med",
		Short: "Reasoning-driven medical retrieval: R2MED tasks, exact BM25 and trec_eval numbers",
		Long: `r2med runs and evaluates retrieval on R2MED-style medical tasks.

It reproduces R2MED's published BM25 pipeline (Lucene English analyzer,
gensim LuceneBM25Model k1=0.9 b=0.4) and trec_eval 9.0.8's measures to the
last printed digit.`,
		Version:           results.Version(),
		SilenceUsage:      true,
		SilenceErrors:     true,
		PersistentPreRunE: checkAliases,
	}
	root.AddCommand(newRunCmd(), newEvalCmd(), newAnalyzeCmd(), newStatsCmd(), newTasksCmd(), newPullCmd(), newNanoCmd(), newSynthCmd())
	for _, newCmd := range registered {
		root.AddCommand(newCmd())
	}
	return root
}

// registered holds the constructors of commands that live in their own file
// and add themselves with register from an init function, so a new command
// touches no shared list.
var registered []func() *cobra.Command

func register(newCmd func() *cobra.Command) { registered = append(registered, newCmd) }
