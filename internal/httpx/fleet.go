package httpx

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"
)

// Fleet spreads the requests of one Client over several servers of the
// same model (a vLLM, TEI or llama.cpp fleet): each request goes to the
// least busy healthy server, at most FleetOptions.PerEndpoint at a time
// on each, and a retried request goes to another server when one is free.
//
// A server that fails Failures requests in a row (a retryable status, a
// timeout, a dropped connection) is taken out for Cooldown; then one trial
// request is let through, which brings it back or takes it out for twice
// as long (up to 8×). A 429 with Retry-After also holds that server back
// for the time asked. While one server stays healthy the others' failures
// cost only retries; when all are out, requests go to the one that comes
// back first, paced by the Client's backoff, as with a single server.
//
// A fleet of one server only bounds its concurrency: there is nothing to
// route around it, and Client's own retry policy applies unchanged.
//
// Which server answered is not part of any answer: callers cache by
// content, so a text embedded by one server is never sent to another,
// and the servers must serve the same weights at the same precision.
type Fleet struct {
	eps       []*endpoint
	limit     int
	failures  int
	cooldown  time.Duration
	notify    func(string)
	secrets   []string
	now       func() time.Time
	mu        sync.Mutex
	wake      chan struct{} // closed and replaced whenever a slot frees or a state changes
	next      int           // round-robin start among equally busy servers
	singleton bool
}

// FleetOptions configure a Fleet; the zero value works.
type FleetOptions struct {
	// PerEndpoint bounds each server's requests in flight; 0 means no
	// bound (the callers' own concurrency decides).
	PerEndpoint int
	// Failures in a row take a server out; 0 means 3.
	Failures int
	// Cooldown is how long a server stays out before a trial request;
	// 0 means 10 s.
	Cooldown time.Duration
	// Notify, if set, hears when a server is taken out or comes back, in
	// a sentence that holds no credentials.
	Notify func(msg string)
}

type endpoint struct {
	url, name string // as given, and fit for messages
	limit     int    // this server's bound on requests in flight (SetLimit); 0: the fleet's
	inflight  int
	fails     int       // consecutive failures
	outUntil  time.Time // zero while healthy
	strikes   int       // failed trials since taken out
	trial     bool      // a trial request is in flight
	pause     time.Time // Retry-After
	requests  int64
	failed    int64
}

// NewFleet makes a fleet of the given base URLs (at least one, each an
// http(s) URL, no two alike).
func NewFleet(urls []string, o FleetOptions) (*Fleet, error) {
	if len(urls) == 0 {
		return nil, errors.New("no server URL given")
	}
	if o.PerEndpoint < 0 || o.Failures < 0 || o.Cooldown < 0 {
		return nil, fmt.Errorf("fleet options must not be negative (per-endpoint %d, failures %d, cooldown %v)", o.PerEndpoint, o.Failures, o.Cooldown)
	}
	f := &Fleet{limit: o.PerEndpoint, failures: o.Failures, cooldown: o.Cooldown, notify: o.Notify,
		now: time.Now, wake: make(chan struct{}), singleton: len(urls) == 1}
	if f.failures == 0 {
		f.failures = 3
	}
	if f.cooldown == 0 {
		f.cooldown = 10 * time.Second
	}
	seen := map[string]bool{}
	for _, raw := range urls {
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("server URL %q is not an http(s) URL like http://localhost:8000/v1", RedactURL(raw))
		}
		key := strings.TrimRight(raw, "/")
		if seen[key] {
			return nil, fmt.Errorf("server URL %s is given twice", RedactURL(raw))
		}
		seen[key] = true
		if p, ok := u.User.Password(); ok {
			f.secrets = append(f.secrets, p)
		}
		f.eps = append(f.eps, &endpoint{url: raw, name: RedactURL(raw)})
	}
	return f, nil
}

// Len is the number of servers.
func (f *Fleet) Len() int { return len(f.eps) }

// URLs are the servers as given (credentials included: not for messages).
func (f *Fleet) URLs() []string {
	out := make([]string, len(f.eps))
	for i, e := range f.eps {
		out[i] = e.url
	}
	return out
}

// Names are the servers fit for messages and manifests (RedactURL).
func (f *Fleet) Names() []string {
	out := make([]string, len(f.eps))
	for i, e := range f.eps {
		out[i] = e.name
	}
	return out
}

// Secrets are the passwords embedded in the servers' URLs, which a Client
// with this fleet removes from every message.
func (f *Fleet) Secrets() []string { return f.secrets }

// SetLimit bounds server i's requests in flight to n (n ≥ 1), in place
// of FleetOptions.PerEndpoint: an adaptive caller raises it while the
// server keeps up and lowers it when it does not. Requests already in
// flight are not cut.
func (f *Fleet) SetLimit(i, n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.eps[i].limit = max(n, 1)
	f.broadcast()
}

