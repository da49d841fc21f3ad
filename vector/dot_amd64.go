//go:build !purego

package vector

import (
	"runtime"

	"golang.org/x/sys/cpu"
)

//go:noescape
func dotQ16AVX2(q *int16, c *int8, n int) int32

//go:noescape
func dot3RowsAVX2(q0, q1, q2, rows *float32, dim, n int, out0, out1, out2 *float32)

//go:noescape
func dot3x4PackedAVX2(q0, q1, q2, rows *float32, dim, n int, out0, out1, out2, scratch *float32)

//go:noescape
func firstNotBelowAVX2(s *float32, n int, bar float32) int

var haveAVX2 = cpu.X86.HasAVX2

// asmKernels says this build has r2med's own assembler kernels (not
// purego, amd64).
const asmKernels = true

// haveDot3 is the condition under which vek32.Dot runs its AVX2 kernel,
// whose summation order dot3RowsAVX2 reproduces; elsewhere vek sums in
// plain Go and so does dot3Rows.
var haveDot3 = cpu.X86.HasAVX2 && cpu.X86.HasFMA && runtime.GOOS != "darwin"

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

// dot3Rows sets out_k[r] = vek32.Dot(q_k, row r) for the len(out0) rows
// of len(q0) components at the start of rows, bit for bit, reading each
// row once for the three queries.
func dot3Rows(q0, q1, q2, rows, out0, out1, out2 []float32) {
	dim, n := len(q0), len(out0)
	if !haveDot3 || n == 0 || dim == 0 {
		dot3RowsGo(q0, q1, q2, rows, out0, out1, out2)
		return
	}
	_, _, _ = q1[dim-1], q2[dim-1], rows[n*dim-1]
	_, _ = out1[n-1], out2[n-1]
	dot3RowsAVX2(&q0[0], &q1[0], &q2[0], &rows[0], dim, n, &out0[0], &out1[0], &out2[0])
}

// packable reports whether vectors of dim components are scored packed
// (packPhases, dot3x4Packed): on the AVX2 path, with at least one
// 32-element step.
func packable(dim int) bool { return haveDot3 && dim >= 32 }

// dot3x4Packed scores three packed queries against the packed rows, four
// at a time, as vek32.Dot scores the unpacked vectors, bit for bit; it
// returns how many rows it scored (a multiple of four), leaving the rest
// to the caller.
func dot3x4Packed(q0, q1, q2, rows []float32, dim int, out0, out1, out2 []float32) int {
	n := len(out0) / 4 * 4
	if n == 0 {
		return 0
	}
	_, _, _ = q0[dim-1], q1[dim-1], q2[dim-1]
	_, _, _ = rows[n*dim-1], out1[n-1], out2[n-1]
	var scratch [96]float32
	dot3x4PackedAVX2(&q0[0], &q1[0], &q2[0], &rows[0], dim, n, &out0[0], &out1[0], &out2[0], &scratch[0])
	return n
}

// firstNotBelow returns the index of the first score that is not below
// bar (!(s[i] < bar)), or len(s): the heap's threshold test, eight scores
// per comparison.
func firstNotBelow(s []float32, bar float32) int {
	n := len(s) &^ 7
	i := n
	if haveAVX2 && n > 0 {
		if i = firstNotBelowAVX2(&s[0], n, bar); i < n {
			return i
		}
	}
	return firstNotBelowGo(s, i, bar)
}
