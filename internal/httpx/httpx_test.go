package httpx

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"
)

// recorder replaces the client's sleep and jitter so tests see every wait
// without waiting.
type recorder struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (r *recorder) install(c *Client) {
	c.sleep = func(ctx context.Context, d time.Duration) error {
		r.mu.Lock()
		r.waits = append(r.waits, d)
		r.mu.Unlock()
		return ctx.Err()
	}
	c.jitter = func(d time.Duration) time.Duration { return d }
}

func (r *recorder) got() []time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.waits)
}

// script answers the n-th request (from 0) with steps[n], the last step
// repeating; it counts requests and keeps their bodies.
type script struct {
	mu     sync.Mutex
	steps  []func(w http.ResponseWriter, r *http.Request)
	bodies []string
}

func (s *script) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	n := len(s.bodies)
	s.bodies = append(s.bodies, string(b))
	s.mu.Unlock()
	s.steps[min(n, len(s.steps)-1)](w, r)
}

func (s *script) hits() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.bodies)
}

func status(code int, header map[string]string, body string) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, _ *http.Request) {
		for k, v := range header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(code)
		io.WriteString(w, body)
	}
}

var ok = status(200, nil, `{"ok":true}`)

func serve(t *testing.T, steps ...func(http.ResponseWriter, *http.Request)) (*script, string) {
	t.Helper()
	s := &script{steps: steps}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return s, srv.URL
}

type answer struct {
	OK bool `json:"ok"`
}

func TestRetryAfterSeconds(t *testing.T) {
	s, url := serve(t,
		status(429, map[string]string{"Retry-After": "7"}, "slow down"),
		status(429, map[string]string{"Retry-After": "2"}, "slow down"),
		ok)
	var rec recorder
	c := &Client{}
	rec.install(c)
	var out answer
	if err := c.Do(context.Background(), Request{URL: url, Body: map[string]int{"a": 1}}, &out); err != nil {
		t.Fatal(err)
	}
	if !out.OK || s.hits() != 3 {
		t.Fatalf("out %+v after %d requests, want ok after 3", out, s.hits())
	}
	if want := []time.Duration{7 * time.Second, 2 * time.Second}; !slices.Equal(rec.got(), want) {
		t.Errorf("waits %v, want %v (Retry-After honoured)", rec.got(), want)
	}
}

func TestRetryAfterDate(t *testing.T) {
	when := time.Now().Add(20 * time.Second).UTC().Format(http.TimeFormat)
	_, url := serve(t, status(503, map[string]string{"Retry-After": when}, ""), ok)
	var rec recorder
	c := &Client{}
	rec.install(c)
	if err := c.Do(context.Background(), Request{URL: url}, nil); err != nil {
		t.Fatal(err)
	}
	w := rec.got()
	// The date has whole seconds, and time passes between writing and reading it.
	if len(w) != 1 || w[0] < 15*time.Second || w[0] > 20*time.Second {
		t.Errorf("waits %v, want one wait of about 20s", w)
	}
}

func TestRetryAfterCappedAndOdd(t *testing.T) {
	_, url := serve(t,
		status(429, map[string]string{"Retry-After": "3600"}, ""),
		status(429, map[string]string{"Retry-After": "Inf"}, ""),
		status(429, map[string]string{"Retry-After": "soon"}, ""),
		status(429, map[string]string{"Retry-After": "-5"}, ""),
		ok)
	var rec recorder
	c := &Client{MaxDelay: 10 * time.Second, BaseDelay: time.Second}
	rec.install(c)
	if err := c.Do(context.Background(), Request{URL: url}, nil); err != nil {
		t.Fatal(err)
	}
	// 3600 and Inf are capped; unreadable and negative values fall back to
	// the backoff (attempts 3 and 4: 4s and 8s).
	want := []time.Duration{10 * time.Second, 10 * time.Second, 4 * time.Second, 8 * time.Second}
	if !slices.Equal(rec.got(), want) {
		t.Errorf("waits %v, want %v", rec.got(), want)
	}
}

