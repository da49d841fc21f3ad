package main

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/r2med/r2med/cache"
	"github.com/r2med/r2med/results"
)

// evaluationTime is the one line of results.json that is a clock reading
// (R2MED's "evaluation_time": minutes to two decimals), not a number the
// pipeline computes.
var evaluationTime = regexp.MustCompile(`(?m)^  "evaluation_time": .*\n`)

// TestReplayFromExportedCache makes a run that calls every kind of model
// server — embeddings (dense, fused with BM25), an LLM generating query
// reasoning, an LLM reranker — then:
//   - reruns it over its kept stages (manifest removed): no request, and
//     the list of cache entries beside the new manifest is the same, so a
//     run made from reused stages can be shared as well;
//   - exports the entries the run used (cache export --manifest), imports
//     them into a fresh cache, and replays the run there with --replay
//     against servers that fail the test if contacted: run.trec is the
//     same byte for byte, results.json too but for its clock reading;
//   - replays against an empty cache: the run fails, naming replay, and
//     nothing is sent.
func TestReplayFromExportedCache(t *testing.T) {
	emb, texts := embedLoopback(t)
	chat := newChatLoopback(t)
	dir := t.TempDir()
	run := func(embedURL, chatURL, cacheDir, out string, extra ...string) []string {
		return append([]string{"run", "--task", "demo", "--retriever", "bm25,dense", "--model", "my-embedder", "--backend", "openai", "--base-url", embedURL,
			"--gar", "reasoning", "--gar-model", "g1", "--gar-base-url", chatURL + "/v1", "--gar-llm", "g1", "--gar-style", "case",
			"--rerank", "insertrank", "--rerank-model", "r1", "--rerank-url", chatURL + "/v1", "--rerank-depth", "10",
			"--cache", cacheDir, "--out", out, "--quiet"}, extra...)
	}
	first := filepath.Join(dir, "first")
	mustRun(t, run(emb.URL, chat.URL, filepath.Join(dir, "cache"), first)...)
	embedded, asked := texts.Load(), chat.total.Load()
	if embedded == 0 || asked == 0 {
		t.Fatalf("%d texts embedded, %d chat requests", embedded, asked)
	}
	keys := readFileString(t, filepath.Join(first, cache.KeysFile))
	if m := readManifest(t, first); m.Usage == nil || len(m.Usage.Models) != 3 {
		t.Fatalf("usage %+v: want embed, generate and rerank lines", m.Usage)
	}
	want := map[string]string{}
	for _, f := range []string{results.RunFile, results.ResultsFile} {
		want[f] = readFileString(t, filepath.Join(first, f))
	}

	// Rerun over the kept stages.
	for _, f := range []string{results.ManifestFile, results.RunFile, results.ResultsFile, cache.KeysFile} {
		os.Remove(filepath.Join(first, f))
	}
	mustRun(t, run(emb.URL, chat.URL, filepath.Join(dir, "cache"), first)...)
	if texts.Load() != embedded || chat.total.Load() != asked {
		t.Errorf("the rerun over kept stages embedded %d texts and asked %d times", texts.Load()-embedded, chat.total.Load()-asked)
	}
	if got := readFileString(t, filepath.Join(first, cache.KeysFile)); got != keys {
		t.Error("the rerun over kept stages lists other cache entries")
	}
	m := readManifest(t, first)
	if u := m.Usage; u == nil || u.Calls != 0 || u.Cached.Calls == 0 || len(u.Models) != 3 || m.Counts["rerank_llm_calls"] == 0 {
		t.Errorf("the rerun's usage %+v, counts %v: the kept stages' cost as cached", u, m.Counts)
	}

	share := filepath.Join(dir, "share.jsonl.gz")
	mustRun(t, "cache", "export", "--cache", filepath.Join(dir, "cache"), "--manifest", filepath.Join(first, results.ManifestFile), "--out", share)
	mustRun(t, "cache", "import", "--cache", filepath.Join(dir, "other"), share)
	refuse := refusingServer(t)
	replayed := filepath.Join(dir, "replayed")
	mustRun(t, run(refuse, refuse, filepath.Join(dir, "other"), replayed, "--replay")...)
	for f, w := range want {
		got := readFileString(t, filepath.Join(replayed, f))
		if f == results.ResultsFile {
			got, w = evaluationTime.ReplaceAllString(got, ""), evaluationTime.ReplaceAllString(w, "")
		}
		if got != w {
			t.Errorf("the replayed %s differs:\n%s\nwant\n%s", f, got, w)
		}
	}
	if u := readManifest(t, replayed).Usage; u.Calls != 0 || u.Cached.Calls == 0 {
		t.Errorf("replay usage %+v", u)
	}

	_, stderr, code := r2med(t, "", run(refuse, refuse, filepath.Join(dir, "empty"), filepath.Join(dir, "none"), "--replay")...)
	if code == 0 || !strings.Contains(stderr, "replay") {
		t.Errorf("replay from an empty cache: exit %d, %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "none", results.ManifestFile)); err == nil {
		t.Error("a failed replay left a manifest")
	}
	if _, stderr, code := r2med(t, "", run(refuse, refuse, filepath.Join(dir, "empty"), filepath.Join(dir, "none"), "--replay", "--no-cache")...); code == 0 || !strings.Contains(stderr, "--no-cache") {
		t.Errorf("--replay --no-cache: exit %d, %s", code, stderr)
	}
}

// TestReplayAfterResumedRerank: a rerank that fails midway keeps the
// queries it finished in its checkpoint, and the rerun resumes from it
// without asking for them again. The run's list of cache entries and its
// usage still cover every query — those of the interrupted attempt
// included — so the run replays from its exported entries.
func TestReplayAfterResumedRerank(t *testing.T) {
	srv := newChatLoopback(t)
	flaky, fail := refusingLastQuery(t, srv)
	dir := t.TempDir()
	out := filepath.Join(dir, "run")
	args := func(url, cacheDir, out string, extra ...string) []string {
		return append([]string{"run", "--task", "demo", "--rerank", "reasonrank", "--rerank-model", "r1", "--rerank-url", url + "/v1",
			"--rerank-depth", "10", "--retries", "0", "--cache", filepath.Join(dir, cacheDir), "--out", out}, extra...)
	}
	if _, stderr, code := r2med(t, "", args(flaky.URL, "cache", out, "--quiet")...); code == 0 || !strings.Contains(stderr, "refused") {
		t.Fatalf("the first attempt should fail on the last query: exit %d\n%s", code, stderr)
	}
	first := srv.total.Load()
	if first == 0 {
		t.Fatal("nothing was asked")
	}
	fail.Store(false)
	_, stderr, code := r2med(t, "", args(flaky.URL, "cache", out)...)
	if code != 0 || !strings.Contains(stderr, "resuming the rerank") {
		t.Fatalf("rerun: exit %d\n%s", code, stderr)
	}
	queries := int64(len(srv.task.Queries))
	if srv.total.Load() != queries {
		t.Errorf("%d requests over both attempts, want one per query (%d)", srv.total.Load(), queries)
	}
	m := readManifest(t, out)
	if u := m.Usage; u == nil || u.Calls+u.Cached.Calls != queries {
		t.Errorf("usage %+v: want every query's answer counted", m.Usage)
	}
	keys, err := cache.ReadKeys(filepath.Join(out, cache.KeysFile))
	if err != nil || int64(len(keys)) != queries {
		t.Errorf("%d cache entries listed (%v), want %d", len(keys), err, queries)
	}
	for _, f := range []string{"rerank.partial", "rerank.partial.calls.json", "rerank.partial.cache-keys.tsv.gz"} {
		if _, err := os.Stat(filepath.Join(out, "stages", f)); err == nil {
			t.Errorf("stages/%s was left behind", f)
		}
	}
	share := filepath.Join(dir, "share.jsonl.gz")
	mustRun(t, "cache", "export", "--cache", filepath.Join(dir, "cache"), "--manifest", out, "--out", share)
	mustRun(t, "cache", "import", "--cache", filepath.Join(dir, "other"), share)
	replayed := filepath.Join(dir, "replayed")
	mustRun(t, args(refusingServer(t), "other", replayed, "--replay", "--quiet")...)
	if readFileString(t, filepath.Join(replayed, "run.trec")) != readFileString(t, filepath.Join(out, "run.trec")) {
		t.Error("the replay ranked otherwise")
	}
}

// refusingLastQuery is srv behind a server that refuses (400) every
// prompt holding the task's last query while fail is set (it starts
// set), so that a rerank stops with the other queries done.
func refusingLastQuery(t *testing.T, srv *chatLoopback) (*httptest.Server, *atomic.Bool) {
	var fail atomic.Bool
	fail.Store(true)
	flaky := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if fail.Load() && strings.Contains(string(body), srv.task.Queries[len(srv.task.Queries)-1].Text) {
			http.Error(w, "this query is refused", http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		srv.serve(w, r)
	}))
	t.Cleanup(flaky.Close)
	return flaky, &fail
}
