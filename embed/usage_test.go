package embed

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/r2med/r2med/cache"
	"github.com/r2med/r2med/embed/embedtest"
	"github.com/r2med/r2med/internal/httpx"
	"github.com/r2med/r2med/usage"
)

// Each text's usage is stored with its vector: a rerun reports the tokens
// and seconds the text cost when it was embedded, as cached, and no new
// cost. Entries written before usage was stored still read, their tokens
// estimated.
func TestCacheKeepsUsage(t *testing.T) {
	srv := embedtest.NewServer(t, embedtest.Options{Dim: 4})
	clearEmbedEnv(t)
	e, err := NewOpenAI(OpenAIOptions{BaseURL: srv.URL, Model: "m", HTTPOptions: HTTPOptions{BatchSize: 2}})
	if err != nil {
		t.Fatal(err)
	}
	store := openStore(t, t.TempDir())
	id := Identity{Model: "m", Backend: "openai"}
	old := "written by an older r2med"
	if err := store.PutMany(cache.Bucket(CacheKind, "m"), [][]byte{id.Key(Document, old)}, [][]byte{encodeVector(embedtest.Vector(old, 4))}); err != nil {
		t.Fatal(err)
	}
	in := []string{"alpha beta", "gamma delta epsilon", "zeta", old}
	m1 := &usage.Meter{}
	c := &Cache{Embedder: e, Store: store, ID: id, Meter: m1}
	got, err := c.Embed(context.Background(), Document, in)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range in {
		if !slices.Equal(got[i], embedtest.Vector(s, 4)) {
			t.Fatalf("vector %d wrong", i)
		}
	}
	server := 0
	for _, s := range in[:3] {
		server += embedtest.Tokens(s)
	}
	l := m1.Lines()
	if len(l) != 1 || l[0].Kind != CacheKind || l[0].Model != "m" {
		t.Fatalf("lines %+v", l)
	}
	if n := l[0].New; n.Calls != 3 || n.PromptTokens != int64(server) || n.EstimatedCalls != 0 || n.Seconds <= 0 {
		t.Errorf("new %+v, want 3 texts, the server's %d tokens, some seconds", n, server)
	}
	if cd := l[0].Cached; cd.Calls != 1 || cd.PromptTokens != int64(usage.EstimateTokens(old)) || cd.EstimatedCalls != 1 {
		t.Errorf("cached %+v, want the old entry with estimated tokens", cd)
	}

	m2 := &usage.Meter{}
	c2 := &Cache{Embedder: Func(func(context.Context, Input, []string) ([][]float32, error) {
		t.Fatal("the rerun called the backend")
		return nil, nil
	}), Store: store, ID: id, Meter: m2}
	if _, err := c2.Embed(context.Background(), Document, in); err != nil {
		t.Fatal(err)
	}
	l2 := m2.Lines()
	if l2[0].New.Calls != 0 || l2[0].Cached.Calls != 4 || l2[0].Cached.PromptTokens != int64(server+usage.EstimateTokens(old)) {
		t.Errorf("rerun %+v", l2[0])
	}
	if d := l2[0].Cached.Seconds - l[0].New.Seconds; d > 1e-5 || d < -1e-5 {
		t.Errorf("cached seconds %v, want the original %v", l2[0].Cached.Seconds, l[0].New.Seconds)
	}
}

// An Embedder that reports no usage (a local model) is metered by
// estimate, and says so.
func TestCacheEstimatesUsage(t *testing.T) {
	m := &usage.Meter{}
	c := &Cache{Embedder: &counting{dim: 3}, ID: testID, Meter: m}
	in := []string{"12345678", "1234"}
	if _, err := c.Embed(context.Background(), Query, in); err != nil {
		t.Fatal(err)
	}
	n := m.Lines()[0].New
	if n.Calls != 2 || n.PromptTokens != 3 || n.EstimatedCalls != 2 {
		t.Errorf("new %+v, want 2 calls of 2+1 estimated tokens", n)
	}
	if s := m.Summary(0, nil); s.Estimated != usage.Estimator {
		t.Errorf("summary names estimator %q", s.Estimated)
	}
}