func TestBackoff5xxBurst(t *testing.T) {
	s, url := serve(t,
		status(500, nil, "boom"), status(502, nil, "bad gateway"), status(503, nil, ""),
		status(504, nil, ""), status(500, nil, ""), ok)
	var rec recorder
	var notes []string
	c := &Client{BaseDelay: 100 * time.Millisecond, MaxDelay: time.Second, Notify: func(attempt int, wait time.Duration, err error) {
		notes = append(notes, fmt.Sprintf("%d %v %v", attempt, wait, err))
	}}
	rec.install(c)
	var out answer
	if err := c.Do(context.Background(), Request{URL: url, Body: []int{1, 2, 3}}, &out); err != nil {
		t.Fatal(err)
	}
	want := []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond, time.Second}
	if !slices.Equal(rec.got(), want) {
		t.Errorf("waits %v, want %v (doubling, capped)", rec.got(), want)
	}
	if len(notes) != 5 || !strings.Contains(notes[0], "HTTP 500") || !strings.Contains(notes[0], "boom") {
		t.Errorf("notifications %q", notes)
	}
	for i, b := range s.bodies {
		if b != "[1,2,3]" {
			t.Errorf("attempt %d sent body %q, want the whole body again", i+1, b)
		}
	}
}

func TestDefaultJitterWithinBackoff(t *testing.T) {
	c := &Client{BaseDelay: time.Second, MaxDelay: 8 * time.Second}
	for attempt := 1; attempt <= 10; attempt++ {
		ceiling := min(time.Second<<(attempt-1), 8*time.Second)
		for range 50 {
			if d := c.backoff(attempt); d <= 0 || d > ceiling {
				t.Fatalf("attempt %d: backoff %v outside (0, %v]", attempt, d, ceiling)
			}
		}
	}
	huge := &Client{BaseDelay: math.MaxInt64 / 4, MaxDelay: time.Minute}
	huge.jitter = func(d time.Duration) time.Duration { return d }
	for attempt := 1; attempt < 70; attempt++ {
		if d := huge.backoff(attempt); d != time.Minute {
			t.Fatalf("attempt %d: backoff %v, want the 1m cap", attempt, d)
		}
	}
}

