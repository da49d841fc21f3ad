package vector

import (
	"fmt"
	"math"
	"math/bits"
	"runtime"
	"runtime/debug"
	"slices"
	"sync"
)

// Index is what every searchable form of a store provides: the exact Flat
// and its quantized variants.
type Index interface {
	Search(queries [][]float32, k int, opts SearchOptions) ([][]Hit, error)
	Len() int
	Dim() int
}

var (
	_ Index = (*Flat)(nil)
	_ Index = (*Int8)(nil)
	_ Index = (*Binary)(nil)
)

// Int8 holds a Flat's rows scalar-quantized to int8, one affine map per
// dimension calibrated on the rows themselves (sentence-transformers'
// calibration, quantize_embeddings with precision "int8"): code =
// round((x−lo)/step) − 128 with lo and step = (hi−lo)/255 from the
// dimension's minimum and maximum, so every dimension uses all 256 levels
// whatever its spread. sentence-transformers truncates toward zero
// (numpy's astype(np.int8) of (x−lo)/step − 128) where this rounds to the
// nearest level, so a code can differ from its by one.
//
// Queries stay float until search: the query weights w = q·step are
// quantized symmetrically to 12-bit integers in [−2047, 2047] with a
// per-query scale a (the AVX2 kernel multiplies them as int16), and a row
// scores C + a·Σ r·code, where C = q·lo + 128·Σw does not depend on the
// row. That is an estimate of the query's dot product with the dequantized
// row, computed with an integer kernel. The Flat is kept for rescoring.
type Int8 struct {
	flat  *Flat
	codes []int8
	lo    []float32
	step  []float32
}

// NewInt8 quantizes f's rows. Rows added to f later are not in the index.
func NewInt8(f *Flat) *Int8 {
	d, n := f.dim, f.Len()
	x := &Int8{flat: f, codes: make([]int8, n*d), lo: make([]float32, d), step: make([]float32, d)}
	if n == 0 {
		return x
	}
	hi := make([]float32, d)
	copy(x.lo, f.data[:d])
	copy(hi, f.data[:d])
	for i := 1; i < n; i++ {
		for j, v := range f.data[i*d : (i+1)*d] {
			x.lo[j] = min(x.lo[j], v)
			hi[j] = max(hi[j], v)
		}
	}
	for j := range d {
		x.step[j] = (hi[j] - x.lo[j]) / 255
	}
	parallelRows(n, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			row := f.data[i*d : (i+1)*d]
			c := x.codes[i*d : (i+1)*d]
			for j, v := range row {
				var q float64
				if x.step[j] > 0 {
					q = math.Round(float64(v-x.lo[j]) / float64(x.step[j]))
				}
				c[j] = int8(int(min(max(q, 0), 255)) - 128)
			}
		}
	})
	return x
}

// Flat returns the store the index was built from.
func (x *Int8) Flat() *Flat { return x.flat }
func (x *Int8) Len() int    { return len(x.codes) / max(x.flat.dim, 1) }
func (x *Int8) Dim() int    { return x.flat.dim }

type int8Kernel struct {
	x *Int8
	q [][]int16
}

func (k *int8Kernel) score(qi, lo, hi int, out []float32) {
	q := k.q[qi]
	d := len(q)
	codes := k.x.codes
	for r := lo; r < hi; r++ {
		row := codes[r*d : (r+1)*d]
		if d <= maxDotQ16Len {
			out[r-lo] = float32(dotQ16(q, row))
			continue
		}
		var s int64
		for j := 0; j < d; j += maxDotQ16Len {
			e := min(j+maxDotQ16Len, d)
			s += int64(dotQ16(q[j:e], row[j:e]))
		}
		out[r-lo] = float32(s)
	}
}

