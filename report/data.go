package report

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/r2med/r2med/internal/yamlx"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/leaderboard"
	"github.com/r2med/r2med/measure"
	"github.com/r2med/r2med/results"
	"github.com/r2med/r2med/significance"
	"github.com/r2med/r2med/trec"
)

// TaskLoader loads the data a run was made on (queries, documents and
// judgments), as its manifest records it. The command line builds one on
// pipeline.Source; tests pass their own.
type TaskLoader func(ctx context.Context, r results.Run) (*ir.Task, error)

// ErrNoRunFile reports a system and task whose run directory holds no
// run.trec: published systems, and runs made without one. Only aggregates
// exist for them.
var ErrNoRunFile = errors.New("no run file (only aggregate results)")

// Data is what reports and the viewer show: the leaderboard's systems, the
// run directories behind ours, and the tasks they cover. Per-query values
// are computed on demand from run files and the runs' task data, and
// cached; Data is safe for concurrent use.
type Data struct {
	// Board holds the systems. Besides the leaderboard's own, our runs on
	// data that is no R2MED task (the demo task, BEIR sets) are added:
	// to the system with the same settings when there is one, else as
	// systems of their own, so they appear in charts and the viewer.
	Board *leaderboard.Board
	// Tasks are the task columns: R2MED's tasks that some system has, in
	// R2MED's order, then other tasks by name.
	Tasks []string

	runs map[string]map[string]results.Run // system ID → task → run
	load TaskLoader

	mu      sync.Mutex
	data    map[string]*taskEntry // by dataKey
	runFile map[string]*runEntry  // by run directory
}

type taskEntry struct {
	once sync.Once
	task *ir.Task
	docs map[string]int // document id → index in task.Corpus
	qs   map[string]int // query id → index in task.Queries
	err  error
}

type runEntry struct {
	once sync.Once
	run  ir.Run
	err  error
}

// Load reads our runs under dir (none when dir is "") and the published
// and external systems src asks for. load may be nil; per-query values
// are then unavailable.
func Load(dir string, src leaderboard.Sources, load TaskLoader) (*Data, error) {
	b, err := leaderboard.Load(dir, src)
	if err != nil {
		return nil, err
	}
	return newData(b, load), nil
}

func newData(b *leaderboard.Board, load TaskLoader) *Data {
	d := &Data{Board: b, runs: map[string]map[string]results.Run{}, load: load,
		data: map[string]*taskEntry{}, runFile: map[string]*runEntry{}}
	byDir := map[string]results.Run{}
	if b.Listing != nil {
		for _, r := range b.Listing.Runs {
			byDir[r.Dir] = r
		}
	}
	have := map[string]bool{}
	for _, s := range b.Systems {
		for task, tr := range s.Tasks {
			have[task] = true
			if r, ok := byDir[tr.Source]; ok && s.IsOurs() {
				d.addRun(s.ID, task, r)
			}
		}
	}
	for _, t := range leaderboard.TaskNames("") {
		if have[t] {
			d.Tasks = append(d.Tasks, t)
			delete(have, t)
		}
	}
	d.Tasks = append(d.Tasks, slices.Sorted(maps.Keys(have))...)
	return d
}

func (d *Data) addRun(id, task string, r results.Run) {
	if d.runs[id] == nil {
		d.runs[id] = map[string]results.Run{}
	}
	d.runs[id][task] = r
}

// System returns the system with the given ID or, failing that, the only
// one with the given name.
func (d *Data) System(idOrName string) (*leaderboard.System, error) {
	s, ok := d.Board.System(idOrName)
	if ok {
		return s, nil
	}
	if s != nil {
		return nil, fmt.Errorf("system %q is ambiguous: several systems have that name; use its ID (ours/…, base/…)", idOrName)
	}
	var names, candidates []string
	for _, s := range d.Board.Systems {
		if s.IsOurs() {
			names = append(names, s.ID)
		}
		candidates = append(candidates, s.ID, s.DisplayName())
	}
	hint := "no runs of ours were found"
	if len(names) > 0 {
		hint = "ours are " + strings.Join(names, ", ")
	}
	return nil, &leaderboard.UsageError{Msg: fmt.Sprintf("no system %q%s (%s; published ones are named as in R2MED's tables: nv, hyde/gpt4 → nv, base/bm25…)", idOrName, didYouMean(idOrName, candidates), hint)}
}

