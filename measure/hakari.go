package measure

import (
	"fmt"

	"github.com/r2med/r2med/internal/pynum"
	"github.com/r2med/r2med/ir"
)

// hakariQuery scores one ranking as hakari_bench/metrics.py does: the list
// order is the ranking (scores are not looked at), a positive is a document
// judged at the relevance level or above, hit, precision and recall count
// each positive once, while nDCG, MAP and MRR walk the list as it is, so a
// positive listed twice gains twice. The DCG is summed as metrics.py sums
// it, one float addition per positive in rank order (its ideal, from
// Python's sum(), is compensated: hakariIdealTable).
func (p *plan) hakariQuery(s *scratch, judged map[string]int, hits []ir.Hit, out []float64) error {
	numPos := 0
	for _, g := range judged {
		if g >= p.level {
			numPos++
		}
	}
	snaps := s.snapshots(len(p.cuts))
	cuts := p.cuts
	if s.seen == nil {
		s.seen = make(map[string]struct{})
	}
	clear(s.seen)
	var (
		distinct, hitCount, first, ci int
		ap, dcg                       float64
	)
	depth := min(len(hits), p.maxK)
	if numPos == 0 {
		depth = 0 // every measure is 0; skip the walk
	}
	for i, h := range hits[:depth] {
		rank := i + 1
		if g, ok := judged[h.DocID]; ok && g >= p.level {
			hitCount++
			ap += float64(hitCount) / float64(rank)
			dcg += 1 / p.log2[rank+1]
			if first == 0 {
				first = rank
			}
			if _, dup := s.seen[h.DocID]; !dup {
				s.seen[h.DocID] = struct{}{}
				distinct++
			}
		}
		for ci < len(cuts) && cuts[ci] == rank {
			snaps[ci] = snap{rel: distinct, ap: ap, dcg: dcg, first: first}
			ci++
		}
	}
	for ; ci < len(cuts); ci++ {
		snaps[ci] = snap{rel: distinct, ap: ap, dcg: dcg, first: first}
	}

	for j, m := range p.ms {
		c := snaps[p.cutAt[j]]
		k := m.Cutoff
		var v float64
		switch m.Family {
		case Hit:
			if c.rel > 0 {
				v = 1
			}
		case HakariPrecision:
			v = float64(c.rel) / float64(k)
		case HakariRecall:
			if numPos > 0 {
				v = float64(c.rel) / float64(numPos)
			}
		case HakariMRR:
			if c.first > 0 {
				v = 1 / float64(c.first)
			}
		case HakariNDCG:
			if ideal := p.hakariIdeal[min(numPos, k)]; numPos > 0 && ideal > 0 {
				v = c.dcg / ideal
			}
		case HakariMAP:
			if numPos > 0 {
				v = c.ap / float64(min(numPos, k))
			}
		default:
			// newPlan refuses families outside computedBy; this keeps a
			// missed one loud.
			return fmt.Errorf("%s is not computed by the HAKARI-Bench pass", m.Family)
		}
		out[j] = v
	}
	return nil
}

// hakariIdealTable returns t with t[m] the DCG of m positives in a row,
// summed as Python's sum does, for m up to depth.
func hakariIdealTable(log2 []float64, depth int) []float64 {
	t := make([]float64, depth+1)
	var acc pynum.Sum
	for m := 1; m <= depth; m++ {
		acc.Add(1 / log2[m+1])
		t[m] = acc.Value()
	}
	return t
}

// hakariSumOrder returns the indexes of queries (in byte order of their
// ids) in the order metrics.py adds their values up: those named in order
// first, as named, then the rest as they are.
func hakariSumOrder(queries []QueryResult, order []string) []int {
	idx := make([]int, 0, len(queries))
	taken := make([]bool, len(queries))
	for _, qid := range order {
		if i, ok := findQuery(queries, qid); ok && !taken[i] {
			taken[i] = true
			idx = append(idx, i)
		}
	}
	for i := range queries {
		if !taken[i] {
			idx = append(idx, i)
		}
	}
	return idx
}
