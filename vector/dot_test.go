package vector

import (
	"math/rand/v2"
	"testing"
)

func TestDotInt8(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 15, 16, 31, 32, 33, 63, 64, 100, 384, 768, 1023, 4096} {
		a := make([]int8, n)
		b := make([]int8, n+5)
		for i := range a {
			a[i] = int8(r.IntN(256) - 128)
		}
		for i := range b {
			b[i] = int8(r.IntN(256) - 128)
		}
		var want int32
		for i := range a {
			want += int32(a[i]) * int32(b[i])
		}
		if got := dotInt8(a, b); got != want {
			t.Fatalf("n=%d: dotInt8 %d, want %d", n, got, want)
		}
		if got := dotInt8Go(a, b); got != want {
			t.Fatalf("n=%d: dotInt8Go %d, want %d", n, got, want)
		}
	}
	// extremes: every lane at -128·-128
	a := make([]int8, 4096)
	for i := range a {
		a[i] = -128
	}
	if got, want := dotInt8(a, a), int32(4096*128*128); got != want {
		t.Fatalf("extremes: %d, want %d", got, want)
	}
}

func BenchmarkDotInt8(b *testing.B) {
	a := make([]int8, 768)
	c := make([]int8, 768)
	for i := range a {
		a[i], c[i] = int8(i), int8(3*i)
	}
	b.Run("avx2", func(b *testing.B) {
		b.SetBytes(768)
		for b.Loop() {
			dotInt8(a, c)
		}
	})
	b.Run("go", func(b *testing.B) {
		b.SetBytes(768)
		for b.Loop() {
			dotInt8Go(a, c)
		}
	})
}
