// Package pipeline runs an experiment on one task, in the one direction
// data flows: the task's data (Source: the demo, a registry task through
// the Hub, a directory, hf://) → its queries expanded (published or
// generated expansions) → the stage plan (package plan: retrieval,
// fusion, rerank, the cut) → evaluation → the files a finished run leaves
// (run.trec, results.json, manifest.json). Each stage is a package of its
// own; this package sequences them, keeps their outputs so a run resumes
// (OUT/stages, package internal/reuse's rule), accounts for the model
// calls they make, and decides what a finished run leaves on disk.
package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/r2med/r2med/cache"
	"github.com/r2med/r2med/expand"
	"github.com/r2med/r2med/internal/httpx"
	"github.com/r2med/r2med/internal/progress"
	"github.com/r2med/r2med/internal/reuse"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/measure"
	"github.com/r2med/r2med/plan"
	"github.com/r2med/r2med/rerank"
	"github.com/r2med/r2med/results"
	"github.com/r2med/r2med/retrieve"
	"github.com/r2med/r2med/tasks"
	"github.com/r2med/r2med/trec"
	"github.com/r2med/r2med/usage"
)

// Options say where outputs go and how the run reports.
type Options struct {
	Out string // output directory; empty keeps everything in memory
	// Overwrite redoes a run whose outputs already exist, and replaces a
	// run with other settings in Out (refused without it).
	Overwrite bool
	// Replace lets a run replace one with other settings in Out without
	// redoing unchanged ones (sweeps: a pipeline edited under the same
	// name); the replacement is logged.
	Replace  bool
	Progress progress.Factory
	Log      io.Writer // one-line stage messages; nil is silent
	Command  []string  // recorded in the manifest (results.CommandLine)
	Workers  int       // 0 means GOMAXPROCS
	// Cache holds embeddings and LLM answers across runs; nil computes
	// everything afresh.
	Cache *cache.Store
	// AllowMissingDocs lets a run-file retriever drop, count and report
	// queries and documents the task lacks instead of failing
	// (retrieve.Env.AllowMissingDocs).
	AllowMissingDocs bool
	// Replay answers every model call (embeddings, generations, LLM
	// reranking) from Cache and sends nothing to any server: a call the
	// cache lacks fails the run. With a cache shared by `r2med cache
	// export`/`import`, a published run is re-run bit for bit.
	Replay bool
	// Prices turn the usage the manifest records into dollars
	// (usage.Summary); nil records tokens and seconds only.
	Prices usage.Prices
	// Warn hears retried requests to model servers and a fleet's servers
	// taken out and let back, one line each; nil means Log.
	Warn io.Writer
}

// warn is where retry and fleet lines go.
func (o Options) warn() io.Writer {
	if o.Warn != nil {
		return o.Warn
	}
	return o.Log
}

// Outcome is what a run produced.
type Outcome struct {
	// Name is the system's name: Config.ModelName once the retrievers
	// are resolved (a run file's retriever is named by the tag it reads),
	// as the run tag and the result file name it.
	Name     string
	Run      ir.Run
	Eval     *measure.R2MEDResult
	Result   *results.R2MED
	Manifest *results.Manifest
	Skipped  bool // outputs were already there for the same fingerprint, and verified
	// Replaced is set when Out held a run with other settings that this
	// one replaced (Options.Overwrite or Replace).
	Replaced bool
}

// Output file names inside Options.Out: the results package's, which
// scans results directories for them.
const (
	RunFile      = results.RunFile
	ResultsFile  = results.ResultsFile
	ManifestFile = results.ManifestFile
)

// Run executes the pipeline on one task: it reads what the stages read
// (the task's files, published generations, the retrievers' inputs) and
// settles whether Out already holds this run; it expands the queries
// (published or generated expansions); it executes the stage plan the
// config describes (package plan: retrieval, fusion, rerank, the cut),
// keeping each stage under Out/stages; it evaluates the run; and it writes
// what a finished run leaves: run.trec, results.json, the manifest last.
//
// With Options.Out, a run whose manifest there carries the same
// fingerprint (settings, data checksums) and whose run.trec and
// results.json still have the checksums the manifest records is reused,
// not redone. A run with other settings there is not replaced unless
// Options.Overwrite (or Replace) says so; the old manifest goes before the
// new outputs are written, so an interrupted run never leaves a manifest
// describing other files. Temporary files an interrupted run left are
// removed.
func Run(ctx context.Context, task *ir.Task, cfg Config, opt Options) (*Outcome, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	r := &runner{task: task, cfg: cfg, opt: opt, start: time.Now()}
	if err := r.load(ctx); err != nil {
		return nil, err
	}
	if out, err := r.previous(); out != nil || err != nil {
		return out, err
	}
	if opt.Replay && opt.Cache == nil && cfg.NeedsCache() {
		return nil, errors.New("replay answers every model call from the cache, and this run has none (drop --no-cache)")
	}
	r.calls = newCalls(opt.Cache)
	defer r.calls.stop()
	queries, err := r.expand(ctx)
	if err != nil {
		return nil, err
	}
	run, err := r.execute(ctx, queries)
	if err != nil {
		return nil, err
	}
	ev, err := r.evaluate(run)
	if err != nil {
		return nil, err
	}
	out := r.outcome(run, ev)
	if opt.Out == "" {
		return out, nil
	}
	return out, r.write(out)
}

