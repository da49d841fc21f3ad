// Package numtext writes the numbers r2med's outputs print where a fixed
// number of decimals would misstate them: signed differences (never a
// negative zero) and p-values (never 0); and how many decimals a
// per-query value gets, alike in compare, the report and the viewer.
package numtext

import (
	"math"
	"strconv"
	"strings"
)

// QueryDecimals is how many decimals a per-query value of a measure (a
// query's nDCG@10, say) and its change get wherever they are printed:
// compare's gains and losses, the report's scatter, the viewer's task,
// query and diff pages.
const QueryDecimals = 4

// Query writes a per-query value with QueryDecimals decimals ("0.6938").
func Query(v float64) string { return strconv.FormatFloat(v, 'f', QueryDecimals, 64) }

// Signed writes v with prec decimals and its sign: "+0.0031", "-0.0046".
// Zero is "0.0000", with no sign. A value that is not zero but rounds to
// zero at prec decimals, which %+.4f prints "-0.0000" or "+0.0000", is
// written with two significant digits instead ("-8.3e-06"), so that its
// sign is the sign of something shown. NaN is "NaN", infinities "+Inf"
// and "-Inf".
func Signed(v float64, prec int) string {
	switch {
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case v == 0:
		return strconv.FormatFloat(0, 'f', prec, 64)
	}
	s := strconv.FormatFloat(math.Abs(v), 'f', prec, 64)
	if strings.Trim(s, "0.") == "" {
		s = strconv.FormatFloat(math.Abs(v), 'e', 1, 64)
	}
	if v < 0 {
		return "-" + s
	}
	return "+" + s
}

// P writes a p-value as compare prints it: four decimals, or from below
// 0.0001 two significant digits ("6.3e-06"), so that no p reads 0.0000.
func P(p float64) string {
	if p < 0.0001 {
		return strconv.FormatFloat(p, 'e', 1, 64)
	}
	return strconv.FormatFloat(p, 'f', 4, 64)
}
