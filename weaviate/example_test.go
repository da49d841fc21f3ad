package weaviate_test

import (
	"context"
	"fmt"
	"log"

	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/weaviate"
)

// Push a corpus with its vectors into a collection and search it three
// ways. It needs a running server (README, "Scaling out").
func Example() {
	ctx := context.Background()
	cfg, err := weaviate.ParseTarget("weaviate://127.0.0.1:8080/Notes", "") // gRPC: 127.0.0.1:50051
	if err != nil {
		log.Fatal(err)
	}
	c, err := weaviate.Open(cfg)
	if err != nil {
		log.Fatal(err)
	}
	docs := []ir.Doc{{ID: "n1", Text: "iron deficiency anemia in pregnancy"}, {ID: "n2", Text: "vitamin D and bone density"}}
	vecs := [][]float32{{0.8, 0.6}, {0.6, 0.8}} // from your embedding model
	if _, err := c.Ensure(ctx, weaviate.Schema{Replicas: 1, Vectors: &weaviate.Vectors{Model: "my-model", Dim: 2, Metric: "cosine"}}); err != nil {
		log.Fatal(err)
	}
	st, err := c.Push(ctx, docs, vecs, weaviate.PushOptions{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(st.Written, "written,", st.Present, "already there")

	q := weaviate.Query{ID: "q1", Text: "anemia", Vector: []float32{0.9, 0.4}}
	for _, o := range []weaviate.SearchOptions{
		{Mode: weaviate.BM25, K: 10},
		{Mode: weaviate.Vector, K: 10},
		{Mode: weaviate.Hybrid, K: 10, Alpha: weaviate.DefaultAlpha, Fusion: weaviate.RankedFusion},
	} {
		hits, err := c.Search(ctx, q, o)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(o.Mode, hits)
	}
}
