package retrieve

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/r2med/r2med/internal/errtext"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/sysname"
	"github.com/r2med/r2med/trec"
)

// RunFile reads a TREC run file made elsewhere (Pyserini, another r2med
// run) as a retriever, to fuse or rerank it. "{task}" in Path is replaced
// by the task's name, so one pipeline serves every task of a sweep.
//
// Every query of the run must be a query of the task and every ranked
// document a document of its corpus: anything else means the run was made
// on other data. With Env.AllowMissingDocs those entries are dropped
// instead, counted in the manifest ("run_queries_not_in_task",
// "run_hits_not_in_corpus") and reported in one warning.
type RunFile struct {
	Path string
	// Tag is the tag the file's lines carry, when they carry one
	// throughout: the name of the system that made the run, which names
	// the retriever. Parsing reads it from a path without {task}, Resolve
	// from the task's file.
	Tag string
}

func init() {
	Register(Kind{
		Name:  "run",
		Usage: "run:PATH",
		Help:  "a TREC run file, {task} replaced by the task name",
		Parse: func(value *yaml.Node) (Spec, error) {
			p, err := argument(value, "run", "the path of a TREC run file (run: runs/{task}.trec)")
			r := RunFile{Path: p}
			if err == nil && !strings.Contains(p, "{task}") {
				// One file for every task: its tag names the retriever from
				// the start (the default output directory, a sweep's
				// names), as Resolve would.
				r.Tag, _ = trec.ReadRunTagFile(p)
			}
			return r, err
		},
	})
}

// Kind is "run".
func (r RunFile) Kind() string { return "run" }

// Name is "run:" and the run's own tag, or before Resolve has read one
// (or where the lines carry several) the stem of its file name:
// "run:bm25" (sysname.RunFile).
func (r RunFile) Name() string { return sysname.RunFile(r.Tag, r.Path) }

// Resolve reads the tag of the task's file, which names the retriever.
// A file that cannot be read is left to Inputs and New to report.
func (r RunFile) Resolve(_ context.Context, task *ir.Task) (Spec, error) {
	tag, err := trec.ReadRunTagFile(r.PathFor(task))
	if err == nil {
		r.Tag = tag
	}
	return r, nil
}

// RunSystem is the system the run file at path holds, by the tag its
// lines carry or its stem (sysname.RunSystem): how commands that rerank
// or fuse run files name their input.
func RunSystem(path string) (string, error) {
	tag, err := trec.ReadRunTagFile(path)
	if err != nil {
		return "", err
	}
	return sysname.RunSystem(tag, path), nil
}

// Validate checks that a path is given.
func (r RunFile) Validate() error {
	if r.Path == "" {
		return errors.New("run needs the path of a TREC run file (run:PATH)")
	}
	return nil
}

// Describe records the path as given; the file's checksum is an input.
func (r RunFile) Describe() map[string]any { return map[string]any{"retriever": "run:" + r.Path} }

// PathFor is the file read for task.
func (r RunFile) PathFor(task *ir.Task) string {
	return strings.ReplaceAll(r.Path, "{task}", task.Name)
}

// Inputs is the run file.
func (r RunFile) Inputs(task *ir.Task) ([]string, error) {
	p := r.PathFor(task)
	if _, err := os.Stat(p); err != nil {
		return nil, fmt.Errorf("retriever run:%s: %w", r.Path, err)
	}
	return []string{p}, nil
}

// New reads the run and checks it against the task.
func (r RunFile) New(_ context.Context, task *ir.Task, env Env) (Retriever, error) {
	p := r.PathFor(task)
	run, err := trec.ReadRunFile(p)
	if err != nil {
		return nil, err
	}
	run, err = CheckRun(p, run, task, env)
	if err != nil {
		return nil, err
	}
	return Lists(run), nil
}

// NonEmpty is an error naming name when run ranks nothing: a run file
// whose writer failed or was cut off before its first line. Fused, it
// would pass the other runs' ranking off as the fusion.
func NonEmpty(name string, run ir.Run) error {
	if len(run) > 0 {
		return nil
	}
	return fmt.Errorf("%s: the run is empty (no result lines); check the command that wrote it (did it fail, or was it cut off?) and write it again", name)
}

// maxQuoted bounds the ids an error quotes.
const maxQuoted = 5

