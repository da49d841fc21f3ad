package negatives

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/r2med/r2med/analysis"
	"github.com/r2med/r2med/bm25"
	"github.com/r2med/r2med/ir"
)

// BM25 is a Searcher ranking docs by BM25 over the analyzer's terms (ties
// in corpus order, as R2MED's BM25), queries searched in parallel.
func BM25(docs []ir.Doc, analyzer string, p bm25.Params, workers int) (Searcher, error) {
	an, err := analysis.Get(analyzer)
	if err != nil {
		return nil, fmt.Errorf("negatives: %w", err)
	}
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	ids := make([]string, len(docs))
	for i, d := range docs {
		ids[i] = d.ID
	}
	ix, err := bm25.Build(len(docs), func(i int, dst []string) []string {
		return an.Analyze(dst, docs[i].Text)
	}, p, bm25.BuildOptions{Workers: workers, IDs: ids})
	if err != nil {
		return nil, fmt.Errorf("negatives: %w", err)
	}
	return SearcherFunc(func(ctx context.Context, queries []ir.Query, k int) (ir.Run, error) {
		lists := make([][]ir.Hit, len(queries))
		var next atomic.Int64
		var wg sync.WaitGroup
		for range min(workers, len(queries)) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				sr := ix.NewSearcher()
				var toks []string
				for ctx.Err() == nil {
					i := int(next.Add(1) - 1)
					if i >= len(queries) {
						return
					}
					toks = an.Analyze(toks[:0], queries[i].Text)
					hits := sr.Search(toks, k)
					list := make([]ir.Hit, len(hits))
					for j, h := range hits {
						list[j] = ir.Hit{DocID: ids[h.Doc], Score: float64(h.Score)}
					}
					lists[i] = list
				}
			}()
		}
		wg.Wait()
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		run := make(ir.Run, len(queries))
		for i, q := range queries {
			run[q.ID] = lists[i]
		}
		return run, nil
	}), nil
}