// An attempt longer than Timeout is cut off and retried, and the retry's
// answer is the answer. Requests that arrive before the first timeout
// hang until their client gives up; the retry gets a minute and an
// answer, so a loaded machine, slow to answer or to send, can neither
// time out the retry nor answer the first attempt.
func TestPerAttemptTimeoutThenSuccess(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	var retrying atomic.Bool
	s, url := serve(t, func(w http.ResponseWriter, r *http.Request) {
		if retrying.Load() {
			ok(w, r)
			return
		}
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	var rec recorder
	var noted error
	c := &Client{Timeout: 50 * time.Millisecond}
	c.Notify = func(_ int, _ time.Duration, err error) {
		noted = err
		retrying.Store(true)
		c.Timeout = time.Minute
	}
	rec.install(c)
	var out answer
	if err := c.Do(context.Background(), Request{URL: url}, &out); err != nil {
		t.Fatal(err)
	}
	if !out.OK || len(rec.got()) != 1 {
		t.Fatalf("out %+v after %d retries (%d requests arrived), want one retry", out, len(rec.got()), s.hits())
	}
	if noted == nil || !strings.Contains(noted.Error(), "timed out") {
		t.Errorf("retry notified with %v, want a timeout", noted)
	}
}

func TestGiveUpAfterMaxAttempts(t *testing.T) {
	s, url := serve(t, status(503, nil, `{"error":"overloaded"}`))
	var rec recorder
	c := &Client{MaxAttempts: 3}
	rec.install(c)
	err := c.Do(context.Background(), Request{URL: url + "/v1/embeddings"}, nil)
	var se *StatusError
	if !errors.As(err, &se) {
		t.Fatalf("error %v, want a StatusError", err)
	}
	if se.Status != 503 || se.Attempts != 3 || s.hits() != 3 || len(rec.got()) != 2 {
		t.Errorf("status %d attempts %d hits %d waits %d, want 503/3/3/2", se.Status, se.Attempts, s.hits(), len(rec.got()))
	}
	msg := err.Error()
	for _, want := range []string{"POST " + url + "/v1/embeddings", "HTTP 503 Service Unavailable after 3 attempts", "overloaded"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
}

func TestGiveUpOn429SaysWhatToDo(t *testing.T) {
	_, url := serve(t, status(429, nil, ""))
	var rec recorder
	c := &Client{MaxAttempts: 2}
	rec.install(c)
	err := c.Do(context.Background(), Request{URL: url}, nil)
	if err == nil || !strings.Contains(err.Error(), "after 2 attempts") || !strings.Contains(err.Error(), "lower the concurrency") {
		t.Errorf("error %v", err)
	}
}

func TestTransportErrorsRetriedThenGiveUp(t *testing.T) {
	drop := func(w http.ResponseWriter, r *http.Request) {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
	}
	s, url := serve(t, drop)
	var rec recorder
	c := &Client{MaxAttempts: 4}
	rec.install(c)
	err := c.Do(context.Background(), Request{URL: url}, nil)
	if err == nil || !strings.Contains(err.Error(), "gave up after 4 attempts") || s.hits() != 4 {
		t.Errorf("error %v after %d requests, want giving up after 4", err, s.hits())
	}

	s2, url2 := serve(t, drop, drop, ok)
	if err := c.Do(context.Background(), Request{URL: url2}, nil); err != nil || s2.hits() != 3 {
		t.Errorf("error %v after %d requests, want success on the 3rd", err, s2.hits())
	}
}

func TestClientErrorsNotRetried(t *testing.T) {
	for _, tc := range []struct {
		code int
		hint string
	}{
		{400, "HTTP 400 Bad Request: no such field"},
		{401, "check the API key"},
		{403, "check the API key"},
		{404, "check the base URL and the model name"},
		{413, "lower the batch size"},
		{422, "HTTP 422"},
	} {
		s, url := serve(t, status(tc.code, nil, "no such field"), ok)
		var rec recorder
		c := &Client{}
		rec.install(c)
		err := c.Do(context.Background(), Request{URL: url}, nil)
		if err == nil || !strings.Contains(err.Error(), tc.hint) {
			t.Errorf("HTTP %d: error %v, want %q", tc.code, err, tc.hint)
		}
		if strings.Contains(fmt.Sprint(err), "attempts") || s.hits() != 1 || len(rec.got()) != 0 {
			t.Errorf("HTTP %d: %d requests, %d waits; want no retry", tc.code, s.hits(), len(rec.got()))
		}
	}
}

func TestRetryableStatuses(t *testing.T) {
	for code, want := range map[int]bool{200: false, 400: false, 401: false, 404: false, 408: true, 409: true, 429: true, 500: true, 503: true, 599: true} {
		if Retryable(code) != want {
			t.Errorf("Retryable(%d) = %v", code, !want)
		}
	}
}

func TestMalformedJSON(t *testing.T) {
	for _, body := range []string{`{"ok": tru`, `<html>502 Bad Gateway</html>`, `{"ok": "yes"}`, ``} {
		s, url := serve(t, status(200, nil, body), ok)
		var rec recorder
		c := &Client{}
		rec.install(c)
		var out answer
		err := c.Do(context.Background(), Request{URL: url}, &out)
		if err == nil || !strings.Contains(err.Error(), "not the JSON expected") {
			t.Errorf("body %q: error %v, want a decoding error", body, err)
		}
		if s.hits() != 1 {
			t.Errorf("body %q: %d requests, want 1", body, s.hits())
		}
	}
}

func TestContextCancelStopsWaiting(t *testing.T) {
	arrived := make(chan struct{}, 10)
	_, url := serve(t, func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		w.Header().Set("Retry-After", "3600")
		w.WriteHeader(429)
	})
	c := &Client{MaxDelay: 2 * time.Hour} // real sleeping: the wait must end by cancellation
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Do(ctx, Request{URL: url}, nil) }()
	<-arrived
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("error %v, want context.Canceled", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Do still waiting for Retry-After after its context was canceled")
	}

	// Canceled before the first attempt: no retry loop either.
	var rec recorder
	c2 := &Client{}
	rec.install(c2)
	if err := c2.Do(ctx, Request{URL: url}, nil); !errors.Is(err, context.Canceled) || len(rec.got()) != 0 {
		t.Errorf("error %v after %d waits, want context.Canceled at once", err, len(rec.got()))
	}
}

func TestSecretsRedacted(t *testing.T) {
	const key = "sk-test-0123456789abcdefSECRET"
	echo := func(code int) func(http.ResponseWriter, *http.Request) {
		return func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(code)
			fmt.Fprintf(w, `{"error":"bad key %s", "header":%q}`, key, r.Header.Get("Authorization"))
		}
	}
	// The key straddles the 300-byte snippet cut: redacting after cutting
	// would leave its first half.
	straddle := status(400, nil, strings.Repeat("x", 280)+" "+key+" tail")
	for name, step := range map[string]func(http.ResponseWriter, *http.Request){
		"401":       echo(401),
		"500s":      echo(500),
		"200 bad":   func(w http.ResponseWriter, r *http.Request) { fmt.Fprintf(w, `{"ok": %q`, key) },
		"200 typed": func(w http.ResponseWriter, r *http.Request) { fmt.Fprintf(w, `{"ok": %q}`, key) },
		"straddle":  straddle,
	} {
		_, url := serve(t, step)
		var rec recorder
		var notes []string
		c := &Client{MaxAttempts: 2, Secrets: []string{key}, Notify: func(_ int, _ time.Duration, err error) { notes = append(notes, err.Error()) }}
		rec.install(c)
		var out answer
		err := c.Do(context.Background(), Request{URL: url, Header: Bearer(key)}, &out)
		if err == nil {
			t.Fatalf("%s: no error", name)
		}
		for _, msg := range append(notes, err.Error()) {
			if strings.Contains(msg, key[:10]) {
				t.Errorf("%s: message leaks the key: %s", name, msg)
			}
		}
		if name != "straddle" && !strings.Contains(err.Error(), "[REDACTED]") {
			t.Errorf("%s: message %q does not show where the key was", name, err)
		}
	}
}

