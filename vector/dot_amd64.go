//go:build !purego

package vector

import "golang.org/x/sys/cpu"

//go:noescape
func dotInt8AVX2(a, b *int8, n int) int32

var haveAVX2 = cpu.X86.HasAVX2

// dotInt8 returns Σ a[i]·b[i] over len(a) elements; b must be at least as
// long.
func dotInt8(a, b []int8) int32 {
	if len(a) == 0 {
		return 0
	}
	if haveAVX2 {
		_ = b[len(a)-1]
		return dotInt8AVX2(&a[0], &b[0], len(a))
	}
	return dotInt8Go(a, b)
}
