package vector

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// randRows returns n seeded random rows of dimension dim.
func randRows(seed uint64, n, dim int) [][]float32 {
	r := rand.New(rand.NewPCG(seed, 1))
	out := make([][]float32, n)
	for i := range out {
		v := make([]float32, dim)
		for j := range v {
			v[j] = float32(r.NormFloat64())
		}
		out[i] = v
	}
	return out
}

func buildFlat(t testing.TB, m Metric, rows [][]float32, ids []string) *Flat {
	t.Helper()
	f := NewFlat(len(rows[0]), m)
	if err := f.AddAll(ids, rows); err != nil {
		t.Fatal(err)
	}
	return f
}

func seqIDs(n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("d%05d", i)
	}
	return ids
}

// naiveSearch is the O(Q·D) reference: float64 dot products of the
// normalized (float64) vectors, a full sort by score desc then id asc,
// exclusions applied before cutting at k.
func naiveSearch(m Metric, rows, queries [][]float32, ids []string, k int, excl func(qi int, id string) bool) [][]Hit {
	norm := func(v []float32) []float64 {
		out := make([]float64, len(v))
		var s float64
		for _, x := range v {
			s += float64(x) * float64(x)
		}
		n := math.Sqrt(s)
		for i, x := range v {
			out[i] = float64(x)
			if m == Cosine {
				out[i] /= n
			}
		}
		return out
	}
	var res [][]Hit
	for qi, q := range queries {
		qv := norm(q)
		var hs []Hit
		for i, r := range rows {
			if excl != nil && excl(qi, ids[i]) {
				continue
			}
			rv := norm(r)
			var s float64
			for j := range qv {
				s += qv[j] * rv[j]
			}
			hs = append(hs, Hit{Index: i, ID: ids[i], Score: float32(s)})
		}
		slices.SortFunc(hs, func(a, b Hit) int {
			if a.Score != b.Score {
				if a.Score > b.Score {
					return -1
				}
				return 1
			}
			return strings.Compare(a.ID, b.ID)
		})
		if len(hs) > k {
			hs = hs[:k]
		}
		res = append(res, hs)
	}
	return res
}

// sameHits compares a search result with the reference: scores within tol,
// and the same ids in the same order, except that rows whose reference
// scores are within tol of each other may swap (float32 and float64 sums
// can order near-ties differently).
func sameHits(t *testing.T, what string, got, want [][]Hit, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d result lists, want %d", what, len(got), len(want))
	}
	for qi := range want {
		g, w := got[qi], want[qi]
		if len(g) != len(w) {
			t.Fatalf("%s: query %d: %d hits, want %d", what, qi, len(g), len(w))
		}
		for i := range w {
			if math.Abs(float64(g[i].Score-w[i].Score)) > tol {
				t.Fatalf("%s: query %d rank %d: score %v (%s), want %v (%s)", what, qi, i, g[i].Score, g[i].ID, w[i].Score, w[i].ID)
			}
			if g[i].ID != w[i].ID && math.Abs(float64(g[i].Score-w[i].Score)) > tol {
				t.Fatalf("%s: query %d rank %d: id %s, want %s", what, qi, i, g[i].ID, w[i].ID)
			}
			if w[i].ID == g[i].ID && w[i].Index != g[i].Index {
				t.Fatalf("%s: query %d rank %d: index %d, want %d", what, qi, i, g[i].Index, w[i].Index)
			}
		}
	}
}

func TestFlatMatchesNaive(t *testing.T) {
	for _, m := range []Metric{Cosine, Dot} {
		for _, tc := range []struct{ n, dim, nq, k int }{
			{1, 3, 2, 5}, {37, 7, 5, 10}, {1000, 64, 9, 10}, {3000, 33, 4, 100}, {500, 128, 3, 500},
		} {
			rows := randRows(uint64(tc.n*tc.dim), tc.n, tc.dim)
			qs := randRows(uint64(tc.nq), tc.nq, tc.dim)
			ids := seqIDs(tc.n)
			rand.New(rand.NewPCG(7, 7)).Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
			f := buildFlat(t, m, rows, ids)
			want := naiveSearch(m, rows, qs, ids, tc.k, nil)
			for _, w := range []int{1, 2, 3, 8} {
				got, err := f.Search(qs, tc.k, SearchOptions{Workers: w})
				if err != nil {
					t.Fatal(err)
				}
				tol := 1e-5
				if m == Dot {
					tol = 1e-5 * float64(tc.dim) // unnormalized sums are larger
				}
				sameHits(t, fmt.Sprintf("%v n=%d dim=%d workers=%d", m, tc.n, tc.dim, w), got, want, tol)
			}
		}
	}
}

