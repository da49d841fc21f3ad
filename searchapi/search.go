package searchapi

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/r2med/r2med/expand"
	"github.com/r2med/r2med/fusion"
	"github.com/r2med/r2med/highlight"
	"github.com/r2med/r2med/index"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/plan"
	"github.com/r2med/r2med/rerank"
	"github.com/r2med/r2med/retrieve"
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
	// (anywhere, not only in the snippet), in the order the query has
	// them.
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

// query is a validated Request: the stage plan that answers it (the
// plan run executes, so its hits are run's top k), the retrievers that
// execute it and the snippets the service adds.
type query struct {
	req        Request
	plan       *plan.Plan
	k          int // the plan's
	retrievers []*retriever
	snippet    int
	lexical    lexical // how snippets mark words and find matched terms
}

// check validates req against the service's limits and the files of st,
// and makes its plan.
func (s *Service) check(st *state, req Request) (*query, error) {
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
	q := &query{req: req}
	spec := plan.Spec{K: req.K}
	if spec.K == 0 {
		spec.K = DefaultK
	}
	if spec.K < 0 || spec.K > l.MaxK {
		return nil, badRequest("k must be between 1 and %d, got %d", l.MaxK, spec.K)
	}
	q.k = spec.K
	var err error
	if q.retrievers, err = s.pick(st, req.Retrievers); err != nil {
		return nil, err
	}
	for _, r := range q.retrievers {
		spec.Retrievers = append(spec.Retrievers, plan.Retriever{Spec: r.spec, Name: r.name})
	}
	if len(q.retrievers) > 1 {
		spec.Fuse = s.opt.Fuse
		if req.Fuse != nil {
			spec.Fuse = *req.Fuse
		}
		if err := spec.Fuse.Validate(len(q.retrievers)); err != nil {
			return nil, badRequest("fuse: %v", err)
		}
	}
	if req.GAR != "" {
		if err := s.checkGAR(req.GAR, q.retrievers[0].corpus); err != nil {
			return nil, err
		}
		spec.Expansion = expand.Source{Method: req.GAR, LLM: s.opt.GAR.Label}
	}
	if req.Rerank || req.RerankDepth != 0 {
		rr := s.opt.Rerank
		if rr == nil {
			return nil, badRequest("this service has no reranker; start it with --rerank KIND (and --rerank-model, --rerank-url)")
		}
		depth := rr.Depth
		if req.RerankDepth != 0 {
			depth = req.RerankDepth
		}
		if depth == 0 {
			depth = rerank.DefaultDepth
		}
		if depth < 0 || depth > l.MaxK {
			return nil, badRequest("rerank depth must be between 1 and %d, got %d", l.MaxK, depth)
		}
		// The query's own text is reranked, not its expansion, as run's
		// rerank stage does.
		spec.Rerank = &plan.Rerank{Scorer: rr.Spec, Name: rr.Name, Depth: depth, KeepTail: rr.KeepTail, BatchSize: rr.BatchSize}
	}
	if q.plan, err = plan.New(spec); err != nil {
		return nil, badRequest("%v", err)
	}
	q.lexical = s.lexicalOf(q.retrievers)
	q.snippet = s.opt.Snippet
	if q.snippet == 0 {
		q.snippet = DefaultSnippet
	}
	if req.Snippet != nil {
		q.snippet = *req.Snippet
		if q.snippet < 0 || q.snippet > l.MaxSnippet {
			return nil, badRequest("snippet must be between 0 and %d bytes, got %d", l.MaxSnippet, q.snippet)
		}
	}
	return q, nil
}

// callsModel reports whether answering the query calls a model (an LLM,
// a reranker, a query embedder), which costs money or a GPU's time.
func (q *query) callsModel() bool {
	if q.req.GAR != "" || q.plan.Spec().Rerank != nil {
		return true
	}
	for _, r := range q.retrievers {
		if r.kind == "dense" {
			return true
		}
	}
	return false
}

// Search answers one request.
func (s *Service) Search(ctx context.Context, req Request) (*Result, error) {
	st := s.acquire()
	defer st.release()
	q, err := s.check(st, req)
	if err != nil {
		return nil, err
	}
	if err := s.limits.checkHits([]*query{q}); err != nil {
		return nil, err
	}
	return s.search(ctx, q)
}

