package main

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/r2med/r2med/dataset"
	"github.com/r2med/r2med/demo"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/searchapi"
	"github.com/r2med/r2med/trec"
)

// syncBuffer is a bytes.Buffer safe to read while a command writes it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

var servingRE = regexp.MustCompile(`at (http://\S+)/v1/search`)

// serveSearch starts `r2med serve-search ARGS` in process on a loopback
// port and returns its URL and a stop function that cancels it as SIGTERM
// does and returns its exit code and stderr.
func serveSearch(t *testing.T, args ...string) (string, func() (int, string)) {
	t.Helper()
	u, _, stop := serveSearchLog(t, args...)
	return u, stop
}

// serveSearchLog is serveSearch with a function that reads its stderr
// so far.
func serveSearchLog(t *testing.T, args ...string) (string, func() string, func() (int, string)) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var stderr syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- execute(ctx, append([]string{"serve-search", "--addr", "127.0.0.1:0"}, args...), strings.NewReader(""), &bytes.Buffer{}, &stderr)
	}()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if m := servingRE.FindStringSubmatch(stderr.String()); m != nil {
			stopped := false
			stop := func() (int, string) {
				if !stopped {
					cancel()
					stopped = true
				}
				return <-done, stderr.String()
			}
			t.Cleanup(func() {
				if !stopped {
					stop()
				}
			})
			return m[1], stderr.String, stop
		}
		select {
		case code := <-done:
			cancel()
			t.Fatalf("serve-search exited %d: %s", code, stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("serve-search did not start: %s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestServeSearchSameAsRun: `r2med index build`, then `r2med serve-search`
// on a loopback port answers every query of the demo task and NFCorpus
// with exactly `r2med run`'s top 100: written as a run file with run's
// tag, the service's answers are run.trec byte for byte. SIGTERM (the
// context's end) stops it with exit 0.
func TestServeSearchSameAsRun(t *testing.T) {
	type set struct {
		name  string
		flags []string
		task  func() (*ir.Task, error)
	}
	sets := []set{{"demo", []string{"--task", "demo"}, demo.Load}}
	if _, err := os.Stat(shared); err == nil || os.Getenv("R2MED_CI") == "1" {
		nf := filepath.Join(shared, "nfcorpus")
		sets = append(sets, set{"nfcorpus", []string{"--data", nf, "--split", "test"}, func() (*ir.Task, error) {
			return dataset.Load(nf, dataset.Options{Split: "test"})
		}})
	}
	for _, s := range sets {
		task, err := s.task()
		if err != nil {
			t.Fatal(err)
		}
		for _, sc := range []string{"r2med", "lucene"} {
			dir := t.TempDir()
			idx := filepath.Join(dir, "x.idx")
			if _, stderr, code := r2med(t, "", append([]string{"index", "build", "--quiet", "--bm25", sc, "--out", idx}, s.flags...)...); code != 0 {
				t.Fatalf("index build: %s", stderr)
			}
			if _, stderr, code := r2med(t, "", append([]string{"run", "--quiet", "--bm25", sc, "--top-k", "100", "--out", filepath.Join(dir, "run")}, s.flags...)...); code != 0 {
				t.Fatalf("run: %s", stderr)
			}
			want, err := os.ReadFile(filepath.Join(dir, "run", "run.trec"))
			if err != nil {
				t.Fatal(err)
			}
			first, _, _ := strings.Cut(string(want), "\n")
			tag := first[strings.LastIndexByte(first, ' ')+1:]

			base, stop := serveSearch(t, "--index", "bm25="+idx)
			c := &searchapi.Client{BaseURL: base}
			got := ir.Run{}
			for lo := 0; lo < len(task.Queries); lo += 200 {
				body := searchapi.SearchBody{K: 100, Snippet: new(0)}
				for _, q := range task.Queries[lo:min(lo+200, len(task.Queries))] {
					body.Queries = append(body.Queries, searchapi.QueryItem{ID: q.ID, Query: q.Text})
				}
				res, err := c.Search(context.Background(), body)
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range res {
					for _, h := range r.Hits {
						got[r.ID] = append(got[r.ID], ir.Hit{DocID: h.ID, Score: h.Score})
					}
				}
			}
			var buf bytes.Buffer
			if err := trec.WriteRun(&buf, got, tag); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(buf.Bytes(), want) {
				gl, wl := strings.Split(buf.String(), "\n"), strings.Split(string(want), "\n")
				for i := range min(len(gl), len(wl)) {
					if gl[i] != wl[i] {
						t.Fatalf("%s %s: line %d differs:\nservice: %s\nrun:     %s", s.name, sc, i+1, gl[i], wl[i])
					}
				}
				t.Fatalf("%s %s: the service's run has %d lines, r2med run's %d", s.name, sc, len(gl), len(wl))
			}
			if code, stderr := stop(); code != 0 {
				t.Fatalf("serve-search stopped with exit %d: %s", code, stderr)
			}
		}
	}
}

// TestSearchCommand: `r2med search` prints ranks, ids, scores and
// snippets with the matched words marked, the same in process (--index)
// and through a running service (--server); --json prints the API's
// answer.
func TestSearchCommand(t *testing.T) {
	idx := filepath.Join(t.TempDir(), "demo.idx")
	if _, stderr, code := r2med(t, "", "index", "build", "--quiet", "--task", "demo", "--out", idx); code != 0 {
		t.Fatalf("index build: %s", stderr)
	}
	q := "a 54-year-old with crushing chest pain radiating to the jaw"
	local, stderr, code := r2med(t, "", "search", "--index", "demo="+idx, "-k", "3", q)
	if code != 0 {
		t.Fatalf("search: %s", stderr)
	}
	lines := strings.Split(strings.TrimSpace(local), "\n")
	if !strings.HasPrefix(lines[0], `demo · 3 hits · "a 54-year-old`) {
		t.Errorf("header %q", lines[0])
	}
	if !regexp.MustCompile(`^\s+1  cv-mi-1\s+15\.38591$`).MatchString(lines[1]) {
		t.Errorf("first hit %q", lines[1])
	}
	// The snippet under it, wrapped to the terminal's width, then the
	// matched terms.
	var snippet []string
	i := 2
	for ; i < len(lines) && !strings.Contains(lines[i], "matched:"); i++ {
		snippet = append(snippet, strings.TrimPrefix(lines[i], "      "))
	}
	if text := strings.Join(snippet, " "); !regexp.MustCompile(`^ST-elevation .*\*\*crushing\*\* or pressing central \*\*chest\*\* \*\*pain\*\*.*…$`).MatchString(text) {
		t.Errorf("first hit's snippet %q", text)
	}
	if i == len(lines) || lines[i] != "      matched: crush, chest, pain, radiat, jaw" {
		t.Errorf("matched terms: %q", lines[min(i, len(lines)-1)])
	}
	base, _ := serveSearch(t, "--index", "demo="+idx)
	remote, stderr, code := r2med(t, "", "search", "--server", base, "-k", "3", q)
	if code != 0 {
		t.Fatalf("search --server: %s", stderr)
	}
	if remote != local {
		t.Errorf("--server printed\n%s\nin process\n%s", remote, local)
	}
	js, _, code := r2med(t, "", "search", "--index", idx, "--json", "-k", "2", "--snippet", "0", "fever", "rash")
	if code != 0 || !strings.Contains(js, `"results": [`) || strings.Contains(js, "snippet") {
		t.Errorf("--json batch:\n%s", js)
	}
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"search", "fever"}, "give --index INDEX"},
		{[]string{"search", "--index", idx, "--server", base, "fever"}, "give --index INDEX"},
		{[]string{"search", "--index", idx, "-k", "5000", "fever"}, "k must be between"},
		{[]string{"search", "--index", idx, "-k", "0", "fever"}, "-k must be at least 1, got 0"}, // as the API refuses k: 0
		{[]string{"search", "--server", base, "-k", "0", "fever"}, "-k must be at least 1, got 0"},
		{[]string{"search", "--server", base, "--retriever", "nope", "fever"}, `unknown retriever "nope"`},
	} {
		if _, stderr, code := r2med(t, "", c.args...); code == 0 || !strings.Contains(stderr, c.msg) {
			t.Errorf("%v: exit %d, %s", c.args, code, stderr)
		}
	}
}

