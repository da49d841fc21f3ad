package pipeline_test

import (
	"context"
	"fmt"

	"github.com/r2med/r2med/config"
	"github.com/r2med/r2med/demo"
	"github.com/r2med/r2med/pipeline"
)

// Run executes a pipeline on one task: here one written as a pipeline
// file would be, R2MED's BM25 and Lucene's fused, on the built-in demo
// task, kept in memory (Options.Out empty writes nothing). The outcome
// names the system by its stages and carries the run, its evaluation as
// R2MED's result file has it, and the manifest.
func ExampleRun() {
	task, err := demo.Load()
	if err != nil {
		panic(err)
	}
	cfg, err := config.ParseFile([]byte(`
retrieve:
  - bm25: {}
  - bm25: {scheme: lucene, k1: 1.2, b: 0.75}
fuse: {method: rrf}
top_k: 10
`))
	if err != nil {
		panic(err)
	}
	out, err := pipeline.Run(context.Background(), task, cfg, pipeline.Options{})
	if err != nil {
		panic(err)
	}
	fmt.Println(out.Name)
	fmt.Printf("nDCG@10 %.4f over %d queries (%s)\n", out.Eval.Scores["ndcg_at_10"], out.Eval.NumQueries, out.Result.MeanOver)
	fmt.Println(out.Manifest.Config["fusion"])
	// Output:
	// rrf(bm25,bm25-lucene)
	// nDCG@10 0.6449 over 15 queries (all judged queries)
	// map[k:60 method:rrf retrievers:[bm25 bm25-lucene]]
}
