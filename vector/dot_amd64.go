//go:build !purego

package vector

import "golang.org/x/sys/cpu"

//go:noescape
func dotQ16AVX2(q *int16, c *int8, n int) int32

//go:noescape
func dot1AVX2(q, r *float32, dim int) float32

//go:noescape
func dot1x4AVX2(q, rows *float32, dim, n int, out *float32)

//go:noescape
func dot3x4AVX2(q0, q1, q2, rows *float32, dim, n int, out0, out1, out2 *float32)

//go:noescape
func dot6x2AVX2(qs *[6]*float32, rows *float32, dim, n int, outs *[6]*float32)

//go:noescape
func firstNotBelowAVX2(s *float32, n int, bar float32) int

var haveAVX2 = cpu.X86.HasAVX2

// haveFMA says the float32 kernels run here (AVX2 and FMA); elsewhere the
// same sums are computed by dotGo, bit for bit.
var haveFMA = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// asmKernels says this build has r2med's own assembler kernels (not
// purego, amd64).
const asmKernels = true

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

// dot returns q·r over len(q) components (r at least as long), summed in
// the order dotGo defines.
func dot(q, r []float32) float32 {
	if !haveFMA || len(q) == 0 {
		return dotGo(q, r)
	}
	_ = r[len(q)-1]
	return dot1AVX2(&q[0], &r[0], len(q))
}

// dotRows sets out[r] = dot(q, row r) for the len(out) rows of len(q)
// components at the start of rows, four rows per pass over q.
func dotRows(q, rows, out []float32) {
	d, n := len(q), len(out)
	if !haveFMA || d == 0 || n == 0 {
		dotRowsGo(q, rows, out)
		return
	}
	_ = rows[n*d-1]
	if n4 := n &^ 3; n4 > 0 {
		dot1x4AVX2(&q[0], &rows[0], d, n4, &out[0])
	}
	for r := n &^ 3; r < n; r++ {
		out[r] = dot1AVX2(&q[0], &rows[r*d], d)
	}
}

// dot3Rows sets out_k[r] = dot(q_k, row r) for three queries and the
// len(out0) rows of len(q0) components at the start of rows: three
// queries × four rows per kernel step, each row read once for the three.
func dot3Rows(q0, q1, q2, rows, out0, out1, out2 []float32) {
	d, n := len(q0), len(out0)
	if !haveFMA || d == 0 || n == 0 {
		dotRowsGo(q0, rows, out0)
		dotRowsGo(q1, rows, out1)
		dotRowsGo(q2, rows, out2)
		return
	}
	_, _, _ = q1[d-1], q2[d-1], rows[n*d-1]
	_, _ = out1[n-1], out2[n-1]
	n4 := n &^ 3
	if n4 > 0 {
		dot3x4AVX2(&q0[0], &q1[0], &q2[0], &rows[0], d, n4, &out0[0], &out1[0], &out2[0])
	}
	for r := n4; r < n; r++ {
		row := rows[r*d:]
		out0[r] = dot1AVX2(&q0[0], &row[0], d)
		out1[r] = dot1AVX2(&q1[0], &row[0], d)
		out2[r] = dot1AVX2(&q2[0], &row[0], d)
	}
}

// dot6Rows sets out[k][r] = dot(q[k], row r) for six queries and the
// len(out[0]) rows of len(q[0]) components at the start of rows: six
// queries × two rows per kernel step, each row read once for the six.
func dot6Rows(q *[6][]float32, rows []float32, out *[6][]float32) {
	d, n := len(q[0]), len(out[0])
	if !haveFMA || d == 0 || n == 0 {
		for k := range 6 {
			dotRowsGo(q[k], rows, out[k])
		}
		return
	}
	_ = rows[n*d-1]
	var qp, op [6]*float32
	for k := range 6 {
		_, _ = q[k][d-1], out[k][n-1]
		qp[k], op[k] = &q[k][0], &out[k][0]
	}
	if n2 := n &^ 1; n2 > 0 {
		dot6x2AVX2(&qp, &rows[0], d, n2, &op)
	}
	if n&1 == 1 {
		row := &rows[(n-1)*d]
		for k := range 6 {
			out[k][n-1] = dot1AVX2(qp[k], row, d)
		}
	}
}

// firstNotBelow returns the index of the first score that is not below
// bar (!(s[i] < bar)), or len(s): the top-k's threshold test, eight scores
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
