package vector

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
)

// Metric says how a query and a row are compared.
type Metric uint8

const (
	// Cosine L2-normalizes rows when they are added and queries when they
	// are searched, then takes the dot product: BEIR's cos_sim, which
	// R2MED uses for every dense retriever. It is the zero value.
	Cosine Metric = iota
	// Dot takes the raw inner product; vectors are stored as given.
	Dot
)

func (m Metric) String() string {
	switch m {
	case Cosine:
		return "cosine"
	case Dot:
		return "dot"
	}
	return fmt.Sprintf("Metric(%d)", m)
}

// ParseMetric reads the names String writes.
func ParseMetric(s string) (Metric, error) {
	switch s {
	case "cosine", "cos", "cos_sim":
		return Cosine, nil
	case "dot":
		return Dot, nil
	}
	return 0, fmt.Errorf("unknown metric %q (want cosine or dot)", s)
}

// Flat is an exact, in-memory vector store: rows of one dimension in one
// row-major float32 slice, each with a unique id. The zero value is an empty
// cosine store whose dimension is set by the first Add.
//
// Adding is not safe concurrently with anything else; searching is safe
// for concurrent use once adding is done.
type Flat struct {
	dim    int
	metric Metric
	data   []float32
	ids    []string
	index  map[string]int32
	// lazyIndex, when set, builds index on first use (stores made by
	// FromRows, which open in milliseconds and may never need it).
	lazyIndex *sync.Once

	rankOnce *sync.Once
	rank     []int32 // rank[i]: position of ids[i] in byte order, for ties

}

// ranks returns each row's position in id order, computing it on first
// use after the last Add.
func (f *Flat) ranks() []int32 {
	if len(f.ids) == 0 {
		return nil
	}
	// rankOnce is set by every path that adds rows (Add, Read, Truncate).
	f.rankOnce.Do(func() {
		order := make([]int32, len(f.ids))
		for i := range order {
			order[i] = int32(i)
		}
		slices.SortFunc(order, func(a, b int32) int { return strings.Compare(f.ids[a], f.ids[b]) })
		f.rank = make([]int32, len(f.ids))
		for r, i := range order {
			f.rank[i] = int32(r)
		}
	})
	return f.rank
}

// NewFlat returns an empty store of the given dimension and metric. A dim
// of 0 takes the dimension of the first row added.
func NewFlat(dim int, m Metric) *Flat {
	return &Flat{dim: dim, metric: m}
}

// ErrDim reports a vector whose length differs from the store's dimension.
var ErrDim = errors.New("dimension mismatch")

// Dim returns the row dimension (0 before the first Add of a store made
// without one).
func (f *Flat) Dim() int { return f.dim }

// Len returns the number of rows.
func (f *Flat) Len() int { return len(f.ids) }

// Metric returns the store's metric.
func (f *Flat) Metric() Metric { return f.metric }

// ID returns the id of row i.
func (f *Flat) ID(i int) string { return f.ids[i] }

// IDs returns the row ids in row order. The slice is the store's own; do
// not modify it.
func (f *Flat) IDs() []string { return f.ids }

// Row returns row i as stored (normalized under Cosine). The slice aliases
// the store; do not modify it.
func (f *Flat) Row(i int) []float32 { return f.data[i*f.dim : (i+1)*f.dim : (i+1)*f.dim] }

// Lookup returns the row index of id.
func (f *Flat) Lookup(id string) (int, bool) {
	i, ok := f.idIndex()[id]
	return int(i), ok
}

// idIndex returns the id → row map, building it first for a store made by
// FromRows.
func (f *Flat) idIndex() map[string]int32 {
	if f.lazyIndex != nil {
		f.lazyIndex.Do(func() {
			m := make(map[string]int32, len(f.ids))
			for i, id := range f.ids {
				m[id] = int32(i)
			}
			f.index = m
		})
	}
	return f.index
}

// Grow makes room for n more rows without reallocating.
func (f *Flat) Grow(n int) {
	if f.dim > 0 && cap(f.data)-len(f.data) < n*f.dim {
		d := make([]float32, len(f.data), len(f.data)+n*f.dim)
		copy(d, f.data)
		f.data = d
	}
	if cap(f.ids)-len(f.ids) < n {
		ids := make([]string, len(f.ids), len(f.ids)+n)
		copy(ids, f.ids)
		f.ids = ids
	}
}

// Add appends a copy of v under id; under Cosine the copy is
// L2-normalized. An all-zero vector stays zero (torch's normalize divides
// by max(norm, 1e-12)), so it scores 0 against everything. Ids must be
// unique and vectors finite.
func (f *Flat) Add(id string, v []float32) error {
	if f.dim == 0 {
		if len(v) == 0 {
			return fmt.Errorf("vector: add %q: empty vector", id)
		}
		f.dim = len(v)
	}
	if len(v) != f.dim {
		return fmt.Errorf("vector: add %q: %w: vector has %d dimensions, store has %d", id, ErrDim, len(v), f.dim)
	}
	if f.idIndex() == nil {
		f.index = make(map[string]int32, len(f.ids)+1)
	}
	if _, dup := f.index[id]; dup {
		return fmt.Errorf("vector: add %q: id already in the store (ids must be unique)", id)
	}
	if len(f.ids) >= math.MaxInt32 {
		return fmt.Errorf("vector: add %q: store is full (%d rows)", id, len(f.ids))
	}
	for j, x := range v {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return fmt.Errorf("vector: add %q: component %d is %v", id, j, x)
		}
	}
	n := len(f.data)
	f.data = append(f.data, v...)
	if f.metric == Cosine {
		normalize(f.data[n:])
	}
	f.index[id] = int32(len(f.ids))
	f.ids = append(f.ids, id)
	f.rankOnce, f.rank = new(sync.Once), nil
	return nil
}

