package httpx

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// server is a loopback server with a handler, counting requests and the
// most it held at once.
type server struct {
	url         string
	hits, in    atomic.Int64
	maxIn       atomic.Int64
	handle      func(n int64, w http.ResponseWriter, r *http.Request)
	hold        time.Duration
	mu          sync.Mutex
	lastAuthHdr string
}

func newServer(t *testing.T, hold time.Duration, handle func(n int64, w http.ResponseWriter, r *http.Request)) *server {
	t.Helper()
	s := &server{handle: handle, hold: hold}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := s.hits.Add(1)
		in := s.in.Add(1)
		defer s.in.Add(-1)
		for m := s.maxIn.Load(); in > m && !s.maxIn.CompareAndSwap(m, in); m = s.maxIn.Load() {
		}
		s.mu.Lock()
		s.lastAuthHdr = r.Header.Get("Authorization")
		s.mu.Unlock()
		time.Sleep(s.hold)
		if s.handle != nil {
			s.handle(n, w, r)
			return
		}
		ok(w, r)
	}))
	t.Cleanup(srv.Close)
	s.url = srv.URL
	return s
}

func failing(code int) func(int64, http.ResponseWriter, *http.Request) {
	return func(_ int64, w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(code)
		fmt.Fprint(w, `{"error":"down"}`)
	}
}

