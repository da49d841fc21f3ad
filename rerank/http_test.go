package rerank

import (
	"cmp"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/r2med/r2med/internal/httpx"
)

func fastClient() *httpx.Client {
	return &httpx.Client{BaseDelay: time.Millisecond, MaxDelay: 5 * time.Millisecond, MaxAttempts: 4}
}

// lenScore is the loopback servers' deterministic relevance: the number
// of query words the text contains.
func lenScore(query, text string) float64 {
	n := 0
	for _, w := range strings.Fields(query) {
		if strings.Contains(text, w) {
			n++
		}
	}
	return float64(n)
}

type teiReq struct {
	Query     string   `json:"query"`
	Texts     []string `json:"texts"`
	RawScores bool     `json:"raw_scores"`
	Truncate  bool     `json:"truncate"`
}

// teiServer answers like TEI: results sorted by score, best first.
func teiServer(t *testing.T, seen *[]teiReq) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/rerank" {
			http.NotFound(w, r)
			return
		}
		var req teiReq
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			t.Error(err)
		}
		if seen != nil {
			*seen = append(*seen, req)
		}
		type res struct {
			Index int     `json:"index"`
			Score float64 `json:"score"`
		}
		out := make([]res, len(req.Texts))
		for i, tx := range req.Texts {
			out[i] = res{i, lenScore(req.Query, tx)}
		}
		slices.SortStableFunc(out, func(a, b res) int { return cmp.Compare(b.Score, a.Score) })
		json.NewEncoder(w).Encode(out)
	}))
}

func TestTEIMapsBackByIndex(t *testing.T) {
	var seen []teiReq
	srv := teiServer(t, &seen)
	defer srv.Close()
	docs := []string{"nothing", "fever cough", "fever", "cough fever rash", "rash"}
	s := &TEI{BaseURL: srv.URL + "/", MaxBatch: 2}
	got, err := s.Score(context.Background(), "fever cough rash", docs)
	if err != nil {
		t.Fatal(err)
	}
	if want := []float64{0, 2, 1, 3, 1}; !slices.Equal(got, want) {
		t.Errorf("scores %v, want %v (input order)", got, want)
	}
	if len(seen) != 3 || len(seen[0].Texts) != 2 || len(seen[2].Texts) != 1 {
		t.Errorf("requests %+v; want batches of 2, 2, 1", seen)
	}
	if !seen[0].RawScores || !seen[0].Truncate {
		t.Errorf("request %+v: want raw_scores and truncate true", seen[0])
	}
}

type apiReq struct {
	Model     string   `json:"model"`
	Query     string   `json:"query"`
	Documents []string `json:"documents"`
}

func apiServer(t *testing.T, listKey, wantKey string) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/rerank") {
			http.NotFound(w, r)
			return
		}
		if got := r.Header.Get("Authorization"); got != "Bearer "+wantKey {
			w.WriteHeader(http.StatusUnauthorized)
			// A careless server echoing the key: it must not reach messages.
			w.Write([]byte(`{"error":"bad key ` + strings.TrimPrefix(got, "Bearer ") + `"}`))
			return
		}
		var req apiReq
		json.NewDecoder(r.Body).Decode(&req)
		type res struct {
			Index int     `json:"index"`
			Score float64 `json:"relevance_score"`
		}
		out := make([]res, len(req.Documents))
		for i, d := range req.Documents {
			out[i] = res{i, lenScore(req.Query, d) / 10}
		}
		slices.SortStableFunc(out, func(a, b res) int { return cmp.Compare(b.Score, a.Score) })
		json.NewEncoder(w).Encode(map[string]any{listKey: out, "model": req.Model})
	}))
}

func TestAPICohereAndVoyageShapes(t *testing.T) {
	for _, key := range []string{"results", "data"} {
		srv := apiServer(t, key, "sekret-key")
		a := &API{BaseURL: srv.URL, Model: "m", Key: "sekret-key"}
		got, err := a.Score(context.Background(), "fever rash", []string{"rash", "fever rash", "x"})
		srv.Close()
		if err != nil {
			t.Fatalf("%s: %v", key, err)
		}
		if want := []float64{0.1, 0.2, 0}; !slices.Equal(got, want) {
			t.Errorf("%s: got %v, want %v", key, got, want)
		}
	}
}

func TestAPIKeyRedacted(t *testing.T) {
	srv := apiServer(t, "results", "right-key")
	defer srv.Close()
	a := &API{BaseURL: srv.URL, Model: "m", Key: "wrong-key-123", Client: fastClient()}
	_, err := a.Score(context.Background(), "q", []string{"a"})
	if err == nil || strings.Contains(err.Error(), "wrong-key-123") || !strings.Contains(err.Error(), "401") {
		t.Errorf("got %v; want a 401 error without the key", err)
	}
}

func TestAPIURL(t *testing.T) {
	for base, want := range map[string]string{
		"http://h:8000":               "http://h:8000/v1/rerank",
		"http://h:8000/":              "http://h:8000/v1/rerank",
		"https://api.cohere.com/v2":   "https://api.cohere.com/v2/rerank",
		"https://api.jina.ai/v1/":     "https://api.jina.ai/v1/rerank",
		"http://h/custom/rerank":      "http://h/custom/rerank",
		"http://h/proxy":              "http://h/proxy/v1/rerank",
		"https://api.voyageai.com/v1": "https://api.voyageai.com/v1/rerank",
	} {
		if got := (&API{BaseURL: base}).URL(); got != want {
			t.Errorf("%s: got %s, want %s", base, got, want)
		}
	}
}

