package pipeline

import (
	"context"
	"errors"
	"io"
	"maps"
	"os"
	"path/filepath"

	"github.com/r2med/r2med/internal/httpx"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/rerank"
	"github.com/r2med/r2med/results"
	"github.com/r2med/r2med/retrieve"
	"github.com/r2med/r2med/trec"
)

// rerankRun reorders the top of run with the reranker r describes. Each
// finished query is checkpointed in Options.Out/stages, so an interrupted
// rerank (hours of LLM calls) resumes with the queries it had not done.
func rerankRun(ctx context.Context, in stageInput, run ir.Run, cfg Config, dataFP string, depth int, opt Options, m *results.Manifest, cs *calls) (ir.Run, error) {
	r := cfg.Rerank
	ro := rerank.Options{Depth: r.depth(), KeepTail: r.KeepTail, BatchSize: r.BatchSize, Workers: max(1, r.Concurrency), RanksOnly: ranksOnly(cfg)}
	if hybridCandidates(cfg) {
		// A reranking_hybrid list may end with HAKARI's rank-101 safeguard;
		// HAKARI shuffles candidates by hash before scoring, so ties do
		// not favour the fusion order.
		ro.Safeguard, ro.Order = rerank.KeepSafeguard, rerank.HashOrder
		if r.WithoutSafeguard {
			ro.Safeguard = rerank.DropSafeguard
		}
	} else if r.WithoutSafeguard {
		return nil, errors.New("--without-safeguard applies to a NanoR2MED reranking_hybrid candidate list (--retriever candidates:reranking_hybrid) alone")
	}
	// The settings that change the answers (the reasoning rerankers'
	// prompts and knobs included), not the server's address: a server
	// restarted on another port still resumes, and a rerun that changes
	// only what follows (the final depth) reuses the stage.
	described := cfg.describe()
	delete(described, "top_k")
	delete(described, "name")
	fp := stageFingerprint(dataFP, map[string]any{"stages": described, "retrieval_depth": depth}, ro.Depth)
	st := opt.stages()
	const file = "rerank.trec"
	files := append([]string{file}, callFiles("rerank")...)
	if st.reusable("rerank", fp, files...) {
		if out, err := trec.ReadRunFile(filepath.Join(st.dir, file)); err == nil {
			if counts, err := cs.reuse(st.dir, "rerank"); err == nil {
				maps.Copy(m.Counts, counts)
				return out, nil
			}
		}
	}
	spec := r.spec()
	urls, err := httpx.ReadURLs(r.BaseURLs)
	if err != nil {
		return nil, err
	}
	if len(urls) > 0 {
		spec.BaseURL, spec.BaseURLs = urls[0], urls[1:]
	}
	hc := cfg.Remote.Client(opt.warn(), "rerank")
	spec.HTTP, spec.Fleet, spec.Replay = &hc, cfg.Remote.Fleet(opt.warn()), opt.Replay
	if rerank.UsesLLM(r.Kind) {
		if opt.Cache != nil {
			spec.LLMCache = opt.Cache
		} else if opt.Replay {
			return nil, errors.New("replay answers from the cache, and this run has none (drop --no-cache)")
		}
	}
	sc := cs.begin()
	spec.Meter = sc.meter
	s, err := rerank.New(spec)
	if err != nil {
		return nil, err
	}
	if c, ok := s.(io.Closer); ok {
		defer c.Close()
	}
	job := rerank.Job{Task: in.task, Run: run, Scorer: s, Options: ro}
	var part *partial
	if st.dir != "" {
		// Every finished query is kept under the stage's fingerprint, so
		// an interrupted rerank resumes with the queries it had not done.
		job.Checkpoint, job.Key = filepath.Join(st.dir, RerankCheckpoint), fp
		if opt.Overwrite {
			if err := os.Remove(job.Checkpoint); err != nil && !errors.Is(err, os.ErrNotExist) {
				return nil, err
			}
		}
		part = openPartial(job.Checkpoint)
	}
	// Queries read back from the checkpoint show as done but do not
	// count in the bar's pace.
	bar := opt.Progress.Counter("reranking " + in.task.Name)
	defer bar.Done()
	var partErr error
	job.Progress = func(n, total int) {
		bar.Report(n, total)
		if part != nil && partErr == nil {
			partErr = part.progress(sc, n)
		}
	}
	out, res, err := job.Do(ctx)
	if err == nil {
		err = partErr
	}
	counts := map[string]int{}
	if sc, ok := s.(interface{ Stats() rerank.Stats }); ok {
		for k, v := range sc.Stats().Counts() {
			counts["rerank_"+k] = v
		}
		maps.Copy(m.Counts, counts)
	}
	dir := st.dir
	if err != nil {
		dir = "" // the usage counts; the stage is not kept
	} else if st.dir != "" {
		if err := st.stage("rerank").Begin(); err != nil {
			return nil, err
		}
	}
	if e := cs.end(sc, dir, "rerank", counts); err == nil && e != nil {
		return nil, e
	}
	if res.Stale {
		logf(opt.Log, "%s: a rerank checkpoint with other settings was set aside", in.task.Name)
	} else if res.Done > 0 {
		logf(opt.Log, "%s: resuming the rerank: %d queries already done", in.task.Name, res.Done)
	}
	if err != nil {
		return nil, err
	}
	if st.dir != "" {
		// The stage's output replaces its checkpoint as its record.
		if err := trec.WriteRunFile(filepath.Join(st.dir, file), out, "rerank"); err != nil {
			return nil, err
		}
		if err := st.stage("rerank").Keep(fp, files...); err != nil {
			return nil, err
		}
		if err := os.Remove(job.Checkpoint); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		if err := part.remove(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// hybridCandidates reports whether the pipeline reranks a candidate list
// that may end with HAKARI's rank-101 safeguard, as it is (not fused).
func hybridCandidates(cfg Config) bool {
	if cfg.fused() {
		return false
	}
	c, ok := cfg.Retrievers[0].(retrieve.Candidates)
	return ok && c.Safeguarded()
}

// ranksOnly reports whether the pipeline reranks a candidate list
// published without scores, as it is (not fused): its scores only stand
// for ranks, and InsertRank must say so rather than show them as scores.
func ranksOnly(cfg Config) bool {
	if cfg.fused() {
		return false
	}
	c, ok := cfg.Retrievers[0].(retrieve.Candidates)
	return ok && c.RanksOnly()
}
