package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// fleetMember is an OpenAI-style /embeddings server that answers slowly
// enough for requests to overlap, counts its requests and the most it
// held at once, and with broken set answers every request with a 503.
type fleetMember struct {
	*httptest.Server
	requests, inflight, peak atomic.Int64
}

func newFleetMember(t *testing.T, broken bool) *fleetMember {
	m := &fleetMember{}
	m.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m.requests.Add(1)
		n := m.inflight.Add(1)
		defer m.inflight.Add(-1)
		for p := m.peak.Load(); n > p && !m.peak.CompareAndSwap(p, n); p = m.peak.Load() {
		}
		time.Sleep(20 * time.Millisecond)
		if broken {
			http.Error(w, "overloaded", http.StatusServiceUnavailable)
			return
		}
		var req struct{ Input []string }
		json.NewDecoder(r.Body).Decode(&req)
		type item struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		var data []item
		for i, text := range req.Input {
			data = append(data, item{i, []float32{float32(len(text)%7) + 1, float32(strings.Count(text, "e")), 1}})
		}
		json.NewEncoder(w).Encode(map[string]any{"data": data})
	}))
	t.Cleanup(m.Close)
	return m
}

// TestRunEmbeddingFleet gives a dense run two embedding servers, one of
// them broken, as a repeated --base-url and as a file of URLs: the run
// completes on the good one, each retry and the broken server's removal
// are reported on stderr (--quiet silences progress, not these), --endpoint-concurrency bounds the requests each
// server holds at once, and the vectors (so the run) are the ones a
// single good server gives.
func TestRunEmbeddingFleet(t *testing.T) {
	dir := t.TempDir()
	run := func(cacheDir, out string, extra ...string) (string, string) {
		args := append([]string{"run", "--task", "demo", "--retriever", "dense", "--model", "m", "--backend", "openai", "--batch-size", "4",
			"--cache", filepath.Join(dir, cacheDir), "--out", filepath.Join(dir, out)}, extra...)
		stdout, stderr, code := r2med(t, "", args...)
		if code != 0 {
			t.Fatalf("%v: exit %d\n%s", args, code, stderr)
		}
		return stdout, stderr
	}
	single := newFleetMember(t, false)
	run("c0", "single", "--base-url", single.URL, "--quiet")
	if single.peak.Load() < 2 {
		t.Fatalf("the single server held at most %d requests at once; the test needs overlap", single.peak.Load())
	}

	good, broken := newFleetMember(t, false), newFleetMember(t, true)
	_, stderr := run("c1", "fleet", "--base-url", good.URL, "--base-url", broken.URL, "--retries", "3", "--request-timeout", "10s", "--endpoint-concurrency", "1", "--quiet")
	if broken.requests.Load() == 0 || good.requests.Load() == 0 {
		t.Errorf("requests: good %d, broken %d", good.requests.Load(), broken.requests.Load())
	}
	if good.peak.Load() != 1 || broken.peak.Load() != 1 {
		t.Errorf("--endpoint-concurrency 1: the servers held up to %d and %d requests at once", good.peak.Load(), broken.peak.Load())
	}
	if !strings.Contains(stderr, "r2med: embedding request failed (attempt 1), retrying") || !strings.Contains(stderr, "taken out of the fleet") {
		t.Errorf("stderr does not report the retries and the broken server:\n%s", stderr)
	}
	want := readFileString(t, filepath.Join(dir, "single", "run.trec"))
	if readFileString(t, filepath.Join(dir, "fleet", "run.trec")) != want {
		t.Error("the fleet's run differs from the single server's")
	}

	// The same fleet from a file, in a pipeline file's base_url list.
	list := filepath.Join(dir, "servers.txt")
	os.WriteFile(list, []byte("# embedding servers\n"+good.URL+"\n\n"+broken.URL+"\n"), 0o644)
	pipe := filepath.Join(dir, "fleet.yaml")
	os.WriteFile(pipe, []byte("retrieve:\n  - dense: {model: m, backend: openai, batch_size: 4, base_url: ["+list+"]}\nretries: 3\n"), 0o644)
	before := good.requests.Load()
	if _, stderr, code := r2med(t, "", "run", "--task", "demo", "--pipeline", pipe, "--cache", filepath.Join(dir, "c2"), "--out", filepath.Join(dir, "file"), "--quiet"); code != 0 {
		t.Fatalf("fleet from a file: exit %d\n%s", code, stderr)
	}
	if good.requests.Load() == before || readFileString(t, filepath.Join(dir, "file", "run.trec")) != want {
		t.Error("the fleet from a file did not embed alike")
	}

	// One retry only, and only the broken server: the run fails, having
	// tried twice.
	_, stderr, code := r2med(t, "", "run", "--task", "demo", "--retriever", "dense", "--model", "m", "--backend", "openai", "--base-url", broken.URL,
		"--retries", "1", "--cache", filepath.Join(dir, "c3"), "--out", filepath.Join(dir, "fail"), "--quiet")
	if code == 0 || !strings.Contains(stderr, "HTTP 503 Service Unavailable after 2 attempts") {
		t.Errorf("--retries 1 against a broken server: exit %d\n%s", code, stderr)
	}
	for _, c := range []struct{ args, want string }{
		{"--retries -1", "retries must be 0 or more"},
		{"--endpoint-concurrency -2", "endpoint concurrency must be positive"},
		{"--base-url " + filepath.Join(dir, "missing.txt"), "server list"},
	} {
		args := append([]string{"run", "--task", "demo", "--retriever", "dense", "--model", "m", "--backend", "openai", "--out", filepath.Join(dir, "bad"), "--quiet"}, strings.Fields(c.args)...)
		if _, stderr, code := r2med(t, "", args...); code == 0 || !strings.Contains(stderr, c.want) {
			t.Errorf("%s: exit %d, %s", c.args, code, stderr)
		}
	}
}
