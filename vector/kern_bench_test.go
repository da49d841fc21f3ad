package vector

import "testing"

// BenchmarkKernelPacked times the batch kernel alone (3 queries × 4 rows
// of 768 dimensions per call, packed), with the rows in L1 (the same four
// again and again) and in L2 (forty rows, as a scan chunk), in multiply-adds
// per second: its ceiling, against which scan overheads show.
//
//	go test ./vector -run '^$' -bench KernelPacked -benchtime 100000x -count 5
func BenchmarkKernelPacked(b *testing.B) {
	const dim = 768
	for _, n := range []int{4, 40} {
		q := randRows(1, 3, dim)
		rows := randRows(2, n, dim)
		flat := make([]float32, n*dim)
		for i, r := range rows {
			packPhases(flat[i*dim:(i+1)*dim], r)
		}
		qp := make([][]float32, 3)
		for i := range qp {
			qp[i] = make([]float32, dim)
			packPhases(qp[i], q[i])
		}
		out := [3][]float32{make([]float32, n), make([]float32, n), make([]float32, n)}
		b.Run(map[int]string{4: "L1", 40: "L2"}[n], func(b *testing.B) {
			for b.Loop() {
				for range 40 / n {
					dot3x4Packed(qp[0], qp[1], qp[2], flat, dim, out[0], out[1], out[2])
				}
			}
			b.ReportMetric(float64(3*40*dim*b.N)/b.Elapsed().Seconds()/1e9, "GMAC/s")
		})
	}
}
