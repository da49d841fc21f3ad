package pipeline

import (
	"context"
	"errors"

	"github.com/r2med/r2med/results"
	"github.com/r2med/r2med/trec"
)

func rerankRun(ctx context.Context, in stageInput, run trec.Run, r Rerank, opt Options, m *results.Manifest) (trec.Run, error) {
	return nil, errors.New("rerank: wiring in progress")
}
