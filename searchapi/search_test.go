package searchapi_test

import (
	"context"
	"fmt"
	"math"
	"net/url"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/r2med/r2med/bm25"
	"github.com/r2med/r2med/cache"
	"github.com/r2med/r2med/embed/embedtest"
	"github.com/r2med/r2med/expand"
	"github.com/r2med/r2med/fusion"
	"github.com/r2med/r2med/internal/yamlx"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/measure/measuretest"
	"github.com/r2med/r2med/pipeline"
	"github.com/r2med/r2med/rerank"
	"github.com/r2med/r2med/rerank/reranktest"
	"github.com/r2med/r2med/retrieve"
	"github.com/r2med/r2med/searchapi"
	"github.com/r2med/r2med/trec"
)

func noSnippet() *int { n := 0; return &n }

// TestBM25SameAsRun: for every query of the demo task and NFCorpus (test
// split), the service on a loopback port answers exactly the top 100 of
// `r2med run` (the pipeline's BM25 in memory) — ids, order and scores to
// the bit — for each BM25 scheme, and its top 10 (GET) is their prefix.
func TestBM25SameAsRun(t *testing.T) {
	dir := t.TempDir()
	for _, task := range tasks(t) {
		for _, sc := range bm25.Schemes() {
			t.Run(task.Name+"/"+string(sc), func(t *testing.T) {
				spec := retrieve.BM25{Analyzer: "lucene-english", Params: bm25.DefaultParams(sc)}
				want := runOf(t, task, pipeline.Config{Retrievers: []retrieve.Spec{spec}, TopK: 100})
				r := start(t, one(bm25File(t, dir, task, sc, nil)), searchapi.Options{}, searchapi.HandlerOptions{})
				got := searchAll(t, r, task, searchapi.SearchBody{K: 100, Snippet: noSnippet()})
				for _, q := range task.Queries {
					if !sameHits(t, q.ID, want[q.ID], got[q.ID].Hits) {
						return
					}
				}
				for _, q := range task.Queries[:min(5, len(task.Queries))] {
					var res searchapi.Result
					u := r.url + "/v1/search?k=10&id=" + url.QueryEscape(q.ID) + "&q=" + url.QueryEscape(q.Text)
					if code := getJSON(t, u, &res); code != 200 {
						t.Fatalf("GET %s: %d", u, code)
					}
					sameHits(t, "GET "+q.ID, want[q.ID][:min(10, len(want[q.ID]))], res.Hits)
				}
			})
		}
	}
}

// TestBM25MatchesReference: on NFCorpus the service's R2MED BM25 is
// R2MED's own published-code run (the reference file: Lucene's English
// analyzer, gensim's LuceneBM25Model, top 100), document for document, in
// the order pytrec_eval evaluated it (ties by doc id descending), scores
// within the file's six decimals.
func TestBM25MatchesReference(t *testing.T) {
	if !withShared(t) {
		t.Skip("no shared data")
	}
	task := nfcorpus(t)
	ref, err := trec.ReadRunFile(filepath.Join(shared, "eval-reference", "nfcorpus.bm25.run"))
	if err != nil {
		t.Fatal(err)
	}
	ref.Rank(ir.TiesByDocID)
	r := start(t, one(bm25File(t, t.TempDir(), task, bm25.R2MED, nil)), searchapi.Options{}, searchapi.HandlerOptions{})
	got := searchAll(t, r, task, searchapi.SearchBody{K: 100, Snippet: noSnippet()})
	n := 0
	for qid, want := range ref {
		hits := got[qid].Hits
		if len(hits) != len(want) {
			t.Fatalf("%s: %d hits, the reference %d", qid, len(hits), len(want))
		}
		for i, h := range hits {
			if h.ID != want[i].DocID || math.Abs(float64(float32(h.Score))-want[i].Score) > 1e-6*max(1, math.Abs(want[i].Score)) {
				t.Fatalf("%s rank %d: %s %.7f, the reference %s %.7f", qid, i+1, h.ID, h.Score, want[i].DocID, want[i].Score)
			}
			n++
		}
	}
	if n == 0 {
		t.Fatal("the reference run is empty")
	}
}

