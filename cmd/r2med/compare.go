package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/r2med/r2med/dataset"
	"github.com/r2med/r2med/measure"
	"github.com/r2med/r2med/pipeline"
	"github.com/r2med/r2med/results"
	"github.com/r2med/r2med/significance"
	"github.com/r2med/r2med/tasks"
	"github.com/r2med/r2med/trec"
)

func init() { register(newCompareCmd) }

func newCompareCmd() *cobra.Command {
	var d dataFlags
	var qrelsPath, metric, format string
	var opt significance.Options
	cmd := &cobra.Command{
		Use:   "compare BASELINE SYSTEM [SYSTEM...]",
		Short: "Paired significance tests of systems against a baseline, per query, with breakdowns",
		Long: `compare tests each SYSTEM against BASELINE on per-query values of one
measure (default ndcg_cut.10, trec_eval's, as R2MED reports it): paired
randomization test (exact over all sign flips up to 20 differing queries,
else --permutations random ones), paired t-test, both two-sided; Cohen's d
(paired); a percentile bootstrap interval of the mean difference; wins,
losses and ties; Holm–Bonferroni over the systems; the queries that gain and
lose most. A query a system lacks counts 0 for it.

Each argument is a run file (TREC format), a run directory (run.trec and
manifest.json, as r2med run writes), or a results directory holding run
directories for several tasks (a sweep: r2med run --task all --out DIR).
With results directories, runs are paired by task, the test is over all
queries of the tasks they share, and the report breaks it down by task and
by task family.

Judgments come from --qrels FILE (one task), from --task/--data, or else
from the data each run's manifest names. Queries with R2MED's body_system
field (from --task/--data or the manifests' data) add a breakdown by it.`,
		Example: `  r2med compare out/bm25/Biology out/hyde/Biology
  r2med compare bm25.trec hyde.trec --qrels qrels.txt --metric recall.100
  r2med compare out/bm25 out/hyde-gpt4 out/query2doc-gpt4 --format markdown
  r2med compare a.trec b.trec --task MedQA-Diag --permutations 100000 --seed 7`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 2 {
				return fmt.Errorf("compare needs a baseline and at least one system to compare with it (got %d argument(s)); e.g. r2med compare out/bm25/Biology out/hyde/Biology", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := significance.ParseFormat(format)
			if err != nil {
				return err
			}
			ms, err := measure.Parse(metric)
			if err != nil {
				return err
			}
			if len(ms) != 1 || ms[0].Family.Hakari() {
				return fmt.Errorf("--metric %q: name one trec_eval measure, such as ndcg_cut.10, recall.100, map_cut.100, P.10 or recip_rank", metric)
			}
			var systems []cmpSystem
			for _, a := range args {
				s, err := loadCmpSystem(a)
				if err != nil {
					return err
				}
				systems = append(systems, s)
			}
			data, err := compareData(cmd, &d, qrelsPath, systems)
			if err != nil {
				return err
			}
			multi := false
			for _, s := range systems {
				multi = multi || len(s.runs) > 1 || s.multi
			}
			in, groupings, err := perQuery(systems, data, ms[0], multi)
			if err != nil {
				return err
			}
			rep, err := significance.Compare(ms[0].String(), in, groupings, opt)
			if err != nil {
				return err
			}
			return rep.Write(cmd.OutOrStdout(), f)
		},
	}
	addDataFlags(cmd, &d)
	fl := cmd.Flags()
	fl.StringVar(&qrelsPath, "qrels", "", "TREC qrels file (one task); default: --task/--data, else the data in each run's manifest")
	fl.StringVar(&metric, "metric", "ndcg_cut.10", "trec_eval measure compared per query: ndcg_cut.10, recall.100, map_cut.100, P.10, recip_rank, …")
	fl.IntVar(&opt.Permutations, "permutations", 10000, "random sign flips of the randomization test when more than 20 queries differ")
	fl.IntVar(&opt.Resamples, "bootstrap", 10000, "bootstrap resamples of the confidence interval")
	fl.Float64Var(&opt.Level, "level", 0.95, "confidence level of the bootstrap interval")
	fl.Uint64Var(&opt.Seed, "seed", 1, "seed of the permutations and the bootstrap")
	fl.StringVar(&format, "format", "text", "output: text, markdown or json")
	return cmd
}

// cmpSystem is one compare argument: its runs by task.
type cmpSystem struct {
	name  string
	runs  map[string]cmpRun // by task name ("" for a bare run file)
	multi bool              // a results directory, even if it holds one task
}

type cmpRun struct {
	path     string
	manifest *results.Manifest
}

func loadCmpSystem(arg string) (cmpSystem, error) {
	s := cmpSystem{name: filepath.Clean(arg), runs: map[string]cmpRun{}}
	st, err := os.Stat(arg)
	if err != nil {
		return s, err
	}
	if !st.IsDir() {
		s.runs[""] = cmpRun{path: arg}
		return s, nil
	}
	if _, err := os.Stat(filepath.Join(arg, results.RunFile)); err == nil {
		r := cmpRun{path: filepath.Join(arg, results.RunFile)}
		if m, err := results.ReadManifest(filepath.Join(arg, results.ManifestFile)); err == nil {
			r.manifest = m
		}
		task := ""
		if r.manifest != nil {
			task = canonicalTask(r.manifest.Task.Name)
		}
		s.runs[task] = r
		return s, nil
	}
	l, err := results.Scan(arg)
	if err != nil {
		return s, err
	}
	s.multi = true
	for _, run := range l.Runs {
		task, _ := run.Task()
		p := run.RunPath()
		if p == "" {
			return s, fmt.Errorf("%s: no %s; compare needs the ranked lists", run.Dir, results.RunFile)
		}
		if prev, dup := s.runs[task]; dup {
			return s, fmt.Errorf("%s holds two runs of %s (%s and %s); name the run directories instead", arg, task, filepath.Dir(prev.path), run.Dir)
		}
		s.runs[task] = cmpRun{path: p, manifest: run.Manifest}
	}
	if len(s.runs) == 0 {
		return s, fmt.Errorf("%s: no run file, run directory or finished runs in it", arg)
	}
	return s, nil
}

func canonicalTask(name string) string {
	if t, err := tasks.Lookup(name); err == nil {
		return t.Name
	}
	return name
}

// compareData loads the judgments and queries of every task the systems
// share, by task name.
func compareData(cmd *cobra.Command, d *dataFlags, qrelsPath string, systems []cmpSystem) (map[string]*dataset.Task, error) {
	shared := map[string]bool{}
	for t := range systems[0].runs {
		shared[t] = true
	}
	for _, s := range systems[1:] {
		for t := range shared {
			if _, ok := s.runs[t]; !ok {
				delete(shared, t)
			}
		}
	}
	out := map[string]*dataset.Task{}
	if qrelsPath != "" {
		if d.task != "" || d.data != "" {
			return nil, fmt.Errorf("give --qrels or --task/--data, not both")
		}
		q, err := trec.ReadQrelsFile(qrelsPath)
		if err != nil {
			return nil, err
		}
		qt := &dataset.Task{Name: "qrels", Qrels: q}
		for _, s := range systems {
			if len(s.runs) > 1 {
				return nil, fmt.Errorf("--qrels holds one task's judgments but %s has runs on %d tasks; use --task all, or leave the judgments to the run manifests", s.name, len(s.runs))
			}
			for t := range s.runs {
				out[t] = qt
			}
		}
		return out, nil
	}
	if d.task != "" || d.data != "" {
		srcs, err := d.sources()
		if err != nil {
			return nil, err
		}
		for _, src := range srcs {
			t, err := src.Load(cmd.Context())
			if err != nil {
				return nil, err
			}
			out[canonicalTask(t.Name)] = t
		}
		if len(srcs) == 1 {
			for _, t := range out {
				out[""] = t // bare run files are on the named task
			}
		}
		return out, nil
	}
	for task := range shared {
		var m *results.Manifest
		for _, s := range systems {
			if r := s.runs[task]; r.manifest != nil {
				m = r.manifest
				break
			}
		}
		if m == nil {
			return nil, fmt.Errorf("no judgments for the runs: give --qrels FILE, --task NAME or --data DIR")
		}
		// The same source report and serve load a run's data from.
		t, err := pipeline.SourceOf(results.Run{Manifest: m}).Load(cmd.Context())
		if err != nil {
			return nil, fmt.Errorf("loading %s as the run manifest names it (give --qrels, --task or --data instead): %w", m.Task.Name, err)
		}
		out[task] = t
	}
	return out, nil
}

// perQuery evaluates every run and returns the systems' per-query values,
// keyed "task/qid" when several tasks are pooled, with the breakdowns the
// data allows.
func perQuery(systems []cmpSystem, data map[string]*dataset.Task, m measure.Measure, multi bool) ([]significance.System, []significance.Grouping, error) {
	body := significance.Grouping{Name: "body_system", Of: map[string]string{}}
	family := significance.Grouping{Name: "task family", Of: map[string]string{}}
	task := significance.Grouping{Name: "task", Of: map[string]string{}}
	var out []significance.System
	for _, s := range systems {
		vals := map[string]float64{}
		for name, r := range s.runs {
			if multi && !everyone(systems, name) {
				continue // compared only on the tasks every system has
			}
			t := data[name]
			if t == nil {
				if !multi && len(data) == 1 {
					for _, only := range data {
						t = only
					}
				}
			}
			if t == nil {
				continue // a task not every system has
			}
			run, err := trec.ReadRunFile(r.path)
			if err != nil {
				return nil, nil, err
			}
			res, err := measure.Evaluate(t.Qrels, run, []measure.Measure{m}, measure.Options{})
			if err != nil {
				return nil, nil, fmt.Errorf("%s: %w", r.path, err)
			}
			label := canonicalTask(t.Name)
			if name != "" {
				label = name
			}
			fam := ""
			if rt, err := tasks.Lookup(label); err == nil {
				fam = rt.Family.Title()
			}
			for _, q := range res.Queries {
				key := q.ID
				if multi {
					key = label + "/" + q.ID
				}
				vals[key] = q.Values[0]
				task.Of[key], family.Of[key] = label, fam
			}
			for _, q := range t.Queries {
				key := q.ID
				if multi {
					key = label + "/" + q.ID
				}
				if raw, ok := q.Extra["body_system"]; ok {
					var v string
					if json.Unmarshal(raw, &v) != nil {
						v = strings.Trim(string(raw), `"`)
					}
					body.Of[key] = v
				}
			}
		}
		if len(vals) == 0 {
			return nil, nil, fmt.Errorf("%s: no run on a task every system has", s.name)
		}
		out = append(out, significance.System{Name: s.name, Values: vals})
	}
	var gs []significance.Grouping
	if len(body.Of) > 0 {
		gs = append(gs, body)
	}
	if multi {
		gs = append(gs, task, family)
	}
	return out, gs, nil
}

func everyone(systems []cmpSystem, task string) bool {
	for _, s := range systems {
		if _, ok := s.runs[task]; !ok {
			return false
		}
	}
	return true
}
