package vector

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"math"
	"os"
	"sync"

	"github.com/r2med/r2med/internal/fileio"
)

// The vector file format (version 1), all integers little-endian:
//
//	offset  size  field
//	0       8     magic "R2MEDVEC"
//	8       4     version = 1
//	12      1     dtype: 1 = float32
//	13      1     metric: 0 = cosine (rows stored normalized), 1 = dot
//	14      2     reserved, 0
//	16      4     dim
//	20      8     count
//	28      …     count ids, each a uint32 byte length and the UTF-8 bytes
//	…       …     count × dim float32 values, row-major
//	end−4   4     CRC-32C (Castagnoli) of every byte before it
//
// Rows are written as stored, so a file reads back bit for bit.
const (
	fileMagic   = "R2MEDVEC"
	fileVersion = 1
	dtypeF32    = 1
	headerSize  = 28
	maxIDLen    = 1 << 20
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// WriteFile writes the store to path, atomically: the file appears whole or
// not at all.
func (f *Flat) WriteFile(path string) error {
	err := fileio.WriteAtomic(path, func(w io.Writer) error {
		_, err := f.WriteTo(w)
		return err
	})
	if err != nil {
		return fmt.Errorf("vector: write %s: %w", path, err)
	}
	return nil
}

// WriteTo writes the store in the vector file format.
func (f *Flat) WriteTo(w io.Writer) (int64, error) {
	cw := &countWriter{w: w, h: crc32.New(castagnoli)}
	var hdr [headerSize]byte
	copy(hdr[:], fileMagic)
	binary.LittleEndian.PutUint32(hdr[8:], fileVersion)
	hdr[12] = dtypeF32
	hdr[13] = byte(f.metric)
	binary.LittleEndian.PutUint32(hdr[16:], uint32(f.dim))
	binary.LittleEndian.PutUint64(hdr[20:], uint64(f.Len()))
	cw.Write(hdr[:])
	var l [4]byte
	for _, id := range f.ids {
		binary.LittleEndian.PutUint32(l[:], uint32(len(id)))
		cw.Write(l[:])
		io.WriteString(cw, id)
	}
	buf := make([]byte, 0, 64<<10)
	for i, x := range f.data {
		buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(x))
		if len(buf) == cap(buf) || i == len(f.data)-1 {
			cw.Write(buf)
			buf = buf[:0]
		}
	}
	binary.LittleEndian.PutUint32(l[:], cw.h.Sum32())
	cw.Write(l[:])
	return cw.n, cw.err
}

// countWriter counts and checksums what it writes and keeps the first error,
// so WriteTo can write without checking each call.
type countWriter struct {
	w   io.Writer
	h   hash.Hash32
	n   int64
	err error
}

func (c *countWriter) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	c.h.Write(p)
	n, err := c.w.Write(p)
	c.n += int64(n)
	c.err = err
	return n, err
}

// ReadFile reads a store written by WriteFile. A dim > 0 is the dimension
// the caller expects; a file of another dimension is an error (it was made
// with another model or truncation).
func ReadFile(path string, dim int) (*Flat, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("vector: %w", err)
	}
	defer fh.Close()
	f, err := Read(bufio.NewReaderSize(fh, 1<<16), path)
	if err != nil {
		return nil, err
	}
	if dim > 0 && f.dim != dim {
		return nil, fileio.Errorf(path, 0, "vectors have %d dimensions, want %d (made with another model or truncation? delete the file to recompute it)", f.dim, dim)
	}
	return f, nil
}

