package retrieve_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/r2med/r2med/bm25"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/retrieve"
	"github.com/r2med/r2med/trec"
)

// TestSearchTopIsTheDeepSearchsTop: one query's top k searched k+1 deep
// (SearchTop, the search service's path) is, once ranked, exactly the top
// k of the search 100 deep ranked — hits, order and scores — for BM25's
// three schemes in memory and from an index file, with and without
// exclusions, on every query of the demo task and NFCorpus at k 1, 3, 10
// and 50; both the shallow search and the deep one it falls back to at a
// tie are taken.
func TestSearchTopIsTheDeepSearchsTop(t *testing.T) {
	ctx := context.Background()
	shallow, deep := 0, 0
	for _, task := range indexTasks(t) {
		for _, sc := range []bm25.Scheme{bm25.R2MED, bm25.Lucene, bm25.Robertson} {
			path := filepath.Join(t.TempDir(), "x.idx")
			writeBM25Index(t, path, task, sc)
			file, err := parseIndex(t, "{path: "+path+"}")
			if err != nil {
				t.Fatal(err)
			}
			mem := retrieve.BM25{Analyzer: "lucene-english", Params: bm25.DefaultParams(sc)}
			// Exclusions: each query's top hit of the deep search.
			excluded := *task
			excluded.Excluded = ir.Exclusions{}
			for _, spec := range []retrieve.Spec{mem, file} {
				for _, tk := range []*ir.Task{task, &excluded} {
					r, err := retrieve.New(ctx, spec, tk, retrieve.Env{})
					if err != nil {
						t.Fatal(err)
					}
					for _, q := range tk.Queries {
						q := retrieve.Query{ID: q.ID, Text: q.Text}
						if tk == task && len(excluded.Excluded) < len(task.Queries) {
							if hits, _ := retrieve.SearchOne(ctx, r, q, 1); len(hits) > 0 {
								excluded.Excluded[q.ID] = map[string]bool{hits[0].DocID: true}
							}
						}
						all, err := retrieve.SearchOne(ctx, r, q, 100)
						if err != nil {
							t.Fatal(err)
						}
						trec.RankHits(all, retrieve.TiesOf(spec))
						for _, k := range []int{1, 3, 10, 50} {
							got, err := retrieve.SearchTop(ctx, r, q, k, 100)
							if err != nil {
								t.Fatal(err)
							}
							if len(got) < 100 && len(got) < len(tk.Corpus) {
								shallow++
							} else {
								deep++
							}
							trec.RankHits(got, retrieve.TiesOf(spec))
							want := all[:min(k, len(all))]
							got = got[:min(k, len(got))]
							if fmt.Sprint(got) != fmt.Sprint(want) {
								t.Fatalf("%s %s %s (excluded %v) query %s k %d:\n got %v\nwant %v", task.Name, sc, spec.Name(), tk != task, q.ID, k, got, want)
							}
						}
					}
					retrieve.Close(r)
				}
			}
		}
	}
	if shallow == 0 || deep == 0 {
		t.Errorf("searched shallow %d times and deep %d times: the test took only one way", shallow, deep)
	}
	t.Logf("shallow %d, deep %d", shallow, deep)
}
