package weaviate_test

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/weaviate"
	"github.com/r2med/r2med/weaviate/weaviatetest"
)

// TestSingleNode runs everything one real weaviate-server on loopback
// must do for r2med: NFCorpus pushed with stand-in vectors, vector search
// against r2med's exact flat search, BM25 against r2med's Lucene BM25,
// hybrid wiring, idempotent and resumed pushes, refusals, and the
// manifest's record.
func TestSingleNode(t *testing.T) {
	f := nfcorpus(t)
	node := weaviatetest.Start(t, weaviatetest.Options{})
	ctx := context.Background()
	open := func(t *testing.T, name string) *weaviate.Collection {
		t.Helper()
		c, err := weaviate.Open(weaviate.Config{URL: node.URL(), GRPC: node.GRPCAddr(), Collection: name})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	docs := f.task.Corpus

	vc := open(t, "Nfcorpus")
	t.Run("push with vectors", func(t *testing.T) {
		created, err := vc.Ensure(ctx, weaviate.Schema{EF: 512, EFConstruction: 256, Vectors: f.vectors()})
		if err != nil || !created {
			t.Fatalf("Ensure: created %v, %v", created, err)
		}
		st, err := vc.Push(ctx, docs, f.vecs, weaviate.PushOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if st.Written != len(docs) || st.Present != 0 || st.Objects != len(docs) {
			t.Fatalf("first push: %+v, want %d written", st, len(docs))
		}
		t.Logf("pushed %d documents with %d-dim vectors in %s (%.0f objects/s)", len(docs), embedDim, st.Elapsed.Round(time.Millisecond), float64(st.Written)/st.Elapsed.Seconds())
	})
	if t.Failed() {
		t.FailNow()
	}

	t.Run("re-push is a no-op", func(t *testing.T) {
		created, err := vc.Ensure(ctx, weaviate.Schema{Vectors: f.vectors()})
		if err != nil || created {
			t.Fatalf("Ensure on the existing collection: created %v, %v", created, err)
		}
		st, err := vc.Push(ctx, docs, f.vecs, weaviate.PushOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if st.Written != 0 || st.Present != len(docs) || st.Objects != len(docs) {
			t.Fatalf("second push: %+v, want all %d present and nothing written", st, len(docs))
		}
	})

	t.Run("vector agrees with exact flat search", func(t *testing.T) {
		exact := flatRun(t, f, 30)
		got, err := vc.SearchAll(ctx, f.queries(), weaviate.SearchOptions{Mode: weaviate.Vector, K: 10, SkipSelf: true})
		if err != nil {
			t.Fatal(err)
		}
		agree, maxDiff := 0, 0.0
		for _, q := range f.task.Queries {
			if sameTop(exact[q.ID], got[q.ID], 10, 1e-6) {
				agree++
			}
			scores := map[string]float64{}
			for _, h := range exact[q.ID] {
				scores[h.DocID] = h.Score
			}
			for _, h := range got[q.ID] {
				if s, ok := scores[h.DocID]; ok {
					maxDiff = math.Max(maxDiff, math.Abs(s-h.Score))
				}
			}
		}
		share := float64(agree) / float64(len(f.task.Queries))
		t.Logf("weaviate:vector (HNSW ef 512) top-10 = exact flat top-10 on %d of %d queries (%.2f%%); largest score difference %.2g",
			agree, len(f.task.Queries), 100*share, maxDiff)
		if share < 0.99 {
			t.Errorf("top-10 agreement %.2f%% < 99%%", 100*share)
		}
		if maxDiff > 1e-5 {
			t.Errorf("scores differ from r2med's cosine by up to %g; want float32 rounding only", maxDiff)
		}
		if n1, n2 := ndcg10(t, f.task.Qrels, exact), ndcg10(t, f.task.Qrels, got); math.Abs(n1-n2) > 0.002 {
			t.Errorf("nDCG@10 exact %.4f, weaviate %.4f", n1, n2)
		}
	})

	t.Run("bm25 against r2med lucene", func(t *testing.T) {
		bm := open(t, "NfcorpusBM25")
		if _, err := bm.Ensure(ctx, weaviate.Schema{}); err != nil {
			t.Fatal(err)
		}
		st, err := bm.Push(ctx, docs, nil, weaviate.PushOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("pushed %d documents BM25-only in %s", len(docs), st.Elapsed)
		tuned := open(t, "NfcorpusBM25Lucene")
		if _, err := tuned.Ensure(ctx, weaviate.Schema{BM25: &weaviate.BM25Params{K1: 0.9, B: 0.4}}); err != nil {
			t.Fatal(err)
		}
		if _, err := tuned.Push(ctx, docs, nil, weaviate.PushOptions{}); err != nil {
			t.Fatal(err)
		}
		// Search the flushed segments, as every later search does.
		if err := node.WaitFlushed(ctx); err != nil {
			t.Fatal(err)
		}
		lucene := luceneRun(t, f.task, 100, 0.9, 0.4)
		lucene12 := luceneRun(t, f.task, 100, 1.2, 0.75)
		t0 := time.Now()
		wv, err := bm.SearchAll(ctx, f.queries(), weaviate.SearchOptions{K: 100})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("searched %d queries in %s", len(f.task.Queries), time.Since(t0))
		wv09, err := tuned.SearchAll(ctx, f.queries(), weaviate.SearchOptions{K: 100})
		if err != nil {
			t.Fatal(err)
		}
		nl, nl12, nw, nw09 := ndcg10(t, f.task.Qrels, lucene), ndcg10(t, f.task.Qrels, lucene12), ndcg10(t, f.task.Qrels, wv), ndcg10(t, f.task.Qrels, wv09)
		t.Logf("NFCorpus test nDCG@10: r2med --bm25 lucene (k1 0.9, b 0.4) %.4f; weaviate:bm25 (k1 1.2, b 0.75) %.4f, top-10 overlap %.3f", nl, nw, overlap(lucene, wv, 10))
		t.Logf("same k1/b: r2med lucene k1 1.2 b 0.75 %.4f vs weaviate %.4f, overlap %.3f; k1 0.9 b 0.4: r2med %.4f vs weaviate %.4f, overlap %.3f",
			nl12, nw, overlap(lucene12, wv, 10), nl, nw09, overlap(lucene, wv09, 10))
		// NFCorpus is published lower-cased with stopwords stripped, so the
		// analyzers differ mostly by stemming: the rankings stay close.
		if nw < 0.25 || math.Abs(nw-nl) > 0.05 || overlap(lucene12, wv, 10) < 0.5 {
			t.Errorf("weaviate:bm25 nDCG@10 %.4f, overlap %.3f with r2med's BM25 (%.4f): further apart than tokenization explains", nw, overlap(lucene12, wv, 10), nl)
		}
		// Without stemming a query word matches only its own form: every
		// weaviate hit for "vitamins" holds that word, while Lucene's
		// Porter stemmer also finds documents that say only "vitamin".
		hits, err := tuned.Search(ctx, weaviate.Query{Text: "vitamins"}, weaviate.SearchOptions{K: 50})
		if err != nil || len(hits) == 0 {
			t.Fatalf("search vitamins: %v %v", hits, err)
		}
		for _, h := range hits {
			if !containsAny(textOf(f.task, h.DocID), map[string]bool{"vitamins": true}) {
				t.Errorf("weaviate hit %s for \"vitamins\" lacks the word", h.DocID)
			}
		}
		stemOnly := 0
		lq := luceneRun(t, &ir.Task{Corpus: f.task.Corpus, Queries: []ir.Query{{ID: "q", Text: "vitamins"}}}, 50, 0.9, 0.4)
		for _, h := range lq["q"] {
			if !containsAny(textOf(f.task, h.DocID), map[string]bool{"vitamins": true}) {
				stemOnly++
			}
		}
		if stemOnly == 0 {
			t.Error("r2med's Lucene BM25 found no document that says only \"vitamin\": the stemming difference is not shown")
		}
	})

	t.Run("hybrid alpha and fusion reach the server", func(t *testing.T) {
		qs := f.queries()[:40]
		bmRun, err := vc.SearchAll(ctx, qs, weaviate.SearchOptions{Mode: weaviate.BM25, K: 10})
		if err != nil {
			t.Fatal(err)
		}
		vecRun, err := vc.SearchAll(ctx, qs, weaviate.SearchOptions{Mode: weaviate.Vector, K: 10})
		if err != nil {
			t.Fatal(err)
		}
		for _, fusion := range []weaviate.Fusion{weaviate.RankedFusion, weaviate.RelativeScoreFusion} {
			kw, err := vc.SearchAll(ctx, qs, weaviate.SearchOptions{Mode: weaviate.Hybrid, Alpha: 0, Fusion: fusion, K: 10})
			if err != nil {
				t.Fatal(err)
			}
			vv, err := vc.SearchAll(ctx, qs, weaviate.SearchOptions{Mode: weaviate.Hybrid, Alpha: 1, Fusion: fusion, K: 10})
			if err != nil {
				t.Fatal(err)
			}
			mid, err := vc.SearchAll(ctx, qs, weaviate.SearchOptions{Mode: weaviate.Hybrid, Alpha: 0.5, Fusion: fusion, K: 10})
			if err != nil {
				t.Fatal(err)
			}
			if o := overlap(bmRun, kw, 10); o < 0.98 {
				t.Errorf("%s alpha 0: overlap with bm25 %.3f, want the BM25 ranking", fusion, o)
			}
			if o := overlap(vecRun, vv, 10); o < 0.98 {
				t.Errorf("%s alpha 1: overlap with vector %.3f, want the vector ranking", fusion, o)
			}
			if overlap(bmRun, mid, 10) > 0.99 || overlap(vecRun, mid, 10) > 0.99 {
				t.Errorf("%s alpha 0.5 equals one side: no fusion happened", fusion)
			}
			for _, hits := range mid {
				for i := 1; i < len(hits); i++ {
					if hits[i].Score > hits[i-1].Score {
						t.Fatalf("%s: hits out of score order: %v", fusion, hits)
					}
				}
			}
		}
	})

	t.Run("an interrupted push resumes", func(t *testing.T) {
		rc := open(t, "NfcorpusResume")
		if _, err := rc.Ensure(ctx, weaviate.Schema{}); err != nil {
			t.Fatal(err)
		}
		ictx, cancel := context.WithCancel(ctx)
		go func() { // interrupt once some batches are in
			for ictx.Err() == nil {
				if n, err := rc.Count(ctx); err == nil && n >= 300 {
					cancel()
					return
				}
				time.Sleep(20 * time.Millisecond)
			}
		}()
		_, err := rc.Push(ictx, docs, nil, weaviate.PushOptions{BatchSize: 50, Workers: 1})
		cancel()
		if err == nil {
			t.Skip("the push finished before it could be interrupted")
		}
		// A batch cancelled on the client may still land on the server:
		// wait until the count stands still.
		before := -1
		for {
			n, err := rc.Count(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if n == before {
				break
			}
			before = n
			time.Sleep(500 * time.Millisecond)
		}
		if before == 0 || before >= len(docs) {
			t.Fatalf("after the interrupt the collection holds %d objects; want part of %d", before, len(docs))
		}
		if _, err := rc.Search(ctx, weaviate.Query{Text: "cancer"}, weaviate.SearchOptions{}); err == nil || !strings.Contains(err.Error(), "holds no finished push") {
			t.Errorf("searching a half-pushed collection: %v", err)
		}
		st, err := rc.Push(ctx, docs, nil, weaviate.PushOptions{})
		if err != nil {
			t.Fatal(err)
		}
		// (A batch the interrupt cancelled may still land after the count
		// stood still on a loaded machine: at least what was counted is
		// present, and only what was not is written.)
		if st.Present < before || st.Written != len(docs)-st.Present || st.Objects != len(docs) {
			t.Fatalf("resumed push: %+v; want at least %d present, the rest written, %d in all", st, before, len(docs))
		}
		// A changed document is rewritten, the rest skipped.
		changed := append([]ir.Doc(nil), docs...)
		changed[7].Text += " zqxrevisedzq"
		info, err := rc.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		st, err = rc.Push(ctx, changed, nil, weaviate.PushOptions{})
		if err != nil || st.Written != 1 || st.Changed != 1 || st.Present != len(docs)-1 {
			t.Fatalf("push with one changed document: %+v, %v", st, err)
		}
		after, err := rc.Info(ctx)
		if err != nil || after.Digest == info.Digest || after.Digest == "" {
			t.Errorf("the corpus digest did not follow the change: %q → %q (%v)", info.Digest, after.Digest, err)
		}
		hits, err := rc.Search(ctx, weaviate.Query{Text: "zqxrevisedzq"}, weaviate.SearchOptions{K: 5})
		if err != nil || len(hits) == 0 || hits[0].DocID != docs[7].ID {
			t.Fatalf("the changed text is not searchable: %v, %v", hits, err)
		}
		// A corpus that lacks pushed documents is refused before writing.
		_, err = rc.Push(ctx, docs[:len(docs)-2], nil, weaviate.PushOptions{})
		if err == nil || !strings.Contains(err.Error(), "holds 2 objects of documents this corpus lacks") {
			t.Fatalf("pushing a smaller corpus: %v", err)
		}
	})

	t.Run("refusals", func(t *testing.T) {
		bm := open(t, "NfcorpusBM25")
		_, err := bm.Search(ctx, f.queries()[0], weaviate.SearchOptions{Mode: weaviate.Vector})
		if err == nil || !strings.Contains(err.Error(), "holds no vectors") {
			t.Errorf("vector search on a BM25-only collection: %v", err)
		}
		q := f.queries()[0]
		q.Vector = q.Vector[:64]
		if _, err := vc.Search(ctx, q, weaviate.SearchOptions{Mode: weaviate.Vector}); err == nil || !strings.Contains(err.Error(), "dimension 64") {
			t.Errorf("a 64-dim query on 128-dim vectors: %v", err)
		}
		if _, err := bm.Ensure(ctx, weaviate.Schema{Vectors: f.vectors()}); err == nil || !strings.Contains(err.Error(), "without vectors") {
			t.Errorf("pushing vectors into a BM25-only collection: %v", err)
		}
		other := *f.vectors()
		other.Model = "another-model"
		if _, err := vc.Ensure(ctx, weaviate.Schema{Vectors: &other}); err == nil || !strings.Contains(err.Error(), "test-hash-tfidf-128") {
			t.Errorf("pushing another model's vectors: %v", err)
		}
		if _, err := vc.Ensure(ctx, weaviate.Schema{Replicas: 3, Vectors: f.vectors()}); err == nil || !strings.Contains(err.Error(), "replication factor 1") {
			t.Errorf("asking an existing collection for 3 replicas: %v", err)
		}
		if _, err := open(t, "Missing").Search(ctx, q, weaviate.SearchOptions{}); err == nil || !strings.Contains(err.Error(), "r2med index push") {
			t.Errorf("searching a missing collection: %v", err)
		}
		dead, err := weaviate.Open(weaviate.Config{URL: "http://127.0.0.1:1", GRPC: "127.0.0.1:1", Collection: "X"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := dead.Exists(ctx); err == nil || !strings.Contains(err.Error(), "is weaviate-server running there?") {
			t.Errorf("no server: %v", err)
		}
	})

	t.Run("approximate search, measured", func(t *testing.T) {
		qs := f.queries()
		o := weaviate.SearchOptions{Mode: weaviate.Vector, K: 10, SkipSelf: true}
		// The exact run over the vectors read back is r2med's flat search
		// of the vectors pushed.
		exact, err := vc.ExactRun(ctx, docs, qs, 10)
		if err != nil {
			t.Fatal(err)
		}
		flat := flatRun(t, f, 10)
		for _, q := range f.task.Queries {
			if !sameTop(flat[q.ID], exact[q.ID], 10, 1e-6) {
				t.Fatalf("query %s: ExactRun %v, flat search %v", q.ID, exact[q.ID], flat[q.ID])
			}
		}
		if _, err := vc.ExactRun(ctx, docs[1:], qs, 10); err == nil || !strings.Contains(err.Error(), "other than the corpus's") {
			t.Errorf("ExactRun with a corpus that lacks a document: %v", err)
		}

		// ef 1 (a search keeps at least k candidates: 10) misses some of
		// the exact top 10; the collection's ef is back after.
		hold, err := vc.HoldEF(ctx, 1)
		if err != nil {
			t.Fatal(err)
		}
		if vi, err := vc.VectorIndex(ctx); err != nil || vi.EF != 1 || vi.Exact {
			t.Errorf("while held: %+v, %v", vi, err)
		}
		if _, err := vc.HoldEF(ctx, 2); err == nil || !strings.Contains(err.Error(), "ef 1 set by r2med run") {
			t.Errorf("a second hold: %v", err)
		}
		run, err := vc.SearchAll(ctx, qs, o)
		if err != nil {
			t.Fatal(err)
		}
		low, err := vc.CheckExact(ctx, docs, qs, run, o)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := hold.Release(); err != nil {
			t.Fatal(err)
		}
		if vi, err := vc.VectorIndex(ctx); err != nil || vi.EF != 512 {
			t.Errorf("after the hold: %+v, %v", vi, err)
		}
		run, err = vc.SearchAll(ctx, qs, o)
		if err != nil {
			t.Fatal(err)
		}
		high, err := vc.CheckExact(ctx, docs, qs, run, o)
		if err != nil {
			t.Fatal(err)
		}
		hybrid := o
		hybrid.Mode, hybrid.Alpha = weaviate.Hybrid, 0.5
		hrun, err := vc.SearchAll(ctx, qs, hybrid)
		if err != nil {
			t.Fatal(err)
		}
		hy, err := vc.CheckExact(ctx, docs, qs, hrun, hybrid)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("HNSW ef 1: %s; ef 512: %s; hybrid's vector side at ef 512: %s", low[0], high[0], hy[0])
		if len(low) != 1 || low[0].K != 10 || low[0].Recall >= 0.99 || low[0].Recall < 0.3 {
			t.Errorf("ef 1: %v; want recall@10 clearly below 1", low)
		}
		if high[0].Recall < 0.99 || hy[0].Recall != high[0].Recall {
			t.Errorf("ef 512: %v, hybrid's vector side %v", high, hy)
		}

		// A flat index is exact: recall 1.
		fc := open(t, "NfcorpusFlat")
		part := docs[:600]
		if _, err := fc.Ensure(ctx, weaviate.Schema{Index: "flat", Vectors: f.vectors()}); err != nil {
			t.Fatal(err)
		}
		if _, err := fc.Push(ctx, part, f.vecs[:600], weaviate.PushOptions{}); err != nil {
			t.Fatal(err)
		}
		if vi, err := fc.VectorIndex(ctx); err != nil || !vi.Exact || vi.String() != "flat (exact)" {
			t.Errorf("flat index: %+v %q, %v", vi, vi, err)
		}
		if _, err := fc.HoldEF(ctx, 64); err == nil || !strings.Contains(err.Error(), "hnsw only") {
			t.Errorf("ef on a flat index: %v", err)
		}
		deep := o
		deep.K = 100
		frun, err := fc.SearchAll(ctx, qs, deep)
		if err != nil {
			t.Fatal(err)
		}
		exactFlat, err := fc.CheckExact(ctx, part, qs, frun, deep)
		if err != nil {
			t.Fatal(err)
		}
		if len(exactFlat) != 2 || exactFlat[0].Recall != 1 || exactFlat[1].K != 100 || exactFlat[1].Recall != 1 || exactFlat[1].Complete != len(qs) {
			t.Errorf("flat index: %v; want recall 1 at 10 and 100", exactFlat)
		}

		// Another run's lease is respected while it lives, and put back
		// once it lapses (the run died holding it).
		if err := weaviate.WriteForeignLease(ctx, vc, 3, 512, time.Now().Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		if l, err := vc.Lease(ctx); err != nil || l == nil || l.EF != 3 || l.Restore != 512 {
			t.Errorf("a live foreign lease: %v, %v", l, err)
		}
		if _, err := vc.HoldEF(ctx, 64); err == nil || !strings.Contains(err.Error(), "elsewhere pid 1") {
			t.Errorf("holding ef under another run's lease: %v", err)
		}
		if err := weaviate.WriteForeignLease(ctx, vc, 3, 512, time.Now().Add(-time.Second)); err != nil {
			t.Fatal(err)
		}
		if l, err := vc.SettleEF(ctx); err != nil || l == nil || l.EF != 3 {
			t.Errorf("settling a lapsed lease: %v, %v", l, err)
		}
		if vi, err := vc.VectorIndex(ctx); err != nil || vi.EF != 512 {
			t.Errorf("after settling: %+v, %v", vi, err)
		}
		if l, err := vc.Lease(ctx); err != nil || l != nil {
			t.Errorf("lease after settling: %v, %v", l, err)
		}
	})

	t.Run("info for the manifest", func(t *testing.T) {
		if err := vc.SetEF(ctx, 256); err != nil {
			t.Fatal(err)
		}
		info, err := vc.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		idx, _ := info.Config["vectorIndexConfig"].(map[string]any)
		if info.ServerVersion != weaviatetest.Version || info.Nodes != 1 || info.Objects != len(docs) ||
			info.Config["class"] != "Nfcorpus" || info.Config["vectorizer"] != "none" || idx["ef"] != 256.0 || idx["distance"] != "cosine" {
			t.Errorf("info: version %q, %d nodes, %d objects, config %v", info.ServerVersion, info.Nodes, info.Objects, info.Config)
		}
	})
}

func notAlnum(r rune) bool {
	return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127)
}

func textOf(task *ir.Task, id string) string {
	for _, d := range task.Corpus {
		if d.ID == id {
			return d.Text
		}
	}
	return ""
}

func containsAny(text string, words map[string]bool) bool {
	for _, w := range strings.FieldsFunc(strings.ToLower(text), notAlnum) {
		if words[w] {
			return true
		}
	}
	return false
}