// Replay answers from the cache and refuses anything else without a
// single request.
func TestCacheReplay(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		t.Error("replay contacted the server")
	}))
	defer srv.Close()
	clearEmbedEnv(t)
	e, err := NewOpenAI(OpenAIOptions{BaseURL: srv.URL, Model: "m", HTTPOptions: HTTPOptions{Replay: true}})
	if err != nil {
		t.Fatal(err)
	}
	store := openStore(t, t.TempDir())
	id := Identity{Model: "m", Backend: "openai"}
	store.PutMany(cache.Bucket(CacheKind, "m"), [][]byte{id.Key(Query, "known")}, [][]byte{encodeEntry([]float32{1, 2}, usage.Usage{PromptTokens: 1}, truncUnknown)})
	c := &Cache{Embedder: e, Store: store, ID: id, Replay: true}
	got, err := c.Embed(context.Background(), Query, []string{"known"})
	if err != nil || !slices.Equal(got[0], []float32{1, 2}) {
		t.Fatalf("cached text in replay: %v %v", got, err)
	}
	_, err = c.Embed(context.Background(), Query, []string{"known", "unknown text"})
	if !errors.Is(err, ErrReplay) || !strings.Contains(err.Error(), "1 of 2 texts are not in the cache") || !strings.Contains(err.Error(), `"unknown text"`) {
		t.Errorf("err %v", err)
	}
	// The backend refuses too, for callers without a Cache.
	_, err = e.Embed(context.Background(), Query, []string{"x"})
	if !errors.Is(err, httpx.ErrReplay) {
		t.Errorf("backend in replay: %v", err)
	}
}

// The share of each text adds up to the request's count exactly.
func TestApportion(t *testing.T) {
	texts := []string{"aaaa", "aaaaaaaa", "a", ""}
	u := make([]usage.Usage, len(texts))
	apportion(u, texts, 10, 2)
	sum, secs := 0, 0.0
	for _, x := range u {
		sum += x.PromptTokens
		secs += x.Seconds
		if x.Estimated != "" {
			t.Error("server counts marked as estimated")
		}
	}
	if sum != 10 || secs < 1.999 || secs > 2.001 || u[1].PromptTokens < u[0].PromptTokens || u[3].PromptTokens != 0 {
		t.Errorf("shares %+v", u)
	}
	apportion(u, texts, -1, 1)
	if u[1].PromptTokens != 2 || u[1].Estimated != usage.Estimator {
		t.Errorf("estimate %+v", u[1])
	}
	apportion(u[3:], texts[3:], 5, 1) // nothing to weigh by: equal shares
	if u[3].PromptTokens != 5 {
		t.Errorf("empty text share %+v", u[3])
	}
}

// An answer over MaxBody is an error naming the cap, not a huge read.
func TestMaxBodyOption(t *testing.T) {
	f := newEmbedServer(t, false, 4096)
	e := newOpenAIFake(t, f, func(o *OpenAIOptions) { o.MaxBody = 10 << 10 })
	_, err := e.Embed(context.Background(), Query, []string{"a", "b"})
	if !errors.Is(err, httpx.ErrTooLarge) || !strings.Contains(err.Error(), "10 KiB") {
		t.Errorf("err %v", err)
	}
}

// A server that answers usage with zero tokens for texts that are not
// empty counted nothing: its texts are estimated, and said to be, as an
// answer without usage is (an LLM's usage without counts is alike).
func TestZeroUsageEstimated(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"data": [{"index": 0, "embedding": [1, 0, 0]}], "usage": {"prompt_tokens": 0, "total_tokens": 0}}`))
	}))
	defer srv.Close()
	clearEmbedEnv(t)
	e, err := NewOpenAI(OpenAIOptions{BaseURL: srv.URL, Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	m := &usage.Meter{}
	c := &Cache{Embedder: e, ID: Identity{Model: "m", Backend: "openai"}, Meter: m}
	if _, err := c.Embed(context.Background(), Query, []string{"twelve bytes"}); err != nil {
		t.Fatal(err)
	}
	if n := m.Lines()[0].New; n.Calls != 1 || n.PromptTokens != int64(usage.EstimateTokens("twelve bytes")) || n.EstimatedCalls != 1 {
		t.Errorf("new %+v, want one call of %d estimated tokens", n, usage.EstimateTokens("twelve bytes"))
	}
}
