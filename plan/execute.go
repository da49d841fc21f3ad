package plan

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/r2med/r2med/expand"
	"github.com/r2med/r2med/internal/reuse"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/rerank"
	"github.com/r2med/r2med/results"
	"github.com/r2med/r2med/retrieve"
	"github.com/r2med/r2med/trec"
	"github.com/r2med/r2med/usage"
)

// Input is what a plan runs on.
type Input struct {
	// Task is the task whose corpus the retrievers rank and whose
	// queries' own text (not their expansion) the reranker reads; its
	// name labels progress and messages. It may be nil when Env gives the
	// retrievers and the plan does not rerank (runs fused as files).
	Task *ir.Task
	// Queries are the queries as the retrievers read them (with GAR, each
	// with its expansion); nil means the task's, as they are.
	Queries []retrieve.Query
	// Docs gives the reranker a document's text; nil looks it up in the
	// task's corpus.
	Docs func(id string) (string, bool)
	// Data is the fingerprint of what the stages read besides their
	// settings (Data); each stage's fingerprint is chained on it. Empty
	// means the task's files and the retrievers' inputs, computed when a
	// Store or a checkpoint needs fingerprints.
	Data string
}

// Env is what a plan runs with: how the work is done, kept and counted,
// never what it computes.
type Env struct {
	// Env is the retrievers' environment (workers, the embedding cache,
	// their servers, the manifest as Record, Log); its Progress also draws
	// the rerank's bar. Its Meter counts the model calls of every stage
	// when there is no Store; a Store gives each stage its own.
	retrieve.Env
	// Retrievers, when set, are the plan's retrievers built already, one
	// per Spec.Retrievers (a search service opens its indexes once; runs
	// read from files); nil builds each from its spec over Input.Task.
	Retrievers []retrieve.Retriever
	// Scorer, when set, is the reranker built already; nil builds it
	// from Rerank.Scorer.
	Scorer rerank.Scorer
	// Store keeps stage outputs for later executions; nil keeps nothing.
	Store Store
	// Checkpoint is the file where, without a Store, the rerank keeps
	// each finished query (rerank.Job), so that an interrupted rerank
	// resumes; empty keeps none. The caller removes it once the output
	// it feeds is written.
	Checkpoint string
}

// Store keeps what stages produce, so that a later execution of the same
// stages on the same data reuses it instead of producing it again (the
// pipeline keeps them under OUT/stages by package internal/reuse's rule).
type Store interface {
	// Stage returns the run kept for st, or calls produce with what the
	// stage works with, keeps what it returns (when st.Keep) and returns
	// it.
	Stage(ctx context.Context, st Stage, produce func(Work) (ir.Run, error)) (ir.Run, error)
}

// Stage is one stage of an execution as a Store sees it.
type Stage struct {
	// Name is the stage's name, unique in a plan: "retrieve" (or
	// "retrieve-2-bge" for the second of several), "fuse", "rerank".
	Name string
	// Fingerprint names what the stage's output depends on: its
	// settings and depth chained on the data and on every stage before.
	// Executed without a Store, only a resumable stage has one (its
	// checkpoint's); the others are left empty.
	Fingerprint string
	// Keep says the output is worth keeping: a later stage follows, or
	// the stage takes long on its own (embedding a corpus).
	Keep bool
	// Calls says the stage may call models (embeddings, LLMs, rerank
	// servers): what they cost is counted in Work.Meter, and the account
	// goes with the kept output.
	Calls bool
	// Resumable says the stage keeps each finished query in
	// Work.Checkpoint as it goes and resumes from it.
	Resumable bool
}

// Work is what a Store gives a stage to work with.
type Work struct {
	// Meter hears what the stage's model calls cost; nil counts nothing.
	Meter *usage.Meter
	// Checkpoint is where a resumable stage keeps its finished queries;
	// empty keeps none.
	Checkpoint string
	// Progress, when set, hears after each finished query of a resumable
	// stage how many are done (first those resumed from the checkpoint);
	// an error fails the stage.
	Progress func(done int) error
	// Count, when set, hears the counts worth keeping with the stage's
	// output ("rerank_fallbacks").
	Count func(name string, n int)
}

