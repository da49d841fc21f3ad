package vector

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// clustered returns n rows and nq queries around nc random centers (row i
// and query i belong to center i mod nc): row = center + noise, the
// structure real embeddings of topical corpora have.
func clustered(seed uint64, n, nq, nc, dim int, noise float64) (rows, queries [][]float32) {
	r := rand.New(rand.NewPCG(seed, 3))
	centers := make([][]float64, nc)
	for c := range centers {
		centers[c] = make([]float64, dim)
		for j := range dim {
			centers[c][j] = r.NormFloat64()
		}
	}
	point := func(i int) []float32 {
		c := centers[i%nc]
		v := make([]float32, dim)
		for j := range v {
			v[j] = float32(c[j] + noise*r.NormFloat64())
		}
		return v
	}
	for i := range n {
		rows = append(rows, point(i))
	}
	for i := range nq {
		queries = append(queries, point(i))
	}
	return rows, queries
}

// agreement returns the fraction of queries whose top-k ids equal the
// reference's exactly (same order), and the mean overlap of the id sets.
func agreement(got, want [][]Hit) (exact, overlap float64) {
	for qi := range want {
		g := make([]string, len(got[qi]))
		w := make([]string, len(want[qi]))
		for i := range g {
			g[i] = got[qi][i].ID
		}
		for i := range w {
			w[i] = want[qi][i].ID
		}
		if slices.Equal(g, w) {
			exact++
		}
		n := 0
		for _, id := range g {
			if slices.Contains(w, id) {
				n++
			}
		}
		overlap += float64(n) / float64(len(w))
	}
	return exact / float64(len(want)), overlap / float64(len(want))
}

