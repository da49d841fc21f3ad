package main

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/term"

	"github.com/spf13/cobra"

	"github.com/r2med/r2med/leaderboard"
	"github.com/r2med/r2med/pipeline"
	"github.com/r2med/r2med/report"
	"github.com/r2med/r2med/significance"
	"github.com/r2med/r2med/tasks"
)

func init() { register(newLeaderboardCmd) }

func newLeaderboardCmd() *cobra.Command {
	var dir, metric, family, kind, rank, format, baseline, mtebDir string
	var systems, taskList []string
	var top int
	var noPublished, noExternal, noPin bool
	cmd := &cobra.Command{
		Use:   "leaderboard",
		Short: "Our runs next to R2MED's 71 published systems and later papers' results: per-task scores, the 8-task average, or Borda ranks",
		Long: `leaderboard puts the runs found under a results directory (every directory
holding results.json and manifest.json, at any depth; default ` + leaderboard.DefaultDir + `/) next to
R2MED's published results (71 systems × 8 tasks, "published") and the results
later papers printed for R2MED ("external": ReasonEmbed's Table 3, InsertRank's
average, and the two rows of R2MED's own website its files lack; nDCG@10
only, with their source). A printed row that repeats a published system's
numbers is that system, one row with both sources. Our runs come first
(--no-pin ranks them in place); our runs on other data (the demo task,
NFCorpus) are columns after the average.

Systems are named by their stages: bm25, rrf(bm25,bge), hyde/gpt4 → bm25,
bm25 → insertrank:deepseek-r1@20, run:TAG for a run file; two of ours that
share a name and differ in settings get a short hash of their settings
(bm25 #3f2a), and a line under the table names the settings that set
them apart. The full settings are in the csv and json formats' settings.

The average is R2MED's: the unweighted mean of the unrounded per-task values
×100, two decimals, shown and ranked only for systems with every task ("—
(k/8)" and no rank otherwise). Ranks follow the unrounded average, as R2MED's
do: rows that print the same average and rank apart get a line giving it to
four decimals. Best in column is by the value as printed: values that print
alike are marked alike. A metric a system's files lack (dense retrievers have no MRR)
is missing, not 0. An external system shows and ranks by its printed
average where that is its printed values' mean, rounded (the paper's figure,
from unrounded values: ReasonEmbed's BM25 15.13, whose values' mean is
15.125), and shows both where it is not. --rank borda ranks as HAKARI-Bench
does.

--mteb DIR adds the results of R2MED's tasks in a folder of MTEB results
(MTEB's cache, ~/.cache/mteb, whose results/ and remote/results/ are both
read as MTEB reads them; or a clone of embeddings-benchmark/results) as
external rows, one per model and revision, each cell's source the file it
comes from: MTEB's ndcg/map/recall/precision_at_k under R2MED's keys, its
mrr_at_100 as MRR (R2MED's MRR reads a run's top 100, MTEB's MRR@100 the
top 100 of its 1000), scores as fractions (a file of percentages is
refused, naming it).

--baseline SYSTEM marks each per-task cell of our systems that differs from
the baseline's significantly: two-sided paired randomization test on every
judged query of the task, Holm–Bonferroni over the system's tasks; † p < 0.05,
‡ p < 0.01 (as ranx prints them). It needs the runs' task data (loaded as
their manifests say).

--systems, --top and --tasks choose what a paper or a terminal shows:
--systems names rows (IDs or names), --top N keeps the N best ranked (with
our runs, unless --no-pin), ranks staying those of the whole board; --tasks
chooses the task columns, the average then over them.

--format table fits the terminal: $COLUMNS, else the terminal's width, else
80 columns (source abbreviated, system names wrapped onto more lines, the
averages' notes under the table). --format latex is one table float scaled
to the line width (\resizebox) up to 30 rows, a longtable on landscape
pages beyond; its first line names the packages it needs.

Metrics are R2MED's result-file values: ndcg@K, recall@K, map@K, p@K (K in
1, 3, 5, 10, 25, 50, 100, 1000) and mrr, in any spelling (ndcg@10,
ndcg_cut.10, ndcg_cut_10, NDCG@10, ndcg_at_10); another name exits with
status 2.`,
		Example: `  r2med leaderboard                                  # nDCG@10, ours, published and external
  r2med leaderboard --no-published --results out
  r2med leaderboard --metric recall@100 --family evidence --kind gar
  r2med leaderboard --baseline bm25 --format latex > table.tex
  r2med leaderboard --rank borda --format markdown
  r2med leaderboard --top 10 --format latex > top10.tex
  r2med leaderboard --systems bm25,nv,"hyde/gpt4 → nv" --tasks Biology,MedQA-Diag
  r2med leaderboard --mteb ../results --no-published      # MTEB's results of R2MED's tasks`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opt := leaderboard.Options{PinOurs: !noPin, Systems: systems, Top: top, Tasks: taskList}
			var err error
			if opt.Metric, err = leaderboard.ParseMetric(metric); err != nil {
				return usage(err)
			}
			if opt.Family, err = leaderboard.ParseFamily(family); err != nil {
				return usage(err)
			}
			if kind != "" {
				if opt.Kind, err = leaderboard.ParseKind(kind); err != nil {
					return usage(err)
				}
			}
			if opt.Ranking, err = leaderboard.ParseRanking(rank); err != nil {
				return usage(err)
			}
			f, err := leaderboard.ParseFormat(format)
			if err != nil {
				return usage(err)
			}
			if err := checkResultsDir(cmd, dir); err != nil {
				return err
			}
			d, err := report.Load(dir, leaderboard.Sources{Published: !noPublished, External: !noExternal, MTEB: mtebDir}, pipeline.LoadRunTask)
			if err != nil {
				return err
			}
			b := d.Board
			t, err := b.Table(opt)
			if err != nil {
				hints := map[leaderboard.Origin]string{}
				if noPublished {
					hints[leaderboard.OriginPublished] = "drop --no-published"
				}
				if noExternal {
					hints[leaderboard.OriginExternal] = "drop --no-external"
				}
				return systemHint(usageIf(err), systems, hints)
			}
			if len(t.Rows) == 0 {
				return fmt.Errorf("no systems to show: %s", emptyBoard(b.Systems, opt, dir, noPublished, noExternal))
			}
			w := cmd.ErrOrStderr()
			if baseline != "" {
				base, err := d.OursSystem(baseline)
				if err != nil {
					return usage(fmt.Errorf("--baseline: %w", err))
				}
				untested, err := t.MarkAgainst(base, d.PerQueryFunc(cmd.Context(), t.Metric.Key), significance.Options{})
				if err != nil {
					return err
				}
				for _, name := range slices.Sorted(maps.Keys(untested)) {
					fmt.Fprintf(w, "note: %s not tested against %s: %s\n", name, base.Name, untested[name])
				}
			}
			if err := t.WriteWith(cmd.OutOrStdout(), f, leaderboard.WriteOptions{Width: terminalWidth(cmd.OutOrStdout())}); err != nil {
				return err
			}
			// What is not on the board is said, on stderr so that
			// --format csv/json output stays clean.
			if b.Listing != nil && len(b.Listing.Unfinished) > 0 {
				fmt.Fprintf(w, "note: %d unfinished run(s) left out (no manifest.json); r2med results lists them\n", len(b.Listing.Unfinished))
			}
			if len(b.Superseded) > 0 {
				fmt.Fprintf(w, "note: %d older run(s) of a system and task replaced by newer ones, e.g. %s\n", len(b.Superseded), b.Superseded[0].Dir)
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&dir, "results", resultsDir(), "results directory searched for runs (results.json + manifest.json), at any depth; default $R2MED_RESULTS, else out")
	fl.StringVar(&metric, "metric", "ndcg@10", "metric: ndcg@K, recall@K, map@K, p@K (K in 1, 3, 5, 10, 25, 50, 100, 1000) or mrr")
	fl.StringVar(&family, "family", "all", "task family: qa (Q&A reference), evidence (clinical evidence), case (clinical case) or all; the average is over its tasks")
	fl.StringVar(&kind, "kind", "", "only systems of this kind: base, gar, reranker or fusion")
	fl.BoolVar(&noPublished, "no-published", false, "leave out R2MED's published systems")
	fl.BoolVar(&noExternal, "no-external", false, "leave out results printed by later papers")
	fl.BoolVar(&noPin, "no-pin", false, "rank our runs in place instead of listing them first")
	fl.StringVar(&rank, "rank", "avg", "ranking: avg (the task average, as R2MED) or borda (HAKARI-Bench's Borda count)")
	fl.StringVar(&baseline, "baseline", "", "mark per-task cells that differ significantly from this system of ours (ID or name): † p<0.05, ‡ p<0.01, Holm over tasks")
	fl.StringVar(&mtebDir, "mteb", "", "a folder of MTEB results (results/<org__model>/<revision>/<Task>.json): its R2MED tasks join as external rows, with the model, revision and file they come from")
	fl.StringVar(&format, "format", "table", "output: table, markdown, csv, json or latex")
	fl.StringSliceVar(&systems, "systems", nil, "only these systems (IDs or names, comma-separated), with --top's")
	fl.IntVar(&top, "top", 0, "only the N best-ranked systems (ties at the cut kept) and our runs (all of them unless --no-pin)")
	fl.StringSliceVar(&taskList, "tasks", nil, "only these task columns (names, aliases or short names, comma-separated); the average is over them")
	return cmd
}

// terminalWidth is the width a table written to w keeps to: $COLUMNS,
// else the terminal's when w is one, else (w piped to head or less) the
// terminal's that stderr is, else 80.
func terminalWidth(w io.Writer) int {
	if n, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	for _, out := range []io.Writer{w, os.Stderr} {
		if f, ok := out.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
			if n, _, err := term.GetSize(int(f.Fd())); err == nil && n > 0 {
				return n
			}
		}
	}
	return 80
}

