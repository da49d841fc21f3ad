package retrieve_test

import (
	"context"
	"testing"

	"github.com/r2med/r2med/cache"
	"github.com/r2med/r2med/embed"
	"github.com/r2med/r2med/embed/embedtest"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/retrieve"
)

// TestDenseEmbedderSharesTheCache: a tool embedding texts of its own with
// a dense spec's embedder (the leakage audit) caches them under the
// identity the dense retriever gives its vectors, so documents the
// retriever embedded are not asked of the server again.
func TestDenseEmbedderSharesTheCache(t *testing.T) {
	ctx := context.Background()
	srv := embedtest.NewServer(t, embedtest.Options{Dim: 8})
	store, err := cache.Open(t.TempDir(), cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	none := ""
	spec := retrieve.Dense{Model: "tiny", Backend: "openai", BaseURLs: []string{srv.URL}, DocPrefix: &none}
	task := &ir.Task{Name: "t", Corpus: []ir.Doc{{ID: "d1", Text: "fever and rash"}, {ID: "d2", Text: "joint pain"}}}
	r, err := retrieve.New(ctx, spec, task, retrieve.Env{Cache: store})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Search(ctx, []retrieve.Query{{ID: "q", Text: "rash"}}, 2); err != nil {
		t.Fatal(err)
	}
	retrieve.Close(r)
	before := srv.Requests()
	e, done, err := retrieve.Dense{Model: "tiny", Backend: "openai", BaseURLs: []string{srv.URL}}.Embedder(ctx, retrieve.Env{Cache: store})
	if err != nil {
		t.Fatal(err)
	}
	defer done()
	if _, err := e.Embed(ctx, embed.Document, []string{"fever and rash", "joint pain"}); err != nil {
		t.Fatal(err)
	}
	if n := srv.Requests() - before; n != 0 {
		t.Errorf("%d requests for documents the retriever had embedded", n)
	}
	if _, err := e.Embed(ctx, embed.Document, []string{"a text never seen"}); err != nil || srv.Requests() == before {
		t.Errorf("a new text: %v, no request", err)
	}
}
