package trec_test

import (
	"fmt"
	"os"
	"strings"

	"github.com/r2med/r2med/trec"
)

// ReadRun reads a TREC run: the rank column must be an integer but is
// ignored, as trec_eval ignores it; hits come back in file order (the
// evaluator ranks them by score). Errors name the file and line.
func ExampleReadRun() {
	const file = `q1 Q0 d2 2 0.5 bm25
q1 Q0 d1 1 1.25 bm25
q2 Q0 d3 1 7 bm25
`
	run, err := trec.ReadRun(strings.NewReader(file), "run.trec")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, qid := range trec.QueryIDs(run) {
		fmt.Println(qid, run[qid])
	}
	_, err = trec.ReadRun(strings.NewReader("q1 Q0 d1 one 1.0 bm25\n"), "bad.trec")
	fmt.Println(err)
	// Output:
	// q1 [{d2 0.5} {d1 1.25}]
	// q2 [{d3 7}]
	// bad.trec:1: rank "one" is not an integer; the fourth column is the rank, a whole number (trec_eval ignores its value)
}

// WriteRun writes queries in byte order, hits in list order with ranks
// from 1, and scores with the fewest digits that read back to the same
// value (float32 scores as float32), so evaluating the file gives the
// numbers evaluating the run in memory gives.
func ExampleWriteRun() {
	run, _ := trec.ReadRun(strings.NewReader("q1 Q0 d1 1 0.1 x\nq1 Q0 d2 2 0.05 x\n"), "in")
	trec.WriteRun(os.Stdout, run, "demo")
	// Output:
	// q1 Q0 d1 1 0.1 demo
	// q1 Q0 d2 2 0.05 demo
}
