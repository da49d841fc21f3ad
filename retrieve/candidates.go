package retrieve

import (
	"context"
	"errors"
	"slices"

	"gopkg.in/yaml.v3"

	"github.com/r2med/r2med/hubrepo"
	"github.com/r2med/r2med/ir"
)

// Candidates reads a candidate list a dataset publishes instead of
// ranking: a Nano set's bm25, dense or reranking_hybrid config, in the
// split of the task. Lists keep their published order (see
// dataset.Candidates.Run for the scores that keep it under any evaluator).
type Candidates struct {
	Config string
}

func init() {
	Register(Kind{
		Name:  "candidates",
		Usage: "candidates:CONFIG",
		Help:  "a candidate list the dataset publishes, e.g. NanoR2MED's bm25, harrier_oss_v1_270m or reranking_hybrid",
		Parse: func(value *yaml.Node) (Spec, error) {
			c, err := argument(value, "candidates", "the name of a candidate config (candidates: bm25)")
			return Candidates{Config: c}, err
		},
	})
}

// Kind is "candidates".
func (c Candidates) Kind() string { return "candidates" }

// Name is "candidates:CONFIG".
func (c Candidates) Name() string { return "candidates:" + c.Config }

// Validate checks that a config is named.
func (c Candidates) Validate() error {
	if c.Config == "" {
		return errors.New("candidates needs a config name (candidates:bm25)")
	}
	return nil
}

// Describe records the config.
func (c Candidates) Describe() map[string]any { return map[string]any{"retriever": c.Name()} }

// Ties is ir.TiesAsListed: a published list's order is its ranking.
func (c Candidates) Ties() ir.Ties { return ir.TiesAsListed }

// Safeguarded reports whether the lists may end with HAKARI-Bench's
// rank-101 safeguard positive (a reranking_hybrid list), which reranking
// treats apart.
func (c Candidates) Safeguarded() bool { return c.Config == "reranking_hybrid" }

// Inputs lists the config's files in the task's repository.
func (c Candidates) Inputs(task *ir.Task) ([]string, error) {
	cands, err := hubrepo.LoadCandidates(task.Dir, c.Config, task.Split)
	if err != nil {
		return nil, err
	}
	return cands.Files, nil
}

// New reads the lists.
func (c Candidates) New(_ context.Context, task *ir.Task, _ Env) (Retriever, error) {
	cands, err := hubrepo.LoadCandidates(task.Dir, c.Config, task.Split)
	if err != nil {
		return nil, err
	}
	return Lists(cands.Run()), nil
}

// Lists is a retriever that answers from rankings made beforehand: each
// query's list, cut to k; queries without one get none. The lists it
// returns are copies, the caller's to rank.
type Lists ir.Run

// Search returns the lists of queries.
func (l Lists) Search(_ context.Context, queries []Query, k int) (ir.Run, error) {
	run := make(ir.Run, len(queries))
	for _, q := range queries {
		if hits, ok := l[q.ID]; ok {
			run[q.ID] = slices.Clone(hits[:min(k, len(hits))])
		}
	}
	return run, nil
}

// SearchOne returns q's list.
func (l Lists) SearchOne(_ context.Context, q Query, k int) ([]ir.Hit, error) {
	hits := l[q.ID]
	return slices.Clone(hits[:min(k, len(hits))]), nil
}