// Read reads a store in the vector file format from r; name is used in
// errors.
func Read(r io.Reader, name string) (*Flat, error) {
	h := crc32.New(castagnoli)
	tr := io.TeeReader(r, h)
	bad := func(format string, args ...any) error { return fileio.Errorf(name, 0, format, args...) }
	var hdr [headerSize]byte
	if n, err := io.ReadFull(tr, hdr[:]); err != nil {
		if k := min(n, len(fileMagic)); string(hdr[:k]) != fileMagic[:k] {
			return nil, bad("not a vector file (starts with %q, want %q)", hdr[:k], fileMagic)
		}
		return nil, bad("truncated: %d bytes, shorter than the %d-byte header", n, headerSize)
	}
	if string(hdr[:8]) != fileMagic {
		return nil, bad("not a vector file (starts with %q, want %q)", hdr[:8], fileMagic)
	}
	if v := binary.LittleEndian.Uint32(hdr[8:]); v != fileVersion {
		return nil, bad("vector file version %d; this build reads version %d", v, fileVersion)
	}
	if hdr[12] != dtypeF32 {
		return nil, bad("element type %d; this build reads only float32 (1)", hdr[12])
	}
	m := Metric(hdr[13])
	if m != Cosine && m != Dot {
		return nil, bad("unknown metric %d in header", hdr[13])
	}
	dim := int(binary.LittleEndian.Uint32(hdr[16:]))
	count := binary.LittleEndian.Uint64(hdr[20:])
	if count > math.MaxInt32 {
		return nil, bad("header claims %d rows (more than %d)", count, math.MaxInt32)
	}
	n := int(count)
	if n > 0 && dim == 0 {
		return nil, bad("header claims %d rows of 0 dimensions", n)
	}
	if dim > 1<<20 {
		return nil, bad("header claims %d dimensions", dim)
	}
	truncated := func(what string, err error) error {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return bad("truncated in %s (header says %d rows of %d dimensions)", what, n, dim)
		}
		return bad("reading %s: %v", what, err)
	}
	f := &Flat{dim: dim, metric: m, rankOnce: new(sync.Once), ids: make([]string, 0, min(n, 1<<20)), index: make(map[string]int32, min(n, 1<<20))}
	var l [4]byte
	var idb []byte
	for i := range n {
		if _, err := io.ReadFull(tr, l[:]); err != nil {
			return nil, truncated(fmt.Sprintf("the id of row %d", i), err)
		}
		k := binary.LittleEndian.Uint32(l[:])
		if k > maxIDLen {
			return nil, bad("row %d: id length %d is implausible (file corrupt?)", i, k)
		}
		if uint32(cap(idb)) < k {
			idb = make([]byte, k)
		}
		idb = idb[:k]
		if _, err := io.ReadFull(tr, idb); err != nil {
			return nil, truncated(fmt.Sprintf("the id of row %d", i), err)
		}
		id := string(idb)
		if _, dup := f.index[id]; dup {
			return nil, bad("row %d: id %q appears twice", i, id)
		}
		f.index[id] = int32(i)
		f.ids = append(f.ids, id)
	}
	f.data = make([]float32, 0, min(n*dim, 1<<26))
	buf := make([]byte, 64<<10)
	for left := n * dim * 4; left > 0; {
		b := buf[:min(left, len(buf))]
		if _, err := io.ReadFull(tr, b); err != nil {
			return nil, truncated(fmt.Sprintf("the vectors (row %d)", len(f.data)/max(dim, 1)), err)
		}
		for j := 0; j < len(b); j += 4 {
			x := math.Float32frombits(binary.LittleEndian.Uint32(b[j:]))
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return nil, bad("row %d component %d is %v", len(f.data)/dim, len(f.data)%dim, x)
			}
			f.data = append(f.data, x)
		}
		left -= len(b)
	}
	sum := h.Sum32()
	if _, err := io.ReadFull(r, l[:]); err != nil {
		return nil, truncated("the checksum", err)
	}
	if got := binary.LittleEndian.Uint32(l[:]); got != sum {
		return nil, bad("checksum mismatch (stored %08x, computed %08x): the file is corrupt; delete it to recompute", got, sum)
	}
	if k, _ := io.ReadFull(r, l[:1]); k > 0 {
		return nil, bad("unexpected data after the checksum")
	}
	return f, nil
}
