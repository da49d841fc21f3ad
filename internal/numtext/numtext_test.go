package numtext

import (
	"math"
	"testing"
)

func TestSigned(t *testing.T) {
	for _, c := range []struct {
		v    float64
		prec int
		want string
	}{
		{0.0031, 4, "+0.0031"},
		{-0.0046, 4, "-0.0046"},
		{0, 4, "0.0000"},
		{math.Copysign(0, -1), 4, "0.0000"},
		{-0.0000083, 4, "-8.3e-06"},
		{0.00004, 4, "+4.0e-05"},
		{-0.00005, 4, "-0.0001"}, // rounds away from zero: shown as it rounds
		{-0.0004, 3, "-4.0e-04"},
		{-0.0456, 3, "-0.046"},
		{12, 2, "+12.00"},
		{math.NaN(), 4, "NaN"},
		{math.Inf(-1), 4, "-Inf"},
	} {
		if got := Signed(c.v, c.prec); got != c.want {
			t.Errorf("Signed(%v, %d) = %q, want %q", c.v, c.prec, got, c.want)
		}
	}
}

func TestP(t *testing.T) {
	for p, want := range map[float64]string{1: "1.0000", 0.04999: "0.0500", 0.0001: "0.0001", 1 / 10001.0: "1.0e-04", 6.3e-06: "6.3e-06", 0: "0.0e+00"} {
		if got := P(p); got != want {
			t.Errorf("P(%v) = %q, want %q", p, got, want)
		}
	}
}