// Result is what an execution produced.
type Result struct {
	// Run is the system's ranking: every stage's output, cut to K.
	Run ir.Run
	// Ranked is what the rerank reordered: the retrieval's ranking (fused
	// when several) at the plan's depth; nil when the plan does not
	// rerank.
	Ranked ir.Run
	// Stats are the reranker's, when it keeps any and ran now (not kept
	// from an earlier execution).
	Stats *rerank.Stats
}

// Execute runs the plan's stages on in: each retriever at the plan's
// depth, its run ranked by its tie rule; their fusion; the rerank; the
// cut to K. A stage env.Store keeps for the same fingerprint is reused.
// A single query goes each retriever's single-query path
// (retrieve.SearchOne), which ranks as a batch does.
func (p *Plan) Execute(ctx context.Context, in Input, env Env) (*Result, error) {
	s := p.spec
	if env.Retrievers != nil && len(env.Retrievers) != len(s.Retrievers) {
		return nil, fmt.Errorf("plan: %d retrievers given for %d", len(env.Retrievers), len(s.Retrievers))
	}
	queries := in.Queries
	if queries == nil {
		if in.Task == nil {
			return nil, errors.New("plan: no queries and no task to take them from")
		}
		queries = retrieve.Queries(in.Task.Queries)
	}
	var ro rerank.Options
	if s.Rerank != nil {
		// Before any work: a rerank the retrieval cannot have fails now.
		var err error
		if ro, err = p.rerankOptions(); err != nil {
			return nil, err
		}
	}
	store := env.Store
	if store == nil {
		store = direct{env}
	}
	data := in.Data
	if data == "" && (env.Store != nil || env.Checkpoint != "") {
		var err error
		if data, err = p.data(in.Task); err != nil {
			return nil, err
		}
	}
	// The scores of retrieval and every later stage depend on how r2med
	// computes them, not only on the settings: base carries the rules
	// (Rules), so stages kept by a build that scored otherwise are
	// recomputed, not reused.
	//
	// Without a Store nothing is kept, and only a resumable stage (the
	// rerank's checkpoint) needs its fingerprint: a search service's
	// query does not pay for the others.
	keyed := env.Store != nil
	depth := p.spec.Depth()
	var base string
	if keyed || s.Rerank != nil {
		base = reuse.Of(data, s.Rules(), 0)
	}
	followed := p.fused() || s.Rerank != nil
	runs := make([]ir.Run, len(s.Retrievers))
	var described []map[string]any
	for i, r := range s.Retrievers {
		st := Stage{Name: p.retrieveStage(i), Keep: followed || retrieve.UsesCache(r.Spec), Calls: true}
		if keyed {
			described = append(described, r.Spec.Describe())
			st.Fingerprint = reuse.Of(base, r.Spec.Describe(), depth)
		}
		run, err := store.Stage(ctx, st, func(w Work) (ir.Run, error) { return p.retrieve(ctx, i, in.Task, queries, env, w) })
		if err != nil {
			if p.fused() {
				return nil, fmt.Errorf("%s: %w", r.name(), err)
			}
			return nil, err
		}
		runs[i] = run
	}
	run := runs[0]
	if p.fused() {
		st := Stage{Name: "fuse", Keep: true}
		if keyed {
			st.Fingerprint = reuse.Of(base, map[string]any{"retrievers": described, "fusion": s.Fuse.Describe()}, depth)
		}
		if err := env.Time("fuse", func() error {
			var err error
			run, err = store.Stage(ctx, st, func(Work) (ir.Run, error) { return s.Fuse.Fuse(runs, depth) })
			return err
		}); err != nil {
			return nil, err
		}
	}
	res := &Result{}
	if s.Rerank != nil {
		res.Ranked = run
		st := Stage{Name: "rerank", Fingerprint: p.rerankFingerprint(base, depth), Keep: true, Calls: true, Resumable: true}
		if err := env.Time("rerank", func() error {
			var err error
			run, err = store.Stage(ctx, st, func(w Work) (ir.Run, error) {
				out, stats, err := p.rerank(ctx, in, res.Ranked, ro, st.Fingerprint, env, w)
				res.Stats = stats
				return out, err
			})
			return err
		}); err != nil {
			return nil, err
		}
	}
	run.Cut(s.K)
	res.Run = run
	return res, nil
}

// retrieveStage names the i-th retrieval stage.
func (p *Plan) retrieveStage(i int) string {
	if !p.fused() {
		return "retrieve"
	}
	return fmt.Sprintf("retrieve-%d-%s", i+1, results.DirName(p.spec.Retrievers[i].Spec.Name()))
}