// TestFusionSameAsRun: several retrievers fused by RRF and CombSUM
// (default and explicit settings) give run's fused lists, through POST
// and GET alike.
func TestFusionSameAsRun(t *testing.T) {
	dir := t.TempDir()
	for _, task := range tasks(t) {
		lucene := retrieve.BM25{Analyzer: "lucene-english", Params: bm25.DefaultParams(bm25.Lucene)}
		robertson := retrieve.BM25{Analyzer: "lucene-english", Params: bm25.DefaultParams(bm25.Robertson)}
		files := []searchapi.IndexFile{
			{Name: "bm25", Path: bm25File(t, dir, task, bm25.R2MED, nil)},
			{Name: "lucene", Path: bm25File(t, dir, task, bm25.Lucene, nil)},
			{Name: "robertson", Path: bm25File(t, dir, task, bm25.Robertson, nil)},
		}
		r := start(t, files, searchapi.Options{}, searchapi.HandlerOptions{})
		for _, c := range []struct {
			fuse  fusion.Spec
			specs []retrieve.Spec
			names []string
		}{
			{fusion.Spec{}, []retrieve.Spec{retrieve.DefaultBM25(), lucene}, []string{"bm25", "lucene"}},
			{fusion.Spec{Method: "rrf", K: 100}, []retrieve.Spec{lucene, robertson, retrieve.DefaultBM25()}, []string{"lucene", "robertson", "bm25"}},
			{fusion.Spec{Method: "combsum", Norm: "zscore", Weights: []float64{0.3, 0.7}}, []retrieve.Spec{retrieve.DefaultBM25(), robertson}, []string{"bm25", "robertson"}},
			{fusion.Spec{Method: "combsum", Depth: 150}, []retrieve.Spec{robertson, lucene}, []string{"robertson", "lucene"}},
		} {
			label := fmt.Sprintf("%s %v %+v", task.Name, c.names, c.fuse)
			want := runOf(t, task, pipeline.Config{Retrievers: c.specs, Fuse: c.fuse, TopK: 100})
			f := c.fuse
			got := searchAll(t, r, task, searchapi.SearchBody{K: 100, Retrievers: c.names, Fuse: &f, Snippet: noSnippet()})
			for _, q := range task.Queries {
				if !sameHits(t, label+" "+q.ID, want[q.ID], got[q.ID].Hits) {
					break
				}
				if want := c.fuse.Name() + "(" + strings.Join(c.names, ",") + ")"; got[q.ID].System != want {
					t.Fatalf("system %q, want %q", got[q.ID].System, want)
				}
			}
			// GET spells the same settings as parameters; a top 10 is the
			// top 10 of lists fused as deep as run fuses them.
			q := task.Queries[len(task.Queries)-1]
			v := url.Values{"q": {q.Text}, "id": {q.ID}, "k": {"10"}, "snippet": {"0"}, "retriever": {strings.Join(c.names, ",")}}
			if c.fuse.Method != "" {
				v.Set("fuse", c.fuse.Method)
			}
			if c.fuse.K != 0 {
				v.Set("rrf_k", fmt.Sprint(c.fuse.K))
			}
			if c.fuse.Norm != "" {
				v.Set("norm", c.fuse.Norm)
			}
			if c.fuse.Depth != 0 {
				v.Set("fuse_depth", fmt.Sprint(c.fuse.Depth))
			}
			if c.fuse.Weights != nil {
				v.Set("weights", "0.3,0.7")
			}
			var res searchapi.Result
			if code := getJSON(t, r.url+"/v1/search?"+v.Encode(), &res); code != 200 {
				t.Fatalf("GET: %d", code)
			}
			sameHits(t, label+" GET "+q.ID, want[q.ID][:min(10, len(want[q.ID]))], res.Hits)
		}
	}
}

