package retrieve

import (
	"context"

	"github.com/r2med/r2med/embed"
)

// Embedder is the embedder d's retriever embeds with, built as it builds
// it (the registry's checkpoint and backend, the servers, a local model)
// and cached in env.Cache under the identity its recipe gives the
// vectors, for tools that embed texts of their own (the leakage audit):
// texts are embedded as given, with no instruction. done releases a
// local model.
func (d Dense) Embedder(ctx context.Context, env Env) (e embed.Embedder, done func(), err error) {
	none := ""
	d.QueryPrefix, d.DocPrefix = &none, &none
	if err := d.Validate(); err != nil {
		return nil, nil, err
	}
	r, err := newDenseRecipe(ctx, d, "", env)
	if err != nil {
		return nil, nil, err
	}
	return r.emb, r.close, nil
}

// QueryEncoder embeds queries as d's dense retriever does (its
// instructions, lengths and cache; a GAR query's generation combined with
// it or averaged, by R2MED's rule), for kinds that search with d's recipe
// vectors held elsewhere (a Weaviate collection the corpus was pushed to
// with CorpusVectors' vectors).
type QueryEncoder struct{ r *denseRecipe }

// QueryEncoder builds d's query side for the queries of the named task,
// whose instruction the recipe takes.
func (d Dense) QueryEncoder(ctx context.Context, task string, env Env) (*QueryEncoder, error) {
	r, err := newDenseRecipe(ctx, d, task, env)
	if err != nil {
		return nil, err
	}
	return &QueryEncoder{r}, nil
}

// Embed embeds each query's dense input, in order.
func (e *QueryEncoder) Embed(ctx context.Context, queries []Query) ([][]float32, error) {
	return e.r.embedQueries(ctx, queries)
}

// Recipe is the recipe as the manifest records it ("dense_recipe").
func (e *QueryEncoder) Recipe() map[string]any { return e.r.describe() }

// Close releases a local model.
func (e *QueryEncoder) Close() error {
	e.r.close()
	return nil
}
