package fusion_test

import (
	"fmt"

	"github.com/r2med/r2med/fusion"
	"github.com/r2med/r2med/ir"
)

// Two runs over one query: a lexical one and a dense one that disagree.
var (
	lexical = ir.Run{"q1": {{DocID: "a", Score: 12.1}, {DocID: "b", Score: 9.4}, {DocID: "c", Score: 3.3}}}
	dense   = ir.Run{"q1": {{DocID: "c", Score: 0.91}, {DocID: "a", Score: 0.88}, {DocID: "d", Score: 0.52}}}
)

// Reciprocal rank fusion scores a document Σ 1/(k + rank) over the runs
// that rank it: a, ranked 1st and 2nd, beats c, ranked 3rd and 1st.
func ExampleRRF() {
	fused := fusion.RRF([]ir.Run{lexical, dense}, fusion.DefaultRRFK, 0)
	for _, h := range fused["q1"] {
		fmt.Printf("%s %.5f\n", h.DocID, h.Score)
	}
	// Output:
	// a 0.03252
	// c 0.03227
	// b 0.01613
	// d 0.01587
}

// CombSUM adds each run's scores after normalizing them per query, here
// by z-score with the dense run weighted twice the lexical one: b, which
// only the lexical run retrieved, keeps its share and passes c, which the
// lexical run ranked far below its mean.
func ExampleCombSUM() {
	fused := fusion.CombSUM([]ir.Run{lexical, dense}, []float64{1, 2}, fusion.ZScore, 2)
	for _, h := range fused["q1"] {
		fmt.Printf("%s %.4f\n", h.DocID, h.Score)
	}
	// Output:
	// a 2.2829
	// b 0.3079
}

// A Spec is the fusion stage as pipeline files and the search service
// give it: its name names fused systems, DepthFor says how deep each run
// is read for a final top k, and Fuse ranks the result as listed, ties
// stepped one float32 apart so every evaluator reads the fused order.
func ExampleSpec() {
	spec := fusion.Spec{Method: "rrf", K: 100} // HAKARI-Bench's reranking_hybrid constant
	fmt.Println(spec.Name(), spec.DepthFor(10), spec.Describe())
	fused, err := spec.Fuse([]ir.Run{lexical, dense}, spec.DepthFor(10))
	if err != nil {
		panic(err)
	}
	fmt.Println(len(fused["q1"]), ir.TieAt(fused["q1"]))
	// Output:
	// rrf 100 map[k:100 method:rrf]
	// 4 -1
}
