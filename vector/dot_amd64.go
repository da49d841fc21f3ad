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
func dot6x2AVX2(q, rows *float32, dim, n int, out *float32, ostride int, pf *float32, pfLines, pfFrom int)

//go:noescape
func notBelowMaskAVX2(s *float32, n int, bar float32) uint64

//go:noescape
func notBelow6AVX2(s *[6]*float32, n int, bars *[6]float32) int

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

// dot6Rows sets out[k·stride+r] = dot(q_k, row r) for the six queries
// q_k = q[k·d:(k+1)·d] (q holds them one after another, len(q) = 6·d)
// and the n rows of d components at the start of rows (stride ≥ n): six
// queries × two rows per kernel step, each row read once for the six.
// next, when not empty, is what the caller scores after these (the next
// six queries): the kernel prefetches it during its last tiles, one cache
// line per step. Scores do not depend on it.
func dot6Rows(q, rows []float32, n int, out []float32, stride int, next []float32) {
	d := len(q) / 6
	if !haveFMA || d == 0 || n == 0 {
		dot6RowsGo(q, rows, n, out, stride)
		return
	}
	_, _, _ = q[6*d-1], rows[n*d-1], out[5*stride+n-1]
	if stride < n {
		panic("vector: dot6Rows: stride below the row count")
	}
	if n2 := n &^ 1; n2 > 0 {
		var pf *float32
		var pfLines, pfFrom int
		if steps := d / 8; len(next) > 0 && steps > 0 {
			pf, pfLines = &next[0], (len(next)*4+63)/64
			pfFrom = max(0, n2/2-(pfLines+steps-1)/steps)
		}
		dot6x2AVX2(&q[0], &rows[0], d, n2, &out[0], stride*4, pf, pfLines, pfFrom)
	}
	if n&1 == 1 {
		row := &rows[(n-1)*d]
		for k := range 6 {
			out[k*stride+n-1] = dot1AVX2(&q[k*d], row, d)
		}
	}
}

// notBelowMask returns a mask with bit i set when s[i] is not below bar
// (!(s[i] < bar)), for len(s) ≤ 64: the top-k's threshold test, eight
// scores per comparison.
func notBelowMask(s []float32, bar float32) uint64 {
	var mask uint64
	n8 := len(s) &^ 7
	if haveAVX2 && n8 > 0 {
		mask = notBelowMaskAVX2(&s[0], n8, bar)
	} else {
		n8 = 0
	}
	return mask | notBelowMaskGo(s, n8, bar)
}

// notBelow6 returns a mask with bit k set when some of s[k][:n] is not
// below bars[k] (notBelowMask ≠ 0): the threshold test of six queries'
// scores in one call, eight scores per comparison.
func notBelow6(s *[6][]float32, n int, bars *[6]float32) int {
	mask, from := 0, 0
	if n8 := n &^ 7; haveAVX2 && n8 > 0 {
		var p [6]*float32
		for k := range 6 {
			_ = s[k][n-1]
			p[k] = &s[k][0]
		}
		mask, from = notBelow6AVX2(&p, n8, bars), n8
	}
	for k := 0; k < 6 && from < n; k++ {
		if mask&(1<<k) == 0 && firstNotBelowGo(s[k][:n], from, bars[k]) < n {
			mask |= 1 << k
		}
	}
	return mask
}
