package pipeline

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/r2med/r2med/dataset"
	"github.com/r2med/r2med/internal/reuse"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/measure/measuretest"
	"github.com/r2med/r2med/nano"
	"github.com/r2med/r2med/onnx/onnxtest"
	"github.com/r2med/r2med/rerank"
	"github.com/r2med/r2med/rerank/reranktest"
	"github.com/r2med/r2med/results"
	"github.com/r2med/r2med/retrieve"
	"github.com/r2med/r2med/trec"
)

// The tests here run each stage that writes runs against a judge that
// answers all ties, and check what every evaluator reads in the written
// run: the rank column is trec_eval's order (float32 score descending,
// doc id descending), and measure, which ignores the rank column as
// trec_eval does, scores the file exactly as the in-memory list order
// scores (measuretest.CheckFile).

// tieKinds are the reranker kinds, each set against a reranktest.Ties
// server at base.
func tieKinds(base string) map[string]Rerank {
	return map[string]Rerank{
		"tei":             {Kind: "tei", BaseURLs: []string{base}},
		"cohere":          {Kind: "cohere", Model: "m", BaseURLs: []string{base + "/v1"}},
		"llm-pointwise":   {Kind: "llm-pointwise", Model: "m", BaseURLs: []string{base + "/v1"}},
		"llm-listwise":    {Kind: "llm-listwise", Model: "m", BaseURLs: []string{base + "/v1"}},
		"rank1":           {Kind: "rank1", Model: "m", BaseURLs: []string{base + "/v1"}},
		"rank1 text-only": {Kind: "rank1", Model: "m", BaseURLs: []string{base + "/v1"}, TextOnly: true},
		"insertrank":      {Kind: "insertrank", Model: "m", BaseURLs: []string{base + "/v1"}},
		"reasonrank":      {Kind: "reasonrank", Model: "m", BaseURLs: []string{base + "/v1"}},
		"grouprank":       {Kind: "grouprank", Model: "m", BaseURLs: []string{base + "/v1"}, GroupSize: 4, Repeats: 3},
		"diver":           {Kind: "diver", Model: "m", BaseURLs: []string{base + "/v1"}, Merge: RerankMerge{Pointwise: "grouprank", Listwise: "reasonrank"}},
	}
}

