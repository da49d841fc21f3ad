package pipeline

import (
	"bufio"
	"context"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/r2med/r2med/dataset"
	"github.com/r2med/r2med/expand"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/measure"
	"github.com/r2med/r2med/nano"
	"github.com/r2med/r2med/results"
	"github.com/r2med/r2med/retrieve"
	"github.com/r2med/r2med/trec"
)

const shared = "../../shared/data"

func needShared(t testing.TB) {
	t.Helper()
	if _, err := os.Stat(shared); err != nil {
		t.Skipf("shared reference data not found at %s: %v", shared, err)
	}
}

// TestNFCorpusMatchesR2MEDBM25 runs the whole pipeline (BEIR reader, Lucene
// English analyzer, gensim-compatible BM25, top-100) on NFCorpus test and
// compares with the run R2MED's own Python pipeline produced, as
// pytrec_eval evaluated it (its published numbers): the same documents in
// the same evaluated order for every query — the reference's ties ranked
// by doc id descending, trec_eval's rule, which the pipeline's run.trec
// lists — scores within 1e-4 relative.
func TestNFCorpusMatchesR2MEDBM25(t *testing.T) {
	task := nfcorpusTest(t)
	out, err := Run(context.Background(), task, DefaultConfig(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	want, err := trec.ReadRunFile(filepath.Join(shared, "eval-reference/nfcorpus.bm25.run"))
	if err != nil {
		t.Fatal(err)
	}
	want.Rank(ir.TiesByDocID) // as trec_eval reads the reference
	if len(out.Run) != len(want) {
		t.Fatalf("run has %d queries, reference %d", len(out.Run), len(want))
	}
	mismatches := 0
	for qid, ref := range want {
		got := out.Run[qid]
		if len(got) != len(ref) {
			t.Errorf("query %s: %d hits, reference %d", qid, len(got), len(ref))
			continue
		}
		for i := range ref {
			if got[i].DocID != ref[i].DocID {
				if mismatches < 5 {
					t.Errorf("query %s rank %d: %s (%.6f), reference %s (%.6f)", qid, i+1, got[i].DocID, got[i].Score, ref[i].DocID, ref[i].Score)
				}
				mismatches++
				break
			}
			if d := math.Abs(got[i].Score - ref[i].Score); d > 1e-4*math.Abs(ref[i].Score)+1e-6 {
				t.Errorf("query %s rank %d: score %.7f, reference %.7f", qid, i+1, got[i].Score, ref[i].Score)
				break
			}
		}
	}
	if mismatches > 0 {
		t.Errorf("%d of %d queries rank differently from the reference", mismatches, len(want))
	}

	// The in-memory evaluation agrees with trec_eval 9.0.8 on that run.
	ref := readTrecEvalAll(t, filepath.Join(shared, "eval-reference/nfcorpus.bm25.trec_eval"))
	for _, m := range []string{"ndcg_cut_10", "recall_100", "map_cut_100", "P_10", "recip_rank"} {
		if got := strconv.FormatFloat(mean(t, out.Eval.Result, m), 'f', 4, 64); got != ref[m] {
			t.Errorf("mean %s = %s, trec_eval says %s", m, got, ref[m])
		}
	}
	if got, want := out.Result.Test["ndcg_at_10"], measure.Round5(mean(t, out.Eval.Result, "ndcg_cut_10")); got != want {
		t.Errorf("results ndcg_at_10 = %v, want %v", got, want)
	}
}

// nfcorpusTest loads NFCorpus's test split from the shared data, or skips.
func nfcorpusTest(t *testing.T) *ir.Task {
	t.Helper()
	needShared(t)
	task, err := dataset.Load(filepath.Join(shared, "nfcorpus"), dataset.Options{Split: "test"})
	if err != nil {
		t.Fatal(err)
	}
	return task
}

func mean(t *testing.T, r *measure.Result, name string) float64 {
	t.Helper()
	for i, m := range r.Measures {
		if m.Name() == name {
			return r.All[i]
		}
	}
	t.Fatalf("measure %s not evaluated", name)
	return 0
}

func readTrecEvalAll(t *testing.T, path string) map[string]string {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) == 3 && fs[1] == "all" {
			m[fs[0]] = fs[2]
		}
	}
	return m
}