// Ties: equal scores come back by id ascending, and the same rows whatever
// the worker count, also when the tie straddles the k boundary.
func TestFlatTies(t *testing.T) {
	dim := 8
	base := randRows(3, 4, dim)
	var rows [][]float32
	var ids []string
	// 200 rows in 4 groups of identical vectors; ids scrambled so that
	// index order and id order differ.
	for i := range 200 {
		rows = append(rows, base[i%4])
		ids = append(ids, fmt.Sprintf("id%03d", (i*7919)%200))
	}
	f := buildFlat(t, Cosine, rows, ids)
	qs := [][]float32{base[1], base[2]}
	want := naiveSearch(Cosine, rows, qs, ids, 75, nil)
	var first [][]Hit
	for _, w := range []int{1, 2, 5, 16} {
		got, err := f.Search(qs, 75, SearchOptions{Workers: w})
		if err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = got
		} else if !slices.EqualFunc(first, got, slices.Equal) {
			t.Fatalf("workers=%d: results differ from workers=1", w)
		}
		for qi := range want {
			// identical vectors give bit-identical scores, so ids must
			// match exactly
			for i := range want[qi] {
				if got[qi][i].ID != want[qi][i].ID {
					t.Fatalf("workers=%d query %d rank %d: %s (%v), want %s (%v)", w, qi, i, got[qi][i].ID, got[qi][i].Score, want[qi][i].ID, want[qi][i].Score)
				}
			}
		}
	}
	// the top 50 of query 0 are its own group, ids ascending
	g := first[0]
	for i := 1; i < 50; i++ {
		if g[i].Score != g[0].Score || g[i].ID <= g[i-1].ID {
			t.Fatalf("rank %d: %s %v after %s %v: want equal scores, ids ascending", i, g[i].ID, g[i].Score, g[i-1].ID, g[i-1].Score)
		}
	}
}

func TestFlatExclusions(t *testing.T) {
	rows := randRows(11, 300, 16)
	ids := seqIDs(300)
	f := buildFlat(t, Cosine, rows, ids)
	// queries equal to rows 5, 6, 7, with query ids naming those rows
	qs := [][]float32{rows[5], rows[6], rows[7]}
	qids := []string{"d00005", "d00006", "not-a-doc"}
	excl := [][]string{{"d00010", "d00011", "nope"}, nil, {"d00007"}}
	got, err := f.Search(qs, 10, SearchOptions{SkipSelf: true, QueryIDs: qids, Exclude: excl})
	if err != nil {
		t.Fatal(err)
	}
	want := naiveSearch(Cosine, rows, qs, ids, 10, func(qi int, id string) bool {
		return id == qids[qi] || slices.Contains(excl[qi], id)
	})
	sameHits(t, "exclusions", got, want, 1e-5)
	for qi, hs := range got {
		if len(hs) != 10 {
			t.Fatalf("query %d: %d hits, want 10 (exclusions apply before top-k)", qi, len(hs))
		}
		for _, h := range hs {
			if h.ID == qids[qi] || slices.Contains(excl[qi], h.ID) {
				t.Fatalf("query %d returned excluded %s", qi, h.ID)
			}
		}
	}
	// without SkipSelf the row itself is first
	got, _ = f.Search(qs[:1], 1, SearchOptions{})
	if got[0][0].ID != "d00005" {
		t.Fatalf("self not first without SkipSelf: %+v", got[0])
	}
	// k larger than what is left after exclusions
	got, _ = f.Search(qs[:1], 1000, SearchOptions{SkipSelf: true, QueryIDs: qids[:1], Exclude: [][]string{{"d00001"}}})
	if len(got[0]) != 298 {
		t.Fatalf("k>n with 2 exclusions: %d hits, want 298", len(got[0]))
	}
}