// runner is one Run in progress.
type runner struct {
	task  *ir.Task
	cfg   Config
	opt   Options
	start time.Time

	spec     plan.Spec // the config's plan, its retrievers resolved
	m        *results.Manifest
	gens     []expand.Generation // the expansions, aligned with the queries once expanded
	fp       string              // the run's fingerprint
	replaced bool                // Out held a run with other settings
	calls    *calls
}

// load resolves the plan and starts the manifest: the task, the settings,
// and the checksums of what the stages read (published generations read
// here), which make the run's fingerprint.
func (r *runner) load(ctx context.Context) error {
	task, cfg := r.task, r.cfg
	m := results.NewManifest(r.opt.Command)
	r.m = m
	// Retrievers that search state outside the task's files (a Weaviate
	// collection) read it now, so the manifest and fingerprint carry it.
	var err error
	if r.spec, err = cfg.Plan().Resolve(ctx, task); err != nil {
		return err
	}
	m.Config = cfg.Describe(r.spec)
	if r.opt.AllowMissingDocs {
		// Judgments of missing documents were accepted and run files may
		// have been cut to the task: not the run the flag's absence makes.
		m.Config["allow_missing_docs"] = true
	}
	m.Name = cfg.Name
	var gens []string
	if cfg.GAR.Method != "" && cfg.Generate == nil {
		if r.gens, gens, err = loadGenerations(task, cfg.GAR, strings.ReplaceAll(cfg.GARDir, "{task}", task.Name)); err != nil {
			return err
		}
	}
	if err := RecordInputs(m, task, r.spec, gens...); err != nil {
		return err
	}
	r.fp = fingerprint(m, r.spec.Rules())
	m.Config["fingerprint"] = r.fp
	return nil
}

// previous is the run Out already holds when it is this one, verified
// (previous decides).
func (r *runner) previous() (*Outcome, error) {
	if r.opt.Out == "" {
		return nil, nil
	}
	out, replaced, err := previous(r.opt, r.m, r.fp)
	if out != nil {
		out.Name = r.spec.System()
		// The run file reused is evaluated again (milliseconds), so the
		// outcome's means are the file's, unrounded, as a fresh run's.
		if out.Eval, _, _, err = r.score(out.Run); err != nil {
			return nil, err
		}
	}
	r.replaced = replaced
	return out, err
}

// expand gives the queries as the retrievers read them: with GAR, each
// with its generation (made now by an LLM, or the published one).
func (r *runner) expand(ctx context.Context) ([]retrieve.Query, error) {
	if g := r.cfg.Generate; g != nil {
		var err error
		if r.gens, err = generateStage(ctx, r.task, *g, r.cfg.Remote, r.opt, r.m, r.calls); err != nil {
			return nil, err
		}
	}
	if r.gens == nil {
		return retrieve.Queries(r.task.Queries), nil
	}
	queries, aligned, err := expandQueries(r.task, r.gens, r.m)
	r.gens = aligned
	return queries, err
}

// execute runs the plan's stages, each kept under Out/stages, the model
// calls they make accounted in the manifest.
func (r *runner) execute(ctx context.Context, queries []retrieve.Query) (ir.Run, error) {
	cfg, opt, spec := r.cfg, r.opt, r.spec
	if spec.Rerank != nil {
		var err error
		if spec.Rerank.Scorer, err = rerankConnections(cfg, opt); err != nil {
			return nil, err
		}
	}
	p, err := plan.New(spec)
	if err != nil {
		return nil, err
	}
	env := plan.Env{Store: opt.stages(r.calls, r.m), Env: retrieve.Env{Workers: opt.Workers, Progress: opt.Progress, Cache: opt.Cache, Log: opt.Log, Record: r.m,
		AllowMissingDocs: opt.AllowMissingDocs, Replay: opt.Replay, HTTP: cfg.Remote.Client(opt.warn(), "embedding"), Fleet: cfg.Remote.Fleet(opt.warn())}}
	done, err := p.Execute(ctx, plan.Input{Task: r.task, Queries: queries, Data: dataFingerprint(r.m, cfg.GAR, r.gens)}, env)
	if err != nil {
		return nil, err
	}
	r.m.Usage = r.calls.summary(len(r.task.Queries), opt.Prices)
	return done.Run, nil
}

