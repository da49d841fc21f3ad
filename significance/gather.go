package significance

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/measure"
	"github.com/r2med/r2med/results"
	"github.com/r2med/r2med/tasks"
	"github.com/r2med/r2med/trec"
	"github.com/r2med/r2med/usage"
)

// Input is one system to compare as it lies on disk: a TREC run file, a
// run directory (run.trec and manifest.json, as pipeline.Run writes), or
// a results directory holding run directories for several tasks.
type Input struct {
	// Name labels the system in reports: the path it was opened from
	// until a caller names it (leaderboard.NameInputs gives the system's
	// name).
	Name string
	// FullName is the system's whole name where Name is cut to fit
	// (leaderboard.NameInputs); "" otherwise.
	FullName string
	// Apart is what sets the system apart from others of its name that
	// a hash tells apart ("top_k=10" for bm25 #7648, leaderboard.Apart);
	// "" otherwise.
	Apart string
	Path  string // the path it was opened from, cleaned
	// Runs are its run files by task, in R2MED's spelling of registry
	// tasks; "" for a bare run file or a run directory without a manifest.
	Runs map[string]Run
	// Multi marks a results directory, even one holding a single task:
	// its queries are keyed "task/qid" and broken down by task.
	Multi bool
}

// Run is one run file of an Input and the finished run it belongs to
// (Manifest nil for a bare run file or a directory without manifest.json).
type Run struct {
	File string
	results.Run
}

// TaskLoader loads the data a finished run was made on, as its manifest
// records it. The command line passes pipeline.LoadRunTask; tests pass
// their own.
type TaskLoader func(ctx context.Context, r results.Run) (*ir.Task, error)

// Open reads one system to compare from path: a run file, a run
// directory, or a results directory (every finished run under it, one
// per task).
func Open(path string) (Input, error) {
	in := Input{Name: filepath.Clean(path), Path: filepath.Clean(path), Runs: map[string]Run{}}
	st, err := os.Stat(path)
	if err != nil {
		return in, err
	}
	if !st.IsDir() {
		in.Runs[""] = Run{File: path}
		return in, nil
	}
	if _, err := os.Stat(filepath.Join(path, results.RunFile)); err == nil {
		r := Run{File: filepath.Join(path, results.RunFile), Run: results.Run{Dir: path, Rel: "."}}
		// A run directory without a manifest is still a run file; its
		// judgments then come from --qrels, --task or --data. One whose
		// manifest is there but unreadable is an error: its task and
		// checksums would be silently lost.
		m, err := results.ReadManifest(filepath.Join(path, results.ManifestFile))
		switch {
		case err == nil:
			r.Manifest = m
			if res, err := results.ReadR2MED(filepath.Join(path, results.ResultsFile)); err == nil {
				r.Result = res
			}
		case !errors.Is(err, fs.ErrNotExist):
			return in, fmt.Errorf("%w; run it again, or give %s itself with --qrels to compare the run file alone", err, r.File)
		}
		task := ""
		if r.Manifest != nil {
			task = canonicalTask(r.Manifest.Task.Name)
		}
		in.Runs[task] = r
		return in, nil
	}
	l, err := results.Scan(path)
	if err != nil {
		return in, err
	}
	in.Multi = true
	for _, run := range l.Runs {
		task, _ := run.Task()
		p := run.RunPath()
		if p == "" {
			return in, fmt.Errorf("%s: no %s; compare needs the ranked lists", run.Dir, results.RunFile)
		}
		if prev, dup := in.Runs[task]; dup {
			return in, fmt.Errorf("%s holds two runs of %s (%s and %s); name the run directories instead", path, task, filepath.Dir(prev.File), run.Dir)
		}
		in.Runs[task] = Run{File: p, Run: run}
	}
	if len(in.Runs) == 0 {
		return in, fmt.Errorf("%s: no run file, run directory or finished runs in it", path)
	}
	return in, nil
}