// TestNoOpRerankKeepsFirstStage: a reranker of the top 10 that finds
// every document equally relevant (or ranks them as shown) leaves BM25's
// ranking as it is — ties in first-stage order, as README promises — so
// the written run is evaluated exactly as BM25's own: on the demo task
// nDCG@10 0.6381, not the 0.3668 the ties scored by doc id. The kept
// rerank stage, read back by a rerun, is the same run.
func TestNoOpRerankKeepsFirstStage(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	task, err := LoadTask("demo", "", dataset.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	bm25, err := Run(ctx, task, DefaultConfig(), Options{Out: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if got := bm25.Result.Test["ndcg_at_10"]; got != 0.63809 {
		t.Fatalf("BM25 nDCG@10 on the demo = %v, want 0.63809", got)
	}
	srv := reranktest.NewTies(t, 1)
	for name, rr := range tieKinds(srv.URL) {
		t.Run(name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.Rerank = rr
			cfg.Rerank.Depth = 10
			dir := t.TempDir()
			out, err := Run(ctx, task, cfg, Options{Out: dir})
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range []string{"rerank_unparsed", "rerank_partial", "rerank_undecided"} {
				if n := out.Manifest.Counts[k]; n != 0 {
					t.Errorf("%s = %d: the judge's answers were not all taken as given", k, n)
				}
			}
			listed := measuretest.CheckFile(t, filepath.Join(dir, RunFile), task.Qrels)
			if want := top(measuretest.IDs(bm25.Run), 10); !reflect.DeepEqual(listed, want) {
				t.Errorf("the reranked run is not BM25's ranking")
			}
			if !reflect.DeepEqual(measuretest.IDs(out.Run), listed) {
				t.Errorf("the run in memory is not the run written")
			}
			if got, want := out.Result.Test["NDCG@10"], bm25.Result.Test["ndcg_at_10"]; got != want {
				t.Errorf("nDCG@10 %v after a no-op rerank, BM25 %v", got, want)
			}
			measuretest.CheckFile(t, filepath.Join(dir, StagesDir, "rerank.trec"), task.Qrels)
			// A rerun without the finished run reads the kept stages back
			// as they were made, and asks the judge nothing.
			calls := srv.Calls()
			again := rerunFromStages(t, task, cfg, dir)
			if !reflect.DeepEqual(again.Run, out.Run) {
				t.Errorf("the rerank stage read back differs from the fresh one")
			}
			if srv.Calls() != calls {
				t.Errorf("the rerun asked the judge again: the stage was not reused")
			}
		})
	}
}

// TestNoOpRerankNFCorpus: on NFCorpus a no-op rerank of R2MED's BM25
// (the top 10, then the top 100) keeps BM25's nDCG@10, 0.3190 as
// trec_eval computes it from R2MED's own run (not 0.2789 at depth 10, the
// ties by doc id).
func TestNoOpRerankNFCorpus(t *testing.T) {
	task := nfcorpusTest(t)
	ref := readTrecEvalAll(t, filepath.Join(shared, "eval-reference/nfcorpus.bm25.trec_eval"))
	if ref["ndcg_cut_10"] != "0.3190" {
		t.Fatalf("the reference's nDCG@10 is %s", ref["ndcg_cut_10"])
	}
	bm25, err := Run(context.Background(), task, DefaultConfig(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := reranktest.NewTies(t, 0.5)
	for _, depth := range []int{10, 100} {
		cfg := DefaultConfig()
		cfg.Rerank = Rerank{Kind: "tei", BaseURLs: []string{srv.URL}, Depth: depth}
		dir := t.TempDir()
		out, err := Run(context.Background(), task, cfg, Options{Out: dir})
		if err != nil {
			t.Fatal(err)
		}
		listed := measuretest.CheckFile(t, filepath.Join(dir, RunFile), task.Qrels)
		if !reflect.DeepEqual(listed, top(measuretest.IDs(bm25.Run), depth)) {
			t.Errorf("depth %d: the reranked run is not BM25's ranking", depth)
		}
		got, want := out.Result.Test["NDCG@10"], bm25.Result.Test["ndcg_at_10"]
		if got != want || fmtMean(mean(t, out.Eval.Result, "ndcg_cut_10")) != ref["ndcg_cut_10"] {
			t.Errorf("depth %d: nDCG@10 after a no-op rerank = %v, BM25's is %v (trec_eval %s)", depth, got, want, ref["ndcg_cut_10"])
		}
	}
}

// TestFusionStageTies: a fused run's ties (documents at the same rank of
// one list alone tie in RRF) are written in the fusion's own tie order,
// which the file, the kept stage and the in-memory run all mean; a rerun
// that reads the kept retrieval and fusion stages back gives the same run.
func TestFusionStageTies(t *testing.T) {
	task, err := LoadTask("demo", "", dataset.Options{})
	if err != nil {
		t.Fatal(err)
	}
	lucene := retrieve.DefaultBM25()
	lucene.Params.Scheme = "lucene"
	for _, fu := range []Fuse{{}, {Method: "combsum", Norm: "none", Weights: []float64{0, 0}}} {
		cfg := Config{Retrievers: []retrieve.Spec{retrieve.DefaultBM25(), lucene}, Fuse: fu, TopK: 100}
		dir := t.TempDir()
		out, err := Run(context.Background(), task, cfg, Options{Out: dir})
		if err != nil {
			t.Fatal(err)
		}
		ties := 0
		for _, hits := range out.Run {
			for i := 1; i < len(hits); i++ {
				if hits[i].Score > hits[i-1].Score-1e-6 {
					ties++
				}
			}
		}
		if ties == 0 {
			t.Fatalf("%+v: no ties to test", fu)
		}
		listed := measuretest.CheckFile(t, filepath.Join(dir, RunFile), task.Qrels)
		if !reflect.DeepEqual(measuretest.IDs(out.Run), listed) {
			t.Errorf("%+v: the run in memory is not the run written", fu)
		}
		measuretest.CheckFile(t, filepath.Join(dir, StagesDir, "fuse.trec"), task.Qrels)
		again := rerunFromStages(t, task, cfg, dir)
		if !reflect.DeepEqual(again.Run, out.Run) {
			t.Errorf("%+v: the stages read back differ from the fresh ones", fu)
		}
	}
}

// TestRunFileTies: a run file read as a retriever means what trec_eval
// reads in it (ties by doc id, whatever its line order): R2MED's BM25 run
// with scores rounded into big tie groups, passed through, is written in
// that order and scores trec_eval's numbers for it; reranked by a judge
// of ties, it keeps them.
func TestRunFileTies(t *testing.T) {
	task := nfcorpusTest(t)
	ref := readTrecEvalAll(t, filepath.Join(shared, "eval-reference/nfcorpus.ties.trec_eval"))
	srv := reranktest.NewTies(t, 1)
	for _, rr := range []Rerank{{}, {Kind: "tei", BaseURLs: []string{srv.URL}}} {
		cfg := Config{Retrievers: []retrieve.Spec{retrieve.RunFile{Path: filepath.Join(shared, "eval-reference/nfcorpus.ties.run")}}, TopK: 100, Rerank: rr}
		dir := t.TempDir()
		out, err := Run(context.Background(), task, cfg, Options{Out: dir})
		if err != nil {
			t.Fatal(err)
		}
		measuretest.CheckFile(t, filepath.Join(dir, RunFile), task.Qrels)
		for _, m := range []string{"ndcg_cut_10", "recip_rank", "P_10"} {
			if got := mean(t, out.Eval.Result, m); fmtMean(got) != ref[m] {
				t.Errorf("rerank %q: %s = %s, trec_eval on the run file says %s", rr.Kind, m, fmtMean(got), ref[m])
			}
		}
	}
}

// TestCandidateTies: a Nano set's candidate lists are rankings as
// published, and a judge of ties reranking them leaves the order it
// scored them in (a bm25 list's, or for the reranking_hybrid list HAKARI's
// hash order); every written run means its list order. (The rank-101
// safeguard, which the demo's 79 documents cannot reach, is tested in
// package rerank.)
func TestCandidateTies(t *testing.T) {
	full, err := LoadTask("demo", "", dataset.Options{})
	if err != nil {
		t.Fatal(err)
	}
	plain, err := nano.Build(full, nano.Options{Split: "NanoDemo"})
	if err != nil {
		t.Fatal(err)
	}
	// A dense list that is BM25's reversed, for a hybrid list to fuse.
	dense := ir.Run{}
	for q, hits := range plain.Subset("bm25").Run {
		for i := len(hits) - 1; i >= 0; i-- {
			dense[q] = append(dense[q], ir.Hit{DocID: hits[i].DocID, Score: float64(i)})
		}
	}
	set, err := nano.Build(full, nano.Options{Split: "NanoDemo", Dense: dense, HybridDepth: 20})
	if err != nil {
		t.Fatal(err)
	}
	hub := t.TempDir()
	if err := nano.WriteHub(set, hub, "NanoDemo"); err != nil {
		t.Fatal(err)
	}
	task, err := LoadTask("", hub, dataset.Options{Split: "NanoDemo"})
	if err != nil {
		t.Fatal(err)
	}
	srv := reranktest.NewTies(t, 1)
	tei := Rerank{Kind: "tei", BaseURLs: []string{srv.URL}}
	for _, c := range []struct {
		config string
		rr     Rerank
	}{{"bm25", Rerank{}}, {"bm25", tei}, {"reranking_hybrid", Rerank{}}, {"reranking_hybrid", tei}} {
		cfg := Config{Retrievers: []retrieve.Spec{retrieve.Candidates{Config: c.config}}, TopK: 100, Rerank: c.rr}
		dir := t.TempDir()
		if _, err := Run(context.Background(), task, cfg, Options{Out: dir}); err != nil {
			t.Fatal(err)
		}
		listed := measuretest.CheckFile(t, filepath.Join(dir, RunFile), task.Qrels)
		want := measuretest.IDs(set.Subset(c.config).Run)
		if c.config == "reranking_hybrid" && c.rr.Kind != "" {
			// HAKARI shuffles the candidates by hash before scoring;
			// ties keep that order.
			for qid, hits := range set.Subset(c.config).Run {
				hits = slices.Clone(hits)
				rerank.HashShuffle(qid, hits)
				want[qid] = measuretest.IDs(ir.Run{qid: hits})[qid]
			}
		}
		if !reflect.DeepEqual(listed, want) {
			t.Errorf("candidates:%s, rerank %q: the written run is not the list in the order scored", c.config, c.rr.Kind)
		}
	}
}

// rerunFromStages runs cfg again into dir without the finished run there
// (its manifest removed), so that the kept stages are read back.
func rerunFromStages(t *testing.T, task *ir.Task, cfg Config, dir string) *Outcome {
	t.Helper()
	if err := os.Remove(filepath.Join(dir, ManifestFile)); err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	out, err := Run(context.Background(), task, cfg, Options{Out: dir, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(log.String(), "recomputing") {
		t.Fatalf("a kept stage was recomputed: %s", log.String())
	}
	return out
}

// top cuts every list to its first k.
func top(lists map[string][]string, k int) map[string][]string {
	out := make(map[string][]string, len(lists))
	for qid, ids := range lists {
		out[qid] = ids[:min(k, len(ids))]
	}
	return out
}

func fmtMean(v float64) string { return strconv.FormatFloat(v, 'f', 4, 64) }

// TestCrossEncoderTies: the local ONNX cross-encoder scores documents of
// the same text the same; over a corpus of one text repeated, BM25 ties
// them all too, so the written run is trec_eval's order of the first
// stage (doc id descending), reranked or not.
func TestCrossEncoderTies(t *testing.T) {
	onnxtest.Require(t)
	task := &ir.Task{Name: "same", Qrels: ir.Qrels{"q1": {"d03": 1, "d17": 2}}}
	for i := range 20 {
		task.Corpus = append(task.Corpus, ir.Doc{ID: fmt.Sprintf("d%02d", i), Text: "fever with a rash after travel"})
	}
	task.Queries = []ir.Query{{ID: "q1", Text: "fever rash"}}
	var byID []string
	for i := 19; i >= 0; i-- {
		byID = append(byID, fmt.Sprintf("d%02d", i))
	}
	for _, rr := range []Rerank{{}, {Kind: "onnx", ModelDir: onnxtest.Model("tiny-cross-1"), Depth: 20}} {
		cfg := DefaultConfig()
		cfg.Rerank = rr
		dir := t.TempDir()
		if _, err := Run(context.Background(), task, cfg, Options{Out: dir}); err != nil {
			t.Fatal(err)
		}
		listed := measuretest.CheckFile(t, filepath.Join(dir, RunFile), task.Qrels)
		if !slices.Equal(listed["q1"], byID) {
			t.Errorf("rerank %q: written %v, want doc id descending", rr.Kind, listed["q1"])
		}
	}
}

// TestTiedRunFromAnOlderBuildIsRedone: a finished run whose run.trec
// lists equal scores (written before runs were ranked, so trec_eval may
// read another order than the one its results.json was computed in) is
// not reused, even with its checksums intact.
func TestTiedRunFromAnOlderBuildIsRedone(t *testing.T) {
	task, err := LoadTask("demo", "", dataset.Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	first, err := Run(context.Background(), task, DefaultConfig(), Options{Out: dir})
	if err != nil {
		t.Fatal(err)
	}
	// The same run with every score 1, as an older build wrote a no-op
	// rerank, sealed as that build sealed it.
	var lines strings.Builder
	for _, qid := range trec.QueryIDs(first.Run) {
		for i, h := range first.Run[qid] {
			fmt.Fprintf(&lines, "%s Q0 %s %d 1 old\n", qid, h.DocID, i+1)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, RunFile), []byte(lines.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	m := first.Manifest
	rec, err := reuse.Seal(dir, m.Config["fingerprint"].(string), RunFile, ResultsFile)
	if err != nil {
		t.Fatal(err)
	}
	m.OutputSHA256 = rec.SHA256
	if err := m.WriteFile(filepath.Join(dir, ManifestFile)); err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	again, err := Run(context.Background(), task, DefaultConfig(), Options{Out: dir, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	if again.Skipped || !strings.Contains(log.String(), "lists equal scores (query ") {
		t.Fatalf("the tied run was reused (skipped %v): %s", again.Skipped, log.String())
	}
	measuretest.CheckFile(t, filepath.Join(dir, RunFile), task.Qrels)
}

// TestTopKIsR2MEDsTop: a run cut at k < 100 is the top k of R2MED's
// ranking — the top 100 its BM25 keeps (a stable sort of every document's
// score, so zero-score documents fill a short list in corpus order and a
// tie across rank 100 keeps the earlier documents), as pytrec_eval ranks
// them (ties by doc id descending) — not a top k chosen by corpus order
// and ranked after: on NFCorpus the runs of --top-k 1, 10 and 50 are the
// prefixes of R2MED's own run as trec_eval reads it, and score its
// nDCG@10 and P@10.
func TestTopKIsR2MEDsTop(t *testing.T) {
	task := nfcorpusTest(t)
	want, err := trec.ReadRunFile(filepath.Join(shared, "eval-reference/nfcorpus.bm25.run"))
	if err != nil {
		t.Fatal(err)
	}
	want.Rank(ir.TiesByDocID)
	ref := readTrecEvalAll(t, filepath.Join(shared, "eval-reference/nfcorpus.bm25.trec_eval"))
	for _, k := range []int{1, 10, 50} {
		cfg := DefaultConfig()
		cfg.TopK = k
		dir := t.TempDir()
		out, err := Run(context.Background(), task, cfg, Options{Out: dir})
		if err != nil {
			t.Fatal(err)
		}
		listed := measuretest.CheckFile(t, filepath.Join(dir, RunFile), task.Qrels)
		differ := 0
		for qid, ids := range top(measuretest.IDs(want), k) {
			if !slices.Equal(listed[qid], ids) {
				if differ < 3 {
					t.Errorf("top %d, query %s: %v, R2MED's %v", k, qid, listed[qid], ids)
				}
				differ++
			}
		}
		if differ > 0 {
			t.Errorf("top %d: %d of %d queries are not the top of R2MED's run", k, differ, len(want))
		}
		if k >= 10 {
			for _, m := range []string{"ndcg_cut_10", "P_10"} {
				if got := fmtMean(mean(t, out.Eval.Result, m)); got != ref[m] {
					t.Errorf("top %d: %s %s, trec_eval on R2MED's run %s", k, m, got, ref[m])
				}
			}
		}
	}
}

// TestRunOfOldRulesRedone: a finished run whose fingerprint was made
// without the rules r2med ranks by (an r2med that searched a top 10 only
// 10 deep) is made again, not reused as up to date, and says why.
func TestRunOfOldRulesRedone(t *testing.T) {
	task, err := LoadTask("demo", "", dataset.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.TopK = 10
	dir := t.TempDir()
	if _, err := Run(context.Background(), task, cfg, Options{Out: dir}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, ManifestFile)
	m, err := results.ReadManifest(path)
	if err != nil {
		t.Fatal(err)
	}
	// The fingerprint as an older r2med made it: settings and inputs only.
	delete(m.Config, "fingerprint")
	f := reuse.NewFingerprint().Add(m.Config, m.Task.Name, m.Task.Split)
	for _, in := range m.Inputs {
		f.Add(in.SHA256)
	}
	m.Config["fingerprint"] = f.String()
	if err := m.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	out, err := Run(context.Background(), task, cfg, Options{Out: dir, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	if out.Skipped || !strings.Contains(log.String(), "made by an r2med that ranks otherwise (same data and settings); redoing it") {
		t.Errorf("skipped %v; log %q", out.Skipped, log.String())
	}
}