func newFleet(t *testing.T, o FleetOptions, servers ...*server) *Fleet {
	t.Helper()
	var urls []string
	for _, s := range servers {
		urls = append(urls, s.url)
	}
	f, err := NewFleet(urls, o)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// Requests are spread over every server, never more than PerEndpoint at
// once on any.
func TestFleetSpreadsRequestsAndBoundsEachServer(t *testing.T) {
	var servers []*server
	for range 3 {
		servers = append(servers, newServer(t, 20*time.Millisecond, nil))
	}
	c := &Client{Fleet: newFleet(t, FleetOptions{PerEndpoint: 2}, servers...)}
	var wg sync.WaitGroup
	errs := make(chan error, 30)
	for range 30 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var out answer
			errs <- c.Do(context.Background(), Request{Path: "x"}, &out)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	total := int64(0)
	for i, s := range servers {
		total += s.hits.Load()
		if s.maxIn.Load() > 2 {
			t.Errorf("server %d held %d requests at once; the bound is 2", i, s.maxIn.Load())
		}
		if s.hits.Load() < 5 {
			t.Errorf("server %d got %d of 30 requests; the load is not spread", i, s.hits.Load())
		}
	}
	if total != 30 {
		t.Errorf("%d requests sent for 30 calls", total)
	}
}

// A failed attempt goes to another server at once; a server that fails
// Failures times in a row is taken out, and hears nothing during its
// cool-down.
func TestFleetTakesFailingServerOut(t *testing.T) {
	bad := newServer(t, 0, failing(503))
	good := newServer(t, 0, nil)
	var events []string
	c := &Client{Fleet: newFleet(t, FleetOptions{Cooldown: time.Hour, Notify: func(m string) { events = append(events, m) }}, bad, good)}
	var rec recorder
	rec.install(c)
	for range 10 {
		var out answer
		if err := c.Do(context.Background(), Request{Path: "x"}, &out); err != nil || !out.OK {
			t.Fatalf("err %v out %+v", err, out)
		}
	}
	if n := bad.hits.Load(); n != 3 {
		t.Errorf("the failing server got %d requests; want 3 (out after 3 failures in a row)", n)
	}
	for _, w := range rec.got() {
		if w != 0 {
			t.Errorf("a retry waited %v although another server was free", w)
		}
	}
	if len(events) != 1 || !strings.Contains(events[0], "failed 3 requests in a row") || !strings.Contains(events[0], "HTTP 503") {
		t.Errorf("events %q", events)
	}
	st := c.Fleet.Stats()
	if st[0].Healthy || !st[1].Healthy || st[0].Failures != 3 || st[1].Requests != 10 {
		t.Errorf("stats %+v", st)
	}
}

// After its cool-down a server gets one trial request: success brings it
// back, failure takes it out for twice as long. The fleet's clock is a
// fake one the test moves, so a slow machine cannot end a cool-down early.
func TestFleetTrialRequest(t *testing.T) {
	var healthy atomic.Bool
	flaky := newServer(t, 0, func(n int64, w http.ResponseWriter, r *http.Request) {
		if healthy.Load() {
			ok(w, r)
			return
		}
		failing(500)(n, w, r)
	})
	good := newServer(t, 0, nil)
	var mu sync.Mutex
	var events []string
	f := newFleet(t, FleetOptions{Failures: 1, Cooldown: 100 * time.Millisecond, Notify: func(m string) {
		mu.Lock()
		events = append(events, m)
		mu.Unlock()
	}}, flaky, good)
	clock := fakeClock{t: time.Unix(1e9, 0)}
	f.now = clock.now
	c := &Client{Fleet: f}
	do := func() {
		t.Helper()
		var out answer
		if err := c.Do(context.Background(), Request{Path: "x"}, &out); err != nil {
			t.Fatal(err)
		}
	}
	do() // flaky fails once: out for 100 ms
	if flaky.hits.Load() != 1 {
		t.Fatalf("flaky got %d requests", flaky.hits.Load())
	}
	clock.advance(99 * time.Millisecond)
	do()
	if flaky.hits.Load() != 1 {
		t.Error("a server in its cool-down got a request")
	}
	clock.advance(time.Millisecond)
	do() // the trial fails: out for 200 ms
	if flaky.hits.Load() != 2 {
		t.Fatalf("no trial request after the cool-down (%d requests)", flaky.hits.Load())
	}
	clock.advance(199 * time.Millisecond)
	do()
	if flaky.hits.Load() != 2 {
		t.Error("a failed trial did not double the cool-down")
	}
	healthy.Store(true)
	clock.advance(time.Millisecond)
	do() // the trial succeeds: back
	if flaky.hits.Load() != 3 || !f.Stats()[0].Healthy {
		t.Fatalf("flaky not back after a good trial: %d requests, %+v", flaky.hits.Load(), f.Stats())
	}
	mu.Lock()
	defer mu.Unlock()
	if len(events) != 2 || !strings.Contains(events[1], "back in the fleet") {
		t.Errorf("events %q", events)
	}
}

// fakeClock is a Fleet's clock that moves only when told.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// A 429's Retry-After holds that server back; the request goes on at once
// to another one.
func TestFleetRetryAfterPausesServer(t *testing.T) {
	limited := newServer(t, 0, func(n int64, w http.ResponseWriter, r *http.Request) {
		if n == 1 {
			w.Header().Set("Retry-After", "5")
			w.WriteHeader(429)
			return
		}
		ok(w, r)
	})
	other := newServer(t, 0, nil)
	c := &Client{Fleet: newFleet(t, FleetOptions{}, limited, other)}
	var rec recorder
	rec.install(c)
	for range 4 {
		var out answer
		if err := c.Do(context.Background(), Request{Path: "x"}, &out); err != nil {
			t.Fatal(err)
		}
	}
	if limited.hits.Load() != 1 || other.hits.Load() != 4 {
		t.Errorf("requests: limited %d, other %d; want 1 and 4 (limited paused for 5 s)", limited.hits.Load(), other.hits.Load())
	}
	if w := rec.got(); len(w) != 1 || w[0] != 0 {
		t.Errorf("waits %v, want one retry without waiting", w)
	}
}

// With every server out, requests still go out, paced by the Client's
// backoff, and fail after MaxAttempts.
func TestFleetAllServersFailing(t *testing.T) {
	a := newServer(t, 0, failing(502))
	b := newServer(t, 0, failing(502))
	c := &Client{MaxAttempts: 8, Fleet: newFleet(t, FleetOptions{Failures: 2, Cooldown: time.Hour}, a, b)}
	var rec recorder
	rec.install(c)
	err := c.Do(context.Background(), Request{Path: "x"}, nil)
	var se *StatusError
	if !errors.As(err, &se) || se.Status != 502 || se.Attempts != 8 {
		t.Fatalf("err %v", err)
	}
	if a.hits.Load()+b.hits.Load() != 8 {
		t.Errorf("%d requests, want 8", a.hits.Load()+b.hits.Load())
	}
	waits := rec.got()
	if waits[0] != 0 || waits[len(waits)-1] == 0 {
		t.Errorf("waits %v: want the first retry at once (the other server), later ones backed off", waits)
	}
}

// A caller waiting for a slot gives up with its context.
func TestFleetWaitForSlotCancels(t *testing.T) {
	release := make(chan struct{})
	s := newServer(t, 0, func(_ int64, w http.ResponseWriter, r *http.Request) {
		<-release
		ok(w, r)
	})
	defer close(release)
	c := &Client{Fleet: newFleet(t, FleetOptions{PerEndpoint: 1}, s, newServer(t, 0, func(_ int64, w http.ResponseWriter, r *http.Request) {
		<-release
		ok(w, r)
	}))}
	for range 2 {
		go c.Do(context.Background(), Request{Path: "x"}, nil)
	}
	for c.Fleet.Stats()[0].Requests+c.Fleet.Stats()[1].Requests < 2 {
		time.Sleep(time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := c.Do(ctx, Request{Path: "x"}, nil)
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 2*time.Second {
		t.Errorf("err %v after %v", err, time.Since(start))
	}
}

func TestFleetPathAndURLRules(t *testing.T) {
	s := newServer(t, 0, func(_ int64, w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/embeddings" {
			http.NotFound(w, r)
			return
		}
		ok(w, r)
	})
	f, err := NewFleet([]string{s.url + "/v1"}, FleetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := &Client{Fleet: f}
	if err := c.Do(context.Background(), Request{Path: "embeddings"}, nil); err != nil {
		t.Error(err)
	}
	if err := c.Do(context.Background(), Request{URL: s.url}, nil); err == nil || !strings.Contains(err.Error(), "takes a Path") {
		t.Errorf("URL with a fleet: %v", err)
	}
	if err := (&Client{}).Do(context.Background(), Request{Path: "x"}, nil); err == nil || !strings.Contains(err.Error(), "needs a Client with a Fleet") {
		t.Errorf("Path without a fleet: %v", err)
	}
}

func TestNewFleetValidates(t *testing.T) {
	for _, tc := range []struct {
		urls []string
		o    FleetOptions
		want string
	}{
		{nil, FleetOptions{}, "no server URL"},
		{[]string{"localhost:8000"}, FleetOptions{}, "not an http(s) URL"},
		{[]string{"http://a/v1", "http://a/v1/"}, FleetOptions{}, "given twice"},
		{[]string{"http://a/v1"}, FleetOptions{PerEndpoint: -1}, "must not be negative"},
		{[]string{"http://u:topsecret1@a/v1", "ftp://u:topsecret1@b"}, FleetOptions{}, "ftp://b"},
	} {
		_, err := NewFleet(tc.urls, tc.o)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "topsecret1") {
			t.Errorf("%q: err %v, want %q and no password", tc.urls, err, tc.want)
		}
	}
}

// Credentials in a base URL never appear in a message: not in the URL
// printed, not when the server echoes them.
func TestFleetURLCredentialsNeverPrinted(t *testing.T) {
	const pass = "s3cret-pass-42"
	s := newServer(t, 0, func(_ int64, w http.ResponseWriter, r *http.Request) {
		u, p, _ := r.BasicAuth()
		w.WriteHeader(500)
		fmt.Fprintf(w, `{"error":"bad login %s:%s"}`, u, p)
	})
	base := strings.Replace(s.url, "http://", "http://admin:"+pass+"@", 1) + "/v1"
	var events []string
	f, err := NewFleet([]string{base, base + "/alt"}, FleetOptions{Failures: 1, Notify: func(m string) { events = append(events, m) }})
	if err != nil {
		t.Fatal(err)
	}
	var notes []string
	c := &Client{MaxAttempts: 3, Fleet: f, Notify: func(_ int, _ time.Duration, err error) { notes = append(notes, err.Error()) }}
	var rec recorder
	rec.install(c)
	err = c.Do(context.Background(), Request{Path: "chat"}, nil)
	if err == nil {
		t.Fatal("no error")
	}
	for _, m := range append(append(notes, events...), append(f.Names(), err.Error())...) {
		if strings.Contains(m, pass) {
			t.Errorf("message leaks the URL's password: %s", m)
		}
	}
	if !strings.Contains(err.Error(), "[REDACTED]") {
		t.Errorf("the echoed password is not marked: %v", err)
	}
	if s.lastAuthHdr == "" {
		t.Error("the URL's credentials were not sent as basic auth")
	}
}

// An answer over the size cap is a clear error, not retried.
func TestMaxBody(t *testing.T) {
	big := `{"ok":true,"pad":"` + strings.Repeat("x", 3000) + `"}`
	s, url := serve(t, status(200, nil, big))
	c := &Client{MaxBody: 2048}
	var out answer
	err := c.Do(context.Background(), Request{URL: url}, &out)
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "larger than 2 KiB") || s.hits() != 1 {
		t.Errorf("err %v after %d requests", err, s.hits())
	}
	// A request's own cap applies when lower; an answer within the cap reads.
	if err := (&Client{}).Do(context.Background(), Request{URL: url, MaxBody: 1000}, &out); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "1000 bytes") {
		t.Errorf("request cap: %v", err)
	}
	if err := (&Client{MaxBody: 4096}).Do(context.Background(), Request{URL: url}, &out); err != nil || !out.OK {
		t.Errorf("within the cap: %v", err)
	}
}