// TestDenseSameAsRun: an index holding vectors made by a deterministic
// stand-in embedder (a loopback embedding server) is searched with the
// queries embedded by the recipe it records, exactly as run's dense
// retriever searches in memory: float32, int8 with rescoring, and BM25 +
// dense from one file fused by RRF.
func TestDenseSameAsRun(t *testing.T) {
	srv := embedtest.NewServer(t, embedtest.Options{Dim: 48})
	dir := t.TempDir()
	for _, task := range tasks(t) {
		plain := standIn(srv)
		int8r := plain
		int8r.Quantize, int8r.Rescore = "int8", true
		files := []searchapi.IndexFile{
			{Name: "f32", Path: denseFile(t, dir, task, plain, nil, false)},
			{Name: "i8", Path: denseFile(t, dir, task, int8r, []string{"int8"}, false)},
			{Name: "hybrid", Path: denseFile(t, dir, task, plain, nil, true)},
		}
		r := start(t, files, searchapi.Options{Dense: searchapi.DenseOptions{BaseURLs: []string{srv.URL}}}, searchapi.HandlerOptions{})
		for _, c := range []struct {
			names []string
			specs []retrieve.Spec
		}{
			{[]string{"f32"}, []retrieve.Spec{plain}},
			{[]string{"i8"}, []retrieve.Spec{int8r}},
			{[]string{"hybrid:dense"}, []retrieve.Spec{plain}},
			{[]string{"hybrid", "hybrid:dense"}, []retrieve.Spec{retrieve.DefaultBM25(), plain}},
		} {
			want := runOf(t, task, pipeline.Config{Retrievers: c.specs, TopK: 100})
			got := searchAll(t, r, task, searchapi.SearchBody{K: 100, Retrievers: c.names, Snippet: noSnippet()})
			for _, q := range task.Queries {
				if !sameHits(t, fmt.Sprint(task.Name, c.names, " ", q.ID), want[q.ID], got[q.ID].Hits) {
					break
				}
			}
		}
		// Without an id nothing is skipped: a document's own text finds
		// that document first (one whose text no other document has: a
		// copy ties with it and ranks by doc id, as trec_eval reads it,
		// at k 1 as at k 100; NFCorpus's MED-3207 is MED-398's).
		d := uniqueText(task, len(task.Corpus)/2)
		res, err := r.client.Search(context.Background(), searchapi.SearchBody{Query: &d.Text, K: 1, Retrievers: []string{"f32"}})
		if err != nil {
			t.Fatal(err)
		}
		if res[0].Hits[0].ID != d.ID {
			t.Errorf("a document's text should find it first, got %s", res[0].Hits[0].ID)
		}
	}
}

// garFor is run's generation for the service (what serve-search wires
// from --gar-model).
func garFor(t testing.TB, g pipeline.Generate, store *cache.Store) *searchapi.GAR {
	t.Helper()
	client, err := g.Client(pipeline.GenerateOptions{Cache: store})
	if err != nil {
		t.Fatal(err)
	}
	prompts, err := expand.LoadPrompts("")
	if err != nil {
		t.Fatal(err)
	}
	return &searchapi.GAR{LLM: client, Label: g.LLMName(), Prompts: prompts, Request: g.Request(),
		Subject: func(task string) (expand.Subject, error) { return pipeline.SubjectOf(task, g) }}
}

