package embed

import (
	"context"
	"sync"
	"time"

	"github.com/r2med/r2med/internal/httpx"
)

// The adaptive defaults. A batch starts at startBatch texts and a server
// at startConcurrency requests in flight; the adapter first doubles the
// batch while throughput does not fall below flat times the best (a slow
// start, up to maxAdaptBatch texts and the token budget), keeps the
// largest batch within flat of the best, then raises each
// server's requests in flight by half while its throughput rises by gain,
// and settles where it stops rising (up to maxAdaptConcurrency). A server that fails a request in a
// retryable way (429, 503, a timeout) has its requests in flight halved
// and grows again only after holdWindows windows. Throughput is measured
// in windows of at least minWindow completions (and as many as the
// requests in flight), starting once the requests sent before a change
// have come back.
const (
	startBatch          = 64
	maxAdaptBatch       = 512
	startConcurrency    = 4
	maxAdaptConcurrency = 64
	gain                = 1.05
	flat                = 0.97 // within noise of the best: not a fall
	minWindow           = 3
	holdWindows         = 3
	reprobeWindows      = 8
)

// adapter decides the texts per request and each server's requests in
// flight for one backend, across all its calls. Settings the user gave
// stay fixed; only those left at zero adapt (AIMD-style: grow while
// throughput rises, halve on overload).
type adapter struct {
	fleet *httpx.Fleet
	// failures counts server i's retryable failures so far (the fleet's
	// count; tests replace it).
	failures   func(i int) int64
	fixedBatch bool
	fixedConc  bool
	now        func() time.Time

	mu       sync.Mutex
	slot     chan struct{} // closed and replaced when a slot frees or limits change
	inflight int           // requests out, all servers
	batch    int
	maxBatch int

	// The slow start measures all servers together.
	batchDone bool
	win       window
	best      float64
	steps     []step

	servers []serverAdapt

	// Totals for the manifest and progress: texts, tokens, requests and
	// the wall time from the first request to the last answer.
	texts, tokens, requests int64
	first, last             time.Time
}

// window is one throughput measurement: completions counted from start,
// after skip completions of requests sent before it began.
type window struct {
	start  time.Time
	skip   int
	done   int
	tokens int
}

// serverAdapt is one server's requests in flight and its measurements.
type serverAdapt struct {
	limit     int
	win       window
	best      float64 // tokens/s at bestLimit
	bestLimit int
	climbing  bool // raising the limit while throughput rises
	hold      int  // windows to wait before raising again
	settled   int  // windows since it settled, for a re-probe
	failures  int64
	texts     int64
	tokens    int64
	requests  int64
}

func newAdapter(fleet *httpx.Fleet, batch, maxBatch, conc int, fixedBatch, fixedConc bool) *adapter {
	a := &adapter{fleet: fleet, fixedBatch: fixedBatch, fixedConc: fixedConc, now: time.Now,
		slot: make(chan struct{}), batch: batch, maxBatch: max(maxBatch, batch), batchDone: fixedBatch}
	n := 1
	if fleet != nil {
		n = fleet.Len()
	}
	a.failures = func(int) int64 { return 0 }
	if fleet != nil {
		a.failures = func(i int) int64 { return fleet.Stats()[i].Failures }
	}
	a.servers = make([]serverAdapt, n)
	for i := range a.servers {
		a.servers[i] = serverAdapt{limit: conc, bestLimit: conc, climbing: !fixedConc}
		if fleet != nil {
			fleet.SetLimit(i, conc)
		}
	}
	return a
}

// batchSize is the texts to put in the next request.
func (a *adapter) batchSize() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.batch
}

// largestBatch is the most texts a request may carry: the batch size, or
// while it adapts, its cap.
func (a *adapter) largestBatch() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.batchDone {
		return a.batch
	}
	return a.maxBatch
}