// canonicalTask spells a registry task's name as R2MED does, so that runs
// named by alias pair up; other names are kept.
func canonicalTask(name string) string {
	if t, err := tasks.Lookup(name); err == nil {
		return t.Name
	}
	return name
}

// GatherOptions says where Gather finds the judgments and queries the
// runs are evaluated on: Qrels if set, else Tasks if any, else each run's
// manifest through Load.
type GatherOptions struct {
	// Qrels, when non-nil, judges every run: one task's judgments, so an
	// Input with runs on several tasks is an error.
	Qrels ir.Qrels
	// Tasks are matched with runs by task name; a single task also judges
	// bare run files. Their queries' body_system field adds a breakdown.
	Tasks []*ir.Task
	// Load loads the data a run's manifest names, once per task the
	// inputs share; nil leaves runs without Qrels or Tasks unjudged (an
	// error).
	Load TaskLoader
}

// Gather evaluates every input's runs with m, per query, by the rule of
// Values (every judged query of a task counts; an unanswered one scores 0
// and is counted in System.Unanswered), and returns the
// systems in input order, ready for Compare, with the breakdowns the data
// allows: by R2MED's body_system query field when the queries carry it,
// and by task and task family when any input is a results directory or
// holds several tasks. In that case runs are paired by task, queries are
// keyed "task/qid", and only the tasks every input has are compared.
func Gather(ctx context.Context, inputs []Input, m measure.Measure, opt GatherOptions) ([]System, []Grouping, error) {
	if len(inputs) == 0 {
		return nil, nil, fmt.Errorf("nothing to compare: no systems")
	}
	data, err := judgments(ctx, inputs, opt)
	if err != nil {
		return nil, nil, err
	}
	multi := false
	for _, in := range inputs {
		multi = multi || len(in.Runs) > 1 || in.Multi
	}
	return perQuery(inputs, data, m, multi)
}

// judgments returns the task data of every task the inputs share, by task
// name ("" for bare run files).
func judgments(ctx context.Context, inputs []Input, opt GatherOptions) (map[string]*ir.Task, error) {
	out := map[string]*ir.Task{}
	if opt.Qrels != nil {
		qt := &ir.Task{Name: "qrels", Qrels: opt.Qrels}
		for _, in := range inputs {
			if len(in.Runs) > 1 {
				return nil, fmt.Errorf("--qrels holds one task's judgments but %s has runs on %d tasks; use --task all, or leave the judgments to the run manifests", in.Path, len(in.Runs))
			}
			for t := range in.Runs {
				out[t] = qt
			}
		}
		return out, nil
	}
	if len(opt.Tasks) > 0 {
		for _, t := range opt.Tasks {
			out[canonicalTask(t.Name)] = t
		}
		if len(opt.Tasks) == 1 {
			out[""] = opt.Tasks[0] // bare run files are on the named task
		}
		return out, nil
	}
	for _, task := range slices.Sorted(maps.Keys(inputs[0].Runs)) {
		if !everyone(inputs, task) {
			continue
		}
		var run *results.Run
		for _, in := range inputs {
			if r := in.Runs[task]; r.Manifest != nil {
				run = &r.Run
				break
			}
		}
		if run == nil || opt.Load == nil {
			return nil, fmt.Errorf("no judgments for the runs: give --qrels FILE, --task NAME or --data DIR")
		}
		t, err := opt.Load(ctx, *run)
		if err != nil {
			return nil, fmt.Errorf("loading %s as the run manifest names it (give --qrels, --task or --data instead): %w", run.Manifest.Task.Name, err)
		}
		out[task] = t
	}
	return out, nil
}

