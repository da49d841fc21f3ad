// Package pipeline runs the stages of an experiment in the one direction
// data flows: dataset → retrieve → evaluate → write results. Each stage is
// a package of its own; this package only sequences them, times them, and
// decides what a finished run leaves on disk.
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
	"strconv"
	"strings"
	"time"

	"github.com/r2med/r2med/cache"
	"github.com/r2med/r2med/dataset"
	"github.com/r2med/r2med/expand"
	"github.com/r2med/r2med/internal/fileio"
	"github.com/r2med/r2med/internal/progress"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/measure"
	"github.com/r2med/r2med/results"
	"github.com/r2med/r2med/trec"
)

// Options say where outputs go and how the run reports.
type Options struct {
	Out       string // output directory; empty keeps everything in memory
	Overwrite bool   // redo a run whose outputs already exist
	Progress  progress.Factory
	Log       io.Writer // one-line stage messages; nil is silent
	Command   []string  // recorded in the manifest
	Workers   int       // 0 means GOMAXPROCS
	// Cache holds embeddings and LLM answers across runs; nil computes
	// everything afresh.
	Cache *cache.Store
}

// Outcome is what a run produced.
type Outcome struct {
	Run      ir.Run
	Eval     *measure.R2MEDResult
	Result   *results.R2MED
	Manifest *results.Manifest
	Skipped  bool // outputs were already there for the same fingerprint
}

// Output file names inside Options.Out: the results package's, which
// scans results directories for them.
const (
	RunFile      = results.RunFile
	ResultsFile  = results.ResultsFile
	ManifestFile = results.ManifestFile
)

// Run executes the pipeline on one task.
func Run(ctx context.Context, task *ir.Task, cfg Config, opt Options) (*Outcome, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	start := time.Now()
	m := results.NewManifest(opt.Command)
	m.Task = results.TaskInfo{Name: task.Name, Layout: string(task.Layout), Split: task.Split, Source: task.Dir}
	m.Config = cfg.describe()
	if commit := HubCommit(task.Dir); commit != "" {
		m.Task.Revision = commit // what a branch such as "main" resolved to
	}
	in := stageInput{task: task, queries: task.Queries}
	inputs := existing(task.Files)
	var gens []expand.Generation
	if cfg.GAR.Method != "" && cfg.Generate == nil {
		var files []string
		var err error
		if gens, files, err = loadGenerations(task, cfg.GAR, strings.ReplaceAll(cfg.GARDir, "{task}", task.Name)); err != nil {
			return nil, err
		}
		inputs = append(inputs, files...)
	}
	for _, r := range cfg.Retrievers() {
		files, err := r.inputs(&in)
		if err != nil {
			return nil, err
		}
		inputs = append(inputs, files...)
	}
	if err := m.AddInputs(inputs...); err != nil {
		return nil, err
	}
	if len(m.Inputs) == 0 {
		// An embedded task has no files to checksum; its content stands in,
		// so a binary with other demo data does not reuse old outputs.
		m.Inputs = append(m.Inputs, contentDigest(task))
		m.Task.Source = "embedded:" + task.Name
	}
	fp := fingerprint(m)
	m.Config["fingerprint"] = fp
	if opt.Out != "" && !opt.Overwrite {
		if out, ok := previous(opt.Out, fp); ok {
			logf(opt.Log, "%s: outputs in %s are up to date (same data and settings); --overwrite to redo", task.Name, opt.Out)
			return out, nil
		}
	}

	if cfg.Generate != nil {
		var err error
		if gens, err = generateStage(ctx, task, *cfg.Generate, opt, m); err != nil {
			return nil, err
		}
	}
	if gens != nil {
		if err := in.apply(gens, m); err != nil {
			return nil, err
		}
	}
	run, err := runStages(ctx, in, cfg, opt, m)
	if err != nil {
		return nil, err
	}
	var ev *measure.R2MEDResult
	if err := m.Time("evaluate", func() error {
		var err error
		ev, err = measure.EvaluateR2MED(task.Qrels, run)
		return err
	}); err != nil {
		return nil, err
	}
	m.Counts["documents"] = len(task.Corpus)
	m.Counts["queries"] = len(task.Queries)
	m.Counts["queries_evaluated"] = ev.NumQueries
	m.Counts["qrels"] = task.Qrels.Len()
	res := &results.R2MED{
		DatasetName:    task.Name,
		EvaluationTime: results.EvaluationTime(time.Since(start).Seconds()),
		Test:           ev.Scores,
	}
	switch {
	case cfg.GAR.Method != "":
		// R2MED's GAR result files name the parts instead of a model.
		res.Extra = map[string]any{"gar_method": cfg.GAR.Method, "gar_llm": cfg.GAR.LLM, "retriever_name": cfg.RetrieverName()}
		if cfg.Retriever == "bm25" && len(cfg.Also) == 0 {
			res.Test = results.UpperKeys(res.Test) // as R2MED's GAR+BM25 files write them
		}
	case cfg.Rerank.Kind != "":
		// R2MED's reranker files name the reranker, the retriever and the depth.
		res.Extra = map[string]any{"reranker_name": cfg.rerankerName(), "retriever_name": cfg.RetrieverName(), "topk": cfg.Rerank.depth()}
		res.Test = results.UpperKeys(res.Test)
	default:
		res.ModelName = cfg.ModelName()
	}
	if cfg.GAR.Method != "" && cfg.Rerank.Kind != "" {
		res.Extra["reranker_name"] = cfg.rerankerName()
		res.Extra["topk"] = cfg.Rerank.depth()
	}
	out := &Outcome{Run: run, Eval: ev, Result: res, Manifest: m}
	if opt.Out == "" {
		return out, nil
	}
	if err := m.Time("write", func() error {
		if err := trec.WriteRunFile(filepath.Join(opt.Out, RunFile), run, cfg.ModelName()); err != nil {
			return err
		}
		return res.WriteFile(filepath.Join(opt.Out, ResultsFile))
	}); err != nil {
		return nil, err
	}
	m.Outputs = []string{RunFile, ResultsFile, ManifestFile}
	// The manifest goes last: its presence marks a finished run.
	if err := m.WriteFile(filepath.Join(opt.Out, ManifestFile)); err != nil {
		return nil, err
	}
	return out, nil
}

