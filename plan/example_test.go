package plan_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/r2med/r2med/demo"
	"github.com/r2med/r2med/plan"
	"github.com/r2med/r2med/rerank"
	"github.com/r2med/r2med/retrieve"
)

// A plan names its system, says how deep each retriever searches, and
// runs the stages in order: here R2MED's BM25 and Lucene's fused by RRF,
// then the top 20 reranked (by a scorer that prefers short passages,
// standing in for a cross-encoder), then the cut to 5.
func ExamplePlan() {
	task, err := demo.Load()
	if err != nil {
		panic(err)
	}
	lucene := retrieve.DefaultBM25()
	lucene.Params.Scheme = "lucene"
	p, err := plan.New(plan.Spec{
		Retrievers: []plan.Retriever{{Spec: retrieve.DefaultBM25()}, {Spec: lucene}},
		Rerank:     &plan.Rerank{Name: "shortest", Depth: 20},
		K:          5,
	})
	if err != nil {
		panic(err)
	}
	shortest := rerank.ScorerFunc(func(_ context.Context, _ string, docs []string) ([]float64, error) {
		scores := make([]float64, len(docs))
		for i, d := range docs {
			scores[i] = -float64(len(strings.Fields(d)))
		}
		return scores, nil
	})
	res, err := p.Execute(context.Background(), plan.Input{Task: task}, plan.Env{Scorer: shortest})
	if err != nil {
		panic(err)
	}
	fmt.Println(p.Spec().System())
	fmt.Println("each retriever searches", p.Spec().Depth(), "deep")
	q := task.Queries[0].ID
	for i, h := range res.Run[q] {
		fmt.Println(i+1, h.DocID, h.Score)
	}
	// Output:
	// rrf(bm25,bm25-lucene) → shortest@20
	// each retriever searches 100 deep
	// 1 obgyn-miscarriage-1 -56
	// 2 resp-pneumonia-1 -57
	// 3 rheum-pmr-1 -67
	// 4 neuro-gbs-2 -70
	// 5 neuro-migraine-1 -74
}