// acquire waits for a request slot: fewer requests out than the servers'
// limits together.
func (a *adapter) acquire(ctx context.Context) error {
	for {
		a.mu.Lock()
		total := 0
		for _, s := range a.servers {
			total += s.limit
		}
		if a.inflight < total {
			a.inflight++
			if a.first.IsZero() {
				a.first = a.now()
			}
			a.mu.Unlock()
			return nil
		}
		wait := a.slot
		a.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// release returns a slot. ok says server answered texts, with tokens
// (the server's count, else estimated); a failed request only frees its
// slot (its server's failures are the fleet's to count).
func (a *adapter) release(server, texts, tokens int, ok bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.inflight--
	a.wake()
	if !ok || server < 0 || server >= len(a.servers) {
		return
	}
	now := a.now()
	a.texts += int64(texts)
	a.tokens += int64(tokens)
	a.requests++
	a.last = now
	s := &a.servers[server]
	s.texts += int64(texts)
	s.tokens += int64(tokens)
	s.requests++
	if a.overloaded(server) {
		// Multiplicative decrease; a slow start ends at its best.
		if !a.batchDone {
			a.endSlowStart(now)
		}
		if !a.fixedConc {
			s.limit = max(1, s.limit/2)
			s.best, s.bestLimit, s.climbing, s.hold = 0, s.limit, false, holdWindows
			a.setLimit(server, now)
		}
		return
	}
	if !a.batchDone {
		if tps, ok := a.win.add(now, tokens, a.windowSize(a.totalLimit())); ok {
			a.nextBatch(tps, now)
		}
		return
	}
	if a.fixedConc {
		return
	}
	tps, ok := s.win.add(now, tokens, a.windowSize(s.limit))
	if !ok {
		return
	}
	switch {
	case s.hold > 0:
		s.hold--
		if s.hold == 0 {
			s.best, s.bestLimit, s.climbing = tps, s.limit, true
			s.limit = grow(s.limit)
			a.setLimit(server, now)
			return
		}
	case s.climbing && tps >= s.best*gain:
		s.best, s.bestLimit = tps, s.limit
		if s.limit < maxAdaptConcurrency {
			s.limit = grow(s.limit)
			a.setLimit(server, now)
			return
		}
		s.climbing = false
	case s.climbing:
		// No gain: settle at the last limit that gave one.
		s.climbing, s.settled = false, 0
		if s.limit != s.bestLimit {
			s.limit = s.bestLimit
			a.setLimit(server, now)
			return
		}
	default:
		s.settled++
		if tps > s.best {
			s.best = tps
		}
		if s.settled >= reprobeWindows && s.limit < maxAdaptConcurrency {
			// Conditions change (other clients, a warmed-up server):
			// try one more request in flight now and then.
			s.settled, s.climbing, s.best, s.bestLimit = 0, true, tps, s.limit
			s.limit++
			a.setLimit(server, now)
			return
		}
	}
	s.win = window{start: now, skip: 0}
}

// grow is the next limit while climbing: half again, at least one more.
func grow(n int) int { return min(maxAdaptConcurrency, max(n+1, n*3/2)) }

// nextBatch ends a window of the first phase, a slow start: while
// throughput does not fall, double the batch; when it falls (or the batch
// reaches its cap), keep the largest batch within noise of the best and
// let each server tune its own requests in flight.
func (a *adapter) nextBatch(tps float64, now time.Time) {
	limits := make([]int, len(a.servers))
	for i, s := range a.servers {
		limits[i] = s.limit
	}
	a.steps = append(a.steps, step{batch: a.batch, limits: limits, tps: tps})
	a.best = max(a.best, tps)
	// Go on while throughput does not fall: bigger batches cost fewer
	// requests, and a step that gains less than the noise should not
	// stop the climb. In the end the largest setting within noise of the
	// best is kept.
	if tps >= a.best*flat {
		if a.batch*2 <= a.maxBatch {
			a.batch *= 2
			a.win = window{start: now, skip: a.inflight}
			return
		}
	}
	a.endSlowStart(now)
}

// endSlowStart goes to the largest setting of the slow start within noise
// of its best (the present one when none was measured) and hands the
// requests in flight to each server's own tuning.
func (a *adapter) endSlowStart(now time.Time) {
	a.batchDone = true
	if len(a.steps) == 0 {
		return
	}
	keep := a.steps[0]
	for _, st := range a.steps {
		if st.tps >= a.best*flat {
			keep = st // steps grow, so the last within noise is the largest
		}
	}
	a.batch = keep.batch
	for i := range a.servers {
		s := &a.servers[i]
		s.limit, s.bestLimit = keep.limits[i], keep.limits[i]
		a.setLimit(i, now)
	}
}

// step is one setting of the slow start and its throughput.
type step struct {
	batch  int
	limits []int
	tps    float64
}

// overloaded says whether server i failed requests (retryable: 429, 503,
// timeouts) since it was last asked.
func (a *adapter) overloaded(i int) bool {
	f := a.failures(i)
	s := &a.servers[i]
	more := f > s.failures
	s.failures = f
	return more
}

// setLimit applies server i's new limit and starts a window once the
// requests sent under the old one are back. a.mu is held.
func (a *adapter) setLimit(i int, now time.Time) {
	s := &a.servers[i]
	if a.fleet != nil {
		a.fleet.SetLimit(i, s.limit)
	}
	s.win = window{start: now, skip: a.inflight}
	a.wake()
}

func (a *adapter) totalLimit() int {
	n := 0
	for _, s := range a.servers {
		n += s.limit
	}
	return n
}

// windowSize is the completions a window needs with limit requests in
// flight: a round of them.
func (a *adapter) windowSize(limit int) int { return max(minWindow, limit) }

func (a *adapter) wake() {
	close(a.slot)
	a.slot = make(chan struct{})
}

// add counts a completion; once past the skipped ones and size of them,
// it returns the window's throughput in tokens per second.
func (w *window) add(now time.Time, tokens, size int) (float64, bool) {
	if w.skip > 0 {
		w.skip--
		if w.skip == 0 {
			w.start = now
		}
		return 0, false
	}
	w.done++
	w.tokens += tokens
	secs := now.Sub(w.start).Seconds()
	if w.done < size || secs <= 0 {
		return 0, false
	}
	return float64(w.tokens) / secs, true
}

// AdaptStats are what an HTTP backend settled on and did: the batch size,
// and per server the requests in flight allowed now, the encoding it
// answers in, and what it answered.
type AdaptStats struct {
	BatchSize int  // texts per request now
	Adaptive  bool // some setting adapts (the user fixed not both)
	Servers   []ServerStats
	// Texts, Tokens and Requests answered, and Seconds from the first
	// request sent to the last answer.
	Texts, Tokens, Requests int64
	Seconds                 float64
	// Served counts the texts embedded under each model name the
	// answers gave (OpenAI's and Voyage's "model"; TEI's /embed names
	// none), so a gateway that routed the name elsewhere is seen.
	Served map[string]int64
}

// ServerStats describe one server of an HTTP backend.
type ServerStats struct {
	URL         string // redacted
	Concurrency int    // requests in flight allowed now
	// Encoding is what it answered in ("" before its first answer), and
	// EncodingNote why it was settled on floats.
	Encoding                Encoding
	EncodingNote            string
	Texts, Tokens, Requests int64
}

// TextsPerSecond and TokensPerSecond are the throughput from the first
// request to the last answer.
func (s AdaptStats) TextsPerSecond() float64  { return rate(s.Texts, s.Seconds) }
func (s AdaptStats) TokensPerSecond() float64 { return rate(s.Tokens, s.Seconds) }

func rate(n int64, secs float64) float64 {
	if secs <= 0 {
		return 0
	}
	return float64(n) / secs
}

func (a *adapter) stats(enc *encodings) AdaptStats {
	a.mu.Lock()
	defer a.mu.Unlock()
	st := AdaptStats{BatchSize: a.batch, Adaptive: !a.fixedBatch || !a.fixedConc,
		Texts: a.texts, Tokens: a.tokens, Requests: a.requests}
	if !a.first.IsZero() && a.last.After(a.first) {
		st.Seconds = a.last.Sub(a.first).Seconds()
	}
	var names []string
	if a.fleet != nil {
		names = a.fleet.Names()
	}
	for i, s := range a.servers {
		ss := ServerStats{Concurrency: s.limit, Texts: s.texts, Tokens: s.tokens, Requests: s.requests}
		if i < len(names) {
			ss.URL = names[i]
		}
		if enc != nil {
			ss.Encoding, ss.EncodingNote = enc.stat(i)
		}
		st.Servers = append(st.Servers, ss)
	}
	return st
}
