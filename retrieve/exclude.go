package retrieve

import (
	"context"

	"github.com/r2med/r2med/ir"
)

// Exclusions are honoured here, once, for every kind of retriever: New
// wraps the retriever of a task with exclusions (ir.Task.Excluded) so
// that each query's excluded documents are removed from its ranking
// before the cut to k (ir.Exclusions' rule, BRIGHT's run.py's). The
// wrapper asks the retriever for k plus the most documents one query
// excludes (ir.Exclusions.Max) — BM25, dense, an index file, a Weaviate
// collection, published candidate lists and run files alike — removes the
// excluded hits, keeping the others in their order, and cuts to k. A
// query therefore still gets k hits when its corpus has them, and the k
// it gets are the first k of the retriever's ranking without the excluded
// documents, whatever its order among ties (the filtered list keeps the
// ranking's order, and its first k lie within the ranking's first
// k+Max). An approximate index (Weaviate's HNSW) searched deeper may find
// other neighbours than at depth k, as any deeper search may.
//
// The hits removed are counted in the run's manifest as "hits_excluded"
// (summed over the retrievers of a fused run).

// HitsExcluded is the manifest count of hits removed for exclusions.
const HitsExcluded = "hits_excluded"

// adder is a Recorder that sums counts (a run's manifest).
type adder interface{ Add(name string, n int) }

type excluding struct {
	r     Retriever
	ex    ir.Exclusions
	extra int
	env   Env
}

// Exclude wraps r so that it honours ex (see above); r itself when ex is
// empty. New applies it to every retriever it builds for a task with
// exclusions.
func Exclude(r Retriever, ex ir.Exclusions, env Env) Retriever {
	if len(ex) == 0 {
		return r
	}
	e := &excluding{r: r, ex: ex, extra: ex.Max(), env: env}
	if _, ok := r.(Single); ok {
		return excludingSingle{e}
	}
	return e
}

func (e *excluding) Search(ctx context.Context, queries []Query, k int) (ir.Run, error) {
	run, err := e.r.Search(ctx, queries, k+e.extra)
	if err != nil {
		return nil, err
	}
	total := 0
	for qid, hits := range run {
		kept, n := e.ex.Filter(qid, hits)
		total += n
		if len(kept) == 0 && n > 0 {
			delete(run, qid) // as the run file, without its lines, leaves it out
			continue
		}
		run[qid] = kept[:min(k, len(kept))]
	}
	e.record(total)
	return run, nil
}

func (e *excluding) record(n int) {
	if a, ok := e.env.Record.(adder); ok {
		a.Add(HitsExcluded, n)
	} else {
		e.env.Count(HitsExcluded, n)
	}
}

// Close closes the wrapped retriever.
func (e *excluding) Close() error { return Close(e.r) }

// Exhaustive is the wrapped retriever's: removing documents keeps the
// order of the others.
func (e *excluding) Exhaustive() bool { return exhaustive(e.r) }

// excludingSingle keeps the wrapped retriever's single-query path.
type excludingSingle struct{ *excluding }

func (e excludingSingle) SearchOne(ctx context.Context, q Query, k int) ([]ir.Hit, error) {
	hits, err := e.r.(Single).SearchOne(ctx, q, k+len(e.ex[q.ID]))
	if err != nil {
		return nil, err
	}
	kept, _ := e.ex.Filter(q.ID, hits)
	return kept[:min(k, len(kept))], nil
}
