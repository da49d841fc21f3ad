// Package mteb exchanges results with MTEB (the Massive Text Embedding
// Benchmark): R2MED's tasks as MTEB registers them (Tasks), MTEB's results
// files (TaskResult, written by `r2med results export --format mteb` and
// checked field by field as MTEB's TaskResult schema checks them:
// Validate), its results folders (results/<org__model>/<revision>/<Task>.json
// with model_meta.json: WriteModel, ReadDir), and MTEB's copy of a task's
// data as its loader reads it.
//
// What the package relies on is recorded, with the repository, path and
// commit read, in testdata/FACTS.md: MTEB's r2_med_retrieval.py (task
// names, dataset ids and revisions, main score, splits, languages, how the
// loader keys rows), results/task_result.py (the schema), cache/
// result_cache.py (the folder layout) and models/model_meta.py (the keys
// of model_meta.json).
package mteb

import (
	"fmt"
	"strings"

	"github.com/r2med/r2med/tasks"
)

// Task is one of R2MED's tasks as MTEB registers it.
type Task struct {
	// Name is MTEB's task name ("R2MEDBiologyRetrieval"); R2MED the task's
	// name in the registry (package tasks).
	Name  string
	R2MED string
	// Dataset and Revision are the Hub dataset MTEB's loader reads and the
	// revision its metadata pins.
	Dataset, Revision string
	// Documents is the number of documents MTEB's statistics count for the
	// loaded task (descriptive_stats at cfaa42c5, 2025-06-16): distinct
	// ids, as the loader keys the corpus by id.
	Documents int
}

// The metadata all of R2MED's MTEB tasks share (r2_med_retrieval.py).
const (
	MainScore = "ndcg_at_10"
	Split     = "test"
	Subset    = "default"
	Language  = "eng-Latn"
)

// mtebDocuments are MTEB's document counts per task (FACTS.md's table).
var mtebDocuments = map[string]int{
	"Biology": 57359, "Bioinformatics": 47471, "Medical-Sciences": 34792, "MedXpertQA-Exam": 61379,
	"MedQA-Diag": 56194, "PMC-Treatment": 28809, "PMC-Clinical": 60406, "IIYi-Clinical": 10449,
}

// Tasks are R2MED's eight tasks as MTEB registers them, in R2MED's order.
// MTEB reads each task's own repository at the revision the task registry
// pins (the registry took its revisions from MTEB).
func Tasks() []Task {
	var out []Task
	for _, t := range tasks.All() {
		out = append(out, Task{
			Name: TaskName(t.Name), R2MED: t.Name,
			Dataset: t.Repo, Revision: t.Revision, Documents: mtebDocuments[t.Name],
		})
	}
	return out
}

// TaskName is MTEB's name for an R2MED task: "R2MED", the task's letters
// and digits, "Retrieval" (MedQA-Diag → R2MEDMedQADiagRetrieval).
func TaskName(r2med string) string {
	var b strings.Builder
	b.WriteString("R2MED")
	for _, r := range r2med {
		if r < 0x80 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			b.WriteRune(r)
		}
	}
	b.WriteString("Retrieval")
	return b.String()
}

// ForR2MED returns MTEB's task for an R2MED task name (any spelling the
// task registry takes).
func ForR2MED(name string) (Task, error) {
	t, err := tasks.Lookup(name)
	if err != nil {
		return Task{}, err
	}
	for _, m := range Tasks() {
		if m.R2MED == t.Name {
			return m, nil
		}
	}
	return Task{}, fmt.Errorf("no MTEB task for %s", t.Name)
}

// MTEB's per-task BRIGHT tasks (bright_v1_1_retrieval.py) evaluate its
// own copy of BRIGHT, this repository at this revision, since mteb PR 4144
// (2026-02-24; before it they read tasks.BrightRepo at
// tasks.BrightRevision); MTEB's older BrightRetrieval and
// BrightLongRetrieval read tasks.BrightRepo at tasks.BrightOlderRevision
// and do not honour excluded_ids. See testdata/FACTS.md.
const (
	BrightRepo     = "mteb/BRIGHT"
	BrightRevision = "c26703e6600d97c579ee2985f16cf307db13ed85"
)

// BrightName is MTEB's name for a BRIGHT task in suite s: its MTEBName
// (BrightBiologyRetrieval), with "Long" before "Retrieval" in the
// long-document setting (BrightBiologyLongRetrieval).
func BrightName(t tasks.Task, s tasks.Suite) string {
	if s == tasks.BrightLong {
		return strings.TrimSuffix(t.MTEBName, "Retrieval") + "LongRetrieval"
	}
	return t.MTEBName
}

// LeftOut says why a run on the data named name (a run manifest's task:
// "BRIGHT-biology", "NanoR2MEDBiology", "demo") gets no MTEB results file:
// r2med writes them for R2MED's tasks only. MTEB registers BRIGHT's tasks
// too, but evaluates its own copy of the data (BrightRepo), so a run on
// BRIGHT's repository would claim a dataset revision MTEB never pins; it
// registers no NanoR2MED split.
func LeftOut(name string) string {
	const only = "r2med writes MTEB's results for R2MED's eight tasks only"
	t, s, err := tasks.Resolve(name)
	switch {
	case err != nil:
		return only
	case s.Benchmark() == tasks.Bright:
		return fmt.Sprintf("%s; MTEB's %s evaluates %s at %s, not %s, which this run read", only, BrightName(t, s), BrightRepo, BrightRevision[:12], t.Repo)
	case s == tasks.Nano:
		return only + "; MTEB registers no NanoR2MED split"
	}
	return only
}

// Lookup returns the task MTEB names name, and whether it is one of
// R2MED's.
func Lookup(name string) (Task, bool) {
	for _, m := range Tasks() {
		if m.Name == name {
			return m, true
		}
	}
	return Task{}, false
}
