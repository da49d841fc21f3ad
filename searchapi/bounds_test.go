package searchapi_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/r2med/r2med/bm25"
	"github.com/r2med/r2med/cache"
	"github.com/r2med/r2med/embed/embedtest"
	"github.com/r2med/r2med/rerank"
	"github.com/r2med/r2med/searchapi"
)

// TestRequestBounds: a request may ask for at most MaxHits hits in all
// (k summed over its queries) and an answer of at most MaxResponse bytes
// (estimated before anything is searched), and snippets of at most
// MaxSnippet bytes; each refusal says what to ask instead.
func TestRequestBounds(t *testing.T) {
	task := demoTask(t)
	lim := searchapi.Limits{MaxHits: 500, MaxResponse: 100_000, MaxSnippet: 2000}
	r := start(t, one(bm25File(t, t.TempDir(), task, bm25.R2MED, nil)), searchapi.Options{Limits: lim}, searchapi.HandlerOptions{})
	u := r.url + "/v1/search"
	batch := func(n, k int, extra string) string {
		var qs []string
		for i := range n {
			qs = append(qs, fmt.Sprintf("%q", task.Queries[i%len(task.Queries)].Text))
		}
		return fmt.Sprintf(`{"queries": [%s], "k": %d%s}`, strings.Join(qs, ","), k, extra)
	}
	for _, c := range []struct {
		body string
		code int
		msg  string
	}{
		{batch(6, 100, `, "snippet": 0`), 400, "asks for 600 hits (k summed over its 6 queries); this service answers at most 500"},
		{batch(5, 100, `, "snippet": 0`), 200, ""},
		{batch(2, 100, `, "snippet": 2000`), 400, "the answer would take about 0.8 MiB"},
		{batch(1, 10, `, "snippet": 2001`), 400, "snippet must be between 0 and 2000"},
		{batch(1, 10, `, "snippet": 2000`), 200, ""},
	} {
		code, body := post(t, u, c.body)
		if code != c.code || !strings.Contains(body, c.msg) {
			t.Errorf("POST %.60s…: %d %.200s, want %d with %q", c.body, code, body, c.code, c.msg)
		}
	}
	if code, _, body := get(t, u+"?q=fever&k=10&snippet=2001"); code != 400 || !strings.Contains(body, "snippet must be") {
		t.Errorf("GET a long snippet: %d %s", code, body)
	}
}

