package plan_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/r2med/r2med/demo"
	"github.com/r2med/r2med/expand"
	"github.com/r2med/r2med/fusion"
	"github.com/r2med/r2med/internal/reuse"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/plan"
	"github.com/r2med/r2med/rerank"
	"github.com/r2med/r2med/retrieve"
	"github.com/r2med/r2med/usage"
)

func demoTask(t *testing.T) *ir.Task {
	t.Helper()
	task, err := demo.Load()
	if err != nil {
		t.Fatal(err)
	}
	return task
}

func retrievers(specs ...retrieve.Spec) []plan.Retriever {
	var rs []plan.Retriever
	for _, s := range specs {
		rs = append(rs, plan.Retriever{Spec: s})
	}
	return rs
}

func lucene() retrieve.BM25 {
	s := retrieve.DefaultBM25()
	s.Params.Scheme, s.Params.K1, s.Params.B = "lucene", 1.2, 0.75
	return s
}

// TestDepth: the one depth rule. A retriever searches k deep; fused, each
// contributes its top max(k, 100) (or the fusion's own depth); a rerank
// reads at least its depth; -1 reranks what the retrieval gives.
func TestDepth(t *testing.T) {
	bm, lu := retrieve.DefaultBM25(), lucene()
	for _, c := range []struct {
		spec plan.Spec
		want int
	}{
		{plan.Spec{Retrievers: retrievers(bm), K: 10}, 10},
		{plan.Spec{Retrievers: retrievers(bm), K: 1000}, 1000},
		{plan.Spec{Retrievers: retrievers(bm, lu), K: 10}, 100},
		{plan.Spec{Retrievers: retrievers(bm, lu), K: 1000}, 1000},
		{plan.Spec{Retrievers: retrievers(bm, lu), Fuse: fusion.Spec{Depth: 50}, K: 10}, 50},
		{plan.Spec{Retrievers: retrievers(bm), Rerank: &plan.Rerank{Depth: 20}, K: 10}, 20},
		{plan.Spec{Retrievers: retrievers(bm), Rerank: &plan.Rerank{}, K: 10}, rerank.DefaultDepth},
		{plan.Spec{Retrievers: retrievers(bm), Rerank: &plan.Rerank{Depth: -1}, K: 30}, 30},
		{plan.Spec{Retrievers: retrievers(bm, lu), Rerank: &plan.Rerank{Depth: 200}, K: 10}, 200},
	} {
		if got := c.spec.Depth(); got != c.want {
			t.Errorf("%s k=%d: depth %d, want %d", c.spec.System(), c.spec.K, got, c.want)
		}
	}
}

// TestSystem: the plan names its system by sysname's rule, from its
// stages' short names; a name given, or a retriever's or reranker's own,
// is kept.
func TestSystem(t *testing.T) {
	bm, lu := retrieve.DefaultBM25(), lucene()
	run := retrieve.RunFile{Path: "runs/x.trec", Tag: "dense-x"}
	tei := &plan.Rerank{Scorer: rerank.Spec{Kind: "TEI"}, Depth: 10}
	insert := &plan.Rerank{Scorer: rerank.Spec{Kind: "insertrank", Model: "deepseek-r1"}, Depth: 20}
	for _, c := range []struct {
		spec plan.Spec
		want string
	}{
		{plan.Spec{Retrievers: retrievers(bm)}, "bm25"},
		{plan.Spec{Retrievers: retrievers(bm, lu, run), Fuse: fusion.Spec{Method: "combsum"}}, "combsum(bm25,bm25-lucene,run:dense-x)"},
		{plan.Spec{Retrievers: retrievers(bm), Expansion: expand.Source{Method: "hyde", LLM: "gpt4"}}, "hyde/gpt4 → bm25"},
		{plan.Spec{Retrievers: retrievers(bm, lu), Rerank: insert}, "rrf(bm25,bm25-lucene) → insertrank:deepseek-r1@20"},
		{plan.Spec{Retrievers: retrievers(bm), Rerank: tei}, "bm25 → tei@10"},
		{plan.Spec{Retrievers: retrievers(bm), Rerank: &plan.Rerank{Scorer: rerank.Spec{Kind: "tei"}}}, "bm25 → tei@100"},
		{plan.Spec{Retrievers: retrievers(bm), Rerank: &plan.Rerank{Scorer: rerank.Spec{Kind: "tei"}, Depth: -1}}, "bm25 → tei"},
		{plan.Spec{Retrievers: []plan.Retriever{{Spec: run, Name: "bm25"}}, Rerank: insert}, "bm25 → insertrank:deepseek-r1@20"},
		{plan.Spec{Retrievers: retrievers(bm), Rerank: &plan.Rerank{Name: "my-reranker", Depth: 5}}, "bm25 → my-reranker@5"},
		{plan.Spec{Name: "baseline", Retrievers: retrievers(bm), Rerank: tei}, "baseline"},
	} {
		if got := c.spec.System(); got != c.want {
			t.Errorf("%q, want %q", got, c.want)
		}
	}
}

