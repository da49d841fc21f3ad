package main

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/r2med/r2med/results"
	"github.com/r2med/r2med/trec"
)

// embedLoopback is an OpenAI-style /embeddings server (hashed character
// trigrams) counting the texts it embeds.
func embedLoopback(t *testing.T) (*httptest.Server, *atomic.Int64) {
	var texts atomic.Int64
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Input []string `json:"input"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		texts.Add(int64(len(req.Input)))
		type item struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		var data []item
		for i, text := range req.Input {
			v := make([]float32, 32)
			for j := 0; j+3 <= len(text); j++ {
				h := fnv.New32a()
				h.Write([]byte(text[j : j+3]))
				v[h.Sum32()%32]++
			}
			v[0] += 0.5
			data = append(data, item{i, v})
		}
		json.NewEncoder(w).Encode(map[string]any{"data": data})
	}))
	t.Cleanup(s.Close)
	return s, &texts
}

func readManifest(t *testing.T, dir string) *results.Manifest {
	t.Helper()
	m, err := results.ReadManifest(filepath.Join(dir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestSweepSharesRunsCacheAndDirectories: a sweep opens the embedding
// cache `r2med run` uses (a rerun embeds nothing), writes where `r2med
// run` writes ($R2MED_RESULTS/SYSTEM/TASK, one directory-name rule), so a
// run of the same system reuses the sweep's cell.
func TestSweepSharesRunsCacheAndDirectories(t *testing.T) {
	srv, texts := embedLoopback(t)
	dir := t.TempDir()
	root := filepath.Join(dir, "results")
	t.Setenv("R2MED_RESULTS", root)
	t.Setenv("R2MED_CACHE", filepath.Join(dir, "cache"))
	sweep := filepath.Join(dir, "sweep.yaml")
	os.WriteFile(sweep, []byte(fmt.Sprintf(`tasks: [demo]
pipelines:
  - name: "dense+bm25 / mine"
    retrieve: [{dense: {model: my-embedder, backend: openai, base_url: %q}}, {bm25: {}}]
`, srv.URL)), 0o644)
	stdout, stderr, code := r2med(t, "", "sweep", sweep, "--quiet")
	if code != 0 {
		t.Fatalf("sweep: exit %d: %s", code, stderr)
	}
	cell := filepath.Join(root, "dense+bm25_mine", "demo") // results.DirName("dense+bm25 / mine")
	if !strings.Contains(stdout, cell) {
		t.Fatalf("the cell should be in %s:\n%s", cell, stdout)
	}
	embedded := texts.Load()
	if embedded == 0 {
		t.Fatal("nothing was embedded")
	}
	// --overwrite redoes the cell; the embeddings come from the cache.
	if _, stderr, code := r2med(t, "", "sweep", sweep, "--quiet", "--overwrite"); code != 0 {
		t.Fatalf("second sweep: exit %d: %s", code, stderr)
	}
	if n := texts.Load() - embedded; n != 0 {
		t.Fatalf("the second sweep embedded %d texts again: the cache was not used", n)
	}
	if m := readManifest(t, cell); m.Counts["embeddings_computed"] != 0 || m.Counts["embeddings_cached"] == 0 {
		t.Errorf("cell counts %v", m.Counts)
	}
	// The same system from `r2med run` lands in the same directory and
	// reuses the sweep's outputs.
	stdout, stderr, code = r2med(t, "", "run", "--task", "demo", "--quiet", "--name", "dense+bm25 / mine",
		"--retriever", "dense,bm25", "--model", "my-embedder", "--backend", "openai", "--base-url", srv.URL)
	if code != 0 || !strings.Contains(stdout, "(unchanged, reused)") || !strings.Contains(stdout, cell) {
		t.Fatalf("run of the sweep's system: exit %d\n%s%s", code, stdout, stderr)
	}
}

// TestRunReuseIsVerified: a rerun reuses run.trec and results.json only
// when they are the files its manifest describes; stray temporary files
// of an interrupted run go; other settings into the same --out are
// refused without --overwrite.
func TestRunReuseIsVerified(t *testing.T) {
	out := filepath.Join(t.TempDir(), "demo")
	run := func(args ...string) (string, string, int) {
		return r2med(t, "", append([]string{"run", "--task", "demo", "--out", out}, args...)...)
	}
	if _, stderr, code := run("--quiet"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	orig, _ := os.ReadFile(filepath.Join(out, "run.trec"))
	m := readManifest(t, out)
	if len(m.OutputSHA256) != 2 || m.OutputSHA256["run.trec"] == "" {
		t.Fatalf("manifest output checksums %v", m.OutputSHA256)
	}
	// Another run.trec under the manifest (a kill between two renames):
	// not reused, redone.
	other, _ := trec.ReadRunFile(filepath.Join(out, "run.trec"))
	for qid, hits := range other {
		other[qid] = hits[len(hits)/2:]
	}
	if err := trec.WriteRunFile(filepath.Join(out, "run.trec"), other, "Lucene"); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(out, ".run.trec.tmp-12345"), []byte("half"), 0o644)
	stdout, stderr, code := run()
	if code != 0 || strings.Contains(stdout, "reused") {
		t.Fatalf("a changed run.trec was reused: exit %d\n%s%s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "not the ones its manifest describes") || !strings.Contains(stderr, "removed 1 temporary file") {
		t.Errorf("stderr should say why the run was redone and what was removed:\n%s", stderr)
	}
	if now, _ := os.ReadFile(filepath.Join(out, "run.trec")); string(now) != string(orig) {
		t.Error("run.trec was not rewritten")
	}
	if _, err := os.Stat(filepath.Join(out, ".run.trec.tmp-12345")); !os.IsNotExist(err) {
		t.Errorf("the stray temporary file is still there: %v", err)
	}
	if stdout, _, _ := run("--quiet"); !strings.Contains(stdout, "(unchanged, reused)") {
		t.Errorf("an intact run was not reused:\n%s", stdout)
	}
	// Other settings into the same --out: refused, then replaced with --overwrite.
	if _, stderr, code := run("--quiet", "--k1", "1.2"); code != 1 || !strings.Contains(stderr, "holds a run of bm25 on demo with other settings (k1 0.9 → 1.2)") || !strings.Contains(stderr, "--overwrite") {
		t.Fatalf("other settings: exit %d, stderr %q", code, stderr)
	}
	if now, _ := os.ReadFile(filepath.Join(out, "run.trec")); string(now) != string(orig) {
		t.Error("a refused run touched run.trec")
	}
	if _, stderr, code := run("--quiet", "--k1", "1.2", "--overwrite"); code != 0 {
		t.Fatalf("--overwrite: exit %d: %s", code, stderr)
	}
	if k1 := readManifest(t, out).Config["k1"]; k1 != 1.2 {
		t.Errorf("after --overwrite the manifest says k1 %v", k1)
	}
}

// TestRunFileNotInTask: a run:PATH retriever ranking queries or
// documents the task lacks is an error; --allow-missing-docs drops them
// with a counted warning, and the manifest's counts are those of the
// run.trec written.
func TestRunFileNotInTask(t *testing.T) {
	dir := t.TempDir()
	base := filepath.Join(dir, "base")
	if _, stderr, code := r2med(t, "", "run", "--task", "demo", "--out", base, "--quiet"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	run, err := trec.ReadRunFile(filepath.Join(base, "run.trec"))
	if err != nil {
		t.Fatal(err)
	}
	var some string
	for qid := range run {
		some = qid
		break
	}
	run["not-a-query"] = run[some]
	run[some] = append(run[some][:3:3], run[some][3:]...)
	run[some][0].DocID, run[some][1].DocID = "ghost-1", "ghost-2"
	stray := filepath.Join(dir, "stray.trec")
	if err := trec.WriteRunFile(stray, run, "elsewhere"); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	_, stderr, code := r2med(t, "", "run", "--task", "demo", "--retriever", "run:"+stray, "--out", out, "--quiet")
	if code != 1 || !strings.Contains(stderr, `1 query is not in task demo ("not-a-query")`) || !strings.Contains(stderr, `2 ranked documents are not in its corpus ("ghost-1", "ghost-2")`) || !strings.Contains(stderr, "--allow-missing-docs") {
		t.Fatalf("stray entries: exit %d, stderr %q", code, stderr)
	}
	_, stderr, code = r2med(t, "", "run", "--task", "demo", "--retriever", "run:"+stray, "--out", out, "--allow-missing-docs")
	if code != 0 || !strings.Contains(stderr, "warning:") || !strings.Contains(stderr, "dropped 1 query and 2 ranked documents") {
		t.Fatalf("--allow-missing-docs: exit %d, stderr %q", code, stderr)
	}
	m := readManifest(t, out)
	written, err := trec.ReadRunFile(filepath.Join(out, "run.trec"))
	if err != nil {
		t.Fatal(err)
	}
	hits := 0
	for _, h := range written {
		hits += len(h)
	}
	if _, ok := written["not-a-query"]; ok {
		t.Error("run.trec holds the query the task lacks")
	}
	if m.Counts["queries_ranked"] != len(written) || m.Counts["hits"] != hits || m.Counts["run_queries_not_in_task"] != 1 || m.Counts["run_hits_not_in_corpus"] != 2 {
		t.Errorf("manifest counts %v; run.trec has %d queries, %d hits", m.Counts, len(written), hits)
	}
}

// TestPipelineFileErrorsSpeakYAML: a misspelt key is reported with its
// line, the mapping it sits in and the key meant, never a Go type.
func TestPipelineFileErrorsSpeakYAML(t *testing.T) {
	p := filepath.Join(t.TempDir(), "p.yaml")
	os.WriteFile(p, []byte("retrieve:\n  - bm25:\n      schem: lucene\n"), 0o644)
	_, stderr, code := r2med(t, "", "run", "--task", "demo", "--pipeline", p, "--out", t.TempDir())
	if code != 1 || !strings.Contains(stderr, p+`: line 3: unknown key "schem" in bm25 (did you mean "scheme"?)`) {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	os.WriteFile(p, []byte("top_k: 10\nretrieve:\n  - bm25: {k1: high}\n"), 0o644)
	if _, stderr, _ := r2med(t, "", "run", "--task", "demo", "--pipeline", p, "--out", t.TempDir()); !strings.Contains(stderr, `line 3: k1 in bm25 must be a number, not "high"`) || strings.Contains(stderr, "float64") {
		t.Fatalf("stderr %q", stderr)
	}
}

// TestRunFlagsOverlayPipeline: flags given with --pipeline set the
// file's keys; a retriever's flag needs a retriever of its kind.
func TestRunFlagsOverlayPipeline(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "p.yaml")
	os.WriteFile(p, []byte("retrieve:\n  - bm25: {scheme: lucene}\n  - bm25: {scheme: robertson}\nfuse: {method: rrf, k: 100}\n"), 0o644)
	out := filepath.Join(dir, "out")
	stdout, stderr, code := r2med(t, "", "run", "--task", "demo", "--pipeline", p, "--k1", "1.1", "--top-k", "20", "--out", out, "--quiet")
	if code != 0 || !strings.Contains(stdout, "rrf(bm25-lucene,bm25-robertson)") {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	m := readManifest(t, out)
	rs := m.Config["retrievers"].([]any)
	if m.Config["top_k"] != 20.0 || rs[0].(map[string]any)["k1"] != 1.1 || rs[1].(map[string]any)["k1"] != 1.1 || m.Config["fusion"].(map[string]any)["k"] != 100.0 {
		t.Errorf("manifest config %v", m.Config)
	}
	if _, stderr, code := r2med(t, "", "run", "--task", "demo", "--retriever", "candidates:bm25", "--k1", "1", "--out", dir); code != 1 || !strings.Contains(stderr, "--k1 sets bm25 retrievers, and the pipeline has none") {
		t.Fatalf("--k1 without bm25: exit %d, stderr %q", code, stderr)
	}
	if _, stderr, code := r2med(t, "", "run", "--task", "demo", "--retriever", "bm52", "--out", dir); code != 1 || !strings.Contains(stderr, `did you mean "bm25"?`) {
		t.Fatalf("misspelt retriever: exit %d, stderr %q", code, stderr)
	}
}

// TestRunNameAndCommandLine: --name names the system; the manifest
// records the program by name and no credentials of a URL argument.
func TestRunNameAndCommandLine(t *testing.T) {
	srv, _ := embedLoopback(t)
	withCreds := strings.Replace(srv.URL, "http://", "http://alice:s3cret@", 1) + "/?api_key=k3y"
	out := filepath.Join(t.TempDir(), "out")
	args := []string{"run", "--task", "demo", "--retriever", "dense", "--model", "m", "--backend", "openai", "--base-url=" + withCreds,
		"--name", "my system", "--out", out, "--quiet", "--no-cache"}
	old := os.Args
	os.Args = append([]string{"/tmp/go-build123/b001/exe/r2med"}, args...)
	defer func() { os.Args = old }()
	stdout, stderr, code := r2med(t, "", args...)
	if code != 0 || !strings.Contains(stdout, "my system") {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	data, _ := os.ReadFile(filepath.Join(out, "manifest.json"))
	if strings.Contains(string(data), "s3cret") || strings.Contains(string(data), "k3y") || strings.Contains(string(data), "go-build") {
		t.Fatalf("the manifest leaks the command line:\n%s", data)
	}
	m := readManifest(t, out)
	if m.Command[0] != "r2med" || m.Name != "my system" {
		t.Errorf("command %q, name %q", m.Command, m.Name)
	}
	res, _ := os.ReadFile(filepath.Join(out, "results.json"))
	if !strings.Contains(string(res), `"model_name": "my system"`) {
		t.Errorf("results.json: %s", res)
	}
	if stdout, _, _ := r2med(t, "", "run", "--help"); !strings.Contains(stdout, "one task or all") || !strings.Contains(stdout, "--gar-style") {
		t.Error("run --help: one-liner or --gar-style missing")
	}
}

// TestRunRecordsDataPathPortably: a run made with a relative --data is
// found again from another working directory (compare loads its data
// through the manifest).
func TestRunRecordsDataPathPortably(t *testing.T) {
	work := t.TempDir()
	data := demoDir(t)
	if err := os.Rename(data, filepath.Join(work, "data")); err != nil {
		t.Fatal(err)
	}
	a, b := filepath.Join(work, "a"), filepath.Join(work, "b")
	t.Chdir(work)
	for out, extra := range map[string][]string{a: nil, b: {"--bm25", "robertson"}} {
		if _, stderr, code := r2med(t, "", append([]string{"run", "--data", "data", "--out", out, "--quiet"}, extra...)...); code != 0 {
			t.Fatalf("run: %s", stderr)
		}
	}
	m := readManifest(t, a)
	if m.Task.Source != filepath.Join(work, "data") || m.Task.SourceGiven != "data" {
		t.Errorf("manifest task %+v", m.Task)
	}
	t.Chdir(t.TempDir())
	if _, stderr, code := r2med(t, "", "compare", a, b); code != 0 {
		t.Fatalf("compare from another directory: exit %d: %s", code, stderr)
	}
}

// TestRunSaysHowDeepItsRunIs: a run cut above 100 documents per query
// reports Recall@100 and MAP@100 of what it holds (trec_eval's numbers for
// the file), and the summary says how many that is, reused too; a run of
// the whole corpus (the demo's 79 documents) needs no such line.
func TestRunSaysHowDeepItsRunIs(t *testing.T) {
	out := t.TempDir()
	stdout, stderr, code := r2med(t, "", "run", "--task", "demo", "--quiet", "--top-k", "10", "--out", filepath.Join(out, "k10"))
	if code != 0 {
		t.Fatal(stderr)
	}
	if !strings.Contains(stdout, "run.trec ranks at most 10 documents per query: Recall@100 and MAP@100 count those") {
		t.Errorf("a run of 10 says nothing of its depth:\n%s", stdout)
	}
	stdout, _, _ = r2med(t, "", "run", "--task", "demo", "--quiet", "--top-k", "10", "--out", filepath.Join(out, "k10"))
	if !strings.Contains(stdout, "(unchanged, reused)") || !strings.Contains(stdout, "ranks at most 10 documents") {
		t.Errorf("reused:\n%s", stdout)
	}
	res, err := results.ReadR2MED(filepath.Join(out, "k10", "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if r10, r100 := res.Test["recall_at_10"], res.Test["recall_at_100"]; r10 != r100 {
		t.Errorf("recall@10 %v, recall@100 %v of a run of 10", r10, r100)
	}
	stdout, stderr, code = r2med(t, "", "run", "--task", "demo", "--quiet", "--out", filepath.Join(out, "k100"))
	if code != 0 {
		t.Fatal(stderr)
	}
	if strings.Contains(stdout, "ranks at most") {
		t.Errorf("a run of 100:\n%s", stdout)
	}
}

// TestSummaryDigitsAreTrecEvals: the summary's four decimals are
// trec_eval's for the run file it wrote (r2med eval -c, byte-identical to
// trec_eval 9.0.8 elsewhere), fresh and reused, not the result file's
// five-decimal means rounded again: NFCorpus's top 10 has Recall@100
// 0.154649…, which results.json stores as 0.15465 and trec_eval prints
// as 0.1546.
func TestSummaryDigitsAreTrecEvals(t *testing.T) {
	needShared(t)
	data := filepath.Join(shared, "nfcorpus")
	dir := filepath.Join(t.TempDir(), "k10")
	for _, pass := range []string{"fresh", "reused"} {
		out, stderr, code := r2med(t, "", "run", "--data", data, "--split", "test", "--top-k", "10", "--quiet", "--out", dir)
		if code != 0 {
			t.Fatal(stderr)
		}
		ev, stderr, code := r2med(t, "", "eval", "-c", "-m", "ndcg_cut.10", "-m", "recall.100", "-m", "map_cut.100", "-m", "recip_rank", "-m", "P.10",
			filepath.Join(data, "qrels", "test.tsv"), filepath.Join(dir, "run.trec"))
		if code != 0 {
			t.Fatal(stderr)
		}
		want := map[string]string{}
		for _, line := range strings.Split(strings.TrimSpace(ev), "\n") {
			f := strings.Fields(line)
			want[f[0]] = f[2]
		}
		for label, m := range map[string]string{"nDCG@10": "ndcg_cut_10", "Recall@100": "recall_100", "MAP@100": "map_cut_100", "MRR": "recip_rank", "P@10": "P_10"} {
			if !strings.Contains(strings.SplitN(out, "\n", 3)[1]+" ", " "+label+" "+want[m]+" ") {
				t.Errorf("%s: the summary's %s is not trec_eval's %s:\n%s", pass, label, want[m], out)
			}
		}
	}
}