// TestGARSameAsRun: a query expanded by the service (HyDE, Query2doc,
// LameR) gets the prompt and request run's expansion stage sends, so the
// answer run cached is reused (no LLM call) and the hits are run's, for
// BM25 and for BM25 fused with dense (R2MED's averaged embeddings).
func TestGARSameAsRun(t *testing.T) {
	task := demoTask(t)
	var calls atomic.Int64
	llmSrv := chatServer(t, &calls)
	emb := embedtest.NewServer(t, embedtest.Options{Dim: 48})
	store, err := cache.Open(t.TempDir(), cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	dir := t.TempDir()
	dense := standIn(emb)
	files := []searchapi.IndexFile{{Name: "bm25", Path: denseFile(t, dir, task, dense, nil, true)}}
	g := pipeline.DefaultGenerate()
	g.Model, g.BaseURLs, g.Label = "tiny-llm", []string{llmSrv.URL}, "qwen-7b"
	r := start(t, files, searchapi.Options{GAR: garFor(t, g, store), Dense: searchapi.DenseOptions{BaseURLs: []string{emb.URL}},
		Env: retrieve.Env{Cache: store}}, searchapi.HandlerOptions{})
	for _, method := range []string{expand.HyDE, expand.Query2Doc, expand.LameR} {
		for _, c := range []struct {
			names []string
			specs []retrieve.Spec
		}{
			{[]string{"bm25"}, []retrieve.Spec{retrieve.DefaultBM25()}},
			{[]string{"bm25", "bm25:dense"}, []retrieve.Spec{retrieve.DefaultBM25(), dense}},
		} {
			gm := g
			gm.Method = method
			cfg := pipeline.Config{Retrievers: c.specs, TopK: 100}
			cfg.SetGenerate(gm)
			out, err := pipeline.Run(context.Background(), task, cfg, pipeline.Options{Cache: store})
			if err != nil {
				t.Fatal(err)
			}
			before := calls.Load()
			got := searchAll(t, r, task, searchapi.SearchBody{K: 100, Retrievers: c.names, GAR: method, Snippet: noSnippet()})
			if n := calls.Load() - before; n != 0 {
				t.Errorf("%s: the service asked the LLM %d times for answers run had cached", method, n)
			}
			for _, q := range task.Queries {
				res := got[q.ID]
				if res.Expansion == nil || !res.Expansion.Cached || !strings.HasPrefix(res.Expansion.Generation, "Hypothetical passage") {
					t.Fatalf("%s %s: expansion %+v", method, q.ID, res.Expansion)
				}
				if !sameHits(t, fmt.Sprint(method, c.names, " ", q.ID), out.Run[q.ID], res.Hits) {
					break
				}
			}
		}
	}
	// A new query is asked once, then answered from the cache.
	q := "a brand new question about scurvy and bleeding gums"
	for i, wantCached := range []bool{false, true} {
		res, err := r.client.Search(context.Background(), searchapi.SearchBody{Query: &q, GAR: expand.HyDE})
		if err != nil {
			t.Fatal(err)
		}
		if res[0].Expansion.Cached != wantCached {
			t.Errorf("ask %d: cached %v", i+1, res[0].Expansion.Cached)
		}
		if !strings.HasPrefix(res[0].System, "hyde/qwen-7b → ") {
			t.Errorf("system %q", res[0].System)
		}
	}
}

// TestRerankSameAsRun: reranking (a loopback TEI server) the service's
// hits gives run's reranked lists at R2MED's depths 100 and 10.
func TestRerankSameAsRun(t *testing.T) {
	tei := teiServer(t)
	sc, err := rerank.New(rerank.Spec{Kind: "tei", BaseURL: tei.URL})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, task := range tasks(t) {
		files := one(bm25File(t, dir, task, bm25.R2MED, nil))
		r := start(t, files, searchapi.Options{Rerank: &searchapi.Rerank{Scorer: sc, Name: "tei"}}, searchapi.HandlerOptions{})
		for _, depth := range []int{100, 10} {
			want := runOf(t, task, pipeline.Config{Retrievers: []retrieve.Spec{retrieve.DefaultBM25()}, TopK: depth,
				Rerank: pipeline.Rerank{Kind: "tei", BaseURLs: yamlx.Strings{tei.URL}, Depth: depth}})
			body := searchapi.SearchBody{K: depth, Rerank: true, Snippet: noSnippet()}
			if depth != 100 {
				body.RerankDepth = depth
			}
			got := searchAll(t, r, task, body)
			for _, q := range task.Queries {
				if !sameHits(t, fmt.Sprint(task.Name, " @", depth, " ", q.ID), want[q.ID], got[q.ID].Hits) {
					break
				}
			}
		}
	}
}

// TestSnippets: hits carry the start of the document with the words whose
// analyzed terms the query shares marked, and every matched term.
func TestSnippets(t *testing.T) {
	task := demoTask(t)
	r := start(t, one(bm25File(t, t.TempDir(), task, bm25.R2MED, nil)), searchapi.Options{}, searchapi.HandlerOptions{})
	q := "crushing chest pains radiating to the jaw"
	res, err := r.client.Search(context.Background(), searchapi.SearchBody{Query: &q, K: 3, Snippet: new(300)})
	if err != nil {
		t.Fatal(err)
	}
	h := res[0].Hits[0]
	var text strings.Builder
	var marked []string
	for _, s := range h.Snippet {
		text.WriteString(s.Text)
		if s.Match {
			marked = append(marked, s.Text)
		}
	}
	doc, err := r.svc.Doc(h.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(doc.Text, text.String()) || text.Len() > 300 || text.Len() < 290 || !h.Truncated {
		t.Errorf("snippet %q is not the first 300 bytes of %q (truncated %v)", text.String(), doc.Text, h.Truncated)
	}
	if strings.Join(h.Matched, ",") != "crush,chest,pain,radiat,jaw" {
		t.Errorf("matched terms %v", h.Matched)
	}
	if strings.Join(marked, ",") != "crushing,chest,pain,radiate,jaw" {
		t.Errorf("marked %v", marked)
	}
	for _, hit := range res[0].Hits {
		if hit.Rank == 0 || len(hit.Snippet) == 0 {
			t.Errorf("hit %+v lacks a rank or snippet", hit)
		}
	}
	// No snippet: no text and no terms.
	res, err = r.client.Search(context.Background(), searchapi.SearchBody{Query: &q, K: 3, Snippet: noSnippet()})
	if err != nil {
		t.Fatal(err)
	}
	if h := res[0].Hits[0]; h.Snippet != nil || h.Matched != nil {
		t.Errorf("snippet=0 should give ids and scores only: %+v", h)
	}
}

// TestHitsMeanTheirOrder: at every stage — retrieval, fusion, a rerank
// by a judge that finds every document equally relevant — the service's
// hits are run's, ranks included, and their scores strictly decrease as
// float32, so a client writing them as a run file (or ranking them by
// score, as trec_eval does) reads the order given.
func TestHitsMeanTheirOrder(t *testing.T) {
	task := demoTask(t)
	dir := t.TempDir()
	judge := reranktest.NewTies(t, 1)
	sc, err := rerank.New(rerank.Spec{Kind: "tei", BaseURL: judge.URL})
	if err != nil {
		t.Fatal(err)
	}
	lucene := retrieve.BM25{Analyzer: "lucene-english", Params: bm25.DefaultParams(bm25.Lucene)}
	files := []searchapi.IndexFile{
		{Name: "bm25", Path: bm25File(t, dir, task, bm25.R2MED, nil)},
		{Name: "lucene", Path: bm25File(t, dir, task, bm25.Lucene, nil)},
	}
	r := start(t, files, searchapi.Options{Rerank: &searchapi.Rerank{Scorer: sc, Name: "tei"}}, searchapi.HandlerOptions{})
	for _, c := range []struct {
		name string
		cfg  pipeline.Config
		body searchapi.SearchBody
	}{
		{"bm25", pipeline.Config{Retrievers: []retrieve.Spec{retrieve.DefaultBM25()}, TopK: 100},
			searchapi.SearchBody{K: 100, Retrievers: []string{"bm25"}}},
		{"rrf", pipeline.Config{Retrievers: []retrieve.Spec{retrieve.DefaultBM25(), lucene}, TopK: 100},
			searchapi.SearchBody{K: 100, Retrievers: []string{"bm25", "lucene"}}},
		{"rerank", pipeline.Config{Retrievers: []retrieve.Spec{retrieve.DefaultBM25()}, TopK: 100, Rerank: pipeline.Rerank{Kind: "tei", BaseURLs: yamlx.Strings{judge.URL}}},
			searchapi.SearchBody{K: 100, Retrievers: []string{"bm25"}, Rerank: true}},
	} {
		want := runOf(t, task, c.cfg)
		c.body.Snippet = noSnippet()
		got := searchAll(t, r, task, c.body)
		asRun := ir.Run{}
		for _, q := range task.Queries {
			if !sameHits(t, c.name+" "+q.ID, want[q.ID], got[q.ID].Hits) {
				break
			}
			for _, h := range got[q.ID].Hits {
				asRun[q.ID] = append(asRun[q.ID], ir.Hit{DocID: h.ID, Score: h.Score})
			}
		}
		measuretest.CheckRun(t, asRun, task.Qrels)
	}
}

// uniqueText is the first document from the i-th on whose text no other
// document of task has.
func uniqueText(task *ir.Task, i int) ir.Doc {
	n := map[string]int{}
	for _, d := range task.Corpus {
		n[d.Text]++
	}
	for _, d := range task.Corpus[i:] {
		if n[d.Text] == 1 {
			return d
		}
	}
	return task.Corpus[i]
}
