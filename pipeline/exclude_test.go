package pipeline

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/r2med/r2med/dataset"
	"github.com/r2med/r2med/expand"
	"github.com/r2med/r2med/hub"
	"github.com/r2med/r2med/hub/hubtest"
	"github.com/r2med/r2med/hubrepo/brighttest"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/measure"
	"github.com/r2med/r2med/results"
	"github.com/r2med/r2med/retrieve"
	"github.com/r2med/r2med/tasks"
	"github.com/r2med/r2med/trec"
)

// TestExclusionsByHand: a task whose numbers are computed by hand. The run
// file ranks d1 > d2 > d3 > d4 > d5 for q1, judged d2 and d4; q1 excludes
// d1. At k 3 the run is d2 d3 d4, so nDCG@3 = (1 + 1/log2 4) / (1 + 1/log2
// 3) = 0.91972, P@3 = 2/3, recall@3 = 1, MRR = 1; without the exclusion
// it would be d1 d2 d3: nDCG@3 0.38685, MRR 0.5. q2 excludes nothing
// retrieved.
func TestExclusionsByHand(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var corpus strings.Builder
	for i := 1; i <= 5; i++ {
		fmt.Fprintf(&corpus, `{"id":"d%d","text":"document %d"}`+"\n", i, i)
	}
	write("corpus.jsonl", corpus.String())
	write("query.jsonl", `{"id":"q1","text":"one","excluded_ids":["d1"]}`+"\n"+`{"id":"q2","text":"two","excluded_ids":["N/A"]}`+"\n")
	write("qrels.jsonl", `{"q_id":"q1","p_id":"d2","score":1}`+"\n"+`{"q_id":"q1","p_id":"d4","score":1}`+"\n"+`{"q_id":"q2","p_id":"d5","score":1}`+"\n")
	runFile := filepath.Join(t.TempDir(), "given.trec")
	if err := os.WriteFile(runFile, []byte("q1 Q0 d1 1 5 given\nq1 Q0 d2 2 4 given\nq1 Q0 d3 3 3 given\nq1 Q0 d4 4 2 given\nq1 Q0 d5 5 1 given\n"+
		"q2 Q0 d5 1 2 given\nq2 Q0 d4 2 1 given\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	task, err := dataset.Load(dir, dataset.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.TopK = 3
	cfg.Retrievers = []retrieve.Spec{retrieve.RunFile{Path: runFile}}
	out, err := Run(context.Background(), task, cfg, Options{Out: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, h := range out.Run["q1"] {
		got = append(got, h.DocID)
	}
	if !reflect.DeepEqual(got, []string{"d2", "d3", "d4"}) {
		t.Fatalf("q1 ranks %v", got)
	}
	q1 := func(name string) float64 {
		for i, m := range out.Eval.Result.Measures {
			if m.Name() == name {
				return out.Eval.Result.Queries[0].Values[i]
			}
		}
		t.Fatalf("no %s", name)
		return 0
	}
	for name, want := range map[string]float64{
		"ndcg_cut_1": 1, "P_1": 1, "recip_rank": 1, "recall_1": 0.5,
		// ndcg_cut_10 = ndcg_cut_3 here: three hits retrieved.
		"ndcg_cut_10": (1 + 1/math.Log2(4)) / (1 + 1/math.Log2(3)),
		"P_10":        2.0 / 10, "recall_10": 1, "map_cut_10": (1.0/1 + 2.0/3) / 2,
	} {
		if g := q1(name); math.Abs(g-want) > 1e-4 {
			t.Errorf("q1 %s = %.5f, by hand %.5f", name, g, want)
		}
	}
	m := out.Manifest
	for k, want := range map[string]int{"excluded_pairs": 1, "excluded_queries": 1, "excluded_not_in_corpus": 0, retrieve.HitsExcluded: 1, "excluded_hits_at_evaluation": 0} {
		if m.Counts[k] != want {
			t.Errorf("manifest count %s = %d, want %d (%v)", k, m.Counts[k], want, m.Counts)
		}
	}
}

// TestExclusionsNFCorpusAgainstReference: R2MED's BM25 on NFCorpus test
// with an exclusions file (up to four unjudged documents of each query's
// top 20 in the reference run). The pipeline's run at k 90 is the
// reference run with the excluded documents removed, ranked as trec_eval
// reads it and cut to 90 — built by hand here from the file R2MED's
// Python pipeline wrote — for every query whose 90th document scores
// above the reference's last (the others rank ties that reach past the
// reference's 100 documents, which the run searches, 100 and the most
// one query excludes deep: those are checked to be R2MED's documents
// down to the tie); its evaluation is measure's (trec_eval 9.0.8's,
// checked against trec_eval's output elsewhere) on that hand-filtered
// run; evaluating the unfiltered reference run with the exclusions
// (r2med eval --exclude's path) gives the same as the hand-filtered one
// at the same depth.
func TestExclusionsNFCorpusAgainstReference(t *testing.T) {
	needShared(t)
	ref, err := trec.ReadRunFile(filepath.Join(shared, "eval-reference/nfcorpus.bm25.run"))
	if err != nil {
		t.Fatal(err)
	}
	qrels, err := trec.ReadQrelsFile(filepath.Join(shared, "eval-reference/nfcorpus.qrels"))
	if err != nil {
		t.Fatal(err)
	}
	var lines strings.Builder
	ex := ir.Exclusions{}
	for _, qid := range slices.Sorted(func(yield func(string) bool) {
		for q := range ref {
			if !yield(q) {
				return
			}
		}
	}) {
		for i, h := range ref[qid][:20] {
			if _, judged := qrels[qid][h.DocID]; !judged && i%3 == 0 && len(ex[qid]) < 4 {
				ex.Add(qid, h.DocID)
				fmt.Fprintf(&lines, "%s\t%s\n", qid, h.DocID)
			}
		}
	}
	exFile := filepath.Join(t.TempDir(), "excluded.tsv")
	if err := os.WriteFile(exFile, []byte(lines.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	task, err := dataset.Load(filepath.Join(shared, "nfcorpus"), dataset.Options{Split: "test", Exclude: exFile})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(task.Excluded, ex) {
		t.Fatalf("loaded %d exclusions, wrote %d", task.Excluded.Len(), ex.Len())
	}
	const k = 90
	cfg := DefaultConfig()
	cfg.TopK = k
	out, err := Run(context.Background(), task, cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	handFiltered := ir.Run{}
	bit, whole := 0, 0
	for qid, hits := range ref {
		kept, _ := ex.Filter(qid, slices.Clone(hits))
		slices.SortStableFunc(kept, ir.ByScore) // as trec_eval reads the reference, as the run's stages rank
		last := float32(slices.MinFunc(hits, func(a, b ir.Hit) int { return cmp.Compare(a.Score, b.Score) }).Score)
		got := out.Run[qid]
		if len(got) != k {
			t.Fatalf("query %s: %d hits, want %d", qid, len(got), k)
		}
		n := k
		if float32(kept[k-1].Score) <= last {
			// The tie at the reference's end reaches the top 90: down to
			// it, the run is the reference's.
			n = slices.IndexFunc(kept, func(h ir.Hit) bool { return float32(h.Score) <= last })
			handFiltered[qid] = got
		} else {
			whole++
			handFiltered[qid] = kept[:k]
		}
		for i := range n {
			want := kept[i]
			if got[i].DocID != want.DocID || math.Abs(got[i].Score-want.Score) > 1e-4*math.Abs(want.Score)+1e-6 {
				t.Fatalf("query %s rank %d: %s %.6f, reference without exclusions %s %.6f", qid, i+1, got[i].DocID, got[i].Score, want.DocID, want.Score)
			}
		}
		if len(ex[qid]) > 0 {
			bit++
		}
	}
	handFiltered.Rank(ir.TiesByDocID)
	if len(out.Run) != len(handFiltered) {
		t.Fatalf("%d queries ranked, reference %d", len(out.Run), len(handFiltered))
	}
	if bit < 100 || whole < 150 {
		t.Fatalf("only %d queries had exclusions, %d are checked whole", bit, whole)
	}
	ms := out.Eval.Result.Measures
	byHand, err := measure.Evaluate(qrels, handFiltered, ms, measure.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(byHand.All, out.Eval.Result.All) {
		t.Errorf("pipeline's evaluation %v, measure on the hand-filtered run %v", out.Eval.Result.All, byHand.All)
	}
	// Excluding at evaluation: the unfiltered run at depth 100, filtered.
	deepHand := ir.Run{}
	for qid, hits := range ref {
		deepHand[qid], _ = ex.Filter(qid, hits)
	}
	filtered, n := ex.FilterRun(ref)
	if n != ex.Len() {
		t.Errorf("removed %d hits, %d excluded (all in the top 20)", n, ex.Len())
	}
	a, _ := measure.Evaluate(qrels, filtered, ms, measure.Options{})
	b, _ := measure.Evaluate(qrels, deepHand, ms, measure.Options{})
	if !reflect.DeepEqual(a.All, b.All) {
		t.Error("FilterRun differs from filtering by hand")
	}
	if out.Manifest.Counts["excluded_pairs"] != ex.Len() || out.Manifest.Counts[retrieve.HitsExcluded] != ex.Len() {
		t.Errorf("manifest counts %v", out.Manifest.Counts)
	}
}

// TestBrightSuiteFromHub runs BRIGHT's biology from a fake Hub in BRIGHT's
// layout (hubrepo/brighttest): the registry's pinned revision, only the
// task's split fetched, its exclusions honoured; the long-document
// setting; BRIGHT's published reasoning as --gar reasoning; and the run's
// data found again from its manifest.
func TestBrightSuiteFromHub(t *testing.T) {
	srv := hubtest.NewServer(t)
	repo := brighttest.Serve(t, srv)
	ctx := context.Background()
	c := &hub.Client{Endpoint: srv.URL(), CacheDir: t.TempDir()}

	task, err := Source{Task: "biology", Suite: tasks.Bright, Hub: c}.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if task.Name != "BRIGHT-biology" || task.Layout != ir.LayoutBrightHub || filepath.Base(task.Dir) != tasks.BrightRevision {
		t.Errorf("loaded %s (%s) from %s", task.Name, task.Layout, task.Dir)
	}
	if !reflect.DeepEqual(task.Excluded, repo.Biology.Excluded) {
		t.Errorf("exclusions %v", task.Excluded)
	}
	files, err := os.ReadDir(filepath.Join(task.Dir, "documents"))
	if err != nil || len(files) != 1 {
		t.Errorf("documents fetched: %v %v (the biology split only)", files, err)
	}
	if _, err := os.Stat(filepath.Join(task.Dir, "long_documents")); err == nil {
		t.Error("long documents fetched for the short setting")
	}

	out, err := Run(ctx, task, DefaultConfig(), Options{Out: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	plainTask := *task
	plainTask.Excluded = nil
	plain, err := Run(ctx, &plainTask, DefaultConfig(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, q := range task.Queries {
		hits := out.Run[q.ID]
		if len(hits) != min(100, len(task.Corpus)-len(task.Excluded[q.ID])) {
			t.Errorf("query %s: %d hits", q.ID, len(hits))
		}
		for _, h := range hits {
			if task.Excluded.Excluded(q.ID, h.DocID) {
				t.Fatalf("query %s retrieved excluded %s", q.ID, h.DocID)
			}
		}
		for _, h := range plain.Run[q.ID][:10] {
			if task.Excluded.Excluded(q.ID, h.DocID) {
				seen++
			}
		}
	}
	if seen == 0 {
		t.Fatal("no excluded document in any plain top 10: the fixture shows nothing")
	}
	if !(out.Eval.Scores["ndcg_at_10"] > plain.Eval.Scores["ndcg_at_10"]) {
		t.Errorf("nDCG@10 with distractors excluded %v, not above %v", out.Eval.Scores["ndcg_at_10"], plain.Eval.Scores["ndcg_at_10"])
	}
	if m := out.Manifest; m.Task.Name != "BRIGHT-biology" || m.Task.Revision != tasks.BrightRevision || m.Counts["excluded_pairs"] != repo.Biology.Excluded.Len() || m.Counts[retrieve.HitsExcluded] == 0 {
		t.Errorf("manifest task %+v counts %v", m.Task, m.Counts)
	}

	// The long-document setting.
	long, err := Source{Task: "biology", Suite: tasks.BrightLong, Hub: c}.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if long.Name != "BRIGHT-biology-long" || len(long.Corpus) != len(repo.Biology.LongDocs) || long.Qrels["q1"]["endo-pheo"] != 1 {
		t.Errorf("long: %s, %d documents, q1 judged %v", long.Name, len(long.Corpus), long.Qrels["q1"])
	}
	lout, err := Run(ctx, long, DefaultConfig(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if lout.Manifest.Counts["excluded_not_in_corpus"] != repo.Biology.Excluded.Len() {
		t.Errorf("long counts %v", lout.Manifest.Counts)
	}
	if _, err := (Source{Task: "leetcode", Suite: tasks.BrightLong, Hub: c}).Load(ctx); err == nil || !strings.Contains(err.Error(), "no long documents") {
		t.Errorf("leetcode long: %v", err)
	}

	// BRIGHT's published reasoning as the query.
	cfg := DefaultConfig()
	cfg.GAR = expand.Source{Method: expand.Reasoning, LLM: "gpt4"}
	gar, err := Run(ctx, task, cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !(gar.Eval.Scores["ndcg_at_10"] > out.Eval.Scores["ndcg_at_10"]) {
		t.Errorf("reasoning naming a relevant passage: nDCG@10 %v, not above %v", gar.Eval.Scores["ndcg_at_10"], out.Eval.Scores["ndcg_at_10"])
	}
	cfg.GAR = expand.Source{Method: expand.HyDE, LLM: "gpt4"}
	if _, err := Run(ctx, task, cfg, Options{}); err == nil || !strings.Contains(err.Error(), "--gar reasoning") {
		t.Errorf("hyde on BRIGHT: %v", err)
	}

	// A finished run's data is found again from its manifest, in its
	// setting.
	for _, o := range []*Outcome{out, lout} {
		src := SourceOf(results.Run{Manifest: o.Manifest})
		if src.Suite.Benchmark() != tasks.Bright || src.Task != "biology" {
			t.Errorf("%s: source %+v", o.Manifest.Task.Name, src)
		}
	}
}
