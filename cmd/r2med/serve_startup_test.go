package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestServeSearchSaysDegradedAtStart: an index with a damaged section
// opens (its other sections serve), and serve-search says so when it
// starts, naming the file and section and that /healthz answers 503,
// instead of a start-up line that reads as all well.
func TestServeSearchSaysDegradedAtStart(t *testing.T) {
	dir := t.TempDir()
	idx := filepath.Join(dir, "demo.idx")
	if _, stderr, code := r2med(t, "", "index", "build", "--quiet", "--task", "demo", "--out", idx); code != 0 {
		t.Fatalf("index build: %s", stderr)
	}
	_, stderr, _ := serveSearchLog(t, "--index", idx)
	if got := stderr(); strings.Contains(got, "degraded") {
		t.Errorf("a whole index said degraded:\n%s", got)
	}

	b, err := os.ReadFile(idx)
	if err != nil {
		t.Fatal(err)
	}
	// A byte of the documents' texts, a section checked on first use.
	at := bytes.Index(b, []byte("Pheochromocytoma is a catecholamine"))
	if at < 0 {
		t.Fatal("the demo corpus's first text is not in the file")
	}
	b[at] ^= 0x20
	bad := filepath.Join(dir, "bad.idx")
	if err := os.WriteFile(bad, b, 0o644); err != nil {
		t.Fatal(err)
	}
	_, stop := serveSearch(t, "--index", bad)
	_, log := stop()
	if !strings.Contains(log, "degraded: index "+bad+": section ") || !strings.Contains(log, "checksum mismatch") || !strings.Contains(log, "GET /healthz answers 503") {
		t.Errorf("start-up log of a damaged index:\n%s", log)
	}
}
