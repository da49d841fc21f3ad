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
// whose analyzed terms the query shares marked (package highlight): only
// the snippet's window of the text is read and analyzed, and the query
// terms a document holds come from the BM25 postings (snippet.go).
//
// # Exactness
//
// The stored index searches bit for bit as the in-memory engines do, and
// the stages are the plan run executes, run by the same code, so a hit
// list equals the top k of run's list for the same query, scores
// included (tests compare them for every query of the demo task and
// NFCorpus). A query's id matters to dense retrieval only: a document
// whose id is the query's is skipped, as BEIR and run do; a request
// without an id matches no document.
//
// # HTTP
//
// Handler serves GET and POST /v1/search, GET /v1/doc/{id},
// /v1/retrievers, /healthz, /metrics (Prometheus) and /openapi.json (the
// OpenAPI 3 description of all of them), with bounded work (limits.go):
// per request — body size, k, batch size, hits in all, snippet length,
// answer bytes, a time limit (413, 400, 504) — and per service: the work
// under way is bounded by the estimated bytes of the answers being made,
// and a request that does not fit gets 503 with Retry-After. Answers are
// written as they are made (stream.go), so a request holds a few
// queries' results at a time. POST bodies must be JSON, valid UTF-8 with
// each key once; a request from another site's page may not call a
// model. Package internal/httpserve adds the Host check, security
// headers, bearer key, timeouts and graceful shutdown around it.
//
// # Index files
//
// The files are memory-mapped and may be replaced while served
// (state.go): one renamed over a served file is opened by Reload or
// Watch while requests under way finish on the old mapping; one
// overwritten or truncated in place is never read again — its requests
// get 503 until a whole file is in place, and a fault reading it is an
// error, not a crash (index.Guard). Health reports sections that fail
// their checksums and files that cannot be opened.
package searchapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/r2med/r2med/analysis"
	"github.com/r2med/r2med/expand"
	"github.com/r2med/r2med/fusion"
	"github.com/r2med/r2med/highlight"
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
	opt    Options
	limits Limits
	files  []IndexFile
	// cur is the files as last opened (state.go); reloadMu serializes
	// reloads, lastErr remembers each file's last failure to open (logged
	// once), wake asks Watch to look now.
	cur       atomic.Pointer[state]
	reloadMu  sync.Mutex
	lastErr   map[string]string
	wake      chan struct{}
	defaults  []string
	defaultHL *highlight.Highlighter
	metrics   *metrics
	admit     *admission
	cpu       cpuSlots
}

// Open opens the index files and builds their retrievers. A file that is
// not an index, is corrupt or holds parts this build cannot search fails
// the whole service, naming the file; one whose documents' texts fail
// their checksum is served (rankings need only its postings or vectors)
// and reported by Health.
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
	s := &Service{opt: opt, limits: opt.Limits.orDefault(), files: files, lastErr: map[string]string{},
		wake: make(chan struct{}, 1), metrics: newMetrics()}
	if opt.Snippet > s.limits.MaxSnippet {
		return nil, fmt.Errorf("snippets of %d bytes by default, but at most %d allowed (Limits.MaxSnippet)", opt.Snippet, s.limits.MaxSnippet)
	}
	s.admit = newAdmission(s.limits)
	s.cpu = newCPUSlots(runtime.GOMAXPROCS(0))
	an, err := analysis.Get("")
	if err != nil {
		return nil, err
	}
	s.defaultHL = highlight.New(an)
	slots := make([]*loaded, len(files))
	release := func() {
		for _, l := range slots {
			if l != nil {
				l.release()
			}
		}
	}
	for i, f := range files {
		if slots[i], err = s.load(ctx, f); err != nil {
			release()
			return nil, err
		}
	}
	s.defaults = opt.Default
	if len(s.defaults) == 0 {
		s.defaults = []string{slots[0].parts[0].name}
	}
	st, err := s.assemble(slots, nil, nil, nil)
	if err == nil {
		_, err = s.pick(st, s.defaults)
	}
	if err != nil {
		release()
		return nil, fmt.Errorf("default retrievers: %w", err)
	}
	s.cur.Store(st)
	n := 2 // weights, when given, say how many retrievers they are for
	if w := len(opt.Fuse.Weights); w > 0 {
		n = w
	}
	if err := opt.Fuse.Validate(n); err != nil {
		s.Close()
		return nil, fmt.Errorf("default fusion: %w", err)
	}
	if g := opt.GAR; g != nil {
		if err := s.checkSubjects(st); err != nil {
			s.Close()
			return nil, err
		}
	}
	return s, nil
}

// Close releases the retrievers and unmaps the files once no request
// uses them (stop serving first; a Watch stops reloading). No request
// may start after it.
func (s *Service) Close() error {
	s.reloadMu.Lock() // no reload under way
	defer s.reloadMu.Unlock()
	if st := s.cur.Swap(nil); st != nil {
		st.release()
	}
	return nil
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
	st := s.acquire()
	defer st.release()
	out := make([]RetrieverInfo, len(st.retrievers))
	for i, r := range st.retrievers {
		out[i] = RetrieverInfo{Name: r.name, Kind: r.kind, Index: r.file.Name, Path: r.file.Path, Task: r.corpus.task,
			Docs: r.corpus.ix.Len(), Settings: r.settings, Default: slices.Contains(s.defaults, r.name)}
	}
	return out
}

// pick resolves retriever names; they must search one corpus.
func (s *Service) pick(st *state, names []string) ([]*retriever, error) {
	if len(names) == 0 {
		names = s.defaults
	}
	var out []*retriever
	for _, n := range names {
		r, ok := st.byName[n]
		if !ok {
			if err := st.down[n]; err != nil {
				return nil, unavailable(fmt.Errorf("retriever %q cannot search now: %w", n, err))
			}
			return nil, badRequest("unknown retriever %q; this service has %s", n, listNames(st))
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

func joinQuoted(ns []string) string { return strings.Join(ns, ", ") }

// Error is a request the service refuses, with the HTTP status that says
// why.
type Error struct {
	Status int
	Msg    string
	// RetryAfter, when set, is how soon the request may succeed (a busy
	// service, a file being replaced): sent as Retry-After.
	RetryAfter time.Duration
}

func (e *Error) Error() string { return e.Msg }

func badRequest(format string, args ...any) error {
	return &Error{Status: http.StatusBadRequest, Msg: fmt.Sprintf(format, args...)}
}

func notFound(format string, args ...any) error {
	return &Error{Status: http.StatusNotFound, Msg: fmt.Sprintf(format, args...)}
}

// statusClientClosed is the status of a request its client cancelled
// (nginx's 499): nobody reads the answer, and /metrics counts it apart
// from the service's own failures.
const statusClientClosed = 499

// statusOf is the HTTP status of err: an Error's, 504 for a request past
// its time, 499 for one its client cancelled, else 500.
func statusOf(err error) int {
	var e *Error
	switch {
	case errors.As(err, &e):
		return e.Status
	case errors.Is(err, context.DeadlineExceeded):
		return http.StatusGatewayTimeout
	case errors.Is(err, context.Canceled):
		return statusClientClosed
	}
	return http.StatusInternalServerError
}

func logf(w io.Writer, format string, args ...any) {
	if w != nil {
		fmt.Fprintf(w, format+"\n", args...)
	}
}
