package vector

import "math"

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

// The float32 dot product has one order of summation, on every path and
// every machine: single-query and batch search, rescoring, Score, mapped
// and in-memory rows. Eight lanes, lane j summing q[i]·r[i] over the
// components i ≡ j (mod 8) in ascending i, each step a fused multiply-add
// (one rounding) starting from +0, a short last step adding 0·0 for the
// components past the end; then ((s0+s1)+(s2+s3)) + ((s4+s5)+(s6+s7)).
// It is the order an 8-wide FMA register sums in, so the AVX2 kernels
// (dot_amd64.s) need no rearranging of rows and no horizontal sum inside
// their loops, and a batch kernel can give each (query, row) pair a single
// accumulator: three queries × four rows, bound by the FMA units as
// BLAS's matrix product is. dotGo is that definition in portable Go, the
// path taken without AVX2 and FMA and the reference the kernels are
// tested against bit for bit, so scores are the same bits everywhere.
const lanes = 8

// DotOrder names the summation order above. Callers record it with what
// they computed (r2med's dense retrievers put it in their fingerprint), so
// that scores summed in another order — an earlier r2med summed as vek's
// AVX2 dot product did — are recomputed rather than reused.
const DotOrder = "fma8-pairwise"

// dotGo returns q·r over len(q) components (r at least as long) in the
// order above.
func dotGo(q, r []float32) float32 {
	r = r[:len(q)]
	var s [lanes]float32
	i := 0
	for ; i+lanes <= len(q); i += lanes {
		for j := range lanes {
			s[j] = fma32(q[i+j], r[i+j], s[j])
		}
	}
	if i < len(q) {
		for j := range lanes {
			var a, b float32
			if i+j < len(q) {
				a, b = q[i+j], r[i+j]
			}
			s[j] = fma32(a, b, s[j])
		}
	}
	return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]))
}

// dotRowsGo sets out[r] = dotGo(q, row r) for the len(out) rows of len(q)
// components at the start of rows.
func dotRowsGo(q, rows, out []float32) {
	d := len(q)
	for r := range out {
		out[r] = dotGo(q, rows[r*d:(r+1)*d])
	}
}

// fma32 returns a·b + c rounded once to float32, as a fused multiply-add
// instruction computes it. Go has no float32 FMA, and rounding the float64
// FMA to float32 would round twice, which is wrong in rare cases; so the
// float64 sum is rounded to odd first (its last bit set when it is
// inexact), after which rounding to float32 is exact (53 ≥ 24+2 bits).
// The product of two float32 is exact in float64, and TwoSum gives the
// error of the sum exactly.
func fma32(a, b, c float32) float32 {
	p := float64(float64(a) * float64(b))
	x := float64(c)
	s := p + x
	if math.IsInf(s, 0) || s != s {
		return float32(s)
	}
	bv := s - p
	e := (p - (s - bv)) + (x - bv)
	if bits := math.Float64bits(s); e != 0 && bits&1 == 0 {
		// s is even and inexact: its neighbour toward the exact sum is odd.
		if (e > 0) == (s > 0) {
			bits++
		} else {
			bits--
		}
		s = math.Float64frombits(bits)
	}
	return float32(s)
}

// notBelowMaskGo returns a mask with bit i set for each i ≥ from where
// s[i] is not below bar, for len(s) ≤ 64.
func notBelowMaskGo(s []float32, from int, bar float32) uint64 {
	var mask uint64
	for i := from; i < len(s); i++ {
		if !(s[i] < bar) {
			mask |= 1 << i
		}
	}
	return mask
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

// dot6RowsGo is dot6Rows in portable Go: six queries one after another in
// q, scores of query k at out[k·stride:].
func dot6RowsGo(q, rows []float32, n int, out []float32, stride int) {
	d := len(q) / 6
	for k := range 6 {
		dotRowsGo(q[k*d:(k+1)*d], rows, out[k*stride:k*stride+n])
	}
}
