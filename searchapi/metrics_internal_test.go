package searchapi

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"testing"
)

// failingWriter is a connection whose client has gone: every write fails.
type failingWriter struct{ *httptest.ResponseRecorder }

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("broken pipe") }

// TestMetricsCountWholeAnswers: an answer written whole is counted under
// its status even when the client closes its connection the moment it
// has read it (net/http then cancels the request's context before the
// handler's deferred bookkeeping runs), where /metrics counted about 2%
// of a steady stream of 200s under 499; an answer whose writes fail, or
// a handler that gives up on a cancelled client without answering, is
// still 499.
func TestMetricsCountWholeAnswers(t *testing.T) {
	count := func(h http.HandlerFunc, w http.ResponseWriter) (ok, closed float64) {
		m := newMetrics()
		mux := http.NewServeMux()
		mux.Handle("GET /v1/search", h)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		req := httptest.NewRequestWithContext(ctx, "GET", "/v1/search", nil)
		req = req.WithContext(context.WithValue(ctx, cancelKey{}, cancel))
		m.instrument(mux).ServeHTTP(w, req)
		return requestsCounted(t, m, "200"), requestsCounted(t, m, ClientClosed)
	}
	hangUp := func(r *http.Request) { r.Context().Value(cancelKey{}).(context.CancelFunc)() }
	whole := func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"hits":[]}`)
		hangUp(r) // the client read it all and closed the connection
	}
	if ok, closed := count(whole, httptest.NewRecorder()); ok != 1 || closed != 0 {
		t.Errorf("a whole answer, then the client closed: counted %v under 200, %v under 499; want 1 and 0", ok, closed)
	}
	if ok, closed := count(whole, failingWriter{httptest.NewRecorder()}); ok != 0 || closed != 1 {
		t.Errorf("an answer whose writes failed: counted %v under 200, %v under 499; want 0 and 1", ok, closed)
	}
	gaveUp := func(w http.ResponseWriter, r *http.Request) { hangUp(r) }
	if ok, closed := count(gaveUp, httptest.NewRecorder()); ok != 0 || closed != 1 {
		t.Errorf("no answer, the client gone: counted %v under 200, %v under 499; want 0 and 1", ok, closed)
	}
}

type cancelKey struct{}

// requestsCounted is /metrics' count of GET /v1/search under code.
func requestsCounted(t *testing.T, m *metrics, code string) float64 {
	t.Helper()
	rec := httptest.NewRecorder()
	m.handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	re := regexp.MustCompile(`(?m)^r2med_search_http_requests_total\{code="` + code + `",route="GET /v1/search"\} (\S+)$`)
	sm := re.FindStringSubmatch(rec.Body.String())
	if sm == nil {
		return 0
	}
	v, err := strconv.ParseFloat(sm[1], 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
