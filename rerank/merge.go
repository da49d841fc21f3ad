package rerank

import (
	"context"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strings"

	"golang.org/x/sync/errgroup"
)

// KindDiver is the reranker kind of DIVER's merge of a pointwise and a
// listwise reranker (Merge).
const KindDiver = "diver"

// The parts of a Merge, as its traces name them (Trace.Part).
const (
	MergePointwise = "pointwise"
	MergeListwise  = "listwise"
	MergeTrace     = "merge"
)

// DefaultMergeWeight is DIVER's weight of the pointwise ranking; the
// listwise ranking weighs 1 − DefaultMergeWeight = 0.4.
const DefaultMergeWeight = 0.6

// The kinds a diver merge takes by default, and the kinds each side may
// be: a reranker that scores documents each on its own scale (pointwise,
// GroupRank's absolute scores) and one that orders them (listwise,
// GroupRank too, as DIVER merges its pointwise reranker with GroupRank).
var (
	DefaultMergePointwise = KindRank1
	DefaultMergeListwise  = KindReasonRank
	MergePointwiseKinds   = []string{"llm-pointwise", KindRank1, KindGroupRank}
	MergeListwiseKinds    = []string{"llm-listwise", KindInsertRank, KindReasonRank, KindGroupRank}
)

// Merge is the reranker of Long, Sun et al., "DIVER: A Multi-Stage
// Approach for Reasoning-intensive Information Retrieval" (arXiv
// 2508.07995, 2025): the same candidates are ranked by a pointwise and by
// a listwise reranker, and the two rankings are merged by the rule of
// DIVER's code (AQ-MedAI/Diver, Reranker/rerank_merge_point_and_list.py;
// the facts taken are in testdata/diver/facts.json): each document scores
// −ln(rank) in each ranking (rank from 1: the first scores 0), and the
// merged score is
//
//	Weight × −ln(pointwise rank) + (1 − Weight) × −ln(listwise rank)
//
// with Weight 0.6 by default (MergeRanks, which computes equal merged
// values as equal numbers). Only the ranks enter, so the two rerankers'
// scales do not matter. A ranking's ties (a pointwise judge's equal
// scores) are ranked in the order the candidates were passed, the
// first-stage order, and so are the merged scores' ties (Rerank's rule).
// The two rerankers run concurrently; their traces carry Part
// "pointwise" or "listwise", and a last trace (Part "merge") lists each
// document's two ranks and merged score.
//
// A Merge is a Lister: the listwise ranking, and so the merge, orders one
// call's documents only.
type Merge struct {
	// Point is the pointwise reranker, List the listwise one.
	Point, List Scorer
	// Weight of the pointwise ranking, in (0, 1) with at most three
	// decimals; 0 means DefaultMergeWeight.
	Weight float64
}

// MergedDoc is one document's account in a Merge's trace.
type MergedDoc struct {
	Pointwise int     `json:"pointwise_rank"`
	Listwise  int     `json:"listwise_rank"`
	Score     float64 `json:"score"`
}

// Listwise reports that the scores only order one call's documents.
func (m *Merge) Listwise() bool { return true }

// Stats sums the two rerankers' counts.
func (m *Merge) Stats() Stats {
	var s Stats
	for _, p := range []Scorer{m.Point, m.List} {
		if st, ok := p.(interface{ Stats() Stats }); ok {
			s = s.plus(st.Stats())
		}
	}
	return s
}

// Score merges the two rerankers' rankings of docs.
func (m *Merge) Score(ctx context.Context, query string, docs []string) ([]float64, error) {
	return m.ScoreCandidates(ctx, "", query, anonymous(docs))
}

