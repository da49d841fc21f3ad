package measure

import (
	"math"
	"slices"
	"strings"

	"github.com/r2med/r2med/internal/pynum"
)

// This file holds the measures of trec_eval's all_trec set beyond its
// official one, each written as its m_*.c file of trec_eval 9.0.8 computes
// it, loop for loop, so that the same double operations happen in the
// same order: the rounding of every printed digit then agrees. Products
// that C adds to a sum are converted to float64 before the addition,
// which keeps Go from fusing them into one multiply-add (gcc on x86-64
// does not fuse either). rels are the grades in rank order as
// scratch.rank returns them.

// infapEpsilon is trec_eval's INFAP_EPSILON.
const infapEpsilon = .00001

// infAP is m_infap.c: precision at each relevant document over the judged
// documents above it, documents judged with a negative grade (in the pool,
// unjudged) counted as above but neither relevant nor not, documents
// outside the qrels skipped.
func infAP(rels []int32, level, numRel int) float64 {
	var ap float64
	var nonrel, rel, unjudged int
	for j, r := range rels {
		switch {
		case r == nonPool:
			continue
		case r == unjudgedInPool:
			unjudged++
			continue
		case r >= 0 && int(r) < level:
			nonrel++
			continue
		}
		rel++
		if j == 0 {
			ap += 1.0
			continue
		}
		fj := float64(j)
		ap += 1.0/(fj+1.0) +
			float64(fj/(fj+1.0)*(float64(rel-1+nonrel+unjudged)/fj)*
				((float64(rel-1)+infapEpsilon)/(float64(rel-1+nonrel)+2*infapEpsilon)))
	}
	if numRel > 0 {
		ap /= float64(numRel)
	}
	return ap
}

// rprecMult is m_Rprec_mult.c at multiple mult of R: precision at rank
// (long)(mult·R + 0.9), counting documents past the end of the ranking as
// not relevant; 0 at rank 0.
func rprecMult(rels []int32, level, numRel, relRet int, mult float64) float64 {
	c := int(float64(mult*float64(numRel)) + 0.9)
	if c <= 0 {
		return 0
	}
	if c > len(rels) {
		return float64(relRet) / float64(c)
	}
	rel := 0
	for _, r := range rels[:c] {
		if int(r) >= level {
			rel++
		}
	}
	return float64(rel) / float64(c)
}

// ptAvg11 is m_11pt_avg.c: interpolated precision at each recall level
// (the relevant document (long)(r·R + 0.9)), averaged over the levels, in
// the order given as trec_eval walks them.
func ptAvg11(rels []int32, level, numRel, relRet int, levels []float64, cuts []int) float64 {
	for i, r := range levels {
		cuts[i] = int(float64(r*float64(numRel)) + 0.9)
	}
	cur := len(cuts) - 1
	for cur >= 0 && cuts[cur] > relRet {
		cur--
	}
	intPrecis := float64(relRet) / float64(len(rels))
	relSoFar := relRet
	var sum float64
	for i := len(rels); i > 0 && relSoFar > 0; i-- {
		intPrecis = max(intPrecis, float64(relSoFar)/float64(i))
		if int(rels[i-1]) >= level {
			for cur >= 0 && relSoFar == cuts[cur] {
				sum += intPrecis
				cur--
			}
			relSoFar--
		}
	}
	for ; cur >= 0; cur-- {
		sum += intPrecis
	}
	return sum / float64(len(levels))
}

// utility is m_utility.c with the coefficients a, b, c, d and no -N (the
// collection size trec_eval takes as 0).
func utility(co []float64, numRet, numRel, relRet int) float64 {
	const numDocsInColl = 0
	return float64(co[0]*float64(relRet)) +
		float64(co[1]*float64(numRet-relRet)) +
		float64(co[2]*float64(numRel-relRet)) +
		float64(co[3]*float64(numDocsInColl+relRet-numRet-numRel))
}

