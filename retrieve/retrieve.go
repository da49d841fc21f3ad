// Package retrieve turns queries into ranked lists over one corpus.
//
// A Retriever is built for one task's corpus (New) and then answers
// batches of queries (Search) and, for serving, single queries
// (SearchOne). Its settings are a Spec, one type per kind of retriever,
// each in its own file of this package with its test: bm25.go (R2MED's
// BM25 and its Lucene and Robertson schemes), dense.go (R2MED's embedding
// recipes, Matryoshka cuts, GAR averaging, int8/binary search with
// rescoring), candidates.go (the candidate lists a Nano set publishes),
// runfile.go (a TREC run file) and index.go (an index file). A Spec says
// everything a pipeline needs to know about its retriever: its
// validation, its display name, a description of the settings that
// change the ranking (for fingerprints and manifests), the input files it
// reads (checksummed into manifests), its YAML form and the command-line
// flags laid over that form (Kind).
//
// A kind whose engine brings a heavy client lives in a package of its own
// and registers itself when imported, as database/sql drivers do: the
// weaviate kind is retrieve/weaviatekind, which cmd/r2med imports, so
// that this package and those built on it (pipeline, searchapi, nano) do
// not link the Weaviate client. Such a kind builds on what this package
// exports for it: DecodeSettings for its YAML, Dense.QueryEncoder to
// embed queries as the dense retriever does, Env's methods to record and
// log.
//
// Queries carry what generation-augmented retrieval gives each kind:
// lexical retrievers search Query.Text (R2MED's combination of the query
// and an LLM's generation), embedding retrievers embed Query.Dense
// (R2MED's query, or the query and the generation whose embeddings are
// averaged); see Expand.
package retrieve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"

	"github.com/r2med/r2med/cache"
	"github.com/r2med/r2med/internal/httpx"
	"github.com/r2med/r2med/internal/progress"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/trec"
	"github.com/r2med/r2med/usage"
)

// Revision changes whenever a retriever given the same spec and data
// returns other scores: the pipeline folds it into the fingerprint of
// every stage from retrieval on, so that results kept from another
// revision are recomputed. "dot-fma8": dense scores are summed in
// vector.DotOrder (before, as vek's AVX2 dot product summed them);
// "ranked-ties": every stage's output is ranked by ir.Rank (equal float32
// scores stepped apart in the order the stage means).
const Revision = "dot-fma8,ranked-ties"

// Retriever ranks the documents of its corpus for a batch of queries: at
// most k hits per query, best first. Queries it can say nothing about
// (a run file without them) get no entry.
type Retriever interface {
	Search(ctx context.Context, queries []Query, k int) (ir.Run, error)
}

// RetrieverFunc adapts a function to Retriever.
type RetrieverFunc func(ctx context.Context, queries []Query, k int) (ir.Run, error)

// Search calls f.
func (f RetrieverFunc) Search(ctx context.Context, queries []Query, k int) (ir.Run, error) {
	return f(ctx, queries, k)
}

// Single is implemented by retrievers that answer one query at a time
// without a batch's set-up (a worker pool, a batch of embeddings): the
// path a search service takes. SearchOne must be safe for concurrent use
// and rank exactly as Search does.
type Single interface {
	SearchOne(ctx context.Context, q Query, k int) ([]ir.Hit, error)
}

// SearchOne answers one query: through r's own single-query path when it
// has one, else as a batch of one.
func SearchOne(ctx context.Context, r Retriever, q Query, k int) ([]ir.Hit, error) {
	if s, ok := r.(Single); ok {
		return s.SearchOne(ctx, q, k)
	}
	run, err := r.Search(ctx, []Query{q}, k)
	if err != nil {
		return nil, err
	}
	return run[q.ID], nil
}

// Exhaustive is implemented by retrievers that score every document of
// the corpus for a query and list them by score (BM25, in memory or from
// an index file): their first k hits are the first k of any deeper search
// of theirs, which only adds hits below. SearchTop relies on it;
// approximate indexes and rescored quantized vectors do not have it.
type Exhaustive interface{ Exhaustive() bool }

func exhaustive(r Retriever) bool {
	e, ok := r.(Exhaustive)
	return ok && e.Exhaustive()
}