// ScoreCandidates ranks the candidates with both rerankers at once and
// returns the merged scores.
func (m *Merge) ScoreCandidates(ctx context.Context, qid, query string, cands []Candidate) ([]float64, error) {
	if m.Point == nil || m.List == nil {
		return nil, fmt.Errorf("the diver merge needs a pointwise and a listwise reranker")
	}
	w := m.Weight
	if w == 0 {
		w = DefaultMergeWeight
	}
	if _, _, err := mergeFraction(w); err != nil {
		return nil, err
	}
	var point, list []float64
	g, gctx := errgroup.WithContext(ctx)
	for _, part := range []struct {
		name string
		s    Scorer
		into *[]float64
	}{{MergePointwise, m.Point, &point}, {MergeListwise, m.List, &list}} {
		g.Go(func() error {
			pctx := gctx
			if fn, ok := ctx.Value(traceKey{}).(func(Trace)); ok && fn != nil {
				pctx = WithTrace(gctx, func(t Trace) { t.Part = part.name; fn(t) })
			}
			var got []float64
			var err error
			if cs, ok := part.s.(CandidateScorer); ok {
				got, err = cs.ScoreCandidates(pctx, qid, query, cands)
			} else {
				got, err = part.s.Score(pctx, query, texts(cands))
			}
			if err != nil {
				return fmt.Errorf("%s: %w", part.name, err)
			}
			if len(got) != len(cands) {
				return fmt.Errorf("%s: %d scores for %d documents", part.name, len(got), len(cands))
			}
			*part.into = got
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	scores, pr, lr, err := MergeRanks(point, list, w)
	if err != nil {
		return nil, err
	}
	merged := make([]MergedDoc, len(cands))
	for i := range merged {
		merged[i] = MergedDoc{Pointwise: pr[i], Listwise: lr[i], Score: scores[i]}
	}
	idx := make([]int, len(cands))
	for i := range idx {
		idx[i] = i
	}
	emitTrace(ctx, Trace{QueryID: qid, Part: MergeTrace, Docs: candidateIDs(cands, idx), Merged: merged})
	return scores, nil
}

// MergeRanks is DIVER's merge of two scorings of the same documents:
// each scoring is turned into ranks from 1 (higher score first, equal
// scores in the order given), and document i scores
// weight × −ln(pointRank[i]) + (1 − weight) × −ln(listRank[i]).
//
// Different rank pairs often merge to the same value (with 0.6: ranks 1
// and 8 give what 4 and 1 give), and the two sums computed in floating
// point would then differ in their last digits, ordering such documents
// by rounding. So the score is computed exactly as the same number: with
// weight = p/q (at most three decimals), −ln(pointRank^p ×
// listRank^(q−p)) / q, the logarithm of one integer, equal for equal
// merged values; Rerank then keeps such ties in first-stage order.
func MergeRanks(point, list []float64, weight float64) (scores []float64, pointRank, listRank []int, err error) {
	if len(point) != len(list) {
		return nil, nil, nil, fmt.Errorf("merge: %d pointwise and %d listwise scores", len(point), len(list))
	}
	p, q, err := mergeFraction(weight)
	if err != nil {
		return nil, nil, nil, err
	}
	pointRank, listRank = ranksOf(point), ranksOf(list)
	scores = make([]float64, len(point))
	for i := range scores {
		scores[i] = mergedScore(pointRank[i], listRank[i], p, q)
	}
	return scores, pointRank, listRank, nil
}

// mergedScore is −ln(pointRank^p × listRank^(q−p)) / q.
func mergedScore(pointRank, listRank int, p, q int64) float64 {
	var a, b big.Int
	a.Exp(big.NewInt(int64(pointRank)), big.NewInt(p), nil)
	b.Exp(big.NewInt(int64(listRank)), big.NewInt(q-p), nil)
	return -bigLog(a.Mul(&a, &b)) / float64(q)
}

// mergeFraction is a merge weight as a reduced fraction p/q; it must lie
// strictly between 0 and 1 and have at most three decimals.
func mergeFraction(w float64) (p, q int64, err error) {
	if !(w > 0 && w < 1) {
		return 0, 0, fmt.Errorf("the diver merge's pointwise weight must lie between 0 and 1 (DIVER: 0.6), got %v", w)
	}
	m := math.Round(w * 1000)
	if math.Abs(w*1000-m) > 1e-6 {
		return 0, 0, fmt.Errorf("the diver merge's pointwise weight has at most three decimals (DIVER: 0.6), got %v", w)
	}
	p, q = int64(m), 1000
	g, r := q, p // Euclid: g becomes gcd(p, q)
	for r != 0 {
		g, r = r, g%r
	}
	return p / g, q / g, nil
}

// bigLog is the natural logarithm of a positive integer.
func bigLog(x *big.Int) float64 {
	if x.IsInt64() && x.Int64() <= 1<<53 {
		return math.Log(float64(x.Int64()))
	}
	var mant big.Float
	exp := new(big.Float).SetInt(x).MantExp(&mant) // x = mant × 2^exp, mant in [0.5, 1)
	m, _ := mant.Float64()
	return math.Log(m) + float64(exp)*math.Ln2
}

// ranksOf gives each score its rank from 1, higher first, ties in input
// order.
func ranksOf(scores []float64) []int {
	idx := make([]int, len(scores))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch {
		case scores[a] > scores[b]:
			return -1
		case scores[a] < scores[b]:
			return 1
		}
		return 0
	})
	ranks := make([]int, len(scores))
	for r, i := range idx {
		ranks[i] = r + 1
	}
	return ranks
}

// MergeSpec names the rerankers a diver merge runs and the pointwise
// one's weight; zero values are DIVER's defaults.
type MergeSpec struct {
	Pointwise string  // one of MergePointwiseKinds; "" means rank1
	Listwise  string  // one of MergeListwiseKinds; "" means reasonrank
	Weight    float64 // in (0, 1), three decimals at most; 0 means DefaultMergeWeight
}

// mergeParts are the specs of a diver merge's two rerankers (the merge's spec
// with another kind) and the pointwise weight, checked.
func (s Spec) mergeParts() (point, list Spec, weight float64, err error) {
	ms := s.Merge
	point, list = s, s
	point.Kind, list.Kind = strings.ToLower(ms.Pointwise), strings.ToLower(ms.Listwise)
	if point.Kind == "" {
		point.Kind = DefaultMergePointwise
	}
	if list.Kind == "" {
		list.Kind = DefaultMergeListwise
	}
	if !slices.Contains(MergePointwiseKinds, point.Kind) {
		return point, list, 0, fmt.Errorf("the diver merge's pointwise reranker is one of %s, not %q", strings.Join(MergePointwiseKinds, ", "), ms.Pointwise)
	}
	if !slices.Contains(MergeListwiseKinds, list.Kind) {
		return point, list, 0, fmt.Errorf("the diver merge's listwise reranker is one of %s, not %q", strings.Join(MergeListwiseKinds, ", "), ms.Listwise)
	}
	weight = ms.Weight
	if weight == 0 {
		weight = DefaultMergeWeight
	}
	if _, _, err := mergeFraction(weight); err != nil {
		return point, list, 0, err
	}
	point.Merge, list.Merge = MergeSpec{}, MergeSpec{}
	return point, list, weight, nil
}

// newMerge builds a diver merge from spec.
func newMerge(spec Spec) (Scorer, error) {
	ps, ls, w, err := spec.mergeParts()
	if err != nil {
		return nil, err
	}
	p, err := New(ps)
	if err != nil {
		return nil, fmt.Errorf("diver's pointwise reranker: %w", err)
	}
	l, err := New(ls)
	if err != nil {
		return nil, fmt.Errorf("diver's listwise reranker: %w", err)
	}
	return &Merge{Point: p, List: l, Weight: w}, nil
}