// SearchBatch answers several requests, in order, searching up to
// Limits.Parallel of them at once. Every request is checked before any
// is searched; the first failure fails the batch.
func (s *Service) SearchBatch(ctx context.Context, reqs []Request) ([]*Result, error) {
	st := s.acquire()
	defer st.release()
	qs, err := s.checkAll(st, reqs)
	if err != nil {
		return nil, err
	}
	out := make([]*Result, len(reqs))
	err = s.inOrder(ctx, qs, func(i int, r *Result) error {
		out[i] = r
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// checkAll checks a batch: its size, each request (an error names the
// query), the hits it asks for in all.
func (s *Service) checkAll(st *state, reqs []Request) ([]*query, error) {
	if len(reqs) > s.limits.MaxBatch {
		return nil, badRequest("a batch of %d queries; this service takes at most %d per request", len(reqs), s.limits.MaxBatch)
	}
	qs := make([]*query, len(reqs))
	for i, r := range reqs {
		q, err := s.check(st, r)
		if err != nil {
			if e, ok := err.(*Error); ok {
				e2 := *e
				e2.Msg = fmt.Sprintf("query %d: %s", i+1, e.Msg)
				return nil, &e2
			}
			return nil, err
		}
		qs[i] = q
	}
	if err := s.limits.checkHits(qs); err != nil {
		return nil, err
	}
	return qs, nil
}

// inOrder searches the queries, up to Limits.Parallel at once and at most
// twice that many ahead of the first not yet handed over, and hands each
// result to emit in order on the calling goroutine, so that a batch's
// answer can be written while it is searched and only a window of its
// results is held at once. The first error stops it.
func (s *Service) inOrder(ctx context.Context, qs []*query, emit func(i int, r *Result) error) error {
	par := s.limits.Parallel
	if par <= 0 {
		par = runtime.GOMAXPROCS(0)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type done struct {
		res *Result
		err error
	}
	slots := make([]chan done, len(qs))
	for i := range slots {
		slots[i] = make(chan done, 1)
	}
	// ahead holds a token per result searched or being searched and not
	// yet emitted; workers take queries in order.
	ahead := make(chan struct{}, 2*par)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(par, len(qs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case ahead <- struct{}{}:
				case <-ctx.Done():
					return
				}
				i := int(next.Add(1)) - 1
				if i >= len(qs) {
					<-ahead
					return
				}
				r, err := s.search(ctx, qs[i])
				slots[i] <- done{r, err}
			}
		}()
	}
	defer func() {
		cancel() // workers waiting for room stop
		wg.Wait()
	}()
	for i := range qs {
		var d done
		select {
		case d = <-slots[i]:
		case <-ctx.Done():
			return ctx.Err()
		}
		<-ahead
		if d.err != nil {
			return d.err
		}
		if err := emit(i, d.res); err != nil {
			return err
		}
	}
	return nil
}

// search answers one checked request. It reads the index files' mappings
// under index.Guard, and refuses (503, to be retried) when a file it
// reads was changed in place, before or while it was read: the answer
// could hold another file's numbers. Watch then opens the file again.
func (s *Service) search(ctx context.Context, q *query) (res *Result, err error) {
	if !q.callsModel() {
		leave, err := s.cpu.enter(ctx)
		if err != nil {
			return nil, err
		}
		defer leave()
	}
	err = q.unchanged()
	if err == nil {
		err = index.Guard(func() error {
			var err error
			res, err = s.stages(ctx, q)
			return err
		})
	}
	if err == nil {
		err = q.unchanged()
	}
	if errors.Is(err, index.ErrChanged) {
		s.poke()
		return nil, unavailable(err)
	}
	return res, err
}

// unchanged returns the error of a file the query reads that was changed
// in place since it was opened.
// Each file is looked at once (a stat), however many parts of the query
// read it.
func (q *query) unchanged() error {
	c := q.retrievers[0].corpus
	var room [4]*index.Index
	files := append(room[:0], c.ix, q.lexical.ix())
	for _, r := range q.retrievers {
		files = append(files, r.ix)
	}
	if q.req.GAR == expand.LameR {
		files = append(files, c.lamer.ix)
	}
	for i, ix := range files {
		if ix == nil || slices.Contains(files[:i], ix) {
			continue
		}
		if err := ix.Changed(); err != nil {
			return err
		}
	}
	return nil
}

// stages expands the query when asked, then executes its plan over the
// opened retrievers (and the service's reranker) for this one query.
func (s *Service) stages(ctx context.Context, q *query) (*Result, error) {
	c := q.retrievers[0].corpus
	rq := retrieve.Query{ID: q.req.ID, Text: q.req.Query}
	res := &Result{ID: q.req.ID, Query: q.req.Query, System: q.plan.Spec().System()}
	if q.req.GAR != "" {
		var err error
		if rq, res.Expansion, err = s.expand(ctx, c, q.req.GAR, ir.Query{ID: rq.ID, Text: rq.Text}); err != nil {
			return nil, err
		}
	}
	env := plan.Env{}
	for _, r := range q.retrievers {
		env.Retrievers = append(env.Retrievers, r.r)
	}
	if s.opt.Rerank != nil {
		env.Scorer = s.opt.Rerank.Scorer
	}
	in := plan.Input{
		Task:    &ir.Task{Name: c.task, Queries: []ir.Query{{ID: q.req.ID, Text: q.req.Query}}},
		Queries: []retrieve.Query{rq},
		Docs: func(id string) (string, bool) {
			t, ok, err := c.doc(id)
			return t, ok && err == nil
		},
	}
	done, err := q.plan.Execute(ctx, in, env)
	if err != nil {
		return nil, err
	}
	res.Hits, err = s.hits(c, q.lexical, rq.Text, done.Run[rq.ID], q.snippet)
	return res, err
}

// hits adds ranks and, with snippet > 0, snippets and matched terms.
func (s *Service) hits(c *corpus, lx lexical, text string, hits []ir.Hit, snippet int) ([]Hit, error) {
	out := make([]Hit, len(hits))
	for i, h := range hits {
		out[i] = Hit{Rank: i + 1, ID: h.DocID, Score: h.Score}
	}
	if snippet <= 0 || len(hits) == 0 {
		return out, nil
	}
	if err := lx.snippets(c, text, out, snippet); err != nil {
		return nil, err
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
	st := s.acquire()
	defer st.release()
	rs, err := s.pick(st, names)
	if err != nil {
		return nil, err
	}
	c := rs[0].corpus
	var text string
	ok := false
	err = index.Guard(func() error {
		var err error
		text, ok, err = c.doc(id)
		if err == nil {
			err = c.ix.Changed()
		}
		return err
	})
	if errors.Is(err, index.ErrChanged) {
		s.poke()
		return nil, unavailable(err)
	}
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, notFound("no document %q in %s's corpus", id, c.name)
	}
	return &Doc{ID: id, Text: text, Corpus: c.name}, nil
}
