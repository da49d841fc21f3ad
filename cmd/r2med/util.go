package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/r2med/r2med/cache"
	"github.com/r2med/r2med/dataset"
	"github.com/r2med/r2med/pipeline"
)

func joinNames(names []string) string { return strings.Join(names, ", ") }

// aliasOf is the annotation that ties a deprecated flag name to the flag
// it now stands for.
const aliasOf = "r2med_alias_of"

// aliasFlag adds old as a deprecated name of the flag now: both set the
// same value, old is hidden from the help, and using it prints a note
// (checkAliases).
func aliasFlag(f *pflag.FlagSet, old, now string) {
	nf := f.Lookup(now)
	f.AddFlag(&pflag.Flag{
		Name: old, Usage: nf.Usage, Value: nf.Value, DefValue: nf.DefValue, NoOptDefVal: nf.NoOptDefVal,
		Deprecated:  "use --" + now,
		Hidden:      true,
		Annotations: map[string][]string{aliasOf: {now}},
	})
}

// checkAliases runs before every command: a deprecated flag name in use
// gets a note on stderr (cobra would print pflag's into a buffer nobody
// reads), and giving a flag under both its names is an error rather than
// one value silently winning.
func checkAliases(cmd *cobra.Command, _ []string) error {
	var err error
	cmd.Flags().Visit(func(fl *pflag.Flag) {
		now := fl.Annotations[aliasOf]
		if len(now) == 0 || err != nil {
			return
		}
		if cmd.Flags().Changed(now[0]) {
			err = fmt.Errorf("--%s and --%s are the same flag (--%s is its deprecated name); give --%s only", fl.Name, now[0], fl.Name, now[0])
			return
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "%s: --%s is deprecated; use --%s\n", cmd.CommandPath(), fl.Name, now[0])
	})
	return err
}

// keptError is a command's error together with the files it keeps for a
// rerun to resume from; execute names them.
type keptError struct {
	err  error
	kept []string
}

func (e *keptError) Error() string { return e.err.Error() }
func (e *keptError) Unwrap() error { return e.err }

// keptForResume wraps err with those of paths that exist now: checkpoint
// files a failed or interrupted command leaves so that running it again
// resumes instead of starting over.
func keptForResume(err error, paths ...string) error {
	if err == nil {
		return nil
	}
	var kept []string
	for _, p := range paths {
		if _, serr := os.Stat(p); serr == nil {
			kept = append(kept, p)
		}
	}
	if len(kept) == 0 {
		return err
	}
	return &keptError{err: err, kept: kept}
}

// resumable is what a failed or interrupted run into dir leaves for a
// rerun (run and sweep): its stage outputs and rerank checkpoint, and the
// cache holding the embeddings and LLM answers made so far, if the run
// had one open.
func resumable(dir string, store *cache.Store) []string {
	kept := pipeline.Resumable(dir)
	if store != nil {
		kept = append(kept, store.Path())
	}
	return kept
}

// flagHints name, for a kind of error, the flag that lets a command go on
// when the user means it.
var flagHints = []struct {
	kind error
	flag string
	hint string
	// file is, for a command that also reads the leave from its file,
	// how the file says it.
	file map[string]string
}{
	{dataset.ErrMissingDocs, "allow-missing-docs", "if the corpus is a deliberate sample, run again with --allow-missing-docs",
		map[string]string{"sweep": "allow_missing_docs: true in the sweep file"}},
}

// flagHint is the hint for err, if any, where the command that failed has
// the flag it names.
func flagHint(cmd *cobra.Command, err error) string {
	if cmd == nil {
		return ""
	}
	for _, h := range flagHints {
		if errors.Is(err, h.kind) && cmd.Flags().Lookup(h.flag) != nil {
			if f, ok := h.file[cmd.Name()]; ok {
				return h.hint + " (or " + f + ")"
			}
			return h.hint
		}
	}
	return ""
}

// reportError writes what execute prints for a failed command and returns
// the exit status: 130 for an interrupt, saying which checkpoint files
// were kept for resuming (or that none were), else exitCode's;
// a hint (flagHint's) goes on a line of its own after the error.
func reportError(stderr io.Writer, err error, hint string) int {
	var kept []string
	var ke *keptError
	if errors.As(err, &ke) {
		kept = ke.kept
	}
	resume := "run the same command again to resume from there"
	if errors.Is(err, context.Canceled) {
		if len(kept) == 0 {
			fmt.Fprintln(stderr, "r2med: interrupted; no partial output files were left behind")
		} else {
			fmt.Fprintf(stderr, "r2med: interrupted; kept for resuming: %s (%s)\n", strings.Join(kept, ", "), resume)
		}
		return 130
	}
	fmt.Fprintln(stderr, "r2med:", err)
	if hint != "" {
		fmt.Fprintln(stderr, "r2med:", hint)
	}
	if len(kept) > 0 {
		fmt.Fprintf(stderr, "r2med: kept for resuming: %s (%s)\n", strings.Join(kept, ", "), resume)
	}
	return exitCode(err)
}
