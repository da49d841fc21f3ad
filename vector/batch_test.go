package vector

import (
	"fmt"
	"math"
	"sync/atomic"
	"testing"

	"github.com/viterin/vek"
)

// countingKernel counts the batch calls scan makes and how many of them
// received packed rows, delegating every score to the float kernel.
type countingKernel struct {
	*floatKernel
	calls, packed atomic.Int64
}

func (c *countingKernel) score3(qi, lo, hi int, packed []float32, out0, out1, out2 []float32) {
	c.calls.Add(1)
	if packed != nil {
		c.packed.Add(1)
	}
	c.floatKernel.score3(qi, lo, hi, packed, out0, out1, out2)
}

// TestBatchUsesPackedKernel: batch search really goes through the packed
// three-query kernel (scan hands score3 packed rows for every full batch of
// three when the dimension is packable), and what comes back is, score bit
// for score bit, what each query searched alone by vek32.Dot gives — for
// packable dimensions with and without a tail, an unpackable one, row counts
// that leave 0–3 rows to the unpacked remainder, and batches of 3 to 8.
func TestBatchUsesPackedKernel(t *testing.T) {
	// Where vek32.Dot runs its AVX2 kernel and this build has our own
	// kernels (not purego), batches of rows of 32 or more components must
	// be scored packed; decided here from vek and the build, not from
	// packable, so that a kernel that stopped packing fails.
	accel := vek.Info().Acceleration && asmKernels
	for _, dim := range []int{5, 32, 33, 64, 100, 768} {
		for _, n := range []int{61, 64, 403} {
			rows := randRows(uint64(dim*n), n, dim)
			f := buildFlat(t, Dot, rows, seqIDs(n))
			for _, nq := range []int{3, 4, 5, 8} {
				qs := randRows(uint64(nq+dim), nq, dim)
				for _, w := range []int{1, 2} {
					name := fmt.Sprintf("dim %d, %d rows, %d queries, %d workers", dim, n, nq, w)
					kern := &countingKernel{floatKernel: newFloatKernel(f, qs)}
					got := toHits(scan(kern, n, nq, n, nil, f.ranks(), w, dim*4), f.ids, nil)
					if kern.calls.Load() == 0 {
						t.Fatalf("%s: scan never scored three queries at once", name)
					}
					if p := kern.packed.Load(); accel && dim >= 32 && p != kern.calls.Load() {
						t.Fatalf("%s: %d of %d batch calls got packed rows", name, p, kern.calls.Load())
					} else if !(accel && dim >= 32) && p != 0 {
						t.Fatalf("%s: rows packed for an unpackable dimension", name)
					}
					for qi, q := range qs {
						one, err := f.Search([][]float32{q}, n, SearchOptions{Workers: 1})
						if err != nil {
							t.Fatal(err)
						}
						sameBits(t, fmt.Sprintf("%s, query %d", name, qi), got[qi], one[0])
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

// TestScore3ReadsPackedRows: score3 scores from the packed rows it is
// handed, not from the store behind them, so the packed path is the one
// under test above: rows packed from other vectors give those vectors'
// scores, bit for bit as vek32.Dot gives them.
func TestScore3ReadsPackedRows(t *testing.T) {
	const dim, n = 96, 8
	if !packable(dim) {
		t.Skip("no packed kernel on this machine")
	}
	stored := randRows(1, n, dim)
	other := randRows(2, n, dim)
	qs := randRows(3, 3, dim)
	f := buildFlat(t, Dot, stored, seqIDs(n))
	g := buildFlat(t, Dot, other, seqIDs(n))
	kern := newFloatKernel(f, qs)
	packed := newFloatKernel(g, qs).pack(0, n, make([]float32, n*dim))
	out := [3][]float32{make([]float32, n), make([]float32, n), make([]float32, n)}
	kern.score3(0, 0, n, packed, out[0], out[1], out[2])
	for k := range 3 {
		for r := range n {
			want, _ := g.Score(qs[k], r)
			if math.Float32bits(out[k][r]) != math.Float32bits(want) {
				t.Fatalf("query %d row %d: %v, want the packed row's %v", k, r, out[k][r], want)
			}
		}
	}
}

// TestPackedRowsCache: a store built in memory packs its rows once, on its
// first batch search, and batch search then scores from that copy (pack
// hands out slices of it, not a chunk buffer); the copy is dropped by Add
// and rebuilt with the new rows, so results stay bit for bit those of
// single-query search; a store over mapped rows (FromRows) keeps no copy.
func TestPackedRowsCache(t *testing.T) {
	const dim, n, more = 96, 61, 7
	if !packable(dim) {
		t.Skip("no packed kernel on this machine")
	}
	rows := randRows(21, n+more, dim)
	ids := seqIDs(n + more)
	qs := randRows(22, 5, dim)
	f := buildFlat(t, Dot, rows[:n], ids[:n])
	if f.packed != nil {
		t.Fatal("rows packed before any batch search")
	}
	check := func(stage string, rowCount int) {
		t.Helper()
		got, err := f.Search(qs, rowCount, SearchOptions{Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		if len(f.packed) != rowCount*dim {
			t.Fatalf("%s: packed copy holds %d values, want %d", stage, len(f.packed), rowCount*dim)
		}
		want := make([]float32, dim)
		for r := range rowCount {
			packPhases(want, f.Row(r))
			for j, x := range want {
				if math.Float32bits(f.packed[r*dim+j]) != math.Float32bits(x) {
					t.Fatalf("%s: packed row %d differs at %d", stage, r, j)
				}
			}
		}
		if p := newFloatKernel(f, qs).pack(8, 16, make([]float32, 8*dim)); &p[0] != &f.packed[8*dim] {
			t.Fatalf("%s: pack did not hand out the packed copy", stage)
		}
		for qi, q := range qs {
			one, err := f.Search([][]float32{q}, rowCount, SearchOptions{Workers: 1})
			if err != nil {
				t.Fatal(err)
			}
			sameBits(t, fmt.Sprintf("%s, query %d", stage, qi), got[qi], one[0])
		}
	}
	check("first batch", n)
	first := &f.packed[0]
	check("second batch", n)
	if &f.packed[0] != first {
		t.Fatal("second batch packed the rows again")
	}
	if err := f.AddAll(ids[n:], rows[n:]); err != nil {
		t.Fatal(err)
	}
	if f.packed != nil {
		t.Fatal("Add kept the packed copy of the old rows")
	}
	check("after Add", n+more)

	m, err := FromRows(dim, Dot, f.IDs(), f.Data(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Search(qs, 10, SearchOptions{}); err != nil {
		t.Fatal(err)
	}
	if m.packed != nil || newFloatKernel(m, qs).packed != nil {
		t.Fatal("a store over mapped rows kept a packed copy")
	}
}
