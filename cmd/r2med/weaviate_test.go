package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/r2med/r2med/embed/embedtest"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/onnx/onnxtest"
	"github.com/r2med/r2med/results"
	"github.com/r2med/r2med/trec"
	"github.com/r2med/r2med/weaviate"
	"github.com/r2med/r2med/weaviate/weaviatetest"
)

// TestRunWeaviate is the "done when" on the demo task: a real
// Weaviate node and a loopback embedding server, the corpus pushed with
// its vectors by r2med index push, then r2med run --retriever
// weaviate:vector|hybrid|bm25 evaluated like every run, with the server's
// version and the collection's configuration in the manifest.
// weaviate:vector must rank as --retriever dense does with the same model.
func TestRunWeaviate(t *testing.T) {
	node := weaviatetest.Start(t, weaviatetest.Options{})
	emb := embedtest.NewServer(t, embedtest.Options{Dim: 16})
	u, _ := url.Parse(node.URL())
	tmp := t.TempDir()
	model := []string{"--model", "test-embedder", "--backend", "openai", "--base-url", emb.URL, "--cache", filepath.Join(tmp, "cache")}
	where := []string{"--weaviate-url", node.URL(), "--weaviate-grpc", node.GRPCAddr()}
	run := func(t *testing.T, out string, args ...string) (string, string, int) {
		t.Helper()
		return r2med(t, "", append([]string{"run", "--task", "demo", "--quiet", "--out", filepath.Join(tmp, out)}, args...)...)
	}
	push := func(coll string, args ...string) {
		t.Helper()
		out, errOut, code := r2med(t, "", append([]string{"index", "push", "--task", "demo", "--quiet", "--to", "weaviate://" + u.Host + "/" + coll, "--weaviate-grpc", node.GRPCAddr()}, args...)...)
		if code != 0 {
			t.Fatalf("push into %s: exit %d\n%s%s", coll, code, out, errOut)
		}
	}
	push("DemoVec", append(model, "--ef", "256")...)
	push("DemoText")

	_, errOut, code := run(t, "dense", append([]string{"--retriever", "dense"}, model...)...)
	if code != 0 {
		t.Fatalf("dense run: %s", errOut)
	}
	vecArgs := append(append([]string{"--retriever", "weaviate:vector", "--collection", "DemoVec"}, where...), model...)
	out, errOut, code := run(t, "vector", vecArgs...)
	if code != 0 {
		t.Fatalf("weaviate:vector run: exit %d\n%s%s", code, out, errOut)
	}
	dense := readRun(t, filepath.Join(tmp, "dense", "run.trec"))
	vec := readRun(t, filepath.Join(tmp, "vector", "run.trec"))
	if len(vec) != len(dense) {
		t.Fatalf("weaviate:vector answered %d queries, dense %d", len(vec), len(dense))
	}
	for qid, want := range dense {
		got := vec[qid]
		for i := range min(10, len(want)) {
			if i >= len(got) || got[i].DocID != want[i].DocID || math.Abs(got[i].Score-want[i].Score) > 1e-5 {
				t.Fatalf("query %s rank %d: weaviate:vector %v, dense %v", qid, i+1, got[:min(10, len(got))], want[:10])
			}
		}
	}

	m, err := results.ReadManifest(filepath.Join(tmp, "vector", results.ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(m.Config)
	for _, want := range []string{`"retriever":"weaviate"`, `"server_version":"` + weaviatetest.Version + `"`, `"collection_config":{`, `"ef":256`, `"corpus_digest":"`, `"model":"test-embedder"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("manifest config lacks %s: %s", want, b)
		}
	}

	// The same run again is reused; after the collection's ef changes it
	// is not the same run any more.
	if out, _, code := run(t, "vector", vecArgs...); code != 0 || !strings.Contains(out, "unchanged, reused") {
		t.Errorf("rerun: exit %d, %s", code, out)
	}
	c, err := weaviate.Open(weaviate.Config{URL: node.URL(), GRPC: node.GRPCAddr(), Collection: "DemoVec"})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.SetEF(context.Background(), 300); err != nil {
		t.Fatal(err)
	}
	if out, errOut, code := run(t, "vector", vecArgs...); code == 0 || strings.Contains(out, "unchanged, reused") {
		t.Errorf("rerun after the collection changed: exit %d, %s%s", code, out, errOut)
	}

	// Approximate search made explicit: the index in the manifest, ef for
	// the run (put back after), recall against exact search measured, and
	// one line in the summary.
	exactArgs := append(append([]string{"--retriever", "weaviate:vector", "--collection", "DemoVec", "--check-exact", "--ef", "12"}, where...), model...)
	out, errOut, code = run(t, "vector-ef", exactArgs...)
	if code != 0 {
		t.Fatalf("weaviate:vector --check-exact --ef 12: exit %d\n%s%s", code, out, errOut)
	}
	// A run of 100 asks for 100 hits, and Weaviate searches with as many
	// candidates at least: the summary says so, not ef 12 alone.
	if !strings.Contains(out, "weaviate:vector+test-embedder: approximate vector index (HNSW, ef 12, raised to 100 by the hits asked); recall@10 ") || !strings.Contains(out, "against exact search") {
		t.Errorf("summary of an approximate run:\n%s", out)
	}
	m, err = results.ReadManifest(filepath.Join(tmp, "vector-ef", results.ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	b, _ = json.Marshal(m.Config)
	for _, want := range []string{`"vector_index":{"distance":"cosine","dynamic_ef_factor":8,"dynamic_ef_max":500,"dynamic_ef_min":100,"ef":300,"ef_construction":128,"exact":false,"max_connections":32,"type":"hnsw"}`, `"ef":12`, `"check_exact":true`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("manifest config lacks %s: %s", want, b)
		}
	}
	if check, ok := m.Details["weaviate_exact_check"].(map[string]any); !ok || len(check["recall"].([]any)) != 2 {
		t.Errorf("manifest details lack the exact check: %v", m.Details["weaviate_exact_check"])
	}
	// The ef set for the run, and the collection's put back after, are
	// recorded as the nodes holding replicas confirmed them.
	for key, ef := range map[string]float64{"weaviate_ef_applied": 12, "weaviate_ef_restored": 300} {
		a, ok := m.Details[key].(map[string]any)
		if !ok || a["ef"] != ef || fmt.Sprint(a["nodes"]) != "["+node.Name+"]" || a["raft_index"] == nil {
			t.Errorf("manifest details: %s = %v, want ef %v confirmed on %s", key, m.Details[key], ef, node.Name)
		}
	}
	if vi, err := c.VectorIndex(context.Background()); err != nil || vi.EF != 300 {
		t.Errorf("the collection's ef after a run with --ef 12: %+v, %v (want its own, 300)", vi, err)
	}
	push("DemoFlat", append(model, "--vector-index", "flat")...)
	push("DemoFlat", model...) // the default index is not a setting given
	// Settings given for an existing collection that has others are
	// refused, named, not ignored.
	for _, c := range []struct {
		coll string
		args []string
		want string
	}{
		{"DemoFlat", append([]string{"--vector-index", "hnsw"}, model...), "vector index flat, not hnsw"},
		{"DemoText", []string{"--k1", "0.9", "--b", "0.4"}, "BM25 k1 1.2, b 0.75, not k1 0.9, b 0.4"},
		{"DemoVec", append([]string{"--ef-construction", "64"}, model...), "HNSW efConstruction 128, not 64"},
	} {
		_, errOut, code := r2med(t, "", append([]string{"index", "push", "--task", "demo", "--quiet", "--to", "weaviate://" + u.Host + "/" + c.coll, "--weaviate-grpc", node.GRPCAddr()}, c.args...)...)
		if code == 0 || !strings.Contains(errOut, c.want) {
			t.Errorf("push %v into %s: exit %d, %s; want refused: %s", c.args, c.coll, code, errOut, c.want)
		}
	}
	out, errOut, code = run(t, "flat", append(append([]string{"--retriever", "weaviate:vector", "--collection", "DemoFlat", "--check-exact"}, where...), model...)...)
	if code != 0 || !strings.Contains(out, "weaviate:vector+test-embedder: exact vector index (flat); recall@10 1.0000, recall@100 1.0000") {
		t.Errorf("flat index: exit %d\n%s%s", code, out, errOut)
	}
	if out, _, _ := run(t, "vector-ef", exactArgs...); !strings.Contains(out, "unchanged, reused") || !strings.Contains(out, ": approximate vector index (HNSW, ef 12, raised to 100 by the hits asked)") {
		t.Errorf("a reused approximate run's summary does not say so:\n%s", out)
	}

	for _, c := range []struct {
		name string
		args []string
	}{
		{"hybrid", append(append([]string{"--retriever", "weaviate:hybrid", "--collection", "DemoVec", "--alpha", "0.5", "--fusion", "rankedFusion"}, where...), model...)},
		{"bm25", append([]string{"--retriever", "weaviate:bm25", "--collection", "DemoText"}, where...)},
		{"fused", append(append([]string{"--retriever", "bm25,weaviate:bm25", "--collection", "DemoText"}, where...), "--fuse", "rrf")},
	} {
		out, errOut, code := run(t, c.name, c.args...)
		if code != 0 || !strings.Contains(out, "nDCG@10") {
			t.Errorf("%s: exit %d\n%s%s", c.name, code, out, errOut)
			continue
		}
		if r := readRun(t, filepath.Join(tmp, c.name, "run.trec")); len(r) != len(dense) {
			t.Errorf("%s answered %d queries, want %d", c.name, len(r), len(dense))
		}
		// The node runs Weaviate's default BM25 searcher, BlockMax WAND,
		// which leaves qualifying documents out: the summary says so.
		if !strings.Contains(out, "weaviate:"+map[string]string{"hybrid": "hybrid+test-embedder", "bm25": "bm25", "fused": "bm25"}[c.name]+": collection Demo") ||
			!strings.Contains(out, "BlockMax WAND searcher") {
			t.Errorf("%s: the summary does not say that BlockMax WAND answered BM25:\n%s", c.name, out)
		}
		if m, err := results.ReadManifest(filepath.Join(tmp, c.name, results.ManifestFile)); err != nil || fmt.Sprint(m.Details["weaviate_bm25_searcher"]) != "blockmax-wand" {
			t.Errorf("%s: manifest details lack the BM25 searcher: %v %v", c.name, m.Details["weaviate_bm25_searcher"], err)
		}
	}

	for _, c := range []struct {
		args []string
		want string
	}{
		{append([]string{"--retriever", "weaviate:vector", "--collection", "DemoText"}, append(where, model...)...), "holds no vectors"},
		{append([]string{"--retriever", "weaviate:vector", "--collection", "DemoVec", "--model", "other", "--backend", "openai", "--base-url", emb.URL}, where...), "holds vectors of test-embedder"},
		{append([]string{"--retriever", "weaviate:vector", "--collection", "DemoVec"}, where...), "embeds its queries"},
		{[]string{"--retriever", "weaviate:bm25", "--collection", "DemoText"}, "needs --weaviate-url"},
		{append([]string{"--retriever", "weaviate:bm25", "--collection", "DemoText", "--alpha", "0.3"}, where...), "apply to weaviate:hybrid"},
		{append([]string{"--retriever", "weaviate", "--collection", "DemoText"}, where...), "needs a search: bm25, vector or hybrid"},
		{append([]string{"--retriever", "weaviate:bm25", "--collection", "Nowhere"}, where...), "collection Nowhere not found"},
		{append([]string{"--retriever", "weaviate:bm25", "--collection", "DemoText", "--ef", "64"}, where...), "apply to Weaviate's vector search"},
		{append(append([]string{"--retriever", "weaviate:vector", "--collection", "DemoFlat", "--ef", "64"}, where...), model...), "ef applies to HNSW only"},
	} {
		_, errOut, code := run(t, "refused", c.args...)
		if code == 0 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stderr %q, want %q", c.args, code, errOut, c.want)
		}
	}

	// weaviate:bm25 keeps a document whose id is the query's, as r2med's
	// BM25 does (only dense search skips it, BEIR's rule for its exact
	// search).
	self := filepath.Join(tmp, "self")
	writeBEIR(t, self, []ir.Doc{{ID: "q1", Text: "aspirin and headache"}, {ID: "d2", Text: "headache relief"}, {ID: "d3", Text: "kidney stones"}},
		&ir.Task{Queries: []ir.Query{{ID: "q1", Text: "aspirin headache"}}, Qrels: ir.Qrels{"q1": {"d2": 1}}})
	if out, errOut, code := r2med(t, "", "index", "push", "--data", self, "--quiet", "--to", "weaviate://"+u.Host+"/Self", "--weaviate-grpc", node.GRPCAddr()); code != 0 {
		t.Fatalf("push: %s%s", out, errOut)
	}
	for _, c := range [][]string{{"--retriever", "bm25"}, append([]string{"--retriever", "weaviate:bm25", "--collection", "Self"}, where...)} {
		out := filepath.Join(tmp, "self-"+strings.ReplaceAll(c[1], ":", "-"))
		if o, errOut, code := r2med(t, "", append([]string{"run", "--data", self, "--quiet", "--out", out}, c...)...); code != 0 {
			t.Fatalf("%v: %s%s", c, o, errOut)
		}
		if hits := readRun(t, filepath.Join(out, "run.trec"))["q1"]; len(hits) < 2 || hits[0].DocID != "q1" || hits[1].DocID != "d2" {
			t.Errorf("%s: %v; want the document q1 first, as r2med's BM25 ranks it", c[1], hits)
		}
	}

	// A collection that holds another corpus is refused.
	needShared(t)
	_, errOut, code = r2med(t, "", append([]string{"run", "--data", filepath.Join(shared, "nfcorpus"), "--quiet", "--out", filepath.Join(tmp, "other"),
		"--retriever", "weaviate:bm25", "--collection", "DemoText"}, where...)...)
	if code == 0 || !strings.Contains(errOut, "holds another corpus than task nfcorpus") {
		t.Errorf("searching the demo collection for NFCorpus: exit %d, %s", code, errOut)
	}
}

func readRun(t *testing.T, path string) ir.Run {
	t.Helper()
	r, err := trec.ReadRunFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestRunWeaviateQueryModel: a collection's queries are embedded by the
// model that embedded its documents. A registry model of the Hub cache
// is pushed at its commit; after a newer main is pulled, weaviate:vector
// still embeds queries at the pushed commit (the run equals the dense
// run made before main moved) and the manifest records both revisions,
// where it embedded them with the newer main's model and recorded
// neither. A local model directory replaced since the push is refused.
func TestRunWeaviateQueryModel(t *testing.T) {
	onnxtest.Require(t)
	needShared(t)
	node := weaviatetest.Start(t, weaviatetest.Options{})
	u, _ := url.Parse(node.URL())
	ref := filepath.Join(shared, "encoder-reference")
	dir := t.TempDir()
	bgeAt := bgeHubCache(t, filepath.Join(dir, "hf"))
	bgeAt(oldCommit, "bge-tiny")
	old := oldCommit
	model := []string{"--model", "bge", "--backend", "onnx", "--no-cache"}
	where := []string{"--weaviate-url", node.URL(), "--weaviate-grpc", node.GRPCAddr()}
	push := func(coll string, args ...string) {
		t.Helper()
		out, errOut, code := r2med(t, "", append([]string{"index", "push", "--task", "demo", "--quiet", "--vector-index", "flat", "--to", "weaviate://" + u.Host + "/" + coll, "--weaviate-grpc", node.GRPCAddr()}, args...)...)
		if code != 0 {
			t.Fatalf("push into %s: exit %d\n%s%s", coll, code, out, errOut)
		}
	}
	run := func(out string, args ...string) (string, int) {
		t.Helper()
		_, stderr, code := r2med(t, "", append([]string{"run", "--task", "demo", "--quiet", "--out", filepath.Join(dir, out)}, args...)...)
		return stderr, code
	}
	push("DemoHub", model...)
	if stderr, code := run("dense", append([]string{"--retriever", "dense"}, model...)...); code != 0 {
		t.Fatal(stderr)
	}
	bgeAt(newerCommit, "contriever-tiny")
	if stderr, code := run("vector", append(append([]string{"--retriever", "weaviate:vector", "--collection", "DemoHub"}, where...), model...)...); code != 0 {
		t.Fatal(stderr)
	}
	// The tiny model scores every document within 1e-5 of 1, so the
	// order of its hits is float noise: each hit's score is compared with
	// the pushed model's score of that document instead.
	dense, vec := readRun(t, filepath.Join(dir, "dense", "run.trec")), readRun(t, filepath.Join(dir, "vector", "run.trec"))
	if len(vec) != len(dense) {
		t.Fatalf("weaviate:vector answered %d queries, dense %d", len(vec), len(dense))
	}
	for qid, want := range dense {
		score := map[string]float64{}
		for _, h := range want {
			score[h.DocID] = h.Score
		}
		for i, h := range vec[qid][:min(10, len(vec[qid]))] {
			if s, ok := score[h.DocID]; !ok || math.Abs(h.Score-s) > 1e-6 {
				t.Fatalf("query %s rank %d: weaviate:vector scores %s %v, the pushed model %v", qid, i+1, h.DocID, h.Score, s)
			}
		}
	}
	m, err := results.ReadManifest(filepath.Join(dir, "vector", results.ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	q, _ := m.Config["query_embedding"].(map[string]any)
	if q["model_revision"] != old || m.Config["document_model_revision"] != old {
		t.Errorf("manifest: query model_revision %v, document_model_revision %v; want the pushed commit %s for both", q["model_revision"], m.Config["document_model_revision"], old)
	}

	// A local model directory: the version pushed, or a refusal.
	local := filepath.Join(dir, "model")
	put := func(from string) { onnxtest.WriteModel(t, filepath.Join(ref, from), local) }
	put("bge-tiny")
	localModel := append(append([]string{}, model...), "--model-dir", local)
	push("DemoLocal", localModel...)
	if stderr, code := run("local", append(append([]string{"--retriever", "weaviate:vector", "--collection", "DemoLocal"}, where...), localModel...)...); code != 0 {
		t.Fatal(stderr)
	}
	time.Sleep(10 * time.Millisecond) // a replaced file's time differs
	put("contriever-tiny")
	stderr, code := run("replaced", append(append([]string{"--retriever", "weaviate:vector", "--collection", "DemoLocal"}, where...), localModel...)...)
	if code == 0 || !strings.Contains(stderr, "would be embedded by another model than its documents") {
		t.Errorf("a model directory replaced since the push: exit %d: %s", code, stderr)
	}
}
