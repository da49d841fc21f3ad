package searchapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/r2med/r2med/bm25"
	"github.com/r2med/r2med/dataset"
	"github.com/r2med/r2med/demo"
	"github.com/r2med/r2med/embed/embedtest"
	"github.com/r2med/r2med/index"
	"github.com/r2med/r2med/internal/httpserve"
	"github.com/r2med/r2med/internal/yamlx"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/pipeline"
	"github.com/r2med/r2med/retrieve"
	"github.com/r2med/r2med/searchapi"
	"github.com/r2med/r2med/vector"
)

const shared = "../../shared/data"

// withShared reports whether the shared reference data is there; under
// R2MED_CI=1 its absence fails the test.
func withShared(t testing.TB) bool {
	t.Helper()
	if _, err := os.Stat(shared); err != nil {
		if os.Getenv("R2MED_CI") == "1" {
			t.Fatalf("shared reference data not found at %s: %v", shared, err)
		}
		t.Logf("shared reference data not found at %s (NFCorpus cases skipped): %v", shared, err)
		return false
	}
	return true
}

func demoTask(t testing.TB) *ir.Task {
	t.Helper()
	task, err := demo.Load()
	if err != nil {
		t.Fatal(err)
	}
	return task
}

func nfcorpus(t testing.TB) *ir.Task {
	t.Helper()
	task, err := dataset.Load(filepath.Join(shared, "nfcorpus"), dataset.Options{Split: "test"})
	if err != nil {
		t.Fatal(err)
	}
	return task
}

// tasks are the demo task and, when the shared data is there, NFCorpus's
// test split.
func tasks(t testing.TB) []*ir.Task {
	ts := []*ir.Task{demoTask(t)}
	if withShared(t) {
		ts = append(ts, nfcorpus(t))
	}
	return ts
}

// bm25File writes task's BM25 index in the scheme, as r2med index build
// does, and returns its path.
func bm25File(t testing.TB, dir string, task *ir.Task, sc bm25.Scheme, dense *denseParts) string {
	t.Helper()
	ix, err := index.BuildBM25(task.Corpus, "", bm25.DefaultParams(sc), bm25.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := index.Contents{Docs: task.Corpus, Source: map[string]any{"task": task.Name}, BM25: ix, Analyzer: "lucene-english"}
	if dense != nil {
		c.Dense, c.Quantized, c.Recipe = dense.flat, dense.quantized, dense.recipe
	}
	path := filepath.Join(dir, fmt.Sprintf("%s-%s.idx", task.Name, sc))
	if err := index.Write(path, c); err != nil {
		t.Fatal(err)
	}
	return path
}

// denseParts are the vectors of a corpus and the recipe that made them.
type denseParts struct {
	flat      *vector.Flat
	quantized []string
	recipe    map[string]any
}

// standIn is the dense retriever over a loopback embedding server whose
// vectors are a hash of the text (embedtest): deterministic, so run and
// the service embed alike.
func standIn(srv *embedtest.Server) retrieve.Dense {
	return retrieve.Dense{Model: "stand-in", Backend: "openai", BaseURLs: yamlx.Strings{srv.URL}}
}

// denseFile embeds task's corpus with spec's recipe exactly as the dense
// retriever does (retrieve.Dense.CorpusVectors) and writes an index
// holding the vectors with the recipe, and BM25 postings too when
// withBM25.
func denseFile(t testing.TB, dir string, task *ir.Task, spec retrieve.Dense, quantized []string, withBM25 bool) string {
	t.Helper()
	flat, err := spec.CorpusVectors(context.Background(), task, retrieve.Env{})
	if err != nil {
		t.Fatal(err)
	}
	recipe := spec.Describe() // never the base URL; the service is told it
	parts := &denseParts{flat: flat, quantized: quantized, recipe: recipe}
	if withBM25 {
		return bm25File(t, dir, task, bm25.R2MED, parts)
	}
	c := index.Contents{Docs: task.Corpus, Source: map[string]any{"task": task.Name}, Dense: flat, Quantized: quantized, Recipe: recipe}
	path := filepath.Join(dir, task.Name+"-dense-"+strings.Join(quantized, "-")+".idx")
	if err := index.Write(path, c); err != nil {
		t.Fatal(err)
	}
	return path
}

// running is a service on a loopback port, behind the handler
// serve-search serves.
type running struct {
	svc    *searchapi.Service
	url    string
	addr   string
	client *searchapi.Client
}

func start(t testing.TB, files []searchapi.IndexFile, opt searchapi.Options, ho searchapi.HandlerOptions) *running {
	t.Helper()
	svc, err := searchapi.Open(context.Background(), files, opt)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ho.Addr = ln.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- httpserve.Serve(ctx, ln, svc.Handler(ho), httpserve.Timeouts{}) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("shutdown: %v", err)
		}
		svc.Close()
	})
	url := "http://" + ln.Addr().String()
	return &running{svc: svc, url: url, addr: ln.Addr().String(), client: &searchapi.Client{BaseURL: url, Key: ho.Key}}
}