// Replay mode sends nothing, and says why.
func TestReplaySendsNothing(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		t.Error("a replaying client contacted the server")
	}))
	defer srv.Close()
	for _, c := range []*Client{{Replay: true}, {Replay: true, Fleet: must(NewFleet([]string{"http://u:pw-secret@" + strings.TrimPrefix(srv.URL, "http://")}, FleetOptions{}))}} {
		req := Request{URL: srv.URL + "/x"}
		if c.Fleet != nil {
			req = Request{Path: "x"}
		}
		err := c.Do(context.Background(), req, nil)
		if !errors.Is(err, ErrReplay) || !strings.Contains(err.Error(), "from the cache") || strings.Contains(err.Error(), "pw-secret") {
			t.Errorf("err %v", err)
		}
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func TestReadURLs(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "servers.txt")
	os.WriteFile(file, []byte("\uFEFF# GPU fleet\nhttp://gpu1:8000/v1\n\n  http://gpu2:8000/v1  \n# gpu3 is down\n"), 0o644)
	got, err := ReadURLs([]string{"http://gpu0:8000/v1", file})
	if err != nil {
		t.Fatal(err)
	}
	if want := "[http://gpu0:8000/v1 http://gpu1:8000/v1 http://gpu2:8000/v1]"; fmt.Sprint(got) != want {
		t.Errorf("got %v, want %s", got, want)
	}
	bad := filepath.Join(dir, "bad.txt")
	os.WriteFile(bad, []byte("http://gpu1:8000/v1\ngpu2:8000\n"), 0o644)
	dup := filepath.Join(dir, "dup.txt")
	os.WriteFile(dup, []byte("http://gpu1:8000/v1\nhttp://gpu1:8000/v1/\n"), 0o644)
	empty := filepath.Join(dir, "empty.txt")
	os.WriteFile(empty, []byte("# nothing\n"), 0o644)
	for _, tc := range []struct {
		values []string
		want   string
	}{
		{[]string{bad}, bad + `:2: "gpu2:8000" is not an http(s) URL`},
		{[]string{dup}, dup + ":2: server http://gpu1:8000/v1/ was already given (" + dup + ":1)"},
		{[]string{empty}, "no server URL in the file"},
		{[]string{filepath.Join(dir, "missing.txt")}, "a --base-url value is a URL starting with http://"},
		{[]string{"http://a/v1", "http://a/v1"}, "was already given"},
	} {
		_, err := ReadURLs(tc.values)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err %v, want %q", tc.values, err, tc.want)
		}
	}
}

