package pipeline

import (
	"context"
	"errors"

	"github.com/r2med/r2med/results"
	"github.com/r2med/r2med/trec"
)

func retrieveDense(ctx context.Context, in stageInput, d Dense, topK int, opt Options, m *results.Manifest) (trec.Run, error) {
	return nil, errors.New("dense retrieval: wiring in progress")
}