// Quantized search with rescoring must give back the float top-10 on
// clustered data. Rescoring orders the candidates by the exact float score,
// so a query's top-10 comes out exactly right whenever all ten true hits
// are among the Oversample·10 quantized candidates. Two data sets:
//
//   - dense clusters (100 rows each, noise 0.6): the top-10 is decided by
//     fine differences inside one cluster. int8's error per dimension is at
//     most step/2 (1/510 of the dimension's range), far below those
//     differences at rank 40, so rescored int8 must match on ≥ 99% of
//     queries (observed: all). Sign bits cannot resolve inside a cluster,
//     so binary is only checked for a loose overlap there.
//   - separated clusters (12 rows each, noise 0.3): the true top-10 lies in
//     the query's own cluster, and its 12 rows are far apart from the rest
//     in Hamming distance too, so 4× oversampling (40 candidates) holds the
//     whole cluster and rescored binary must match on ≥ 99% of queries.
//
// Without rescoring int8 alone already shares ≥ 97% of the top-10 ids, and
// binary alone ≥ 80% on separated clusters: it finds the right cluster but
// cannot tell which 10 of its 12 rows are closest.
func TestQuantizedRecall(t *testing.T) {
	const dim = 256
	type check struct {
		name                 string
		build                func(*Flat) Index
		opts                 SearchOptions
		minExact, minOverlap float64
	}
	i8 := func(f *Flat) Index { return NewInt8(f) }
	bin := func(f *Flat) Index { return NewBinary(f) }
	for _, set := range []struct {
		name   string
		n, nc  int
		noise  float64
		checks []check
	}{
		{"dense", 4000, 40, 0.6, []check{
			{"int8", i8, SearchOptions{}, 0, 0.97},
			{"int8+rescore", i8, SearchOptions{Rescore: true}, 0.99, 0.999},
			{"binary+rescore", bin, SearchOptions{Rescore: true}, 0, 0.5},
		}},
		{"separated", 4800, 400, 0.3, []check{
			{"int8+rescore", i8, SearchOptions{Rescore: true}, 0.99, 0.999},
			{"binary", bin, SearchOptions{}, 0, 0.8},
			{"binary+rescore", bin, SearchOptions{Rescore: true}, 0.99, 0.999},
		}},
	} {
		rows, qs := clustered(42, set.n, 200, set.nc, dim, set.noise)
		ids := seqIDs(len(rows))
		for _, m := range []Metric{Cosine, Dot} {
			f := buildFlat(t, m, rows, ids)
			want, err := f.Search(qs, 10, SearchOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for _, tc := range set.checks {
				got, err := tc.build(f).Search(qs, 10, tc.opts)
				if err != nil {
					t.Fatal(err)
				}
				exact, overlap := agreement(got, want)
				t.Logf("%s %v %s: exact top-10 %.3f, overlap %.4f", set.name, m, tc.name, exact, overlap)
				if exact < tc.minExact || overlap < tc.minOverlap {
					t.Errorf("%s %v %s: exact top-10 %.3f (want ≥ %.3f), overlap %.4f (want ≥ %.4f)", set.name, m, tc.name, exact, tc.minExact, overlap, tc.minOverlap)
				}
				if tc.opts.Rescore {
					// rescored scores are the exact float scores
					for qi := range got {
						for _, h := range got[qi] {
							s, _ := f.Score(qs[qi], h.Index)
							if h.Score != s {
								t.Fatalf("%s: rescored score %v of %s, exact %v", tc.name, h.Score, h.ID, s)
							}
						}
					}
				}
			}
		}
	}
}

// The int8 score estimates the float score; the binary score is the ±1 dot
// product over dim.
func TestQuantizedScores(t *testing.T) {
	rows, qs := clustered(5, 500, 20, 5, 64, 0.5)
	f := buildFlat(t, Cosine, rows, seqIDs(len(rows)))
	got, err := NewInt8(f).Search(qs, 500, SearchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for qi, hs := range got {
		for _, h := range hs {
			s, _ := f.Score(qs[qi], h.Index)
			if d := h.Score - s; d > 0.01 || d < -0.01 {
				t.Fatalf("query %d row %s: int8 estimate %v, float %v", qi, h.ID, h.Score, s)
			}
		}
	}
	b := NewBinary(f)
	got, _ = b.Search(qs[:1], 500, SearchOptions{})
	q := make([]float32, 64)
	copy(q, qs[0])
	for _, h := range got[0] {
		var dot int
		for j, x := range f.Row(h.Index) {
			if (x > 0) == (q[j] > 0) {
				dot++
			} else {
				dot--
			}
		}
		if want := float32(dot) / 64; h.Score != want {
			t.Fatalf("binary score of %s: %v, want %v", h.ID, h.Score, want)
		}
	}
}

// Quantized search keeps Flat's contract: exclusions before top-k, ties by
// id, k > n, dimension errors, and results independent of worker count.
func TestQuantizedContract(t *testing.T) {
	rows, qs := clustered(9, 300, 4, 3, 40, 0.3)
	ids := seqIDs(len(rows))
	f := buildFlat(t, Cosine, rows, ids)
	for _, idx := range []Index{NewInt8(f), NewBinary(f)} {
		name := fmt.Sprintf("%T", idx)
		for _, rescore := range []bool{false, true} {
			opts := SearchOptions{Rescore: rescore, SkipSelf: true, QueryIDs: []string{"d00000", "d00001", "x", "y"},
				Exclude: [][]string{{"d00002"}, nil, nil, {"d00003"}}}
			var first [][]Hit
			for _, w := range []int{1, 2, 7} {
				opts.Workers = w
				got, err := idx.Search(qs, 1000, opts)
				if err != nil {
					t.Fatal(err)
				}
				if first == nil {
					first = got
				} else if !slices.EqualFunc(first, got, slices.Equal) {
					t.Fatalf("%s rescore=%v: workers=%d differs", name, rescore, w)
				}
			}
			wantLen := []int{298, 299, 300, 299}
			for qi, hs := range first {
				if len(hs) != wantLen[qi] {
					t.Fatalf("%s rescore=%v query %d: %d hits, want %d", name, rescore, qi, len(hs), wantLen[qi])
				}
				for i, h := range hs {
					if h.ID == opts.QueryIDs[qi] || slices.Contains(opts.Exclude[qi], h.ID) {
						t.Fatalf("%s: excluded %s returned", name, h.ID)
					}
					if i > 0 && (h.Score > hs[i-1].Score || h.Score == hs[i-1].Score && h.ID < hs[i-1].ID) {
						t.Fatalf("%s rescore=%v: rank %d out of order: %+v after %+v", name, rescore, i, h, hs[i-1])
					}
				}
			}
		}
		if _, err := idx.Search([][]float32{{1}}, 1, SearchOptions{}); err == nil {
			t.Fatalf("%s: dimension mismatch accepted", name)
		}
	}
	empty := NewFlat(4, Cosine)
	for _, idx := range []Index{NewInt8(empty), NewBinary(empty)} {
		got, err := idx.Search([][]float32{{1, 2, 3, 4}}, 5, SearchOptions{Rescore: true})
		if err != nil || len(got) != 1 || len(got[0]) != 0 {
			t.Fatalf("%T on an empty store: %v %v", idx, got, err)
		}
	}
}

func TestTruncate(t *testing.T) {
	rows := randRows(8, 200, 32)
	qs := randRows(9, 5, 32)
	ids := seqIDs(200)
	for _, m := range []Metric{Cosine, Dot} {
		f := buildFlat(t, m, rows, ids)
		tr, err := f.Truncate(12)
		if err != nil {
			t.Fatal(err)
		}
		short := make([][]float32, len(rows))
		for i, r := range rows {
			short[i] = r[:12]
		}
		tq, err := TruncateQueries(qs, 12)
		if err != nil {
			t.Fatal(err)
		}
		got, err := tr.Search(tq, 20, SearchOptions{})
		if err != nil {
			t.Fatal(err)
		}
		sameHits(t, fmt.Sprintf("truncate %v", m), got, naiveSearch(m, short, tq, ids, 20, nil), 1e-5*12)
		if i, ok := tr.Lookup("d00007"); !ok || i != 7 {
			t.Fatal("truncated store lost its id index")
		}
	}
	f := buildFlat(t, Cosine, rows, ids)
	for _, d := range []int{0, -1, 33} {
		if _, err := f.Truncate(d); err == nil {
			t.Fatalf("truncate to %d accepted", d)
		}
	}
	if _, err := TruncateQueries(qs, 40); err == nil {
		t.Fatal("truncating queries to more dimensions than they have accepted")
	}
}
