package searchapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/r2med/r2med/bm25"
	"github.com/r2med/r2med/fusion"
	"github.com/r2med/r2med/internal/httpserve"
	"github.com/r2med/r2med/rerank"
	"github.com/r2med/r2med/searchapi"
)

func post(t testing.TB, url, body string, header ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	return resp.StatusCode, message(resp.Body)
}

// message is an answer's text: the error message of a JSON error body.
func message(r io.Reader) string {
	b, _ := io.ReadAll(r)
	var e searchapi.ErrorBody
	if json.Unmarshal(b, &e) == nil && e.Error != "" {
		return e.Error
	}
	return string(b)
}

func get(t testing.TB, url string, header ...string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		if header[i] == "Host" {
			req.Host = header[i+1]
			continue
		}
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	return resp.StatusCode, resp.Header, message(resp.Body)
}

// TestLimits: what a request may ask is bounded, and each refusal says
// why with the right status: 413 for a body over the limit, 400 for k,
// batch size, rerank depth, snippet, unknown parameters, fields and
// retrievers, an empty or oversized query, and settings the service was
// not started with.
func TestLimits(t *testing.T) {
	task := demoTask(t)
	lim := searchapi.Limits{MaxK: 50, MaxBatch: 3, MaxBody: 2048, MaxQuery: 500, MaxSnippet: 1000}
	r := start(t, one(bm25File(t, t.TempDir(), task, bm25.R2MED, nil)), searchapi.Options{Limits: lim}, searchapi.HandlerOptions{})
	u := r.url + "/v1/search"
	big := `{"query": "` + strings.Repeat("fever ", 400) + `"}`
	for _, c := range []struct {
		body string
		code int
		msg  string
	}{
		{big, 413, "over 2048 bytes"},
		{`{"query": "fever", "k": 51}`, 400, "k must be between 1 and 50"},
		{`{"query": "fever", "k": -1}`, 400, "k must be between"},
		{`{"queries": ["a", "b", "c", "d"]}`, 400, "at most 3 per request"},
		{`{"queries": ["a", "b", "c"]}`, 200, ""},
		{`{"queries": ["a", {"id": "x", "query": ""}]}`, 400, "query 2: empty query"},
		{`{"query": "fever", "kk": 3}`, 400, `unknown field "kk"`},
		{`{"query": "fever", "retrievers": ["nope"]}`, 400, `unknown retriever "nope"`},
		{`{"query": "fever", "snippet": 1001}`, 400, "snippet must be between 0 and 1000"},
		{`{"query": "fever", "gar": "hyde"}`, 400, "no LLM for expansions"},
		{`{"query": "fever", "rerank": true}`, 400, "no reranker"},
		{`{"query": "` + strings.Repeat("x", 501) + `"}`, 400, "at most 500"},
		{`{"query": "a", "queries": ["b"]}`, 400, "not both"},
		{`{}`, 400, "no query"},
		{`{"query": "fever"} {"query": "again"}`, 400, "nothing after it"},
		{`not json`, 400, "request body"},
	} {
		code, body := post(t, u, c.body)
		if code != c.code || !strings.Contains(body, c.msg) {
			t.Errorf("POST %.60s: %d %s, want %d with %q", c.body, code, body, c.code, c.msg)
		}
	}
	for _, c := range []struct {
		query string
		code  int
		msg   string
	}{
		{"q=fever&k=51", 400, "k must be between 1 and 50"},
		{"q=fever&k=x", 400, "want a whole number"},
		{"q=fever&retreiver=bm25", 400, `unknown parameter "retreiver"`},
		{"q=fever&k=1&k=2", 400, "given 2 times"},
		{"k=3", 400, "no query"},
		{"q=fever&rerank=maybe", 400, "want true or false"},
		{"q=fever&retriever=" + r.svc.Retrievers()[0].Name, 200, ""},
		{"q=" + url.QueryEscape("\xff\xfe"), 400, "not valid UTF-8"},
		{"q=%zz", 400, "query string"},
	} {
		code, _, body := get(t, u+"?"+c.query)
		if code != c.code || !strings.Contains(body, c.msg) {
			t.Errorf("GET ?%s: %d %s, want %d with %q", c.query, code, body, c.code, c.msg)
		}
	}
	if code, h, _ := get(t, r.url+"/v1/nothing"); code != 404 || h.Get("Content-Type") != "application/json; charset=utf-8" {
		t.Errorf("an unknown route: %d %s", code, h.Get("Content-Type"))
	}
	if code, h, _ := get(t, r.url+"/v1/doc/x", "X", "y"); code != 404 || h.Get("Content-Security-Policy") == "" {
		t.Errorf("a missing document: %d", code)
	}
	req, _ := http.NewRequest(http.MethodDelete, u, nil)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 405 {
		t.Errorf("DELETE /v1/search: %v %v", resp.StatusCode, err)
	}
}

