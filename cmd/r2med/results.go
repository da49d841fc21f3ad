package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/r2med/r2med/leaderboard"
	"github.com/r2med/r2med/mteb"
	"github.com/r2med/r2med/pipeline"
	"github.com/r2med/r2med/results"
	"github.com/r2med/r2med/tasks"
	"github.com/r2med/r2med/trec"
)

func init() { register(newResultsCmd) }

func newResultsCmd() *cobra.Command {
	var dir, format string
	cmd := &cobra.Command{
		Use:   "results",
		Short: "List the runs under a results directory: task, system, nDCG@10, Recall@100, MRR, time, path",
		Long: `results lists every run directory under the results directory (default
` + leaderboard.DefaultDir + `/), at any depth: a directory holding results.json, finished when
its manifest.json is there too. Unfinished runs are listed at the end.
The table and markdown print the metrics ×100 with two decimals, as the
leaderboard does; csv and json carry the stored values (0–1, as
results.json has them), the judged queries the means are over (queries)
and how many got no result and count 0 (queries_without_results). A line
under the table names a run that left queries without results, or that
ranks fewer than 100 documents per query (its Recall@100 counts those).
results export writes the runs in MTEB's results layout.`,
		Example: `  r2med results
  r2med results --results out/bm25 --format csv
  r2med results export --format mteb --out mteb-results`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f, err := leaderboard.ParseFormat(format)
			if err != nil {
				return err
			}
			if err := checkResultsDir(cmd, dir); err != nil {
				return err
			}
			l, err := results.Scan(dir)
			if err != nil {
				return err
			}
			return leaderboard.WriteRuns(cmd.OutOrStdout(), l, f, terminalWidth(cmd.OutOrStdout()))
		},
	}
	cmd.Flags().StringVar(&dir, "results", resultsDir(), "results directory searched for runs, at any depth; default $R2MED_RESULTS, else out")
	cmd.Flags().StringVar(&format, "format", "table", "output: table, markdown, csv or json")
	cmd.AddCommand(newResultsExportCmd())
	return cmd
}

