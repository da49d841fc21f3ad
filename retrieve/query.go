package retrieve

import (
	"github.com/r2med/r2med/expand"
	"github.com/r2med/r2med/ir"
)

// Query is one query as retrievers read it.
type Query struct {
	ID string
	// Text is what lexical retrievers search with: the query, or with
	// generation-augmented retrieval R2MED's BM25 combination of the query
	// and the generation (expand.Generation.BM25Text).
	Text string
	// Dense is what embedding retrievers embed; nil embeds Text alone.
	// With GAR it is R2MED's dense input (expand.Generation.Dense): one
	// combined text, or the query and the generation whose embeddings
	// are averaged.
	Dense *expand.DenseInput
}

// denseInput is what an embedding retriever embeds for q.
func (q Query) denseInput() expand.DenseInput {
	if q.Dense != nil {
		return *q.Dense
	}
	return expand.DenseInput{Query: q.Text}
}

// Queries are a task's queries as they are, in order.
func Queries(qs []ir.Query) []Query {
	out := make([]Query, len(qs))
	for i, q := range qs {
		out[i] = Query{ID: q.ID, Text: q.Text}
	}
	return out
}

// Expand combines each query with its generation by R2MED's rules: every
// query must have exactly one generation and every generation a query
// (expand.Align says which do not).
func Expand(qs []ir.Query, gens []expand.Generation) ([]Query, error) {
	aligned, err := expand.Align(qs, gens)
	if err != nil {
		return nil, err
	}
	out := make([]Query, len(qs))
	for i, q := range qs {
		d := aligned[i].Dense()
		out[i] = Query{ID: q.ID, Text: aligned[i].BM25Text(), Dense: &d}
	}
	return out, nil
}
