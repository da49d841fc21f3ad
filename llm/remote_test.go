package llm

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/r2med/r2med/cache"
	"github.com/r2med/r2med/internal/httpx"
	"github.com/r2med/r2med/usage"
)

// Usage: the server's counts when it sends them, an estimate (named)
// when it does not; wall time always; cached answers keep what they cost.
func TestUsageMetered(t *testing.T) {
	s := newChatServer(t, func(n int, body map[string]any, w http.ResponseWriter) {
		if n == 2 { // no usage in this answer
			fmt.Fprint(w, `{"choices":[{"message":{"content":"12345678"},"finish_reason":"stop"}]}`)
			return
		}
		echo(n, body, w)
	})
	m := &usage.Meter{}
	store := &MemoryStore{}
	c := newClient(t, s, Options{Cache: store, Meter: m})
	a, err := c.Chat(context.Background(), Request{Messages: []Message{User("q1")}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.Chat(context.Background(), Request{Messages: []Message{User("abcdefgh")}})
	if err != nil {
		t.Fatal(err)
	}
	if a.Usage.PromptTokens != 11 || a.Usage.Estimated != "" || a.Usage.Seconds <= 0 {
		t.Errorf("server usage %+v", a.Usage)
	}
	if u := b.Usage; u.PromptTokens != 2 || u.CompletionTokens != 2 || u.TotalTokens != 4 || u.Estimated != usage.Estimator || u.Seconds <= 0 {
		t.Errorf("estimated usage %+v", u)
	}
	// A rerun: cached, with the usage they had.
	m2 := &usage.Meter{}
	c2 := newClient(t, s, Options{Cache: store, Meter: m2})
	for _, q := range []string{"q1", "abcdefgh"} {
		if r, err := c2.Chat(context.Background(), Request{Messages: []Message{User(q)}}); err != nil || !r.Cached {
			t.Fatalf("rerun %q: %+v %v", q, r, err)
		}
	}
	l1, l2 := m.Lines(), m2.Lines()
	if len(l1) != 1 || l1[0].Kind != Kind || l1[0].Model != "test-model" || l1[0].New.Calls != 2 || l1[0].New.PromptTokens != 13 || l1[0].New.CompletionTokens != 9 || l1[0].New.EstimatedCalls != 1 {
		t.Errorf("first run %+v", l1)
	}
	if len(l2) != 1 || l2[0].New.Calls != 0 || l2[0].Cached != l1[0].New {
		t.Errorf("rerun %+v, want cached = the first run's new %+v", l2, l1[0].New)
	}
}

// Entries cached before usage was recorded read, with an estimate.
func TestOldCacheEntriesRead(t *testing.T) {
	store := &MemoryStore{}
	s := newChatServer(t, echo)
	c := newClient(t, s, Options{Cache: store})
	req := Request{Messages: []Message{User("question text")}}
	k, _ := c.Key(req)
	store.PutMany(cache.Bucket(Kind, "test-model"), [][]byte{k}, [][]byte{[]byte(`{"content":"old answer","usage":{"prompt_tokens":0,"completion_tokens":0,"total_tokens":0}}`)})
	r, err := c.Chat(context.Background(), req)
	if err != nil || !r.Cached || r.Content != "old answer" || r.Usage.Estimated != usage.Estimator || r.Usage.PromptTokens != usage.EstimateTokens("question text") {
		t.Errorf("%+v %v", r, err)
	}
	if s.calls.Load() != 0 {
		t.Error("an old entry was asked again")
	}
}

// Replay answers from the cache and refuses anything else with zero
// requests.
func TestReplay(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		t.Error("replay contacted the server")
	}))
	defer srv.Close()
	store := &MemoryStore{}
	live := newClient(t, newChatServer(t, echo), Options{Cache: store})
	known := Request{Messages: []Message{User("known")}}
	want, err := live.Chat(context.Background(), known)
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(Options{BaseURL: srv.URL + "/v1", Model: "test-model", Cache: store, Replay: true})
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.Chat(context.Background(), known)
	if err != nil || got.Content != want.Content || !got.Cached {
		t.Fatalf("replayed %+v %v", got, err)
	}
	_, err = c.Chat(context.Background(), Request{Messages: []Message{User("unknown")}})
	if !errors.Is(err, ErrReplay) || !strings.Contains(err.Error(), "not in the cache") {
		t.Errorf("err %v", err)
	}
	res, err := c.GenerateAll(context.Background(), []Request{known, {Messages: []Message{User("other")}}}, nil)
	if err != nil || res[0].Err != nil || !errors.Is(res[1].Err, ErrReplay) {
		t.Errorf("GenerateAll in replay: %+v %v", res, err)
	}
	if _, err := New(Options{BaseURL: srv.URL, Replay: true}); err == nil || !strings.Contains(err.Error(), "needs the cache") {
		t.Errorf("replay without a cache: %v", err)
	}
}

