package weaviate_test

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/vector"
	"github.com/r2med/r2med/weaviate"
	"github.com/r2med/r2med/weaviate/weaviatetest"
)

// TestSearchEdges searches a real node where the answers are decided at
// their edges: hits that tie at the cut (duplicate documents, the same
// vectors), an empty query, and more hits asked for than the server
// gives (QUERY_MAXIMUM_RESULTS, below the 1000 objects a listing asks
// for at a time).
func TestSearchEdges(t *testing.T) {
	node := weaviatetest.Start(t, weaviatetest.Options{Env: map[string]string{"QUERY_MAXIMUM_RESULTS": "100", "USE_INVERTED_SEARCHABLE": "false"}})
	ctx := context.Background()
	// 24 copies of one text, pushed in reverse id order and 5 at a time,
	// so that the server's own order among them is not the ids'; and
	// others that score lower, one of them empty.
	var docs []ir.Doc
	for i := 23; i >= 0; i-- {
		docs = append(docs, ir.Doc{ID: fmt.Sprintf("dup-%02d", i), Text: "aspirin relieves headache pain"})
	}
	for i := range 10 {
		docs = append(docs, ir.Doc{ID: fmt.Sprintf("other-%02d", i), Text: "kidney stones and aspirin" + strings.Repeat(" filler words", i+1)})
	}
	docs = append(docs, ir.Doc{ID: "empty", Text: ""})
	texts := make([]string, len(docs))
	for i, d := range docs {
		texts[i] = d.Text
	}
	const dim = 16
	emb := weaviatetest.NewEmbedder(dim, texts)
	vecs := emb.EmbedAll(texts)
	// Requests are retried for 20 s at most: an error is seen soon.
	open := func(name string) *weaviate.Collection {
		c, err := weaviate.Open(weaviate.Config{URL: node.URL(), GRPC: node.GRPCAddr(), Collection: name, RetryFor: 20 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	c := open("Edges")
	if _, err := c.Ensure(ctx, weaviate.Schema{Index: "flat", Vectors: &weaviate.Vectors{Model: "stand-in", Dim: dim, Metric: "cosine"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Push(ctx, docs, vecs, weaviate.PushOptions{BatchSize: 5, Workers: 2}); err != nil {
		t.Fatal(err)
	}
	if err := node.WaitFlushed(ctx); err != nil {
		t.Fatal(err)
	}

	// r2med's exact search keeps hits that tie at the cut by id
	// ascending (package vector); Weaviate's answers must be that
	// ranking, whatever order it found the ties in.
	flat := vector.NewFlat(dim, vector.Cosine)
	for i, d := range docs {
		if err := flat.Add(d.ID, vecs[i]); err != nil {
			t.Fatal(err)
		}
	}
	q := weaviate.Query{ID: "q", Text: "headache", Vector: emb.Embed("headache")}
	for _, k := range []int{1, 3, 10, 23, 24, 30} {
		exact, err := flat.Search([][]float32{q.Vector}, k, vector.SearchOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for _, h := range exact[0] {
			want = append(want, h.ID)
		}
		for _, mode := range []weaviate.Mode{weaviate.Vector, weaviate.BM25} {
			hits, err := c.Search(ctx, q, weaviate.SearchOptions{Mode: mode, K: k, SkipSelf: true})
			if err != nil {
				t.Fatal(err)
			}
			got := make([]string, len(hits))
			for i, h := range hits {
				got[i] = h.DocID
			}
			if mode == weaviate.BM25 {
				// BM25 ranks the copies alike too, the others below
				// them in an order of its own.
				want = want[:min(k, 24)]
				got = got[:min(k, 24, len(got))]
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s k=%d: %v; want the tied copies kept by id ascending, as r2med's exact search keeps them: %v", mode, k, got, want)
			}
		}
	}

	// A push into the collection with other settings than it was made
	// with is refused, naming them; the same settings, or none, pass.
	vecs16 := &weaviate.Vectors{Model: "stand-in", Dim: dim, Metric: "cosine"}
	hc := open("EdgesHnsw")
	if _, err := hc.Ensure(ctx, weaviate.Schema{EF: 64, EFConstruction: 64, Stopwords: "none", BM25: &weaviate.BM25Params{K1: 0.9, B: 0.4}}); err != nil {
		t.Fatal(err)
	}
	for _, e := range []struct {
		c      *weaviate.Collection
		schema weaviate.Schema
		want   string // "": accepted
	}{
		{c, weaviate.Schema{Vectors: vecs16}, ""},
		{c, weaviate.Schema{Index: "flat", Vectors: vecs16}, ""},
		{c, weaviate.Schema{Index: "hnsw", Vectors: vecs16}, "vector index flat, not hnsw"},
		{c, weaviate.Schema{EF: 128, Vectors: vecs16}, "a flat vector index, which takes no HNSW ef"},
		{c, weaviate.Schema{BM25: &weaviate.BM25Params{K1: 0.9, B: 0.4}, Vectors: vecs16}, "BM25 k1 1.2, b 0.75, not k1 0.9, b 0.4"},
		{c, weaviate.Schema{Stopwords: "none", Vectors: vecs16}, "stopwords en, not none"},
		{c, weaviate.Schema{AsyncReplication: true, Vectors: vecs16}, "no asynchronous replication"},
		{hc, weaviate.Schema{}, ""},
		{hc, weaviate.Schema{Index: "hnsw", EF: 64, EFConstruction: 64, Stopwords: "none", BM25: &weaviate.BM25Params{K1: 0.9, B: 0.4}}, ""},
		{hc, weaviate.Schema{Index: "flat"}, "vector index hnsw, not flat"},
		{hc, weaviate.Schema{EF: 100, EFConstruction: 128, MaxConnections: 16}, "HNSW ef 64, not 100; HNSW efConstruction 64, not 128; HNSW maxConnections 32, not 16"},
		{hc, weaviate.Schema{BM25: &weaviate.BM25Params{K1: 1.2, B: 0.75}, Stopwords: "en"}, "BM25 k1 0.9, b 0.4, not k1 1.2, b 0.75; stopwords none, not en"},
	} {
		_, err := e.c.Ensure(ctx, e.schema)
		switch {
		case e.want == "" && err != nil:
			t.Errorf("Ensure %s %+v: %v", e.c.Name(), e.schema, err)
		case e.want != "" && (err == nil || !strings.Contains(err.Error(), e.want) || !strings.Contains(err.Error(), "recreate")):
			t.Errorf("Ensure %s %+v: %v; want it refused: %s", e.c.Name(), e.schema, err, e.want)
		}
	}

	// The exhaustive BM25 searcher (USE_INVERTED_SEARCHABLE=false, as
	// README's recipes start nodes) scores by Lucene 8's formula with a
	// document's length taken as its number of distinct words (BlockMax
	// WAND takes all its words), computed here by hand.
	fc := open("Formula")
	small := []ir.Doc{
		{ID: "a", Text: "heart heart disease in children"}, // 5 words, 4 distinct
		{ID: "b", Text: "heart failure"},
		{ID: "c", Text: "kidney kidney kidney stones and more stones"}, // 7 words, 4 distinct
	}
	if _, err := fc.Ensure(ctx, weaviate.Schema{}); err != nil {
		t.Fatal(err)
	}
	if _, err := fc.Push(ctx, small, nil, weaviate.PushOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := node.WaitFlushed(ctx); err != nil {
		t.Fatal(err)
	}
	info, err := fc.Info(ctx)
	if err != nil || info.BM25Searcher() != "exhaustive" || weaviate.BM25Note("weaviate:bm25", info) != "" {
		t.Errorf("searcher %q, note %q, %v; want exhaustive, no note", info.BM25Searcher(), weaviate.BM25Note("weaviate:bm25", info), err)
	}
	// heart: in a (tf 2) and b (tf 1), n = 2 of N = 3; distinct lengths
	// 4, 2, 4, average 10/3.
	idf := math.Log(1 + (3-2+0.5)/(2+0.5))
	part := func(tf, dl float64) float64 { return idf * tf / (tf + 1.2*(1-0.75+0.75*dl/(10.0/3))) }
	bm, err := fc.Search(ctx, weaviate.Query{Text: "heart"}, weaviate.SearchOptions{K: 10})
	if err != nil {
		t.Fatal(err)
	}
	want := []ir.Hit{{DocID: "a", Score: part(2, 4)}, {DocID: "b", Score: part(1, 2)}}
	if len(bm) != 2 || bm[0].DocID != "a" || bm[1].DocID != "b" || math.Abs(bm[0].Score-want[0].Score) > 1e-5 || math.Abs(bm[1].Score-want[1].Score) > 1e-5 {
		t.Errorf("exhaustive BM25 for \"heart\": %v; want %v (lengths as distinct words)", bm, want)
	}

	// Vectors read back for the exact check come in pages under gRPC's
	// 4 MB answer limit, however wide they are: 70 of 17,000 dimensions
	// (4.8 MB in all).
	const wide = 17000
	wc := open("Wide")
	wdocs := make([]ir.Doc, 70)
	for i := range wdocs {
		wdocs[i] = ir.Doc{ID: fmt.Sprintf("w-%02d", i), Text: "wide"}
	}
	wvecs := make([][]float32, len(wdocs))
	for i := range wvecs {
		wvecs[i] = make([]float32, wide)
		wvecs[i][i] = 1
		wvecs[i][wide-1] = 0.5
	}
	if _, err := wc.Ensure(ctx, weaviate.Schema{Index: "flat", Vectors: &weaviate.Vectors{Model: "wide", Dim: wide, Metric: "cosine"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := wc.Push(ctx, wdocs, wvecs, weaviate.PushOptions{BatchSize: 20}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	wq := weaviate.Query{ID: "w", Vector: wvecs[3]}
	if ex, err := wc.ExactRun(ctx, wdocs, []weaviate.Query{wq}, 5); err != nil || len(ex["w"]) != 5 || ex["w"][0].DocID != wdocs[3].ID {
		t.Errorf("exact run over %d-dim vectors: %v, %v after %s", wide, ex, err, time.Since(start))
	}

	// An empty query matches nothing (Weaviate refuses it: no retries).
	start = time.Now()
	hits, err := c.Search(ctx, weaviate.Query{ID: "e", Text: ""}, weaviate.SearchOptions{K: 10})
	if err != nil || len(hits) != 0 || time.Since(start) > 5*time.Second {
		t.Errorf("empty BM25 query: %v, %v after %s; want no hits at once", hits, err, time.Since(start))
	}
	// A tie longer than the server lists (QUERY_MAXIMUM_RESULTS) is cut
	// where Weaviate cut it, not an error.
	mc := open("Many")
	many := make([]ir.Doc, 130)
	for i := range many {
		many[i] = ir.Doc{ID: fmt.Sprintf("m-%03d", i), Text: "aspirin relieves headache pain"}
	}
	if _, err := mc.Ensure(ctx, weaviate.Schema{}); err != nil {
		t.Fatal(err)
	}
	if _, err := mc.Push(ctx, many, nil, weaviate.PushOptions{}); err != nil {
		t.Fatal(err)
	}
	if hits, err := mc.Search(ctx, weaviate.Query{Text: "headache"}, weaviate.SearchOptions{K: 60}); err != nil || len(hits) != 60 {
		t.Errorf("k 60 of a tie of 130 under QUERY_MAXIMUM_RESULTS 100: %d hits, %v", len(hits), err)
	}

	// A query of stopwords only matches nothing, as an empty one.
	if hits, err := c.Search(ctx, weaviate.Query{ID: "s", Text: "the of and"}, weaviate.SearchOptions{K: 10}); err != nil || len(hits) != 0 {
		t.Errorf("a query of stopwords: %v, %v", hits, err)
	}
	// Hybrid with an empty text is its vector side.
	hy, err := c.Search(ctx, weaviate.Query{ID: "e", Text: "", Vector: q.Vector}, weaviate.SearchOptions{Mode: weaviate.Hybrid, Alpha: 0.5, K: 5})
	if err != nil || len(hy) != 5 {
		t.Errorf("hybrid with an empty text: %v, %v; want the vector side's 5 hits", hy, err)
	}
	// More hits than the server gives is an error at once, saying what.
	start = time.Now()
	_, err = c.Search(ctx, q, weaviate.SearchOptions{Mode: weaviate.Vector, K: 100})
	if err == nil || !strings.Contains(err.Error(), "QUERY_MAXIMUM_RESULTS") || !strings.Contains(err.Error(), "--top-k") || time.Since(start) > 5*time.Second {
		t.Errorf("k 100 (and one more) above QUERY_MAXIMUM_RESULTS 100: %v after %s", err, time.Since(start))
	}
}