// SearchTop answers one query with what its search deep hits deep holds
// in its first k once ranked (k ≤ deep; plan's rule: a run of k is the
// top k of a deeper one): the hits of SearchOne(deep), or fewer that
// rank the same first k. An exhaustive retriever is searched k+1 deep
// first, and deep only where its k-th and k+1-th hits tie as their
// scores are written (trec.AsWritten, by which runs are ranked): without
// a tie at the cut its first k are the first k of the deep search, in
// another order only among ties, which ranking settles. A search
// service's query so pays for k+1 hits, not for 100.
func SearchTop(ctx context.Context, r Retriever, q Query, k, deep int) ([]ir.Hit, error) {
	if k >= deep || !exhaustive(r) {
		return SearchOne(ctx, r, q, deep)
	}
	hits, err := SearchOne(ctx, r, q, k+1)
	if err != nil || len(hits) <= k || settled(hits, k) {
		return hits, err
	}
	return SearchOne(ctx, r, q, deep)
}

// settled reports whether hits (at least k+1, in the retriever's order)
// are in score order as written and their k-th scores more than the
// k+1-th.
func settled(hits []ir.Hit, k int) bool {
	for i := range k {
		if trec.CompareWritten(hits[i].Score, hits[i+1].Score) < 0 {
			return false
		}
	}
	return trec.CompareWritten(hits[k-1].Score, hits[k].Score) != 0
}

