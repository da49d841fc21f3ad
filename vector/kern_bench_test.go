package vector

import (
	"slices"
	"testing"
	"time"
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

// BenchmarkKernelGroups times the six-query kernel as scan drives it: a
// 40-row chunk (in L2) scored against groups of six queries in turn, the
// groups taken from the same six ("same"), from 1,002 queries (3 MB, so
// each group comes from L3: "pool") and from those 1,002 with the next
// group passed for prefetching ("prefetch", what scan does). The gap
// between same and pool is what a group's first tiles wait for its
// queries; prefetching is meant to close it. The three take turns, 50
// groups each (long enough to reach their steady state in the caches,
// short enough that this machine's drift falls on all three alike); each
// reports its multiply-adds per second.
//
//	go test ./vector -run '^$' -bench KernelGroups -benchtime 2000x -count 5
func BenchmarkKernelGroups(b *testing.B) {
	const dim, n, nq = 768, 40, 1002
	queries := slices.Concat(randRows(1, nq, dim)...)
	rows := slices.Concat(randRows(2, n, dim)...)
	out := make([]float32, 6*n)
	variants := []struct {
		name     string
		pool     int
		prefetch bool
	}{{"same", 6, false}, {"pool", nq, false}, {"prefetch", nq, true}}
	took := make([]time.Duration, len(variants))
	group := make([]int, len(variants))
	const turn = 50
	for b.Loop() {
		for i, v := range variants {
			t0 := time.Now()
			for range turn {
				g := group[i]
				next := (g + 6) % v.pool
				var pf []float32
				if v.prefetch {
					pf = queries[next*dim : (next+6)*dim]
				}
				dot6Rows(queries[g*dim:(g+6)*dim], rows, n, out, n, pf)
				group[i] = next
			}
			took[i] += time.Since(t0)
		}
	}
	for i, v := range variants {
		b.ReportMetric(float64(turn*6*n*dim*b.N)/took[i].Seconds()/1e9, v.name+"-GMAC/s")
	}
}