// TestServeSearchKey: a non-loopback address needs a key from the
// environment (never a flag); with one, requests without it get 401.
func TestServeSearchKey(t *testing.T) {
	idx := filepath.Join(t.TempDir(), "demo.idx")
	if _, stderr, code := r2med(t, "", "index", "build", "--quiet", "--task", "demo", "--out", idx); code != 0 {
		t.Fatalf("index build: %s", stderr)
	}
	t.Setenv(DefaultKeyEnv, "")
	for _, addr := range []string{"0.0.0.0:0", ":0", "192.0.2.1:8081"} {
		_, stderr, code := r2med(t, "", "serve-search", "--index", idx, "--addr", addr)
		if code == 0 || !strings.Contains(stderr, "needs a key: set it in $"+DefaultKeyEnv) {
			t.Errorf("--addr %s without a key: exit %d, %s", addr, code, stderr)
		}
	}
	// A short key guards nothing: refused at start, saying how to make one.
	t.Setenv("MY_SEARCH_KEY", "k3y")
	if _, stderr, code := r2med(t, "", "serve-search", "--index", idx, "--key-env", "MY_SEARCH_KEY"); code == 0 || !strings.Contains(stderr, "the key in $MY_SEARCH_KEY has 3 characters; use at least 16") {
		t.Errorf("a 3-character key: exit %d, %s", code, stderr)
	}
	const key = "k3y-0123456789abcdef"
	t.Setenv("MY_SEARCH_KEY", key)
	base, _ := serveSearch(t, "--index", idx, "--key-env", "MY_SEARCH_KEY")
	for auth, want := range map[string]int{"": 401, "Bearer wrong": 401, "Bearer " + key: 200, "bearer " + key: 200, "BEARER " + key: 200, "Basic " + key: 401} {
		req, _ := http.NewRequest("GET", base+"/v1/search?q="+url.QueryEscape("fever"), nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("Authorization %q: %d, want %d", auth, resp.StatusCode, want)
		}
	}
	t.Setenv(DefaultKeyEnv, key)
	_, stderr, code := r2med(t, "", "search", "--server", base, "fever")
	if code != 0 {
		t.Errorf("search --server with $%s: %s", DefaultKeyEnv, stderr)
	}
}