// TestTimeout: a request that takes longer than Limits.Timeout is cut
// with 504 and a message.
func TestTimeout(t *testing.T) {
	task := demoTask(t)
	slow := rerank.ScorerFunc(func(ctx context.Context, q string, docs []string) ([]float64, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	})
	r := start(t, one(bm25File(t, t.TempDir(), task, bm25.R2MED, nil)),
		searchapi.Options{Rerank: &searchapi.Rerank{Scorer: slow, Name: "slow"}, Limits: searchapi.Limits{Timeout: 200 * time.Millisecond}}, searchapi.HandlerOptions{})
	start := time.Now()
	code, body := post(t, r.url+"/v1/search", `{"query": "fever", "rerank": true}`)
	if code != 504 || !strings.Contains(body, "longer than this service allows") {
		t.Errorf("%d %s", code, body)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %v", d)
	}
}

// TestSecurity: requests must name this server in Host (421 otherwise),
// carry the key when the service has one (401 with a challenge
// otherwise; /healthz needs none), and every answer has the security
// headers.
func TestSecurity(t *testing.T) {
	task := demoTask(t)
	r := start(t, one(bm25File(t, t.TempDir(), task, bm25.R2MED, nil)), searchapi.Options{},
		searchapi.HandlerOptions{Key: "s3cret", AllowHosts: []string{"search.example.org"}})
	_, port, _ := net.SplitHostPort(r.addr)
	auth := []string{"Authorization", "Bearer s3cret"}
	for _, c := range []struct {
		path   string
		header []string
		code   int
	}{
		{"/v1/search?q=fever", nil, 401},
		{"/v1/search?q=fever", []string{"Authorization", "Bearer wrong"}, 401},
		{"/v1/search?q=fever", []string{"Authorization", "s3cret"}, 401},
		{"/v1/search?q=fever", auth, 200},
		{"/metrics", nil, 401},
		{"/openapi.json", nil, 401},
		{"/healthz", nil, 200},
		{"/v1/search?q=fever", append([]string{"Host", "evil.example.com:" + port}, auth...), 421},
		{"/healthz", []string{"Host", "evil.example.com"}, 421},
		{"/v1/search?q=fever", append([]string{"Host", "search.example.org:" + port}, auth...), 200},
		{"/v1/search?q=fever", append([]string{"Host", "localhost:" + port}, auth...), 200},
		{"/v1/search?q=fever", append([]string{"Host", "10.0.0.7:" + port}, auth...), 421},
	} {
		code, h, body := get(t, r.url+c.path, c.header...)
		if code != c.code {
			t.Errorf("GET %s %v: %d %s, want %d", c.path, c.header, code, body, c.code)
		}
		if code == 401 && !strings.HasPrefix(h.Get("WWW-Authenticate"), "Bearer") {
			t.Errorf("401 without a Bearer challenge: %v", h)
		}
		for _, name := range []string{"Content-Security-Policy", "X-Content-Type-Options", "X-Frame-Options", "Referrer-Policy"} {
			if h.Get(name) == "" {
				t.Errorf("GET %s: no %s header", c.path, name)
			}
		}
	}
	if code, body := post(t, r.url+"/v1/search", `{"query": "fever"}`); code != 401 {
		t.Errorf("POST without the key: %d %s", code, body)
	}
	if res, err := r.client.Search(context.Background(), searchapi.SearchBody{Query: new("fever")}); err != nil || len(res[0].Hits) == 0 {
		t.Errorf("the client with the key: %v", err)
	}
	bad := &searchapi.Client{BaseURL: r.url}
	if _, err := bad.Search(context.Background(), searchapi.SearchBody{Query: new("fever")}); statusOf(err) != 401 {
		t.Errorf("the client without the key: %v", err)
	}
}

