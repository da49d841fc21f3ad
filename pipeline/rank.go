package pipeline

import (
	"context"
	"errors"

	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/plan"
	"github.com/r2med/r2med/retrieve"
)

// Rank ranks task's corpus for queries with cfg's retrievers, fused as
// cfg.Fuse says, at most k hits per query: the retrieve and fuse stages of
// cfg's plan alone, as run executes them — no generations, reranking,
// evaluation or stage files — for tools that rank queries of their own
// (hard-negative mining). A config with GAR or reranking is refused rather
// than half applied.
func Rank(ctx context.Context, task *ir.Task, queries []ir.Query, cfg Config, k int, env retrieve.Env) (ir.Run, error) {
	if cfg.GAR.Method != "" || cfg.Generate != nil || cfg.Rerank.Kind != "" {
		return nil, errors.New("ranking here uses retrievers and fusion only; drop the expand and rerank stages")
	}
	if k <= 0 {
		return nil, errors.New("rank: k must be positive")
	}
	cfg.TopK = k
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	p, err := plan.New(cfg.Plan())
	if err != nil {
		return nil, err
	}
	res, err := p.Execute(ctx, plan.Input{Task: task, Queries: retrieve.Queries(queries)}, plan.Env{Env: env})
	if err != nil {
		return nil, err
	}
	return res.Run, nil
}
