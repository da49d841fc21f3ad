package retrieve_test

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/r2med/r2med/demo"
	"github.com/r2med/r2med/hubrepo"
	"github.com/r2med/r2med/nano"
	"github.com/r2med/r2med/retrieve"
)

// TestCandidates builds a Nano set, writes it in the Hub layout and reads
// its bm25 candidate list back as a retriever: the lists, in order, cut
// to k.
func TestCandidates(t *testing.T) {
	full, err := demo.Load()
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
	task, err := hubrepo.Load(dir, hubrepo.Spec{Split: "NanoDemo"})
	if err != nil {
		t.Fatal(err)
	}
	spec, err := parse(t, "candidates: bm25")
	if err != nil {
		t.Fatal(err)
	}
	c := spec.(retrieve.Candidates)
	if c.Name() != "candidates:bm25" || c.Safeguarded() || !(retrieve.Candidates{Config: "reranking_hybrid"}).Safeguarded() {
		t.Errorf("name %q", c.Name())
	}
	files, err := c.Inputs(task)
	if err != nil || len(files) != 1 || !strings.Contains(files[0], "bm25") {
		t.Fatalf("inputs %v %v", files, err)
	}
	ctx := context.Background()
	r, err := retrieve.New(ctx, c, task, retrieve.Env{})
	if err != nil {
		t.Fatal(err)
	}
	run, err := r.Search(ctx, retrieve.Queries(task.Queries), 7)
	if err != nil {
		t.Fatal(err)
	}
	published := set.Subset("bm25").Run
	for _, q := range task.Queries {
		var want []string
		for _, h := range published[q.ID][:min(7, len(published[q.ID]))] {
			want = append(want, h.DocID)
		}
		var got []string
		for _, h := range run[q.ID] {
			got = append(got, h.DocID)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("query %s: %v, published %v", q.ID, got, want)
		}
		one, _ := retrieve.SearchOne(ctx, r, retrieve.Query{ID: q.ID}, 7)
		if !reflect.DeepEqual(one, run[q.ID]) {
			t.Fatalf("query %s: SearchOne differs", q.ID)
		}
	}
	if _, err := (retrieve.Candidates{Config: "nosuch"}).Inputs(task); err == nil {
		t.Error("an unknown config passed")
	}
	if got, _ := retrieve.SearchOne(ctx, r, retrieve.Query{ID: "unknown"}, 5); len(got) != 0 {
		t.Errorf("unknown query: %v", got)
	}

}
