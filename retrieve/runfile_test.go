package retrieve_test

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/r2med/r2med/demo"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/retrieve"
	"github.com/r2med/r2med/trec"
)

func TestRunFile(t *testing.T) {
	task, err := demo.Load()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	dir := t.TempDir()
	run := ir.Run{}
	for i, q := range task.Queries {
		for j := range 5 {
			run[q.ID] = append(run[q.ID], ir.Hit{DocID: task.Corpus[(i+j)%len(task.Corpus)].ID, Score: float64(10 - j)})
		}
	}
	if err := trec.WriteRunFile(filepath.Join(dir, "demo.trec"), run, "x"); err != nil {
		t.Fatal(err)
	}
	spec, err := parse(t, "run: "+filepath.Join(dir, "{task}.trec"))
	if err != nil {
		t.Fatal(err)
	}
	rf := spec.(retrieve.RunFile)
	// Before the task's file is read the retriever is named by the path's
	// stem; Resolve reads the tag its lines carry, which names it.
	if rf.Name() != "run:{task}" || rf.Describe()["retriever"] != "run:"+filepath.Join(dir, "{task}.trec") {
		t.Errorf("name %q describe %v", rf.Name(), rf.Describe())
	}
	if r, err := retrieve.Resolve(ctx, rf, task); err != nil || r.Name() != "run:x" || !reflect.DeepEqual(r.Describe(), rf.Describe()) {
		t.Errorf("resolved: name %q, describe %v, %v", r.Name(), r.Describe(), err)
	}
	// A path without {task} is read when parsed; a file whose lines carry
	// several tags is named by its stem.
	mixed := filepath.Join(dir, "mixed.trec.gz")
	os.WriteFile(strings.TrimSuffix(mixed, ".gz"), []byte("q1 Q0 d1 1 2 a\nq1 Q0 d2 2 1 b\n"), 0o644)
	for path, want := range map[string]string{filepath.Join(dir, "demo.trec"): "run:x", strings.TrimSuffix(mixed, ".gz"): "run:mixed"} {
		if spec, err := parse(t, "run: "+path); err != nil || spec.Name() != want {
			t.Errorf("run: %s named %q (%v), want %q", path, spec.Name(), err, want)
		}
	}
	if in, err := rf.Inputs(task); err != nil || !reflect.DeepEqual(in, []string{filepath.Join(dir, "demo.trec")}) {
		t.Fatalf("inputs %v %v", in, err)
	}
	r, err := retrieve.New(ctx, rf, task, retrieve.Env{})
	if err != nil {
		t.Fatal(err)
	}
	qs := retrieve.Queries(task.Queries[:2])
	got, err := r.Search(ctx, qs, 3)
	if err != nil {
		t.Fatal(err)
	}
	want := ir.Run{qs[0].ID: run[qs[0].ID][:3], qs[1].ID: run[qs[1].ID][:3]}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("search %v, want %v", got, want)
	}
	if _, err := (retrieve.RunFile{Path: filepath.Join(dir, "missing.trec")}).Inputs(task); err == nil || !strings.Contains(err.Error(), "missing.trec") {
		t.Errorf("missing file: %v", err)
	}
	for _, doc := range []string{"run:", "run: {path: x}"} {
		if _, err := parse(t, doc); err == nil || !strings.Contains(err.Error(), "run needs the path of a TREC run file") {
			t.Errorf("%q: %v", doc, err)
		}
	}
}

func TestCheckRun(t *testing.T) {
	task, err := demo.Load()
	if err != nil {
		t.Fatal(err)
	}
	q0, d0 := task.Queries[0].ID, task.Corpus[0].ID
	run := ir.Run{
		q0:      {{DocID: d0, Score: 3}, {DocID: "ghost", Score: 2}, {DocID: "ghost", Score: 1}},
		"other": {{DocID: d0, Score: 1}},
	}
	if _, err := retrieve.CheckRun("r.trec", run, task, retrieve.Env{}); err == nil ||
		!strings.Contains(err.Error(), `r.trec: 1 query is not in task demo ("other") and 1 ranked document is not in its corpus ("ghost")`) {
		t.Fatalf("error %v", err)
	}
	var log strings.Builder
	rec := &recorder{}
	kept, err := retrieve.CheckRun("r.trec", run, task, retrieve.Env{AllowMissingDocs: true, Log: &log, Record: rec})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(kept, ir.Run{q0: {{DocID: d0, Score: 3}}}) {
		t.Fatalf("kept %v", kept)
	}
	if rec.counts["run_queries_not_in_task"] != 1 || rec.counts["run_hits_not_in_corpus"] != 2 {
		t.Errorf("counts %v", rec.counts)
	}
	if !strings.Contains(log.String(), "warning:") || !strings.Contains(log.String(), "dropped 1 query and 2 ranked documents") {
		t.Errorf("log %q", log.String())
	}
	// An empty file (a run that failed or was cut off before its first
	// line) is refused: fused, it would pass the other runs' ranking off
	// as the fusion; alone, every query would score 0.
	for _, env := range []retrieve.Env{{}, {AllowMissingDocs: true}} {
		if _, err := retrieve.CheckRun("r.trec", ir.Run{}, task, env); err == nil || !strings.Contains(err.Error(), "r.trec: the run is empty") {
			t.Errorf("an empty run, allow missing docs %v: %v", env.AllowMissingDocs, err)
		}
	}
	clean := ir.Run{q0: {{DocID: d0, Score: 1}}}
	if got, err := retrieve.CheckRun("r", clean, task, retrieve.Env{}); err != nil || !reflect.DeepEqual(got, clean) {
		t.Errorf("a clean run: %v %v", got, err)
	}

}

// A run made over a BEIR query file ranks every split's queries: those
// the task holds but does not judge are left out and said, as trec_eval
// leaves them, without --allow-missing-docs; a query the task lacks is
// still an error.
func TestCheckRunLeavesOutUnjudged(t *testing.T) {
	task, err := demo.Load()
	if err != nil {
		t.Fatal(err)
	}
	task.Split = "test"
	task.Unjudged = []string{"dev-1", "dev-2"}
	q0, d0 := task.Queries[0].ID, task.Corpus[0].ID
	run := ir.Run{q0: {{DocID: d0, Score: 3}}, "dev-2": {{DocID: d0, Score: 1}}, "dev-1": {{DocID: "anything", Score: 1}}}
	var log strings.Builder
	rec := &recorder{}
	kept, err := retrieve.CheckRun("all-splits.trec", run, task, retrieve.Env{Log: &log, Record: rec})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(kept, ir.Run{q0: {{DocID: d0, Score: 3}}}) || len(run) != 3 {
		t.Errorf("kept %v (the caller's run %v must stay whole)", kept, run)
	}
	if rec.counts["run_queries_unjudged"] != 2 {
		t.Errorf("counts %v", rec.counts)
	}
	if want := `all-splits.trec: 2 ranked queries are in demo's query file but not judged in its test qrels ("dev-1", "dev-2"): left out, as trec_eval leaves them`; !strings.Contains(log.String(), want) {
		t.Errorf("log %q, want %q", log.String(), want)
	}
	run["elsewhere"] = []ir.Hit{{DocID: d0, Score: 1}}
	if _, err := retrieve.CheckRun("r.trec", run, task, retrieve.Env{}); err == nil || !strings.Contains(err.Error(), `1 query is not in task demo ("elsewhere")`) {
		t.Errorf("a query of no split: %v", err)
	}
}