func TestFlatEdgeCases(t *testing.T) {
	var empty Flat
	if _, err := empty.Search([][]float32{{1, 2}}, 3, SearchOptions{}); err == nil {
		t.Fatal("search of an empty store without a dimension: want an error")
	}
	res, err := empty.Search(nil, 3, SearchOptions{})
	if err != nil || len(res) != 0 {
		t.Fatalf("no queries: %v %v", res, err)
	}
	e := NewFlat(3, Cosine)
	res, err = e.Search([][]float32{{1, 2, 3}}, 3, SearchOptions{})
	if err != nil || len(res) != 1 || len(res[0]) != 0 {
		t.Fatalf("empty store: %v %v; want one empty list", res, err)
	}
	if err := e.Add("a", []float32{1, 2}); !errors.Is(err, ErrDim) {
		t.Fatalf("add with wrong dim: %v", err)
	}
	if err := e.Add("a", []float32{3, 0, 4}); err != nil {
		t.Fatal(err)
	}
	if r := e.Row(0); r[0] != 0.6 || r[2] != 0.8 {
		t.Fatalf("cosine row not normalized: %v", r)
	}
	if err := e.Add("a", []float32{1, 2, 3}); err == nil || !strings.Contains(err.Error(), "already") {
		t.Fatalf("duplicate id: %v", err)
	}
	if err := e.Add("nan", []float32{1, float32(math.NaN()), 3}); err == nil {
		t.Fatal("NaN component accepted")
	}
	if err := e.Add("zero", []float32{0, 0, 0}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Search([][]float32{{1, 2}}, 3, SearchOptions{}); !errors.Is(err, ErrDim) || !strings.Contains(err.Error(), "query 0") {
		t.Fatalf("query dim mismatch: %v", err)
	}
	if _, err := e.Search([][]float32{{1, 2, 3}}, -1, SearchOptions{}); err == nil {
		t.Fatal("negative k accepted")
	}
	if _, err := e.Search([][]float32{{1, 2, 3}}, 1, SearchOptions{SkipSelf: true}); err == nil {
		t.Fatal("SkipSelf without query ids accepted")
	}
	if _, err := e.Search([][]float32{{1, 2, 3}}, 1, SearchOptions{Exclude: [][]string{{}, {}}}); err == nil {
		t.Fatal("Exclude of the wrong length accepted")
	}
	res, err = e.Search([][]float32{{3, 0, 4}}, 10, SearchOptions{})
	if err != nil || len(res[0]) != 2 || res[0][0].ID != "a" || res[0][1].ID != "zero" || res[0][1].Score != 0 {
		t.Fatalf("k > n: %+v %v", res, err)
	}
	if math.Abs(float64(res[0][0].Score)-1) > 1e-6 {
		t.Fatalf("cosine of a vector with itself: %v", res[0][0].Score)
	}
	res, _ = e.Search([][]float32{{3, 0, 4}}, 0, SearchOptions{})
	if len(res[0]) != 0 {
		t.Fatalf("k=0: %v", res)
	}
	// the zero value takes the dimension of the first row
	var z Flat
	if err := z.Add("x", []float32{1, 1}); err != nil || z.Dim() != 2 || z.Metric() != Cosine {
		t.Fatalf("zero Flat: %v dim=%d", err, z.Dim())
	}
}

func TestParseMetric(t *testing.T) {
	for _, m := range []Metric{Cosine, Dot} {
		got, err := ParseMetric(m.String())
		if err != nil || got != m {
			t.Fatalf("%v: %v %v", m, got, err)
		}
	}
	if _, err := ParseMetric("l2"); err == nil {
		t.Fatal("l2 accepted")
	}
}

// Searches may run concurrently once adding is done (the id ranks used for
// ties are computed once, on first use).
func TestFlatConcurrentSearch(t *testing.T) {
	rows := randRows(4, 500, 8)
	f := buildFlat(t, Cosine, rows, seqIDs(500))
	want, _ := naiveSearch(Cosine, rows, rows[:3], f.IDs(), 5, nil), 0
	done := make(chan [][]Hit)
	for range 4 {
		go func() {
			got, _ := f.Search(rows[:3], 5, SearchOptions{Workers: 2})
			done <- got
		}()
	}
	for range 4 {
		sameHits(t, "concurrent", <-done, want, 1e-5)
	}
}

// TestBatchSearchMatchesSingleQueries: a batch (scored three queries per
// pass over the rows) returns exactly what each query searched alone
// returns — same rows, same scores to the bit — for dimensions with and
// without whole eight-wide steps, batch sizes with every
// remainder mod 3, several worker counts and BEIR's self-skip; and both
// agree with the float64 reference.
func TestBatchSearchMatchesSingleQueries(t *testing.T) {
	for _, dim := range []int{7, 32, 100, 768} {
		rows := randRows(uint64(dim), 1500, dim)
		ids := seqIDs(len(rows))
		f := buildFlat(t, Cosine, rows, ids)
		for _, nq := range []int{3, 7, 11} {
			qs := randRows(uint64(nq*dim+1), nq, dim)
			qids := slices.Clone(ids[:nq]) // each query skips "its" row
			want := make([][]Hit, nq)
			for i, q := range qs {
				h, err := f.Search([][]float32{q}, 50, SearchOptions{Workers: 1, SkipSelf: true, QueryIDs: qids[i : i+1]})
				if err != nil {
					t.Fatal(err)
				}
				want[i] = h[0]
			}
			for _, w := range []int{1, 2, 5} {
				got, err := f.Search(qs, 50, SearchOptions{Workers: w, SkipSelf: true, QueryIDs: qids})
				if err != nil {
					t.Fatal(err)
				}
				if !slices.EqualFunc(got, want, func(a, b []Hit) bool { return slices.Equal(a, b) }) {
					t.Fatalf("dim %d, %d queries, %d workers: batch hits differ from one query at a time", dim, nq, w)
				}
			}
			ref := naiveSearch(Cosine, rows, qs, ids, 50, func(qi int, id string) bool { return id == qids[qi] })
			sameHits(t, fmt.Sprintf("dim %d batch of %d", dim, nq), want, ref, 1e-5)
		}
	}
}