// binG is m_binG.c: over the relevant documents, 1/log2(2 + the
// non-relevant documents ranked above), divided by R.
func binG(rels []int32, level, numRel int) float64 {
	var sum float64
	relSoFar := 0
	for i, r := range rels {
		if int(r) >= level {
			relSoFar++
			sum += 1.0 / log2Of(float64(3+i-relSoFar))
		}
	}
	if relSoFar == 0 {
		return 0
	}
	return sum / float64(numRel)
}

// relString is m_relstring.c: the first n grades as digits, '>' above 9,
// '-' for a document outside the qrels, '.' for one judged with a negative
// grade.
func relString(rels []int32, n float64) string {
	k := max(min(int(n), len(rels)), 0)
	var b strings.Builder
	b.Grow(k)
	for _, r := range rels[:k] {
		switch {
		case r > 9:
			b.WriteByte('>')
		case r >= 0:
			b.WriteByte(byte('0' + r))
		case r == nonPool:
			b.WriteByte('-')
		case r == unjudgedInPool:
			b.WriteByte('.')
		default:
			b.WriteByte('<')
		}
	}
	return b.String()
}

// setF is m_set_F.c: (b+1)·P·R/(b·P + R) over the whole ranking.
func setF(b float64, numRet, numRel, relRet int) float64 {
	if relRet == 0 {
		return 0
	}
	p := float64(relRet) / float64(numRet)
	r := float64(relRet) / float64(numRel)
	return (b + 1.0) * p * r / (float64(b*p) + r)
}

// log2Of is C's log2 of the rank-like values G and binG discount by:
// integers from the table that nDCG uses, anything else from
// pynum.Log2Of, but below 0 (G with negative gains) the NaN glibc returns
// on x86-64, whose sign bit is set: trec_eval prints it "-nan", where
// math.Log2's NaN prints "nan".
func log2Of(x float64) float64 {
	switch {
	case x >= 2 && x < 1<<22 && x == math.Trunc(x):
		return pynum.Log2(int(x))
	case x < 0:
		return x86NaN
	}
	return pynum.Log2Of(x)
}

// x86NaN is the NaN x86-64 produces for an invalid operation (0/0): sign
// bit set, quiet, no payload.
var x86NaN = math.Float64frombits(0xFFF8000000000000)

// relGain is one grade's gain and how many judged documents have it, as
// m_ndcg.c's setup_gains lays them out.
type relGain struct {
	level int
	count int
	gain  float64
}

// fullLevels bounds the grades for which setupGains lists every grade from
// 0 up, as trec_eval does, rather than only the grades judged.
const fullLevels = 1 << 16

// setupGains is setup_gains of m_ndcg.c (and of ndcg_rel, Rndcg, G): the
// gains given as pairs, in their order, then every grade from 0 to the
// highest judged that no pair names with its grade as gain, sorted by
// glibc's qsort (a stable merge sort) on trec_eval's comparison, which
// truncates the gains' difference to an int. Grades no document has
// count 0 and are skipped when the ideal ranking is walked; without pairs,
// or with grades above fullLevels, only the judged grades are listed,
// which changes nothing unless gains differing by less than 1 make the
// comparison inconsistent.
func setupGains(pairs []gainPair, judged map[string]int) []relGain {
	counts := map[int]int{}
	top := -1
	for _, g := range judged {
		if g >= 0 {
			counts[g]++
			top = max(top, g)
		}
	}
	gs := make([]relGain, 0, len(pairs)+len(counts))
	for _, p := range pairs {
		gs = append(gs, relGain{level: p.level, gain: p.gain})
	}
	add := func(lvl int) {
		for j := range gs {
			if gs[j].level == lvl {
				gs[j].count = counts[lvl]
				return
			}
		}
		gs = append(gs, relGain{level: lvl, count: counts[lvl], gain: float64(lvl)})
	}
	if len(pairs) > 0 && top <= fullLevels {
		for lvl := 0; lvl <= top; lvl++ {
			add(lvl)
		}
	} else {
		lvls := make([]int, 0, len(counts))
		for lvl := range counts {
			lvls = append(lvls, lvl)
		}
		slices.Sort(lvls)
		for _, lvl := range lvls {
			add(lvl)
		}
	}
	mergeSort(gs, make([]relGain, len(gs)), func(a, b relGain) int { return int(a.gain - b.gain) })
	return gs
}