// Search ranks rows by the quantized score and, with opts.Rescore, reorders
// the best Oversample·k by their exact float32 scores. Without rescoring
// the reported scores are the int8 estimates of the float scores.
func (x *Int8) Search(queries [][]float32, k int, opts SearchOptions) ([][]Hit, error) {
	f := x.flat
	qs, err := f.prepare(queries, k, opts)
	if err != nil {
		return nil, err
	}
	d := f.dim
	kern := &int8Kernel{x: x, q: make([][]int16, len(qs))}
	scale := make([]float64, len(qs))
	offset := make([]float64, len(qs))
	buf := make([]int16, len(qs)*d)
	w := make([]float64, d)
	for qi, q := range qs {
		var m, c, sw float64
		for j := range d {
			w[j] = float64(q[j]) * float64(x.step[j])
			m = max(m, math.Abs(w[j]))
			c += float64(q[j]) * float64(x.lo[j])
			sw += w[j]
		}
		r := buf[qi*d : (qi+1)*d : (qi+1)*d]
		if m > 0 {
			a := m / maxQ16
			for j := range d {
				r[j] = int16(math.Round(w[j] / a))
			}
			scale[qi] = a
		}
		offset[qi] = c + 128*sw
		kern.q[qi] = r
	}
	conv := func(qi int, raw float32) float32 { return float32(offset[qi] + scale[qi]*float64(raw)) }
	return searchQuantized(f, kern, qs, k, opts, d, conv), nil
}

// Binary holds the sign bits of a Flat's rows (bit set when the component
// is > 0, as sentence-transformers' binary quantization), packed 64 to a
// word. Queries are binarized the same way; a row scores the dot product of
// the two ±1 vectors, dim − 2·Hamming distance, reported divided by dim so
// that it lies in [−1, 1]. The Flat is kept for rescoring.
type Binary struct {
	flat  *Flat
	words int
	bits  []uint64
}

// NewBinary binarizes f's rows. Rows added to f later are not in the index.
func NewBinary(f *Flat) *Binary {
	d, n := f.dim, f.Len()
	w := (d + 63) / 64
	b := &Binary{flat: f, words: w, bits: make([]uint64, n*w)}
	parallelRows(n, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			packSigns(b.bits[i*w:(i+1)*w], f.data[i*d:(i+1)*d])
		}
	})
	return b
}

func packSigns(dst []uint64, v []float32) {
	clear(dst)
	for j, x := range v {
		if x > 0 {
			dst[j/64] |= 1 << (j % 64)
		}
	}
}

// Flat returns the store the index was built from.
func (b *Binary) Flat() *Flat { return b.flat }
func (b *Binary) Len() int    { return len(b.bits) / max(b.words, 1) }
func (b *Binary) Dim() int    { return b.flat.dim }

type binaryKernel struct {
	b   *Binary
	q   [][]uint64
	dim int
}

func (k *binaryKernel) score(qi, lo, hi int, out []float32) {
	q := k.q[qi]
	w := len(q)
	data := k.b.bits
	for r := lo; r < hi; r++ {
		row := data[r*w : (r+1)*w : (r+1)*w]
		row = row[:len(q)]
		// four independent popcounts per step: the loop is
		// latency-bound otherwise
		h0, h1, h2, h3 := 0, 0, 0, 0
		j := 0
		for ; j+4 <= len(q); j += 4 {
			h0 += bits.OnesCount64(q[j] ^ row[j])
			h1 += bits.OnesCount64(q[j+1] ^ row[j+1])
			h2 += bits.OnesCount64(q[j+2] ^ row[j+2])
			h3 += bits.OnesCount64(q[j+3] ^ row[j+3])
		}
		for ; j < len(q); j++ {
			h0 += bits.OnesCount64(q[j] ^ row[j])
		}
		out[r-lo] = float32(k.dim - 2*(h0+h1+h2+h3))
	}
}

