package significance

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/measure"
	"github.com/r2med/r2med/results"
	"github.com/r2med/r2med/trec"
)

// Judgments of the fixtures: one relevant document per query, so that
// reciprocal rank is 1 over the rank of "rel-QID", worked out by hand.
var fixtureQrels = ir.Qrels{
	"q1": {"rel-q1": 1},
	"q2": {"rel-q2": 1},
	"q3": {"rel-q3": 1},
}

// writeRunFile writes a run ranking "rel-QID" at ranks[QID] (1-based)
// behind filler documents.
func writeRunFile(t *testing.T, path string, ranks map[string]int) {
	t.Helper()
	run := ir.Run{}
	for q, rank := range ranks {
		for i := 1; i <= 3; i++ {
			doc := "other" + string(rune('0'+i))
			if i == rank {
				doc = "rel-" + q
			}
			run[q] = append(run[q], ir.Hit{DocID: doc, Score: float64(10 - i)})
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := trec.WriteRunFile(path, run, "test"); err != nil {
		t.Fatal(err)
	}
}

// writeRunDir writes a finished run directory the way pipeline.Run does:
// run.trec, results.json and the manifest (left out when task is "").
func writeRunDir(t *testing.T, dir, task string, ranks map[string]int) {
	t.Helper()
	writeRunFile(t, filepath.Join(dir, results.RunFile), ranks)
	if task == "" {
		return
	}
	res := &results.R2MED{DatasetName: task, ModelName: "bm25", Test: map[string]float64{}}
	if err := res.WriteFile(filepath.Join(dir, results.ResultsFile)); err != nil {
		t.Fatal(err)
	}
	m := results.NewManifest(nil)
	m.Task = results.TaskInfo{Name: task, Source: "/data/" + task}
	if err := m.WriteFile(filepath.Join(dir, results.ManifestFile)); err != nil {
		t.Fatal(err)
	}
}

func recipRank(t *testing.T) measure.Measure {
	t.Helper()
	ms, err := measure.Parse("recip_rank")
	if err != nil || len(ms) != 1 {
		t.Fatalf("measure: %v %v", ms, err)
	}
	return ms[0]
}

func keys(in Input) []string { return slices.Sorted(maps.Keys(in.Runs)) }

func TestOpen(t *testing.T) {
	dir := t.TempDir()
	ranks := map[string]int{"q1": 1}
	file := filepath.Join(dir, "bare.trec")
	writeRunFile(t, file, ranks)
	// A run directory whose manifest names a task by an alias: runs pair
	// up under R2MED's spelling.
	runDir := filepath.Join(dir, "nano")
	writeRunDir(t, runDir, "NanoR2MEDBiology", ranks)
	noManifest := filepath.Join(dir, "nomanifest")
	writeRunDir(t, noManifest, "", ranks)
	sweep := filepath.Join(dir, "sweep")
	writeRunDir(t, filepath.Join(sweep, "Biology"), "Biology", ranks)
	writeRunDir(t, filepath.Join(sweep, "mine"), "mine", ranks)

	for _, c := range []struct {
		path  string
		keys  []string
		multi bool
	}{
		{file, []string{""}, false},
		{runDir + string(filepath.Separator), []string{"Biology"}, false},
		{noManifest, []string{""}, false},
		{sweep, []string{"Biology", "mine"}, true},
	} {
		in, err := Open(c.path)
		if err != nil {
			t.Errorf("Open(%s): %v", c.path, err)
			continue
		}
		if in.Name != filepath.Clean(c.path) || in.Multi != c.multi || !reflect.DeepEqual(keys(in), c.keys) {
			t.Errorf("Open(%s) = name %q, multi %v, tasks %q; want multi %v, tasks %q", c.path, in.Name, in.Multi, keys(in), c.multi, c.keys)
		}
	}
	in, _ := Open(sweep)
	if r := in.Runs["Biology"]; r.File != filepath.Join(sweep, "Biology", results.RunFile) || r.Manifest == nil || r.Dir != filepath.Join(sweep, "Biology") {
		t.Errorf("sweep run %+v", r)
	}

	twice := filepath.Join(dir, "twice")
	writeRunDir(t, filepath.Join(twice, "a"), "Biology", ranks)
	writeRunDir(t, filepath.Join(twice, "b"), "biology", ranks)
	noRun := filepath.Join(dir, "norun")
	writeRunDir(t, filepath.Join(noRun, "x"), "Biology", ranks)
	if err := os.Remove(filepath.Join(noRun, "x", results.RunFile)); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	// A manifest that is there but unreadable (cut short, overwritten)
	// is named, where the directory was taken for one without a manifest
	// and compare then said only that no task was shared.
	broken := filepath.Join(dir, "broken")
	writeRunDir(t, broken, "Biology", ranks)
	if err := os.WriteFile(filepath.Join(broken, results.ManifestFile), []byte("{\"task\": "), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ path, want string }{
		{filepath.Join(dir, "missing"), "missing"},
		{broken, filepath.Join(broken, results.ManifestFile) + ":"},
		{twice, "two runs of Biology"},
		{noRun, "no run.trec"},
		{empty, "no run file, run directory or finished runs"},
	} {
		if _, err := Open(c.path); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Open(%s): error %v, want one containing %q", c.path, err, c.want)
		}
	}
}

func TestGatherQrels(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.trec"), filepath.Join(dir, "b.trec")
	writeRunFile(t, a, map[string]int{"q1": 1, "q2": 2, "q3": 3})
	writeRunFile(t, b, map[string]int{"q1": 2, "q2": 2})
	ins := openAll(t, a, b)
	systems, groupings, err := Gather(context.Background(), ins, recipRank(t), GatherOptions{Qrels: fixtureQrels})
	if err != nil {
		t.Fatal(err)
	}
	want := []System{
		{Name: a, Values: map[string]float64{"q1": 1, "q2": 0.5, "q3": 1.0 / 3}},
		// q3 is judged but b did not answer it: 0, and counted.
		{Name: b, Values: map[string]float64{"q1": 0.5, "q2": 0.5, "q3": 0}, Unanswered: []string{"q3"}},
	}
	if !reflect.DeepEqual(systems, want) || len(groupings) != 0 {
		t.Errorf("Gather = %+v, %+v; want %+v and no groupings", systems, groupings, want)
	}

	sweep := filepath.Join(dir, "sweep")
	writeRunDir(t, filepath.Join(sweep, "Biology"), "Biology", map[string]int{"q1": 1})
	writeRunDir(t, filepath.Join(sweep, "mine"), "mine", map[string]int{"q1": 1})
	_, _, err = Gather(context.Background(), openAll(t, a, sweep), recipRank(t), GatherOptions{Qrels: fixtureQrels})
	if err == nil || !strings.Contains(err.Error(), "has runs on 2 tasks") {
		t.Errorf("qrels with a two-task results directory: %v", err)
	}
}

func TestGatherTasksBodySystem(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b.trec")
	writeRunDir(t, a, "mine", map[string]int{"q1": 1, "q2": 1})
	writeRunFile(t, b, map[string]int{"q1": 3, "q2": 1})
	task := &ir.Task{Name: "mine", Qrels: fixtureQrels, Queries: []ir.Query{
		{ID: "q1", Extra: map[string]json.RawMessage{"body_system": json.RawMessage(`"Endocrine"`)}},
		{ID: "q2", Extra: map[string]json.RawMessage{"body_system": json.RawMessage(`7`)}},
		{ID: "q3"},
	}}
	// The run directory is on "mine", the bare file on "" (the one task).
	systems, groupings, err := Gather(context.Background(), openAll(t, a, b), recipRank(t), GatherOptions{Tasks: []*ir.Task{task}})
	if err != nil {
		t.Fatal(err)
	}
	if len(systems) != 2 || !reflect.DeepEqual(systems[0].Values, map[string]float64{"q1": 1, "q2": 1, "q3": 0}) || !reflect.DeepEqual(systems[1].Values, map[string]float64{"q1": 1.0 / 3, "q2": 1, "q3": 0}) ||
		!reflect.DeepEqual(systems[1].Unanswered, []string{"q3"}) {
		t.Errorf("systems %+v", systems)
	}
	want := []Grouping{{Name: "body_system", Of: map[string]string{"q1": "Endocrine", "q2": "7"}}}
	if !reflect.DeepEqual(groupings, want) {
		t.Errorf("groupings %+v, want %+v", groupings, want)
	}
}

func TestGatherResultsDirs(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	writeRunDir(t, filepath.Join(a, "Biology"), "Biology", map[string]int{"q1": 1, "q2": 2})
	writeRunDir(t, filepath.Join(a, "mine"), "mine", map[string]int{"q1": 1})
	writeRunDir(t, filepath.Join(b, "bio"), "biology", map[string]int{"q1": 2, "q2": 2})
	var loaded []string
	load := func(_ context.Context, r results.Run) (*ir.Task, error) {
		loaded = append(loaded, r.Manifest.Task.Name)
		return &ir.Task{Name: r.Manifest.Task.Name, Qrels: fixtureQrels, Queries: []ir.Query{
			{ID: "q1", Extra: map[string]json.RawMessage{"body_system": json.RawMessage(`"Nervous"`)}},
		}}, nil
	}
	systems, groupings, err := Gather(context.Background(), openAll(t, a, b), recipRank(t), GatherOptions{Load: load})
	if err != nil {
		t.Fatal(err)
	}
	// Only Biology is on both; its data is loaded once, from a's run.
	if !reflect.DeepEqual(loaded, []string{"Biology"}) {
		t.Errorf("loaded %q, want Biology once", loaded)
	}
	wantSys := []System{
		{Name: a, Values: map[string]float64{"Biology/q1": 1, "Biology/q2": 0.5, "Biology/q3": 0}, Unanswered: []string{"Biology/q3"}},
		{Name: b, Values: map[string]float64{"Biology/q1": 0.5, "Biology/q2": 0.5, "Biology/q3": 0}, Unanswered: []string{"Biology/q3"}},
	}
	if !reflect.DeepEqual(systems, wantSys) {
		t.Errorf("systems %+v, want %+v", systems, wantSys)
	}
	all := func(v string) map[string]string {
		return map[string]string{"Biology/q1": v, "Biology/q2": v, "Biology/q3": v}
	}
	wantGroups := []Grouping{
		{Name: "body_system", Of: map[string]string{"Biology/q1": "Nervous"}},
		{Name: "task", Of: all("Biology")},
		{Name: "task family", Of: all("Q&A reference retrieval")},
	}
	if !reflect.DeepEqual(groupings, wantGroups) {
		t.Errorf("groupings %+v, want %+v", groupings, wantGroups)
	}

	// A failing loader is named with the task; no loader, or runs
	// without manifests, leave the runs unjudged.
	boom := errors.New("offline")
	_, _, err = Gather(context.Background(), openAll(t, a, b), recipRank(t), GatherOptions{
		Load: func(context.Context, results.Run) (*ir.Task, error) { return nil, boom },
	})
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "loading Biology") {
		t.Errorf("failing loader: %v", err)
	}
	if _, _, err := Gather(context.Background(), openAll(t, a, b), recipRank(t), GatherOptions{}); err == nil || !strings.Contains(err.Error(), "no judgments") {
		t.Errorf("no loader: %v", err)
	}
	c := filepath.Join(dir, "c")
	writeRunDir(t, filepath.Join(c, "mine"), "mine", map[string]int{"q1": 1})
	if _, _, err := Gather(context.Background(), openAll(t, b, c), recipRank(t), GatherOptions{Load: load}); err == nil || !strings.Contains(err.Error(), "no run on a task every system has") {
		t.Errorf("no shared task: %v", err)
	}
}

func openAll(t *testing.T, paths ...string) []Input {
	t.Helper()
	var out []Input
	for _, p := range paths {
		in, err := Open(p)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, in)
	}
	return out
}