// mergeSort is glibc's msort_with_tmp, which its qsort runs for arrays
// that fit in memory: halves of n/2 and n - n/2, merged taking from the
// first while cmp <= 0. With an inconsistent cmp only this exact order of
// comparisons gives trec_eval's result.
func mergeSort[T any](b, tmp []T, cmp func(a, b T) int) {
	n := len(b)
	if n <= 1 {
		return
	}
	n1 := n / 2
	b1, b2 := b[:n1], b[n1:]
	mergeSort(b1, tmp, cmp)
	mergeSort(b2, tmp, cmp)
	i, j, k := 0, 0, 0
	for i < len(b1) && j < len(b2) {
		if cmp(b1[i], b2[j]) <= 0 {
			tmp[k] = b1[i]
			i++
		} else {
			tmp[k] = b2[j]
			j++
		}
		k++
	}
	k += copy(tmp[k:], b1[i:])
	copy(b, tmp[:k])
}

// gainOf is get_gain: the gain of the first entry for the grade, 0 for a
// grade without one (documents outside the qrels, negative grades).
func gainOf(gs []relGain, rel int32) float64 {
	for _, g := range gs {
		if g.level == int(rel) {
			return g.gain
		}
	}
	return 0
}

// idealWalk steps through the ideal ranking of m_ndcg.c and its siblings:
// the gains from the highest down, each as many times as documents have
// it. next moves one rank down and returns the gain there.
type idealWalk struct {
	gs    []relGain
	cur   int
	atLvl int
	gain  float64
}

func newIdealWalk(gs []relGain) idealWalk {
	w := idealWalk{gs: gs, cur: len(gs) - 1}
	if w.cur >= 0 {
		w.gain = gs[w.cur].gain
	}
	return w
}

// finish walks the rest of the ideal ranking from rank i+1 on, adding
// its discounted gains to dcg one by one, as trec_eval does; it returns
// dcg and how many of those ranks have a gain above 0.
func (w *idealWalk) finish(i int, dcg float64) (float64, int) {
	n := 0
	for ; w.gain > 0; i++ {
		w.next()
		if w.gain > 0 {
			n++
			dcg += w.gain / log2Of(float64(i+2))
		}
	}
	return dcg, n
}

func (w *idealWalk) next() {
	w.atLvl++
	for w.cur >= 0 && w.atLvl > w.gs[w.cur].count {
		w.atLvl = 1
		w.cur--
		w.gain = 0
		if w.cur >= 0 {
			w.gain = w.gs[w.cur].gain
		}
	}
}

// ndcgGains is m_ndcg.c with gains gs.
func ndcgGains(rels []int32, gs []relGain) float64 {
	var dcg, ideal float64
	w := newIdealWalk(gs)
	i := 0
	for ; i < len(rels) && w.gain > 0; i++ {
		if g := gainOf(gs, rels[i]); g != 0 {
			dcg += g / log2Of(float64(i+2))
		}
		w.next()
		if w.gain > 0 {
			ideal += w.gain / log2Of(float64(i+2))
		}
	}
	for ; i < len(rels); i++ {
		if g := gainOf(gs, rels[i]); g != 0 {
			dcg += g / log2Of(float64(i+2))
		}
	}
	ideal, _ = w.finish(i, ideal)
	if ideal > 0 {
		return dcg / ideal
	}
	return 0
}