// Close releases what r holds (a local model's session) when it holds
// anything.
func Close(r Retriever) error {
	if c, ok := r.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// Spec is one retriever's settings. Each kind has its own Spec type (BM25,
// Dense, Candidates, RunFile) registered as a Kind.
type Spec interface {
	// Kind is the registered kind: "bm25", "dense", "candidates", "run".
	Kind() string
	// Name is the retriever as system names and results files show it:
	// "bm25", "bm25-lucene", "bge", "candidates:bm25".
	Name() string
	// Validate checks the settings before any work starts, so a typo
	// fails in a second rather than after an hour of embedding.
	Validate() error
	// Describe lists every setting that changes the ranking and nothing
	// else: manifests record it and fingerprints hash it.
	Describe() map[string]any
	// Inputs lists the files the retriever reads for task besides the
	// task's own, so that a changed file does not reuse old outputs.
	Inputs(task *ir.Task) ([]string, error)
	// New builds the retriever over task's corpus (indexing, embedding).
	New(ctx context.Context, task *ir.Task, env Env) (Retriever, error)
}

// TiesOf is the tie rule of spec's rankings (ir.Ties), which the stages
// that write or evaluate them apply (ir.Run.Rank): ir.TiesAsListed for
// specs that say so — lists whose order is their ranking, such as a
// published candidate list — and ir.TiesByDocID, trec_eval's reading of
// scores, for every scorer and for run files. Retrievers themselves return
// their own list order (R2MED's BM25: gensim's stable order among equal
// scores), which Nano's candidate builder depends on.
func TiesOf(spec Spec) ir.Ties {
	if t, ok := spec.(interface{ Ties() ir.Ties }); ok {
		return t.Ties()
	}
	return ir.TiesByDocID
}

// Safeguarded reports whether spec's lists may end with HAKARI-Bench's
// rank-101 safeguard positive (a NanoR2MED reranking_hybrid list), which
// reranking keeps or drops on purpose and shuffles by hash as HAKARI does.
func Safeguarded(spec Spec) bool {
	s, ok := spec.(interface{ Safeguarded() bool })
	return ok && s.Safeguarded()
}

// RanksOnly reports whether spec's scores only stand for ranks (a
// candidate list published without scores), so that a reranker shows
// ranks and not made-up retrieval scores.
func RanksOnly(spec Spec) bool {
	s, ok := spec.(interface{ RanksOnly() bool })
	return ok && s.RanksOnly()
}

// UsesCache reports whether spec's retriever computes what the shared
// cache keeps (embeddings): such retrievers take long to build, so
// pipelines open the cache for them and keep their runs to resume from.
func UsesCache(spec Spec) bool {
	c, ok := spec.(interface{ UsesCache() bool })
	return ok && c.UsesCache()
}

// Resolver is implemented by specs whose ranking depends on state outside
// the task's files — a search server's collection (weaviate) — or whose
// name does — a run file's tag. Resolve reads that state, fails early
// when it is unusable, and returns the spec with the state filled in, so
// that Describe and Name, and with them the manifest and every
// fingerprint, carry it: a changed collection is not mistaken for the one
// an earlier run searched.
type Resolver interface {
	Resolve(ctx context.Context, task *ir.Task) (Spec, error)
}

// Resolve returns spec resolved by its Resolver, or spec itself.
func Resolve(ctx context.Context, spec Spec, task *ir.Task) (Spec, error) {
	if r, ok := spec.(Resolver); ok {
		return r.Resolve(ctx, task)
	}
	return spec, nil
}

// Env is what a retriever runs with that never changes its ranking:
// parallelism, progress, the embedding cache, where it reports. The zero
// value works: GOMAXPROCS workers, silent, no cache.
type Env struct {
	Workers  int // 0: GOMAXPROCS
	Progress progress.Factory
	// Cache holds embeddings across runs; nil computes them afresh.
	Cache *cache.Store
	// Log hears one-line warnings (a run file's dropped entries); nil is
	// silent.
	Log io.Writer
	// Record hears stage times, counts and notes for the manifest; nil
	// records nothing.
	Record Recorder
	// AllowMissingDocs lets a run file rank documents the corpus lacks
	// and queries the task lacks: they are dropped, counted and reported
	// instead of failing the run (as --allow-missing-docs accepts such
	// judgments).
	AllowMissingDocs bool

	// Calls to model servers (dense retrievers' HTTP backends). Meter
	// hears what each embedding cost (nil: not counted). Replay answers
	// from Cache only and sends nothing. HTTP's MaxAttempts, Timeout and
	// Notify tune every request (zero: httpx's defaults); Fleet tunes
	// fleets of servers, and its PerEndpoint bounds each server's
	// requests when the retriever sets no concurrency of its own.
	Meter  *usage.Meter
	Replay bool
	HTTP   httpx.Client
	Fleet  httpx.FleetOptions
}

// Recorder hears what a retriever measures; a run's manifest is one.
type Recorder interface {
	// Time runs fn as a named stage and records its duration.
	Time(stage string, fn func() error) error
	// Count records a count ("terms", "embeddings_cached").
	Count(name string, n int)
	// Note records a setting resolved while running (the dense recipe a
	// registry model resolved to).
	Note(key string, v any)
}

// What a retriever records and logs goes through Env's methods, which
// do nothing where Env has nowhere to put it: kinds in other packages
// (retrieve/weaviatekind) record as this package's do.

// NumWorkers is how many queries or documents a retriever works on at
// once: Workers, or GOMAXPROCS when it is 0.
func (e Env) NumWorkers() int {
	if e.Workers > 0 {
		return e.Workers
	}
	return runtime.GOMAXPROCS(0)
}

// Time runs fn as the named stage of the manifest's times.
func (e Env) Time(stage string, fn func() error) error {
	if e.Record == nil {
		return fn()
	}
	return e.Record.Time(stage, fn)
}

// Count records a count in the manifest.
func (e Env) Count(name string, n int) {
	if e.Record != nil {
		e.Record.Count(name, n)
	}
}

// Note records what a retriever resolved while running in the manifest.
func (e Env) Note(key string, v any) {
	if e.Record != nil {
		e.Record.Note(key, v)
	}
}

// SummaryNote prefixes the manifest notes a retriever wants in the run's
// terminal summary, one line each: an approximate index answered, its
// replicas disagreed.
const SummaryNote = "summary:"

// Summary records line for the run's summary under key (one per
// retriever and topic).
func (e Env) Summary(key, line string) { e.Note(SummaryNote+key, line) }

// SummaryLog is the Recorder of a command without a manifest (r2med index
// build, index push): it keeps no times or counts and writes each summary
// line (Env.Summary: texts truncated, a recipe the server must complete)
// to W, so that what a run's summary would say is said there too. Give it
// in place of Log, which hears those lines as well.
type SummaryLog struct{ W io.Writer }

// Time runs fn.
func (SummaryLog) Time(_ string, fn func() error) error { return fn() }

// Count keeps nothing.
func (SummaryLog) Count(string, int) {}

// Note writes a summary line, "r2med: " first, and keeps nothing else.
func (l SummaryLog) Note(key string, v any) {
	if strings.HasPrefix(key, SummaryNote) {
		fmt.Fprintf(l.W, "r2med: %v\n", v)
	}
}

// Logf writes a one-line warning to Log.
func (e Env) Logf(format string, args ...any) {
	if e.Log != nil {
		fmt.Fprintf(e.Log, format+"\n", args...)
	}
}

// New validates spec and builds its retriever over task's corpus, which
// honours the task's exclusions (see Exclude).
func New(ctx context.Context, spec Spec, task *ir.Task, env Env) (Retriever, error) {
	if spec == nil {
		return nil, errors.New("retrieve: no retriever given")
	}
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	r, err := spec.New(ctx, task, env)
	if err != nil {
		return nil, err
	}
	return Exclude(r, task.Excluded, env), nil
}
