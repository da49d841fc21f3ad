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
