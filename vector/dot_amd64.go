//go:build !purego

package vector

import "golang.org/x/sys/cpu"

//go:noescape
func dotQ16AVX2(q *int16, c *int8, n int) int32

var haveAVX2 = cpu.X86.HasAVX2

// dotQ16 returns Σ q[i]·c[i] over len(q) elements; c must be at least as
// long, |q[i]| ≤ maxQ16 and len(q) ≤ maxDotQ16Len.
func dotQ16(q []int16, c []int8) int32 {
	if len(q) == 0 {
		return 0
	}
	if haveAVX2 {
		_ = c[len(q)-1]
		return dotQ16AVX2(&q[0], &c[0], len(q))
	}
	return dotQ16Go(q, c)
}
