package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/r2med/r2med/sweep"
)

func TestSweepCommand(t *testing.T) {
	dir := t.TempDir()
	sweep := filepath.Join(dir, "sweep.yaml")
	os.WriteFile(sweep, []byte(`tasks: [demo]
pipelines:
  - retrieve: [{bm25: {}}]
  - name: hybrid
    retrieve: [{bm25: {}}, {bm25: {scheme: robertson}}]
    fuse: {method: rrf, k: 100}
`), 0o644)
	out := filepath.Join(dir, "res")
	stdout, stderr, code := r2med(t, "", "sweep", sweep, "--out", out, "--quiet")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if strings.Count(stdout, "done ") != 2 || !strings.Contains(stdout, "2 cells in "+out) {
		t.Fatalf("first sweep printed:\n%s", stdout)
	}
	for _, p := range []string{"bm25/demo/results.json", "hybrid/demo/results.json", "hybrid/demo/stages/retrieve-1-bm25.trec"} {
		if _, err := os.Stat(filepath.Join(out, p)); err != nil {
			t.Errorf("missing %s: %v", p, err)
		}
	}
	stdout, _, code = r2med(t, "", "sweep", sweep, "--out", out, "--quiet")
	if code != 0 || strings.Count(stdout, "kept ") != 2 {
		t.Fatalf("second sweep should keep both cells:\n%s", stdout)
	}
	os.WriteFile(sweep, []byte("tasks: [demo]\npipelines: [{retrieve: [{run: missing.trec}]}]\n"), 0o644)
	stdout, stderr, code = r2med(t, "", "sweep", sweep, "--out", out, "--quiet")
	if code != 1 || !strings.Contains(stdout, "FAIL") || !strings.Contains(stderr, "1 of 1 cells failed") {
		t.Fatalf("failing cell: exit %d\n%s\n%s", code, stdout, stderr)
	}
}