func TestURLRedacted(t *testing.T) {
	const key = "qk-0123456789"
	_, url := serve(t, status(404, nil, "not here"))
	c := &Client{Secrets: []string{"pathkey-98765"}}
	err := c.Do(context.Background(), Request{URL: url + "/v1/pathkey-98765/embed?api_key=" + key + "&mode=x#frag"}, nil)
	msg := fmt.Sprint(err)
	if strings.Contains(msg, key) || strings.Contains(msg, "pathkey-98765") || strings.Contains(msg, "frag") {
		t.Errorf("message leaks the URL's secrets: %s", msg)
	}
	if !strings.Contains(msg, "/v1/[REDACTED]/embed?api_key=…&mode=…") {
		t.Errorf("message %q should keep the query's names", msg)
	}

	// Transport errors and unparsable URLs go through the same redaction.
	var rec recorder
	c2 := &Client{MaxAttempts: 2}
	rec.install(c2)
	for _, u := range []string{
		"http://user:hunter2-pass@127.0.0.1:1/x?key=" + key,
		"http://127.0.0.1:1/x?key=" + key + "\x7f",
		"ht tp://bad host/?key=" + key,
	} {
		err := c2.Do(context.Background(), Request{URL: u}, nil)
		if err == nil {
			t.Fatalf("%q: no error", u)
		}
		if strings.Contains(err.Error(), key) || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%q: message leaks a secret: %v", u, err)
		}
	}
}

func TestRedact(t *testing.T) {
	got := Redact("key abcd1234efgh and abcd1234 and ab", "abcd1234", "abcd1234efgh", "ab", "")
	if want := "key [REDACTED] and [REDACTED] and ab"; got != want {
		t.Errorf("Redact = %q, want %q", got, want)
	}
}

func TestSnippetKeepsRunesWhole(t *testing.T) {
	s := Snippet(strings.Repeat("é", 200))
	if !strings.HasSuffix(s, "…") || !utf8.ValidString(s) || len(s) > 300+len("…") {
		t.Errorf("snippet cut badly: len %d valid %v", len(s), utf8.ValidString(s))
	}
}

func TestBearerAndJoinURL(t *testing.T) {
	if h := Bearer(""); len(h) != 0 {
		t.Errorf("Bearer(\"\") = %v, want no header", h)
	}
	if got := Bearer("k1").Get("Authorization"); got != "Bearer k1" {
		t.Errorf("Bearer = %q", got)
	}
	for _, tc := range [][3]string{
		{"http://h/v1", "embeddings", "http://h/v1/embeddings"},
		{"http://h/v1/", "/embeddings", "http://h/v1/embeddings"},
		{"http://h", "embed", "http://h/embed"},
	} {
		if got := JoinURL(tc[0], tc[1]); got != tc[2] {
			t.Errorf("JoinURL(%q, %q) = %q, want %q", tc[0], tc[1], got, tc[2])
		}
	}
}

func TestHeadersSent(t *testing.T) {
	var got atomic.Value
	_, url := serve(t, func(w http.ResponseWriter, r *http.Request) {
		got.Store(r.Header.Clone())
		io.WriteString(w, `{}`)
	})
	c := &Client{}
	if err := c.Do(context.Background(), Request{URL: url, Header: Bearer("k-1234"), Body: 1}, nil); err != nil {
		t.Fatal(err)
	}
	h := got.Load().(http.Header)
	if h.Get("Authorization") != "Bearer k-1234" || h.Get("Content-Type") != "application/json" || h.Get("Accept") != "application/json" {
		t.Errorf("headers %v", h)
	}
}
