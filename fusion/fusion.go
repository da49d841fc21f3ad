// Package fusion merges several ranked runs over the same queries into one.
//
// Two methods are provided:
//
//   - Reciprocal rank fusion (RRF, Cormack et al. 2009): a document scores
//     Σ 1/(k + rank) over the input lists that contain it, with 1-based ranks
//     taken from each list's own order (scores are not looked at). k=60 is the
//     paper's and Pyserini's; HAKARI-Bench's reranking_hybrid subsets use 100.
//   - Weighted score fusion (CombSUM, Fox & Shaw 1993): each list's scores are
//     normalized per query (min-max or z-score), multiplied by the run's weight
//     and summed.
//
// # Conventions
//
// A document missing from a list contributes nothing to its fused score: 0
// after normalization for CombSUM. That is ranx's convention (its wsum and
// comb_sum default a run's score to 0.0; its rrf sums over the runs holding
// the document) and Pyserini's (reciprocal_rank_fusion adds a term only for
// the runs that rank the document), so fused runs match theirs. It also
// means the bottom document of a min-max-normalized list scores the same as
// one the list never retrieved.
//
// Min-max normalization divides by max(max−min, 1e-9) and z-score by
// max(σ, 1e-9) with σ the population standard deviation, as ranx does, so a
// list whose scores are all equal normalizes to all zeros instead of
// dividing by zero.
//
// A document listed twice in one input list counts once, at its first (best)
// position; trec.ReadRun rejects such files anyway.
//
// # Ties
//
// Fused lists are ordered by score descending; Ties chooses what decides
// between equal scores. The default, BestRank, is HAKARI-Bench's order for
// reranking_hybrid: (−score, best source rank, doc id ascending), where the
// best source rank is the smallest 1-based rank the document has in any input
// list. DocID is Pyserini's (−score, doc id ascending).
//
// Scores are summed in input-run order, the order HAKARI and ranx add them in,
// so exact float ties come out the same as theirs. RRF and CombSUM return
// those exact sums; the fused list is the ranking, so before it is written
// or evaluated its ties (and scores equal only in float32, which trec_eval
// ranks by) are stepped apart by ir.Rank with ir.TiesAsListed, as Spec.Fuse
// does. Otherwise trec_eval would order them by doc id instead of the tie
// order chosen here, and trec.WriteRun refuses such a run.
package fusion

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/trec"
)

// Ties decides the order of documents with equal fused scores.
type Ties uint8

const (
	// BestRank breaks ties by the best 1-based rank the document has in any
	// input list, then by doc id ascending (HAKARI-Bench).
	BestRank Ties = iota
	// DocID breaks ties by doc id ascending (Pyserini).
	DocID
)

// Norm is the per-query score normalization CombSUM applies to each input
// list before weighting.
type Norm uint8

const (
	// MinMax maps a list's scores to [0, 1]: (s−min)/max(max−min, 1e-9).
	MinMax Norm = iota
	// ZScore centres and scales a list's scores: (s−mean)/max(σ, 1e-9),
	// σ the population standard deviation.
	ZScore
	// Raw uses scores as they are, for runs already on one scale.
	Raw
)

// String names the normalization as ranx does.
func (n Norm) String() string {
	switch n {
	case MinMax:
		return "min-max"
	case ZScore:
		return "zmuv"
	case Raw:
		return "none"
	}
	return fmt.Sprintf("Norm(%d)", uint8(n))
}

// ParseNorm reads a normalization name, in any case: minmax (min-max),
// zscore (z-score, zmuv) or none (raw), the names ranx and the CLI use.
func ParseNorm(name string) (Norm, error) {
	switch strings.ToLower(name) {
	case "minmax", "min-max":
		return MinMax, nil
	case "zscore", "z-score", "zmuv":
		return ZScore, nil
	case "none", "raw":
		return Raw, nil
	}
	return 0, fmt.Errorf("unknown normalization %q (minmax, zscore or none)", name)
}

// Fuser fuses runs with a chosen tie order. Its zero value breaks ties the
// way HAKARI-Bench does; the package functions RRF and CombSUM use it.
type Fuser struct {
	Ties Ties
}

// RRF fuses runs by reciprocal rank with constant k, breaking ties HAKARI's
// way. depth > 0 keeps only the best depth documents per query.
func RRF(runs []ir.Run, k float64, depth int) ir.Run {
	return Fuser{}.RRF(runs, k, depth)
}

// CombSUM fuses runs by weighted sum of normalized scores, breaking ties
// HAKARI's way. A nil weights gives every run weight 1. depth > 0 keeps only
// the best depth documents per query.
func CombSUM(runs []ir.Run, weights []float64, norm Norm, depth int) ir.Run {
	return Fuser{}.CombSUM(runs, weights, norm, depth)
}

