// Command r2med evaluates reasoning-driven medical retrieval: R2MED's tasks,
// its BM25 and trec_eval numbers reproduced exactly, from one binary.
//
// This package only parses flags and wires packages together; the logic
// lives in the packages it imports.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/r2med/r2med/internal/yamlx"
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
	if err := unknownInGroup(root, args); err != nil {
		return reportError(stderr, err, "")
	}
	if cmd, err := root.ExecuteContextC(ctx); err != nil {
		return reportError(stderr, err, flagHint(cmd, err))
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
	root.SetFlagErrorFunc(flagError)
	usageArgs(root)
	registerCompletions(root)
	return root
}

// flagError makes an unknown or malformed flag a usage error (exit 2),
// naming the nearest flag the command has.
func flagError(cmd *cobra.Command, err error) error {
	name := ""
	if rest, ok := strings.CutPrefix(err.Error(), "unknown flag: --"); ok {
		name = rest
	}
	if name != "" {
		var known []string
		cmd.Flags().VisitAll(func(f *pflag.Flag) {
			if !f.Hidden {
				known = append(known, f.Name)
			}
		})
		if s := yamlx.Suggest(name, known); s != "" {
			err = fmt.Errorf("%w (did you mean --%s?)", err, s)
		}
	}
	return usage(fmt.Errorf("%w; %s --help lists the flags", err, cmd.CommandPath()))
}

// usageArgs makes every command's argument-count errors usage errors.
func usageArgs(cmd *cobra.Command) {
	if check := cmd.Args; check != nil {
		cmd.Args = func(c *cobra.Command, args []string) error {
			if err := check(c, args); err != nil {
				return usage(subcommandHint(c, args, err))
			}
			return nil
		}
	}
	for _, c := range cmd.Commands() {
		usageArgs(c)
	}
}

// unknownInGroup is the usage error of a word after a group of commands
// (index, cache, …) that names none of them: cobra would show the group's
// help and exit 0, and a script would take a mistyped subcommand for done.
func unknownInGroup(root *cobra.Command, args []string) error {
	c, rest, err := root.Find(args)
	if err != nil || !c.HasParent() || !c.HasSubCommands() || c.Runnable() {
		return nil
	}
	// Only a word right after the group: past its flags a word may be a
	// flag's value, which only cobra's parse can tell.
	if len(rest) == 0 || rest[0] == "help" || strings.HasPrefix(rest[0], "-") {
		return nil
	}
	return usage(subcommandHint(c, rest[:1], fmt.Errorf("unknown command %q for %q", rest[0], c.CommandPath())))
}

// subcommandHint adds to cobra's "unknown command" error of a command
// with subcommands the one meant (a near miss) or, where the word is a
// directory and the command reads one from --results, that flag.
func subcommandHint(c *cobra.Command, args []string, err error) error {
	if len(args) == 0 || !c.HasSubCommands() || !strings.HasPrefix(err.Error(), "unknown command ") {
		return err
	}
	if c.SuggestionsMinimumDistance <= 0 {
		c.SuggestionsMinimumDistance = 2 // cobra's own default for the root's suggestions
	}
	if s := c.SuggestionsFor(args[0]); len(s) > 0 {
		return fmt.Errorf("%w (did you mean %q?)", err, s[0])
	}
	if fi, statErr := os.Stat(args[0]); statErr == nil && fi.IsDir() && c.Flags().Lookup("results") != nil {
		return fmt.Errorf("%w; to read the runs under %s: %s --results %s", err, args[0], c.CommandPath(), args[0])
	}
	return err
}

// registered holds the constructors of commands that live in their own file
// and add themselves with register from an init function, so a new command
// touches no shared list.
var registered []func() *cobra.Command

func register(newCmd func() *cobra.Command) { registered = append(registered, newCmd) }
