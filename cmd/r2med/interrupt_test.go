package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/r2med/r2med/cache"
)

// interruptingTEI is a TEI server whose second request interrupts the
// command, as Ctrl-C does, and then waits for it to give up.
func interruptingTEI(t *testing.T, cancel func()) *httptest.Server {
	good, _ := teiLoopback(t, nil)
	return interrupting(t, good, cancel, 2)
}

// interrupting serves as good does, but its at-th request interrupts the
// command, as Ctrl-C does, and then waits for it to give up.
func interrupting(t *testing.T, good *httptest.Server, cancel func(), at int32) *httptest.Server {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == at {
			// Read the request first: the server notices the client
			// hanging up only once the body is consumed.
			io.Copy(io.Discard, r.Body)
			cancel()
			select {
			case <-r.Context().Done():
			case <-time.After(10 * time.Second):
			}
			return
		}
		good.Config.Handler.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// checkKept checks the interrupt message names exactly the files want,
// and that they exist.
func checkKept(t *testing.T, code int, stderr string, want ...string) {
	t.Helper()
	line := "r2med: interrupted; kept for resuming: " + strings.Join(want, ", ") + " (run the same command again to resume from there)\n"
	if code != 130 || !strings.HasSuffix(stderr, line) {
		t.Fatalf("exit %d, stderr %q; want 130 and %q", code, stderr, line)
	}
	for _, p := range want {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("named as kept, but %v", err)
		}
	}
}

// Ctrl-C in a run's rerank stage names the retrieval stage and the
// rerank checkpoint a rerun resumes from, and the rerun resumes.
func TestRunInterruptNamesKeptFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv := interruptingTEI(t, cancel)
	args := []string{"run", "--task", "demo", "--rerank", "tei", "--rerank-depth", "5", "--out", dir, "--quiet"}
	var stdout, stderr bytes.Buffer
	code := execute(ctx, append(args, "--rerank-url", srv.URL), strings.NewReader(""), &stdout, &stderr)
	stages := filepath.Join(dir, "stages")
	checkKept(t, code, stderr.String(), filepath.Join(stages, "retrieve.trec"), filepath.Join(stages, "rerank.partial"))

	good, calls := teiLoopback(t, nil)
	mustRun(t, append(args, "--rerank-url", good.URL)...)
	if n := calls.Load(); n != int32(len(demoTask(t).Queries))-1 {
		t.Errorf("the rerun asked %d times; one query was done", n)
	}
}

// Ctrl-C in a sweep names what the cell it stopped in keeps (the first
// cell finished whole), and the cache that holds the LLM answers so far.
func TestSweepInterruptNamesKeptFiles(t *testing.T) {
	dir := t.TempDir()
	cacheDir := filepath.Join(dir, "cache")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv := interrupting(t, newChatLoopback(t).Server, cancel, 2)
	sweep := filepath.Join(dir, "sweep.yaml")
	os.WriteFile(sweep, []byte(`tasks: [demo]
pipelines:
  - retrieve: [{bm25: {}}]
  - name: llm
    retrieve: [{bm25: {}}]
    rerank: {kind: insertrank, model: r1, base_url: `+srv.URL+`/v1, depth: 5}
`), 0o644)
	out := filepath.Join(dir, "res")
	var stdout, stderr bytes.Buffer
	code := execute(ctx, []string{"sweep", sweep, "--out", out, "--cache", cacheDir, "--quiet"}, strings.NewReader(""), &stdout, &stderr)
	stages := filepath.Join(out, "llm", "demo", "stages")
	checkKept(t, code, stderr.String(), filepath.Join(stages, "retrieve.trec"), filepath.Join(stages, "rerank.partial"), filepath.Join(cacheDir, cache.FileName))
	if !strings.HasPrefix(stdout.String(), "done ") {
		t.Errorf("the first cell should have finished:\n%s", stdout.String())
	}
}
