package pipeline

import (
	"context"
	"slices"
	"testing"

	"github.com/r2med/r2med/demo"
	"github.com/r2med/r2med/fusion"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/retrieve"
	"github.com/r2med/r2med/trec"
)

// Rank gives what the retrievers and fusion give on their own, ranked as
// run's stages rank them: one BM25 equals retrieve's BM25 in trec_eval's
// order; two fused equal fusion.RRF of those runs, ranked as fused.
func TestRank(t *testing.T) {
	task, err := demo.Load()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	bm := retrieve.DefaultBM25()
	r, err := retrieve.New(ctx, bm, task, retrieve.Env{})
	if err != nil {
		t.Fatal(err)
	}
	want, err := r.Search(ctx, retrieve.Queries(task.Queries), 7)
	if err != nil {
		t.Fatal(err)
	}
	trec.Rank(want, ir.TiesByDocID)
	got, err := Rank(ctx, task, task.Queries, Config{Retrievers: []retrieve.Spec{bm}}, 7, retrieve.Env{})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range task.Queries {
		if !slices.Equal(got[q.ID], want[q.ID]) {
			t.Fatalf("%s: Rank %v, BM25 %v", q.ID, got[q.ID], want[q.ID])
		}
	}
	lucene := retrieve.DefaultBM25()
	lucene.Params.Scheme = "lucene"
	r2, _ := retrieve.New(ctx, lucene, task, retrieve.Env{})
	a, _ := r.Search(ctx, retrieve.Queries(task.Queries), 100)
	b, _ := r2.Search(ctx, retrieve.Queries(task.Queries), 100)
	trec.Rank(a, ir.TiesByDocID)
	trec.Rank(b, ir.TiesByDocID)
	fused := fusion.RRF([]ir.Run{a, b}, 60, 100)
	trec.Rank(fused, ir.TiesAsListed)
	got, err = Rank(ctx, task, task.Queries, Config{Retrievers: []retrieve.Spec{bm, lucene}}, 5, retrieve.Env{})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range task.Queries {
		if !slices.Equal(got[q.ID], fused[q.ID][:5]) {
			t.Fatalf("%s: fused Rank %v, RRF %v", q.ID, got[q.ID], fused[q.ID][:5])
		}
	}
	if _, err := Rank(ctx, task, task.Queries, Config{Retrievers: []retrieve.Spec{bm}, Rerank: Rerank{Kind: "tei"}}, 5, retrieve.Env{}); err == nil {
		t.Error("a rerank stage accepted")
	}
}