// TestDescribe: what the manifest records, one retriever at the top
// level, several with the fusion and the parts' names.
func TestDescribe(t *testing.T) {
	bm, lu := retrieve.DefaultBM25(), lucene()
	one := plan.Spec{Retrievers: retrievers(bm), K: 100, Expansion: expand.Source{Method: "hyde", LLM: "gpt4"},
		Rerank: &plan.Rerank{Scorer: rerank.Spec{Kind: "tei", Model: "m"}, KeepTail: true}}.Describe()
	if one["retriever"] != "bm25" || one["top_k"] != 100 || one["gar_method"] != "hyde" || one["gar_llm"] != "gpt4" {
		t.Errorf("one retriever: %v", one)
	}
	if r := one["rerank"].(map[string]any); !reflect.DeepEqual(r, map[string]any{"kind": "tei", "model": "m", "depth": 100, "keep_tail": true}) {
		t.Errorf("rerank: %v", r)
	}
	fused := plan.Spec{Name: "mine", Retrievers: retrievers(bm, lu), K: 10}.Describe()
	f := fused["fusion"].(map[string]any)
	if fused["name"] != "mine" || len(fused["retrievers"].([]map[string]any)) != 2 || f["method"] != "rrf" || !reflect.DeepEqual(f["retrievers"], []string{"bm25", "bm25-lucene"}) {
		t.Errorf("fused: %v", fused)
	}
}

func TestNewRefuses(t *testing.T) {
	bm := retrieve.DefaultBM25()
	for _, c := range []struct {
		spec plan.Spec
		want string
	}{
		{plan.Spec{K: 10}, "no retriever"},
		{plan.Spec{Retrievers: []plan.Retriever{{}}, K: 10}, "retriever 1 is missing"},
		{plan.Spec{Retrievers: retrievers(retrieve.RunFile{}), K: 10}, "run needs the path"},
		{plan.Spec{Retrievers: retrievers(bm, retrieve.RunFile{}), K: 10}, "retriever 2 (run): run needs the path"},
		{plan.Spec{Retrievers: retrievers(bm)}, "k must be positive"},
		{plan.Spec{Retrievers: retrievers(bm, bm), Fuse: fusion.Spec{Method: "max"}, K: 10}, `unknown fusion method "max"`},
		{plan.Spec{Retrievers: retrievers(bm), Rerank: &plan.Rerank{Scorer: rerank.Spec{Kind: "colbert"}}, K: 10}, `unknown reranker "colbert"`},
		{plan.Spec{Retrievers: retrievers(bm), Rerank: &plan.Rerank{Scorer: rerank.Spec{Kind: "tei"}, Depth: -2}, K: 10}, "rerank depth must be positive"},
		{plan.Spec{Retrievers: retrievers(bm), Rerank: &plan.Rerank{}, K: 10}, "a rerank needs its kind"},
		{plan.Spec{Retrievers: retrievers(bm), Rerank: &plan.Rerank{Scorer: rerank.Spec{Kind: "tei"}, Ties: "random"}, K: 10}, `unknown rerank tie order "random"`},
	} {
		if _, err := plan.New(c.spec); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.spec, err, c.want)
		}
	}
}

// list is a retriever spec over lists made beforehand (given to Execute
// built), that says what a published candidate list says of itself.
type list struct {
	name                   string
	safeguarded, ranksOnly bool
}

func (l list) Kind() string                      { return "list" }
func (l list) Name() string                      { return l.name }
func (l list) Validate() error                   { return nil }
func (l list) Describe() map[string]any          { return map[string]any{"retriever": l.name} }
func (l list) Inputs(*ir.Task) ([]string, error) { return nil, nil }
func (l list) Ties() ir.Ties                     { return ir.TiesAsListed }
func (l list) Safeguarded() bool                 { return l.safeguarded }
func (l list) RanksOnly() bool                   { return l.ranksOnly }
func (l list) New(context.Context, *ir.Task, retrieve.Env) (retrieve.Retriever, error) {
	return nil, errors.New("given built")
}

// equal scores every document alike and records the order it was shown
// them in.
type equal struct{ shown map[string][]string }

