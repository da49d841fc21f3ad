// Command external converts the results later papers printed for R2MED
// (a copy in ../shared/data/external-results) into
// leaderboard/external.json. Run by go generate in leaderboard; the output
// is committed, and leaderboard's tests check it against a fresh
// conversion whenever the shared data is present.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/r2med/r2med/leaderboard"
)

func main() {
	in := flag.String("in", "", "external-results directory (reasonembed-table3.csv, headline-averages.csv)")
	out := flag.String("out", "external.json", "output file")
	flag.Parse()
	if *in == "" {
		fmt.Fprintln(os.Stderr, "external: -in DIR is required")
		os.Exit(2)
	}
	if err := leaderboard.WriteExternal(*in, *out); err != nil {
		fmt.Fprintln(os.Stderr, "external:", err)
		os.Exit(1)
	}
}
