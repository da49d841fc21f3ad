package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/r2med/r2med/dataset"
	"github.com/r2med/r2med/internal/errtext"
	"github.com/r2med/r2med/internal/fileio"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/measure"
	"github.com/r2med/r2med/trec"
)

// Measures printed when -m is not given: R2MED's reported set.
const defaultTrecMeasures = "ndcg_cut.1,10,25,50,100 map_cut.1,10,25,50,100 recall.1,10,25,50,100 P.1,10,25,50,100 recip_rank"

// HAKARI-Bench's viewer metrics.
const defaultHakariMeasures = "ndcg@10 ndcg@100 recall@10 recall@100 hit@1 hit@10 hit@100 mrr@10 map@100"

func newEvalCmd() *cobra.Command {
	var perQuery, complete, judgedOnly bool
	var level int
	var specs []string
	var profile, exclude string
	cmd := &cobra.Command{
		Use:   "eval [-q] [-c] [-l LEVEL] [-m MEASURE]... QRELS RUN",
		Short: "Evaluate a TREC run against qrels, printing exactly what trec_eval 9.0.8 prints",
		Long: `eval scores a TREC run (qid Q0 docid rank score tag) against TREC qrels
(qid iter docid grade) with trec_eval 9.0.8's semantics, the version inside
pytrec_eval: scores read as float32, ties broken by docid descending, the
rank column ignored. Output is byte-identical to trec_eval's; notes on
stderr say where a choice differs (a family named by two -m is evaluated
at every cutoff or parameter named, trec_eval keeps the first list) and
which queries one side lacks (run queries without judgments are not
evaluated).

QRELS may also be a task's own judgments: R2MED's qrels.jsonl
({"q_id","p_id","score"} per line) or BEIR's qrels TSV (a header, then
query-id corpus-id score), told apart by the first line; gzip is read too.

Measures: every measure of trec_eval 9.0.8's all_trec set, printed in its
table order, as trec_eval computes and prints them:
  runid num_q num_ret num_rel num_rel_ret map gm_map Rprec bpref recip_rank
  infAP gm_bpref binG set_P set_relative_P set_recall set_map
  num_nonrel_judged_ret;
  with cutoffs P recall ndcg_cut map_cut relative_P success (e.g. -m P.5,10);
  with recall levels iprec_at_recall (by default 0.0 to 1.0 by tenths,
  printed iprec_at_recall_0.00 … _1.00; -m iprec_at_recall.0.25,0.5) and
  multiples of R Rprec_mult (0.2 to 2.0 by fifths; -m Rprec_mult.0.5,1),
  with at most two decimals;
  with parameters, printed after the name as given: utility.a,b,c,d
  (default 1,-1,0,0: a per relevant retrieved, b per non-relevant
  retrieved, c per relevant missed, d per non-relevant missed, with no
  collection size, trec_eval's -N), set_F.b (default 1), 11pt_avg.r,...
  (the recall levels, default 0.0 to 1.0 by tenths), relstring.n (the
  first n grades as text, default 10; printed per query only), and the
  gains of ndcg, ndcg_rel, Rndcg and G (-m ndcg.1=0,2=1: grade=gain,
  the grade itself where not given).
Sets: official (trec_eval's default: runid num_q num_ret num_rel
num_rel_ret map gm_map Rprec bpref recip_rank iprec_at_recall P), set
(runid num_q num_ret num_rel num_rel_ret utility set_P set_recall
set_relative_P set_map set_F) and all_trec (all of the above at their
defaults); runid, num_q, gm_map and gm_bpref are printed in the summary
only, relstring per query only, as trec_eval prints them. trec_eval's
preference and judge-group sets (prefs, all_prefs, qrels_jg) read files
r2med does not and are refused, and so is -J (judged documents only).
Without -m it prints R2MED's set:
  ` + defaultTrecMeasures + `
Every spelling of a measure names the profile's definition: under the default
--profile trec, ndcg@10, ndcg_cut.10, ndcg_cut_10, NDCG@10 and ndcg_at_10 are
all trec_eval's ndcg_cut.10 (printed ndcg_cut_10), recall@k, map@k, p@k and
hit@k are recall.k, map_cut.k, P.k and success.k, mrr is recip_rank. With
--profile hakari the same names are HAKARI-Bench's measures (list order is
the ranking, binary gain, map over min(R,k), mrr cut at k, mean over all run
queries), by default:
  ` + defaultHakariMeasures + `
A name only the other profile has (mrr@10 under trec, ndcg_cut.10 under
hakari) exits with status 2, saying which profile has it.

--exclude FILE (QUERY-ID DOC-ID per line, as BRIGHT's excluded_ids) removes
each excluded pair from the run and the qrels before anything is computed,
as BRIGHT's run.py does: the numbers are trec_eval's on the filtered files.
What it removed is said on stderr.`,
		Example: `  r2med eval -q -m ndcg_cut.10 -m recall.100 qrels.txt run.trec
  r2med eval -m ndcg@10 qrels.txt run.trec                   # trec_eval's ndcg_cut.10
  r2med eval -c -m map -m P.5,10 qrels.txt run.trec
  r2med eval -q -m official qrels.txt run.trec              # trec_eval's default set
  r2med eval -q -m all_trec qrels.txt run.trec              # every trec_eval measure
  r2med eval -m ndcg.1=0,2=1 -m utility.2,-1,0,0 qrels.txt run.trec
  r2med eval --profile hakari -m hit@10 -m mrr@10 qrels.txt run.trec`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 2 {
				return fmt.Errorf("eval needs two files, QRELS then RUN (got %d argument(s)); e.g. r2med eval -m ndcg_cut.10 qrels.txt run.trec", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if judgedOnly {
				return usage(errors.New("-J (trec_eval's judged documents only: unjudged ones dropped from the ranking before evaluation) is not supported; r2med evaluates every retrieved document, an unjudged one as not relevant, as trec_eval does without -J"))
			}
			p, err := measure.ParseProfile(profile)
			if err != nil {
				return usage(err)
			}
			spec := strings.Join(specs, " ")
			if spec == "" {
				spec = defaultTrecMeasures
				if p == measure.HakariProfile {
					spec = defaultHakariMeasures
				}
			}
			ms, err := measure.ParseIn(spec, p)
			if err != nil {
				return usage(err)
			}
			for _, f := range measure.NamedTwice(spec, p) {
				var named []measure.Measure
				for _, m := range ms {
					if m.Family == f {
						named = append(named, m)
					}
				}
				slices.SortFunc(named, func(a, b measure.Measure) int { return a.Cutoff - b.Cutoff })
				var list, names []string
				for _, m := range slices.Compact(named) {
					list = append(list, m.Param())
					names = append(names, m.Name())
				}
				if f.HasParams() {
					// trec_eval computes one variant of such a family.
					fmt.Fprintf(cmd.ErrOrStderr(), "r2med eval: note: %s is named by more than one -m; trec_eval computes the first parameters given only (its defaults where no -m gives any), r2med prints each (%s)\n",
						f, strings.Join(names, ", "))
					continue
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "r2med eval: note: %s is named by more than one -m; trec_eval keeps the first list given only (its defaults where no -m gives one), r2med evaluates every cutoff named (give them in one -m, %s.%s, for output trec_eval prints too)\n",
					f, f, strings.Join(list, ","))
			}
			// measure.Options reads a level of 0 as its default, 1: -l 0
			// (trec_eval's "grade 0 is relevant") must not become that.
			if level < 1 {
				return usage(fmt.Errorf("-l %d: the relevance level must be 1 or more; below 1, judged non-relevant documents (grade 0) would count as relevant", level))
			}
			qrels, err := dataset.ReadQrelsFile(args[0])
			if err != nil {
				return err
			}
			run, err := trec.ReadRunFile(args[1])
			if err != nil {
				return err
			}
			if exclude != "" {
				ex, err := readExclusions(exclude)
				if err != nil {
					return err
				}
				var hits, judged int
				run, hits = ex.FilterRun(run)
				qrels, judged = ex.FilterQrels(qrels)
				fmt.Fprintf(cmd.ErrOrStderr(), "%s: %d excluded %s removed from the run, %d from the qrels\n", exclude,
					hits, errtext.Plural(hits, "hit", "hits"), judged)
			}
			opt := measure.Options{RelevanceLevel: level, Complete: complete}
			if slices.ContainsFunc(ms, func(m measure.Measure) bool { return m.Family == measure.RunID }) {
				if opt.RunID, err = readRunID(args[1]); err != nil {
					return err
				}
			}
			res, err := measure.Evaluate(qrels, run, ms, opt)
			if errors.Is(err, measure.ErrNoQueries) {
				return fmt.Errorf("run %s, qrels %s: %w", args[1], args[0], err)
			}
			if err != nil {
				return err
			}
			var unjudged []string
			for qid := range run {
				if _, ok := qrels[qid]; !ok {
					unjudged = append(unjudged, qid)
				}
			}
			if len(unjudged) > 0 {
				slices.Sort(unjudged)
				how := "are not evaluated (trec_eval's rule); check the query ids if they should be"
				if p == measure.HakariProfile {
					how = "score 0 in the means (HAKARI-Bench's rule: every query of the run counts)"
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "r2med eval: note: %d %s of the run (%s) %s no judgments in the qrels and %s\n",
					len(unjudged), errtext.Plural(len(unjudged), "query", "queries"), errtext.QuoteList(unjudged, 5),
					errtext.Plural(len(unjudged), "has", "have"), how)
			}
			if !complete {
				// trec_eval's default, kept; said when -c would average
				// otherwise.
				missing := 0
				for qid := range qrels {
					if len(run[qid]) == 0 {
						missing++
					}
				}
				if missing > 0 {
					fmt.Fprintf(cmd.ErrOrStderr(), "r2med eval: note: means are over the %d queries evaluated, the run's (trec_eval's default); %d more judged %s no results: -c averages over all %d, %s counting 0, as R2MED's result files and r2med run do\n",
						res.NumQueries, missing, errtext.Plural(missing, "query has", "queries have"), res.NumQueries+missing, errtext.Plural(missing, "it", "those"))
				}
			}
			return measure.WriteTrecEval(cmd.OutOrStdout(), res, perQuery)
		},
	}
	f := cmd.Flags()
	f.BoolVarP(&perQuery, "query", "q", false, "print every query's values before the summary")
	f.BoolVarP(&complete, "complete", "c", false, "average over all queries in the qrels; missing ones count 0 (R2MED's rule; without it, the run's queries, trec_eval's default)")
	f.IntVarP(&level, "level", "l", 1, "lowest grade that counts as relevant (1 or more)")
	f.StringArrayVarP(&specs, "measure", "m", nil, "measure or set to compute (repeatable): map, P.5,10, ndcg_cut.10, ndcg@10 (the --profile's definition), ndcg.1=0,2=1, utility.2,-1,0,0, official, all_trec")
	f.StringVar(&profile, "profile", "trec", "which definitions measure names mean: trec (trec_eval 9.0.8) or hakari (HAKARI-Bench metrics.py)")
	f.StringVar(&exclude, "exclude", "", "exclusions file (QUERY-ID DOC-ID per line): pairs removed from the run and the qrels first")
	f.BoolVarP(&judgedOnly, "judged-only", "J", false, "trec_eval's -J, refused: r2med does not drop unjudged documents")
	_ = f.MarkHidden("judged-only")
	return cmd
}

// readRunID reads the run id trec_eval prints for runid: the run file's
// last tag.
func readRunID(path string) (string, error) {
	rc, err := fileio.Open(path)
	if err != nil {
		return "", err
	}
	defer rc.Close()
	return trec.ReadRunLastTag(rc, path)
}

// readExclusions reads an exclusions file into the pairs it excludes.
func readExclusions(path string) (ir.Exclusions, error) {
	list, err := dataset.ReadExclusionsFile(path)
	if err != nil {
		return nil, err
	}
	ex := ir.Exclusions{}
	for _, e := range list {
		for _, d := range e.DocIDs {
			ex.Add(e.QueryID, d)
		}
	}
	return ex, nil
}
