// Package pynum is what R2MED's and HAKARI-Bench's Python computes and
// prints, reproduced bit for bit: CPython's float sum(), Python's
// round(x, n), glibc's log2 of integer ranks and the text json.dumps writes
// for a float.
//
// Published scores are compared to the last printed digit, and a rounding
// step turns a one-ulp difference in a mean into a different fifth or tenth
// decimal, so the evaluators, the card metrics and the metadata writers
// share these rather than each keeping a near copy.
package pynum

import (
	"math"
	"strconv"
	"strings"
)

// Sum is CPython 3.12+'s sum() of floats: Neumaier's compensated summation,
// which makes sum([1e16, 1.0, -1e16]) 1.0 and sum([0.1]*10) exactly 1.0
// where naive addition would not. The zero value is an empty sum.
type Sum struct{ s, c float64 }

// Add adds x to the sum.
func (a *Sum) Add(x float64) {
	t := a.s + x
	if math.Abs(a.s) >= math.Abs(x) {
		a.c += (a.s - t) + x
	} else {
		a.c += (x - t) + a.s
	}
	a.s = t
}

// Value is the sum so far. As in CPython, a compensation that overflowed
// or became NaN is dropped so that infinities propagate as plain addition
// would give them.
func (a *Sum) Value() float64 {
	if a.c != 0 && !math.IsInf(a.c, 0) && !math.IsNaN(a.c) {
		return a.s + a.c
	}
	return a.s
}

// Round is Python's round(x, digits): the exact binary value of x rounded
// to digits decimals, ties to even, then read back as the nearest float64.
// strconv formats the exact value, so formatting and parsing is Python's
// algorithm; math.Round(x*1e5)/1e5 is not, since it rounds the already
// rounded product. NaN and infinities are returned as they are.
func Round(x float64, digits int) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return x
	}
	r, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'f', digits, 64), 64)
	return r
}

// Format writes f as Python's json.dumps does: repr's shortest digits that
// read back, positional between 1e-4 and 1e16 with ".0" on integral values,
// scientific with an at least two-digit exponent otherwise (1e-05,
// 1e+16), and NaN, Infinity and -Infinity for the non-finite values.
func Format(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	a := math.Abs(f)
	if a == 0 || (a >= 1e-4 && a < 1e16) {
		s := strconv.FormatFloat(f, 'f', -1, 64)
		if !strings.ContainsRune(s, '.') {
			s += ".0"
		}
		return s
	}
	s := strconv.FormatFloat(f, 'e', -1, 64)
	mant, exp, _ := strings.Cut(s, "e")
	sign := exp[0]
	digits := strings.TrimLeft(exp[1:], "0")
	if len(digits) < 2 {
		digits = strings.Repeat("0", 2-len(digits)) + digits
	}
	return mant + "e" + string(sign) + digits
}
