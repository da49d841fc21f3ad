package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/r2med/r2med/expand"
	"github.com/r2med/r2med/internal/reuse"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/results"
	"github.com/r2med/r2med/retrieve"
	"github.com/r2med/r2med/sysname"
	"github.com/r2med/r2med/trec"
	"github.com/r2med/r2med/usage"
)

// stageInput is what every stage reads: the task, the queries as the
// retrievers see them (with GAR, each query's BM25 text and dense input)
// and the aligned generations (nil without GAR).
type stageInput struct {
	task    *ir.Task
	queries []retrieve.Query
	gens    []expand.Generation
}

// StagesDir holds the intermediate outputs of a multi-stage pipeline
// inside Options.Out, so that a run that failed in a late stage (a
// reranker server going away after an hour of embedding) resumes from the
// last finished stage.
const StagesDir = "stages"

// RerankCheckpoint is the file in StagesDir that keeps the finished
// queries of an unfinished rerank stage.
const RerankCheckpoint = "rerank.partial"

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

// runStages retrieves with every retriever, fuses, and reranks; the
// model calls they make are accounted in cs.
func runStages(ctx context.Context, in stageInput, cfg Config, opt Options, m *results.Manifest, cs *calls) (ir.Run, error) {
	multi := cfg.fused() || cfg.Rerank.Kind != ""
	depth := cfg.TopK
	if cfg.fused() {
		depth = cfg.Fuse.DepthFor(cfg.TopK)
	}
	if cfg.Rerank.Kind != "" {
		depth = max(depth, cfg.Rerank.depth())
	}
	// The scores of retrieval and every later stage depend on how r2med
	// computes them, not only on the settings: base carries
	// retrieve.Revision, so stages kept by a build that scored otherwise
	// are recomputed, not reused.
	base := stageFingerprint(dataFingerprint(m, cfg.GAR, in.gens), map[string]any{"revision": retrieve.Revision}, 0)
	st := opt.stages()
	env := retrieve.Env{Workers: opt.Workers, Progress: opt.Progress, Cache: opt.Cache, Log: opt.Log, Record: m, AllowMissingDocs: opt.AllowMissingDocs,
		Replay: opt.Replay, HTTP: cfg.Remote.Client(opt.warn(), "embedding"), Fleet: cfg.Remote.Fleet(opt.warn())}
	runs := make([]ir.Run, len(cfg.Retrievers))
	var described []map[string]any
	for i, spec := range cfg.Retrievers {
		name := "retrieve"
		if cfg.fused() {
			name = fmt.Sprintf("retrieve-%d-%s", i+1, results.DirName(spec.Name()))
		}
		// Stages worth keeping: those a later stage follows, and those that
		// take long on their own (embedding a corpus).
		keep := multi || retrieve.UsesCache(spec)
		fp := stageFingerprint(base, spec.Describe(), depth)
		described = append(described, spec.Describe())
		run, err := st.run(name, fp, keep, cs, func(meter *usage.Meter) (ir.Run, error) {
			env := env
			env.Meter = meter
			r, err := retrieve.New(ctx, spec, in.task, env)
			if err != nil {
				return nil, err
			}
			defer retrieve.Close(r)
			run, err := r.Search(ctx, in.queries, depth)
			if err != nil {
				return nil, err
			}
			// What the stage writes and the later stages read is the
			// ranking its scores mean (a scorer's ties by doc id, as
			// trec_eval reads them), not the retriever's list order.
			trec.Rank(run, retrieve.TiesOf(spec))
			return run, nil
		})
		if err != nil {
			return nil, err
		}
		runs[i] = run
	}
	run := runs[0]
	if cfg.fused() {
		fp := stageFingerprint(base, map[string]any{"retrievers": described, "fusion": cfg.Fuse.Describe()}, depth)
		if err := m.Time("fuse", func() error {
			var err error
			run, err = st.run("fuse", fp, true, nil, func(*usage.Meter) (ir.Run, error) { return cfg.Fuse.Fuse(runs, depth) })
			return err
		}); err != nil {
			return nil, err
		}
	}
	if cfg.Rerank.Kind != "" {
		if err := m.Time("rerank", func() error {
			var err error
			run, err = rerankRun(ctx, in, run, cfg, base, depth, opt, m, cs)
			return err
		}); err != nil {
			return nil, err
		}
	}
	for qid, hits := range run {
		if len(hits) > cfg.TopK {
			run[qid] = hits[:cfg.TopK]
		}
	}
	return run, nil
}

// stages keeps stage outputs in Options.Out/stages by the reuse rule: a
// stage's run is reused when its record carries the same fingerprint and
// the file its checksum.
type stages struct {
	dir       string // "" keeps nothing
	overwrite bool
	log       func(format string, args ...any)
}

func (o Options) stages() stages {
	s := stages{overwrite: o.Overwrite, log: func(f string, a ...any) { logf(o.Log, f, a...) }}
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

// run returns the stage's kept run for fp, or produces, keeps and returns
// it (keep false, or no output directory: produces only). With cs, the
// stage may call models: produce gets the meter to give its clients, and
// a kept stage keeps its account beside its run (calls); nil makes no
// calls.
func (s stages) run(name, fp string, keep bool, cs *calls, produce func(*usage.Meter) (ir.Run, error)) (ir.Run, error) {
	if !keep || s.dir == "" {
		var meter *usage.Meter
		if cs != nil {
			meter = cs.meter
		}
		return produce(meter)
	}
	file := name + ".trec"
	path := filepath.Join(s.dir, file)
	files := []string{file}
	if cs != nil {
		files = append(files, callFiles(name)...)
	}
	if s.reusable(name, fp, files...) {
		if run, err := trec.ReadRunFile(path); err == nil {
			if cs == nil {
				return run, nil
			}
			if _, err := cs.reuse(s.dir, name); err == nil {
				return run, nil
			}
		}
	}
	var sc *stageCalls
	var meter *usage.Meter
	if cs != nil {
		sc = cs.begin()
		meter = sc.meter
	}
	run, err := produce(meter)
	st := s.stage(name)
	if err == nil {
		err = st.Begin()
	}
	if cs != nil {
		dir := s.dir
		if err != nil {
			dir = "" // the usage still counts; nothing is kept
		}
		if e := cs.end(sc, dir, name, nil); err == nil {
			err = e
		}
	}
	if err != nil {
		return nil, err
	}
	if err := trec.WriteRunFile(path, run, sysname.Tag(name)); err != nil {
		return nil, err
	}
	return run, st.Keep(fp, files...)
}

// dataFingerprint hashes what every stage reads: the task, its input
// checksums and the generations (their text: generations made in the run
// are no input file, and a new temperature changes them under the same
// name), but no stage's settings, so changing the reranker does not redo
// retrieval.
func dataFingerprint(m *results.Manifest, gar expand.Source, gens []expand.Generation) string {
	h := sha256.New()
	enc := json.NewEncoder(h)
	enc.Encode(m.Task.Name)
	enc.Encode(m.Task.Split)
	for _, in := range m.Inputs {
		enc.Encode(in.SHA256)
	}
	enc.Encode(gar)
	for _, g := range gens {
		enc.Encode([]string{g.ID, g.Text, g.HyDoc})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// stageFingerprint chains the data fingerprint with one stage's settings
// and depth.
func stageFingerprint(base string, stage map[string]any, depth int) string {
	h := sha256.New()
	enc := json.NewEncoder(h)
	enc.Encode(base)
	enc.Encode(stage)
	enc.Encode(depth)
	return hex.EncodeToString(h.Sum(nil))
}