func TestNewAPI(t *testing.T) {
	t.Setenv("JINA_API_KEY", "from-env")
	a, err := NewAPI("jina", "", "jina-reranker-v2-base-multilingual", "")
	if err != nil || a.Key != "from-env" || a.URL() != "https://api.jina.ai/v1/rerank" {
		t.Errorf("jina: %+v, %v", a, err)
	}
	t.Setenv("VOYAGE_API_KEY", "")
	if _, err := NewAPI("voyage", "", "rerank-2", ""); err == nil || !strings.Contains(err.Error(), "VOYAGE_API_KEY") {
		t.Errorf("voyage without key: %v", err)
	}
	if _, err := NewAPI("", "", "m", ""); err == nil {
		t.Error("no provider and no base URL accepted")
	}
	if _, err := NewAPI("acme", "", "m", ""); err == nil {
		t.Error("unknown provider accepted")
	}
	if a, err := NewAPI("", "http://localhost:8000", "bge", ""); err != nil || a.Key != "" {
		t.Errorf("local server: %+v, %v", a, err)
	}
}

// A server answering with each malformed shape in turn.
func TestMalformedAnswers(t *testing.T) {
	for _, tc := range []struct {
		name, body, want string
	}{
		{"missing index", `[{"index":0,"score":1},{"score":2}]`, `result 1 has no "index"`},
		{"duplicate index", `[{"index":1,"score":1},{"index":1,"score":2}]`, "document 1 is scored twice"},
		{"wrong count", `[{"index":0,"score":1}]`, "asked to score 2 documents, the server returned 1 results"},
		{"out of range", `[{"index":0,"score":1},{"index":2,"score":2}]`, "has index 2, outside 0..1"},
		{"no score", `[{"index":0,"score":1},{"index":1}]`, `result 1 has neither "score" nor "relevance_score"`},
		{"NaN", `[{"index":0,"score":NaN},{"index":1,"score":1}]`, "JSON"},
		{"not a list", `{"error":"x"}`, "JSON"},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(tc.body)) }))
		_, err := (&TEI{BaseURL: srv.URL, Client: fastClient()}).Score(context.Background(), "q", []string{"a", "b"})
		srv.Close()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.name, err, tc.want)
		}
	}
	for _, tc := range []struct{ name, body, want string }{
		{"no list", `{"meta":{}}`, `neither "results" nor "data"`},
		{"bad items", `{"results":[1,2]}`, "not a list of {index, relevance_score}"},
		{"duplicate", `{"results":[{"index":0,"relevance_score":1},{"index":0,"relevance_score":1}]}`, "scored twice"},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(tc.body)) }))
		_, err := (&API{BaseURL: srv.URL, Model: "m", Client: fastClient()}).Score(context.Background(), "q", []string{"a", "b"})
		srv.Close()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("api %s: got %v, want %q", tc.name, err, tc.want)
		}
	}
}

// 429 and 5xx answers are retried through httpx; a 400 is not.
func TestRetries(t *testing.T) {
	real := teiServer(t, nil)
	defer real.Close()
	for _, tc := range []struct {
		status    int
		failures  int32
		wantCalls int32
		ok        bool
	}{
		{http.StatusTooManyRequests, 2, 3, true},
		{http.StatusServiceUnavailable, 1, 2, true},
		{http.StatusInternalServerError, 10, 4, false}, // MaxAttempts 4
		{http.StatusBadRequest, 1, 1, false},
	} {
		var calls atomic.Int32
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if calls.Add(1) <= tc.failures {
				w.WriteHeader(tc.status)
				w.Write([]byte(`{"error":"busy"}`))
				return
			}
			real.Config.Handler.ServeHTTP(w, r)
		}))
		got, err := (&TEI{BaseURL: srv.URL, Client: fastClient()}).Score(context.Background(), "fever", []string{"fever", "no"})
		srv.Close()
		if calls.Load() != tc.wantCalls || (err == nil) != tc.ok {
			t.Errorf("HTTP %d: %d calls, err %v; want %d calls, success %v", tc.status, calls.Load(), err, tc.wantCalls, tc.ok)
		}
		if tc.ok && !slices.Equal(got, []float64{1, 0}) {
			t.Errorf("HTTP %d: scores %v", tc.status, got)
		}
	}
}

// Rerank over a TEI server end to end.
func TestRerankOverTEI(t *testing.T) {
	srv := teiServer(t, nil)
	defer srv.Close()
	run := listRun(map[string][]string{"q1": {"a", "b", "c", "d"}})
	text := map[string]string{"a": "nothing", "b": "fever", "c": "fever cough", "d": "cough"}
	got, err := Rerank(context.Background(), run, map[string]string{"q1": "fever cough"},
		func(id string) (string, bool) { s, ok := text[id]; return s, ok }, &TEI{BaseURL: srv.URL}, Options{Depth: 3})
	if err != nil {
		t.Fatal(err)
	}
	// a=0, b=1, c=2 within depth 3; d is cut.
	if want := []string{"c", "b", "a"}; !slices.Equal(ids(got["q1"]), want) {
		t.Errorf("got %v, want %v", ids(got["q1"]), want)
	}
}