func one(path string) []searchapi.IndexFile {
	return []searchapi.IndexFile{{Name: strings.TrimSuffix(filepath.Base(path), searchapi.Ext), Path: path}}
}

// runOf is what `r2med run` gives: the pipeline run in memory.
func runOf(t testing.TB, task *ir.Task, cfg pipeline.Config) ir.Run {
	t.Helper()
	out, err := pipeline.Run(context.Background(), task, cfg, pipeline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return out.Run
}

// sameHits fails unless got is want exactly: ids, order and scores to the
// bit.
func sameHits(t testing.TB, label string, want []ir.Hit, got []searchapi.Hit) bool {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d hits, run has %d", label, len(got), len(want))
		return false
	}
	for i, h := range got {
		if h.ID != want[i].DocID || h.Score != want[i].Score || h.Rank != i+1 {
			t.Errorf("%s: hit %d is %s %v (rank %d), run has %s %v", label, i+1, h.ID, h.Score, h.Rank, want[i].DocID, want[i].Score)
			return false
		}
	}
	return true
}

// searchAll asks the service for every query of task, in batches of at
// most 100 over POST, and returns the results by query id.
func searchAll(t testing.TB, r *running, task *ir.Task, body searchapi.SearchBody) map[string]*searchapi.Result {
	t.Helper()
	out := map[string]*searchapi.Result{}
	for lo := 0; lo < len(task.Queries); lo += 100 {
		b := body
		b.Queries = nil
		for _, q := range task.Queries[lo:min(lo+100, len(task.Queries))] {
			b.Queries = append(b.Queries, searchapi.QueryItem{ID: q.ID, Query: q.Text})
		}
		res, err := r.client.Search(context.Background(), b)
		if err != nil {
			t.Fatal(err)
		}
		for i, q := range b.Queries {
			if res[i].ID != q.ID {
				t.Fatalf("batch answer %d is for %q, asked %q", i, res[i].ID, q.ID)
			}
			out[q.ID] = res[i]
		}
	}
	return out
}

// getJSON fetches url and decodes a JSON answer; it returns the status.
func getJSON(t testing.TB, url string, out any) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if out != nil {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			t.Fatalf("GET %s: %v", url, err)
		}
	}
	return resp.StatusCode
}

// chatServer is a loopback OpenAI-compatible chat server whose answer is
// a function of the prompt, counting the requests it answers.
func chatServer(t testing.TB, calls *atomic.Int64) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		var req struct {
			Messages []struct{ Role, Content string }
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		user := req.Messages[len(req.Messages)-1].Content
		f := strings.Fields(user)
		answer := "Hypothetical passage: " + strings.Join(f[len(f)/3:len(f)/3+min(len(f)/3, 12)], " ")
		json.NewEncoder(w).Encode(map[string]any{"choices": []map[string]any{{"message": map[string]any{"role": "assistant", "content": answer}, "finish_reason": "stop"}}})
	}))
	t.Cleanup(srv.Close)
	return srv
}

// teiServer is a loopback TEI reranker scoring each text by a hash of
// query and text.
func teiServer(t testing.TB) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Query string   `json:"query"`
			Texts []string `json:"texts"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || !strings.HasSuffix(r.URL.Path, "/rerank") {
			http.Error(w, fmt.Sprint("bad request ", r.URL.Path, err), 400)
			return
		}
		out := make([]map[string]any, len(req.Texts))
		for i, tx := range req.Texts {
			h := fnv.New32a()
			h.Write([]byte(req.Query + "\x00" + tx))
			out[i] = map[string]any{"index": i, "score": float64(h.Sum32()%100000) / 1000}
		}
		json.NewEncoder(w).Encode(out)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// statusOf is the HTTP status a client error carries.
func statusOf(err error) int {
	var e *searchapi.Error
	if errors.As(err, &e) {
		return e.Status
	}
	return 0
}