// A key (or a base URL's password) that the model echoes is cut out of
// the answer before it is returned or cached.
func TestEchoedKeyRedactedBeforeCaching(t *testing.T) {
	const key = "sk-echo-me-0123456789"
	const pass = "url-pass-98765"
	s := newChatServer(t, func(_ int, _ map[string]any, w http.ResponseWriter) {
		answer(w, map[string]any{"content": "your key is " + key + " and " + pass, "reasoning_content": "I saw " + key})
	})
	store := &MemoryStore{}
	base := strings.Replace(s.URL, "http://", "http://user:"+pass+"@", 1) + "/v1"
	c, err := New(Options{BaseURL: base, APIKey: key, Model: "m", Cache: store, HTTP: fastRetry()})
	if err != nil {
		t.Fatal(err)
	}
	r, err := c.Chat(context.Background(), Request{Messages: []Message{User("q")}})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(r.Content+r.Reasoning, key) || strings.Contains(r.Content, pass) || !strings.Contains(r.Content, "[REDACTED]") {
		t.Errorf("answer %+v", r)
	}
	for k, v := range store.m {
		if strings.Contains(string(v), key) || strings.Contains(string(v), pass) {
			t.Errorf("cache entry %q holds a secret: %s", k, v)
		}
	}
	d := fmt.Sprint(c.Describe(Request{}))
	if strings.Contains(d, pass) || strings.Contains(d, "user:") {
		t.Errorf("Describe shows the URL's credentials: %s", d)
	}
}

// Credentials in a base URL appear in no error.
func TestBaseURLCredentialsNotInErrors(t *testing.T) {
	const pass = "hunter2-secret"
	s := newChatServer(t, func(_ int, _ map[string]any, w http.ResponseWriter) {
		fmt.Fprint(w, `{"choices":[]}`)
	})
	base := strings.Replace(s.URL, "http://", "http://admin:"+pass+"@", 1) + "/v1"
	c, err := New(Options{BaseURL: base, Model: "m", HTTP: fastRetry()})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Chat(context.Background(), Request{Messages: []Message{User("q")}})
	if err == nil || strings.Contains(err.Error(), pass) || !strings.Contains(err.Error(), "no choices") {
		t.Errorf("err %v", err)
	}
	_, err = New(Options{BaseURL: "ftp://admin:" + pass + "@host/v1"})
	if err == nil || strings.Contains(err.Error(), pass) {
		t.Errorf("bad URL err %v", err)
	}
}

// An answer longer than max_tokens allows is refused while it is read,
// and not cached; one within the bound reads.
func TestAnswerBoundedByMaxTokens(t *testing.T) {
	huge := newChatServer(t, func(_ int, _ map[string]any, w http.ResponseWriter) {
		answer(w, map[string]any{"content": strings.Repeat("word ", 400_000)})
	})
	// A 2 MB answer takes seconds to write and read on a loaded machine
	// under the race detector, past fastRetry's 2 s for an attempt; the
	// bound, not the timeout, is what this test is about.
	patient := func() *httpx.Client {
		h := fastRetry()
		h.Timeout = time.Minute
		return h
	}
	store := &MemoryStore{}
	_, err := newClient(t, huge, Options{Cache: store, HTTP: patient()}).Chat(context.Background(), Request{Messages: []Message{User("q")}, MaxTokens: 10})
	if !errors.Is(err, httpx.ErrTooLarge) || store.Len() != 0 {
		t.Errorf("2 MB answer for max_tokens 10: %v, %d cached", err, store.Len())
	}
	if r, err := newClient(t, huge, Options{HTTP: patient()}).Chat(context.Background(), Request{Messages: []Message{User("q")}, MaxTokens: 800_000}); err != nil || len(r.Content) < 2_000_000-1 {
		t.Errorf("within the bound: %v", err)
	}
}

// GenerateAll spreads its requests over a fleet, Concurrency per server.
func TestGenerateAllOverFleet(t *testing.T) {
	var servers []*chatServer
	var in, peak atomic.Int64
	for range 3 {
		servers = append(servers, newChatServer(t, func(n int, body map[string]any, w http.ResponseWriter) {
			x := in.Add(1)
			defer in.Add(-1)
			for p := peak.Load(); x > p && !peak.CompareAndSwap(p, x); p = peak.Load() {
			}
			// Answers take a moment, so every server's slots fill; an
			// instant answer lets one server take most requests, which is
			// right for the fleet but says nothing about its spreading.
			time.Sleep(5 * time.Millisecond)
			echo(n, body, w)
		}))
	}
	c, err := New(Options{BaseURL: servers[0].URL + "/v1", BaseURLs: []string{servers[1].URL + "/v1", servers[2].URL + "/v1"},
		Model: "m", Concurrency: 2, Fleet: httpx.FleetOptions{PerEndpoint: 2}, HTTP: fastRetry()})
	if err != nil {
		t.Fatal(err)
	}
	var reqs []Request
	for i := range 60 {
		reqs = append(reqs, Request{Messages: []Message{User(fmt.Sprint("q", i))}})
	}
	res, err := c.GenerateAll(context.Background(), reqs, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res {
		if r.Err != nil || r.Content != fmt.Sprint("answer to q", i) {
			t.Fatalf("result %d: %+v", i, r)
		}
	}
	for i, s := range servers {
		if s.calls.Load() < 10 {
			t.Errorf("server %d got %d of 60 requests", i, s.calls.Load())
		}
	}
	if peak.Load() > 6 {
		t.Errorf("%d requests at once; 3 servers × 2 is the bound", peak.Load())
	}
	d := c.Describe(Request{})
	if names, ok := d["base_urls"].([]string); !ok || len(names) != 3 {
		t.Errorf("Describe %v lacks the fleet", d)
	}
}
