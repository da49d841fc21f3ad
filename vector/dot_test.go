package vector

import (
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"
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

// fmaBig is a·b + c rounded once to float32, computed exactly with
// math/big: the reference fma32 is held to, independent of its float64
// tricks.
func fmaBig(a, b, c float32) float32 {
	// 1200 bits hold any such sum exactly (float32 products span
	// 2^-298…2^256), so only Float32 rounds, to nearest, ties to even.
	x := new(big.Float).SetPrec(1200).SetFloat64(float64(a))
	x.Mul(x, new(big.Float).SetPrec(1200).SetFloat64(float64(b)))
	x.Add(x, new(big.Float).SetPrec(1200).SetFloat64(float64(c)))
	f, _ := x.Float32()
	return f
}

// TestFMA32: fma32 rounds once, as the FMA instruction does, for random
// triples over the whole float32 range (normals, subnormals, cancelling
// signs) and for a triple built so that rounding the float64 sum to
// float32 rounds twice and goes wrong: a·b is exactly halfway between two
// float32 and c is far below float64's last bit.
func TestFMA32(t *testing.T) {
	half := float32(1 + 1.0/4096) // (1+2^-12)² = 1 + 2^-11 + 2^-24: a float32 halfway point
	tiny := float32(math.Ldexp(1, -80))
	if naive := float32(math.FMA(float64(half), float64(half), float64(tiny))); naive == fmaBig(half, half, tiny) {
		t.Fatal("the double-rounding case does not double-round; the test lost its point")
	}
	cases := [][3]float32{{half, half, tiny}, {half, half, -tiny}, {-half, half, tiny}, {0, 5, 0}, {-1, 0, 0}, {-1, 0, float32(math.Copysign(0, -1))},
		{math.MaxFloat32, 2, 0}, {math.MaxFloat32, 1, math.MaxFloat32}, {float32(math.Ldexp(1, -149)), 0.5, 0}, {float32(math.Ldexp(1, -130)), float32(math.Ldexp(1, -10)), float32(math.Ldexp(1, -149))}}
	r := rand.New(rand.NewPCG(3, 4))
	anyFloat := func() float32 {
		for {
			f := math.Float32frombits(r.Uint32())
			if !math.IsNaN(float64(f)) && !math.IsInf(float64(f), 0) {
				return f
			}
		}
	}
	near := func(f float32, shift int) float32 { return float32(math.Ldexp(float64(f), shift)) }
	for range 200_000 {
		a, b := anyFloat(), anyFloat()
		c := anyFloat()
		if r.IntN(2) == 0 { // c near a·b, so that the sum cancels or carries
			c = -near(a*b, r.IntN(5)-2) * float32(1+r.NormFloat64()*1e-6)
		}
		cases = append(cases, [3]float32{a, b, c})
		x, y := mixedVec(r, 2), mixedVec(r, 1)
		cases = append(cases, [3]float32{x[0], x[1], y[0]})
	}
	for _, c := range cases {
		got, want := fma32(c[0], c[1], c[2]), fmaBig(c[0], c[1], c[2])
		if math.Float32bits(got) != math.Float32bits(want) && !(got != got && want != want) {
			t.Fatalf("fma32(%g, %g, %g) = %g (%#x), want %g (%#x)", c[0], c[1], c[2], got, math.Float32bits(got), want, math.Float32bits(want))
		}
	}
}

// dotBig sums q·r in the documented order (eight lanes of single-rounding
// multiply-adds, a short last step of zeros, then the pairwise tree) with
// fmaBig: a reference for dotGo that shares none of its code.
func dotBig(q, r []float32) float32 {
	var s [8]float32
	for i := 0; i < len(q); i += 8 {
		for j := range 8 {
			var a, b float32
			if i+j < len(q) {
				a, b = q[i+j], r[i+j]
			}
			s[j] = fmaBig(a, b, s[j])
		}
	}
	return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]))
}

// TestDotGoOrder: dotGo sums in the documented order, bit for bit, and
// that order is observable: on vectors of mixed magnitudes a plain
// sequential sum differs from it.
func TestDotGoOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	differ := 0
	for _, d := range []int{1, 7, 8, 9, 15, 16, 17, 31, 33, 100, 384} {
		for range 20 {
			q, row := mixedVec(r, d), mixedVec(r, d)
			got, want := dotGo(q, row), dotBig(q, row)
			if math.Float32bits(got) != math.Float32bits(want) {
				t.Fatalf("dim %d: dotGo %v (%#x), the documented order %v (%#x)", d, got, math.Float32bits(got), want, math.Float32bits(want))
			}
			var seq float32
			for i := range q {
				seq = fma32(q[i], row[i], seq)
			}
			if seq != got {
				differ++
			}
		}
	}
	if differ == 0 {
		t.Fatal("no vector told the lane order from a sequential sum; the test has no power")
	}
}