// EndpointStats describe one server of a fleet.
type EndpointStats struct {
	URL      string // redacted
	Requests int64  // attempts sent
	Failures int64  // attempts that failed in a retryable way
	Healthy  bool
	InFlight int // requests it holds now
}

// Stats describe every server, in the order given.
func (f *Fleet) Stats() []EndpointStats {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]EndpointStats, len(f.eps))
	for i, e := range f.eps {
		out[i] = EndpointStats{URL: e.name, Requests: e.requests, Failures: e.failed, Healthy: e.outUntil.IsZero(), InFlight: e.inflight}
	}
	return out
}

// broadcast wakes every waiting acquire; f.mu is held.
func (f *Fleet) broadcast() {
	close(f.wake)
	f.wake = make(chan struct{})
}

// acquire waits for a server with a free slot and reserves it, preferring
// servers not in tried (those that already failed this request).
func (f *Fleet) acquire(ctx context.Context, tried []int) (int, error) {
	for {
		f.mu.Lock()
		i, until := f.pick(tried)
		if i >= 0 {
			e := f.eps[i]
			e.inflight++
			e.requests++
			if !e.outUntil.IsZero() {
				e.trial = true
			}
			f.mu.Unlock()
			return i, nil
		}
		wake := f.wake
		f.mu.Unlock()
		var timer *time.Timer
		var fire <-chan time.Time
		if !until.IsZero() {
			timer = time.NewTimer(max(until.Sub(f.now()), time.Millisecond))
			fire = timer.C
		}
		select {
		case <-ctx.Done():
		case <-wake:
		case <-fire:
		}
		if timer != nil {
			timer.Stop()
		}
		if err := ctx.Err(); err != nil {
			return -1, err
		}
	}
}

// pick chooses a server, or returns -1 and when to look again (zero: when
// woken). f.mu is held.
func (f *Fleet) pick(tried []int) (int, time.Time) {
	now := f.now()
	free := func(e *endpoint) bool {
		limit := f.limit
		if e.limit > 0 {
			limit = e.limit
		}
		return limit == 0 || e.inflight < limit
	}
	if f.singleton {
		if free(f.eps[0]) {
			return 0, time.Time{}
		}
		return -1, time.Time{}
	}
	var soonest time.Time
	later := func(t time.Time) {
		if soonest.IsZero() || t.Before(soonest) {
			soonest = t
		}
	}
	// Servers rank by: not tried by this request, then due a trial (so a
	// recovered server is seen soon), then least busy; ties go round-robin.
	type rank struct {
		tried, healthy bool
		load           int
	}
	less := func(a, b rank) bool {
		if a.tried != b.tried {
			return !a.tried
		}
		if a.healthy != b.healthy {
			return !a.healthy
		}
		return a.load < b.load
	}
	best := -1
	var bestRank rank
	healthy := false
	n := len(f.eps)
	for k := range n {
		i := (f.next + k) % n
		e := f.eps[i]
		switch {
		case e.outUntil.IsZero():
			healthy = true
			if now.Before(e.pause) {
				later(e.pause)
				continue
			}
			if !free(e) {
				continue
			}
		case e.trial:
			continue
		case now.Before(e.outUntil):
			later(e.outUntil)
			continue
		}
		// Healthy with a free slot, or out with its cool-down over: due
		// one trial request.
		r := rank{tried: contains(tried, i), healthy: e.outUntil.IsZero(), load: e.inflight}
		if best < 0 || less(r, bestRank) {
			best, bestRank = i, r
		}
	}
	if best >= 0 {
		f.next = (best + 1) % n
		return best, time.Time{}
	}
	if healthy {
		return -1, soonest // wait for a slot, a pause or a cool-down to end
	}
	// Every server is out: the one that comes back first takes the
	// request now, paced by the caller's backoff, rather than failing
	// the run while a cool-down runs.
	first := -1
	for i, e := range f.eps {
		if free(e) && (first < 0 || e.outUntil.Before(f.eps[first].outUntil)) {
			first = i
		}
	}
	return first, time.Time{}
}

func contains(s []int, x int) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}

// outcome of one attempt, for release.
type outcome uint8

const (
	succeeded outcome = iota // the server answered (any non-retryable status included)
	failed                   // a retryable status, a timeout, a dropped connection
	abandoned                // the caller gave up; says nothing about the server
)

