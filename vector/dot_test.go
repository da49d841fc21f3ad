package vector

import (
	"math/rand/v2"
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