// TestServeSearchRefusesGARWithoutStyle: a service started with
// --gar-model over a corpus whose task has no prompt style refuses to
// start (rather than answer every expansion 400), naming the flag; with
// --gar-style it starts.
func TestServeSearchRefusesGARWithoutStyle(t *testing.T) {
	task, err := demo.Load()
	if err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(t.TempDir(), "mycorpus")
	writeBEIR(t, data, task.Corpus, task)
	idx := filepath.Join(t.TempDir(), "my.idx")
	if _, stderr, code := r2med(t, "", "index", "build", "--quiet", "--data", data, "--out", idx); code != 0 {
		t.Fatalf("index build: %s", stderr)
	}
	args := []string{"serve-search", "--addr", "127.0.0.1:0", "--index", idx, "--gar-model", "m", "--gar-base-url", "http://127.0.0.1:9/v1", "--no-cache"}
	_, stderr, code := r2med(t, "", args...)
	if code == 0 || !strings.Contains(stderr, "expansions (--gar-model) cannot prompt for index my") || !strings.Contains(stderr, "--gar-style") {
		t.Errorf("no style: exit %d, %s", code, stderr)
	}
	serveSearch(t, "--index", idx, "--gar-model", "m", "--gar-base-url", "http://127.0.0.1:9/v1", "--no-cache", "--gar-style", "exam")
}

