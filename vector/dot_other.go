//go:build !amd64 || purego

package vector

func dotQ16(q []int16, c []int8) int32 { return dotQ16Go(q, c) }

func dot(q, r []float32) float32 { return dotGo(q, r) }

func dotRows(q, rows, out []float32) { dotRowsGo(q, rows, out) }

func dot3Rows(q0, q1, q2, rows, out0, out1, out2 []float32) {
	dotRowsGo(q0, rows, out0)
	dotRowsGo(q1, rows, out1)
	dotRowsGo(q2, rows, out2)
}

func dot6Rows(q, rows []float32, n int, out []float32, stride int, next []float32) {
	dot6RowsGo(q, rows, n, out, stride)
}

// asmKernels says this build has r2med's own assembler kernels: not on
// other architectures or with the purego tag.
const asmKernels = false

// haveFMA: no float32 kernels in this build; dotGo computes the same sums.
const haveFMA = false

func notBelowMask(s []float32, bar float32) uint64 { return notBelowMaskGo(s, 0, bar) }

func notBelow6(s *[6][]float32, n int, bars *[6]float32) int {
	mask := 0
	for k := range 6 {
		if firstNotBelowGo(s[k][:n], 0, bars[k]) < n {
			mask |= 1 << k
		}
	}
	return mask
}
