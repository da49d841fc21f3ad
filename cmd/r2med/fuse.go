package main

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/spf13/cobra"

	"github.com/r2med/r2med/fusion"
	"github.com/r2med/r2med/internal/errtext"
	"github.com/r2med/r2med/internal/fileio"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/plan"
	"github.com/r2med/r2med/retrieve"
	"github.com/r2med/r2med/trec"
)

func init() { register(newFuseCmd) }

func newFuseCmd() *cobra.Command {
	var method, norm, weights, ties, out, tag string
	var k float64
	var depth int
	cmd := &cobra.Command{
		Use:   "fuse RUN RUN... --out RUN",
		Short: "Fuse TREC runs by reciprocal rank (RRF) or weighted score sum (CombSUM)",
		Long: `fuse merges two or more TREC runs over the same queries into one.

  rrf      score(d) = Σ 1/(k + rank) over the runs that retrieved d, ranks
           1-based as trec_eval ranks each run (by score, equal scores by
           doc id descending; the rank column and line order are ignored).
           k=60 is the RRF paper's and Pyserini's; HAKARI-Bench's hybrid
           lists use 100.
  combsum  score(d) = Σ weight × normalized score, each run normalized per
           query: minmax (s−min)/(max−min), zscore (s−mean)/σ, or none.
           A run that did not retrieve d adds 0.

Ties: best-rank (HAKARI-Bench: score, then the best rank d has in any run,
then doc id) or docid (Pyserini: score, then doc id). Equal fused scores are
written one float32 step apart in that order, so trec_eval and every other
evaluator rank the output as fused. Each run is fused whole, by the fusion
stage of r2med run's plans, and the fused run is cut to --depth. Runs are
read with file:line errors and the output is written atomically.`,
		Example: `  r2med fuse bm25.trec dense.trec --method rrf --rrf-k 60 --out hybrid.trec
  r2med fuse bm25.trec dense.trec --method rrf --rrf-k 100 --depth 100 --out hybrid.trec   # HAKARI's reranking_hybrid
  r2med fuse bm25.trec dense.trec --method combsum --norm zscore --weights 0.3,0.7 --out hybrid.trec`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 2 {
				return fmt.Errorf("fuse needs at least two runs (got %d); e.g. r2med fuse bm25.trec dense.trec --out hybrid.trec", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return fmt.Errorf("--out RUN is required: the fused run is written there")
			}
			spec := fusion.Spec{Method: method, K: k, Norm: norm}
			switch ties {
			case "best-rank":
				spec.Ties = fusion.BestRank
			case "docid":
				spec.Ties = fusion.DocID
			default:
				return fmt.Errorf("unknown --ties %q (best-rank or docid)", ties)
			}
			if _, at := fileio.PythonSpace(tag); at >= 0 || strings.ContainsFunc(tag, unicode.IsSpace) {
				return fmt.Errorf("--tag %q contains white space; a run's tag is one column: join its words with _ or -", tag)
			}
			if depth < 0 {
				return fmt.Errorf("--depth must be ≥ 0 (0 keeps every document), got %d", depth)
			}
			if _, err := fusion.ParseNorm(norm); err != nil {
				return fmt.Errorf("unknown --norm %q (minmax, zscore or none)", norm)
			}
			if weights != "" {
				var err error
				if spec.Weights, err = parseWeights(weights, len(args)); err != nil {
					return err
				}
			}
			switch method {
			case "rrf":
				if spec.Weights != nil {
					return fmt.Errorf("--weights applies to --method combsum; RRF uses ranks only")
				}
				if cmd.Flags().Changed("norm") {
					return fmt.Errorf("--norm applies to --method combsum; RRF uses ranks only")
				}
				// A fusion's k of 0 means the default, 60.
				if !(k > 0) || math.IsInf(k, 0) {
					return fmt.Errorf("--rrf-k must be a finite number > 0, got %v", k)
				}
			case "combsum":
				if cmd.Flags().Changed("rrf-k") {
					return fmt.Errorf("--rrf-k applies to --method rrf")
				}
			default:
				return fmt.Errorf("unknown --method %q (rrf or combsum)", method)
			}
			// The runs are the plan's retrievers, each named by the system
			// it holds; every document of each is fused (the fusion's depth
			// is their whole length), the fused run cut to --depth.
			var ps plan.Spec
			var lists []retrieve.Retriever
			var runs []ir.Run
			per := map[string]int{}
			for _, path := range args {
				run, err := trec.ReadRunFile(path)
				if err != nil {
					return err
				}
				if err := retrieve.NonEmpty(path, run); err != nil {
					return err
				}
				name, err := retrieve.RunSystem(path)
				if err != nil {
					return err
				}
				ps.Retrievers = append(ps.Retrievers, plan.Retriever{Spec: retrieve.RunFile{Path: path}, Name: name})
				lists = append(lists, retrieve.Lists(run))
				for qid, hits := range run {
					per[qid] += len(hits)
				}
				runs = append(runs, run)
			}
			// A run that ranks fewer queries than the others (cut short,
			// or made for a subset) leaves those queries to the others:
			// said, not silent.
			for i, run := range runs {
				var missing []string
				for qid := range per {
					if _, ok := run[qid]; !ok {
						missing = append(missing, qid)
					}
				}
				if len(missing) > 0 {
					slices.Sort(missing)
					fmt.Fprintf(cmd.ErrOrStderr(), "warning: %s ranks nothing for %d of the %d queries the runs rank (%s): those are fused from the other runs alone\n",
						args[i], len(missing), len(per), errtext.QuoteList(missing, 5))
				}
			}
			whole := 1
			for _, n := range per {
				whole = max(whole, n)
			}
			spec.Depth, ps.Fuse, ps.K = whole, spec, whole
			if depth > 0 {
				ps.K = depth
			}
			p, err := plan.New(ps)
			if err != nil {
				return err
			}
			var queries []retrieve.Query
			for _, qid := range slices.Sorted(maps.Keys(per)) {
				queries = append(queries, retrieve.Query{ID: qid})
			}
			res, err := p.Execute(cmd.Context(), plan.Input{Queries: queries}, plan.Env{Retrievers: lists})
			if err != nil {
				return err
			}
			if tag == "" {
				tag = ps.Tag()
			}
			if err := trec.WriteRunFile(out, res.Run, tag); err != nil {
				return err
			}
			n := 0
			for _, hits := range res.Run {
				n += len(hits)
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "fused %d runs: %d queries, %d documents → %s\n", len(args), len(res.Run), n, out)
			return err
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&method, "method", "rrf", "rrf (reciprocal rank fusion) or combsum (weighted sum of normalized scores)")
	fl.Float64Var(&k, "rrf-k", 60, "RRF constant k (60: the paper and Pyserini; 100: HAKARI-Bench)")
	fl.StringVar(&norm, "norm", "minmax", "combsum score normalization per query and run: minmax, zscore or none")
	fl.StringVar(&weights, "weights", "", "combsum weights, one per run in argument order (e.g. 0.7,0.3); default 1 each")
	fl.IntVar(&depth, "depth", 0, "documents kept per query after fusion; 0 keeps all")
	fl.StringVar(&ties, "ties", "best-rank", "order of equal scores: best-rank (HAKARI-Bench) or docid (Pyserini)")
	fl.StringVar(&out, "out", "", "fused run file to write (required)")
	fl.StringVar(&tag, "tag", "", `run tag in the last column (default: the system's name, "rrf(bm25,bge)", each input named by its own tag)`)
	return cmd
}

// parseWeights reads n comma-separated finite weights ≥ 0.
func parseWeights(s string, n int) ([]float64, error) {
	parts := strings.Split(s, ",")
	if len(parts) != n {
		return nil, fmt.Errorf("--weights has %d values for %d runs; give one weight per run, in argument order", len(parts), n)
	}
	ws := make([]float64, n)
	for i, p := range parts {
		w, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || w < 0 || math.IsInf(w, 0) || math.IsNaN(w) {
			return nil, fmt.Errorf("--weights: %q is not a finite number ≥ 0", strings.TrimSpace(p))
		}
		ws[i] = w
	}
	return ws, nil
}
