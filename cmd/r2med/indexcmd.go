package main

import "github.com/spf13/cobra"

// indexSubcommands are the constructors of `r2med index` subcommands, each
// added from its own file's init (push.go: push to Weaviate), so a new
// subcommand touches no shared list.
var indexSubcommands []func() *cobra.Command

func init() { register(newIndexCmd) }

func newIndexCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "index",
		Short: "Search indexes: push a corpus into Weaviate",
		Args:  cobra.NoArgs,
	}
	for _, sub := range indexSubcommands {
		cmd.AddCommand(sub())
	}
	return cmd
}