func newResultsExportCmd() *cobra.Command {
	var dir, format, out, model, revision string
	var systems []string
	cmd := &cobra.Command{
		Use:   "export --format mteb --out DIR",
		Short: "Write our runs in MTEB's results layout (results/<org__model>/<revision>/<Task>.json and model_meta.json)",
		Long: `export writes the runs under the results directory in MTEB's results layout,
which MTEB's loader (mteb.ResultCache, TaskResult.from_disk) and the
embeddings-benchmark/results repository read: one model folder per system
(runs grouped as r2med leaderboard groups them), DIR/results/<org__model>/
<revision>/<TaskName>.json per R2MED task, under the names MTEB registers
(R2MEDBiologyRetrieval, …), and model_meta.json.

Each file holds the dataset revision the run read, the scores MTEB's
evaluator writes, computed from the run's run.trec with the judgments of
the data it read, as MTEB computes them: ndcg_at_k, map_at_k, recall_at_k
and precision_at_k (trec_eval's measures, pytrec_eval's in MTEB, means to
five decimals) and mrr_at_k (MTEB's MRR over each query's top k, ties by
document id, to six decimals) at MTEB's k (1, 3, 5, 10, 20, 100, 1000),
checked against results.json where both have a number; main_score
(nDCG@10), hf_subset "default", languages ["eng-Latn"], the run's time,
and mteb_version null: MTEB did not compute them. Where the data is not at
hand (not cached, offline) results.json's numbers are written, said on
stderr: R2MED's keys (k 1, 10, 25, 50, 100), and its MRR (five decimals)
as mrr_at_k only at the run's depth. MTEB retrieves 1000 documents per
query: a metric at a k deeper than the run ranks is left out and said on
stderr, and a run ranking fewer than 10 per query is left out. So is a run
that excluded documents (--exclude), which MTEB's tasks do not. A GAR,
reranked or fused system is said to be more than one model's ranking. A
model folder already holding another R2MED task's file (an earlier
export's, which MTEB would read as this one's) is refused, as are two
systems whose names make one MTEB model name; nothing is written then.

A system is named r2med/<system> at revision ` + mteb.NoRevision + `
unless --model and --revision name it (for one system) as MTEB names
models: the checkpoint's Hub id and commit. Runs on other data than
R2MED's eight tasks (the demo task, NFCorpus, NanoR2MED; BRIGHT, whose
tasks MTEB evaluates on its own copy, ` + mteb.BrightRepo + `) and runs not
read from the Hub (no dataset revision) are left out, each said on stderr.`,
		Example: `  r2med results export --format mteb --out mteb-results
  r2med results export --format mteb --system bge --model BAAI/bge-large-en-v1.5 \
      --revision d4aa6901d3a41ba39fb536a557fa166f842b0e09 --out mteb-results`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if strings.ToLower(format) != "mteb" {
				return usage(fmt.Errorf("unknown --format %q; export writes mteb (MTEB's results layout)", format))
			}
			if out == "" {
				return usage(fmt.Errorf("give --out DIR, the folder to write MTEB's results/ layout in"))
			}
			if err := checkResultsDir(cmd, dir); err != nil {
				return err
			}
			l, err := results.Scan(dir)
			if err != nil {
				return err
			}
			all, _ := leaderboard.Ours(l)
			picked, err := pickSystems(all, systems)
			if err != nil {
				return err
			}
			if (model != "" || cmd.Flags().Changed("revision")) && len(picked) != 1 {
				return usage(fmt.Errorf("--model and --revision name one system, and %d are exported; pick one with --system", len(picked)))
			}
			runs := map[string]results.Run{}
			for _, r := range l.Runs {
				runs[r.Dir] = r
			}
			if err := mtebNamesApart(picked, runs); err != nil {
				return err
			}
			w, n := cmd.ErrOrStderr(), 0
			for _, s := range picked {
				var trs []*mteb.TaskResult
				for _, task := range slices.Sorted(maps.Keys(s.Tasks)) {
					r := runs[s.Tasks[task].Source]
					t, ok := r.Task()
					if !ok || r.Suite() != tasks.R2MED {
						fmt.Fprintf(w, "note: %s on %s left out: %s\n", s.Name, task, mteb.LeftOut(r.Manifest.Task.Name))
						continue
					}
					depth, err := runDepth(r)
					if err != nil {
						return err
					}
					rs := mteb.RunScores{Task: t, Revision: r.Manifest.Task.Revision, Scores: s.Tasks[task].Metrics,
						Depth: depth, Documents: r.Manifest.Counts["documents"], Excluded: r.Manifest.Counts["excluded_pairs"], Seconds: r.Seconds()}
					rs.Unanswered, rs.Judged = r.Manifest.Unanswered()
					if rs.Excluded == 0 {
						if rs.Evaluated, err = evaluateForMTEB(cmd, r); err != nil {
							fmt.Fprintf(w, "note: %s on %s: %v; its scores are results.json's: R2MED's keys, and mrr_at_k only at the run's depth, to five decimals\n", s.Name, task, err)
						}
					}
					tr, notes, err := mteb.FromRun(rs)
					if err != nil {
						fmt.Fprintf(w, "note: %s left out: %v\n", r.Dir, err)
						continue
					}
					for _, n := range notes {
						fmt.Fprintf(w, "note: %s on %s: %s\n", s.Name, task, n)
					}
					trs = append(trs, tr)
				}
				if len(trs) == 0 {
					continue
				}
				meta := mteb.ModelMeta{Name: mteb.LocalName(s.Name), Revision: mteb.NoRevision}
				if model != "" {
					meta.Name = model
				}
				if revision != "" {
					meta.Revision = revision
				}
				if what := pipelineKind(s.Kind); what != "" {
					fmt.Fprintf(w, "note: %s is exported as MTEB's model %s: its scores are %s, not one model's ranking\n", s.Name, meta.Name, what)
				}
				files, err := mteb.WriteModel(out, meta, trs)
				if err != nil {
					return err
				}
				for _, f := range files {
					fmt.Fprintln(cmd.OutOrStdout(), f)
				}
				n++
			}
			if n == 0 {
				return fmt.Errorf("no run under %s is on an R2MED task read from the Hub: nothing to export", dir)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&dir, "results", resultsDir(), "results directory searched for runs, at any depth; default $R2MED_RESULTS, else out")
	f.StringVar(&format, "format", "", "the layout: mteb")
	f.StringVar(&out, "out", "", "folder to write in (its results/ subfolder holds the model folders)")
	f.StringSliceVar(&systems, "system", nil, "export only these systems (names or IDs as r2med leaderboard shows them; comma-separated or repeated)")
	f.StringVar(&model, "model", "", "the model's name in MTEB (org/name, e.g. the checkpoint's Hub id); default r2med/<system>")
	f.StringVar(&revision, "revision", "", "the model's revision in MTEB (the checkpoint's commit); default "+mteb.NoRevision)
	return cmd
}

// mtebNamesApart refuses two systems with runs on R2MED's tasks whose
// names make one MTEB model name (LocalName: "a/b" and "a b" are both
// r2med/a-b): the second would write over the first's files.
func mtebNamesApart(systems []leaderboard.System, runs map[string]results.Run) error {
	by := map[string]string{}
	for _, s := range systems {
		if !slices.ContainsFunc(slices.Collect(maps.Values(s.Tasks)), func(t leaderboard.TaskResult) bool {
			r, ok := runs[t.Source]
			return ok && r.Suite() == tasks.R2MED
		}) {
			continue
		}
		name := mteb.LocalName(s.Name)
		if other, ok := by[name]; ok {
			a, b := min(other, s.Name), max(other, s.Name)
			return usage(fmt.Errorf("systems %q and %q would both be MTEB's model %s (its name is the system's as a slug): export one at a time with --system and --model, or name the runs apart (--name)", a, b, name))
		}
		by[name] = s.Name
	}
	return nil
}

// pipelineKind says in words what makes a system of kind k more than one
// model's ranking; "" for a base retriever.
func pipelineKind(k leaderboard.Kind) string {
	switch k {
	case leaderboard.GAR:
		return "a retriever's on queries an LLM expanded"
	case leaderboard.Reranker:
		return "a reranker's over a retriever's top documents"
	case leaderboard.Fusion:
		return "several retrievers' fused"
	}
	return ""
}

// pickSystems returns the systems named (by ID or name), all when none is.
func pickSystems(all []leaderboard.System, names []string) ([]leaderboard.System, error) {
	names = splitList(names)
	if len(names) == 0 {
		return all, nil
	}
	var out []leaderboard.System
	for _, n := range names {
		i := slices.IndexFunc(all, func(s leaderboard.System) bool { return s.ID == n || s.Name == n })
		if i < 0 {
			var have []string
			for _, s := range all {
				have = append(have, s.Name)
			}
			return nil, usage(fmt.Errorf("no system %q among the runs (%s)", n, strings.Join(have, ", ")))
		}
		out = append(out, all[i])
	}
	return out, nil
}

// evaluateForMTEB scores the run's file as MTEB's evaluator does
// (mteb.Evaluate), with the judgments of the data the run read; an error
// says why it could not (the data is not at hand, the file is not the
// one the run wrote).
func evaluateForMTEB(cmd *cobra.Command, r results.Run) (map[string]float64, error) {
	if r.RunPath() == "" {
		return nil, fmt.Errorf("%s has no %s", r.Dir, results.RunFile)
	}
	if err := r.CheckRunFile(); err != nil {
		return nil, err
	}
	t, err := pipeline.LoadRunTask(cmd.Context(), r)
	if err != nil {
		return nil, fmt.Errorf("its data is not at hand to evaluate %s as MTEB does (%v)", results.RunFile, err)
	}
	run, err := trec.ReadRunFile(r.RunPath())
	if err != nil {
		return nil, err
	}
	return mteb.Evaluate(t.Qrels, run)
}

// runDepth is the most documents the run ranked for a query: the
// manifest's count, else the run file's.
func runDepth(r results.Run) (int, error) {
	if d, ok := r.Manifest.Counts[results.RunDepth]; ok {
		return d, nil
	}
	p := r.RunPath()
	if p == "" {
		return 0, nil
	}
	run, err := trec.ReadRunFile(p)
	if err != nil {
		return 0, err
	}
	depth := 0
	for _, hits := range run {
		depth = max(depth, len(hits))
	}
	return depth, nil
}
