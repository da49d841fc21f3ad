package pipeline

import (
	"context"
	"testing"

	"github.com/r2med/r2med/dataset"
	"github.com/r2med/r2med/hubrepo"
	"github.com/r2med/r2med/results"
	"github.com/r2med/r2med/tasks"
)

func TestSourceOf(t *testing.T) {
	for _, c := range []struct {
		name string
		ti   results.TaskInfo
		want Source
	}{
		{"embedded demo task", results.TaskInfo{Name: "demo", Layout: "r2med", Source: "embedded:demo"},
			Source{Task: "demo"}},
		{"registry task at a Hub revision", results.TaskInfo{Name: "Biology", Source: "/cache/snapshots/abc", Revision: "abc"},
			Source{Task: "Biology", Suite: tasks.R2MED, Options: dataset.Options{AllowMissingDocs: true}}},
		{"NanoR2MED split at a Hub revision", results.TaskInfo{Name: "NanoR2MEDBiology", Split: "NanoR2MEDBiology", Source: "/cache/snapshots/def", Revision: "def"},
			Source{Task: "NanoR2MEDBiology", Suite: tasks.Nano, Options: dataset.Options{Split: "NanoR2MEDBiology", AllowMissingDocs: true}}},
		// A registry name without a revision was read from a directory
		// (--data), so it is read from there again, not from the Hub.
		{"registry name read from a directory", results.TaskInfo{Name: "Biology", Source: "/data/Biology"},
			Source{Data: "/data/Biology", Options: dataset.Options{Name: "Biology", AllowMissingDocs: true}}},
		{"local directory keeps split and name", results.TaskInfo{Name: "nfcorpus", Layout: "beir", Source: "/data/nfcorpus", Split: "dev"},
			Source{Data: "/data/nfcorpus", Options: dataset.Options{Split: "dev", Name: "nfcorpus", AllowMissingDocs: true}}},
		{"hf:// URI", results.TaskInfo{Name: "mine", Source: "hf://datasets/me/mine@v1"},
			Source{Data: "hf://datasets/me/mine@v1", Options: dataset.Options{Name: "mine", AllowMissingDocs: true}}},
	} {
		r := results.Run{Manifest: &results.Manifest{Task: c.ti}}
		if got := SourceOf(r); got != c.want {
			t.Errorf("%s: SourceOf = %+v, want %+v", c.name, got, c.want)
		}
	}
}

func TestLoadRunTaskDemo(t *testing.T) {
	r := results.Run{Manifest: &results.Manifest{Task: results.TaskInfo{Name: "demo", Source: "embedded:demo"}}}
	task, err := LoadRunTask(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	if task.Name != "demo" || len(task.Queries) != 15 || len(task.Qrels) == 0 {
		t.Errorf("demo task: name %q, %d queries, %d judged queries", task.Name, len(task.Queries), len(task.Qrels))
	}
}

func TestRegistrySpec(t *testing.T) {
	task, _ := tasks.Lookup("MedQA-Diag")
	if spec := registrySpec(task, tasks.Nano); spec != (hubrepo.Spec{Shape: hubrepo.Nano, Split: "NanoR2MEDMedQADiag", Name: "NanoR2MEDMedQADiag"}) {
		t.Errorf("Nano spec %+v", spec)
	}
	if spec := registrySpec(task, tasks.R2MED); spec != (hubrepo.Spec{Shape: hubrepo.R2MED, Name: "MedQA-Diag"}) {
		t.Errorf("R2MED spec %+v", spec)
	}
}
