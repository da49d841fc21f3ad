package pipeline

import (
	"context"
	"strings"

	"github.com/r2med/r2med/dataset"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/results"
	"github.com/r2med/r2med/tasks"
)

// SourceOf says where a finished run's data came from, as its manifest
// records it: the built-in task ("embedded:NAME"), an R2MED task from the
// registry when the manifest names one and the Hub revision it was read at
// (the full task or its NanoR2MED split, as r.Suite says), a BRIGHT task
// likewise (its data name says the setting, tasks.Resolve), or else the
// directory or hf:// URI it was read from, under the task name and split
// the run used.
//
// Judgments of missing documents are accepted (AllowMissingDocs): only a
// run made with --allow-missing-docs can have been made on such data, and
// for viewing or comparing runs they change nothing.
func SourceOf(r results.Run) Source {
	ti := r.Manifest.Task
	if name, ok := strings.CutPrefix(ti.Source, "embedded:"); ok {
		return Source{Task: name}
	}
	opts := dataset.Options{Split: ti.Split, AllowMissingDocs: true}
	if _, ok := r.Task(); ok && ti.Revision != "" {
		return Source{Task: ti.Name, Suite: r.Suite(), Options: opts}
	}
	if t, suite, err := tasks.Resolve(ti.Name); err == nil && suite.Benchmark() == tasks.Bright && ti.Revision != "" {
		return Source{Task: t.Name, Suite: suite, Options: dataset.Options{AllowMissingDocs: true}}
	}
	opts.Name = ti.Name
	return Source{Data: ti.Source, Options: opts}
}

// LoadRunTask loads the data a finished run was made on, from SourceOf.
// It has the shape of report.TaskLoader and significance.TaskLoader.
// A data path recorded relative (by older versions) is resolved by
// results.Run.DataDir's rule, never against the current directory.
func LoadRunTask(ctx context.Context, r results.Run) (*ir.Task, error) {
	src := SourceOf(r)
	if src.Data != "" {
		d, err := r.DataDir()
		if err != nil {
			return nil, err
		}
		src.Data = d
	}
	return src.Load(ctx)
}
