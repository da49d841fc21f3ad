package vector

import "github.com/viterin/vek/vek32"

// maxQ16 bounds the int16 query weights of the int8 kernel: 12 bits of
// query precision, while a kernel lane (Σ of pairs of products, each pair
// ≤ 2·2047·128 < 2^19) cannot overflow int32 for rows up to 2^16 dims.
const maxQ16 = 2047

// maxDotQ16Len is the longest run dotQ16 sums: 2^13·2047·128 < 2^31, so
// the int32 total cannot wrap. Longer rows are summed in runs.
const maxDotQ16Len = 1 << 13

// dotQ16Go is the portable int8 kernel, and the reference the AVX2 one is
// tested against.
func dotQ16Go(q []int16, c []int8) int32 {
	c = c[:len(q)]
	var s0, s1, s2, s3 int32
	i := 0
	for ; i+4 <= len(q); i += 4 {
		s0 += int32(q[i]) * int32(c[i])
		s1 += int32(q[i+1]) * int32(c[i+1])
		s2 += int32(q[i+2]) * int32(c[i+2])
		s3 += int32(q[i+3]) * int32(c[i+3])
	}
	for ; i < len(q); i++ {
		s0 += int32(q[i]) * int32(c[i])
	}
	return s0 + s1 + s2 + s3
}

// dot3RowsGo is dot3Rows one dot product at a time: the portable path,
// and the reference the AVX2 kernel is tested against.
func dot3RowsGo(q0, q1, q2, rows, out0, out1, out2 []float32) {
	d := len(q0)
	for r := range out0 {
		row := rows[r*d : (r+1)*d]
		out0[r] = vek32.Dot(q0, row)
		out1[r] = vek32.Dot(q1, row)
		out2[r] = vek32.Dot(q2, row)
	}
}

// packPhases writes v (at least 32 components) phase-major into dst, the
// layout dot3x4Packed reads: vek's dot product keeps four 8-lane
// accumulators, the p-th summing elements 32s+8p…32s+8p+7 over the steps
// s; packing puts each accumulator's elements in one contiguous run
// (phase p at p·main/4, main = len(v) rounded down to 32), and the
// len(v) mod 32 tail elements where they were.
func packPhases(dst, v []float32) {
	main := len(v) &^ 31
	steps := main / 32
	dst = dst[:len(v)]
	for s := range steps {
		// Array assignments, not copy: eight floats move as two 16-byte
		// words, where a memmove call per eight floats costs several times
		// the move.
		in := (*[32]float32)(v[32*s:])
		*(*[8]float32)(dst[s*8:]) = [8]float32(in[0:8])
		*(*[8]float32)(dst[(steps+s)*8:]) = [8]float32(in[8:16])
		*(*[8]float32)(dst[(2*steps+s)*8:]) = [8]float32(in[16:24])
		*(*[8]float32)(dst[(3*steps+s)*8:]) = [8]float32(in[24:32])
	}
	copy(dst[main:], v[main:])
}

// firstNotBelowGo returns the index of the first of s[from:] that is not
// below bar, or len(s).
func firstNotBelowGo(s []float32, from int, bar float32) int {
	for i := from; i < len(s); i++ {
		if !(s[i] < bar) {
			return i
		}
	}
	return len(s)
}