// release returns the slot and records how the attempt went.
func (f *Fleet) release(i int, o outcome, retryAfter time.Duration, err error) {
	var msg string
	f.mu.Lock()
	e := f.eps[i]
	e.inflight--
	wasTrial := e.trial && !e.outUntil.IsZero()
	if wasTrial {
		e.trial = false
	}
	now := f.now()
	if o == failed {
		e.failed++
	}
	switch {
	case f.singleton:
	case o == succeeded:
		if !e.outUntil.IsZero() {
			msg = fmt.Sprintf("server %s answers again; back in the fleet", e.name)
		}
		e.fails, e.strikes, e.outUntil = 0, 0, time.Time{}
	case o == failed:
		e.fails++
		if retryAfter > 0 {
			e.pause = now.Add(retryAfter)
		}
		switch {
		case wasTrial:
			e.strikes++
			e.outUntil = now.Add(f.cooldown << min(e.strikes, 3))
		case e.outUntil.IsZero() && e.fails >= f.failures:
			e.outUntil = now.Add(f.cooldown)
			msg = fmt.Sprintf("server %s failed %d requests in a row (last: %v); taken out of the fleet for %v, then tried again",
				e.name, e.fails, Redact(errString(err), f.secrets...), f.cooldown)
		}
	}
	f.broadcast()
	f.mu.Unlock()
	if msg != "" && f.notify != nil {
		f.notify(msg)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// alternative reports whether a server other than those in tried could
// take a request now, so a retry need not wait.
func (f *Fleet) alternative(tried []int) bool {
	if f.singleton {
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	now := f.now()
	for i, e := range f.eps {
		if contains(tried, i) {
			continue
		}
		if e.outUntil.IsZero() && !now.Before(e.pause) {
			return true
		}
		if !e.outUntil.IsZero() && !e.trial && !now.Before(e.outUntil) {
			return true
		}
	}
	return false
}

// url is the address of path on server i; an empty path is the server's
// URL itself.
func (f *Fleet) url(i int, path string) string {
	if path == "" {
		return f.eps[i].url
	}
	return JoinURL(f.eps[i].url, path)
}

// ReadURLs turns the values of a repeatable --base-url flag into server
// URLs: a value starting with http:// or https:// is a URL, anything else
// is a file with one URL per line (blank lines and lines starting with #
// are skipped). Duplicates are errors, as are lines that are not URLs,
// named by file and line.
func ReadURLs(values []string) ([]string, error) {
	var out []string
	where := map[string]string{}
	add := func(u, at string) error {
		parsed, err := url.Parse(u)
		if err != nil || (parsed.Scheme != "http" && parsed.Scheme != "https") || parsed.Host == "" {
			return fmt.Errorf("%s: %q is not an http(s) URL like http://localhost:8000/v1", at, RedactURL(u))
		}
		key := strings.TrimRight(u, "/")
		if prev, ok := where[key]; ok {
			return fmt.Errorf("%s: server %s was already given (%s); give each server once", at, RedactURL(u), prev)
		}
		where[key] = at
		out = append(out, u)
		return nil
	}
	for _, v := range values {
		v = strings.TrimSpace(v)
		if v == "" {
			continue
		}
		if strings.HasPrefix(v, "http://") || strings.HasPrefix(v, "https://") {
			if err := add(v, "--base-url "+RedactURL(v)); err != nil {
				return nil, err
			}
			continue
		}
		fh, err := os.Open(v)
		if err != nil {
			return nil, fmt.Errorf("server list: %w (a --base-url value is a URL starting with http:// or https://, or a file with one URL per line)", err)
		}
		sc := bufio.NewScanner(fh)
		line, n := 0, 0
		for sc.Scan() {
			line++
			s := strings.TrimSpace(sc.Text())
			if line == 1 {
				s = strings.TrimPrefix(s, "\uFEFF")
			}
			if s == "" || strings.HasPrefix(s, "#") {
				continue
			}
			if err := add(s, fmt.Sprintf("%s:%d", v, line)); err != nil {
				fh.Close()
				return nil, err
			}
			n++
		}
		err = sc.Err()
		fh.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", v, err)
		}
		if n == 0 {
			return nil, fmt.Errorf("%s: no server URL in the file (one http(s) URL per line)", v)
		}
	}
	return out, nil
}

// LogRetries returns a Client.Notify that prints one line per retried
// request to w, the way r2med reports retries on stderr:
//
//	r2med: embedding request failed (attempt 1), retrying in 500ms: POST http://gpu1:8000/v1/embeddings: HTTP 503 …
//
// what names the kind of request; errors reach Notify already redacted.
func LogRetries(w io.Writer, what string) func(attempt int, wait time.Duration, err error) {
	var mu sync.Mutex
	return func(attempt int, wait time.Duration, err error) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(w, "r2med: %s request failed (attempt %d), retrying in %v: %v\n", what, attempt, wait.Round(time.Millisecond), err)
	}
}

// LogFleet returns a FleetOptions.Notify that prints a fleet's events to
// w as "r2med: MESSAGE" lines.
func LogFleet(w io.Writer) func(msg string) {
	var mu sync.Mutex
	return func(msg string) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(w, "r2med: %s\n", msg)
	}
}
