package searchapi

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"unicode/utf8"

	"golang.org/x/sync/errgroup"

	"github.com/r2med/r2med/fusion"
	"github.com/r2med/r2med/highlight"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/rerank"
	"github.com/r2med/r2med/retrieve"
	"github.com/r2med/r2med/sysname"
	"github.com/r2med/r2med/trec"
)

// DefaultK is how many hits a request gets unless it asks (Pyserini's
// and most search APIs' default).
const DefaultK = 10

// Request is one query and how to answer it. The zero value of every
// field but Query means the service's default.
type Request struct {
	Query string
	// ID is the query's id: echoed, and for dense retrieval the id of a
	// document to skip (BEIR's rule, which run applies to a task's query
	// ids); empty skips nothing.
	ID string
	K  int // hits; 0 means DefaultK
	// Retrievers names the retrievers; several are fused. Empty means
	// Options.Default.
	Retrievers []string
	// Fuse overrides Options.Fuse for several retrievers.
	Fuse *fusion.Spec
	// GAR expands the query with the LLM first: hyde, query2doc, lamer,
	// reasoning, reasoning-append (expand.GenerationMethods).
	GAR string
	// Rerank reranks the hits; RerankDepth overrides the depth.
	Rerank      bool
	RerankDepth int
	// Snippet is the snippet length in bytes (0: no snippet); nil means
	// Options.Snippet.
	Snippet *int
}

// Result is the answer to one Request.
type Result struct {
	ID    string `json:"id,omitempty"`
	Query string `json:"query"`
	// System names the stages as run names systems: "bm25",
	// "rrf(bm25,bge)", "hyde-qwen-bm25-tei@100".
	System    string     `json:"system"`
	Hits      []Hit      `json:"hits"`
	Expansion *Expansion `json:"expansion,omitempty"`
}

// Hit is one ranked document.
type Hit struct {
	Rank  int     `json:"rank"` // 1-based
	ID    string  `json:"id"`
	Score float64 `json:"score"`
	// Snippet is the start of the document in pieces, those whose
	// analyzed term is one of the query's marked; Truncated says the
	// document goes on.
	Snippet   []highlight.Segment `json:"snippet,omitempty"`
	Truncated bool                `json:"truncated,omitempty"`
	// Matched lists the query's analyzed terms the document contains
	// (anywhere, not only in the snippet), in the order they first occur.
	Matched []string `json:"matched_terms,omitempty"`
}

// Expansion is what the LLM gave a query.
type Expansion struct {
	Method string `json:"method"`
	LLM    string `json:"llm"`
	// Generation is the LLM's output as R2MED stores it (hy_doc).
	Generation string `json:"generation"`
	// Text is what lexical retrievers searched: R2MED's combination of
	// the query and the generation.
	Text   string `json:"text"`
	Cached bool   `json:"cached"`
}

// plan is a validated Request.
type plan struct {
	req        Request
	k, depth   int
	retrievers []*retriever
	fuse       fusion.Spec
	rerank     int // depth; 0: no rerank
	snippet    int
}

func (s *Service) plan(req Request) (*plan, error) {
	l := s.limits
	if strings.TrimSpace(req.Query) == "" {
		return nil, badRequest("empty query: give the query's text")
	}
	if len(req.Query) > l.MaxQuery {
		return nil, badRequest("query of %d bytes; this service takes at most %d", len(req.Query), l.MaxQuery)
	}
	if !utf8.ValidString(req.Query) || !utf8.ValidString(req.ID) {
		return nil, badRequest("the query is not valid UTF-8")
	}
	p := &plan{req: req, k: req.K}
	if p.k == 0 {
		p.k = DefaultK
	}
	if p.k < 0 || p.k > l.MaxK {
		return nil, badRequest("k must be between 1 and %d, got %d", l.MaxK, p.k)
	}
	var err error
	if p.retrievers, err = s.pick(req.Retrievers); err != nil {
		return nil, err
	}
	p.depth = p.k
	if len(p.retrievers) > 1 {
		p.fuse = s.opt.Fuse
		if req.Fuse != nil {
			p.fuse = *req.Fuse
		}
		if err := p.fuse.Validate(len(p.retrievers)); err != nil {
			return nil, badRequest("fuse: %v", err)
		}
		p.depth = p.fuse.DepthFor(p.k)
	}
	if req.GAR != "" {
		if err := s.checkGAR(req.GAR, p.retrievers[0].corpus); err != nil {
			return nil, err
		}
	}
	if req.Rerank || req.RerankDepth != 0 {
		if s.opt.Rerank == nil {
			return nil, badRequest("this service has no reranker; start it with --rerank KIND (and --rerank-model, --rerank-url)")
		}
		p.rerank = s.opt.Rerank.Depth
		if req.RerankDepth != 0 {
			p.rerank = req.RerankDepth
		}
		if p.rerank == 0 {
			p.rerank = rerank.DefaultDepth
		}
		if p.rerank < 0 || p.rerank > l.MaxK {
			return nil, badRequest("rerank depth must be between 1 and %d, got %d", l.MaxK, p.rerank)
		}
		p.depth = max(p.depth, p.rerank)
	}
	p.snippet = s.opt.Snippet
	if p.snippet == 0 {
		p.snippet = DefaultSnippet
	}
	if req.Snippet != nil {
		p.snippet = *req.Snippet
		if p.snippet < 0 || p.snippet > l.MaxSnippet {
			return nil, badRequest("snippet must be between 0 and %d bytes, got %d", l.MaxSnippet, p.snippet)
		}
	}
	return p, nil
}