// TestServeSearchRollsOutIndexes: the documented way to roll out an
// index — write it elsewhere, rename it over the served file — is picked
// up while serving; a file overwritten in place (cp) never gives a wrong
// answer nor crashes the service; SIGHUP reopens every file.
func TestServeSearchRollsOutIndexes(t *testing.T) {
	dir := t.TempDir()
	live := filepath.Join(dir, "live.idx")
	built := map[string]string{}
	for _, scheme := range []string{"r2med", "lucene", "robertson"} {
		built[scheme] = filepath.Join(t.TempDir(), scheme+".idx")
		if _, stderr, code := r2med(t, "", "index", "build", "--quiet", "--task", "demo", "--bm25", scheme, "--out", built[scheme]); code != 0 {
			t.Fatalf("index build: %s", stderr)
		}
	}
	q := "crushing chest pain radiating to the jaw"
	score := map[string]float64{}
	for scheme, path := range built {
		svc, err := searchapi.Open(context.Background(), []searchapi.IndexFile{{Name: scheme, Path: path}}, searchapi.Options{})
		if err != nil {
			t.Fatal(err)
		}
		res, err := svc.Search(context.Background(), searchapi.Request{Query: q, K: 1})
		svc.Close()
		if err != nil {
			t.Fatal(err)
		}
		score[scheme] = res.Hits[0].Score
	}
	put := func(scheme, dst string) {
		b, err := os.ReadFile(built[scheme])
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, b, 0o644); err != nil { // as cp: truncate, write
			t.Fatal(err)
		}
	}
	put("r2med", live)
	base, logs, _ := serveSearchLog(t, "--index", live)
	c := &searchapi.Client{BaseURL: base}
	// wait asks until the answer is the want file's; every answer on the
	// way must be one of the files' or a 503.
	wait := func(step, want string, allowed ...string) {
		t.Helper()
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			res, err := c.Search(context.Background(), searchapi.SearchBody{Query: &q, K: 1, Snippet: new(0)})
			var e *searchapi.Error
			switch {
			case err == nil && res[0].Hits[0].Score == score[want]:
				return
			case err == nil:
				ok := false
				for _, a := range allowed {
					ok = ok || res[0].Hits[0].Score == score[a]
				}
				if !ok {
					t.Fatalf("%s: score %v is no file's answer", step, res[0].Hits[0].Score)
				}
			case errors.As(err, &e) && e.Status == 503:
			default:
				t.Fatalf("%s: %v", step, err)
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: never answered from the %s file", step, want)
			}
		}
	}
	wait("served", "r2med")
	put("lucene", filepath.Join(dir, ".next.idx"))
	if err := os.Rename(filepath.Join(dir, ".next.idx"), live); err != nil {
		t.Fatal(err)
	}
	wait("renamed over", "lucene", "r2med")
	put("robertson", live) // cp robertson.idx live.idx: once a SIGBUS or all scores 0
	wait("overwritten in place", "robertson", "lucene")
	if !hangUp(t) {
		return
	}
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(logs(), "SIGHUP: reopened every index file"); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("SIGHUP: %s", logs())
		}
	}
	wait("after SIGHUP", "robertson")
}

// `r2med search` wraps each snippet to $COLUMNS under its hit: no line
// wider, and the same words at every width.
func TestSearchWrapsToWidth(t *testing.T) {
	idx := filepath.Join(t.TempDir(), "demo.idx")
	if _, stderr, code := r2med(t, "", "index", "build", "--quiet", "--task", "demo", "--out", idx); code != 0 {
		t.Fatalf("index build: %s", stderr)
	}
	var texts []string
	for _, width := range []int{40, 72, 120, 400} {
		t.Setenv("COLUMNS", strconv.Itoa(width))
		out, stderr, code := r2med(t, "", "search", "--index", idx, "-k", "1", "vitamin C deficiency scurvy")
		if code != 0 {
			t.Fatalf("search: %s", stderr)
		}
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		if !strings.HasSuffix(lines[0], `1 hit · "vitamin C deficiency scurvy"`) || len(lines) < 4 {
			t.Fatalf("COLUMNS=%d:\n%s", width, out)
		}
		var words []string
		for _, l := range lines[2 : len(lines)-1] {
			if n := utf8.RuneCountInString(l); n > width && strings.Contains(strings.TrimSpace(l), " ") {
				t.Errorf("COLUMNS=%d: a line of %d columns: %q", width, n, l)
			}
			if !strings.HasPrefix(l, "      ") {
				t.Errorf("COLUMNS=%d: line %q not under its hit", width, l)
			}
			words = append(words, strings.Fields(l)...)
		}
		texts = append(texts, strings.Join(words, " "))
		if !strings.Contains(texts[len(texts)-1], "**Scurvy** is caused by **vitamin** **C** **deficiency**") {
			t.Errorf("COLUMNS=%d: snippet %q", width, texts[len(texts)-1])
		}
	}
	for i := range texts[1:] {
		if texts[i+1] != texts[0] {
			t.Errorf("the words differ with the width:\n%s\n%s", texts[0], texts[i+1])
		}
	}
}
