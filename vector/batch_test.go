package vector

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
)

// countingKernel records, per chunk of rows, how many queries each of
// scan's several-query calls scored, delegating every score to the float
// kernel.
type countingKernel struct {
	*floatKernel
	mu     sync.Mutex
	chunks map[[2]int][]int // [lo, hi) → queries scored per call
}

func (c *countingKernel) scoreMany(qi, lo, hi int, out []float32, stride, most int) int {
	n := c.floatKernel.scoreMany(qi, lo, hi, out, stride, most)
	c.mu.Lock()
	c.chunks[[2]int{lo, hi}] = append(c.chunks[[2]int{lo, hi}], n)
	c.mu.Unlock()
	return n
}

// TestBatchUsesManyQueryKernels: batch search really goes through the
// six- and three-query kernels (for every chunk, scan scores the queries
// six at a time, then three, then one), and what comes back is, score bit
// for score bit, what each query searched alone gives — for dimensions
// with and without a tail, below one eight-wide step, row counts that
// leave 0–3 rows after the four-row tiles, and batches of 1 to 14.
func TestBatchUsesManyQueryKernels(t *testing.T) {
	for _, dim := range []int{5, 8, 32, 33, 100, 768} {
		for _, n := range []int{61, 64, 403} {
			rows := randRows(uint64(dim*n), n, dim)
			f := buildFlat(t, Dot, rows, seqIDs(n))
			for _, nq := range []int{1, 3, 4, 5, 6, 8, 14} {
				qs, err := prepareQueries(randRows(uint64(nq+dim), nq, dim), dim, Dot) // as Search hands them to the kernel
				if err != nil {
					t.Fatal(err)
				}
				for _, w := range []int{1, 2} {
					name := fmt.Sprintf("dim %d, %d rows, %d queries, %d workers", dim, n, nq, w)
					kern := &countingKernel{floatKernel: newFloatKernel(f, qs), chunks: map[[2]int][]int{}}
					got := toHits(scan(kern, n, nq, n, nil, f.ranks(), w, dim*4), f.ids, nil)
					var want []int
					for left := nq; left > 0; {
						b := 1
						switch {
						case left >= 6:
							b = 6
						case left >= 3:
							b = 3
						}
						want = append(want, b)
						left -= b
					}
					covered := 0
					for c, calls := range kern.chunks {
						if fmt.Sprint(calls) != fmt.Sprint(want) {
							t.Fatalf("%s: rows %d–%d scored %v queries per call, want %v", name, c[0], c[1], calls, want)
						}
						covered += c[1] - c[0]
					}
					if covered != n {
						t.Fatalf("%s: several-query calls covered %d of %d rows", name, covered, n)
					}
					for qi, q := range qs {
						one, err := f.Search([][]float32{q}, n, SearchOptions{Workers: 1})
						if err != nil {
							t.Fatal(err)
						}
						sameBits(t, fmt.Sprintf("%s, query %d", name, qi), got[qi], one[0])
						for _, h := range one[0] {
							if want := dotGo(q, f.Row(h.Index)); math.Float32bits(h.Score) != math.Float32bits(want) {
								t.Fatalf("%s, query %d, row %d: score %v, dotGo %v", name, qi, h.Index, h.Score, want)
							}
						}
					}
				}
			}
		}
	}
}

// sameBits fails unless two hit lists hold the same rows with the same
// score bit patterns, in the same order.
func sameBits(t *testing.T, what string, got, want []Hit) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d hits, want %d", what, len(got), len(want))
	}
	for i := range want {
		if got[i].Index != want[i].Index || math.Float32bits(got[i].Score) != math.Float32bits(want[i].Score) {
			t.Fatalf("%s: rank %d: row %d score %v (%#x), alone row %d score %v (%#x)", what, i,
				got[i].Index, got[i].Score, math.Float32bits(got[i].Score),
				want[i].Index, want[i].Score, math.Float32bits(want[i].Score))
		}
	}
}

// TestMappedMatchesInMemory: a store over mapped rows (FromRows, as an
// index file opens) and the store built in memory return the same hits
// and score bits, for one query and for batches, before and after rows
// are added to the in-memory one; the rows are read where they are, so
// the two differ in nothing the kernels see.
func TestMappedMatchesInMemory(t *testing.T) {
	const dim, n, more = 96, 61, 7
	rows := randRows(21, n+more, dim)
	ids := seqIDs(n + more)
	qs := randRows(22, 5, dim)
	f := buildFlat(t, Dot, rows[:n], ids[:n])
	check := func(stage string, f *Flat) {
		t.Helper()
		m, err := FromRows(dim, Dot, f.IDs(), f.Data(), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, batch := range [][][]float32{qs, qs[:1]} {
			want, err := f.Search(batch, f.Len(), SearchOptions{Workers: 2})
			if err != nil {
				t.Fatal(err)
			}
			got, err := m.Search(batch, f.Len(), SearchOptions{Workers: 1})
			if err != nil {
				t.Fatal(err)
			}
			for qi := range batch {
				sameBits(t, fmt.Sprintf("%s, %d queries, query %d", stage, len(batch), qi), got[qi], want[qi])
			}
		}
	}
	check("built", f)
	if err := f.AddAll(ids[n:], rows[n:]); err != nil {
		t.Fatal(err)
	}
	check("after Add", f)
}

// TestSelectBest: selectBest puts the k best candidates first and the k-th
// best exactly at k−1 (the top-k's bar), for every k, with scores that tie
// by the dozen (ties go by id rank).
func TestSelectBest(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	for _, n := range []int{1, 2, 3, 7, 64, 200} {
		rank := make([]int32, n)
		for i, p := range r.Perm(n) {
			rank[i] = int32(p)
		}
		c := make([]cand, n)
		for i := range c {
			c[i] = cand{float32(r.IntN(max(1, n/12))), int32(i)}
		}
		sorted := slices.Clone(c)
		sortCands(sorted, rank)
		for k := 1; k <= n; k++ {
			got := slices.Clone(c)
			r.Shuffle(len(got), func(i, j int) { got[i], got[j] = got[j], got[i] })
			selectBest(got, k, rank)
			if got[k-1] != sorted[k-1] {
				t.Fatalf("n %d, k %d: at k-1 %+v, want the k-th best %+v", n, k, got[k-1], sorted[k-1])
			}
			best := got[:k:k]
			sortCands(best, rank)
			if !slices.Equal(best, sorted[:k]) {
				t.Fatalf("n %d, k %d: the first k are not the k best", n, k)
			}
		}
	}
}