// system names the plan's stages by the rule run's Config.ModelName
// follows (sysname).
func (s *Service) system(p *plan) string {
	st := sysname.Stages{Fusion: p.fuse.Name()}
	for _, r := range p.retrievers {
		st.Retrievers = append(st.Retrievers, r.name)
	}
	if p.req.GAR != "" {
		st.Expansion = sysname.Expansion(p.req.GAR, s.opt.GAR.Label)
	}
	if p.rerank > 0 {
		st.Reranker, st.Depth = s.opt.Rerank.Name, p.rerank
	}
	return st.Name()
}

// Search answers one request.
func (s *Service) Search(ctx context.Context, req Request) (*Result, error) {
	p, err := s.plan(req)
	if err != nil {
		return nil, err
	}
	return s.search(ctx, p)
}

// SearchBatch answers several requests, in order, searching up to
// Limits.Parallel of them at once. Every request is checked before any
// is searched; the first failure fails the batch.
func (s *Service) SearchBatch(ctx context.Context, reqs []Request) ([]*Result, error) {
	if len(reqs) > s.limits.MaxBatch {
		return nil, badRequest("a batch of %d queries; this service takes at most %d per request", len(reqs), s.limits.MaxBatch)
	}
	plans := make([]*plan, len(reqs))
	for i, r := range reqs {
		p, err := s.plan(r)
		if err != nil {
			if e, ok := err.(*Error); ok {
				return nil, &Error{Status: e.Status, Msg: fmt.Sprintf("query %d: %s", i+1, e.Msg)}
			}
			return nil, err
		}
		plans[i] = p
	}
	out := make([]*Result, len(reqs))
	g, gctx := errgroup.WithContext(ctx)
	par := s.limits.Parallel
	if par <= 0 {
		par = runtime.GOMAXPROCS(0)
	}
	g.SetLimit(par)
	for i, p := range plans {
		g.Go(func() error {
			r, err := s.search(gctx, p)
			out[i] = r
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return out, nil
}

// search runs run's stages for one query: expansion, retrieval at run's
// depth, fusion, reranking, the cut to k.
func (s *Service) search(ctx context.Context, p *plan) (*Result, error) {
	c := p.retrievers[0].corpus
	q := retrieve.Query{ID: p.req.ID, Text: p.req.Query}
	res := &Result{ID: p.req.ID, Query: p.req.Query, System: s.system(p)}
	if p.req.GAR != "" {
		var err error
		if q, res.Expansion, err = s.expand(ctx, c, p.req.GAR, ir.Query{ID: q.ID, Text: q.Text}); err != nil {
			return nil, err
		}
	}
	runs := make([]ir.Run, len(p.retrievers))
	for i, r := range p.retrievers {
		hits, err := retrieve.SearchOne(ctx, r.r, q, p.depth)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", r.name, err)
		}
		trec.RankHits(hits, r.ties) // as run's retrieval stage ranks it
		runs[i] = ir.Run{q.ID: hits}
	}
	run := runs[0]
	if len(runs) > 1 {
		var err error
		if run, err = p.fuse.Fuse(runs, p.depth); err != nil {
			return nil, err
		}
	}
	if p.rerank > 0 {
		rr := s.opt.Rerank
		docs := func(id string) (string, bool) {
			t, ok, err := c.doc(id)
			return t, ok && err == nil
		}
		// The query's own text, not its expansion, as run's rerank stage.
		opts := rerank.Options{Depth: p.rerank, KeepTail: rr.KeepTail, BatchSize: rr.BatchSize, Workers: 1}
		var err error
		if run, err = rerank.Rerank(ctx, run, map[string]string{q.ID: p.req.Query}, docs, rr.Scorer, opts); err != nil {
			return nil, err
		}
	}
	hits := run[q.ID]
	if len(hits) > p.k {
		hits = hits[:p.k]
	}
	var err error
	res.Hits, err = s.hits(c, s.highlighter(p.retrievers), q.Text, hits, p.snippet)
	return res, err
}

// hits adds ranks and, with snippet > 0, snippets and matched terms.
func (s *Service) hits(c *corpus, hl *highlight.Highlighter, text string, hits []ir.Hit, snippet int) ([]Hit, error) {
	out := make([]Hit, len(hits))
	var terms map[string]bool
	if snippet > 0 {
		terms = hl.Terms(text)
	}
	for i, h := range hits {
		out[i] = Hit{Rank: i + 1, ID: h.DocID, Score: h.Score}
		if snippet <= 0 {
			continue
		}
		doc, ok, err := c.doc(h.DocID)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, fmt.Errorf("document %q was ranked but is not in the corpus", h.DocID)
		}
		out[i].Snippet, out[i].Matched, out[i].Truncated = hl.Snippet(doc, terms, snippet)
	}
	return out, nil
}

// Doc is one document of a corpus.
type Doc struct {
	ID   string `json:"id"`
	Text string `json:"text"`
	// Corpus names the index file the corpus was first loaded from.
	Corpus string `json:"corpus"`
}

// Doc returns the document with the given id from the corpus the named
// retriever searches (empty: the default retriever's).
func (s *Service) Doc(id, retriever string) (*Doc, error) {
	var names []string
	if retriever != "" {
		names = []string{retriever}
	}
	rs, err := s.pick(names)
	if err != nil {
		return nil, err
	}
	c := rs[0].corpus
	text, ok, err := c.doc(id)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, notFound("no document %q in %s's corpus", id, c.name)
	}
	return &Doc{ID: id, Text: text, Corpus: c.name}, nil
}