// TestKernelsMatchDotGo: the AVX2 kernels (one pair, one query × rows,
// three and six queries × rows) give dotGo's scores bit for bit, for every
// dimension up to 130 (every tail length, with and without whole 8-wide
// steps), the common embedding sizes and row counts that leave 0–3 rows
// after the four-row tiles; rows of mixed magnitudes so that another
// summation order would show, and slices that end where the data does,
// so that a tail read past it would fault under the race detector's
// checks or read garbage. Also the double-rounding triple through the
// kernels' FMA.
func TestKernelsMatchDotGo(t *testing.T) {
	if asmKernels && !haveFMA {
		t.Log("no AVX2+FMA here: the kernels fall back to dotGo")
	}
	r := rand.New(rand.NewPCG(7, 8))
	dims := []int{256, 384, 768, 1000, 1024, 1536, 4096}
	for d := 1; d <= 130; d++ {
		dims = append(dims, d)
	}
	for _, d := range dims {
		for _, n := range []int{1, 2, 3, 4, 5, 7, 8, 11} {
			var q [6][]float32
			for k := range 6 {
				q[k] = mixedVec(r, d)
			}
			qrun := slices.Concat(q[:]...) // the six one after another, as dot6Rows takes them
			rows := mixedVec(r, n*d)
			var out [6][]float32
			for k := range out {
				out[k] = make([]float32, n)
			}
			one := make([]float32, n)
			dot3Rows(q[0], q[1], q[2], rows, out[0], out[1], out[2])
			dot3Rows(q[3], q[4], q[5], rows, out[3], out[4], out[5])
			// Six queries into one buffer, rows stride+2 apart: the gaps
			// must keep their sentinel. Once without, once with a next
			// group to prefetch (in the last tiles, here all of them).
			stride := n + 2
			var out6 [2][]float32
			for v := range out6 {
				out6[v] = make([]float32, 5*stride+n)
				for i := range out6[v] {
					out6[v][i] = 42
				}
			}
			dot6Rows(qrun, rows, n, out6[0], stride, nil)
			dot6Rows(qrun, rows, n, out6[1], stride, mixedVec(r, 6*d))
			for v := range out6 {
				for i := range out6[v] {
					if i%stride >= n && out6[v][i] != 42 {
						t.Fatalf("dim %d, %d rows: dot6Rows wrote %v at %d, between query %d's scores and the next's", d, n, out6[v][i], i, i/stride)
					}
				}
			}
			for k := range 6 {
				dotRows(q[k], rows, one)
				for i := range n {
					row := rows[i*d : (i+1)*d]
					want := dotGo(q[k], row)
					for _, g := range []struct {
						name string
						v    float32
					}{{"dot3Rows", out[k][i]}, {"dot6Rows", out6[0][k*stride+i]}, {"dot6Rows prefetching", out6[1][k*stride+i]}, {"dotRows", one[i]}, {"dot", dot(q[k], row)}} {
						if math.Float32bits(g.v) != math.Float32bits(want) {
							t.Fatalf("dim %d, %d rows, query %d, row %d: %s %v, dotGo %v", d, n, k, i, g.name, g.v, want)
						}
					}
				}
			}
		}
	}
	half := float32(1 + 1.0/4096)
	tiny := float32(math.Ldexp(1, -80))
	q := []float32{tiny, 0, 0, 0, 0, 0, 0, 0, half}
	row := []float32{1, 0, 0, 0, 0, 0, 0, 0, half}
	if got, want := dot(q, row), fmaBig(half, half, tiny); got != want {
		t.Fatalf("dot of the double-rounding triple: %v, want one rounding %v", got, want)
	}
}

// TestNotBelowMask: the eight-at-a-time threshold test marks the same
// scores not below the bar as a plain loop of comparisons, at every
// position and length up to 64 (both sides of each multiple of eight), for
// equal scores, infinite bars and NaN.
func TestNotBelowMask(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	inf := float32(math.Inf(1))
	for n := 0; n <= 64; n++ {
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
			var want uint64
			for i, x := range s {
				if !(x < bar) {
					want |= 1 << i
				}
			}
			if got := notBelowMask(s, bar); got != want {
				t.Fatalf("n %d, trial %d, bar %v: %b, want %b (%v)", n, trial, bar, got, want, s)
			}
		}
	}
}

// TestNotBelow6 checks the six-query threshold test against firstNotBelowGo
// per query: every length 0–41 (whole 8-wide steps and tails), scores equal
// to the bar, NaN, bars of ±Inf, and queries that differ within one call.
func TestNotBelow6(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	inf := float32(math.Inf(1))
	for n := 0; n <= 41; n++ {
		for trial := range 40 {
			var s [6][]float32
			var bars [6]float32
			for k := range 6 {
				s[k] = make([]float32, n, n) // ends where the data does
				for i := range s[k] {
					s[k][i] = float32(r.NormFloat64())
				}
				bars[k] = float32(r.NormFloat64()) + 2.5
				switch (trial + k) % 7 {
				case 0:
					bars[k] = -inf
				case 1:
					bars[k] = inf
				}
				if n > 0 {
					at := r.IntN(n)
					switch (trial + 2*k) % 5 {
					case 0:
						s[k][at] = bars[k] // equal is not below
					case 1:
						s[k][at] = float32(math.NaN())
					case 2:
						s[k][at] = bars[k] + 1
					}
				}
			}
			want := 0
			for k := range 6 {
				if firstNotBelowGo(s[k], 0, bars[k]) < n {
					want |= 1 << k
				}
			}
			if got := notBelow6(&s, n, &bars); got != want {
				t.Fatalf("n %d, trial %d: mask %06b, want %06b (bars %v)", n, trial, got, want, bars)
			}
		}
	}
}

// TestPreparedQueriesFollowEachOther checks what the batch kernel's
// prefetch relies on: each prepared query has the ones after it in its
// capacity, in order, under both metrics.
func TestPreparedQueriesFollowEachOther(t *testing.T) {
	for _, m := range []Metric{Dot, Cosine} {
		in := randRows(9, 13, 20)
		qs, err := prepareQueries(in, 20, m)
		if err != nil {
			t.Fatal(err)
		}
		for i := range qs {
			run := qs[i][:(len(qs)-i)*20]
			for j := i; j < len(qs); j++ {
				if !slices.Equal(run[(j-i)*20:(j-i+1)*20], qs[j]) {
					t.Fatalf("metric %v: query %d's capacity does not hold query %d next", m, i, j)
				}
			}
		}
		if m == Dot && !slices.Equal(qs[3], in[3]) {
			t.Fatalf("Dot: the prepared query differs from the input")
		}
	}
}