// usageIf marks a leaderboard usage error (an unknown name) as one for
// the exit status.
func usageIf(err error) error {
	var ue *leaderboard.UsageError
	if errors.As(err, &ue) {
		return usage(err)
	}
	return err
}

// systemHint adds to an unknown-system error the flag that would bring
// the system in: hints maps the origin of a system left out (published,
// external) to what to say ("drop --no-published", "add --published").
func systemHint(err error, names []string, hints map[leaderboard.Origin]string) error {
	if err == nil || len(names) == 0 {
		return err
	}
	if !strings.Contains(err.Error(), "system") {
		return err
	}
	for _, n := range names {
		n = strings.TrimSpace(n)
		if h, ok := hints[leaderboard.KnownOrigin(n)]; ok && h != "" {
			what := "one of R2MED's published systems"
			if leaderboard.KnownOrigin(n) == leaderboard.OriginExternal {
				what = "a later paper's system"
			}
			return fmt.Errorf("%w; %q is %s: %s", err, n, what, h)
		}
	}
	return err
}

// checkResultsDir refuses a --results directory that was named but does
// not exist (a typo would otherwise show an empty board); the default may
// be missing.
func checkResultsDir(cmd *cobra.Command, dir string) error {
	if !cmd.Flags().Changed("results") {
		return nil
	}
	st, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("--results %s: %w", dir, err)
	}
	if !st.IsDir() {
		return fmt.Errorf("--results %s is not a directory", dir)
	}
	return nil
}

