package main

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/measure/measuretest"
	"github.com/r2med/r2med/rerank/reranktest"
	"github.com/r2med/r2med/retrieve"
	"github.com/r2med/r2med/synth"
	"github.com/r2med/r2med/weaviate/weaviatetest"
)

// TestRerankCLITies: r2med rerank over a run file made elsewhere, by a
// judge that finds every document equally relevant, writes the input's
// ranking as trec_eval reads the input (its ties by doc id, whatever the
// order of its lines) — ties in first-stage order — so the output
// evaluates exactly as the input does.
func TestRerankCLITies(t *testing.T) {
	task := demoTask(t)
	dir := t.TempDir()
	// BM25's own list order, ties as gensim leaves them, written by hand
	// as another tool would write it.
	r, err := retrieve.New(context.Background(), retrieve.DefaultBM25(), task, retrieve.Env{})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := r.Search(context.Background(), retrieve.Queries(task.Queries), 100)
	if err != nil {
		t.Fatal(err)
	}
	var lines strings.Builder
	ties := 0
	for qid, hits := range raw {
		for i, h := range hits {
			fmt.Fprintf(&lines, "%s Q0 %s %d %v elsewhere\n", qid, h.DocID, i+1, float32(h.Score))
			if i > 0 && float32(h.Score) == float32(hits[i-1].Score) {
				ties++
			}
		}
	}
	if ties == 0 {
		t.Fatal("the demo's BM25 run has no ties to test")
	}
	input := filepath.Join(dir, "input.trec")
	if err := os.WriteFile(input, []byte(lines.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{}
	for qid, hits := range raw {
		hits = slices.Clone(hits)
		slices.SortStableFunc(hits, ir.ByScore) // trec_eval's reading
		want[qid] = measuretest.IDs(ir.Run{qid: hits})[qid]
	}
	srv := reranktest.NewTies(t, 1)
	for _, kind := range []string{"tei", "llm-pointwise", "rank1", "grouprank", "diver"} {
		out := filepath.Join(dir, kind+".trec")
		url := srv.URL
		if kind != "tei" {
			url += "/v1"
		}
		args := append([]string{"rerank", "--task", "demo", "--run", input, "--out", out, "--quiet", "--no-cache", "--no-eval"}, rerankFlags(kind, "m", url)...)
		if _, stderr, code := r2med(t, "", args...); code != 0 {
			t.Fatalf("%s: exit %d: %s", kind, code, stderr)
		}
		listed := measuretest.CheckFile(t, out, task.Qrels)
		if !reflect.DeepEqual(listed, want) {
			t.Errorf("%s: the reranked run is not the input's ranking as trec_eval reads it", kind)
		}
	}
}

// TestWeaviateTies: a Weaviate collection whose documents all read the
// same scores them all the same; r2med run --retriever weaviate:bm25
// writes them as trec_eval ranks them (doc id descending), not in
// Weaviate's own order, and the file means its list order.
func TestWeaviateTies(t *testing.T) {
	node := weaviatetest.Start(t, weaviatetest.Options{})
	u, _ := url.Parse(node.URL())
	data := filepath.Join(t.TempDir(), "same")
	task := &ir.Task{Name: "same", Qrels: ir.Qrels{"q1": {"d03": 1, "d17": 2}, "q2": {"d11": 1}}}
	for i := range 20 {
		task.Corpus = append(task.Corpus, ir.Doc{ID: fmt.Sprintf("d%02d", i), Text: "fever with a rash after travel"})
	}
	task.Queries = []ir.Query{{ID: "q1", Text: "fever rash"}, {ID: "q2", Text: "rash after travel"}}
	if err := os.MkdirAll(data, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := synth.WriteR2MED(task, data); err != nil {
		t.Fatal(err)
	}
	if out, stderr, code := r2med(t, "", "index", "push", "--data", data, "--quiet", "--to", "weaviate://"+u.Host+"/Same", "--weaviate-grpc", node.GRPCAddr()); code != 0 {
		t.Fatalf("push: exit %d\n%s%s", code, out, stderr)
	}
	out := filepath.Join(t.TempDir(), "run")
	if stdout, stderr, code := r2med(t, "", "run", "--data", data, "--quiet", "--out", out, "--retriever", "weaviate:bm25", "--collection", "Same",
		"--weaviate-url", node.URL(), "--weaviate-grpc", node.GRPCAddr()); code != 0 {
		t.Fatalf("run: exit %d\n%s%s", code, stdout, stderr)
	}
	listed := measuretest.CheckFile(t, filepath.Join(out, "run.trec"), task.Qrels)
	var byID []string
	for i := 19; i >= 0; i-- {
		byID = append(byID, fmt.Sprintf("d%02d", i))
	}
	for _, q := range task.Queries {
		if !slices.Equal(listed[q.ID], byID) {
			t.Errorf("%s: written %v, want every document, doc id descending", q.ID, listed[q.ID])
		}
	}
}