// AddAll adds ids[i] with vs[i] for every i; on error, the rows before the
// failing one stay added.
func (f *Flat) AddAll(ids []string, vs [][]float32) error {
	if len(ids) != len(vs) {
		return fmt.Errorf("vector: %d ids but %d vectors", len(ids), len(vs))
	}
	f.Grow(len(ids))
	for i := range ids {
		if err := f.Add(ids[i], vs[i]); err != nil {
			return err
		}
	}
	return nil
}

// normalize scales v to unit L2 norm in place, as torch's
// F.normalize(p=2, eps=1e-12) does; the norm is summed in float64.
func normalize(v []float32) {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	n := float32(math.Sqrt(s))
	if n < 1e-12 {
		n = 1e-12
	}
	for i := range v {
		v[i] /= n
	}
}

// prepareQueries checks the query dimensions and returns the vectors the
// kernels score: copies, normalized under Cosine, one after another in one
// buffer. Each query's slice has the queries after it in its capacity
// (q[i][:j·dim] spans queries i … i+j−1), through which the batch kernel
// prefetches the next group it will score.
func prepareQueries(queries [][]float32, dim int, m Metric) ([][]float32, error) {
	out := make([][]float32, len(queries))
	buf := make([]float32, len(queries)*dim)
	for i, q := range queries {
		if len(q) != dim {
			return nil, fmt.Errorf("vector: query %d: %w: query has %d dimensions, store has %d", i, ErrDim, len(q), dim)
		}
		for j, x := range q {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return nil, fmt.Errorf("vector: query %d: component %d is %v", i, j, x)
			}
		}
		c := buf[i*dim : (i+1)*dim]
		copy(c, q)
		if m == Cosine {
			normalize(c)
		}
		out[i] = c
	}
	return out, nil
}

// Search returns, for every query, the k best rows, best first (see the
// package comment for the order and the exclusions). Fewer than k hits come
// back when the store, after exclusions, holds fewer rows.
func (f *Flat) Search(queries [][]float32, k int, opts SearchOptions) ([][]Hit, error) {
	qs, err := f.prepare(queries, k, opts)
	if err != nil {
		return nil, err
	}
	ex := f.exclusions(len(queries), opts)
	res := scan(newFloatKernel(f, qs), f.Len(), len(qs), k, ex, f.ranks(), opts.workers(), f.dim*4)
	return toHits(res, f.ids, nil), nil
}

// prepare checks a search's arguments against the store and returns the
// queries ready to score (normalized under Cosine).
func (f *Flat) prepare(queries [][]float32, k int, opts SearchOptions) ([][]float32, error) {
	if err := checkSearch(len(queries), k, opts); err != nil {
		return nil, err
	}
	if len(queries) > 0 && f.dim == 0 {
		return nil, errNoDim
	}
	return prepareQueries(queries, f.dim, f.metric)
}

// floatKernel scores float32 rows one query at a time (dotRows) or, in
// batches, six or three at a time (dot6Rows, dot3Rows), which give the
// same scores bit for bit. run holds the queries one after another, as
// prepareQueries leaves them and the six-query kernel reads them.
type floatKernel struct {
	f   *Flat
	run []float32
}

// newFloatKernel returns the kernel for queries qs as prepareQueries
// returned them: views, in order, of one buffer.
func newFloatKernel(f *Flat, qs [][]float32) *floatKernel {
	k := &floatKernel{f: f}
	if len(qs) > 0 {
		k.run = qs[0][:len(qs)*f.dim]
	}
	return k
}

// query returns query qi.
func (k *floatKernel) query(qi int) []float32 {
	d := k.f.dim
	return k.run[qi*d : (qi+1)*d]
}

func (k *floatKernel) score(qi, lo, hi int, out []float32) {
	d := k.f.dim
	dotRows(k.query(qi), k.f.data[lo*d:hi*d], out[:hi-lo])
}

func (k *floatKernel) scoreMany(qi, lo, hi int, out []float32, stride, most int) int {
	d, m := k.f.dim, hi-lo
	rows := k.f.data[lo*d : hi*d]
	switch {
	case most >= 6:
		// The next six are prefetched while these are scored.
		var next []float32
		if (qi+12)*d <= len(k.run) {
			next = k.run[(qi+6)*d : (qi+12)*d]
		}
		dot6Rows(k.run[qi*d:(qi+6)*d], rows, m, out, stride, next)
		return 6
	case most >= 3:
		dot3Rows(k.query(qi), k.query(qi+1), k.query(qi+2), rows, out[:m], out[stride:][:m], out[2*stride:][:m])
		return 3
	}
	dotRows(k.query(qi), rows, out[:m])
	return 1
}

// Score returns the exact score of query q (as Search would compute it)
// against row i.
func (f *Flat) Score(q []float32, i int) (float32, error) {
	qs, err := prepareQueries([][]float32{q}, f.dim, f.metric)
	if err != nil {
		return 0, err
	}
	return dot(qs[0], f.Row(i)), nil
}
