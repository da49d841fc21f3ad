package synth

import (
	"math"

	"github.com/r2med/r2med/ir"
)

// FullDocs is the number of documents of the eight full-size tasks.
const FullDocs = 357080

// Combined puts the eight R2MED-shaped tasks into one corpus of about docs
// documents (FullDocs for docs ≤ 0), every task's documents scaled by the
// same factor and every task's queries kept: the one-index set the engine
// benchmarks and their peers (Lucene, FAISS) run on. Ids are prefixed with
// the task's name and a slash, so they stay unique; the corpus keeps the
// tasks' order.
func Combined(docs int, seed int64) *ir.Task {
	f := 1.0
	if docs > 0 {
		f = float64(docs) / FullDocs
	}
	out := &ir.Task{Name: "combined", Layout: ir.LayoutR2MED, Qrels: ir.Qrels{}}
	for _, spec := range R2MEDSpecs() {
		spec.Docs = max(1, int(math.Round(float64(spec.Docs)*f)))
		t := Generate(spec, seed)
		p := spec.Name + "/"
		for _, d := range t.Corpus {
			out.Corpus = append(out.Corpus, ir.Doc{ID: p + d.ID, Text: d.Text})
		}
		for _, q := range t.Queries {
			out.Queries = append(out.Queries, ir.Query{ID: p + q.ID, Text: q.Text})
		}
		for qid, m := range t.Qrels {
			for did, g := range m {
				out.Qrels.Add(p+qid, p+did, g)
			}
		}
	}
	return out
}

// CombinedQueries returns the queries of Combined, which do not depend on
// the corpus size (a query's text comes from its topic, not from the
// documents), without generating a corpus.
func CombinedQueries(seed int64) []ir.Query {
	return Combined(len(R2MEDSpecs()), seed).Queries
}