// apply puts the generations into the stage input: the BM25 texts and the
// aligned generations dense retrievers average with. Generations for
// queries the task does not evaluate are set aside (R2MED scores judged
// queries only) and counted.
func (in *stageInput) apply(all []expand.Generation, m *results.Manifest) error {
	task := in.task
	gens, unjudged := judgedOnly(task, all)
	if unjudged > task.UnjudgedQueries {
		// More than the query file's unjudged queries: some generations
		// belong to no query of this task, and Apply names them.
		gens = all
	}
	m.Counts["generations_for_unjudged_queries"] = unjudged
	var err error
	if in.gens, err = expand.Align(task.Queries, gens); err != nil {
		return err
	}
	in.queries, err = expand.Apply(task.Queries, gens)
	return err
}

// CandidatesPrefix starts a retriever name that reads a published
// candidate list instead of retrieving: "candidates:bm25" is a Nano set's
// bm25 config.
const CandidatesPrefix = "candidates:"

// candidateRun turns a published candidate list into a run, keeping its
// order (dataset.Candidates.Run) and the first topK of each list.
func candidateRun(c *dataset.Candidates, topK int) ir.Run {
	run := c.Run()
	for qid, hits := range run {
		if len(hits) > topK {
			run[qid] = hits[:topK]
		}
	}
	return run
}

// fingerprint hashes what determines a run's numbers: settings and input
// checksums, not times or paths.
func fingerprint(m *results.Manifest) string {
	h := sha256.New()
	enc := json.NewEncoder(h)
	enc.Encode(m.Config)
	enc.Encode(m.Task.Name)
	enc.Encode(m.Task.Split)
	for _, in := range m.Inputs {
		enc.Encode(in.SHA256)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// previous returns the outcome already on disk when its manifest carries the
// same fingerprint and every output is present.
func previous(dir, fp string) (*Outcome, bool) {
	m, err := results.ReadManifest(filepath.Join(dir, ManifestFile))
	if err != nil || m.Config["fingerprint"] != fp {
		return nil, false
	}
	res, err := results.ReadR2MED(filepath.Join(dir, ResultsFile))
	if err != nil {
		return nil, false
	}
	run, err := trec.ReadRunFile(filepath.Join(dir, RunFile))
	if err != nil {
		return nil, false
	}
	return &Outcome{Run: run, Result: res, Manifest: m, Skipped: true}, true
}

// loadGenerations reads published generations: from a Hub repository
// through its configs (the method's config, the LLM's split), from a
// directory by R2MED's path, <method>/<llm>/query_with_hydoc.jsonl.
func loadGenerations(task *ir.Task, src expand.Source, dir string) ([]expand.Generation, []string, error) {
	if dir == "" && task.Layout == ir.LayoutR2MEDHub {
		hg, err := dataset.ReadHubGenerations(task.Dir, src.Method, src.LLM)
		if err != nil {
			return nil, nil, err
		}
		gens := make([]expand.Generation, len(hg.Rows))
		for i, r := range hg.Rows {
			gens[i] = expand.Generation{ID: r.ID, Text: r.Text, HyDoc: r.HyDoc, Method: src.Method, LLM: src.LLM}
		}
		return gens, hg.Files, nil
	}
	if dir == "" {
		dir = task.Dir
	}
	gens, err := expand.LoadDir(dir, src.Method, src.LLM)
	if err != nil {
		return nil, nil, err
	}
	var files []string
	if p, ok := fileio.Exists(filepath.Join(dir, src.Method, src.LLM, expand.FileName)); ok {
		files = append(files, p)
	}
	return gens, files, nil
}

// judgedOnly sets aside generations for queries the task does not evaluate
// (R2MED scores only judged queries) and says how many it set aside.
func judgedOnly(task *ir.Task, gens []expand.Generation) ([]expand.Generation, int) {
	known := make(map[string]bool, len(task.Queries))
	for _, q := range task.Queries {
		known[q.ID] = true
	}
	kept := gens[:0:0]
	for _, g := range gens {
		if known[g.ID] {
			kept = append(kept, g)
		}
	}
	return kept, len(gens) - len(kept)
}

// contentDigest checksums a task's documents, queries and judgments.
func contentDigest(t *ir.Task) results.FileDigest {
	h := sha256.New()
	var n int64
	put := func(parts ...string) {
		for _, p := range parts {
			k, _ := io.WriteString(h, p)
			h.Write([]byte{0})
			n += int64(k) + 1
		}
	}
	for _, d := range t.Corpus {
		put(d.ID, d.Text)
	}
	for _, q := range t.Queries {
		put(q.ID, q.Text)
	}
	for _, qid := range trec.QueryIDs(t.Qrels) {
		for _, did := range trec.QueryIDs(t.Qrels[qid]) {
			put(qid, did, strconv.Itoa(t.Qrels[qid][did]))
		}
	}
	return results.FileDigest{Path: "embedded:" + t.Name, Bytes: n, SHA256: hex.EncodeToString(h.Sum(nil))}
}

// existing keeps the files that are on disk (an embedded task has none).
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
