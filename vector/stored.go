package vector

import (
	"fmt"
	"math"
	"sync"
)

// This file lets a store and its quantized forms be kept elsewhere (package
// index writes them into its file) and rebuilt around the stored arrays
// without copying them, so that they may live in a read-only memory map.

// Data returns the rows as stored (normalized under Cosine), row-major.
// The slice is the store's own; do not modify it.
func (f *Flat) Data() []float32 { return f.data[:len(f.data):len(f.data)] }

// FromRows returns a store over data (len(ids) rows of dim components,
// row-major, as Data returns them: already normalized under Cosine) without
// copying it or checking its values. rank, when not nil, is each row's
// position in the byte order of ids (the tie order), saving the sort a
// store otherwise does on its first search; it must be that permutation.
// Adding to the store later copies data first.
func FromRows(dim int, m Metric, ids []string, data []float32, rank []int32) (*Flat, error) {
	switch {
	case m != Cosine && m != Dot:
		return nil, fmt.Errorf("vector: unknown metric %d", m)
	case dim <= 0 && len(ids) > 0:
		return nil, fmt.Errorf("vector: %d rows of %d dimensions", len(ids), dim)
	case len(data) != len(ids)*dim:
		return nil, fmt.Errorf("vector: %d values for %d rows of %d dimensions", len(data), len(ids), dim)
	case rank != nil && len(rank) != len(ids):
		return nil, fmt.Errorf("vector: %d ranks for %d rows", len(rank), len(ids))
	case len(ids) >= math.MaxInt32:
		return nil, fmt.Errorf("vector: %d rows (at most %d)", len(ids), math.MaxInt32-1)
	}
	f := &Flat{dim: dim, metric: m, data: data[:len(data):len(data)], ids: ids[:len(ids):len(ids)], lazyIndex: new(sync.Once), rankOnce: new(sync.Once)}
	if rank != nil {
		f.rankOnce.Do(func() { f.rank = rank })
	}
	return f, nil
}

// Int8Data is an Int8's content: the codes (row-major, one int8 per
// component) and each dimension's affine map.
type Int8Data struct {
	Codes    []int8
	Lo, Step []float32
}

// Data returns the index's content. The slices are the index's own; do not
// modify them.
func (x *Int8) Data() Int8Data { return Int8Data{Codes: x.codes, Lo: x.lo, Step: x.step} }

// Int8FromData returns the int8 index of f whose content d holds (as Data
// returned it for an index of the same rows), without copying.
func Int8FromData(f *Flat, d Int8Data) (*Int8, error) {
	if len(d.Codes) != f.Len()*f.dim || len(d.Lo) != f.dim || len(d.Step) != f.dim {
		return nil, fmt.Errorf("vector: int8 data has %d codes and %d/%d scales; the store has %d rows of %d dimensions", len(d.Codes), len(d.Lo), len(d.Step), f.Len(), f.dim)
	}
	return &Int8{flat: f, codes: d.Codes, lo: d.Lo, step: d.Step}, nil
}

// Bits returns the packed sign bits, (dim+63)/64 words per row. The slice
// is the index's own; do not modify it.
func (b *Binary) Bits() []uint64 { return b.bits }

// BinaryFromBits returns the binary index of f whose sign bits are bits
// (as Bits returned them for an index of the same rows), without copying.
func BinaryFromBits(f *Flat, bits []uint64) (*Binary, error) {
	w := (f.dim + 63) / 64
	if len(bits) != f.Len()*w {
		return nil, fmt.Errorf("vector: %d words of sign bits; the store has %d rows of %d words", len(bits), f.Len(), w)
	}
	return &Binary{flat: f, words: w, bits: bits}, nil
}