// evaluate scores the run as R2MED does and counts what the manifest
// says of it, warning about judged queries that got nothing.
func (r *runner) evaluate(run ir.Run) (*measure.R2MEDResult, error) {
	task, m := r.task, r.m
	var ev *measure.R2MEDResult
	if err := m.Time("evaluate", func() error {
		var dropped, unjudged int
		var err error
		if ev, dropped, unjudged, err = r.score(run); err != nil {
			return err
		}
		if len(task.Excluded) > 0 {
			countExclusions(m, task, dropped, unjudged)
		}
		return nil
	}); err != nil {
		return nil, err
	}
	m.Counts["documents"] = len(task.Corpus)
	m.Counts["queries"] = len(task.Queries)
	m.Counts[results.QueriesEvaluated] = ev.NumQueries
	m.Counts["qrels"] = task.Qrels.Len()
	ranked, hits := 0, 0
	for _, h := range run {
		if len(h) > 0 {
			ranked++
		}
		hits += len(h)
	}
	m.Counts[results.QueriesRanked] = ranked
	m.Counts["hits"] = hits
	m.Counts[results.RunDepth] = run.Depth()
	unanswered := 0
	for qid := range task.Qrels {
		if len(run[qid]) == 0 {
			unanswered++
		}
	}
	m.Counts[results.QueriesWithoutResults] = unanswered
	if unanswered > 0 {
		logf(r.opt.warn(), "%s: warning: %d of %d judged queries got no results; they count 0 in every mean (results.json averages over %s, as R2MED's result files do)",
			task.Name, unanswered, len(task.Qrels), measure.MeanOverJudged)
	}
	return ev, nil
}

// score evaluates run as R2MED does. Excluded documents are neither
// retrieved nor relevant (ir.Exclusions): retrieval removed them already,
// so this removes nothing unless a stage put one back; dropped and
// unjudged count what it removed from the run and the judgments.
func (r *runner) score(run ir.Run) (ev *measure.R2MEDResult, dropped, unjudged int, err error) {
	ex := r.task.Excluded
	run, dropped = ex.FilterRun(run)
	qrels, unjudged := ex.FilterQrels(r.task.Qrels)
	ev, err = measure.EvaluateR2MED(qrels, run, cutoffs(r.task)...)
	return ev, dropped, unjudged, err
}

// cutoffs are the rank cutoffs a task's results report: BRIGHT's for a
// BRIGHT task (its layout, or its name: "BRIGHT-biology"), so that its
// results.json holds every number BRIGHT's run.py prints; R2MED's
// otherwise (none: EvaluateR2MED's default).
func cutoffs(t *ir.Task) []int {
	if _, s, err := tasks.Resolve(t.Name); t.Layout == ir.LayoutBrightHub || err == nil && s.Benchmark() == tasks.Bright {
		return measure.BrightCutoffs
	}
	return nil
}

// outcome is the run with its result file, named as R2MED's name their
// systems.
func (r *runner) outcome(run ir.Run, ev *measure.R2MEDResult) *Outcome {
	name := r.spec.System()
	res := &results.R2MED{
		DatasetName:    r.task.Name,
		EvaluationTime: results.EvaluationTime(time.Since(r.start).Seconds()),
		MeanOver:       measure.MeanOverJudged,
		Test:           ev.Scores,
	}
	res.SetSystem(name, r.spec.Stages(), r.m.Config)
	return &Outcome{Name: name, Run: run, Eval: ev, Result: res, Manifest: r.m, Replaced: r.replaced}
}

