// Package searchapi is a search service over stored indexes (package
// index): it answers a query — or a batch of them — with the ranking
// `r2med run` gives that query, over HTTP as JSON (Handler) or in process
// (Service.Search).
//
// A Service is opened on one or more index files. Each file gives one
// retriever per part it holds: its BM25 postings (searched with the
// analyzer and scheme they were built with) and its dense vectors
// (queries embedded with the recipe recorded in the file). A request
// picks retrievers by name — the file's name, "NAME:dense" for the
// vectors of a file holding both — and the service answers it as `r2med
// run` would: LLM expansion when asked (GAR: HyDE, Query2doc, LameR, query
// reasoning; R2MED's rules for combining the generation with the query,
// package expand), then the stage plan run executes (package plan):
// retrieval with each retriever at the plan's depth, fusion (package
// fusion's Spec, run's defaults), reranking (package rerank), and the cut
// to k, executed for the one query.
// Hits carry the document's id and score and a snippet with the words
// whose analyzed terms the query shares marked (package highlight).
//
// # Exactness
//
// The stored index searches bit for bit as the in-memory engines do, and
// the stages are the plan run executes, run by the same code, so a hit
// list equals the top k of run's list for the same query, scores included (tests compare them for every query of the
// demo task and NFCorpus). A query's id matters to dense retrieval only:
// a document whose id is the query's is skipped, as BEIR and run do; a
// request without an id matches no document.
//
// # HTTP
//
// Handler serves GET and POST /v1/search, GET /v1/doc/{id},
// /v1/retrievers, /healthz, /metrics (Prometheus) and /openapi.json (the
// OpenAPI 3 description of all of them), with request limits (body
// size, k, batch size, a per-request time limit) that answer 413, 400
// and 504. Package internal/httpserve adds the Host check, security
// headers, bearer key, timeouts and graceful shutdown around it.
package searchapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/r2med/r2med/analysis"
	"github.com/r2med/r2med/expand"
	"github.com/r2med/r2med/fusion"
	"github.com/r2med/r2med/highlight"
	"github.com/r2med/r2med/index"
	"github.com/r2med/r2med/rerank"
	"github.com/r2med/r2med/retrieve"
)

// Options tune a Service. The zero value serves BM25 and dense indexes
// without expansion or reranking, with DefaultLimits.
type Options struct {
	// Default names the retrievers a request that names none uses;
	// empty means the first index's first retriever.
	Default []string
	// Fuse is the fusion a request with several retrievers uses unless
	// it gives its own; the zero value is run's default (RRF, k 60).
	Fuse fusion.Spec
	// Env is what retrievers run with: the embedding cache (queries of
	// dense retrievers are embedded once), where warnings go.
	Env retrieve.Env
	// Dense completes the dense recipe an index records with what a
	// recipe never holds: the embedding server's URL, a local model's
	// directory.
	Dense DenseOptions
	// GAR, when set, lets requests expand their queries with an LLM.
	GAR *GAR
	// Rerank, when set, lets requests rerank their hits.
	Rerank *Rerank
	Limits Limits
	// Snippet is how many bytes of each document a hit shows unless the
	// request asks otherwise; 0 means DefaultSnippet, negative none.
	Snippet int
}

// DefaultSnippet is the snippet length of a hit, in bytes.
const DefaultSnippet = 300

// Limits bound what one request may ask. Zero fields take
// DefaultLimits' values.
type Limits struct {
	MaxK       int           // hits per query
	MaxBatch   int           // queries per request
	MaxBody    int64         // bytes of a POST body
	MaxQuery   int           // bytes of one query's text
	MaxSnippet int           // bytes of a hit's snippet
	Timeout    time.Duration // per request; a request past it gets 504
	// Parallel bounds the queries of one batch searched at once; 0
	// means GOMAXPROCS.
	Parallel int
}

// DefaultLimits are generous for interactive use and small enough that
// one request cannot hold the machine.
var DefaultLimits = Limits{MaxK: 1000, MaxBatch: 256, MaxBody: 1 << 20, MaxQuery: 32 << 10, MaxSnippet: 1 << 16, Timeout: 2 * time.Minute}

func (l Limits) orDefault() Limits {
	d := DefaultLimits
	if l.MaxK <= 0 {
		l.MaxK = d.MaxK
	}
	if l.MaxBatch <= 0 {
		l.MaxBatch = d.MaxBatch
	}
	if l.MaxBody <= 0 {
		l.MaxBody = d.MaxBody
	}
	if l.MaxQuery <= 0 {
		l.MaxQuery = d.MaxQuery
	}
	if l.MaxSnippet <= 0 {
		l.MaxSnippet = d.MaxSnippet
	}
	if l.Timeout <= 0 {
		l.Timeout = d.Timeout
	}
	return l
}

// Rerank is the reranker requests may ask for: a scorer built by
// rerank.New (its server, model and key fixed when the service starts,
// so a request cannot point the service elsewhere) and run's settings.
type Rerank struct {
	Scorer rerank.Scorer
	// Spec is what the scorer was built from: its kind and model name the
	// reranker in system names ("tei", "cohere:rerank-v3.5"), as run names
	// it.
	Spec rerank.Spec
	// Name, when set, names the reranker instead.
	Name string
	// Depth is how many hits are reranked unless the request says; 0
	// means rerank.DefaultDepth, as run.
	Depth int
	// KeepTail keeps the hits below the depth after the reranked ones.
	KeepTail  bool
	BatchSize int
}

