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
func CorpusVectors(ctx context.Context, d retrieve.Dense, task *ir.Task, env retrieve.Env) (*vector.Flat, weaviate.Vectors, error) {
	flat, err := d.CorpusVectors(ctx, task, env)
	if err != nil {
		return nil, weaviate.Vectors{}, err
	}
	return flat, weaviate.Vectors{Model: d.Model, Dim: flat.Dim(), Metric: vector.Cosine.String()}, nil
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
	return flat, weaviate.Vectors{Model: d.Model, Dim: flat.Dim(), Metric: m.Metric}, nil
}
