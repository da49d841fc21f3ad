package hub

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestBusyHubSaysWhatToDo: a Hub that rate-limits (429) or fails (5xx)
// through every retry ends in an error that says what happened and what
// to do, not the status code alone.
func TestBusyHubSaysWhatToDo(t *testing.T) {
	for _, tc := range []struct {
		status int
		token  string
		want   []string
		not    []string
	}{
		{http.StatusTooManyRequests, "", []string{"HTTP 429 (too many requests)", "rate-limiting", "wait a few minutes", "HF_TOKEN", "/settings/tokens", "gave up after 6 attempts"}, nil},
		{http.StatusTooManyRequests, "hf_SomeTokenSomeToken", []string{"HTTP 429", "wait a few minutes"}, []string{"with HF_TOKEN set"}},
		{http.StatusBadGateway, "", []string{"HTTP 502", "run again later", "HF_HUB_OFFLINE=1", "gave up after 6 attempts"}, nil},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(tc.status)
		}))
		c := &Client{Endpoint: srv.URL, CacheDir: t.TempDir(), Token: tc.token, backoff: time.Millisecond}
		_, err := c.Snapshot(context.Background(), bio, "main")
		srv.Close()
		mustErr(t, err, nil, tc.want...)
		for _, n := range tc.not {
			if strings.Contains(err.Error(), n) {
				t.Errorf("%d: %q says %q", tc.status, err, n)
			}
		}
	}
}
