package embed_test

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/r2med/r2med/cache"
	"github.com/r2med/r2med/embed"
	"github.com/r2med/r2med/embed/embedtest"
	"github.com/r2med/r2med/internal/httpx"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/trec"
	"github.com/r2med/r2med/usage"
	"github.com/r2med/r2med/vector"
)

// fleetTexts are a small corpus and its queries, with a repeated
// document, so the cache's dedup is part of what is checked.
func fleetTexts() (docs, queries []string) {
	for i := range 300 {
		docs = append(docs, fmt.Sprintf("document %d about organ %d and symptom %d", i, i%17, i%29))
	}
	docs = append(docs, docs[5])
	for i := range 25 {
		queries = append(queries, fmt.Sprintf("which organ causes symptom %d", i))
	}
	return docs, queries
}

// denseRun embeds docs and queries through e with a cache in a new
// directory, searches exactly, and returns the TREC run's bytes and the
// vectors' bytes.
func denseRun(t *testing.T, e embed.Embedder, store *cache.Store, meter *usage.Meter) (run, vecs []byte) {
	t.Helper()
	docs, queries := fleetTexts()
	c := embed.Cached(e, store, embed.Identity{Model: "stub", Backend: "openai"})
	c.Chunk = 40 // several chunks, so a kill lands mid-run
	c.Meter = meter
	ctx := context.Background()
	dv, err := c.Embed(ctx, embed.Document, docs)
	if err != nil {
		t.Fatal(err)
	}
	qv, err := c.Embed(ctx, embed.Query, queries)
	if err != nil {
		t.Fatal(err)
	}
	flat := vector.NewFlat(len(dv[0]), vector.Cosine)
	for i, v := range dv {
		if err := flat.Add(fmt.Sprintf("d%d", i), v); err != nil {
			t.Fatal(err)
		}
	}
	hits, err := flat.Search(qv, 10, vector.SearchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r := ir.Run{}
	for i, hs := range hits {
		for _, h := range hs {
			r[fmt.Sprintf("q%d", i)] = append(r[fmt.Sprintf("q%d", i)], ir.Hit{DocID: h.ID, Score: float64(h.Score)})
		}
	}
	var out bytes.Buffer
	if err := trec.WriteRun(&out, r, "dense"); err != nil {
		t.Fatal(err)
	}
	var vb bytes.Buffer
	for _, v := range append(dv, qv...) {
		fmt.Fprintln(&vb, v)
	}
	return out.Bytes(), vb.Bytes()
}

func openStore(t *testing.T) *cache.Store {
	t.Helper()
	s, err := cache.Open(t.TempDir(), cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func fleetEmbedder(t *testing.T, urls []string, notify func(string)) *embed.OpenAI {
	t.Helper()
	e, err := embed.NewOpenAI(embed.OpenAIOptions{
		BaseURLs: urls, Model: "stub",
		HTTPOptions: embed.HTTPOptions{
			BatchSize: 4, Concurrency: 2,
			BaseDelay: time.Millisecond, MaxDelay: 20 * time.Millisecond, MaxAttempts: 8, Timeout: 5 * time.Second,
			Fleet: httpx.FleetOptions{Cooldown: 50 * time.Millisecond, Notify: notify},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// Three servers, one killed mid-run and one answering 429s: the run
// completes on what remains, every text is embedded exactly once across
// the fleet, and the run and its vectors are byte-identical to those of a
// single server. A rerun asks no server anything.
func TestFleetSurvivesKilledAndRateLimitedServers(t *testing.T) {
	single := embedtest.NewServer(t, embedtest.Options{})
	wantRun, wantVecs := denseRun(t, fleetEmbedder(t, []string{single.URL}, nil), openStore(t), nil)

	healthy := embedtest.NewServer(t, embedtest.Options{Latency: time.Millisecond, MaxConcurrent: 2})
	dying := embedtest.NewServer(t, embedtest.Options{Latency: time.Millisecond})
	dying.KillAfter(6)
	limited := embedtest.NewServer(t, embedtest.Options{})
	limited.RateLimit(true)
	var events []string
	e := fleetEmbedder(t, []string{healthy.URL, dying.URL, limited.URL}, func(m string) { events = append(events, m) })
	store := openStore(t)
	meter := &usage.Meter{}
	gotRun, gotVecs := denseRun(t, e, store, meter)

	if !bytes.Equal(gotRun, wantRun) {
		t.Error("the fleet's run differs from the single server's")
	}
	if !bytes.Equal(gotVecs, wantVecs) {
		t.Error("the fleet's vectors differ from the single server's")
	}
	docs, queries := fleetTexts()
	distinct := map[string]bool{}
	for _, s := range append(docs, queries...) {
		distinct[s] = true
	}
	total := map[string]int{}
	for _, s := range []*embedtest.Server{healthy, dying, limited} {
		for text, n := range s.Embedded() {
			total[text] += n
		}
	}
	for text := range distinct {
		if total[text] != 1 {
			t.Errorf("%q embedded %d times across the fleet, want once", text, total[text])
		}
	}
	if len(total) != len(distinct) {
		t.Errorf("%d texts embedded, want %d", len(total), len(distinct))
	}
	if n := len(dying.Embedded()); n == 0 {
		t.Error("the server that died served nothing before dying; the test did not kill it mid-run")
	}
	if n := len(limited.Embedded()); n != 0 || limited.Requests() == 0 {
		t.Errorf("the rate-limited server answered %d texts in %d requests; want 0 texts and some requests", n, limited.Requests())
	}
	if healthy.MaxInFlight() > 2 {
		t.Errorf("the healthy server held %d requests at once; the per-server bound is 2", healthy.MaxInFlight())
	}
	stats := e.Fleet().Stats()
	if !stats[0].Healthy || stats[1].Healthy || stats[1].Failures == 0 {
		t.Errorf("fleet stats %+v: want the first healthy, the killed one out", stats)
	}
	if !slices.ContainsFunc(events, func(m string) bool { return bytes.Contains([]byte(m), []byte("taken out of the fleet")) }) {
		t.Errorf("no event said a server was taken out: %q", events)
	}
	// Usage: every distinct text once, with the server's token counts.
	lines := meter.Lines()
	if len(lines) != 1 || lines[0].New.Calls != int64(len(distinct)) || lines[0].New.EstimatedCalls != 0 {
		t.Fatalf("meter %+v, want %d new calls with the server's counts", lines, len(distinct))
	}
	wantTokens := 0
	for text := range distinct {
		wantTokens += embedtest.Tokens(text)
	}
	if lines[0].New.PromptTokens != int64(wantTokens) {
		t.Errorf("prompt tokens %d, want the servers' %d", lines[0].New.PromptTokens, wantTokens)
	}

	// The cache is the source of truth: a rerun sends nothing, even with
	// every server gone, and reports the original cost as cached.
	healthy.Kill()
	meter2 := &usage.Meter{}
	before := healthy.Requests() + dying.Requests() + limited.Requests()
	againRun, _ := denseRun(t, e, store, meter2)
	if !bytes.Equal(againRun, wantRun) {
		t.Error("the rerun from the cache differs")
	}
	if after := healthy.Requests() + dying.Requests() + limited.Requests(); after != before {
		t.Errorf("the rerun sent %d requests", after-before)
	}
	l2 := meter2.Lines()
	if len(l2) != 1 || l2[0].New.Calls != 0 || l2[0].Cached.PromptTokens != int64(wantTokens) {
		t.Errorf("rerun meter %+v: want no new calls and the original %d tokens as cached", l2, wantTokens)
	}
}

// Every server gone: the run fails with the last error, after its
// retries, rather than hanging.
func TestFleetAllServersDead(t *testing.T) {
	a := embedtest.NewServer(t, embedtest.Options{})
	b := embedtest.NewServer(t, embedtest.Options{})
	a.Kill()
	b.Kill()
	e := fleetEmbedder(t, []string{a.URL, b.URL}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err := e.Embed(ctx, embed.Document, []string{"x", "y"})
	if err == nil || ctx.Err() != nil {
		t.Fatalf("err %v (context %v); want a failure after the retries", err, ctx.Err())
	}
}

// BenchmarkFleet is embedding throughput with 1 and 3 loopback servers
// that each answer at most 2 requests at once and take 10 ms per request
// (a GPU server's fixed batch capacity): the fleet should scale nearly
// linearly.
func BenchmarkFleet(b *testing.B) {
	texts := make([]string, 384)
	for i := range texts {
		texts[i] = fmt.Sprintf("text %d of the benchmark corpus", i)
	}
	for _, n := range []int{1, 3} {
		b.Run(fmt.Sprintf("servers=%d", n), func(b *testing.B) {
			var urls []string
			for range n {
				urls = append(urls, embedtest.NewServer(b, embedtest.Options{Latency: 10 * time.Millisecond, MaxConcurrent: 2}).URL)
			}
			e, err := embed.NewOpenAI(embed.OpenAIOptions{BaseURLs: urls, Model: "stub",
				HTTPOptions: embed.HTTPOptions{BatchSize: 8, Concurrency: 2}})
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			b.ResetTimer()
			for b.Loop() {
				if _, err := e.Embed(ctx, embed.Document, texts); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*len(texts))/b.Elapsed().Seconds(), "texts/s")
		})
	}
}
