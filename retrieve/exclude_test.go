package retrieve_test

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/r2med/r2med/bm25"
	"github.com/r2med/r2med/demo"
	"github.com/r2med/r2med/hubrepo"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/nano"
	"github.com/r2med/r2med/retrieve"
	"github.com/r2med/r2med/trec"
)

// demoExclusions excludes, for every other demo query, the documents its
// deep BM25 ranking puts at ranks 1, 3, 4 and 9 that are not relevant, so
// that every kind of retriever meets excluded documents in its top k.
func demoExclusions(t *testing.T, task *ir.Task) ir.Exclusions {
	t.Helper()
	r, err := retrieve.New(context.Background(), retrieve.DefaultBM25(), task, retrieve.Env{})
	if err != nil {
		t.Fatal(err)
	}
	run, err := r.Search(context.Background(), retrieve.Queries(task.Queries), 20)
	if err != nil {
		t.Fatal(err)
	}
	ex := ir.Exclusions{}
	for i, q := range task.Queries {
		if i%2 == 1 {
			continue
		}
		for _, rank := range []int{1, 3, 4, 9} {
			if d := run[q.ID][rank-1].DocID; task.Qrels[q.ID][d] == 0 {
				ex.Add(q.ID, d)
			}
		}
	}
	if ex.Len() < 10 {
		t.Fatalf("only %d exclusions", ex.Len())
	}
	return ex
}

// checkExcluded runs spec over task with the exclusions and without, and
// requires the rule of ir.Exclusions: each query's list is the ranking
// without exclusions, the excluded documents removed, cut to k — so every
// query still has k hits when there are k to give — the single-query path
// ranking alike, and the removed hits counted.
func checkExcluded(t *testing.T, spec retrieve.Spec, task *ir.Task, ex ir.Exclusions, k int) {
	t.Helper()
	ctx := context.Background()
	plain := *task
	plain.Excluded = nil
	r, err := retrieve.New(ctx, spec, &plain, retrieve.Env{})
	if err != nil {
		t.Fatal(err)
	}
	deep, err := r.Search(ctx, retrieve.Queries(task.Queries), k+ex.Max())
	retrieve.Close(r)
	if err != nil {
		t.Fatal(err)
	}
	with := *task
	with.Excluded = ex
	rec := &recorder{}
	r, err = retrieve.New(ctx, spec, &with, retrieve.Env{Record: rec})
	if err != nil {
		t.Fatal(err)
	}
	defer retrieve.Close(r)
	got, err := r.Search(ctx, retrieve.Queries(task.Queries), k)
	if err != nil {
		t.Fatal(err)
	}
	removed, bit := 0, 0
	for _, q := range task.Queries {
		want, n := ex.Filter(q.ID, deep[q.ID])
		removed += n
		want = want[:min(k, len(want))]
		if !reflect.DeepEqual(got[q.ID], want) {
			t.Fatalf("%s: query %s:\n got %v\nwant %v", spec.Name(), q.ID, got[q.ID], want)
		}
		if len(deep[q.ID]) >= k+len(ex[q.ID]) && len(got[q.ID]) != k {
			t.Errorf("%s: query %s has %d hits, want %d", spec.Name(), q.ID, len(got[q.ID]), k)
		}
		for _, h := range deep[q.ID][:min(k, len(deep[q.ID]))] {
			if ex.Excluded(q.ID, h.DocID) {
				bit++
				break
			}
		}
		if one, err := retrieve.SearchOne(ctx, r, retrieve.Query{ID: q.ID, Text: q.Text, Dense: retrieve.Queries([]ir.Query{q})[0].Dense}, k); err != nil || !reflect.DeepEqual(one, got[q.ID]) {
			t.Fatalf("%s: query %s: SearchOne %v (%v), Search %v", spec.Name(), q.ID, one, err, got[q.ID])
		}
	}
	if bit == 0 {
		t.Fatalf("%s: no query's top %d held an excluded document; the test shows nothing", spec.Name(), k)
	}
	if rec.counts[retrieve.HitsExcluded] != removed {
		t.Errorf("%s: counted %d hits excluded, removed %d", spec.Name(), rec.counts[retrieve.HitsExcluded], removed)
	}
}

