package rerank_test

import (
	"fmt"

	"github.com/r2med/r2med/rerank"
)

// InsertRank shows each passage's first-stage score; min-max scaling maps
// the query's candidates onto 0–1.
func ExampleShownScores() {
	cands := []rerank.Candidate{{ID: "a", Score: 14.2}, {ID: "b", Score: 9.876}, {ID: "c", Score: 3}}
	raw, _, _ := rerank.ShownScores(cands, rerank.ScoresRaw, 0)
	scaled, label, _ := rerank.ShownScores(cands, rerank.ScoresMinMax, 0)
	fmt.Println(raw)
	fmt.Println(scaled, label)
	// Output:
	// [14.20 9.88 3.00]
	// [1.00 0.61 0.00] 0-1
}

// A reasoning model's permutation with a repeated, an out-of-range and a
// missing passage, repaired and counted.
func ExampleParseRanking() {
	perm, r := rerank.ParseRanking("[3] > [3] > [9] > [1]", 4)
	fmt.Println(perm, r.Named, r.Missing, r.Repeated, r.OutOfRange)
	// Output: [2 0 1 3] 2 2 1 1
}
