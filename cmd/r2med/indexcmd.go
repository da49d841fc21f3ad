package main

import "github.com/spf13/cobra"

// indexSubcommands are the constructors of `r2med index` subcommands, each
// added from its own file's init (index.go: build, info and verify; push.go: push
// to Weaviate), so a new
// subcommand touches no shared list.
var indexSubcommands []func() *cobra.Command

func init() { register(newIndexCmd) }

func newIndexCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "index",
		Short: "Stored indexes: build and inspect index files (documents, BM25 postings, vectors); push a corpus into Weaviate",
		Long: `An index file holds a task's documents and ways of searching them — BM25
postings with the analyzer and scheme they were built with, document
vectors with the recipe that embedded them — in one versioned, checksummed
file that opens by memory map in milliseconds and searches exactly as
building the index in memory does: r2med run --index INDEX gives the
in-memory run, byte for byte. r2med index push puts a corpus, or an index
file's documents and vectors, into a Weaviate collection.`,
		Args: cobra.NoArgs,
	}
	for _, sub := range indexSubcommands {
		cmd.AddCommand(sub())
	}
	return cmd
}