// Service answers queries over its indexes. Its methods are safe for
// concurrent use.
type Service struct {
	opt        Options
	limits     Limits
	retrievers []*retriever
	byName     map[string]*retriever
	corpora    []*corpus
	files      []*index.Index
	defaults   []string
	defaultHL  *highlight.Highlighter
	metrics    *metrics
}

// Open opens the index files and builds their retrievers. A file that is
// not an index, is corrupt or holds parts this build cannot search fails
// the whole service, naming the file.
func Open(ctx context.Context, files []IndexFile, opt Options) (_ *Service, err error) {
	if len(files) == 0 {
		return nil, errors.New("no index to serve: give one or more index files (r2med index build writes them)")
	}
	if g := opt.GAR; g != nil {
		if g.LLM == nil || g.Label == "" {
			return nil, errors.New("expansions need an LLM and its label")
		}
		if g.Subject == nil {
			g2 := *g
			g2.Subject = expand.SubjectOf
			opt.GAR = &g2
		}
	}
	if opt.Rerank != nil && (opt.Rerank.Scorer == nil || opt.Rerank.Spec.Kind == "" && opt.Rerank.Name == "") {
		return nil, errors.New("a reranker needs its scorer and its kind (or name)")
	}
	s := &Service{opt: opt, limits: opt.Limits.orDefault(), byName: map[string]*retriever{}, metrics: newMetrics()}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	an, err := analysis.Get("")
	if err != nil {
		return nil, err
	}
	s.defaultHL = highlight.New(an)
	for _, f := range files {
		if err := s.open(ctx, f); err != nil {
			return nil, err
		}
	}
	s.defaults = opt.Default
	if len(s.defaults) == 0 {
		s.defaults = []string{s.retrievers[0].name}
	}
	if _, err := s.pick(s.defaults); err != nil {
		return nil, fmt.Errorf("default retrievers: %w", err)
	}
	n := 2 // weights, when given, say how many retrievers they are for
	if w := len(opt.Fuse.Weights); w > 0 {
		n = w
	}
	if err := opt.Fuse.Validate(n); err != nil {
		return nil, fmt.Errorf("default fusion: %w", err)
	}
	return s, nil
}

// Close releases the retrievers and unmaps the files.
func (s *Service) Close() error {
	var errs []error
	for _, r := range s.retrievers {
		errs = append(errs, retrieve.Close(r.r))
	}
	for _, f := range s.files {
		errs = append(errs, f.Close())
	}
	return errors.Join(errs...)
}

// RetrieverInfo describes one retriever a Service offers.
type RetrieverInfo struct {
	Name string `json:"name"`
	Kind string `json:"kind"` // "bm25" or "dense"
	// Index is the index file's name and path.
	Index string `json:"index"`
	Path  string `json:"path"`
	Task  string `json:"task,omitempty"`
	Docs  int    `json:"docs"`
	// Settings are what the ranking depends on (analyzer, scheme, k1,
	// b; the dense recipe), as run's manifest records them.
	Settings map[string]any `json:"settings"`
	Default  bool           `json:"default,omitempty"`
}

// Retrievers lists the retrievers in the order the files were given.
func (s *Service) Retrievers() []RetrieverInfo {
	out := make([]RetrieverInfo, len(s.retrievers))
	for i, r := range s.retrievers {
		out[i] = RetrieverInfo{Name: r.name, Kind: r.kind, Index: r.file.Name, Path: r.file.Path, Task: r.corpus.task,
			Docs: r.corpus.ix.Len(), Settings: r.settings, Default: slices.Contains(s.defaults, r.name)}
	}
	return out
}

// pick resolves retriever names; they must search one corpus.
func (s *Service) pick(names []string) ([]*retriever, error) {
	if len(names) == 0 {
		names = s.defaults
	}
	var out []*retriever
	for _, n := range names {
		r, ok := s.byName[n]
		if !ok {
			return nil, badRequest("unknown retriever %q; this service has %s", n, strings.Join(s.names(), ", "))
		}
		if slices.Contains(out, r) {
			return nil, badRequest("retriever %q named twice", n)
		}
		if len(out) > 0 && r.corpus != out[0].corpus {
			return nil, badRequest("retrievers %q and %q search different corpora (%s, %s); fuse retrievers of one corpus",
				out[0].name, r.name, out[0].corpus.name, r.corpus.name)
		}
		out = append(out, r)
	}
	return out, nil
}

func (s *Service) names() []string {
	var ns []string
	for _, r := range s.retrievers {
		ns = append(ns, r.name)
	}
	return ns
}

// Error is a request the service refuses, with the HTTP status that says
// why.
type Error struct {
	Status int
	Msg    string
}

func (e *Error) Error() string { return e.Msg }

func badRequest(format string, args ...any) error {
	return &Error{Status: http.StatusBadRequest, Msg: fmt.Sprintf(format, args...)}
}

func notFound(format string, args ...any) error {
	return &Error{Status: http.StatusNotFound, Msg: fmt.Sprintf(format, args...)}
}

// statusOf is the HTTP status of err: an Error's, 504 for a request past
// its time, 499-like cancellations as 503, else 500.
func statusOf(err error) int {
	var e *Error
	switch {
	case errors.As(err, &e):
		return e.Status
	case errors.Is(err, context.DeadlineExceeded):
		return http.StatusGatewayTimeout
	case errors.Is(err, context.Canceled):
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

func logf(w io.Writer, format string, args ...any) {
	if w != nil {
		fmt.Fprintf(w, format+"\n", args...)
	}
}
