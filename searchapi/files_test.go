package searchapi_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/r2med/r2med/analysis"
	"github.com/r2med/r2med/bm25"
	"github.com/r2med/r2med/embed/embedtest"
	"github.com/r2med/r2med/highlight"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/searchapi"
)

// answers is what a service over one file says to each query (top 5,
// ids and scores): the answers a file must give once it is served.
func answers(t *testing.T, path string, qs []ir.Query) map[string]string {
	t.Helper()
	svc, err := searchapi.Open(context.Background(), []searchapi.IndexFile{{Name: "live", Path: path}}, searchapi.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	out := map[string]string{}
	for _, q := range qs {
		res, err := svc.Search(context.Background(), searchapi.Request{Query: q.Text, K: 5, Snippet: noSnippet()})
		if err != nil {
			t.Fatal(err)
		}
		out[q.Text] = hitsKey(res.Hits)
	}
	return out
}

func hitsKey(hs []searchapi.Hit) string {
	b, _ := json.Marshal(hs)
	return string(b)
}

// copyOver writes src's bytes into dst in place, as cp does: the open
// file is truncated, then written.
func copyOver(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, dst, b)
}

// TestServingSurvivesReplacedFiles: an index file overwritten in place
// by a smaller or a larger one, truncated, or renamed over while it is
// served never crashes the service nor gives a wrong answer: each request
// gets the old file's answer, the new file's, or 503 with Retry-After
// while the file is unreadable (and /healthz says degraded); once a whole
// file is in place the service answers from it.
func TestServingSurvivesReplacedFiles(t *testing.T) {
	task := demoTask(t)
	dir := t.TempDir()
	big := bm25File(t, dir, task, bm25.R2MED, nil)
	small := task
	small.Corpus = task.Corpus[:25]
	smallDir := t.TempDir()
	smaller := bm25File(t, smallDir, small, bm25.Lucene, nil)
	qs := task.Queries[:8]
	want := map[string]map[string]string{"big": answers(t, big, qs), "small": answers(t, smaller, qs)}

	live := filepath.Join(t.TempDir(), "live.idx")
	copyOver(t, big, live)
	svc := start(t, []searchapi.IndexFile{{Name: "live", Path: live}}, searchapi.Options{}, searchapi.HandlerOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go svc.svc.Watch(ctx, 20*time.Millisecond)

	// ask sends every query and requires each answer to be from one of
	// the files allowed, or a 503 with Retry-After; it reports whether
	// all came from the file expected.
	ask := func(step, expect string, allowed ...string) bool {
		t.Helper()
		all := true
		for _, q := range qs {
			resp, err := http.Get(svc.url + "/v1/search?k=5&snippet=0&q=" + url.QueryEscape(q.Text))
			if err != nil {
				t.Fatalf("%s: %v (did the service die?)", step, err)
			}
			var res searchapi.Result
			json.NewDecoder(resp.Body).Decode(&res)
			resp.Body.Close()
			switch resp.StatusCode {
			case 200:
				got := hitsKey(res.Hits)
				from := ""
				for _, f := range allowed {
					if want[f][q.Text] == got {
						from = f
					}
				}
				if from == "" {
					t.Fatalf("%s: %q answered %s, which neither file gives", step, q.Text, got)
				}
				all = all && from == expect
			case 503:
				if resp.Header.Get("Retry-After") == "" {
					t.Errorf("%s: 503 without Retry-After", step)
				}
				all = false
			default:
				t.Fatalf("%s: status %d", step, resp.StatusCode)
			}
		}
		return all
	}
	settle := func(step, expect string, allowed ...string) {
		t.Helper()
		for deadline := time.Now().Add(15 * time.Second); !ask(step, expect, allowed...); {
			if time.Now().After(deadline) {
				t.Fatalf("%s: the service never answered from the %s file", step, expect)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	health := func() (int, searchapi.Health) {
		resp, err := http.Get(svc.url + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var h searchapi.Health
		json.NewDecoder(resp.Body).Decode(&h)
		return resp.StatusCode, h
	}

	settle("served", "big", "big")
	copyOver(t, smaller, live) // cp smaller.idx live.idx: was SIGBUS
	settle("overwritten by a smaller file", "small", "big", "small")
	copyOver(t, big, live) // cp larger.idx live.idx: was 200 with all scores 0
	settle("overwritten by a larger file", "big", "big", "small")

	// Truncated: unreadable until a whole file is renamed over it.
	if err := os.Truncate(live, 1000); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // Watch tries, and fails, to open it again
	ask("truncated", "none", "big")
	if code, h := health(); code != 503 || h.Status != "degraded" || len(h.Problems) == 0 || !strings.Contains(strings.Join(h.Problems, " "), "truncated") {
		t.Errorf("truncated: /healthz %d %+v, want 503 degraded naming the problem", code, h)
	}
	if code, _, msg := get(t, svc.url+"/v1/search?q=fever"); code != 503 || !strings.Contains(msg, "live.idx") {
		t.Errorf("truncated: %d %s, want 503 naming the file", code, msg)
	}
	next := filepath.Join(filepath.Dir(live), ".next.idx")
	copyOver(t, smaller, next)
	if err := os.Rename(next, live); err != nil { // the way to roll out an index
		t.Fatal(err)
	}
	settle("renamed over", "small", "small")
	if code, h := health(); code != 200 || h.Status != "ok" {
		t.Errorf("after the rename: /healthz %d %+v", code, h)
	}

	// A rename while requests are under way: they finish on the old
	// mapping (answers from either file, never an error), and Reload
	// (SIGHUP) swaps at once.
	copyOver(t, big, next)
	if err := os.Rename(next, live); err != nil {
		t.Fatal(err)
	}
	if err := svc.svc.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !ask("reloaded", "big", "big") {
		t.Error("after Reload the service still answers from the old file")
	}

	// Renamed away (mv live.idx old.idx, the new file not yet moved
	// in): the open copy is whole and keeps answering, every request,
	// with /healthz degraded saying so; where the rename's change time
	// was taken for an overwrite in place, every request was 503 "changed
	// in place" or "no such file".
	away := filepath.Join(filepath.Dir(live), "old.idx")
	if err := os.Rename(live, away); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // Watch tries, and fails, to open the path again
	for i := 0; i < 3; i++ {
		if !ask("renamed away", "big", "big") {
			t.Fatal("renamed away: the service stopped answering from the whole copy it has open")
		}
	}
	if code, h := health(); code != 503 || h.Status != "degraded" || !strings.Contains(strings.Join(h.Problems, " "), "serving the copy opened before") {
		t.Errorf("renamed away: /healthz %d %+v, want degraded, serving the copy opened before", code, h)
	}
	copyOver(t, smaller, next)
	if err := os.Rename(next, live); err != nil {
		t.Fatal(err)
	}
	settle("moved in after the rename away", "small", "big", "small")
	if code, h := health(); code != 200 || h.Status != "ok" {
		t.Errorf("after the new file was moved in: /healthz %d %+v", code, h)
	}
}

// TestHealthDegradedOnCorruptTexts: a file whose documents' texts fail
// their checksum is served (its postings are whole) but /healthz says
// degraded, naming the section, and snippets fail with that message.
func TestHealthDegradedOnCorruptTexts(t *testing.T) {
	task := demoTask(t)
	path := bm25File(t, t.TempDir(), task, bm25.R2MED, nil)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Flip a byte inside docs.text (found through the section table).
	n := int(binary.LittleEndian.Uint32(b[12:]))
	for i := range n {
		e := b[24+48*i:]
		if strings.TrimRight(string(e[:24]), "\x00") == "docs.text" {
			off := binary.LittleEndian.Uint64(e[24:])
			b[off+10] ^= 0x20
		}
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	r := start(t, one(path), searchapi.Options{}, searchapi.HandlerOptions{})
	resp, err := http.Get(r.url + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	var h searchapi.Health
	json.NewDecoder(resp.Body).Decode(&h)
	resp.Body.Close()
	if resp.StatusCode != 503 || h.Status != "degraded" || len(h.Problems) != 1 || !strings.Contains(h.Problems[0], "section docs.text: checksum mismatch") {
		t.Errorf("/healthz: %d %+v, want 503 degraded naming docs.text", resp.StatusCode, h)
	}
	if code, _, _ := get(t, r.url+"/v1/search?q=fever&snippet=0"); code != 200 {
		t.Errorf("rankings need no texts: %d", code)
	}
	if code, _, msg := get(t, r.url+"/v1/search?q=fever"); code != 500 || !strings.Contains(msg, "docs.text") {
		t.Errorf("snippets: %d %s", code, msg)
	}
}

// TestSnippetsAsAnalyzed: every hit's snippet and matched terms — marked
// from the tokens the file stores of each document's start, analyzed a
// window past them, or read from the postings — are exactly what
// analyzing the whole text gives (highlight.Snippet), for every query of
// the demo task and NFCorpus, at snippet lengths inside and past what is
// stored, and with dense-only retrieval, whose words come from a BM25
// part of the same corpus.
func TestSnippetsAsAnalyzed(t *testing.T) {
	srv := embedtest.NewServer(t, embedtest.Options{Dim: 16})
	for _, task := range tasks(t) {
		dir := t.TempDir()
		files := []searchapi.IndexFile{{Name: "x", Path: denseFile(t, dir, task, standIn(srv), nil, true)}}
		opt := searchapi.Options{Dense: searchapi.DenseOptions{BaseURLs: []string{srv.URL}}}
		r := start(t, files, opt, searchapi.HandlerOptions{})
		// Vectors alone: no postings say which words a document holds.
		alone := start(t, []searchapi.IndexFile{{Name: "d", Path: denseFile(t, dir, task, standIn(srv), nil, false)}}, opt, searchapi.HandlerOptions{})
		an, err := analysis.Get("")
		if err != nil {
			t.Fatal(err)
		}
		hl := highlight.New(an)
		docs := map[string]string{}
		for _, d := range task.Corpus {
			docs[d.ID] = d.Text
		}
		qs := task.Queries
		if len(qs) > 60 {
			qs = qs[:60]
		}
		for _, retr := range []string{"x", "x:dense", "d"} {
			c := r.client
			if retr == "d" {
				c = alone.client
			}
			for _, n := range []int{40, 300, 1500} {
				body := searchapi.SearchBody{K: 10, Snippet: &n, Retrievers: []string{retr}}
				for _, q := range qs {
					body.Queries = append(body.Queries, searchapi.QueryItem{ID: q.ID, Query: q.Text})
				}
				res, err := c.Search(context.Background(), body)
				if err != nil {
					t.Fatal(err)
				}
				for i, q := range qs {
					terms := hl.Terms(q.Text)
					for _, h := range res[i].Hits {
						segs, found, cut := hl.Snippet(docs[h.ID], terms, n)
						var want []string
						for _, term := range hl.TermList(q.Text) {
							if slices.Contains(found, term) {
								want = append(want, term)
							}
						}
						if !slices.Equal(h.Snippet, segs) || h.Truncated != cut || !slices.Equal(h.Matched, want) {
							t.Fatalf("%s %s n=%d, query %s, hit %s:\ngot  %+v %v %v\nwant %+v %v %v", task.Name, retr, n, q.ID, h.ID, h.Snippet, h.Truncated, h.Matched, segs, cut, want)
						}
					}
				}
			}
		}
	}
}