// perQuery evaluates every run and returns the inputs' per-query values,
// keyed "task/qid" when multi, with the breakdowns the data allows.
func perQuery(inputs []Input, data map[string]*ir.Task, m measure.Measure, multi bool) ([]System, []Grouping, error) {
	body := Grouping{Name: "body_system", Of: map[string]string{}}
	family := Grouping{Name: "task family", Of: map[string]string{}}
	task := Grouping{Name: TaskGrouping, Of: map[string]string{}}
	var out []System
	for _, in := range inputs {
		vals := map[string]float64{}
		mrr := map[string]string{}
		var unanswered, unjudged []string
		var sums []*usage.Summary
		for name, r := range in.Runs {
			if multi && !everyone(inputs, name) {
				continue // compared only on the tasks every system has
			}
			t := data[name]
			if t == nil && !multi && len(data) == 1 {
				// One run each, judged by the one task there is
				// (a run directory whose task the data names otherwise).
				for _, only := range data {
					t = only
				}
			}
			if t == nil {
				continue // a task not every system has
			}
			if err := r.CheckRunFile(); err != nil {
				return nil, nil, err
			}
			run, err := trec.ReadRunFile(r.File)
			if err != nil {
				return nil, nil, err
			}
			if r.Manifest != nil {
				sums = append(sums, r.Manifest.Usage)
			}
			v, err := Evaluate(t.Qrels, run, m)
			if err != nil {
				return nil, nil, fmt.Errorf("%s: %w", r.File, err)
			}
			label := canonicalTask(t.Name)
			if name != "" {
				label = name
			}
			if l := mrrLabel(m, r, t, run); l != "MRR" {
				mrr[label] = l
			}
			fam := ""
			if rt, err := tasks.Lookup(label); err == nil {
				fam = rt.Family.Title()
			}
			key := func(qid string) string {
				if multi {
					return label + "/" + qid
				}
				return qid
			}
			for q, x := range v.ByQuery {
				k := key(q)
				vals[k] = x
				task.Of[k], family.Of[k] = label, fam
			}
			for _, q := range v.Unanswered {
				unanswered = append(unanswered, key(q))
			}
			for _, q := range v.Unjudged {
				unjudged = append(unjudged, key(q))
			}
			for _, q := range t.Queries {
				if raw, ok := q.Extra["body_system"]; ok {
					var v string
					if json.Unmarshal(raw, &v) != nil {
						v = strings.Trim(string(raw), `"`)
					}
					body.Of[key(q.ID)] = v
				}
			}
		}
		if len(vals) == 0 {
			return nil, nil, fmt.Errorf("%s: no run on a task every system has", in.Path)
		}
		slices.Sort(unanswered)
		slices.Sort(unjudged)
		sys := System{Name: in.Name, FullName: in.FullName, Apart: in.Apart, Values: vals, Unanswered: unanswered, Unjudged: unjudged}
		if len(mrr) > 0 {
			sys.MRRLabels = mrr
		}
		if c, ok := usage.CostOf(sums); ok {
			sys.Cost = &c
		}
		out = append(out, sys)
	}
	var gs []Grouping
	if len(body.Of) > 0 {
		gs = append(gs, body)
	}
	if multi {
		gs = append(gs, task, family)
	}
	return out, gs, nil
}

// mrrLabel names m where it is MRR and run, r's file on the data t,
// gives another than the benchmark's (results.MRRLabel: "MRR@100" for a
// BRIGHT run 100 deep): by the task r's manifest or t names, the run's
// depth and the corpus t holds or the manifest counts. It is "MRR"
// otherwise, and for other measures.
func mrrLabel(m measure.Measure, r Run, t *ir.Task, run ir.Run) string {
	if m.Family != measure.RecipRank {
		return "MRR"
	}
	task, docs := t.Name, len(t.Corpus)
	if r.Manifest != nil {
		task = cmp.Or(r.Manifest.Task.Name, task)
		docs = cmp.Or(docs, r.Manifest.Counts["documents"])
	}
	return results.MRRLabel(task, run.Depth(), docs)
}

// everyone reports whether every input has a run on task.
func everyone(inputs []Input, task string) bool {
	for _, in := range inputs {
		if _, ok := in.Runs[task]; !ok {
			return false
		}
	}
	return true
}
