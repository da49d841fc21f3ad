package pynum

import (
	"math"
	"testing"
)

func TestSum(t *testing.T) {
	// Python 3.12+: sum([1e16, 1.0, -1e16]) == 1.0; naive addition gives 0.
	var a Sum
	for _, x := range []float64{1e16, 1, -1e16} {
		a.Add(x)
	}
	if a.Value() != 1 {
		t.Errorf("compensated sum = %v, want 1", a.Value())
	}
	var b Sum
	for range 10 {
		b.Add(0.1)
	}
	if b.Value() != 1 { // Python 3.12: sum([0.1]*10) == 1.0
		t.Errorf("sum of ten 0.1 = %v, want 1", b.Value())
	}
	var z Sum
	if z.Value() != 0 {
		t.Errorf("empty sum = %v", z.Value())
	}
	// sum([1e308, 1e308, -1e308]) is inf in Python: the overflowed
	// compensation is dropped, not added as NaN.
	var o Sum
	for _, x := range []float64{1e308, 1e308, -1e308} {
		o.Add(x)
	}
	if !math.IsInf(o.Value(), 1) {
		t.Errorf("overflowing sum = %v, want +Inf", o.Value())
	}
}

func TestRound(t *testing.T) {
	// Python's round works on the exact binary value: 2.675 is stored
	// below 2.675, so it rounds down; 0.125 is exact and ties to even.
	for _, c := range []struct {
		x    float64
		n    int
		want float64
	}{
		{2.675, 2, 2.67}, {0.125, 2, 0.12}, {0.375, 2, 0.38}, {-1.5, 0, -2},
		{0.285715, 5, 0.28571}, // x*1e5 rounds up to 28571.5 in float64
		{100.0291262135922, 6, 100.029126},
		{math.Inf(1), 3, math.Inf(1)}, {math.Inf(-1), 3, math.Inf(-1)},
	} {
		if got := Round(c.x, c.n); got != c.want {
			t.Errorf("round(%v, %d) = %v, want %v", c.x, c.n, got, c.want)
		}
	}
	if !math.IsNaN(Round(math.NaN(), 2)) {
		t.Error("round(nan) is not nan")
	}
}

func TestFormat(t *testing.T) {
	// Expected values are Python's json.dumps of the float.
	for f, want := range map[float64]string{
		0: "0.0", 1: "1.0", 0.5: "0.5", 0.0822: "0.0822", 0.15144: "0.15144",
		1e-4: "0.0001", 1e-5: "1e-05", 3.2e-7: "3.2e-07", 123456789: "123456789.0",
		1e16: "1e+16", 1.5e300: "1.5e+300", -0.25: "-0.25",
		math.Inf(1): "Infinity", math.Inf(-1): "-Infinity",
	} {
		if got := Format(f); got != want {
			t.Errorf("Format(%v) = %q, want %q", f, got, want)
		}
	}
	if got := Format(math.NaN()); got != "NaN" {
		t.Errorf("Format(NaN) = %q", got)
	}
	if got := Format(math.Copysign(0, -1)); got != "-0.0" {
		t.Errorf("Format(-0) = %q", got)
	}
}

func TestLog2(t *testing.T) {
	// The card metrics used to carry these, glibc's log2(n) for n < 12:
	// the ranks an nDCG@10 discounts. Log2 must give them bit for bit.
	glibc := [...]float64{2: 1, 3: 1.584962500721156, 4: 2, 5: 2.321928094887362, 6: 2.584962500721156,
		7: 2.807354922057604, 8: 3, 9: 3.169925001442312, 10: 3.321928094887362, 11: 3.4594316186372973}
	for n := 2; n < len(glibc); n++ {
		if got := Log2(n); math.Float64bits(got) != math.Float64bits(glibc[n]) {
			t.Errorf("Log2(%d) = %v, glibc gives %v", n, got, glibc[n])
		}
	}
	tab := Log2Table(40)
	for n := 2; n < 40; n++ {
		got, approx := Log2(n), math.Log2(float64(n))
		if got != tab[n] {
			t.Errorf("Log2(%d) = %v, table has %v", n, got, tab[n])
		}
		if math.Abs(got-approx) > 2*math.Abs(math.Nextafter(approx, 0)-approx) {
			t.Errorf("log2(%d) = %v, far from %v", n, got, approx)
		}
		if n&(n-1) == 0 && got != float64(math.Ilogb(float64(n))) {
			t.Errorf("log2(%d) = %v is not exact", n, got)
		}
	}
}

// TestLog2TableConcurrent grows the table from many goroutines at once; run
// with -race it checks the lock-free fast path.
func TestLog2TableConcurrent(t *testing.T) {
	done := make(chan []float64)
	for i := range 8 {
		go func() { done <- Log2Table(3000 + 500*i) }()
	}
	for range 8 {
		tab := <-done
		if tab[2048] != 11 || tab[1000] != Log2(1000) {
			t.Errorf("table of %d: log2(2048) = %v, log2(1000) = %v", len(tab), tab[2048], tab[1000])
		}
	}
}
