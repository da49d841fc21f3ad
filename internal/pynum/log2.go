package pynum

import (
	"math"
	"sync"
	"sync/atomic"
)

// Log2 is C's log2(n) for an integer n >= 2, as Python's math.log2 and
// numpy's log2 return it on glibc: the float64 nearest the exact logarithm
// (glibc's own first disagrees at 1621, beyond the ranks these use).
// Both R2MED's nDCG (via pytrec_eval, i.e. trec_eval) and HAKARI-Bench's
// card script discount rank r by log2(r+1); Go's math.Log2 is one unit in
// the last place off for 3, 9, 107, … so it would change their last bits.
func Log2(n int) float64 {
	return Log2Table(n + 1)[n]
}

// Log2Table returns a table t with t[n] = log2(n) for 2 <= n < size, each
// entry the float64 nearest the exact logarithm, for loops that discount
// many ranks and should not look each one up through Log2.
//
// glibc's log2 is correctly rounded for all but a few near-halfway integers
// (19 of the first 300,000, the first at 1621), while Go's math.Log2 is one
// unit in the last place away for about 1% of integers, starting at 3. The
// table is therefore computed in double-double arithmetic instead, once per
// process, growing on demand.
//
// The returned slice must not be written; a later call may return a longer,
// separately allocated one.
func Log2Table(size int) []float64 {
	// Readers far outnumber growths (every query of every evaluation asks),
	// so a table long enough is handed out without taking the lock.
	if t := l2.tab.Load(); t != nil && len(*t) >= size {
		return *t
	}
	l2.mu.Lock()
	defer l2.mu.Unlock()
	var old []float64
	if t := l2.tab.Load(); t != nil {
		old = *t
	}
	if len(old) >= size {
		return old
	}
	tab := make([]float64, max(size, 2*len(old), 1024))
	copy(tab, old)
	if l2.n == 0 {
		l2.n = 1 // l2.ln = ln(1) = 0
	}
	for l2.n+1 < len(tab) {
		l2.n++
		l2.ln = l2.ln.add(lnRatio(l2.n))
		y := l2.ln.mul(log2e)
		tab[l2.n] = y.hi + y.lo
	}
	l2.tab.Store(&tab)
	return tab
}

var l2 struct {
	tab atomic.Pointer[[]float64]
	mu  sync.Mutex // serialises growth; guards ln and n
	ln  dd         // ln(n)
	n   int
}

// log2e is log2(e) to 106 bits.
var log2e = dd{1.4426950408889634, 2.0355273740931033e-17}

// lnRatio returns ln(n/(n-1)) = 2·atanh(1/(2n-1)). Its series converges
// fast: each term is (2n-1)² times smaller than the one before.
func lnRatio(n int) dd {
	d := float64(2*n - 1)
	t := dd{hi: 1}.quo(d)
	t2 := t.mul(t)
	sum, pow := t, t
	for i := 3.0; ; i += 2 {
		pow = pow.mul(t2)
		term := pow.quo(i)
		if math.Abs(term.hi) < math.Abs(sum.hi)*0x1p-110 {
			break
		}
		sum = sum.add(term)
	}
	return sum.add(sum)
}

// dd is an unevaluated sum hi+lo of two float64s with |lo| at most half an
// ulp of hi: about 106 bits of precision from float64 operations.
type dd struct{ hi, lo float64 }

func twoSum(a, b float64) dd {
	s := a + b
	v := s - a
	return dd{s, (a - (s - v)) + (b - v)}
}

// fastTwoSum needs |a| >= |b|.
func fastTwoSum(a, b float64) dd {
	s := a + b
	return dd{s, b - (s - a)}
}

func (x dd) add(y dd) dd {
	s := twoSum(x.hi, y.hi)
	t := twoSum(x.lo, y.lo)
	s = fastTwoSum(s.hi, s.lo+t.hi)
	return fastTwoSum(s.hi, s.lo+t.lo)
}

func (x dd) mul(y dd) dd {
	p := x.hi * y.hi
	e := math.FMA(x.hi, y.hi, -p)
	return fastTwoSum(p, e+(x.hi*y.lo+x.lo*y.hi))
}

// quo divides by a float64 d.
func (x dd) quo(d float64) dd {
	q1 := x.hi / d
	p := q1 * d
	r := (x.hi - p) - math.FMA(q1, d, -p) + x.lo // x - q1·d, exactly enough
	return fastTwoSum(q1, r/d)
}