func (e *equal) Score(_ context.Context, query string, docs []string) ([]float64, error) {
	e.shown[query] = slices.Clone(docs)
	return make([]float64, len(docs)), nil
}

// TestSafeguardRule: a list that may end with HAKARI's rank-101 safeguard
// is reranked with it, its candidates in HAKARI's hash order, or without
// it (WithoutSafeguard); any other retrieval has no safeguard to drop, and
// a list published without scores is said to have ranks only.
func TestSafeguardRule(t *testing.T) {
	task := &ir.Task{Name: "nano", Queries: []ir.Query{{ID: "q", Text: "q"}}}
	lists := ir.Run{"q": nil}
	for i := range 101 {
		id := string(rune('a'+i/26)) + string(rune('a'+i%26))
		task.Corpus = append(task.Corpus, ir.Doc{ID: id, Text: id})
		lists["q"] = append(lists["q"], ir.Hit{DocID: id, Score: float64(101 - i)})
	}
	safeguard := lists["q"][100].DocID
	exec := func(spec retrieve.Spec, r plan.Rerank) (*plan.Result, *equal, error) {
		sc := &equal{shown: map[string][]string{}}
		r.Scorer = rerank.Spec{Kind: "tei"}
		p, err := plan.New(plan.Spec{Retrievers: retrievers(spec), Rerank: &r, K: 200})
		if err != nil {
			t.Fatal(err)
		}
		res, err := p.Execute(context.Background(), plan.Input{Task: task}, plan.Env{Retrievers: []retrieve.Retriever{retrieve.Lists(lists)}, Scorer: sc})
		return res, sc, err
	}
	hybrid := list{name: "candidates:reranking_hybrid", safeguarded: true}
	res, sc, err := exec(hybrid, plan.Rerank{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Run["q"]) != 101 {
		t.Errorf("kept: %d documents, want the safeguard reranked with the 100", len(res.Run["q"]))
	}
	if shown := sc.shown["q"]; slices.Equal(shown, docIDs(lists["q"])) {
		t.Error("the candidates were shown in the list's order, not HAKARI's hash order")
	}
	if res, _, err = exec(hybrid, plan.Rerank{WithoutSafeguard: true}); err != nil || len(res.Run["q"]) != 100 || slices.Contains(docIDs(res.Run["q"]), safeguard) {
		t.Errorf("dropped: %v, %d documents", err, len(res.Run["q"]))
	}
	plain := list{name: "candidates:bm25"}
	if res, sc, err = exec(plain, plan.Rerank{}); err != nil || !slices.Equal(sc.shown["q"], docIDs(lists["q"][:100])) {
		t.Errorf("a plain list: %v; shown %v", err, sc.shown["q"])
	}
	if _, _, err := exec(plain, plan.Rerank{WithoutSafeguard: true}); err == nil || !strings.Contains(err.Error(), "applies to reranking_hybrid lists") {
		t.Errorf("without safeguard on a plain list: %v", err)
	}
	if res, sc, err = exec(hybrid, plan.Rerank{Ties: plan.TiesInput}); err != nil || !slices.Equal(sc.shown["q"], docIDs(lists["q"])) {
		t.Errorf("ties input asked for: %v", err)
	}
	// Ties in the order shown, stepped apart: written order is evaluated
	// order.
	if i := ir.TieAt(res.Run["q"]); i >= 0 {
		t.Errorf("the reranked list has a tie at %d", i)
	}
}

func docIDs(hits []ir.Hit) []string {
	var ids []string
	for _, h := range hits {
		ids = append(ids, h.DocID)
	}
	return ids
}

// TestOneQueryIsTheBatch: executing the plan for each query alone (the
// search service's path) gives each query's list of the batch (run's),
// for one retriever, several fused, and reranked.
func TestOneQueryIsTheBatch(t *testing.T) {
	task := demoTask(t)
	ctx := context.Background()
	bm, lu := retrieve.DefaultBM25(), lucene()
	byLength := rerank.ScorerFunc(func(_ context.Context, _ string, docs []string) ([]float64, error) {
		s := make([]float64, len(docs))
		for i, d := range docs {
			s[i] = float64(len(d) % 7) // many ties
		}
		return s, nil
	})
	for _, spec := range []plan.Spec{
		{Retrievers: retrievers(bm), K: 10},
		{Retrievers: retrievers(bm, lu), Fuse: fusion.Spec{Method: "combsum", Norm: "zscore"}, K: 10},
		{Retrievers: retrievers(bm, lu), Rerank: &plan.Rerank{Name: "length", Depth: 20, KeepTail: true}, K: 30},
	} {
		p, err := plan.New(spec)
		if err != nil {
			t.Fatal(err)
		}
		env := plan.Env{Scorer: byLength}
		batch, err := p.Execute(ctx, plan.Input{Task: task}, env)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range task.Queries {
			one, err := p.Execute(ctx, plan.Input{Task: task, Queries: retrieve.Queries([]ir.Query{q})}, env)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(one.Run[q.ID], batch.Run[q.ID]) {
				t.Errorf("%s, query %s: alone %v, in the batch %v", spec.System(), q.ID, one.Run[q.ID], batch.Run[q.ID])
				break
			}
		}
	}
}

// memory is a Store that keeps stages in memory, by name and
// fingerprint, and says what it was asked.
type memory struct {
	kept  map[string]ir.Run
	asked []plan.Stage
	made  []string
}

func (m *memory) Stage(_ context.Context, st plan.Stage, produce func(plan.Work) (ir.Run, error)) (ir.Run, error) {
	m.asked = append(m.asked, st)
	if run, ok := m.kept[st.Name+" "+st.Fingerprint]; ok {
		return run, nil
	}
	m.made = append(m.made, st.Name)
	run, err := produce(plan.Work{Meter: &usage.Meter{}})
	if err == nil && st.Keep {
		m.kept[st.Name+" "+st.Fingerprint] = run
	}
	return run, err
}

// TestStoreReusesStages: a store is asked for every stage by name and
// fingerprint; executing again reuses every stage, and a changed rerank
// redoes the rerank alone.
func TestStoreReusesStages(t *testing.T) {
	task := demoTask(t)
	ctx := context.Background()
	calls := 0
	sc := rerank.ScorerFunc(func(_ context.Context, _ string, docs []string) ([]float64, error) {
		calls++
		s := make([]float64, len(docs))
		for i := range docs {
			s[i] = float64(i % 3)
		}
		return s, nil
	})
	spec := plan.Spec{Retrievers: retrievers(retrieve.DefaultBM25(), lucene()), Rerank: &plan.Rerank{Scorer: rerank.Spec{Kind: "tei"}, Depth: 10}, K: 10}
	store := &memory{kept: map[string]ir.Run{}}
	exec := func(s plan.Spec) *plan.Result {
		p, err := plan.New(s)
		if err != nil {
			t.Fatal(err)
		}
		res, err := p.Execute(ctx, plan.Input{Task: task}, plan.Env{Store: store, Scorer: sc})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	first := exec(spec)
	want := []string{"retrieve-1-bm25", "retrieve-2-bm25-lucene", "fuse", "rerank"}
	if !slices.Equal(store.made, want) {
		t.Errorf("made %v, want %v", store.made, want)
	}
	for _, st := range store.asked {
		if !st.Keep || st.Fingerprint == "" || st.Resumable != (st.Name == "rerank") {
			t.Errorf("stage %+v", st)
		}
	}
	store.made, calls = nil, 0
	if again := exec(spec); !reflect.DeepEqual(again.Run, first.Run) || len(store.made) != 0 || calls != 0 {
		t.Errorf("again: made %v, %d rerank calls, same run %v", store.made, calls, reflect.DeepEqual(again.Run, first.Run))
	}
	deeper := spec
	r := *spec.Rerank
	r.Depth = 20
	deeper.Rerank = &r
	deeper.K = 20
	store.made = nil
	exec(deeper)
	// The fused lists are 100 deep either way: only the rerank is redone.
	if !slices.Equal(store.made, []string{"rerank"}) {
		t.Errorf("a changed rerank made %v", store.made)
	}
}

// TestRerankCheckpointResumes: without a store, Env.Checkpoint keeps the
// finished queries under the rerank's fingerprint; the same plan resumes
// from it, another starts afresh.
func TestRerankCheckpointResumes(t *testing.T) {
	task := demoTask(t)
	ctx := context.Background()
	cp := filepath.Join(t.TempDir(), "rerank.partial")
	fail := true
	asked := 0
	sc := rerank.ScorerFunc(func(ctx context.Context, _ string, docs []string) ([]float64, error) {
		asked++
		if fail && asked > 3 {
			return nil, errors.New("server gone")
		}
		s := make([]float64, len(docs))
		for i := range docs {
			s[i] = float64(-i)
		}
		return s, nil
	})
	spec := plan.Spec{Retrievers: retrievers(retrieve.DefaultBM25()), Rerank: &plan.Rerank{Scorer: rerank.Spec{Kind: "tei"}, Depth: 5}, K: 5}
	p, _ := plan.New(spec)
	var log strings.Builder
	env := plan.Env{Scorer: sc, Checkpoint: cp}
	env.Log = &log
	if _, err := p.Execute(ctx, plan.Input{Task: task}, env); err == nil {
		t.Fatal("the failing rerank succeeded")
	}
	if _, err := os.Stat(cp); err != nil {
		t.Fatalf("no checkpoint kept: %v", err)
	}
	fail, asked = false, 0
	if _, err := p.Execute(ctx, plan.Input{Task: task}, env); err != nil {
		t.Fatal(err)
	}
	if asked != len(task.Queries)-3 || !strings.Contains(log.String(), "resuming the rerank: 3 queries already reranked") {
		t.Errorf("resumed with %d queries asked of %d; log %q", asked, len(task.Queries), log.String())
	}
	spec.Rerank.Scorer.Model = "another"
	other, _ := plan.New(spec)
	asked = 0
	log.Reset()
	if _, err := other.Execute(ctx, plan.Input{Task: task}, env); err != nil {
		t.Fatal(err)
	}
	if asked != len(task.Queries) || !strings.Contains(log.String(), "starting the rerank afresh") {
		t.Errorf("another reranker asked %d queries; log %q", asked, log.String())
	}
}

// TestTopKIsAPrefix: the cut to k only cuts. A run of k < 100 is the top k
// of the run of 100, for each BM25 scheme (r2med and robertson keep ties,
// zero scores among them, in corpus order at their cutoff, lucene by doc
// id), whose ties at the cutoff are not in the order trec_eval reads, and
// through the search service's path (one query) too: each retriever
// searches at least 100 deep, R2MED's depth, before its ties are ranked.
func TestTopKIsAPrefix(t *testing.T) {
	task := demoTask(t)
	ctx := context.Background()
	robertson := retrieve.DefaultBM25()
	robertson.Params.Scheme = "robertson"
	for _, spec := range []retrieve.Spec{retrieve.DefaultBM25(), lucene(), robertson} {
		exec := func(k int, queries []retrieve.Query) ir.Run {
			p, err := plan.New(plan.Spec{Retrievers: retrievers(spec), K: k})
			if err != nil {
				t.Fatal(err)
			}
			res, err := p.Execute(ctx, plan.Input{Task: task, Queries: queries}, plan.Env{})
			if err != nil {
				t.Fatal(err)
			}
			return res.Run
		}
		deep := exec(100, nil)
		for _, k := range []int{1, 3, 10, 50} {
			run := exec(k, nil)
			for _, q := range task.Queries {
				want := docIDs(deep[q.ID][:min(k, len(deep[q.ID]))])
				if got := docIDs(run[q.ID]); !slices.Equal(got, want) {
					t.Errorf("%s top %d, query %s: %v, the top of 100 %v", spec.Name(), k, q.ID, got, want)
					break
				}
			}
			q := task.Queries[len(task.Queries)-1]
			if got, want := docIDs(exec(k, retrieve.Queries([]ir.Query{q}))[q.ID]), docIDs(run[q.ID]); !slices.Equal(got, want) {
				t.Errorf("%s top %d, query %s alone: %v, in the batch %v", spec.Name(), k, q.ID, got, want)
			}
		}
	}
}

// TestShallowStageOfOldNotReused: a retrieval stage kept by a build that
// searched only k deep (k < SearchDepth) holds another run than this
// build makes, so it is not reused; at 100 and deeper, where nothing
// changed, the fingerprint is what it was.
func TestShallowStageOfOldNotReused(t *testing.T) {
	task := demoTask(t)
	bm := retrieve.DefaultBM25()
	old := func(depth int) string {
		return reuse.Of(reuse.Of("data", map[string]any{"revision": retrieve.Revision}, 0), bm.Describe(), depth)
	}
	q := task.Queries[0].ID
	for _, k := range []int{10, 100} {
		stale := ir.Run{q: {{DocID: task.Corpus[0].ID, Score: 1}}}
		store := &memory{kept: map[string]ir.Run{"retrieve " + old(k): stale}}
		p, err := plan.New(plan.Spec{Retrievers: retrievers(bm), K: k})
		if err != nil {
			t.Fatal(err)
		}
		res, err := p.Execute(context.Background(), plan.Input{Task: task, Data: "data"}, plan.Env{Store: store})
		if err != nil {
			t.Fatal(err)
		}
		if reused := len(res.Run[q]) == 1; reused != (k >= plan.SearchDepth) {
			t.Errorf("k=%d: the stage kept by the old rule reused: %v", k, reused)
		}
	}
}