// TestSweepCostsAndReplay: a sweep file's prices: and settings of calls
// to model servers reach every cell (a pipeline's own retries: win over
// the sweep's, flags over both), cells record their usage in dollars,
// and the sweep replays from its cache with --replay without asking.
func TestSweepCostsAndReplay(t *testing.T) {
	srv := newChatLoopback(t)
	dir := t.TempDir()
	t.Setenv("R2MED_CACHE", filepath.Join(dir, "cache"))
	os.WriteFile(filepath.Join(dir, "prices.yaml"), []byte("\"*\": {input: 1, output: 1}\n"), 0o644)
	sweepFile := filepath.Join(dir, "sweep.yaml")
	write := func(url string) {
		os.WriteFile(sweepFile, []byte(`tasks: [demo]
prices: prices.yaml
request_timeout: 5s
retries: 0
pipelines:
  - name: insertrank
    retrieve: [{bm25: {}}]
    rerank: {kind: insertrank, model: r1, base_url: `+url+`/v1, depth: 10, decimals: 4}
  - name: reasonrank
    retries: 2
    retrieve: [{bm25: {}}]
    rerank: {kind: reasonrank, model: r1, base_url: [`+url+`/v1], depth: 10}
`), 0o644)
	}
	write(srv.URL)
	out := filepath.Join(dir, "res")
	stdout, stderr, code := r2med(t, "", "sweep", sweepFile, "--out", out, "--quiet")
	if code != 0 || strings.Count(stdout, "done ") != 2 {
		t.Fatalf("sweep: exit %d\n%s%s", code, stdout, stderr)
	}
	asked := srv.total.Load()
	if asked != 2*15 {
		t.Errorf("%d requests, want 30", asked)
	}
	// The sweep sums its cells' calls and cost (it printed neither).
	if want := "model calls: 30 new (3000 prompt + 600 completion tokens), 0 answered from the cache"; !strings.Contains(stdout, want) || !strings.Contains(stdout, "cost: $0.0036 new, $0 of answers") {
		t.Errorf("the sweep's output lacks its calls (%q) or their cost:\n%s", want, stdout)
	}
	for _, cell := range []string{"insertrank", "reasonrank"} {
		m := readManifest(t, filepath.Join(out, cell, "demo"))
		if u := m.Usage; u == nil || u.USD == nil || !near(*u.USD, 15*120/1e6) {
			t.Errorf("%s: usage %+v", cell, m.Usage)
		}
	}
	s, err := sweep.Load(sweepFile)
	if err != nil {
		t.Fatal(err)
	}
	if r := s.Pipelines[0].Remote; r.Timeout.String() != "5s" || *r.Retries != 0 {
		t.Errorf("the sweep's settings did not reach the first pipeline: %+v", r)
	}
	if r := s.Pipelines[1].Remote; r.Timeout.String() != "5s" || *r.Retries != 2 {
		t.Errorf("the pipeline's own retries lost to the sweep's: %+v", r)
	}

	// Replay into fresh cells against a server that must not be called.
	write(refusingServer(t))
	stdout, stderr, code = r2med(t, "", "sweep", sweepFile, "--out", filepath.Join(dir, "replayed"), "--replay", "--retries", "0", "--quiet")
	if code != 0 || strings.Count(stdout, "done ") != 2 {
		t.Fatalf("replayed sweep: exit %d\n%s%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "model calls: 0 new (0 prompt + 0 completion tokens), 30 answered from the cache (3000 + 600 when made)") || !strings.Contains(stdout, "cost: $0 new, $0.0036 of answers from the cache") {
		t.Errorf("the replayed sweep's calls and cost:\n%s", stdout)
	}
	for _, cell := range []string{"insertrank", "reasonrank"} {
		if readFileString(t, filepath.Join(dir, "replayed", cell, "demo", "run.trec")) != readFileString(t, filepath.Join(out, cell, "demo", "run.trec")) {
			t.Errorf("%s: the replayed cell ranked otherwise", cell)
		}
	}
}

// TestRunRerankFleet spreads a reasoning reranker's requests over two
// servers given as a repeated --rerank-url.
func TestRunRerankFleet(t *testing.T) {
	a, b := newChatLoopback(t), newChatLoopback(t)
	dir := t.TempDir()
	mustRun(t, "run", "--task", "demo", "--rerank", "rank1", "--rerank-model", "r1", "--rerank-url", a.URL+"/v1", "--rerank-url", b.URL+"/v1",
		"--rerank-depth", "10", "--endpoint-concurrency", "2", "--no-cache", "--out", dir, "--quiet")
	if a.total.Load() == 0 || b.total.Load() == 0 || a.total.Load()+b.total.Load() != 150 {
		t.Errorf("requests %d and %d, want 150 spread over both", a.total.Load(), b.total.Load())
	}
}

// TestSweepIndex: a sweep's pipelines search index files by the index
// kind ({task} in the path), with the runs building in memory gives.
func TestSweepIndex(t *testing.T) {
	dir := t.TempDir()
	if _, stderr, code := r2med(t, "", "index", "build", "--quiet", "--task", "demo", "--bm25", "lucene", "--out", filepath.Join(dir, "demo.idx")); code != 0 {
		t.Fatal(stderr)
	}
	sweepFile := filepath.Join(dir, "sweep.yaml")
	os.WriteFile(sweepFile, []byte(`tasks: [demo]
pipelines:
  - retrieve: [{bm25: {scheme: lucene}}]
  - name: from-index
    retrieve: [{index: {path: '`+filepath.Join(dir, "{task}.idx")+`', part: bm25, scheme: lucene}}]
`), 0o644)
	out := filepath.Join(dir, "res")
	if stdout, stderr, code := r2med(t, "", "sweep", sweepFile, "--out", out, "--quiet"); code != 0 || strings.Count(stdout, "done ") != 2 {
		t.Fatalf("exit %d: %s%s", code, stdout, stderr)
	}
	want, err := os.ReadFile(filepath.Join(out, "bm25-lucene", "demo", "run.trec"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(out, "from-index", "demo", "run.trec"))
	if err != nil {
		t.Fatal(err)
	}
	// The named system's run tag is its name; the rankings are the same.
	if strings.ReplaceAll(string(got), " from-index\n", " bm25-lucene\n") != string(want) || len(want) == 0 {
		t.Errorf("the sweep's index cell ranks differently from its in-memory cell")
	}
}

// TestSweepSampledCorpus: a sweep over a sampled corpus (judgments of
// documents it lacks) fails its cells with the way out, and runs them when
// the sweep file says allow_missing_docs: true or --allow-missing-docs is
// given, as `r2med run --allow-missing-docs` would.
func TestSweepSampledCorpus(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "task")
	if err := os.CopyFS(data, os.DirFS("../../demo/data")); err != nil {
		t.Fatal(err)
	}
	q, err := os.OpenFile(filepath.Join(data, "qrels.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	q.WriteString(`{"q_id": "q1", "p_id": "not-in-the-sample", "score": 1}` + "\n")
	q.Close()
	sw := filepath.Join(dir, "sweep.yaml")
	body := "data: [task]\npipelines: [{retrieve: [{bm25: {}}]}]\n"
	os.WriteFile(sw, []byte(body), 0o644)
	out := filepath.Join(dir, "res")
	stdout, stderr, code := r2med(t, "", "sweep", sw, "--out", out, "--quiet")
	if code != 1 || !strings.Contains(stdout, "FAIL") || !strings.Contains(stderr, "--allow-missing-docs") || !strings.Contains(stderr, "allow_missing_docs: true") {
		t.Fatalf("sampled corpus without leave: exit %d\n%s\n%s", code, stdout, stderr)
	}
	stdout, stderr, code = r2med(t, "", "sweep", sw, "--out", out, "--quiet", "--allow-missing-docs")
	if code != 0 || strings.Count(stdout, "done ") != 1 {
		t.Fatalf("--allow-missing-docs: exit %d\n%s\n%s", code, stdout, stderr)
	}
	os.WriteFile(sw, []byte("allow_missing_docs: true\n"+body), 0o644)
	stdout, stderr, code = r2med(t, "", "sweep", sw, "--out", out, "--quiet")
	if code != 0 || strings.Count(stdout, "kept ") != 1 {
		t.Fatalf("allow_missing_docs: true should keep the cell just made:\n%s\n%s", stdout, stderr)
	}
	m, err := os.ReadFile(filepath.Join(out, "bm25", "task", "manifest.json"))
	if err != nil || !strings.Contains(string(m), `"allow_missing_docs": true`) {
		t.Errorf("the cell's manifest should say it allowed missing documents: %v\n%s", err, m)
	}
}
