package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// asOldManifest rewrites a run's manifest as versions before absolute
// data paths wrote it: task.source is the path as typed; and its command
// line as a user typed it (a test records the test binary's).
func asOldManifest(t *testing.T, dir, source string, args ...string) {
	t.Helper()
	p := filepath.Join(dir, "manifest.json")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	task := m["task"].(map[string]any)
	task["source"] = source
	delete(task, "source_given")
	m["command"] = append([]string{"r2med"}, args...)
	b, _ = json.MarshalIndent(m, "", "  ")
	os.WriteFile(p, b, 0o644)
}

// A manifest from an older version records --data as typed, relative to
// where the run was started. From another working directory, compare and
// report find the data by the run's location (its relative --out, or
// out/SYSTEM/TASK without one), never against the current directory; when
// the location does not tell (an absolute --out), compare and report fail
// naming the manifest and what to do, and serve answers 404 with that
// message, not 500.
func TestOldRelativeDataPathResolvedByRunLocation(t *testing.T) {
	work := t.TempDir()
	if err := os.Rename(demoDir(t), filepath.Join(work, "data")); err != nil {
		t.Fatal(err)
	}
	t.Chdir(work)
	t.Setenv("R2MED_RESULTS", "")
	abs := filepath.Join(work, "abs")
	a, b := filepath.Join(work, "runs", "a"), filepath.Join(work, "out", "bm25-robertson", "data")
	for dir, args := range map[string][]string{
		a:   {"run", "--data", "data", "--out", "runs/a", "--quiet"},
		b:   {"run", "--data", "data", "--bm25", "robertson", "--quiet"}, // out/SYSTEM/TASK
		abs: {"run", "--data", "data", "--bm25", "lucene", "--out=" + abs, "--quiet"},
	} {
		mustRun(t, args...)
		if _, err := os.Stat(dir); err != nil {
			t.Fatalf("the run is not where the test expects it: %v", err)
		}
		asOldManifest(t, dir, "data", args...)
	}
	// Elsewhere, with a decoy "data" directory the old manifests must not
	// be read against.
	elsewhere := t.TempDir()
	os.Mkdir(filepath.Join(elsewhere, "data"), 0o755)
	t.Chdir(elsewhere)
	if _, stderr, code := r2med(t, "", "compare", a, b); code != 0 {
		t.Fatalf("compare of old manifests from another directory: exit %d: %s", code, stderr)
	}
	want := filepath.Join(abs, "manifest.json") + ` records the data path "data" relative to the directory the run was started in, which an absolute --out does not tell; rerun the run`
	if _, stderr, code := r2med(t, "", "compare", abs, a); code == 0 || !strings.Contains(stderr, want) {
		t.Errorf("compare with an unresolvable manifest: exit %d, stderr %q; want %q", code, stderr, want)
	}
	// A moved run: its --out no longer ends its directory.
	moved := filepath.Join(work, "moved")
	os.Rename(a, moved)
	if _, stderr, code := r2med(t, "", "compare", moved, b); code == 0 || !strings.Contains(stderr, filepath.Join(moved, "manifest.json")+` records the data path "data"`) || !strings.Contains(stderr, "was it moved?") {
		t.Errorf("compare with a moved run: exit %d, stderr %q", code, stderr)
	}

	// serve: the per-query page of the unresolvable run is a 404 saying
	// what to do.
	results := t.TempDir()
	os.Rename(abs, filepath.Join(results, "abs"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	base, done := startServe(t, ctx, results)
	qid := demoTask(t).Queries[0].ID
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Get(base + "api/query/data/" + qid)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound || !strings.Contains(string(body), `records the data path \"data\" relative to the directory the run was started in`) {
		t.Errorf("GET /api/query: %d %s", resp.StatusCode, body)
	}
	cancel()
	<-done
}
