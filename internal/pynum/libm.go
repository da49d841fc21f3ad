package pynum

import "math"

// Exp is C's exp(x) as glibc computes it: the float64 nearest e^x. Go's
// math.Exp is one unit in the last place off for some arguments
// (exp(log(0.21875)) gives 0.21875 where glibc gives the float64 below
// it), which trec_eval's geometric means (gm_map, gm_bpref) print at four
// decimals when the mean falls on a half. The value is computed in
// double-double arithmetic and rounded once. Arguments whose result would
// be subnormal, infinite or NaN are math.Exp's.
func Exp(x float64) float64 {
	if !(x > -708 && x < 709) {
		return math.Exp(x)
	}
	r := expDD(x)
	return r.hi + r.lo
}

// Log is C's log(x) as glibc computes it: the float64 nearest ln(x), for
// the same reason as Exp. Arguments that are not positive normal numbers
// are math.Log's.
func Log(x float64) float64 {
	if !(x >= 0x1p-1022 && x <= math.MaxFloat64) {
		return math.Log(x)
	}
	r := logDD(x)
	return r.hi + r.lo
}

// Log2Of is C's log2(x) for any float64 as glibc computes it, the float64
// nearest log2(x), where Log2 takes integers. Go's math.Log2 loses most
// of its digits near 1 (it adds the logarithm of the mantissa, near -1,
// to the exponent, 1). Arguments that are not positive normal numbers are
// math.Log2's.
func Log2Of(x float64) float64 {
	if !(x >= 0x1p-1022 && x <= math.MaxFloat64) {
		return math.Log2(x)
	}
	r := logDD(x).mul(log2e)
	return r.hi + r.lo
}

// logDD is ln(x) in double-double: one Newton step from math.Log's value
// y, ln(x) = y + ln(x·e^-y), where x·e^-y = 1 + t with t tiny.
func logDD(x float64) dd {
	y := math.Log(x)
	t := expDD(-y).mul(dd{hi: x}).add(dd{hi: -1})
	corr := t.add(dd{hi: -t.hi * t.hi / 2})
	return dd{hi: y}.add(corr)
}

// ln2dd is ln 2 to 106 bits.
var ln2dd = dd{0.6931471805599453, 2.3190468138462996e-17}

// expDD is e^x in double-double: x = k·ln2 + r, e^r from its series at
// r/256, squared eight times, scaled by 2^k.
func expDD(x float64) dd {
	k := math.Round(x / ln2dd.hi)
	r := dd{hi: x}.add(ln2dd.mul(dd{hi: -k}))
	r = dd{r.hi / 256, r.lo / 256}
	sum, term := dd{hi: 1}, dd{hi: 1}
	for i := 1.0; i < 30; i++ {
		term = term.mul(r).quo(i)
		sum = sum.add(term)
		if math.Abs(term.hi) < 0x1p-110 {
			break
		}
	}
	for range 8 {
		sum = sum.mul(sum)
	}
	return dd{math.Ldexp(sum.hi, int(k)), math.Ldexp(sum.lo, int(k))}
}