// TestGracefulShutdown: when the server is told to stop (what SIGTERM
// does to serve-search), requests in flight finish with their answer,
// and new connections are refused.
func TestGracefulShutdown(t *testing.T) {
	task := demoTask(t)
	entered := make(chan struct{}, 8)
	release := make(chan struct{})
	held := rerank.ScorerFunc(func(ctx context.Context, q string, docs []string) ([]float64, error) {
		entered <- struct{}{}
		<-release
		out := make([]float64, len(docs))
		for i := range out {
			out[i] = float64(len(docs[i]))
		}
		return out, nil
	})
	svc, err := searchapi.Open(context.Background(), one(bm25File(t, t.TempDir(), task, bm25.R2MED, nil)),
		searchapi.Options{Rerank: &searchapi.Rerank{Scorer: held, Name: "held"}})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() {
		served <- httpserve.Serve(ctx, ln, svc.Handler(searchapi.HandlerOptions{Addr: ln.Addr().String()}), httpserve.Timeouts{Shutdown: 10 * time.Second})
	}()
	u := "http://" + ln.Addr().String() + "/v1/search"
	const inflight = 3
	var wg sync.WaitGroup
	codes := make([]int, inflight)
	for i := range inflight {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i], _ = post(t, u, fmt.Sprintf(`{"query": "fever %d", "rerank": true, "k": 3}`, i))
		}()
	}
	for range inflight {
		<-entered
	}
	stop() // SIGTERM
	// The listener closes as the shutdown begins; a loaded machine may
	// get there late, so wait for it (a connection accepted all along
	// is the failure).
	refused := false
	for deadline := time.Now().Add(10 * time.Second); !refused && time.Now().Before(deadline); {
		c, err := net.DialTimeout("tcp", ln.Addr().String(), time.Second)
		if refused = err != nil; !refused {
			c.Close()
			time.Sleep(10 * time.Millisecond)
		}
	}
	if !refused {
		t.Error("new connections were still accepted 10 s after the stop")
	}
	select {
	case err := <-served:
		t.Fatalf("the server stopped with requests in flight: %v", err)
	default:
	}
	close(release)
	wg.Wait()
	for i, c := range codes {
		if c != 200 {
			t.Errorf("request %d in flight got %d", i, c)
		}
	}
	if err := <-served; err != nil {
		t.Errorf("shutdown: %v", err)
	}
}

// metric reads one sample of the Prometheus text.
func metric(t testing.TB, text, name string, labels ...string) float64 {
	t.Helper()
	sel := name
	if len(labels) > 0 {
		var ls []string
		for i := 0; i+1 < len(labels); i += 2 {
			ls = append(ls, fmt.Sprintf("%s=%q", labels[i], labels[i+1]))
		}
		sel += "{" + strings.Join(ls, ",") + "}"
	}
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(sel) + ` (\S+)$`).FindStringSubmatch(text)
	if m == nil {
		return 0
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestMetrics: /metrics counts requests by route and status, queries
// (a batch counts each), observes latencies, and reports the process.
func TestMetrics(t *testing.T) {
	task := demoTask(t)
	r := start(t, one(bm25File(t, t.TempDir(), task, bm25.R2MED, nil)), searchapi.Options{}, searchapi.HandlerOptions{})
	for range 3 {
		get(t, r.url+"/v1/search?q=fever")
	}
	get(t, r.url+"/v1/search?q=fever&k=0.5")
	post(t, r.url+"/v1/search", `{"queries": ["fever", "rash", "cough"]}`)
	get(t, r.url+"/v1/nowhere")
	get(t, r.url+"/healthz", "Host", "evil.example.com")
	_, h, text := get(t, r.url+"/metrics")
	if !strings.HasPrefix(h.Get("Content-Type"), "text/plain") {
		t.Errorf("content type %q", h.Get("Content-Type"))
	}
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"r2med_search_http_requests_total", []string{"code", "200", "route", "GET /v1/search"}, 3},
		{"r2med_search_http_requests_total", []string{"code", "400", "route", "GET /v1/search"}, 1},
		{"r2med_search_http_requests_total", []string{"code", "200", "route", "POST /v1/search"}, 1},
		{"r2med_search_http_requests_total", []string{"code", "404", "route", "GET /"}, 1},
		{"r2med_search_http_requests_total", []string{"code", "421", "route", "unmatched"}, 1},
		{"r2med_search_queries_total", nil, 6},
		{"r2med_search_http_request_duration_seconds_count", []string{"route", "GET /v1/search"}, 4},
	} {
		if got := metric(t, text, c.name, c.labels...); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	if metric(t, text, "process_resident_memory_bytes") <= 0 {
		t.Error("no process_resident_memory_bytes")
	}
}

