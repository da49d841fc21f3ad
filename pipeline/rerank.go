package pipeline

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/rerank"
	"github.com/r2med/r2med/results"
)

// rerankRun reorders the top of run with the reranker r describes. Each
// finished query is checkpointed in Options.Out/stages, so an interrupted
// rerank (hours of LLM calls) resumes with the queries it had not done.
func rerankRun(ctx context.Context, in stageInput, run ir.Run, cfg Config, dataFP string, depth int, opt Options, m *results.Manifest) (ir.Run, error) {
	r := cfg.Rerank
	spec := rerank.Spec{Kind: r.Kind, Model: r.Model, BaseURL: r.BaseURL, ModelDir: r.ModelDir, Concurrency: r.Concurrency}
	if opt.Cache != nil && strings.HasPrefix(r.Kind, "llm-") {
		spec.LLMCache = opt.Cache
	}
	s, err := rerank.New(spec)
	if err != nil {
		return nil, err
	}
	if c, ok := s.(io.Closer); ok {
		defer c.Close()
	}
	ro := rerank.Options{Depth: r.depth(), KeepTail: r.KeepTail, BatchSize: r.BatchSize, Workers: max(1, r.Concurrency)}
	if hybridCandidates(cfg) {
		// A reranking_hybrid list may end with HAKARI's rank-101 safeguard;
		// HAKARI shuffles candidates by hash before scoring, so ties do
		// not favour the fusion order.
		ro.Safeguard, ro.Order = rerank.KeepSafeguard, rerank.HashOrder
		if r.WithoutSafeguard {
			ro.Safeguard = rerank.DropSafeguard
		}
	} else if r.WithoutSafeguard {
		return nil, fmt.Errorf("--without-safeguard applies to a NanoR2MED reranking_hybrid candidate list (--retriever %sreranking_hybrid) alone", CandidatesPrefix)
	}
	job := rerank.Job{Task: in.task, Run: run, Scorer: s, Options: ro}
	if opt.Out != "" {
		// The settings that change the answers, not the server's address:
		// a server restarted on another port still resumes. The file stays
		// when the stage is done: a rerun that changes only what follows
		// (the final depth) takes every query from it.
		job.Checkpoint = filepath.Join(opt.Out, StagesDir, "rerank.partial")
		stages := cfg.describe()
		delete(stages, "top_k")
		job.Key = stageFingerprint(dataFP, map[string]any{"stages": stages, "retrieval_depth": depth}, ro.Depth)
	}
	bar := opt.Progress.New(len(run), "reranking "+in.task.Name)
	defer bar.Done()
	last := 0
	job.Progress = func(n, _ int) { bar.Add(n - last); last = n }
	out, res, err := job.Do(ctx)
	if res.Stale {
		logf(opt.Log, "%s: a rerank checkpoint with other settings was set aside", in.task.Name)
	} else if res.Done > 0 {
		logf(opt.Log, "%s: resuming the rerank: %d queries already done", in.task.Name, res.Done)
	}
	if err != nil {
		return nil, err
	}
	if st, ok := s.(interface{ Stats() rerank.Stats }); ok {
		stats := st.Stats()
		m.Counts["rerank_llm_calls"] = int(stats.Calls)
		m.Counts["rerank_no_logprobs"] = int(stats.NoLogprobs)
		m.Counts["rerank_undecided"] = int(stats.Undecided)
		m.Counts["rerank_unparsed"] = int(stats.Unparsed)
	}
	return out, nil
}

// hybridCandidates reports whether the pipeline reranks a reranking_hybrid
// candidate list as it is.
func hybridCandidates(cfg Config) bool {
	return len(cfg.Also) == 0 && cfg.Retriever == CandidatesPrefix+"reranking_hybrid"
}
