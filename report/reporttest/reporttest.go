// Package reporttest writes run directories for tests of the report and
// the viewer: rankings built on the demo task whose per-query values are
// known by construction, with result files computed by package measure and
// manifests as pipeline.Run writes them.
package reporttest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/r2med/r2med/dataset"
	"github.com/r2med/r2med/demo"
	"github.com/r2med/r2med/measure"
	"github.com/r2med/r2med/results"
	"github.com/r2med/r2med/trec"
)

// Loader is a report.TaskLoader for runs this package wrote: every one
// is on the demo task's data, whatever task name its manifest gives.
func Loader(context.Context, results.Run) (*dataset.Task, error) { return demo.Load() }

// Perfect ranks each query's relevant documents first (best grade first),
// then the other documents: nDCG@10 is 1 for every query with at most ten
// relevant documents.
func Perfect(t *dataset.Task) trec.Run { return rank(t, func(string) bool { return true }) }

// Buried ranks the relevant documents after every other document for the
// queries where bury reports true (nDCG@10 is then 0 when the corpus has
// ten or more non-relevant documents), and first for the rest.
func Buried(t *dataset.Task, bury func(qid string) bool) trec.Run {
	return rank(t, func(q string) bool { return !bury(q) })
}

func rank(t *dataset.Task, relevantFirst func(qid string) bool) trec.Run {
	run := trec.Run{}
	for _, q := range t.Queries {
		docs := make([]dataset.Doc, len(t.Corpus))
		copy(docs, t.Corpus)
		grade := t.Qrels[q.ID]
		first := relevantFirst(q.ID)
		slices.SortStableFunc(docs, func(a, b dataset.Doc) int {
			ga, gb := max(grade[a.ID], 0), max(grade[b.ID], 0)
			if !first {
				ga, gb = -ga, -gb
			}
			return gb - ga
		})
		hits := make([]trec.Hit, 0, 100)
		for i, d := range docs[:min(100, len(docs))] {
			hits = append(hits, trec.Hit{DocID: d.ID, Score: float64(1000 - i)})
		}
		run[q.ID] = hits
	}
	return run
}

// Run describes one run directory to write.
type Run struct {
	Dir    string         // where to write
	Task   string         // the manifest's task name: "demo", "Biology"…
	System string         // the result file's model_name
	Config map[string]any // the manifest's settings; nil: {"retriever": System}
	Ranked trec.Run
	// Started is the manifest's start time; zero: a fixed date.
	Started time.Time
	// NoRunFile leaves run.trec out, as for a run that keeps only its
	// aggregates.
	NoRunFile bool
}

// Write evaluates the run against the demo task's judgments and writes
// run.trec, results.json and manifest.json.
func Write(r Run) error {
	t, err := demo.Load()
	if err != nil {
		return err
	}
	ev, err := measure.EvaluateR2MED(t.Qrels, r.Ranked)
	if err != nil {
		return fmt.Errorf("evaluating %s: %w", r.Dir, err)
	}
	if err := os.MkdirAll(r.Dir, 0o755); err != nil {
		return err
	}
	if !r.NoRunFile {
		if err := trec.WriteRunFile(filepath.Join(r.Dir, results.RunFile), r.Ranked, r.System); err != nil {
			return err
		}
	}
	res := &results.R2MED{DatasetName: r.Task, EvaluationTime: results.EvaluationTime(0), ModelName: r.System, Test: ev.Scores}
	if err := res.WriteFile(filepath.Join(r.Dir, results.ResultsFile)); err != nil {
		return err
	}
	m := results.NewManifest([]string{"reporttest"})
	m.Started = r.Started
	if m.Started.IsZero() {
		m.Started = time.Date(2025, 5, 1, 12, 0, 0, 0, time.UTC)
	}
	m.Task = results.TaskInfo{Name: r.Task, Layout: string(t.Layout), Source: "embedded:" + demo.Name}
	m.Config = r.Config
	if m.Config == nil {
		m.Config = map[string]any{"retriever": r.System}
	}
	return m.WriteFile(filepath.Join(r.Dir, results.ManifestFile))
}