// didYouMean is " (did you mean "X"?)" for the candidate nearest to
// name, when one is near enough to be a misspelling, else "".
func didYouMean(name string, candidates []string) string {
	if s := yamlx.Suggest(name, candidates); s != "" {
		return fmt.Sprintf(" (did you mean %q?)", s)
	}
	return ""
}

// OursSystem returns the system of ours with the given ID or name, as a
// baseline is named: a name shared with a published system ("bm25") means
// ours.
func (d *Data) OursSystem(idOrName string) (*leaderboard.System, error) {
	var found []*leaderboard.System
	for _, s := range d.Ours() {
		if s.ID == idOrName {
			return s, nil
		}
		if s.Name == idOrName {
			found = append(found, s)
		}
	}
	if len(found) == 1 {
		return found[0], nil
	}
	var names, candidates []string
	for _, s := range d.Ours() {
		names = append(names, s.ID)
		candidates = append(candidates, s.ID, s.DisplayName())
	}
	if len(found) > 1 {
		return nil, &leaderboard.UsageError{Msg: fmt.Sprintf("several of our systems are named %q; use an ID: %s", idOrName, strings.Join(names, ", "))}
	}
	return nil, &leaderboard.UsageError{Msg: fmt.Sprintf("no system of ours %q%s (per-query tests need our run files); ours are %s", idOrName, didYouMean(idOrName, candidates), strings.Join(names, ", "))}
}

// Run returns the run directory behind a system's result on a task.
func (d *Data) Run(systemID, task string) (results.Run, bool) {
	r, ok := d.runs[systemID][task]
	return r, ok
}

// HasRunFile reports whether per-query values can be computed for the
// system on the task: it is ours and its directory holds run.trec.
func (d *Data) HasRunFile(systemID, task string) bool {
	r, ok := d.Run(systemID, task)
	return ok && r.RunPath() != ""
}

// Value is a system's stored metric on a task, NaN when missing.
func Value(s *leaderboard.System, task, key string) float64 {
	if v, ok := s.Tasks[task].Metrics[key]; ok {
		return v
	}
	return math.NaN()
}

// TaskData loads (once) the data the system's run on the task was made
// on.
func (d *Data) TaskData(ctx context.Context, systemID, task string) (*TaskData, error) {
	r, ok := d.Run(systemID, task)
	if !ok {
		return nil, fmt.Errorf("system %s has no run of ours on %s", systemID, task)
	}
	return d.taskData(ctx, r)
}

// TaskData is a loaded task with lookups by id.
type TaskData struct {
	*ir.Task
	docs map[string]int
	qs   map[string]int
}

// Doc returns the document with the given id.
func (t *TaskData) Doc(id string) (ir.Doc, bool) {
	i, ok := t.docs[id]
	if !ok {
		return ir.Doc{}, false
	}
	return t.Corpus[i], true
}

// Query returns the query with the given id.
func (t *TaskData) Query(id string) (ir.Query, bool) {
	i, ok := t.qs[id]
	if !ok {
		return ir.Query{}, false
	}
	return t.Queries[i], true
}

// dataKey says which runs share their task's data: those whose
// manifests name the same task, source, split and revision and the same
// input files by checksum (a run re-run on data corrected on disk has
// its own).
func dataKey(r results.Run) string {
	ti := r.Manifest.Task
	parts := []string{ti.Name, ti.Source, ti.Split, ti.Revision}
	for _, in := range r.Manifest.Inputs {
		parts = append(parts, in.Path, in.SHA256)
	}
	return strings.Join(parts, "\x00")
}

// KeepTaskData wraps load so that the data of a task, once loaded, is
// loaded again only when it failed: a viewer reads its results directory
// again whenever a run changes (a new Data each time) and must not read
// every corpus again with it. Runs share data by dataKey, as within one
// Data.
func KeepTaskData(load TaskLoader) TaskLoader {
	type entry struct {
		once sync.Once
		task *ir.Task
		err  error
	}
	var mu sync.Mutex
	loaded := map[string]*entry{}
	return func(ctx context.Context, r results.Run) (*ir.Task, error) {
		key := dataKey(r)
		mu.Lock()
		e := loaded[key]
		if e == nil {
			e = &entry{}
			loaded[key] = e
		}
		mu.Unlock()
		e.once.Do(func() { e.task, e.err = load(ctx, r) })
		if e.err != nil {
			mu.Lock()
			if loaded[key] == e {
				delete(loaded, key) // the next request tries again
			}
			mu.Unlock()
		}
		return e.task, e.err
	}
}

