package vector_test

import (
	"fmt"

	"github.com/r2med/r2med/vector"
)

// A cosine store of three documents searched with two queries at once;
// each query's hits come best first, and a batch returns what each query
// searched alone would, to the bit. BEIR's SkipSelf drops the row whose id
// is the query's own.
func ExampleFlat_Search() {
	f := vector.NewFlat(0, vector.Cosine) // the dimension comes from the first row
	docs := map[string][]float32{
		"d1": {1, 0, 0, 0},
		"d2": {1, 1, 0, 0},
		"d3": {0, 0, 1, 1},
	}
	for _, id := range []string{"d1", "d2", "d3"} {
		if err := f.Add(id, docs[id]); err != nil {
			panic(err)
		}
	}
	queries := [][]float32{{2, 1, 0, 0}, {0, 0, 0, 3}}
	hits, err := f.Search(queries, 2, vector.SearchOptions{})
	if err != nil {
		panic(err)
	}
	for qi, hs := range hits {
		for _, h := range hs {
			fmt.Printf("query %d: %s %.4f\n", qi, h.ID, h.Score)
		}
	}
	alone, _ := f.Search(queries[1:], 2, vector.SearchOptions{})
	fmt.Println("same alone:", alone[0][0] == hits[1][0])

	self, _ := f.Search([][]float32{docs["d2"]}, 1, vector.SearchOptions{SkipSelf: true, QueryIDs: []string{"d2"}})
	fmt.Println("d2 without itself:", self[0][0].ID)
	// Output:
	// query 0: d2 0.9487
	// query 0: d1 0.8944
	// query 1: d3 0.7071
	// query 1: d1 0.0000
	// same alone: true
	// d2 without itself: d1
}
