package vector

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/viterin/vek/vek32"
)

func TestDotQ16(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 15, 16, 17, 31, 32, 63, 64, 65, 100, 127, 128, 384, 768, 1023, 4096} {
		q := make([]int16, n)
		c := make([]int8, n+5)
		for i := range q {
			q[i] = int16(r.IntN(2*maxQ16+1) - maxQ16)
		}
		for i := range c {
			c[i] = int8(r.IntN(256) - 128)
		}
		var want int32
		for i := range q {
			want += int32(q[i]) * int32(c[i])
		}
		if got := dotQ16(q, c); got != want {
			t.Fatalf("n=%d: dotQ16 %d, want %d", n, got, want)
		}
		if got := dotQ16Go(q, c); got != want {
			t.Fatalf("n=%d: dotQ16Go %d, want %d", n, got, want)
		}
	}
	// extremes in every lane, at the longest run whose sum fits int32
	n := maxDotQ16Len
	q := make([]int16, n)
	c := make([]int8, n)
	for i := range q {
		q[i], c[i] = -maxQ16, -128
	}
	if got, want := int64(dotQ16(q, c)), int64(n)*maxQ16*128; got != want {
		t.Fatalf("extremes: %d, want %d", got, want)
	}
}

// Longer rows are summed in runs: a 3·2^13-dimensional row at the
// extremes sums past int32 and must not wrap.
func TestInt8KernelLongRows(t *testing.T) {
	d := 3 * maxDotQ16Len
	x := &Int8{codes: make([]int8, d)}
	q := make([]int16, d)
	for i := range q {
		q[i], x.codes[i] = -maxQ16, -128
	}
	out := make([]float32, 1)
	(&int8Kernel{x: x, q: [][]int16{q}}).score(0, 0, 1, out)
	if want := float32(int64(d) * maxQ16 * 128); out[0] != want {
		t.Fatalf("score %v, want %v", out[0], want)
	}
}

func BenchmarkDotQ16(b *testing.B) {
	q := make([]int16, 768)
	c := make([]int8, 768)
	for i := range q {
		q[i], c[i] = int16(i), int8(3*i)
	}
	b.Run("avx2", func(b *testing.B) {
		b.SetBytes(768)
		for b.Loop() {
			dotQ16(q, c)
		}
	})
	b.Run("go", func(b *testing.B) {
		b.SetBytes(768)
		for b.Loop() {
			dotQ16Go(q, c)
		}
	})
}

// mixedVec returns n normal components scaled by powers of ten from 1e-3
// to 1e3, so that a different summation order would change the sums.
func mixedVec(r *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(r.NormFloat64() * math.Pow(10, float64(r.IntN(7)-3)))
	}
	return v
}

// TestDot3RowsMatchesVek: the three-query kernel gives vek32.Dot's scores
// bit for bit, for every dimension up to 130 (every tail length, with and
// without the 32-wide main loop) and the common embedding sizes, rows of
// mixed magnitudes so that summation order would show.
func TestDot3RowsMatchesVek(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	dims := []int{256, 384, 768, 1000, 1024, 1536, 4096}
	for d := 1; d <= 130; d++ {
		dims = append(dims, d)
	}
	vec := func(n int) []float32 { return mixedVec(r, n) }
	for _, d := range dims {
		for _, n := range []int{1, 2, 3, 5, 7} {
			q0, q1, q2, rows := vec(d), vec(d), vec(d), vec(n*d+3)
			out := [3][]float32{make([]float32, n), make([]float32, n), make([]float32, n)}
			dot3Rows(q0, q1, q2, rows, out[0], out[1], out[2])
			for k, q := range [][]float32{q0, q1, q2} {
				for i := range n {
					want := vek32.Dot(q, rows[i*d:(i+1)*d])
					if math.Float32bits(out[k][i]) != math.Float32bits(want) {
						t.Fatalf("dim %d, query %d, row %d: %v, vek32.Dot %v", d, k, i, out[k][i], want)
					}
				}
			}
		}
	}
}

// TestDot3x4PackedMatchesVek: the packed 3-query × 4-row kernel gives
// vek32.Dot's scores of the unpacked vectors bit for bit, for every
// dimension from 32 to 130 (every tail length) and the common embedding
// sizes.
func TestDot3x4PackedMatchesVek(t *testing.T) {
	if !packable(32) {
		t.Skip("no packed kernel on this machine")
	}
	r := rand.New(rand.NewPCG(9, 10))
	dims := []int{256, 384, 768, 1000, 1024, 1536, 4096}
	for d := 32; d <= 130; d++ {
		dims = append(dims, d)
	}
	vec := func(n int) []float32 { return mixedVec(r, n) }
	pack := func(v []float32, d int) []float32 {
		out := make([]float32, len(v))
		for i := 0; i < len(v); i += d {
			packPhases(out[i:i+d], v[i:i+d])
		}
		return out
	}
	for _, d := range dims {
		for _, n := range []int{4, 8, 11} {
			qs := [3][]float32{vec(d), vec(d), vec(d)}
			rows := vec(n * d)
			out := [3][]float32{make([]float32, n), make([]float32, n), make([]float32, n)}
			done := dot3x4Packed(pack(qs[0], d), pack(qs[1], d), pack(qs[2], d), pack(rows, d), d, out[0], out[1], out[2])
			if done != n/4*4 {
				t.Fatalf("dim %d: scored %d of %d rows, want %d", d, done, n, n/4*4)
			}
			for k, q := range qs {
				for i := range done {
					want := vek32.Dot(q, rows[i*d:(i+1)*d])
					if math.Float32bits(out[k][i]) != math.Float32bits(want) {
						t.Fatalf("dim %d, query %d, row %d: %v, vek32.Dot %v", d, k, i, out[k][i], want)
					}
				}
			}
		}
	}
}

// TestFirstNotBelow: the eight-at-a-time threshold test finds the same
// first score not below the bar as the plain loop, at every position and
// length (both sides of a multiple of eight), for equal scores, infinite
// bars and NaN.
func TestFirstNotBelow(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	inf := float32(math.Inf(1))
	for n := 0; n <= 41; n++ {
		for trial := range 50 {
			s := make([]float32, n)
			for i := range s {
				s[i] = float32(r.NormFloat64())
			}
			bar := float32(r.NormFloat64()) + 2
			switch trial {
			case 0:
				bar = -inf
			case 1:
				bar = inf
			}
			if n > 0 && trial >= 2 {
				at := r.IntN(n)
				switch trial % 4 {
				case 0:
					s[at] = bar // equal is not below
				case 1:
					s[at] = float32(math.NaN())
				case 2:
					s[at] = bar + 1
				}
			}
			want := firstNotBelowGo(s, 0, bar)
			if got := firstNotBelow(s, bar); got != want {
				t.Fatalf("n %d, trial %d, bar %v: %d, want %d (%v)", n, trial, bar, got, want, s)
			}
		}
	}
}
