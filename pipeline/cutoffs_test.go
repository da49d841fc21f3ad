package pipeline

import (
	"context"
	"maps"
	"slices"
	"testing"

	"github.com/r2med/r2med/demo"
	"github.com/r2med/r2med/hub"
	"github.com/r2med/r2med/hub/hubtest"
	"github.com/r2med/r2med/hubrepo/brighttest"
	"github.com/r2med/r2med/measure"
	"github.com/r2med/r2med/tasks"
)

// TestBrightCutoffs: a run on a BRIGHT task reports BRIGHT's metric set,
// as its retrievers.py calculate_retrieval_metrics computes it (k 1, 5,
// 10, 25, 50, 100 and MRR), each the mean of trec_eval's measure over the
// run as evaluated (exclusions removed), rounded to five decimals; a run
// on R2MED's data keeps R2MED's (no k 5).
func TestBrightCutoffs(t *testing.T) {
	srv := hubtest.NewServer(t)
	brighttest.Serve(t, srv)
	ctx := context.Background()
	c := &hub.Client{Endpoint: srv.URL(), CacheDir: t.TempDir()}
	task, err := Source{Task: "biology", Suite: tasks.Bright, Hub: c}.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out, err := Run(ctx, task, DefaultConfig(), Options{Out: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"mrr"}
	for _, f := range []string{"ndcg_at_", "map_at_", "recall_at_", "precision_at_"} {
		for _, k := range []string{"1", "5", "10", "25", "50", "100"} {
			want = append(want, f+k)
		}
	}
	slices.Sort(want)
	if got := slices.Sorted(maps.Keys(out.Result.Test)); !slices.Equal(got, want) {
		t.Fatalf("BRIGHT run's results.json keys\n%v\nwant BRIGHT's\n%v", got, want)
	}
	run, _ := task.Excluded.FilterRun(out.Run)
	qrels, _ := task.Excluded.FilterQrels(task.Qrels)
	ms := measure.MustParse("ndcg_cut.5 P.5 recall.5 map_cut.5")
	ev, err := measure.Evaluate(qrels, run, ms, measure.Options{Complete: true})
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range ev.Measures {
		key := measure.R2MEDKey(m)
		if got, w := out.Result.Test[key], measure.Round5(ev.All[i]); got != w {
			t.Errorf("%s %v, want trec_eval's %s %v", key, got, m.Name(), w)
		}
	}

	r2, err := demo.Load()
	if err != nil {
		t.Fatal(err)
	}
	rout, err := Run(ctx, r2, DefaultConfig(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := rout.Result.Test["ndcg_at_5"]; ok || len(rout.Result.Test) != 21 {
		t.Errorf("an R2MED-layout run reports %v, want R2MED's cutoffs", slices.Sorted(maps.Keys(rout.Result.Test)))
	}
}
