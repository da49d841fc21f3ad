package report

import (
	"context"
	"errors"
	"testing"

	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/results"
)

// TestKeepTaskData: a task's data is loaded once across the viewer's
// reloads, and again after a failure or for a run on other input files.
func TestKeepTaskData(t *testing.T) {
	calls := 0
	fail := true
	load := KeepTaskData(func(context.Context, results.Run) (*ir.Task, error) {
		calls++
		if fail {
			return nil, errors.New("not there yet")
		}
		return &ir.Task{Name: "demo"}, nil
	})
	r := results.Run{Dir: "a", Manifest: &results.Manifest{Task: results.TaskInfo{Name: "demo", Source: "embedded:demo"}}}
	other := results.Run{Dir: "b", Manifest: r.Manifest}
	if _, err := load(context.Background(), r); err == nil {
		t.Fatal("a failed load was not an error")
	}
	fail = false
	for _, run := range []results.Run{r, other, r} {
		if task, err := load(context.Background(), run); err != nil || task.Name != "demo" {
			t.Fatalf("%v %v", task, err)
		}
	}
	if calls != 2 {
		t.Errorf("the loader ran %d times; want 2 (the failure, then once)", calls)
	}
	// Re-run on the data changed on disk: its inputs' checksums differ.
	m := *r.Manifest
	m.Inputs = []results.FileDigest{{Path: "qrels/test.tsv", SHA256: "corrected"}}
	if _, err := load(context.Background(), results.Run{Dir: "a", Manifest: &m}); err != nil || calls != 3 {
		t.Errorf("a run on changed data: %v, the loader ran %d times; want 3", err, calls)
	}
}