// retrieve runs the i-th retriever, built with w's meter unless env gives
// it, and ranks its run by the retriever's tie rule.
func (p *Plan) retrieve(ctx context.Context, i int, task *ir.Task, queries []retrieve.Query, env Env, w Work) (ir.Run, error) {
	spec := p.spec.Retrievers[i].Spec
	var r retrieve.Retriever
	if env.Retrievers != nil {
		r = env.Retrievers[i]
	} else {
		if task == nil {
			return nil, fmt.Errorf("plan: retriever %s needs the task whose corpus it ranks", spec.Name())
		}
		renv := env.Env
		renv.Meter = w.Meter
		built, err := retrieve.New(ctx, spec, task, renv)
		if err != nil {
			return nil, err
		}
		defer retrieve.Close(built)
		r = built
	}
	depth := p.spec.Depth()
	search := max(depth, SearchDepth)
	var run ir.Run
	if len(queries) == 1 {
		hits, err := retrieve.SearchTop(ctx, r, queries[0], depth, search)
		if err != nil {
			return nil, err
		}
		run = ir.Run{queries[0].ID: hits}
	} else {
		var err error
		if run, err = r.Search(ctx, queries, search); err != nil {
			return nil, err
		}
	}
	// What the stage hands on is the ranking its scores mean (a scorer's
	// ties by doc id, as trec_eval reads them), not the retriever's list
	// order; cut after, so that its top is the top of R2MED's ranking
	// (SearchDepth).
	trec.Rank(run, retrieve.TiesOf(spec))
	run.Cut(depth)
	return run, nil
}

// rerankOptions are the rerank's options for the plan's retrieval: the
// safeguard rule and the tie order.
func (p *Plan) rerankOptions() (rerank.Options, error) {
	r := p.spec.Rerank
	o := rerank.Options{Depth: r.depth(), KeepTail: r.KeepTail, BatchSize: r.BatchSize, Workers: max(1, r.Workers)}
	// A list reranked as it is (not fused) may carry what its publisher
	// put there: HAKARI's safeguard, scores that are only ranks.
	var first retrieve.Spec
	if !p.fused() {
		first = p.spec.Retrievers[0].Spec
	}
	switch {
	case first != nil && retrieve.Safeguarded(first):
		// HAKARI reranks a reranking_hybrid list with its rank-101
		// safeguard ("reranking") or without it, its candidates shuffled
		// by hash before scoring so ties do not favour the fusion order.
		o.Safeguard, o.Order = rerank.KeepSafeguard, rerank.HashOrder
		if r.WithoutSafeguard {
			o.Safeguard = rerank.DropSafeguard
		}
	case r.WithoutSafeguard:
		return o, fmt.Errorf("without_safeguard (--without-safeguard) applies to reranking_hybrid lists, which may end with HAKARI-Bench's rank-101 safeguard (a NanoR2MED candidates:reranking_hybrid list, not fused); %s has no safeguard", p.spec.Stages().Retrieval())
	}
	o.RanksOnly = first != nil && retrieve.RanksOnly(first)
	switch r.Ties {
	case TiesInput:
		o.Order = rerank.InputOrder
	case TiesHash:
		o.Order = rerank.HashOrder
	}
	return o, nil
}

// rerankFingerprint names what the reranked lists depend on: the data,
// every stage's settings (the manifest's description, without the cut
// and the display name, so a rerun that changes only those reuses the
// rerank), the depth of the lists it reads and its own depth, and a local
// model's folder (the description has its model's version, once the
// plan is resolved).
func (p *Plan) rerankFingerprint(base string, depth int) string {
	r := p.spec.Rerank
	stages := p.spec.Describe()
	delete(stages, "top_k")
	delete(stages, "name")
	f := reuse.NewFingerprint().Add(base, map[string]any{"stages": stages, "retrieval_depth": depth}, r.depth())
	if d := r.Scorer.ModelDir; d != "" {
		f.Add(map[string]any{"model_dir": d})
	}
	return f.String()
}

