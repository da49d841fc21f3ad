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

// TestServeFollowsResults: a run re-run into the directory the viewer
// shows is what the viewer shows next, as r2med results lists it, where
// it kept the numbers read at start and refused the new run.trec as
// "changed since the run wrote it: run it again".
func TestServeFollowsResults(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "bm25", "demo")
	if _, stderr, code := r2med(t, "", "run", "--task", "demo", "--out", out, "--quiet"); code != 0 {
		t.Fatalf("run: %s", stderr)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m, _ := startServe(t, ctx, dir)
	client := &http.Client{Timeout: 10 * time.Second}
	getJSON := func(path string, v any) {
		t.Helper()
		resp, err := client.Get(m + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if err := json.NewDecoder(resp.Body).Decode(v); err != nil || resp.StatusCode != 200 {
			t.Fatalf("GET %s: %d %v", path, resp.StatusCode, err)
		}
	}
	type runs struct {
		Runs []struct {
			Metrics map[string]float64 `json:"metrics"`
		} `json:"runs"`
	}
	ndcg := func(r runs) float64 {
		t.Helper()
		if len(r.Runs) != 1 {
			t.Fatalf("%d runs, want 1", len(r.Runs))
		}
		return r.Runs[0].Metrics["ndcg_at_10"]
	}
	var before runs
	getJSON("api/runs", &before)
	// Nothing has read run.trec yet: the first drill-down comes after
	// the re-run.
	if _, stderr, code := r2med(t, "", "run", "--task", "demo", "--k1", "2", "--b", "0.9", "--overwrite", "--out", out, "--quiet"); code != 0 {
		t.Fatalf("re-run: %s", stderr)
	}
	stdout, _, _ := r2med(t, "", "results", "--results", dir, "--format", "json")
	var cli runs
	if err := json.Unmarshal([]byte(stdout), &cli); err != nil {
		t.Fatalf("r2med results --format json: %v\n%s", err, stdout)
	}
	time.Sleep(1100 * time.Millisecond) // the viewer looks at most once a second
	var after runs
	getJSON("api/runs", &after)
	if ndcg(after) != ndcg(cli) || ndcg(after) == ndcg(before) {
		t.Errorf("after the re-run /api/runs says nDCG@10 %v, r2med results %v (before %v)", ndcg(after), ndcg(cli), ndcg(before))
	}
	var q struct {
		Systems []struct {
			Error string `json:"error"`
		} `json:"systems"`
	}
	getJSON("api/query/demo/q1", &q)
	if len(q.Systems) != 1 || q.Systems[0].Error != "" {
		t.Errorf("after the re-run the drill-down says %+v", q.Systems)
	}
}

// TestServeKey: the viewer on a non-loopback address needs a key from the
// environment, as serve-search does; with one, every request must give
// it, as a browser does (the password of Basic authentication, any user
// name) or as a program does (Bearer).
func TestServeKey(t *testing.T) {
	dir := t.TempDir()
	if _, stderr, code := r2med(t, "", "run", "--task", "demo", "--out", filepath.Join(dir, "bm25", "demo"), "--quiet"); code != 0 {
		t.Fatalf("run: %s", stderr)
	}
	t.Setenv(DefaultViewerKeyEnv, "")
	for _, addr := range []string{"0.0.0.0:0", ":0"} {
		if _, stderr, code := r2med(t, "", "serve", "--results", dir, "--addr", addr); code == 0 || !strings.Contains(stderr, "needs a key: set it in $"+DefaultViewerKeyEnv) {
			t.Errorf("--addr %s without a key: exit %d, %s", addr, code, stderr)
		}
	}
	t.Setenv("MY_VIEWER_KEY", "short")
	if _, stderr, code := r2med(t, "", "serve", "--results", dir, "--key-env", "MY_VIEWER_KEY"); code == 0 || !strings.Contains(stderr, "use at least 16") {
		t.Errorf("a 5-character key: exit %d, %s", code, stderr)
	}
	const key = "viewer-0123456789abcdef"
	t.Setenv("MY_VIEWER_KEY", key)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	base, _ := startServe(t, ctx, dir, "--key-env", "MY_VIEWER_KEY")
	for _, c := range []struct {
		user, pass, bearer string
		want               int
	}{{want: 401}, {user: "me", pass: "wrong", want: 401}, {user: "me", pass: key, want: 200}, {user: "", pass: key, want: 200}, {bearer: key, want: 200}, {bearer: "wrong", want: 401}} {
		for _, path := range []string{"", "api/runs", "leaderboard.csv"} {
			req, _ := http.NewRequest("GET", base+path, nil)
			if c.pass != "" {
				req.SetBasicAuth(c.user, c.pass)
			}
			if c.bearer != "" {
				req.Header.Set("Authorization", "Bearer "+c.bearer)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != c.want {
				t.Errorf("/%s with %+v: %d, want %d", path, c, resp.StatusCode, c.want)
			}
			if c.want == 401 && !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Basic ") {
				t.Errorf("/%s: challenge %q, want Basic (a browser asks for the key)", path, resp.Header.Get("WWW-Authenticate"))
			}
			if resp.Header.Get("Content-Security-Policy") == "" {
				t.Errorf("/%s: %d without the CSP", path, resp.StatusCode)
			}
		}
	}
}
