package retrieve_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/r2med/r2med/bm25"
	"github.com/r2med/r2med/expand"
	"github.com/r2med/r2med/internal/yamlx"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/retrieve"
)

var corpus = &ir.Task{Name: "toy", Corpus: []ir.Doc{
	{ID: "d1", Text: "Iron deficiency anemia causes fatigue and pallor."},
	{ID: "d2", Text: "Hypothyroidism causes fatigue, weight gain and cold intolerance."},
	{ID: "d3", Text: "Migraine presents with unilateral throbbing headache."},
}}

// A retriever is built once over a corpus and then searched in batches.
func ExampleNew() {
	ctx := context.Background()
	r, err := retrieve.New(ctx, retrieve.DefaultBM25(), corpus, retrieve.Env{})
	if err != nil {
		panic(err)
	}
	run, err := r.Search(ctx, []retrieve.Query{{ID: "q1", Text: "fatigue and cold intolerance"}}, 2)
	if err != nil {
		panic(err)
	}
	for _, h := range run["q1"] {
		fmt.Printf("%s %.4f\n", h.DocID, h.Score)
	}
	// Output:
	// d2 0.6363
	// d1 0.0676
}

// SearchOne is the serving path: one query, no batch set-up.
func ExampleSearchOne() {
	ctx := context.Background()
	spec := retrieve.DefaultBM25()
	spec.Params = bm25.DefaultParams(bm25.Lucene)
	r, err := retrieve.New(ctx, spec, corpus, retrieve.Env{})
	if err != nil {
		panic(err)
	}
	hits, err := retrieve.SearchOne(ctx, r, retrieve.Query{ID: "q", Text: "throbbing headache"}, 10)
	if err != nil {
		panic(err)
	}
	fmt.Println(spec.Name(), hits[0].DocID, len(hits))
	// Output: bm25-lucene d3 1
}

// RetrieverFunc turns a function into a Retriever, as http.HandlerFunc
// does for handlers: here, a retriever that ranks documents by how many
// query words they contain.
func ExampleRetrieverFunc() {
	overlap := retrieve.RetrieverFunc(func(_ context.Context, qs []retrieve.Query, k int) (ir.Run, error) {
		run := ir.Run{}
		for _, q := range qs {
			for _, d := range corpus.Corpus {
				n := 0
				for _, w := range strings.Fields(strings.ToLower(q.Text)) {
					if strings.Contains(strings.ToLower(d.Text), w) {
						n++
					}
				}
				if n > 0 && len(run[q.ID]) < k {
					run[q.ID] = append(run[q.ID], ir.Hit{DocID: d.ID, Score: float64(n)})
				}
			}
		}
		return run, nil
	})
	hits, _ := retrieve.SearchOne(context.Background(), overlap, retrieve.Query{ID: "q", Text: "anemia pallor"}, 10)
	fmt.Println(hits)
	// Output: [{d1 2}]
}

// A pipeline file's retrieve: entries parse into Specs; the --retriever
// flag's words stand for the same entries.
func ExampleParseSpec() {
	n, _ := yamlx.Parse([]byte("bm25: {scheme: robertson}"))
	spec, err := retrieve.ParseSpec(n)
	if err != nil {
		panic(err)
	}
	fmt.Println(spec.Name(), spec.Describe()["k1"])

	entry, _ := retrieve.Entry("bm25") // --retriever bm25
	spec, err = retrieve.ParseSpec(entry)
	if err != nil {
		panic(err)
	}
	fmt.Println(spec.Name())

	n, _ = yamlx.Parse([]byte("bm25:\n  schem: lucene"))
	_, err = retrieve.ParseSpec(n)
	fmt.Println(err)
	// Output:
	// bm25-robertson 1.5
	// bm25
	// line 2: unknown key "schem" in bm25 (did you mean "scheme"?)
}

// Expand carries a generation-augmented query to every kind of retriever:
// BM25 searches R2MED's combined text, dense retrievers embed the query
// and the generation and average them.
func ExampleExpand() {
	qs := []ir.Query{{ID: "q1", Text: "tired and always cold"}}
	gens := []expand.Generation{{ID: "q1", Text: "tired and always cold", HyDoc: "Hypothyroidism causes fatigue and cold intolerance.", Method: "hyde", LLM: "gpt4"}}
	eq, err := retrieve.Expand(qs, gens)
	if err != nil {
		panic(err)
	}
	fmt.Printf("BM25 text: %s\ndense: %q + %q averaged: %v\n", eq[0].Text, eq[0].Dense.Query, eq[0].Dense.Gen, eq[0].Dense.Average)
	// Output:
	// BM25 text: Hypothyroidism causes fatigue and cold intolerance.
	// dense: "tired and always cold" + "Hypothyroidism causes fatigue and cold intolerance." averaged: true
}
