package pipeline

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/r2med/r2med/config"
	"github.com/r2med/r2med/expand"
	"github.com/r2med/r2med/reproduce"
	"github.com/r2med/r2med/retrieve"
)

func specNamed(t *testing.T, name string) *reproduce.Spec {
	t.Helper()
	all, err := reproduce.All()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range all {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("no spec %s", name)
	return nil
}

// TestSpecPipelinesRead: every shipped spec's pipeline is a pipeline file
// FromYAML accepts, so a spec can never describe what run cannot do.
func TestSpecPipelinesRead(t *testing.T) {
	all, err := reproduce.All()
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, s := range all {
		cfg, err := specConfig(s, nil)
		if err != nil {
			t.Errorf("%s: %v", s.Name, err)
			continue
		}
		kinds[cfg.Retrievers[0].Kind()]++
		if s.Source.System == "gar/hyde/gpt4/bm25" && cfg.GAR != (expand.Source{Method: "hyde", LLM: "gpt4"}) {
			t.Errorf("%s: GAR %+v", s.Name, cfg.GAR)
		}
		if s.Source.System == "reranker/bge-reranker/nv/top_10" && (cfg.Rerank.Kind != "tei" || cfg.Rerank.Depth != 10) {
			t.Errorf("%s: rerank %+v", s.Name, cfg.Rerank)
		}
	}
	if kinds["bm25"] != 17 || kinds["dense"] < 40 || kinds["candidates"] != 3 {
		t.Errorf("retriever kinds %v", kinds)
	}
}

// TestServerFlagsOverlay: --base-url and --rerank-url reach the specs
// that have their stage and leave the others as they are.
func TestServerFlagsOverlay(t *testing.T) {
	fs := pflag.NewFlagSet("reproduce", pflag.ContinueOnError)
	sf := config.AddServerFlags(fs)
	if fs.Lookup("retriever") != nil || fs.Lookup("top-k") != nil || fs.Lookup("k1") != nil {
		t.Fatal("server flags include flags that change what a pipeline computes")
	}
	if err := fs.Parse([]string{"--base-url", "http://gpu:8000/v1", "--rerank-url", "http://gpu:8081"}); err != nil {
		t.Fatal(err)
	}
	rr, err := specConfig(specNamed(t, "r2med/nv-bge-reranker-top10"), sf)
	if err != nil {
		t.Fatal(err)
	}
	d, _ := rr.Retrievers[0].(retrieve.Dense)
	if len(d.BaseURLs) != 1 || d.BaseURLs[0] != "http://gpu:8000/v1" || len(rr.Rerank.BaseURLs) != 1 || rr.Rerank.BaseURLs[0] != "http://gpu:8081" {
		t.Errorf("reranker spec: dense %+v, rerank %+v", d, rr.Rerank)
	}
	bm, err := specConfig(specNamed(t, "r2med/bm25"), sf)
	if err != nil {
		t.Fatalf("server flags over a BM25 spec: %v", err)
	}
	if bm.Rerank.Kind != "" || len(bm.Retrievers) != 1 || bm.Retrievers[0].Kind() != "bm25" {
		t.Errorf("BM25 spec changed: %+v", bm)
	}
}

// TestReproduceNFCorpus runs the reference spec: R2MED's BM25 pipeline on
// NFCorpus against trec_eval's output on R2MED's own run. A copy expecting
// other numbers fails, with the difference.
func TestReproduceNFCorpus(t *testing.T) {
	needShared(t)
	s := specNamed(t, "reference/nfcorpus-bm25")
	out := t.TempDir()
	opt := ReproduceOptions{Options: Options{Out: out}, LocalData: shared, Env: reproduce.Env{Offline: true}}
	rep, err := Reproduce(context.Background(), s, opt)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Status() != "pass" || len(rep.Tasks) != 1 || len(rep.Tasks[0].Checks) != 5 {
		t.Fatalf("report %+v", rep)
	}
	for _, c := range rep.Tasks[0].Checks {
		if !c.OK || c.Delta() > 0.00006 || c.Delta() < -0.00006 {
			t.Errorf("%s: expected %v, got %v", c.Metric, c.Expected, c.Got)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "reference_nfcorpus-bm25", "NFCorpus", ManifestFile)); err != nil {
		t.Errorf("run not kept under --out: %v", err)
	}

	wrong := *s
	wrong.Expected.Tasks = []reproduce.ExpectedTask{{Task: "NFCorpus", Scores: map[string]float64{"ndcg_at_10": 0.3290, "mrr": 0.5006}}}
	rep, err = Reproduce(context.Background(), &wrong, opt)
	if err != nil {
		t.Fatal(err)
	}
	c := rep.Tasks[0].Checks
	if rep.Status() != "fail" || c[0].OK || !c[1].OK || c[0].Delta() > -0.0099 || c[0].Delta() < -0.0101 {
		t.Errorf("a spec expecting nDCG@10 0.3290: %+v", rep.Tasks[0])
	}

	rep, err = Reproduce(context.Background(), s, ReproduceOptions{LocalData: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Status() != "skip" || !strings.Contains(rep.Tasks[0].Unmet, "the local data set nfcorpus, not in") {
		t.Errorf("without the local data: %+v", rep)
	}
}

// TestReproduceHubFixtures runs specs of Hub data against a loopback Hub
// holding the demo task as R2MED/Biology at its pinned revision (with
// HyDE generations by "gpt4") and a NanoR2MED built from it: the runner
// reads the revision the spec names, the generations and the candidate
// lists, scores them as a run and a task card would, and reports the
// fixture's numbers as not R2MED's. Offline, with nothing cached, it says
// what to pull; once cached, offline runs it.
func TestReproduceHubFixtures(t *testing.T) {
	f := newHubFixture(t)
	cache := t.TempDir()
	ctx := context.Background()
	opt := ReproduceOptions{Options: Options{Out: t.TempDir()}, Hub: f.client(t, cache, false), Tasks: []string{"biology"}}

	gar := specNamed(t, "r2med/hyde-gpt4-bm25")
	rep, err := Reproduce(ctx, gar, opt)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Tasks) != 1 || rep.Tasks[0].Err != "" || len(rep.Tasks[0].Checks) != 3 {
		t.Fatalf("GAR spec on the fixture: %+v", rep)
	}
	tr := rep.Tasks[0]
	if tr.Revision != f.BiologyCommit || tr.Revision != f.Biology.Revision {
		t.Errorf("read R2MED/Biology at %s, want the pinned %s (main is %s)", tr.Revision, f.Biology.Revision, f.BiologyMain)
	}
	// The same pipeline by hand on the same data gives the numbers the
	// runner reports; they are the fixture's, not R2MED's, so ✗.
	task, err := Source{Task: "Biology", Hub: f.client(t, cache, true)}.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.GAR = expand.Source{Method: "hyde", LLM: "gpt4"}
	want, err := Run(ctx, task, cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range tr.Checks {
		if w, _ := want.Result.Metric(c.Metric); c.Got != w || c.OK || c.Missing {
			t.Errorf("%s: got %v (ok %v), the pipeline by hand gives %v; R2MED's %v must not pass", c.Metric, c.Got, c.OK, w, c.Expected)
		}
	}
	if e, _ := gar.Expected.Task("Biology"); tr.Checks[0].Expected != e.Scores["ndcg_at_10"] || e.Scores["ndcg_at_10"] != 0.57342 {
		t.Errorf("expected %v, want R2MED's hyde/gpt4 → bm25 Biology nDCG@10 0.57342", tr.Checks[0].Expected)
	}
	if rep.Status() != "fail" {
		t.Errorf("status %s", rep.Status())
	}

	// The NanoR2MED candidate lists, scored as the cards score them: the
	// fixture's card (computed when the set was built) is what comes back.
	nanoSpec := specNamed(t, "nano/bm25-candidates")
	off := opt
	off.Hub = f.client(t, t.TempDir(), false)
	off.Env.Offline = true
	rep, err = Reproduce(ctx, nanoSpec, off)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Status() != "skip" || len(rep.Unmet) != 1 || rep.Unmet[0] != "its data cached (r2med pull --suite nano biology)" {
		t.Fatalf("offline with an empty cache: %+v", rep)
	}
	on := off
	on.Env.Offline = false
	if rep, err = Reproduce(ctx, nanoSpec, on); err != nil {
		t.Fatal(err)
	}
	rep, err = Reproduce(ctx, nanoSpec, off) // now from the cache
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Tasks) != 1 || len(rep.Tasks[0].Checks) != 3 || rep.Tasks[0].Revision != f.NanoCommit {
		t.Fatalf("nano spec offline after a fetch: %+v", rep)
	}
	card := f.NanoMetadata.CandidateSubsets.BM25
	wantCard := map[string]float64{"ndcg_at_10": float64(card.NDCGAt10), "hit_at_10": float64(card.HitAt10), "recall_at_100": float64(card.RecallAt100)}
	for _, c := range rep.Tasks[0].Checks {
		if c.Got != wantCard[c.Metric] || c.OK {
			t.Errorf("nano %s: got %v (ok %v), the fixture's card says %v; the real card's %v must not pass", c.Metric, c.Got, c.OK, wantCard[c.Metric], c.Expected)
		}
	}

	// A task the spec does not have is said, not silently run as nothing.
	other := opt
	other.Tasks = []string{"NFCorpus"}
	if rep, err = Reproduce(ctx, gar, other); err != nil {
		t.Fatal(err)
	}
	if rep.Status() != "skip" || !strings.Contains(rep.Unmet[0], "one of the tasks asked for") {
		t.Errorf("unknown task: %+v", rep)
	}
}

// TestReproduceRefusesOtherRevisions: a spec whose data is not the task
// registry's (stale after the registry moved) is an error, not a run of
// other data.
func TestReproduceRefusesOtherRevisions(t *testing.T) {
	f := newHubFixture(t)
	s := *specNamed(t, "r2med/bm25")
	s.Data.Tasks = []reproduce.TaskData{{Task: "Biology", Repo: "R2MED/Biology", Revision: f.BiologyMain}}
	s.Expected.Tasks = s.Expected.Tasks[:1]
	rep, err := Reproduce(context.Background(), &s, ReproduceOptions{Hub: f.client(t, "", false)})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Status() != "fail" || !strings.Contains(rep.Tasks[0].Err, "regenerate the specs") {
		t.Errorf("a spec at another revision: %+v", rep)
	}
}
