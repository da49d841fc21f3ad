package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestServeCommand starts `r2med serve` on a free port, asks its JSON API
// for the runs, and stops it the way Ctrl-C does.
func TestServeCommand(t *testing.T) {
	dir := t.TempDir()
	if _, stderr, code := r2med(t, "", "run", "--task", "demo", "--out", filepath.Join(dir, "bm25", "demo"), "--quiet"); code != 0 {
		t.Fatalf("run: %s", stderr)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m, done := startServe(t, ctx, dir)
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Get(m + "api/runs")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var runs struct {
		Runs []map[string]any `json:"runs"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&runs); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /api/runs: %d, %v", resp.StatusCode, err)
	}
	if len(runs.Runs) != 1 {
		t.Fatalf("/api/runs lists %d runs, want the demo run", len(runs.Runs))
	}
	cancel()
	select {
	case code := <-done:
		if code != 0 && code != 130 {
			t.Fatalf("serve exited %d after cancel", code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop after cancel")
	}
}

// startServe runs r2med serve on results (with the flags extra) on a free
// loopback port until ctx ends, and returns its base URL and where its
// exit status arrives.
func startServe(t *testing.T, ctx context.Context, results string, extra ...string) (string, <-chan int) {
	t.Helper()
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	args := append([]string{"serve", "--results", results, "--addr", "127.0.0.1:0"}, extra...)
	go func() {
		done <- execute(ctx, args, strings.NewReader(""), io.Discard, pw)
		pw.Close()
	}()
	br := bufio.NewReader(pr)
	line, err := br.ReadString('\n')
	if err != nil {
		t.Fatalf("serve said nothing: %v (exit %d)", err, <-done)
	}
	go io.Copy(io.Discard, br)
	m := regexp.MustCompile(`http://[^/ ]+/`).FindString(line)
	if m == "" {
		t.Fatalf("no address in %q", line)
	}
	return m, done
}
