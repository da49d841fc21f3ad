package ir_test

import (
	"fmt"

	"github.com/r2med/r2med/ir"
)

// A reranker that judged every document relevant: its list order (the
// first stage's) is the ranking, and after Rank the scores say so to any
// evaluator, which would otherwise order the ties by doc id.
func ExampleRank() {
	hits := []ir.Hit{{DocID: "d3", Score: 1}, {DocID: "d1", Score: 1}, {DocID: "d2", Score: 1}}
	ir.Rank(hits, ir.TiesAsListed)
	for _, h := range hits {
		fmt.Println(h.DocID, float32(h.Score))
	}
	// Output:
	// d3 1
	// d1 0.99999994
	// d2 0.9999999
}

// A first-stage scorer's ties carry no order of their own: Rank puts them
// in trec_eval's order (float32 score descending, doc id descending).
func ExampleRun_Rank() {
	run := ir.Run{"q1": {{DocID: "a", Score: 2}, {DocID: "b", Score: 0.5}, {DocID: "c", Score: 0.5}}}
	run.Rank(ir.TiesByDocID)
	for _, h := range run["q1"] {
		fmt.Println(h.DocID, float32(h.Score))
	}
	// Output:
	// a 2
	// c 0.5
	// b 0.49999997
}