func TestLogRetries(t *testing.T) {
	var b bytes.Buffer
	LogRetries(&b, "embedding")(2, 1500*time.Millisecond, errors.New("POST http://h/v1/embeddings: HTTP 503"))
	LogFleet(&b)("server http://h/v1 answers again; back in the fleet")
	want := "r2med: embedding request failed (attempt 2), retrying in 1.5s: POST http://h/v1/embeddings: HTTP 503\n" +
		"r2med: server http://h/v1 answers again; back in the fleet\n"
	if b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}

func TestRedactArgs(t *testing.T) {
	in := []string{"r2med", "run", "--base-url", "http://admin:pw-123@gpu1:8000/v1", "--base-url=https://u:p@gpu2/v1?key=k-999", "--rerank-url", "http://plain:8080", "--model", "m"}
	got := RedactArgs(in)
	want := []string{"r2med", "run", "--base-url", "http://gpu1:8000/v1", "--base-url=https://gpu2/v1?key=…", "--rerank-url", "http://plain:8080", "--model", "m"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %q, want %q", got, want)
	}
	if in[3] != "http://admin:pw-123@gpu1:8000/v1" {
		t.Error("the input was changed")
	}
}

// TestBodyForAndRefused: the body is built for the server each attempt
// goes to; a server's refusal the caller can answer (Refused) sends the
// request again at once with a body rebuilt for it; SetLimit bounds one
// server alone.
func TestBodyForAndRefused(t *testing.T) {
	picky := newServer(t, 0, func(_ int64, w http.ResponseWriter, r *http.Request) {
		var body map[string]string
		json.NewDecoder(r.Body).Decode(&body)
		if body["format"] == "fancy" {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"error":"format: plain only"}`)
			return
		}
		ok(w, r)
	})
	f := newFleet(t, FleetOptions{}, picky)
	c := &Client{Fleet: f, BaseDelay: time.Millisecond}
	plain := false
	var bodies []string
	req := Request{Path: "x",
		BodyFor: func(server int) (any, error) {
			format := "fancy"
			if plain {
				format = "plain"
			}
			bodies = append(bodies, fmt.Sprintf("%d:%s", server, format))
			return map[string]string{"format": format}, nil
		},
		Refused: func(server int, err *StatusError) bool {
			if plain || err.Status != http.StatusBadRequest || !strings.Contains(err.Body, "format") {
				return false
			}
			plain = true
			return true
		}}
	if err := c.Do(context.Background(), req, nil); err != nil {
		t.Fatal(err)
	}
	if strings.Join(bodies, " ") != "0:fancy 0:plain" || picky.hits.Load() != 2 {
		t.Errorf("bodies %v, %d requests", bodies, picky.hits.Load())
	}
	// A refusal the caller cannot answer is the error.
	req.Refused = func(int, *StatusError) bool { return false }
	plain = false
	if err := c.Do(context.Background(), req, nil); err == nil || !strings.Contains(err.Error(), "HTTP 400") {
		t.Errorf("unanswered refusal: %v", err)
	}
	// A body the caller cannot build ends the request and frees the slot.
	req.BodyFor = func(int) (any, error) { return nil, errors.New("no body today") }
	if err := c.Do(context.Background(), req, nil); err == nil || !strings.Contains(err.Error(), "no body today") || f.Stats()[0].InFlight != 0 {
		t.Errorf("BodyFor error: %v, in flight %d", err, f.Stats()[0].InFlight)
	}
}

func TestSetLimitBoundsOneServer(t *testing.T) {
	slow := newServer(t, 30*time.Millisecond, nil)
	f := newFleet(t, FleetOptions{PerEndpoint: 8}, slow)
	f.SetLimit(0, 2)
	c := &Client{Fleet: f}
	var wg sync.WaitGroup
	for range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := c.Do(context.Background(), Request{Path: "x"}, nil); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if m := slow.maxIn.Load(); m != 2 {
		t.Errorf("the server held %d requests at once, want its own limit 2", m)
	}
}
