package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/r2med/r2med/dataset"
	"github.com/r2med/r2med/expand"
	"github.com/r2med/r2med/fusion"
	"github.com/r2med/r2med/internal/fileio"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/results"
	"github.com/r2med/r2med/retrieve"
	"github.com/r2med/r2med/trec"
)

// stageInput is what every stage reads: the task, the queries as BM25
// sees them (GAR-combined when there are generations) and the aligned
// generations dense retrievers average with.
type stageInput struct {
	task    *ir.Task
	queries []ir.Query          // BM25 texts
	gens    []expand.Generation // aligned with task.Queries; nil without GAR
	// candidates holds the published candidate lists the retrievers
	// read, by config name, loaded once with the inputs.
	candidates map[string]*dataset.Candidates
}

// StagesDir holds the intermediate runs of a multi-stage pipeline inside
// Options.Out, so that a run that failed in a late stage (a reranker
// server going away after an hour of embedding) resumes from the last
// finished stage.
const StagesDir = "stages"

// runStages retrieves with every retriever, fuses, and reranks.
func runStages(ctx context.Context, in stageInput, cfg Config, opt Options, m *results.Manifest) (ir.Run, error) {
	rs := cfg.Retrievers()
	multi := len(rs) > 1 || cfg.Rerank.Kind != ""
	depth := cfg.TopK
	if len(rs) > 1 {
		depth = cfg.Fuse.depth(cfg.TopK)
	}
	if cfg.Rerank.Kind != "" {
		depth = max(depth, cfg.Rerank.depth())
	}
	base := dataFingerprint(m, cfg.GAR, in.gens)
	runs := make([]ir.Run, len(rs))
	for i, r := range rs {
		name := "retrieve"
		if len(rs) > 1 {
			name = fmt.Sprintf("retrieve-%d-%s", i+1, safeName(r.Name()))
		}
		cache := stageCache{dir: opt.Out, name: name, fp: stageFingerprint(base, r.describe(), depth), on: multi || r.Retriever == "dense", overwrite: opt.Overwrite}
		run, err := cache.run(func() (ir.Run, error) { return retrieveStage(ctx, in, r, depth, opt, m) })
		if err != nil {
			return nil, err
		}
		runs[i] = run
	}
	run := runs[0]
	if len(rs) > 1 {
		if err := m.Time("fuse", func() error {
			var err error
			run, err = fuse(runs, cfg.Fuse, depth)
			return err
		}); err != nil {
			return nil, err
		}
	}
	if cfg.Rerank.Kind != "" {
		if err := m.Time("rerank", func() error {
			var err error
			run, err = rerankRun(ctx, in, run, cfg, base, depth, opt, m)
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

// retrieve runs one retriever.
func retrieveStage(ctx context.Context, in stageInput, r Retrieval, topK int, opt Options, m *results.Manifest) (ir.Run, error) {
	switch {
	case r.Retriever == "bm25":
		bm := retrieve.BM25{Analyzer: r.Analyzer, Params: r.BM25}
		rt, err := retrieve.New(ctx, bm, in.task, retrieve.Env{Workers: opt.Workers, Progress: opt.Progress, Record: m})
		if err != nil {
			return nil, err
		}
		return rt.Search(ctx, retrieve.Queries(in.queries), topK)
	case r.Retriever == "dense":
		return retrieveDense(ctx, in, r.Dense, topK, opt, m)
	case strings.HasPrefix(r.Retriever, CandidatesPrefix):
		return candidateRun(in.candidates[strings.TrimPrefix(r.Retriever, CandidatesPrefix)], topK), nil
	case strings.HasPrefix(r.Retriever, RunPrefix):
		run, err := trec.ReadRunFile(r.runPath(in.task))
		if err != nil {
			return nil, err
		}
		for qid, hits := range run {
			if len(hits) > topK {
				run[qid] = hits[:topK]
			}
		}
		return run, nil
	}
	return nil, fmt.Errorf("unknown retriever %q", r.Retriever)
}

// inputs lists the files a retriever reads beyond the task's, for the
// manifest's checksums (a changed run file must not reuse old outputs);
// candidate lists are loaded into in on the way.
func (r Retrieval) inputs(in *stageInput) ([]string, error) {
	task := in.task
	switch {
	case strings.HasPrefix(r.Retriever, CandidatesPrefix):
		name := strings.TrimPrefix(r.Retriever, CandidatesPrefix)
		if _, ok := in.candidates[name]; ok {
			return nil, nil // listed with the retriever that loaded it
		}
		c, err := dataset.LoadHubCandidates(task.Dir, name, task.Split)
		if err != nil {
			return nil, err
		}
		if in.candidates == nil {
			in.candidates = map[string]*dataset.Candidates{}
		}
		in.candidates[name] = c
		return c.Files, nil
	case strings.HasPrefix(r.Retriever, RunPrefix):
		p := r.runPath(task)
		if _, err := os.Stat(p); err != nil {
			return nil, fmt.Errorf("retriever %s: %w", r.Retriever, err)
		}
		return []string{p}, nil
	}
	return nil, nil
}

// runPath is a run: retriever's file with "{task}" replaced by the task
// name, so one pipeline file serves every task of a sweep.
func (r Retrieval) runPath(task *ir.Task) string {
	return strings.ReplaceAll(strings.TrimPrefix(r.Retriever, RunPrefix), "{task}", task.Name)
}

func fuse(runs []ir.Run, f Fuse, depth int) (ir.Run, error) {
	switch strings.ToLower(f.Method) {
	case "", "rrf":
		return fusion.RRF(runs, f.k(), depth), nil
	case "combsum":
		n, err := f.norm()
		if err != nil {
			return nil, err
		}
		return fusion.CombSUM(runs, f.Weights, n, depth), nil
	}
	return nil, fmt.Errorf("unknown fusion method %q (rrf or combsum)", f.Method)
}

// stageCache keeps one stage's run in Options.Out/stages with the
// fingerprint of what produced it.
type stageCache struct {
	dir, name, fp string
	on, overwrite bool
}

func (c stageCache) run(produce func() (ir.Run, error)) (ir.Run, error) {
	if !c.on || c.dir == "" {
		return produce()
	}
	runPath := filepath.Join(c.dir, StagesDir, c.name+".trec")
	fpPath := filepath.Join(c.dir, StagesDir, c.name+".fingerprint")
	if !c.overwrite {
		if b, err := os.ReadFile(fpPath); err == nil && strings.TrimSpace(string(b)) == c.fp {
			if run, err := trec.ReadRunFile(runPath); err == nil {
				return run, nil
			}
		}
	}
	run, err := produce()
	if err != nil {
		return nil, err
	}
	if err := trec.WriteRunFile(runPath, run, c.name); err != nil {
		return nil, err
	}
	// The fingerprint goes second: a run file without it is never reused.
	return run, fileio.WriteAtomic(fpPath, func(w io.Writer) error {
		_, err := fmt.Fprintln(w, c.fp)
		return err
	})
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

func safeName(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			return r
		}
		return '_'
	}, s)
}

func (c Config) rerankerName() string {
	if c.Rerank.Model != "" {
		return c.Rerank.Model
	}
	return c.Rerank.Kind
}
