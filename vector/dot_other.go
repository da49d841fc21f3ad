//go:build !amd64 || purego

package vector

func dotQ16(q []int16, c []int8) int32 { return dotQ16Go(q, c) }

func dot3Rows(q0, q1, q2, rows, out0, out1, out2 []float32) {
	dot3RowsGo(q0, q1, q2, rows, out0, out1, out2)
}

// asmKernels says this build has r2med's own assembler kernels: not on
// other architectures or with the purego tag.
const asmKernels = false

func packable(int) bool { return false }

func dot3x4Packed(q0, q1, q2, rows []float32, dim int, out0, out1, out2 []float32) int { return 0 }

func firstNotBelow(s []float32, bar float32) int { return firstNotBelowGo(s, 0, bar) }
