package pipeline

import (
	"context"
	"errors"

	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/retrieve"
	"github.com/r2med/r2med/trec"
)

// Rank ranks task's corpus for queries with cfg's retrievers, fused as
// cfg.Fuse says, at most k hits per query, each list ranked as run's
// stages rank it (trec.Rank): the retrieve and fuse stages alone — no
// generations, reranking, evaluation or stage files — for tools that rank
// queries of their own (hard-negative mining). A config with GAR or
// reranking is refused rather than half applied.
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
	depth := k
	if cfg.fused() {
		depth = max(k, cfg.Fuse.DepthFor(k))
	}
	rq := retrieve.Queries(queries)
	runs := make([]ir.Run, len(cfg.Retrievers))
	for i, spec := range cfg.Retrievers {
		r, err := retrieve.New(ctx, spec, task, env)
		if err != nil {
			return nil, err
		}
		runs[i], err = r.Search(ctx, rq, depth)
		retrieve.Close(r)
		if err != nil {
			return nil, err
		}
		trec.Rank(runs[i], retrieve.TiesOf(spec)) // as run's retrieval stage
	}
	run := runs[0]
	if cfg.fused() {
		var err error
		if run, err = cfg.Fuse.Fuse(runs, depth); err != nil {
			return nil, err
		}
	}
	for qid, hits := range run {
		if len(hits) > k {
			run[qid] = hits[:k]
		}
	}
	return run, nil
}