// RRF is the package function RRF with f's tie order. It panics if k is
// negative or not a number, since ranks near −k would divide by zero.
func (f Fuser) RRF(runs []ir.Run, k float64, depth int) ir.Run {
	if !(k >= 0) || math.IsInf(k, 0) {
		panic(fmt.Sprintf("fusion: RRF constant k must be a finite number ≥ 0, got %v", k))
	}
	return f.fuse(runs, depth, func(_ int, _ []ir.Hit, ranks []int, out []float64) {
		for i, rank := range ranks {
			out[i] = 1 / (k + float64(rank))
		}
	})
}

// CombSUM is the package function CombSUM with f's tie order. It panics if
// weights is non-nil and its length differs from the number of runs.
func (f Fuser) CombSUM(runs []ir.Run, weights []float64, norm Norm, depth int) ir.Run {
	if weights != nil && len(weights) != len(runs) {
		panic(fmt.Sprintf("fusion: %d weights for %d runs", len(weights), len(runs)))
	}
	if norm > Raw {
		panic(fmt.Sprintf("fusion: unknown normalization %v", norm))
	}
	return f.fuse(runs, depth, func(r int, hits []ir.Hit, _ []int, out []float64) {
		w := 1.0
		if weights != nil {
			w = weights[r]
		}
		normalize(hits, norm, out)
		for i := range out {
			out[i] *= w
		}
	})
}

// normalize writes the normalized score of each hit to out.
func normalize(hits []ir.Hit, norm Norm, out []float64) {
	if len(hits) == 0 {
		return
	}
	switch norm {
	case Raw:
		for i, h := range hits {
			out[i] = h.Score
		}
	case MinMax:
		lo, hi := hits[0].Score, hits[0].Score
		for _, h := range hits[1:] {
			lo, hi = min(lo, h.Score), max(hi, h.Score)
		}
		den := max(hi-lo, 1e-9)
		for i, h := range hits {
			out[i] = (h.Score - lo) / den
		}
	case ZScore:
		var sum float64
		for _, h := range hits {
			sum += h.Score
		}
		mean := sum / float64(len(hits))
		var ss float64
		for _, h := range hits {
			d := h.Score - mean
			ss += d * d
		}
		den := max(math.Sqrt(ss/float64(len(hits))), 1e-9)
		for i, h := range hits {
			out[i] = (h.Score - mean) / den
		}
	}
}

type fused struct {
	id    string
	score float64
	best  int // smallest 1-based rank in any input list
}

// fuse sums, per query and document, the contributions score assigns to
// each input list's hits (duplicates within a list already removed; ranks
// are their 1-based positions in the list as given), then sorts and cuts.
// Queries are those of any input run.
func (f Fuser) fuse(runs []ir.Run, depth int, score func(r int, hits []ir.Hit, ranks []int, out []float64)) ir.Run {
	if f.Ties > DocID {
		panic(fmt.Sprintf("fusion: unknown tie order %d", f.Ties))
	}
	qids := make(map[string]struct{})
	for _, run := range runs {
		for qid := range run {
			qids[qid] = struct{}{}
		}
	}
	out := make(ir.Run, len(qids))
	var (
		contrib []float64
		uniq    []ir.Hit
		ranks   []int
	)
	for _, qid := range trec.QueryIDs(qids) {
		at := make(map[string]int) // doc id → index in list
		var list []fused
		for r, run := range runs {
			hits := run[qid]
			uniq, ranks = dedupe(hits, uniq[:0], ranks[:0])
			contrib = slices.Grow(contrib[:0], len(uniq))[:len(uniq)]
			score(r, uniq, ranks, contrib)
			for i, h := range uniq {
				j, ok := at[h.DocID]
				if !ok {
					j = len(list)
					at[h.DocID] = j
					list = append(list, fused{id: h.DocID, best: ranks[i]})
				}
				list[j].score += contrib[i]
				list[j].best = min(list[j].best, ranks[i])
			}
		}
		f.sort(list)
		if depth > 0 && len(list) > depth {
			list = list[:depth]
		}
		hits := make([]ir.Hit, len(list))
		for i, d := range list {
			hits[i] = ir.Hit{DocID: d.id, Score: d.score}
		}
		out[qid] = hits
	}
	return out
}

// dedupe keeps each document's first occurrence, with its 1-based rank in
// the original list.
func dedupe(hits []ir.Hit, uniq []ir.Hit, ranks []int) ([]ir.Hit, []int) {
	var seen map[string]struct{}
	for i, h := range hits {
		if seen == nil {
			seen = make(map[string]struct{}, len(hits))
		}
		if _, dup := seen[h.DocID]; dup {
			continue
		}
		seen[h.DocID] = struct{}{}
		uniq = append(uniq, h)
		ranks = append(ranks, i+1)
	}
	return uniq, ranks
}

func (f Fuser) sort(list []fused) {
	slices.SortFunc(list, func(a, b fused) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		if f.Ties == BestRank {
			if c := cmp.Compare(a.best, b.best); c != 0 {
				return c
			}
		}
		return cmp.Compare(a.id, b.id)
	})
}