// TestStreamedAnswer: an answer larger than what is held in memory is
// sent as it is made (chunked, no Content-Length), and is the same
// answer SearchBatch gives in process; a small one keeps its
// Content-Length.
func TestStreamedAnswer(t *testing.T) {
	task := demoTask(t)
	r := start(t, one(bm25File(t, t.TempDir(), task, bm25.R2MED, nil)), searchapi.Options{}, searchapi.HandlerOptions{})
	var body searchapi.SearchBody
	body.K = 80
	var reqs []searchapi.Request
	for _, q := range task.Queries {
		body.Queries = append(body.Queries, searchapi.QueryItem{ID: q.ID, Query: q.Text})
		reqs = append(reqs, searchapi.Request{ID: q.ID, Query: q.Text, K: 80})
	}
	data, _ := json.Marshal(body)
	resp, err := http.Post(r.url+"/v1/search", "application/json", strings.NewReader(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("%d %v", resp.StatusCode, err)
	}
	if resp.ContentLength != -1 || len(got) < 256<<10 {
		t.Errorf("an answer of %d bytes came with Content-Length %d; want it streamed", len(got), resp.ContentLength)
	}
	want, err := r.svc.SearchBatch(context.Background(), reqs)
	if err != nil {
		t.Fatal(err)
	}
	var br searchapi.BatchResult
	if err := json.Unmarshal(got, &br); err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(br.Results)
	b, _ := json.Marshal(want)
	if string(a) != string(b) {
		t.Error("the streamed answer differs from SearchBatch's")
	}
	resp, err = http.Get(r.url + "/v1/search?q=fever")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.ContentLength <= 0 {
		t.Errorf("a small answer without Content-Length (%d)", resp.ContentLength)
	}
}

// TestFailureMidStream: a batch whose answer has begun streaming when a
// later query fails is cut off — the client sees an incomplete body,
// never a shorter answer that parses — and /metrics counts the cut; one
// that fails before anything was sent gets its error status.
func TestFailureMidStream(t *testing.T) {
	task := demoTask(t)
	var n atomic.Int64
	failLate := rerank.ScorerFunc(func(ctx context.Context, q string, docs []string) ([]float64, error) {
		if n.Add(1) > 60 {
			return nil, fmt.Errorf("the reranker fell over")
		}
		out := make([]float64, len(docs))
		for i := range out {
			out[i] = float64(len(docs[i]))
		}
		return out, nil
	})
	r := start(t, one(bm25File(t, t.TempDir(), task, bm25.R2MED, nil)),
		searchapi.Options{Rerank: &searchapi.Rerank{Scorer: failLate, Name: "flaky"}, Limits: searchapi.Limits{Parallel: 1}}, searchapi.HandlerOptions{})
	var qs []string
	for i := range 80 {
		qs = append(qs, fmt.Sprintf("%q", task.Queries[i%len(task.Queries)].Text))
	}
	body := fmt.Sprintf(`{"queries": [%s], "k": 100, "rerank": true, "snippet": 300}`, strings.Join(qs, ","))
	resp, err := http.Post(r.url+"/v1/search", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	var br searchapi.BatchResult
	if resp.StatusCode != 200 || err == nil || json.Unmarshal(data, &br) == nil {
		t.Errorf("status %d, read error %v, %d bytes: want 200 and a body cut off", resp.StatusCode, err, len(data))
	}
	_, _, text := get(t, r.url+"/metrics")
	if metric(t, text, "r2med_search_answers_cut_total") != 1 {
		t.Errorf("cuts counted: %v", metric(t, text, "r2med_search_answers_cut_total"))
	}
	// Failing before the first send: an ordinary error.
	code, msg := post(t, r.url+"/v1/search", `{"queries": ["fever", "rash"], "rerank": true}`)
	if code != 500 || !strings.Contains(msg, "the reranker fell over") {
		t.Errorf("failure before streaming: %d %s", code, msg)
	}
}

// held is a reranker that blocks until released, to keep requests in
// flight.
func held() (rerank.Scorer, chan struct{}, chan struct{}) {
	entered, release := make(chan struct{}, 16), make(chan struct{})
	return rerank.ScorerFunc(func(ctx context.Context, q string, docs []string) ([]float64, error) {
		entered <- struct{}{}
		select {
		case <-release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return make([]float64, len(docs)), nil
	}), entered, release
}

// TestAdmission: the work under way is bounded (MaxInFlight, in the
// estimated bytes of the answers): a heavy request that does not fit
// while others run is refused with 503 and Retry-After, at once, and
// counted; a light one still fits; once the work is done the heavy one
// fits again.
func TestAdmission(t *testing.T) {
	task := demoTask(t)
	sc, entered, release := held()
	r := start(t, one(bm25File(t, t.TempDir(), task, bm25.R2MED, nil)),
		searchapi.Options{Rerank: &searchapi.Rerank{Scorer: sc, Name: "held"}, Limits: searchapi.Limits{MaxInFlight: 40_000}}, searchapi.HandlerOptions{})
	heavy := `{"query": "fever with rash", "k": 200, "snippet": 0, "rerank": true}`
	done := make(chan int)
	go func() {
		code, _ := post(t, r.url+"/v1/search", heavy)
		done <- code
	}()
	<-entered
	t0 := time.Now()
	req, _ := http.NewRequest("POST", r.url+"/v1/search", strings.NewReader(heavy))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	msg := message(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 503 || resp.Header.Get("Retry-After") != "1" || !strings.Contains(msg, "busy") || time.Since(t0) > 5*time.Second {
		t.Errorf("a second heavy request: %d Retry-After %q %s", resp.StatusCode, resp.Header.Get("Retry-After"), msg)
	}
	if code, _, body := get(t, r.url+"/v1/search?q=fever&k=3&snippet=0"); code != 200 {
		t.Errorf("a light request while a heavy one runs: %d %s", code, body)
	}
	close(release)
	if code := <-done; code != 200 {
		t.Errorf("the first heavy request: %d", code)
	}
	if code, body := post(t, r.url+"/v1/search", heavy); code != 200 {
		t.Errorf("a heavy request once the first is done: %d %s", code, body)
	}
	_, _, text := get(t, r.url+"/metrics")
	if got := metric(t, text, "r2med_search_refused_total", "reason", "busy"); got != 1 {
		t.Errorf("busy refusals counted: %v", got)
	}
}

// TestStrictRequests: POST bodies must be declared JSON, be UTF-8
// without lone surrogate escapes (as GET's query strings must), and give
// each key once; k, rerank_depth, the fusion's k and depth written out as
// 0 are refused, not read as their defaults.
func TestStrictRequests(t *testing.T) {
	task := demoTask(t)
	r := start(t, one(bm25File(t, t.TempDir(), task, bm25.R2MED, nil)), searchapi.Options{}, searchapi.HandlerOptions{})
	u := r.url + "/v1/search"
	for _, c := range []struct {
		body, ctype string
		code        int
		msg         string
	}{
		{`{"query": "fever"}`, "text/plain", 415, "Content-Type: application/json"},
		{`{"query": "fever"}`, "application/x-www-form-urlencoded", 415, "Content-Type: application/json"},
		{`{"query": "fever"}`, "application/json; charset=utf-8", 200, ""},
		{"{\"query\": \"fe\xffver\"}", "application/json", 400, "invalid UTF-8"},
		{`{"query": "fe\ud800ver"}`, "application/json", 400, "invalid surrogate pair"},
		{`{"query": "fe\udc00ver"}`, "application/json", 400, "invalid surrogate pair"},
		{`{"query": "smile \ud83d\ude00"}`, "application/json", 200, ""},
		{`{"query": "a \\ud800 b"}`, "application/json", 200, ""}, // an escaped backslash: plain text
		{`{"query": "fever", "k": 3, "k": 1000}`, "application/json", 400, `duplicate object member name "k"`},
		{`{"queries": [{"id": "a", "query": "x", "id": "b"}]}`, "application/json", 400, `duplicate object member name "id" within "/queries/0"`},
		{`{"query": "fever", "k": 0}`, "application/json", 400, "k must be between 1 and 1000, got 0"},
		{`{"query": "fever", "rerank_depth": 0}`, "application/json", 400, "rerank_depth must be at least 1, got 0"},
		{`{"query": "fever", "fuse": {"k": 0}}`, "application/json", 400, "RRF k must be above 0, got 0"},
		{`{"query": "fever", "fuse": {"method": "rrf", "depth": 0}}`, "application/json", 400, "fusion depth must be above 0, got 0"},
		{`{"query": "fever", "fuse": {"method": "rrf", "k": 60}}`, "application/json", 200, ""},
		// JSON is UTF-8 (RFC 8259): a body declared in another charset
		// was read as UTF-8 all the same.
		{"{\"query\": \"fi\xe8vre\"}", "application/json; charset=iso-8859-1", 415, "charset=iso-8859-1"},
		{`{"query": "fever"}`, "application/json; charset=UTF-8", 200, ""},
	} {
		code, body := post(t, u, c.body, "Content-Type", c.ctype)
		if code != c.code || !strings.Contains(body, c.msg) {
			t.Errorf("POST %s %s: %d %s, want %d with %q", c.ctype, c.body, code, body, c.code, c.msg)
		}
	}
	// A compressed body is refused as such, where it was answered
	// "invalid character '\x1f' at start of value".
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(`{"query": "fever"}`))
	zw.Close()
	if code, body := post(t, u, gz.String(), "Content-Encoding", "gzip"); code != 415 || !strings.Contains(body, "Content-Encoding: gzip") {
		t.Errorf("POST gzip: %d %s, want 415 naming the encoding", code, body)
	}
	if code, body := post(t, u, `{"query": "fever"}`, "Content-Encoding", "identity"); code != 200 {
		t.Errorf("POST identity: %d %s", code, body)
	}
	for _, q := range []string{"k=0", "rerank_depth=0", "rrf_k=0", "fuse_depth=0"} {
		if code, _, body := get(t, u+"?q=fever&"+q); code != 400 || !strings.Contains(body, "got 0") {
			t.Errorf("GET %s: %d %s", q, code, body)
		}
	}
}

// TestCrossSiteModelCalls: a request that would call a model (here a
// reranker; expansions and query embeddings alike) is refused when a
// browser marks it as coming from another site's page, over GET and
// POST; the same request from a program or the service's own origin is
// answered, and so is a cross-site one that calls no model.
func TestCrossSiteModelCalls(t *testing.T) {
	task := demoTask(t)
	var calls atomic.Int64
	sc := rerank.ScorerFunc(func(ctx context.Context, q string, docs []string) ([]float64, error) {
		calls.Add(1)
		return make([]float64, len(docs)), nil
	})
	r := start(t, one(bm25File(t, t.TempDir(), task, bm25.R2MED, nil)), searchapi.Options{Rerank: &searchapi.Rerank{Scorer: sc, Name: "paid"}}, searchapi.HandlerOptions{})
	u := r.url + "/v1/search"
	for _, h := range [][]string{{"Sec-Fetch-Site", "cross-site"}, {"Origin", "https://evil.example"}, {"Sec-Fetch-Site", "same-site"}} {
		if code, _, msg := get(t, u+"?q=fever&rerank=true", h...); code != 403 || !strings.Contains(msg, "may not call a model") {
			t.Errorf("GET %v: %d %s", h, code, msg)
		}
		if code, msg := post(t, u, `{"query": "fever", "rerank": true}`, h...); code != 403 {
			t.Errorf("POST %v: %d %s", h, code, msg)
		}
		if code, _, msg := get(t, u+"?q=fever", h...); code != 200 {
			t.Errorf("GET %v without a model: %d %s", h, code, msg)
		}
	}
	if calls.Load() != 0 {
		t.Errorf("cross-site requests called the reranker %d times", calls.Load())
	}
	for _, h := range [][]string{nil, {"Sec-Fetch-Site", "same-origin"}, {"Origin", r.url}} {
		if code, _, msg := get(t, u+"?q=fever&rerank=true", h...); code != 200 {
			t.Errorf("GET %v: %d %s", h, code, msg)
		}
	}
}

// TestMetricsClientAbortsAndEmbeddings: a request whose client hangs up
// is counted under 499, not as the service's 503; query embeddings taken
// from the cache and computed are counted.
func TestMetricsClientAbortsAndEmbeddings(t *testing.T) {
	task := demoTask(t)
	sc, entered, release := held()
	defer close(release)
	srv := embedtest.NewServer(t, embedtest.Options{Dim: 16})
	store, err := cache.Open(t.TempDir(), cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	dir := t.TempDir()
	files := []searchapi.IndexFile{{Name: "x", Path: denseFile(t, dir, task, standIn(srv), nil, true)}}
	opt := searchapi.Options{Rerank: &searchapi.Rerank{Scorer: sc, Name: "held"}, Dense: searchapi.DenseOptions{BaseURLs: []string{srv.URL}}}
	opt.Env.Cache = store
	r := start(t, files, opt, searchapi.HandlerOptions{})

	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", r.url+"/v1/search?q=fever&rerank=true", nil)
	go func() {
		<-entered
		cancel() // the client hangs up while the reranker holds the request
	}()
	if _, err := http.DefaultClient.Do(req); err == nil {
		t.Fatal("the cancelled request was answered")
	}
	q := url.QueryEscape("crushing chest pain")
	for range 3 {
		if code, _, msg := get(t, r.url+"/v1/search?retriever=x:dense&q="+q); code != 200 {
			t.Fatalf("dense: %d %s", code, msg)
		}
	}
	var text string
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		_, _, text = get(t, r.url+"/metrics")
		if metric(t, text, "r2med_search_http_requests_total", "code", "499", "route", "GET /v1/search") == 1 || time.Now().After(deadline) {
			break
		}
	}
	if got := metric(t, text, "r2med_search_http_requests_total", "code", "499", "route", "GET /v1/search"); got != 1 {
		t.Errorf("client aborts counted under 499: %v\n%s", got, grepLines(text, "requests_total"))
	}
	if got := metric(t, text, "r2med_search_http_requests_total", "code", "503", "route", "GET /v1/search"); got != 0 {
		t.Errorf("a client abort counted as 503")
	}
	if h, m := metric(t, text, "r2med_search_cache_hits_total", "kind", "embed"), metric(t, text, "r2med_search_cache_misses_total", "kind", "embed"); h != 2 || m != 1 {
		t.Errorf("embedding cache: %v hits, %v misses; want 2 and 1\n%s", h, m, grepLines(text, "cache_"))
	}
}

func grepLines(text, sub string) string {
	var out []string
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		if strings.Contains(sc.Text(), sub) && !strings.HasPrefix(sc.Text(), "#") {
			out = append(out, sc.Text())
		}
	}
	return strings.Join(out, "\n")
}

// TestSearchSlots: queries are searched at most one per core at once
// over the whole service (cpuSlots): with every slot taken, a lexical
// query waits, leaves the queue when its context ends (the error is the
// context's), and is answered once a slot frees; a query that calls a
// model takes no slot, so it is not held up by those that search.
func TestSearchSlots(t *testing.T) {
	task := demoTask(t)
	sc, entered, releaseScorer := held()
	r := start(t, one(bm25File(t, t.TempDir(), task, bm25.R2MED, nil)),
		searchapi.Options{Rerank: &searchapi.Rerank{Scorer: sc, Name: "held"}}, searchapi.HandlerOptions{})
	release := r.svc.HoldSlots()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	t0 := time.Now()
	res, err := r.svc.Search(ctx, searchapi.Request{Query: "fever with rash"})
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(t0) > 5*time.Second {
		t.Fatalf("a query while every slot is taken: answered %v, error %v after %v; want it to wait, then its context's error", res != nil, err, time.Since(t0))
	}
	reranked := make(chan error, 1)
	go func() {
		_, err := r.svc.Search(context.Background(), searchapi.Request{Query: "fever with rash", Rerank: true})
		reranked <- err
	}()
	select {
	case <-entered: // the reranked query searched and reached its model
	case <-time.After(10 * time.Second):
		t.Fatal("a query that calls a model waited for a search slot")
	}
	close(releaseScorer)
	if err := <-reranked; err != nil {
		t.Fatal(err)
	}
	done := make(chan int, 1)
	go func() {
		code, _ := post(t, r.url+"/v1/search", `{"query": "fever with rash", "k": 3}`)
		done <- code
	}()
	select {
	case code := <-done:
		t.Fatalf("a query answered (%d) while every slot is taken", code)
	case <-time.After(200 * time.Millisecond):
	}
	release()
	if code := <-done; code != 200 {
		t.Errorf("the waiting query once a slot freed: %d", code)
	}
	batch, err := r.svc.SearchBatch(context.Background(), []searchapi.Request{{Query: "fever"}, {Query: "rash"}, {Query: "cough"}, {Query: "headache"}})
	if err != nil || len(batch) != 4 {
		t.Errorf("a batch after: %d results, %v", len(batch), err)
	}
}
