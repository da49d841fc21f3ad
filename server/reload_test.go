package server

import (
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/r2med/r2med/demo"
	"github.com/r2med/r2med/internal/reuse"
	"github.com/r2med/r2med/leaderboard"
	"github.com/r2med/r2med/report"
	"github.com/r2med/r2med/report/reporttest"
	"github.com/r2med/r2med/results"
)

// writeRun writes a run directory as pipeline.Run does: with the
// outputs' checksums in the manifest, so that a run file the manifest
// does not vouch for is refused.
func writeRun(t *testing.T, r reporttest.Run) {
	t.Helper()
	if err := reporttest.Write(r); err != nil {
		t.Fatal(err)
	}
	mp := filepath.Join(r.Dir, results.ManifestFile)
	m, err := results.ReadManifest(mp)
	if err != nil {
		t.Fatal(err)
	}
	m.OutputSHA256 = map[string]string{}
	for _, name := range []string{results.RunFile, results.ResultsFile} {
		if m.OutputSHA256[name], err = reuse.Sum(filepath.Join(r.Dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.WriteFile(mp); err != nil {
		t.Fatal(err)
	}
}

// queryValues is each system's nDCG@10 on qid and its first hit, from
// /api/query, or its error.
func queryValues(t *testing.T, ts *httptest.Server, qid string) (int, map[string]string) {
	t.Helper()
	code, _, body := get(t, ts.URL+"/api/query/demo/"+qid)
	var q QueryJSON
	json.Unmarshal([]byte(body), &q)
	out := map[string]string{}
	for _, s := range q.Systems {
		switch {
		case s.Error != "":
			out[s.ID] = "error: " + s.Error
		case s.Value == nil || len(s.Hits) == 0:
			out[s.ID] = "no value"
		default:
			out[s.ID] = leaderboard.Pct(*s.Value) + " " + s.Hits[0].DocID
		}
	}
	return code, out
}

// TestRunReplacedUnderViewer: a run re-run into the directory the viewer
// shows (run.trec, results.json and manifest.json replaced), a
// results.json cut short, a run directory deleted and one added are what
// the next request shows, as r2med results would list them, where the
// viewer kept the numbers it read at start beside the new run file, and
// refused that file with "changed since the run wrote it: run it again"
// after the user had just done so.
func TestRunReplacedUnderViewer(t *testing.T) {
	old := RecheckInterval
	RecheckInterval = 0
	defer func() { RecheckInterval = old }()
	task, err := demo.Load()
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	a, b := filepath.Join(root, "a"), filepath.Join(root, "b")
	buried := reporttest.Buried(task, func(string) bool { return true })
	writeRun(t, reporttest.Run{Dir: a, Task: "demo", System: "a", Ranked: buried})
	writeRun(t, reporttest.Run{Dir: b, Task: "demo", System: "b", Ranked: reporttest.Perfect(task)})
	load := func() (*report.Data, error) { return report.Load(root, leaderboard.Sources{}, reporttest.Loader) }
	d, err := load()
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(d, Options{Results: root, Reload: load})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	defer ts.Close()
	qid := task.Queries[0].ID
	var firstRel string
	for _, id := range relevantIDs(task.Qrels[qid]) {
		firstRel = id
		break
	}
	board := func() map[string]string {
		t.Helper()
		code, _, body := get(t, ts.URL+"/api/leaderboard")
		var lb struct {
			Rows []struct {
				ID     string              `json:"id"`
				Scores map[string]*float64 `json:"scores"`
			} `json:"rows"`
		}
		if code != 200 || json.Unmarshal([]byte(body), &lb) != nil {
			t.Fatalf("/api/leaderboard: %d %s", code, body)
		}
		out := map[string]string{}
		for _, r := range lb.Rows {
			if v := r.Scores["demo"]; v != nil {
				out[r.ID] = leaderboard.Pct(*v)
			}
		}
		return out
	}
	if got := board(); got["ours/a"] == got["ours/b"] {
		t.Fatalf("fixture: a and b score alike: %v", got)
	}

	// a is run again into its directory, now ranking as b does.
	time.Sleep(10 * time.Millisecond) // a new modification time
	writeRun(t, reporttest.Run{Dir: a, Task: "demo", System: "a", Ranked: reporttest.Perfect(task)})
	if got := board(); got["ours/a"] != got["ours/b"] {
		t.Errorf("after a re-run, the leaderboard shows a %s, b %s: want the re-run's %s", got["ours/a"], got["ours/b"], got["ours/b"])
	}
	code, vals := queryValues(t, ts, qid)
	if code != 200 || vals["ours/a"] != vals["ours/b"] || !strings.HasSuffix(vals["ours/a"], " "+firstRel) {
		t.Errorf("after a re-run, /api/query: %d %v: want a as b, first hit %s", code, vals, firstRel)
	}

	// A results.json cut short: what r2med results refuses, the viewer
	// does not show as the run's; restored, it shows it again.
	rp := filepath.Join(b, results.ResultsFile)
	whole, err := os.ReadFile(rp)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(rp, whole[:len(whole)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/api/leaderboard", "/", "/task/demo", "/api/query/demo/" + qid} {
		code, h, body := get(t, ts.URL+path)
		if code != 503 || !strings.Contains(body, rp) || h.Get("Retry-After") == "" {
			t.Errorf("%s with %s cut short: %d (Retry-After %q) %.300s: want 503 naming the file", path, rp, code, h.Get("Retry-After"), body)
		}
	}
	if err := os.WriteFile(rp, whole, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, body := get(t, ts.URL+"/api/leaderboard"); code != 200 {
		t.Errorf("restored: %d %.300s", code, body)
	}

	// b deleted, c added: the leaderboard and the runs are the directory's.
	if err := os.RemoveAll(b); err != nil {
		t.Fatal(err)
	}
	writeRun(t, reporttest.Run{Dir: filepath.Join(root, "c"), Task: "demo", System: "c", Ranked: buried})
	got := board()
	if _, ok := got["ours/b"]; ok || got["ours/c"] == "" || len(got) != 2 {
		t.Errorf("after deleting b and adding c: %v", got)
	}
	code, vals = queryValues(t, ts, qid)
	if _, ok := vals["ours/b"]; code != 200 || ok || len(vals) != 2 {
		t.Errorf("after deleting b and adding c, /api/query: %d %v", code, vals)
	}
}