// rerank reorders the top of run, keeping each finished query in w's
// checkpoint under key.
func (p *Plan) rerank(ctx context.Context, in Input, run ir.Run, opts rerank.Options, key string, env Env, w Work) (ir.Run, *rerank.Stats, error) {
	if in.Task == nil {
		return nil, nil, errors.New("plan: the rerank reads the queries' text; give the task")
	}
	s := env.Scorer
	if s == nil {
		spec := p.spec.Rerank.Scorer
		spec.Meter = w.Meter
		built, err := rerank.New(spec)
		if err != nil {
			return nil, nil, err
		}
		if c, ok := built.(io.Closer); ok {
			defer c.Close()
		}
		s = built
	}
	job := rerank.Job{Task: in.Task, Docs: in.Docs, Run: run, Scorer: s, Options: opts, Checkpoint: w.Checkpoint, Key: key}
	// Queries read back from the checkpoint show as done but do not count
	// in the bar's pace.
	bar := env.Progress.Counter("reranking " + in.Task.Name)
	var progressErr error
	job.Progress = func(done, total int) {
		bar.Report(done, total)
		if w.Progress != nil && progressErr == nil {
			progressErr = w.Progress(done)
		}
	}
	out, res, err := job.Do(ctx)
	bar.Done()
	if err == nil {
		err = progressErr
	}
	var stats *rerank.Stats
	if sc, ok := s.(interface{ Stats() rerank.Stats }); ok {
		st := sc.Stats()
		stats = &st
		if w.Count != nil {
			for k, v := range st.Counts() {
				w.Count("rerank_"+k, v)
			}
		}
	}
	if w.Count != nil && w.Checkpoint != "" {
		// The scorer's counts (rerank_llm_calls, …) and the stage's time
		// are this attempt's; the run's usage holds the earlier attempts'
		// calls too: the manifest says how many queries those reranked.
		w.Count(ResumedQueries, res.Done)
	}
	if res.Stale {
		env.Logf("%s: starting the rerank afresh: %s was left by a rerank with other settings or data", in.Task.Name, w.Checkpoint)
	} else if res.Done > 0 {
		env.Logf("%s: resuming the rerank: %d queries already reranked in %s", in.Task.Name, res.Done, w.Checkpoint)
	}
	return out, stats, err
}

// ResumedQueries is the manifest count of the queries a resumed rerank
// took from its checkpoint (those an interrupted attempt reranked).
const ResumedQueries = "rerank_resumed_queries"

// direct is the Store of an execution that keeps nothing: every stage is
// produced, its calls counted in env.Meter.
type direct struct{ env Env }

func (d direct) Stage(_ context.Context, st Stage, produce func(Work) (ir.Run, error)) (ir.Run, error) {
	w := Work{Meter: d.env.Meter}
	if st.Resumable {
		w.Checkpoint = d.env.Checkpoint
	}
	if d.env.Record != nil {
		w.Count = d.env.Record.Count
	}
	return produce(w)
}

// Data is the fingerprint of what every stage reads besides its own
// settings: the task by name and split, the checksums of what its data
// came from (its files, or its content when it has none; the
// generations' files; the retrievers' inputs), and the expansion with its
// generations' text (generations made in a run are no input file, and a
// new temperature changes them under one name). Each stage chains its
// settings on it, so a changed reranker does not redo retrieval.
func Data(task, split string, checksums []string, gar expand.Source, gens []expand.Generation) string {
	f := reuse.NewFingerprint().Add(task, split)
	for _, c := range checksums {
		f.Add(c)
	}
	f.Add(gar)
	for _, g := range gens {
		f.Add([]string{g.ID, g.Text, g.HyDoc})
	}
	return f.String()
}

// data is Data for a plan run on task's queries as they are: its files
// (or its content), then the retrievers' inputs.
func (p *Plan) data(task *ir.Task) (string, error) {
	if task == nil {
		return "", errors.New("plan: keeping stages needs the task they are made from")
	}
	var files []string
	for _, f := range task.Files {
		if _, err := os.Stat(f); err == nil {
			files = append(files, f)
		}
	}
	var sums []string
	if len(files) == 0 {
		sums = append(sums, results.ContentDigest(task).SHA256)
	}
	inputs, err := p.spec.Inputs(task)
	if err != nil {
		return "", err
	}
	for _, f := range append(files, inputs...) {
		sum, err := reuse.Sum(f)
		if err != nil {
			return "", err
		}
		sums = append(sums, sum)
	}
	return Data(task.Name, task.Split, sums, p.spec.Expansion, nil), nil
}
