package pipeline

import (
	"context"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/r2med/r2med/expand"
	"github.com/r2med/r2med/internal/reuse"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/plan"
	"github.com/r2med/r2med/results"
	"github.com/r2med/r2med/sysname"
	"github.com/r2med/r2med/trec"
)

// StagesDir holds the intermediate outputs of a multi-stage pipeline
// inside Options.Out, so that a run that failed in a late stage (a
// reranker server going away after an hour of embedding) resumes from the
// last finished stage.
const StagesDir = "stages"

// RerankCheckpoint is the file in StagesDir that keeps the finished
// queries of an unfinished rerank stage.
const RerankCheckpoint = "rerank" + partialExt

// partialExt names the checkpoint of a resumable stage: NAME.partial.
const partialExt = ".partial"

// Resumable lists what a failed or interrupted run into out leaves for
// running it again to resume from: the stage outputs in out/stages that a
// record vouches for (their model-call accounts aside) and the checkpoint
// of an unfinished rerank. Only files that exist are listed. Embeddings
// and LLM answers made so far are in the cache, which the caller names.
func Resumable(out string) []string {
	dir := filepath.Join(out, StagesDir)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var kept []string
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || e.IsDir() {
			continue
		}
		for _, f := range (reuse.Stage{Dir: dir, Name: name}).Files() {
			if slices.Contains(callFiles(name), f) {
				continue
			}
			if p := filepath.Join(dir, filepath.FromSlash(f)); isFile(p) {
				kept = append(kept, p)
			}
		}
	}
	if p := filepath.Join(dir, RerankCheckpoint); isFile(p) {
		kept = append(kept, p)
	}
	return kept
}

func isFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

// stages keeps stage outputs in Options.Out/stages by the reuse rule: a
// stage's run is reused when its record carries the same fingerprint and
// the file its checksum. It is the plan's Store: each kept stage keeps the
// account of its model calls beside its run (calls), and the manifest
// hears the counts a stage keeps.
type stages struct {
	dir       string // "" keeps nothing
	overwrite bool
	log       func(format string, args ...any)
	calls     *calls
	m         *results.Manifest
}

func (o Options) stages(cs *calls, m *results.Manifest) stages {
	s := stages{overwrite: o.Overwrite, log: func(f string, a ...any) { logf(o.Log, f, a...) }, calls: cs, m: m}
	if o.Out != "" {
		s.dir = filepath.Join(o.Out, StagesDir)
	}
	return s
}

func (s stages) stage(name string) reuse.Stage { return reuse.Stage{Dir: s.dir, Name: name} }

// reusable reports whether the stage's files hold its output for fp,
// saying why not when they were there but cannot be trusted.
func (s stages) reusable(name, fp string, files ...string) bool {
	if s.dir == "" || s.overwrite {
		return false
	}
	err := s.stage(name).Check(fp, files...)
	switch {
	case err == nil:
		return true
	case errors.Is(err, os.ErrNotExist), errors.Is(err, reuse.ErrOtherFingerprint):
	default:
		s.log("stage %s: %v; recomputing it", name, err)
	}
	return false
}

// Stage returns the stage's kept run for its fingerprint, or produces,
// keeps and returns it (a stage not worth keeping, or no output
// directory: produces only). A stage that calls models gets a meter of its
// own, and its account (usage, cache entries, counts) is kept beside its
// run and added to the run's when the stage is reused; a resumable stage
// keeps its checkpoint, and the account of the queries in it, in
// NAME.partial until its run is kept.
func (s stages) Stage(_ context.Context, st plan.Stage, produce func(plan.Work) (ir.Run, error)) (ir.Run, error) {
	if !st.Keep || s.dir == "" {
		w := plan.Work{Count: s.m.Count}
		if st.Calls {
			w.Meter = s.calls.meter
		}
		return produce(w)
	}
	file := st.Name + ".trec"
	path := filepath.Join(s.dir, file)
	files := []string{file}
	if st.Calls {
		files = append(files, callFiles(st.Name)...)
	}
	if s.reusable(st.Name, st.Fingerprint, files...) {
		if run, err := trec.ReadRunFile(path); err == nil {
			if !st.Calls {
				return run, nil
			}
			if counts, err := s.calls.reuse(s.dir, st.Name); err == nil {
				maps.Copy(s.m.Counts, counts)
				return run, nil
			}
		}
	}
	var sc *stageCalls
	counts := map[string]int{}
	w := plan.Work{Count: func(name string, n int) { counts[name] = n; s.m.Count(name, n) }}
	if st.Calls {
		sc = s.calls.begin()
		w.Meter = sc.meter
	}
	var part *partial
	if st.Resumable {
		// Every finished query is kept under the stage's fingerprint, so
		// an interrupted stage (hours of LLM calls) resumes with the
		// queries it had not done.
		w.Checkpoint = filepath.Join(s.dir, st.Name+partialExt)
		if s.overwrite {
			if err := os.Remove(w.Checkpoint); err != nil && !errors.Is(err, os.ErrNotExist) {
				return nil, err
			}
		}
		part = openPartial(w.Checkpoint)
		w.Progress = func(done int) error { return part.progress(sc, done) }
	}
	run, err := produce(w)
	stage := s.stage(st.Name)
	if err == nil {
		err = stage.Begin()
	}
	if sc != nil {
		dir := s.dir
		if err != nil {
			dir = "" // the usage still counts; nothing is kept
		}
		if e := s.calls.end(sc, dir, st.Name, counts); err == nil {
			err = e
		}
	}
	if err != nil {
		return nil, err
	}
	if err := trec.WriteRunFile(path, run, sysname.Tag(st.Name)); err != nil {
		return nil, err
	}
	if err := stage.Keep(st.Fingerprint, files...); err != nil {
		return nil, err
	}
	if part != nil {
		// The stage's output replaces its checkpoint as its record.
		if err := os.Remove(w.Checkpoint); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		if err := part.remove(); err != nil {
			return nil, err
		}
	}
	return run, nil
}

// dataFingerprint is the fingerprint of what every stage reads
// (plan.Data): the task, its input checksums and the generations, but no
// stage's settings, so changing the reranker does not redo retrieval.
func dataFingerprint(m *results.Manifest, gar expand.Source, gens []expand.Generation) string {
	sums := make([]string, len(m.Inputs))
	for i, in := range m.Inputs {
		sums[i] = in.SHA256
	}
	return plan.Data(m.Task.Name, m.Task.Split, sums, gar, gens)
}