func TestDemoRunWritesOutputsAndResumes(t *testing.T) {
	task, err := LoadTask("demo", "", dataset.Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "out")
	first, err := Run(context.Background(), task, DefaultConfig(), Options{Out: dir})
	if err != nil {
		t.Fatal(err)
	}
	if first.Skipped {
		t.Fatal("first run reported skipped")
	}
	for _, f := range []string{RunFile, ResultsFile, ManifestFile} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Fatalf("%s missing or empty: %v", f, err)
		}
	}
	if n := first.Eval.NumQueries; n != len(task.Queries) {
		t.Errorf("evaluated %d queries, task has %d", n, len(task.Queries))
	}
	// The demo's vignettes imply their diagnosis; BM25 finds some, not all.
	if v := first.Result.Test["ndcg_at_10"]; v <= 0.05 || v >= 0.95 {
		t.Errorf("demo nDCG@10 = %v, expected a middling score", v)
	}

	again, err := Run(context.Background(), task, DefaultConfig(), Options{Out: dir})
	if err != nil {
		t.Fatal(err)
	}
	if !again.Skipped || again.Result.Test["ndcg_at_10"] != first.Result.Test["ndcg_at_10"] {
		t.Fatalf("second run: skipped=%v, ndcg %v vs %v", again.Skipped, again.Result.Test["ndcg_at_10"], first.Result.Test["ndcg_at_10"])
	}
	// Other settings into the same directory are refused: the run there
	// would be lost without a word. --overwrite replaces it.
	cfg := DefaultConfig()
	cfg.TopK = 10
	if _, err := Run(context.Background(), task, cfg, Options{Out: dir}); err == nil || !strings.Contains(err.Error(), "holds a run of bm25 on demo with other settings (top_k 100 → 10); --overwrite replaces it") {
		t.Fatalf("a run with other settings into a finished run's directory: %v", err)
	}
	over, err := Run(context.Background(), task, cfg, Options{Out: dir, Overwrite: true})
	if err != nil || over.Skipped || !over.Replaced {
		t.Fatalf("--overwrite: skipped=%v replaced=%v err=%v", over != nil && over.Skipped, over != nil && over.Replaced, err)
	}
	if again, err := Run(context.Background(), task, cfg, Options{Out: dir}); err != nil || !again.Skipped {
		t.Fatalf("the replacing run is not reused: %v", err)
	}
}