// Search ranks rows by the ±1 dot product of sign bits and, with
// opts.Rescore, reorders the best Oversample·k by their exact float32
// scores.
func (b *Binary) Search(queries [][]float32, k int, opts SearchOptions) ([][]Hit, error) {
	f := b.flat
	qs, err := f.prepare(queries, k, opts)
	if err != nil {
		return nil, err
	}
	kern := &binaryKernel{b: b, q: make([][]uint64, len(qs)), dim: f.dim}
	for qi, q := range qs {
		kern.q[qi] = make([]uint64, b.words)
		packSigns(kern.q[qi], q)
	}
	d := float32(f.dim)
	conv := func(_ int, raw float32) float32 { return raw / d }
	return searchQuantized(f, kern, qs, k, opts, b.words*8, conv), nil
}

// searchQuantized runs a quantized kernel and, when asked, rescores its
// candidates with the exact float32 kernel. qs are the prepared float
// queries.
func searchQuantized(f *Flat, kern kernel, qs [][]float32, k int, opts SearchOptions, rowBytes int, conv func(int, float32) float32) [][]Hit {
	ex := f.exclusions(len(qs), opts)
	if !opts.Rescore {
		res := scan(kern, f.Len(), len(qs), k, ex, f.ranks(), opts.workers(), rowBytes)
		return toHits(res, f.ids, conv)
	}
	over := opts.Oversample
	if over == 0 {
		over = 4
	}
	kc := int(math.Ceil(float64(k) * over))
	res := scan(kern, f.Len(), len(qs), kc, ex, f.ranks(), opts.workers(), rowBytes)
	parallelRows(len(res), func(lo, hi int) {
		for qi := lo; qi < hi; qi++ {
			cs := res[qi]
			for i := range cs {
				cs[i].score = dot(qs[qi], f.Row(int(cs[i].idx)))
			}
			sortCands(cs, f.ranks())
			res[qi] = slices.Clip(cs[:min(k, len(cs))])
		}
	})
	return toHits(res, f.ids, nil)
}

// parallelRows splits [0, n) over GOMAXPROCS goroutines.
func parallelRows(n int, fn func(lo, hi int)) {
	workers := min(max(1, n/1024), runtime.GOMAXPROCS(0))
	if workers <= 1 {
		fn(0, n)
		return
	}
	var wg sync.WaitGroup
	var fault carried
	per := (n + workers - 1) / workers
	for lo := 0; lo < n; lo += per {
		wg.Add(1)
		go func(lo int) {
			defer wg.Done()
			defer fault.catch()
			debug.SetPanicOnFault(true) // rows may be a mapped file's (see carried)
			fn(lo, min(n, lo+per))
		}(lo)
	}
	wg.Wait()
	fault.rethrow()
}

// Truncate returns a new store holding the first dim components of every
// row (Matryoshka truncation). Under Cosine the truncated rows are
// renormalized; truncating a normalized row and renormalizing equals
// normalizing the truncated original, so nothing is lost by having stored
// normalized rows. Search the result with queries cut the same way (see
// TruncateQueries).
func (f *Flat) Truncate(dim int) (*Flat, error) {
	if dim <= 0 || dim > f.dim {
		return nil, fmt.Errorf("vector: truncate to %d dimensions: want 1 to %d", dim, f.dim)
	}
	n := f.Len()
	t := &Flat{dim: dim, metric: f.metric, rankOnce: new(sync.Once), data: make([]float32, n*dim), ids: slices.Clone(f.ids), index: make(map[string]int32, n)}
	for i := range n {
		row := t.data[i*dim : (i+1)*dim]
		copy(row, f.data[i*f.dim:i*f.dim+dim])
		if f.metric == Cosine {
			normalize(row)
		}
		t.index[f.ids[i]] = int32(i)
	}
	return t, nil
}

// TruncateQueries returns the first dim components of each query (sharing
// their memory); Search normalizes them under Cosine.
func TruncateQueries(queries [][]float32, dim int) ([][]float32, error) {
	out := make([][]float32, len(queries))
	for i, q := range queries {
		if len(q) < dim {
			return nil, fmt.Errorf("vector: query %d has %d dimensions, cannot truncate to %d", i, len(q), dim)
		}
		out[i] = q[:dim:dim]
	}
	return out, nil
}