// ndcgRel is m_ndcg_rel.c: nDCG at each document of positive gain,
// averaged over the documents of positive gain in the ideal ranking, those
// not retrieved at the ranking's final nDCG.
func ndcgRel(rels []int32, gs []relGain) float64 {
	var dcg, ideal, sum float64
	numRel, numRelRet := 0, 0
	w := newIdealWalk(gs)
	i := 0
	for ; i < len(rels) && w.gain > 0; i++ {
		g := gainOf(gs, rels[i])
		if g != 0 {
			dcg += g / log2Of(float64(i+2))
		}
		w.next()
		if w.gain > 0 {
			numRel++
			ideal += w.gain / log2Of(float64(i+2))
		}
		if g > 0 {
			sum += dcg / ideal
			numRelRet++
		}
	}
	for ; i < len(rels); i++ {
		g := gainOf(gs, rels[i])
		if g != 0 {
			dcg += g / log2Of(float64(i+2))
		}
		if g > 0 {
			sum += dcg / ideal
			numRelRet++
		}
	}
	ideal, n := w.finish(i, ideal)
	numRel += n
	sum += float64(numRel-numRelRet) * dcg / ideal
	if sum > 0 {
		return sum / float64(numRel)
	}
	return 0
}

// rndcg is m_Rndcg.c: nDCG at each rank where the ideal ranking's gain
// changes, and at the end of the ranking once the ideal gain is spent,
// averaged. trec_eval leaves 0 for a query without relevant documents.
func rndcg(rels []int32, gs []relGain, numRel int) float64 {
	if numRel == 0 {
		return 0
	}
	var dcg, ideal, sum float64
	changes := 0
	// point takes nDCG as it stands into the average.
	point := func() {
		if ideal > 0 {
			sum += dcg / ideal
			changes++
		}
	}
	w := newIdealWalk(gs)
	old := w.gain
	// step moves the ideal ranking to rank i+1, taking nDCG where its gain
	// changes.
	step := func() {
		w.next()
		if old != w.gain {
			point()
			old = w.gain
		}
	}
	i := 0
	for ; i < len(rels) && w.gain > 0; i++ {
		g := gainOf(gs, rels[i])
		step()
		if g != 0 {
			dcg += g / log2Of(float64(i+2))
		}
		if w.gain > 0 {
			ideal += w.gain / log2Of(float64(i+2))
		}
	}
	if i < len(rels) {
		for ; i < len(rels); i++ {
			if g := gainOf(gs, rels[i]); g != 0 {
				dcg += g / log2Of(float64(i+2))
			}
		}
		point()
	}
	for ; w.gain > 0; i++ {
		step()
		if w.gain > 0 {
			ideal += w.gain / log2Of(float64(i+2))
		}
	}
	return sum / float64(changes) // 0/0 is NaN, as trec_eval prints it
}

// gMeasure is m_G.c: each document's gain discounted by log2(2 + the
// ideal gain so far (at least 1 a rank) - the gain so far), over the ideal
// ranking's total gain.
func gMeasure(rels []int32, gs []relGain) float64 {
	var sumResults, sumIdeal, sumCost, g float64
	const minCost = 1.0
	w := newIdealWalk(gs)
	i := 0
	for ; i < len(rels) && w.gain > 0; i++ {
		gain := gainOf(gs, rels[i])
		sumResults += gain
		w.next()
		if w.gain > 0 {
			sumIdeal += w.gain
		}
		if w.gain >= minCost {
			sumCost += w.gain
		} else {
			sumCost += minCost
		}
		if gain != 0 {
			g += gain / log2Of(2+sumCost-sumResults)
		}
	}
	for ; i < len(rels); i++ {
		gain := gainOf(gs, rels[i])
		sumResults += gain
		sumCost += minCost
		if gain != 0 {
			g += gain / log2Of(2+sumCost-sumResults)
		}
	}
	for w.gain > 0 {
		w.next()
		if w.gain > 0 {
			sumIdeal += w.gain
		}
	}
	if sumIdeal > 0 {
		return g / sumIdeal
	}
	return 0
}