// write leaves the finished run in Out: run.trec and results.json, their
// checksums and the cache entries used beside the manifest, which goes
// last: its presence marks a finished run.
func (r *runner) write(out *Outcome) error {
	dir, m := r.opt.Out, r.m
	if err := m.Time("write", func() error {
		// The old manifest goes first: until the new one is written, the
		// directory holds no finished run.
		if err := os.Remove(filepath.Join(dir, ManifestFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		if err := trec.WriteRunFile(filepath.Join(dir, RunFile), out.Run, r.spec.Tag()); err != nil {
			return err
		}
		return out.Result.WriteFile(filepath.Join(dir, ResultsFile))
	}); err != nil {
		return err
	}
	rec, err := reuse.Seal(dir, r.fp, RunFile, ResultsFile)
	if err != nil {
		return err
	}
	// The cache entries the run used, for `r2med cache export --manifest`.
	if err := r.calls.writeKeys(dir); err != nil {
		return err
	}
	m.Outputs = []string{RunFile, ResultsFile, ManifestFile}
	m.OutputSHA256 = rec.SHA256
	return m.WriteFile(filepath.Join(dir, ManifestFile))
}

// rerankConnections is the reranker's spec with the run's servers (a
// file of URLs read), the bounds on calls to them, the LLM answer cache
// and replay.
func rerankConnections(cfg Config, opt Options) (rerank.Spec, error) {
	spec := cfg.Rerank.Spec()
	urls, err := httpx.ReadURLs(cfg.Rerank.BaseURLs)
	if err != nil {
		return spec, err
	}
	if len(urls) > 0 {
		spec.BaseURL, spec.BaseURLs = urls[0], urls[1:]
	}
	hc := cfg.Remote.Client(opt.warn(), "rerank")
	spec.HTTP, spec.Fleet, spec.Replay = &hc, cfg.Remote.Fleet(opt.warn()), opt.Replay
	if rerank.UsesLLM(spec.Kind) {
		if opt.Cache != nil {
			spec.LLMCache = opt.Cache
		} else if opt.Replay {
			return spec, errors.New("replay answers from the cache, and this run has none (drop --no-cache)")
		}
	}
	return spec, nil
}

// countExclusions records a task's exclusions in the manifest: the
// excluded (query, document) pairs, the queries with any, the pairs whose
// document the corpus lacks (they exclude nothing), and what evaluation
// removed (retrieve.HitsExcluded counts what retrieval removed, when it
// ran in this invocation).
func countExclusions(m *results.Manifest, t *ir.Task, hits, judgments int) {
	in := make(map[string]bool, len(t.Corpus))
	for _, d := range t.Corpus {
		in[d.ID] = true
	}
	missing := 0
	for _, docs := range t.Excluded {
		for d := range docs {
			if !in[d] {
				missing++
			}
		}
	}
	m.Counts["excluded_pairs"] = t.Excluded.Len()
	m.Counts["excluded_queries"] = len(t.Excluded)
	m.Counts["excluded_not_in_corpus"] = missing
	m.Counts["excluded_hits_at_evaluation"] = hits
	m.Counts["excluded_judgments_at_evaluation"] = judgments
}

// existing keeps the files that are on disk (an embedded task has none).
// RecordInputs starts a manifest's record of what a run read: the task
// (its source directory made absolute, the Hub commit it was read at),
// and the checksums of its files, of the given files (generations read)
// and of what spec's retrievers read (run files, candidate lists); an
// embedded task, which has no files, by its content. They make a run's
// fingerprint; r2med rerank records them too.
func RecordInputs(m *results.Manifest, task *ir.Task, spec plan.Spec, files ...string) error {
	m.Task = results.TaskInfo{Name: task.Name, Layout: string(task.Layout), Split: task.Split, Source: task.Dir}
	if abs, err := filepath.Abs(task.Dir); err == nil && task.Dir != "" && abs != task.Dir {
		// Recorded absolute, so that serve, report and compare find the
		// data from any working directory.
		m.Task.Source, m.Task.SourceGiven = abs, task.Dir
	}
	if commit := HubCommit(task.Dir); commit != "" {
		m.Task.Revision = commit // what a branch such as "main" resolved to
	}
	inputs := existing(task.Files)
	embedded := len(inputs) == 0
	inputs = append(inputs, files...)
	more, err := spec.Inputs(task)
	if err != nil {
		return err
	}
	for _, f := range more {
		if !slices.Contains(inputs, f) {
			inputs = append(inputs, f)
		}
	}
	if err := m.AddInputs(inputs...); err != nil {
		return err
	}
	if embedded {
		// An embedded task has no files to checksum; its content stands in,
		// so a binary with other demo data does not reuse old outputs. Run
		// files and generations it was run with are inputs all the same,
		// but not where its data comes from.
		m.Inputs = append([]results.FileDigest{results.ContentDigest(task)}, m.Inputs...)
		m.Task.Source, m.Task.SourceGiven = "embedded:"+task.Name, ""
	}
	return nil
}

func existing(paths []string) []string {
	var out []string
	for _, p := range paths {
		if _, err := os.Stat(p); err == nil {
			out = append(out, p)
		}
	}
	return out
}

func logf(w io.Writer, format string, args ...any) {
	if w != nil {
		fmt.Fprintf(w, format+"\n", args...)
	}
}