// TestDocAndRetrievers: GET /v1/doc/{id} returns a document whole, and
// /v1/retrievers lists each index part with its settings.
func TestDocAndRetrievers(t *testing.T) {
	task := demoTask(t)
	dir := t.TempDir()
	files := []searchapi.IndexFile{{Name: "bm25", Path: bm25File(t, dir, task, bm25.R2MED, nil)}, {Name: "lucene", Path: bm25File(t, dir, task, bm25.Lucene, nil)}}
	r := start(t, files, searchapi.Options{Default: []string{"lucene"}}, searchapi.HandlerOptions{})
	d := task.Corpus[3]
	var doc searchapi.Doc
	if code := getJSON(t, r.url+"/v1/doc/"+url.PathEscape(d.ID), &doc); code != 200 || doc.Text != d.Text || doc.ID != d.ID {
		t.Errorf("GET /v1/doc/%s: %d %+v", d.ID, code, doc)
	}
	if code := getJSON(t, r.url+"/v1/doc/"+url.PathEscape(d.ID)+"?retriever=nope", nil); code != 400 {
		t.Errorf("an unknown retriever: %d", code)
	}
	var rb searchapi.RetrieversBody
	getJSON(t, r.url+"/v1/retrievers", &rb)
	if len(rb.Retrievers) != 2 || rb.Retrievers[1].Settings["bm25_scheme"] != "lucene" || !rb.Retrievers[1].Default || rb.Retrievers[0].Default ||
		rb.Retrievers[0].Docs != len(task.Corpus) || rb.Retrievers[0].Task != task.Name {
		b, _ := json.Marshal(rb)
		t.Errorf("retrievers: %s", b)
	}
	var res searchapi.Result
	getJSON(t, r.url+"/v1/search?q=fever", &res)
	if res.System != "lucene" {
		t.Errorf("the default retriever answered as %q", res.System)
	}
	var health searchapi.Health
	if getJSON(t, r.url+"/healthz", &health); health.Status != "ok" || health.Retrievers != 2 {
		t.Errorf("health %+v", health)
	}
}

// TestOpenRefuses: indexes that cannot be served are refused when the
// service starts, naming the file and the problem.
func TestOpenRefuses(t *testing.T) {
	task := demoTask(t)
	dir := t.TempDir()
	good := bm25File(t, dir, task, bm25.R2MED, nil)
	nf := *task
	nf.Name = "other"
	nf.Corpus = task.Corpus[:10]
	other := bm25File(t, dir, &nf, bm25.R2MED, nil)
	corrupt := dir + "/corrupt.idx"
	data := readFile(t, good)
	data[len(data)/2] ^= 0xff
	writeFile(t, corrupt, data)
	for _, c := range []struct {
		files []searchapi.IndexFile
		opt   searchapi.Options
		msg   string
	}{
		{nil, searchapi.Options{}, "no index to serve"},
		{[]searchapi.IndexFile{{Name: "x", Path: dir + "/missing.idx"}}, searchapi.Options{}, "missing.idx"},
		{[]searchapi.IndexFile{{Name: "x", Path: corrupt}}, searchapi.Options{}, "corrupt.idx"},
		{[]searchapi.IndexFile{{Name: "a", Path: good}, {Name: "a", Path: other}}, searchapi.Options{}, `name "a" is taken`},
		{[]searchapi.IndexFile{{Name: "a", Path: good}}, searchapi.Options{Default: []string{"b"}}, `unknown retriever "b"`},
		{[]searchapi.IndexFile{{Name: "a", Path: good}, {Name: "b", Path: other}}, searchapi.Options{Default: []string{"a", "b"}}, "different corpora"},
		{[]searchapi.IndexFile{{Name: "a", Path: good}}, searchapi.Options{Fuse: fuseOf("nope")}, "unknown fusion method"},
	} {
		svc, err := searchapi.Open(context.Background(), c.files, c.opt)
		if err == nil {
			svc.Close()
			t.Errorf("%v: opened", c.files)
			continue
		}
		if !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%v: %v, want %q", c.files, err, c.msg)
		}
	}
}

