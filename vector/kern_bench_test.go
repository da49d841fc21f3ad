package vector

import (
	"slices"
	"testing"
)

// BenchmarkKernel times the batch kernels alone (6 queries × 2 rows and 3
// queries × 4 rows of 768 dimensions per step) with the rows in L1 (the
// same four again and again) and in L2 (forty rows, as a scan chunk), and
// the one-query kernel over the forty rows, in multiply-adds per second: their ceiling,
// against which scan overheads show. This machine's FMA units peak at 2 ×
// 8 multiply-adds per cycle.
//
//	go test ./vector -run '^$' -bench Kernel -benchtime 100000x -count 5
func BenchmarkKernel(b *testing.B) {
	const dim = 768
	for _, n := range []int{4, 40} {
		q := randRows(1, 6, dim)
		rows := make([]float32, 0, n*dim)
		for _, r := range randRows(2, n, dim) {
			rows = append(rows, r...)
		}
		out := [3][]float32{make([]float32, n), make([]float32, n), make([]float32, n)}
		b.Run(map[int]string{4: "3q/L1", 40: "3q/L2"}[n], func(b *testing.B) {
			for b.Loop() {
				for range 40 / n {
					dot3Rows(q[0], q[1], q[2], rows, out[0], out[1], out[2])
				}
			}
			b.ReportMetric(float64(3*40*dim*b.N)/b.Elapsed().Seconds()/1e9, "GMAC/s")
		})
		b.Run(map[int]string{4: "6q/L1", 40: "6q/L2"}[n], func(b *testing.B) {
			q6 := slices.Concat(q[:6]...)
			out6 := make([]float32, 6*n)
			for b.Loop() {
				for range 40 / n {
					dot6Rows(q6, rows, n, out6, n, nil)
				}
			}
			b.ReportMetric(float64(6*40*dim*b.N)/b.Elapsed().Seconds()/1e9, "GMAC/s")
		})
		if n == 40 {
			b.Run("1q/L2", func(b *testing.B) {
				for b.Loop() {
					dotRows(q[0], rows, out[0])
				}
				b.ReportMetric(float64(40*dim*b.N)/b.Elapsed().Seconds()/1e9, "GMAC/s")
			})
		}
	}
}