// TestExclusionsEveryRetriever: BM25 (each scheme), a stored index, dense
// search, a run file and published candidate lists all honour a task's
// exclusions by one rule. (Weaviate: cmd/r2med's TestRunExcludeWeaviate.)
func TestExclusionsEveryRetriever(t *testing.T) {
	task, err := demo.Load()
	if err != nil {
		t.Fatal(err)
	}
	ex := demoExclusions(t, task)
	const k = 5
	for _, sc := range bm25.Schemes() {
		spec := retrieve.DefaultBM25()
		spec.Params = bm25.DefaultParams(sc)
		checkExcluded(t, spec, task, ex, k)
	}

	dir := t.TempDir()
	path := filepath.Join(dir, "demo.r2idx")
	writeBM25Index(t, path, task, bm25.R2MED)
	checkExcluded(t, retrieve.Index{Path: path, Part: retrieve.PartBM25}, task, ex, k)

	srv := newEmbedServer(t)
	checkExcluded(t, retrieve.Dense{Model: "bge", Backend: "openai", BaseURLs: []string{srv.URL + "/v1"}}, task, ex, k)

	// A run file ranking every document, as BRIGHT's runs do.
	deep, err := retrieve.New(context.Background(), retrieve.DefaultBM25(), task, retrieve.Env{})
	if err != nil {
		t.Fatal(err)
	}
	run, err := deep.Search(context.Background(), retrieve.Queries(task.Queries), len(task.Corpus))
	if err != nil {
		t.Fatal(err)
	}
	runPath := filepath.Join(dir, "bm25.trec")
	trec.Rank(run, ir.TiesByDocID)
	if err := trec.WriteRunFile(runPath, run, "bm25"); err != nil {
		t.Fatal(err)
	}
	checkExcluded(t, retrieve.RunFile{Path: runPath}, task, ex, k)

	// Published candidate lists.
	set, err := nano.Build(task, nano.Options{Split: "NanoDemo", DocLimit: 60})
	if err != nil {
		t.Fatal(err)
	}
	hub := t.TempDir()
	if err := nano.WriteHub(set, hub, "NanoDemo"); err != nil {
		t.Fatal(err)
	}
	nanoTask, err := hubrepo.Load(hub, hubrepo.Spec{Split: "NanoDemo"})
	if err != nil {
		t.Fatal(err)
	}
	nanoEx := ir.Exclusions{}
	for _, q := range nanoTask.Queries {
		for _, h := range set.Subset("bm25").Run[q.ID][:4] {
			if nanoTask.Qrels[q.ID][h.DocID] == 0 {
				nanoEx.Add(q.ID, h.DocID)
			}
		}
	}
	checkExcluded(t, retrieve.Candidates{Config: "bm25"}, nanoTask, nanoEx, k)
}

// TestExcludeWrapper pins the wrapper's arithmetic on a retriever that
// records what it was asked: depth k + the largest exclusion list, the
// excluded hits removed in order, lists cut to k; a task without
// exclusions gets the retriever itself.
func TestExcludeWrapper(t *testing.T) {
	var asked []int
	base := retrieve.RetrieverFunc(func(_ context.Context, qs []retrieve.Query, k int) (ir.Run, error) {
		asked = append(asked, k)
		run := ir.Run{}
		for _, q := range qs {
			for i := range k {
				run[q.ID] = append(run[q.ID], ir.Hit{DocID: string(rune('a' + i)), Score: float64(100 - i)})
			}
		}
		return run, nil
	})
	if r := retrieve.Exclude(base, nil, retrieve.Env{}); r == nil {
		t.Fatal("nil")
	}
	ex := ir.Exclusions{"q1": {"a": true, "c": true, "z": true}, "q2": {"b": true}}
	rec := &recorder{}
	r := retrieve.Exclude(base, ex, retrieve.Env{Record: rec})
	run, err := r.Search(context.Background(), []retrieve.Query{{ID: "q1"}, {ID: "q2"}, {ID: "q3"}}, 3)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(asked, []int{6}) {
		t.Errorf("asked for %v, want k 3 + 3", asked)
	}
	docs := func(hits []ir.Hit) (s string) {
		for _, h := range hits {
			s += h.DocID
		}
		return s
	}
	if docs(run["q1"]) != "bde" || docs(run["q2"]) != "acd" || docs(run["q3"]) != "abc" {
		t.Errorf("lists %s %s %s", docs(run["q1"]), docs(run["q2"]), docs(run["q3"]))
	}
	if run["q1"][0].Score != 99 {
		t.Errorf("scores kept: %v", run["q1"])
	}
	if rec.counts[retrieve.HitsExcluded] != 3 {
		t.Errorf("counted %v", rec.counts)
	}
}