func fuseOf(method string) fusion.Spec { return fusion.Spec{Method: method} }

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func writeFile(t testing.TB, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestParseIndexArgs(t *testing.T) {
	task := demoTask(t)
	dir := t.TempDir()
	a := bm25File(t, dir, task, bm25.R2MED, nil)
	b := bm25File(t, dir, task, bm25.Lucene, nil)
	got, err := searchapi.ParseIndexArgs([]string{"bm=" + a, dir})
	if err != nil {
		t.Fatal(err)
	}
	want := []searchapi.IndexFile{{Name: "bm", Path: a}, {Name: "demo-lucene", Path: b}, {Name: "demo-r2med", Path: a}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %v, want %v", got, want)
	}
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{dir + "/nothing.idx"}, "nothing.idx"},
		{[]string{a, a}, `both named "demo-r2med"`},
		{[]string{"a b=" + a}, `name "a b"`},
		{[]string{"x=" + dir}, "a directory serves each"},
		{[]string{t.TempDir()}, "holds no .idx files"},
		{[]string{"x="}, "give a file"},
	} {
		if _, err := searchapi.ParseIndexArgs(c.args); err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%v: %v, want %q", c.args, err, c.msg)
		}
	}
}

// TestAnswersAreEncodingJSON: the bytes of an answer, single or batch,
// with snippets or without, are what encoding/json (no HTML escaping)
// writes of the same results, as the service wrote before it encoded
// them by hand; queries with quotes, HTML, control characters and
// non-ASCII text are echoed alike.
func TestAnswersAreEncodingJSON(t *testing.T) {
	for _, task := range tasks(t) {
		r := start(t, one(bm25File(t, t.TempDir(), task, bm25.R2MED, nil)), searchapi.Options{}, searchapi.HandlerOptions{})
		qs := task.Queries
		if len(qs) > 40 {
			qs = qs[:40]
		}
		texts := []string{"\"chest\" <b>pain</b> & jaw\u2028\t\x01 café 東京 😀 \\ radiating"}
		for _, q := range qs {
			texts = append(texts, q.Text)
		}
		encode := func(res *searchapi.Result) []byte {
			var b strings.Builder
			enc := json.NewEncoder(&b)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(res); err != nil {
				t.Fatal(err)
			}
			return []byte(b.String())
		}
		for _, n := range []int{0, 40, 300} {
			var batch []searchapi.QueryItem
			want := []byte(`{"results":[`)
			for i, text := range texts {
				id := fmt.Sprintf("q%d", i)
				res, err := r.svc.Search(context.Background(), searchapi.Request{Query: text, ID: id, Snippet: &n})
				if err != nil {
					t.Fatal(err)
				}
				body, err := json.Marshal(searchapi.SearchBody{Query: &text, ID: id, Snippet: &n})
				if err != nil {
					t.Fatal(err)
				}
				code, got := post(t, r.url+"/v1/search", string(body))
				if code != http.StatusOK || got != string(encode(res)) {
					t.Fatalf("%s snippet %d, query %q: %d\n%s\nencoding/json:\n%s", task.Name, n, text, code, got, encode(res))
				}
				batch = append(batch, searchapi.QueryItem{ID: id, Query: text})
				if i > 0 {
					want = append(want, ',')
				}
				want = append(want, encode(res)...)
			}
			want = append(want, "]}\n"...)
			body, err := json.Marshal(searchapi.SearchBody{Queries: batch, Snippet: &n})
			if err != nil {
				t.Fatal(err)
			}
			if code, got := post(t, r.url+"/v1/search", string(body)); code != http.StatusOK || got != string(want) {
				t.Fatalf("%s snippet %d, batch: %d\n%s\nencoding/json:\n%s", task.Name, n, code, got, want)
			}
		}
	}
}