func (d *Data) taskData(ctx context.Context, r results.Run) (*TaskData, error) {
	if d.load == nil {
		return nil, errors.New("no task loader: per-query values need the runs' task data")
	}
	d.mu.Lock()
	e, ok := d.data[dataKey(r)]
	if !ok {
		e = &taskEntry{}
		d.data[dataKey(r)] = e
	}
	d.mu.Unlock()
	e.once.Do(func() {
		t, err := d.load(ctx, r)
		if err != nil {
			e.err = fmt.Errorf("loading the data of %s (task %s, source %s): %w", r.Dir, r.Manifest.Task.Name, r.Manifest.Task.Source, err)
			return
		}
		e.task = t
		e.docs = make(map[string]int, len(t.Corpus))
		for i, doc := range t.Corpus {
			e.docs[doc.ID] = i
		}
		e.qs = make(map[string]int, len(t.Queries))
		for i, q := range t.Queries {
			e.qs[q.ID] = i
		}
	})
	if e.err != nil {
		// A canceled load is not remembered: the next request retries.
		if errors.Is(e.err, context.Canceled) || errors.Is(e.err, context.DeadlineExceeded) {
			d.mu.Lock()
			if d.data[dataKey(r)] == e {
				delete(d.data, dataKey(r))
			}
			d.mu.Unlock()
		}
		return nil, e.err
	}
	return &TaskData{Task: e.task, docs: e.docs, qs: e.qs}, nil
}

// RunFile reads (once) the system's ranked list on the task.
func (d *Data) RunFile(systemID, task string) (ir.Run, error) {
	r, ok := d.Run(systemID, task)
	if !ok {
		return nil, fmt.Errorf("system %s on %s: %w", systemID, task, ErrNoRunFile)
	}
	p := r.RunPath()
	if p == "" {
		return nil, fmt.Errorf("system %s on %s (%s): %w", systemID, task, r.Dir, ErrNoRunFile)
	}
	d.mu.Lock()
	e, ok := d.runFile[r.Dir]
	if !ok {
		e = &runEntry{}
		d.runFile[r.Dir] = e
	}
	d.mu.Unlock()
	e.once.Do(func() {
		if e.err = r.CheckRunFile(); e.err == nil {
			e.run, e.err = trec.ReadRunFile(p)
		}
	})
	return e.run, e.err
}

// PerQuery evaluates the system's run on the task with the metric (an
// R2MED result key: ndcg_at_10, recall_at_100, mrr…, computed with
// trec_eval's measure as R2MED does) by the one per-query rule of
// significance.Values: every judged query of the task, unanswered ones
// 0 and listed.
func (d *Data) PerQuery(ctx context.Context, systemID, task, metricKey string) (significance.Values, error) {
	ms, err := measure.Parse(metricKey)
	if err != nil || len(ms) != 1 {
		return significance.Values{}, fmt.Errorf("metric %q has no per-query form", metricKey)
	}
	run, err := d.RunFile(systemID, task)
	if err != nil {
		return significance.Values{}, err
	}
	td, err := d.TaskData(ctx, systemID, task)
	if err != nil {
		return significance.Values{}, err
	}
	v, err := significance.Evaluate(td.Qrels, run, ms[0])
	if err != nil {
		return v, fmt.Errorf("evaluating %s on %s: %w", systemID, task, err)
	}
	return v, nil
}

// PerQueryFunc is PerQuery for the leaderboard's significance marks.
func (d *Data) PerQueryFunc(ctx context.Context, metricKey string) leaderboard.PerQuery {
	return func(systemID, task string) (significance.Values, error) {
		return d.PerQuery(ctx, systemID, task, metricKey)
	}
}

// Ours returns our systems, in board order.
func (d *Data) Ours() []*leaderboard.System {
	var out []*leaderboard.System
	for i := range d.Board.Systems {
		if d.Board.Systems[i].IsOurs() {
			out = append(out, &d.Board.Systems[i])
		}
	}
	return out
}

// IsR2MEDTask reports whether task is one of R2MED's eight.
func IsR2MEDTask(task string) bool {
	return slices.Contains(leaderboard.TaskNames(""), task)
}