func TestCancelledRunLeavesNoFiles(t *testing.T) {
	task, err := LoadTask("demo", "", dataset.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	dir := filepath.Join(t.TempDir(), "out")
	if _, err := Run(ctx, task, DefaultConfig(), Options{Out: dir}); err == nil {
		t.Fatal("cancelled run succeeded")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("cancelled run left %v", entries)
	}
}

func TestLoadTaskErrors(t *testing.T) {
	for _, c := range []struct{ task, data, want string }{
		{"", "", "no data"},
		{"demo", "x", "either --task or --data"},
		{"nosuch", "", `unknown R2MED task "nosuch"`},
	} {
		_, err := LoadTask(c.task, c.data, dataset.Options{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("LoadTask(%q, %q) = %v, want error containing %q", c.task, c.data, err, c.want)
		}
	}
}

// TestGARWithPublishedGenerations runs BM25 on R2MED's Biology demo files
// with its HyDE generations: the queries become the generations (R2MED's
// rule for hyde with a non-reasoning LLM), and the result file takes R2MED's
// GAR shape.
func TestGARWithPublishedGenerations(t *testing.T) {
	needShared(t)
	// R2MED's demo corpus is a sample: its qrels name documents it lacks.
	task, err := dataset.Load(filepath.Join(shared, "r2med-biology-demo"), dataset.Options{AllowMissingDocs: true})
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.GAR = expand.Source{Method: "hyde", LLM: "qwen-7b"}
	dir := filepath.Join(t.TempDir(), "gar")
	out, err := Run(context.Background(), task, cfg, Options{Out: dir})
	if err != nil {
		t.Fatal(err)
	}
	if out.Result.ModelName != "" || out.Result.Extra["gar_method"] != "hyde" || out.Result.Extra["gar_llm"] != "qwen-7b" || out.Result.Extra["retriever_name"] != "bm25" {
		t.Fatalf("result file fields: model %q extra %v", out.Result.ModelName, out.Result.Extra)
	}
	plain, err := Run(context.Background(), task, DefaultConfig(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	// The generation file is an input of the GAR run only.
	if len(out.Manifest.Inputs) != len(plain.Manifest.Inputs)+1 {
		t.Fatalf("GAR inputs %v, plain %v", out.Manifest.Inputs, plain.Manifest.Inputs)
	}
	// Different query texts rank the two documents differently for some query.
	same := true
	for qid, hits := range out.Run {
		for i := range hits {
			if hits[i] != plain.Run[qid][i] {
				same = false
			}
		}
	}
	if same {
		t.Fatal("GAR run is identical to the plain run: generations were not used")
	}
	cfg.GAR.LLM = "gpt4"
	if _, err := Run(context.Background(), task, cfg, Options{}); err == nil || !strings.Contains(err.Error(), "hyde/qwen-7b") {
		t.Fatalf("missing generations: %v (want the available sets listed)", err)
	}
}

// TestLocalNanoSetAsData builds a Nano set, then reads it back as --data
// does (a directory in the Hub layout) and evaluates its published bm25
// list: the run must be exactly that list, and its nDCG@10 the one the
// builder's metadata reports (binary grades, so trec_eval's nDCG@10 over a
// list without ties equals HAKARI's).
func TestLocalNanoSetAsData(t *testing.T) {
	full, err := LoadTask("demo", "", dataset.Options{})
	if err != nil {
		t.Fatal(err)
	}
	set, err := nano.Build(full, nano.Options{Split: "NanoDemo", DocLimit: 40})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := nano.WriteHub(set, dir, "NanoDemo"); err != nil {
		t.Fatal(err)
	}
	meta, err := set.Metadata()
	if err != nil {
		t.Fatal(err)
	}
	task, err := LoadTask("", dir, dataset.Options{Split: "NanoDemo"})
	if err != nil {
		t.Fatal(err)
	}
	if len(task.Corpus) != 40 || len(task.Queries) != len(set.Queries) {
		t.Fatalf("read back %d docs, %d queries; built %d, %d", len(task.Corpus), len(task.Queries), len(set.Corpus), len(set.Queries))
	}
	cfg := DefaultConfig()
	cfg.Retrievers = []retrieve.Spec{retrieve.Candidates{Config: "bm25"}}
	out, err := Run(context.Background(), task, cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	bm := set.Subset("bm25")
	for qid, hits := range out.Run {
		for i, h := range hits {
			if h.DocID != bm.Run[qid][i].DocID {
				t.Fatalf("query %s rank %d: %s, published list has %s", qid, i+1, h.DocID, bm.Run[qid][i].DocID)
			}
		}
	}
	if got, want := out.Result.Test["ndcg_at_10"], measure.Round5(float64(meta.CandidateSubsets.BM25.NDCGAt10)); got != want {
		t.Errorf("nDCG@10 of the candidate run = %v, metadata says %v", got, want)
	}
}

func TestHubCommit(t *testing.T) {
	c := "8b9fec2db9eda4b5742d03732213fbaee8169556"
	for dir, want := range map[string]string{
		"/h/hub/datasets--R2MED--Biology/snapshots/" + c:       c,
		"/h/hub/datasets--R2MED--Biology/snapshots/" + c + "/": c,
		"/h/hub/datasets--R2MED--Biology/snapshots/main":       "",
		"/data/" + c: "",
		"data":       "",
	} {
		if got := HubCommit(dir); got != want {
			t.Errorf("HubCommit(%q) = %q, want %q", dir, got, want)
		}
	}
}

// TestMeansOverAllJudgedQueries: a Lucene-scheme BM25 run on NFCorpus
// ranks nothing for 15 of the 323 judged test queries (they share no term
// with the corpus, and Lucene's BM25, unlike gensim's, lists no zero
// scores). The run says so at once, the manifest counts them, and
// results.json states its rule: means over all 323 judged queries, the 15
// counting 0 — what trec_eval -c computes from run.trec, not trec_eval's
// default mean over the 308 the file holds.
func TestMeansOverAllJudgedQueries(t *testing.T) {
	task := nfcorpusTest(t)
	cfg := DefaultConfig()
	lucene := retrieve.DefaultBM25()
	lucene.Params.Scheme = "lucene"
	cfg.Retrievers = []retrieve.Spec{lucene}
	dir := t.TempDir()
	var warn strings.Builder
	out, err := Run(context.Background(), task, cfg, Options{Out: dir, Warn: &warn})
	if err != nil {
		t.Fatal(err)
	}
	if want := "nfcorpus: warning: 15 of 323 judged queries got no results; they count 0 in every mean (results.json averages over all judged queries, as R2MED's result files do)\n"; warn.String() != want {
		t.Errorf("warning %q, want %q", warn.String(), want)
	}
	c := out.Manifest.Counts
	if c["queries_evaluated"] != 323 || c["queries_ranked"] != 308 || c["queries_without_results"] != 15 {
		t.Errorf("manifest counts: evaluated %d, ranked %d, without results %d; want 323, 308, 15",
			c["queries_evaluated"], c["queries_ranked"], c["queries_without_results"])
	}
	res, err := results.ReadR2MED(filepath.Join(dir, ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	if res.MeanOver != "all judged queries" {
		t.Errorf("results.json mean_over %q", res.MeanOver)
	}
	if note := results.MeanNote(res, out.Manifest); note != "means over all judged queries (323; 15 without results count 0)" {
		t.Errorf("MeanNote %q", note)
	}
	// The written run, evaluated as trec_eval -c evaluates it, gives the
	// file's numbers; without -c, the mean over 308 is higher.
	file, err := trec.ReadRunFile(filepath.Join(dir, RunFile))
	if err != nil {
		t.Fatal(err)
	}
	ms := []measure.Measure{{Family: measure.NDCGCut, Cutoff: 10}}
	all, err := measure.Evaluate(task.Qrels, file, ms, measure.Options{Complete: true})
	if err != nil {
		t.Fatal(err)
	}
	some, err := measure.Evaluate(task.Qrels, file, ms, measure.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if all.NumQueries != 323 || some.NumQueries != 308 {
		t.Fatalf("-c over %d queries, without over %d", all.NumQueries, some.NumQueries)
	}
	if got := measure.Round5(all.All[0]); got != res.Test["ndcg_at_10"] {
		t.Errorf("results.json ndcg_at_10 %v, trec_eval -c on run.trec %v", res.Test["ndcg_at_10"], got)
	}
	if some.All[0] <= all.All[0] {
		t.Errorf("the mean over the answered queries (%v) is not above the mean over all (%v)", some.All[0], all.All[0])
	}
}
