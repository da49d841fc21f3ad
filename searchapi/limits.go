package searchapi

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"golang.org/x/sync/semaphore"
)

// Limits bound what one request may ask and what the service does at
// once. Zero fields take DefaultLimits' values.
type Limits struct {
	MaxK     int // hits per query
	MaxBatch int // queries per request
	// MaxHits bounds one request's hits: k summed over its queries.
	MaxHits    int
	MaxBody    int64 // bytes of a POST body
	MaxQuery   int   // bytes of one query's text
	MaxSnippet int   // bytes of a hit's snippet
	// MaxResponse bounds one answer's bytes: a request whose answer
	// would be larger — by its estimate before anything is searched, or
	// as it is written — is refused.
	MaxResponse int64
	// MaxInFlight bounds the work under way over HTTP: the estimated
	// bytes of the answers being made at once. A request that does not
	// fit is refused (503 with Retry-After) rather than queued. Requests
	// over 1/64 of it together hold at most three quarters, so small
	// ones always find room.
	MaxInFlight int64
	Timeout     time.Duration // per request; a request past it gets 504
	// Parallel bounds the queries of one batch searched at once; 0
	// means GOMAXPROCS.
	Parallel int
}

// DefaultLimits let a request ask for an evaluation's worth of hits (100
// queries at k 1000) or a page of snippets, and bound what it can cost:
// answers are written as they are made, so a request holds a few
// queries' results at a time, not its whole answer.
var DefaultLimits = Limits{MaxK: 1000, MaxBatch: 256, MaxHits: 100_000, MaxBody: 1 << 20, MaxQuery: 32 << 10,
	MaxSnippet: 4 << 10, MaxResponse: 64 << 20, MaxInFlight: 256 << 20, Timeout: 2 * time.Minute}

func (l Limits) orDefault() Limits {
	d := DefaultLimits
	set := func(v *int, def int) {
		if *v <= 0 {
			*v = def
		}
	}
	set64 := func(v *int64, def int64) {
		if *v <= 0 {
			*v = def
		}
	}
	set(&l.MaxK, d.MaxK)
	set(&l.MaxBatch, d.MaxBatch)
	set(&l.MaxHits, d.MaxHits)
	set64(&l.MaxBody, d.MaxBody)
	set(&l.MaxQuery, d.MaxQuery)
	set(&l.MaxSnippet, d.MaxSnippet)
	set64(&l.MaxResponse, d.MaxResponse)
	set64(&l.MaxInFlight, d.MaxInFlight)
	if l.Timeout <= 0 {
		l.Timeout = d.Timeout
	}
	return l
}

// estimate is a checked request's answer in bytes, roughly: each hit's
// JSON with the corpus's longest id, twice the snippet's bytes (markup
// and escapes), the query echoed, an expansion's text.
func (q *query) estimate() int64 {
	per := int64(64 + q.retrievers[0].corpus.maxID)
	if q.snippet > 0 {
		per += 2*int64(q.snippet) + 64
	}
	e := int64(q.k)*per + 2*int64(len(q.req.Query)) + 256
	if q.req.GAR != "" {
		e += 4*int64(len(q.req.Query)) + 16<<10
	}
	return e
}

// checkHits refuses a request asking for more hits, or a larger answer,
// than one request may have.
func (l Limits) checkHits(qs []*query) error {
	var hits int
	var bytes int64
	for _, q := range qs {
		hits += q.k
		bytes += q.estimate()
	}
	if hits > l.MaxHits {
		return badRequest("the request asks for %d hits (k summed over its %d %s); this service answers at most %d per request: send fewer queries per request or ask for fewer hits",
			hits, len(qs), plural(len(qs), "query", "queries"), l.MaxHits)
	}
	if bytes > l.MaxResponse {
		return badRequest("the answer would take about %s (%d hits with their snippets); this service sends at most %s per request: ask for fewer hits, shorter snippets (snippet) or fewer queries per request",
			mib(bytes), hits, mib(l.MaxResponse))
	}
	return nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

// admission bounds the work under way (Limits.MaxInFlight): a request
// holds its estimated answer bytes of the capacity while it runs, and is
// refused when they do not fit. Requests heavier than 1/64 of the
// capacity also take from a pool of three quarters of it, so light ones
// always find the last quarter.
type admission struct {
	all, heavy *semaphore.Weighted
	capacity   int64
	heavyCap   int64
}

func newAdmission(l Limits) *admission {
	c := l.MaxInFlight
	return &admission{all: semaphore.NewWeighted(c), heavy: semaphore.NewWeighted(c * 3 / 4), capacity: c, heavyCap: c * 3 / 4}
}

// enter takes w of the capacity and returns what gives it back, or an
// error saying the service is busy.
func (a *admission) enter(w int64) (func(), error) {
	w = max(w, 1)
	heavy := w > a.capacity/64
	if heavy {
		w = min(w, a.heavyCap) // one request never needs more than the pool
		if !a.heavy.TryAcquire(w) {
			return nil, busy()
		}
	}
	if !a.all.TryAcquire(w) {
		if heavy {
			a.heavy.Release(w)
		}
		return nil, busy()
	}
	return func() {
		a.all.Release(w)
		if heavy {
			a.heavy.Release(w)
		}
	}, nil
}

func busy() error {
	return &Error{Status: http.StatusServiceUnavailable, RetryAfter: time.Second,
		Msg: "the service is busy with other requests' answers; retry in a moment, or ask for fewer hits or shorter snippets"}
}

// cpuSlots bound the queries searched at once, over all requests, to one
// per core (GOMAXPROCS), as Lucene's and Elasticsearch's fixed search
// thread pools do: a query waits for a slot, then is searched and its
// snippets marked without other queries' work interleaved on its core,
// rather than 32 connections' searches taking turns and evicting each
// other's data from the caches. What waits is admitted work
// (admission), so the queue is bounded by Limits.MaxInFlight; a request
// cancelled or past its time while waiting leaves the queue at once.
// Queries that call a model (an LLM, a reranker, a query embedder) take
// no slot: they mostly wait for the model, and must not hold up those
// that search.
type cpuSlots chan struct{}

func newCPUSlots(n int) cpuSlots { return make(cpuSlots, max(n, 1)) }

// enter waits for a slot and returns what gives it back, or the
// context's error.
func (c cpuSlots) enter(ctx context.Context) (func(), error) {
	select {
	case c <- struct{}{}:
		return func() { <-c }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
