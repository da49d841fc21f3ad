// Command published converts R2MED's published results directory
// (github.com/R2MED/R2MED results/, a copy in ../shared/data) into
// leaderboard/published.json. Run by go generate in leaderboard; the
// output is committed, and leaderboard's tests check it against a fresh
// conversion whenever the shared data is present.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/r2med/r2med/leaderboard"
)

func main() {
	in := flag.String("in", "", "R2MED results directory (holding \"base retriever\", gar, reranker)")
	out := flag.String("out", "published.json", "output file")
	flag.Parse()
	if *in == "" {
		fmt.Fprintln(os.Stderr, "published: -in DIR is required")
		os.Exit(2)
	}
	if err := leaderboard.WritePublished(*in, *out); err != nil {
		fmt.Fprintln(os.Stderr, "published:", err)
		os.Exit(1)
	}
}
