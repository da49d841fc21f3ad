package weaviatekind

import (
	"context"
	"fmt"

	"github.com/r2med/r2med/index"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/retrieve"
	"github.com/r2med/r2med/vector"
	"github.com/r2med/r2med/weaviate"
)

// CorpusVectors embeds task's documents as d's dense retriever does
// (retrieve.Dense.CorpusVectors), in corpus order: the vectors `r2med
// index push` writes into a collection, so that weaviate:vector searches
// what --retriever dense would. Vectors records what made them, for the
// collection.
// The model is resolved first (retrieve.Dense.Resolve), so the vectors
// record its revision and are made by that revision.
func CorpusVectors(ctx context.Context, d retrieve.Dense, task *ir.Task, env retrieve.Env) (*vector.Flat, weaviate.Vectors, error) {
	rs, err := d.Resolve(ctx, task)
	if err != nil {
		return nil, weaviate.Vectors{}, err
	}
	d = rs.(retrieve.Dense)
	flat, err := d.CorpusVectors(ctx, task, env)
	if err != nil {
		return nil, weaviate.Vectors{}, err
	}
	return flat, weaviate.Vectors{Model: d.Model, Revision: d.ModelRevision(), Dim: flat.Dim(), Metric: vector.Cosine.String()}, nil
}

// IndexVectors are an index file's document vectors in corpus order and
// what made them, for a collection (r2med index push --index): the
// vectors CorpusVectors would make with the stored recipe.
func IndexVectors(ix *index.Index) (*vector.Flat, weaviate.Vectors, error) {
	m := ix.Meta().Dense
	if m == nil {
		return nil, weaviate.Vectors{}, fmt.Errorf("index %s holds no dense vectors; build with --retriever dense", ix.Path())
	}
	d, err := retrieve.StoredDense(m.Recipe)
	if err != nil {
		return nil, weaviate.Vectors{}, fmt.Errorf("index %s: %w", ix.Path(), err)
	}
	flat, err := ix.Flat()
	if err != nil {
		return nil, weaviate.Vectors{}, err
	}
	// The revision the recipe records for the documents' model (a Hub
	// commit, a model directory's version).
	revision, _ := m.Recipe["model_revision"].(string)
	return flat, weaviate.Vectors{Model: d.Model, Revision: revision, Dim: flat.Dim(), Metric: m.Metric}, nil
}