// usageError is an unknown name on the command line (a metric, a kind, a
// format): the command exits 2, as for a bad flag.
type usageError struct{ error }

func (e usageError) Unwrap() error { return e.error }

func usage(err error) error { return usageError{err} }

// exitCode is 2 for a usage error (an unknown name, flag or command, a
// wrong number of arguments), else 1.
func exitCode(err error) int {
	var ue usageError
	var te *tasks.UnknownError
	var le *leaderboard.UsageError
	if errors.As(err, &ue) || errors.As(err, &te) || errors.As(err, &le) || strings.HasPrefix(err.Error(), "unknown command ") {
		return 2
	}
	return 1
}

// emptyBoard says why a board shows no row: no systems at all (no runs,
// and the other sources turned off, named by their flags), else
// leaderboard.WhyEmpty.
func emptyBoard(systems []leaderboard.System, opt leaderboard.Options, dir string, noPublished, noExternal bool) string {
	if len(systems) == 0 {
		var off []string
		if noPublished {
			off = append(off, "--no-published")
		}
		if noExternal {
			off = append(off, "--no-external")
		}
		s := "no runs under " + dir
		if len(off) > 0 {
			s += ", and " + strings.Join(off, " and ") + " given"
		}
		return s
	}
	return leaderboard.WhyEmpty(systems, opt)
}