// CheckRun checks that a run made elsewhere ranks the task's queries and
// the documents of its corpus; an empty run is an error (NonEmpty).
// Queries of the task's query file that this split does not judge
// (task.Unjudged: a BEIR run over every split's queries) are dropped,
// counted ("run_queries_unjudged") and said on env.Log, as trec_eval
// leaves them out. Without env.AllowMissingDocs any other query or
// document is an error naming them; with it they are dropped, counted
// ("run_queries_not_in_task", "run_hits_not_in_corpus") and reported on
// env.Log. name names the run in messages.
func CheckRun(name string, run ir.Run, task *ir.Task, env Env) (ir.Run, error) {
	if err := NonEmpty(name, run); err != nil {
		return nil, err
	}
	queries := make(map[string]bool, len(task.Queries))
	for _, q := range task.Queries {
		queries[q.ID] = true
	}
	run = dropUnjudged(name, run, task, env)
	docs := make(map[string]bool, len(task.Corpus))
	for _, d := range task.Corpus {
		docs[d.ID] = true
	}
	var strayQueries, strayDocs []string
	strayHits := 0
	seenDoc := map[string]bool{}
	for _, qid := range trec.QueryIDs(run) {
		if !queries[qid] {
			strayQueries = append(strayQueries, qid)
			continue
		}
		for _, h := range run[qid] {
			if !docs[h.DocID] {
				strayHits++
				if !seenDoc[h.DocID] {
					seenDoc[h.DocID] = true
					strayDocs = append(strayDocs, h.DocID)
				}
			}
		}
	}
	if len(strayQueries) == 0 && strayHits == 0 {
		return run, nil
	}
	slices.Sort(strayDocs)
	var parts []string
	if n := len(strayQueries); n > 0 {
		parts = append(parts, fmt.Sprintf("%d %s not in task %s (%s)", n, errtext.Plural(n, "query is", "queries are"), task.Name, errtext.QuoteList(strayQueries, maxQuoted)))
	}
	if n := len(strayDocs); n > 0 {
		parts = append(parts, fmt.Sprintf("%d ranked %s not in its corpus (%s)", n, errtext.Plural(n, "document is", "documents are"), errtext.QuoteList(strayDocs, maxQuoted)))
	}
	what := strings.Join(parts, " and ")
	if !env.AllowMissingDocs {
		return nil, fmt.Errorf("%s: %s; the run must come from the same task and corpus (--allow-missing-docs drops them with a warning)", name, what)
	}
	kept := make(ir.Run, len(run))
	for qid, hits := range run {
		if !queries[qid] {
			continue
		}
		list := make([]ir.Hit, 0, len(hits))
		for _, h := range hits {
			if docs[h.DocID] {
				list = append(list, h)
			}
		}
		kept[qid] = list
	}
	env.Count("run_queries_not_in_task", len(strayQueries))
	env.Count("run_hits_not_in_corpus", strayHits)
	env.Logf("%s: warning: %s; dropped %d %s and %d %s (--allow-missing-docs)", name, what,
		len(strayQueries), errtext.Plural(len(strayQueries), "query", "queries"), strayHits, errtext.Plural(strayHits, "ranked document", "ranked documents"))
	return kept, nil
}

// dropUnjudged leaves out of run the queries the task's query file holds
// but its qrels do not judge, saying how many; run is returned as is when
// it ranks none.
func dropUnjudged(name string, run ir.Run, task *ir.Task, env Env) ir.Run {
	var drop []string
	for _, qid := range task.Unjudged {
		if _, ok := run[qid]; ok {
			drop = append(drop, qid)
		}
	}
	if len(drop) == 0 {
		return run
	}
	kept := maps.Clone(run)
	for _, qid := range drop {
		delete(kept, qid)
	}
	slices.Sort(drop)
	env.Count("run_queries_unjudged", len(drop))
	split := ""
	if task.Split != "" {
		split = " " + task.Split
	}
	env.Logf("%s: %d ranked %s in %s's query file but not judged in its%s qrels (%s): left out, as trec_eval leaves them", name, len(drop),
		errtext.Plural(len(drop), "query is", "queries are"), task.Name, split, errtext.QuoteList(drop, maxQuoted))
	return kept
}
