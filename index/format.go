package index

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"unsafe"
)

const (
	magic = "R2MEDIDX"
	// Version is the format version this build writes and reads.
	Version     = 1
	fixedHeader = 24
	entrySize   = 48
	nameSize    = 24
	alignment   = 64
	maxSections = 1 << 10
)

// Section names.
const (
	secMeta       = "meta"
	secIDs        = "docs.ids"
	secIDOff      = "docs.ids.off"
	secText       = "docs.text"
	secTextOff    = "docs.text.off"
	secRank       = "docs.rank"
	secTerms      = "bm25.terms"
	secTermOff    = "bm25.terms.off"
	secTermHash   = "bm25.hash"
	secDocLen     = "bm25.doclen"
	secDF         = "bm25.df"
	secIDF        = "bm25.idf"
	secOff        = "bm25.off"
	secPostDoc    = "bm25.postdoc"
	secPostVal    = "bm25.postval"
	secNormInv    = "bm25.norminv"
	secF32        = "dense.f32"
	secI8         = "dense.i8"
	secI8Lo       = "dense.i8.lo"
	secI8Step     = "dense.i8.step"
	secBin        = "dense.bin"
	secHeadOff    = "docs.heads.off"
	secHeads      = "docs.heads"
	secHeadLen    = "docs.heads.len"
	secDocTermOff = "docs.terms.off"
	secDocTerms   = "docs.terms"
	headerCRCSize = 4
)

// bulk lists the sections checked on first use rather than at Open: the
// ones whose size grows with the corpus's text, postings or vectors.
var bulk = map[string]bool{secText: true, secPostDoc: true, secPostVal: true, secF32: true, secI8: true, secBin: true, secHeads: true, secDocTerms: true}

// section is one entry of the section table.
type section struct {
	name     string
	off, len uint64
	crc      uint32
}

// headerSize is the size of the header with n sections, checksum included.
func headerSize(n int) uint64 { return fixedHeader + uint64(n)*entrySize + headerCRCSize }

func alignUp(x uint64) uint64 { return (x + alignment - 1) / alignment * alignment }

// encodeHeader writes the header for secs (offsets already assigned).
func encodeHeader(secs []section, size uint64) []byte {
	b := make([]byte, headerSize(len(secs)))
	copy(b, magic)
	binary.LittleEndian.PutUint32(b[8:], Version)
	binary.LittleEndian.PutUint32(b[12:], uint32(len(secs)))
	binary.LittleEndian.PutUint64(b[16:], size)
	for i, s := range secs {
		e := b[fixedHeader+i*entrySize:]
		copy(e[:nameSize], s.name)
		binary.LittleEndian.PutUint64(e[nameSize:], s.off)
		binary.LittleEndian.PutUint64(e[nameSize+8:], s.len)
		binary.LittleEndian.PutUint32(e[nameSize+16:], s.crc)
	}
	n := len(b) - headerCRCSize
	binary.LittleEndian.PutUint32(b[n:], crc32.ChecksumIEEE(b[:n]))
	return b
}

// rebuildHint ends every message about a file that cannot be used.
const rebuildHint = "rebuild it with `r2med index build`"

// parseFixed checks the fixed part of a header (b holds the file's first
// bytes, up to fixedHeader of them) and returns the whole header's size.
func parseFixed(b []byte, size uint64, name string) (uint64, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("index %s: "+format, append([]any{name}, args...)...)
	}
	if size < fixedHeader || len(b) < fixedHeader {
		if size == 0 || !bytes.HasPrefix([]byte(magic), b[:min(len(b), len(magic))]) {
			return 0, bad("not an r2med index (%d bytes, no %q header)", size, magic)
		}
		return 0, bad("truncated: %d bytes, shorter than the header; %s", size, rebuildHint)
	}
	if string(b[:len(magic)]) != magic {
		return 0, bad("not an r2med index (starts with %q, want %q)", b[:len(magic)], magic)
	}
	if v := binary.LittleEndian.Uint32(b[8:]); v != Version {
		return 0, bad("format version %d; this build reads version %d: %s with this build", v, Version, rebuildHint)
	}
	n := binary.LittleEndian.Uint32(b[12:])
	if n == 0 || n > maxSections {
		return 0, bad("header claims %d sections: the file is corrupt; %s", n, rebuildHint)
	}
	hs := headerSize(int(n))
	if size < hs {
		return 0, bad("truncated: %d bytes, shorter than its %d-byte header; %s", size, hs, rebuildHint)
	}
	return hs, nil
}

// decodeHeader parses and checks the header of a file of size bytes; b
// holds the file's first bytes, the whole header at least.
func decodeHeader(b []byte, size uint64, name string) ([]section, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("index %s: "+format, append([]any{name}, args...)...)
	}
	hs, err := parseFixed(b, size, name)
	if err != nil {
		return nil, err
	}
	if uint64(len(b)) < hs {
		return nil, bad("truncated: %d bytes, shorter than its %d-byte header; %s", len(b), hs, rebuildHint)
	}
	n := binary.LittleEndian.Uint32(b[12:])
	crcAt := hs - headerCRCSize
	if got, want := binary.LittleEndian.Uint32(b[crcAt:]), crc32.ChecksumIEEE(b[:crcAt]); got != want {
		return nil, bad("header checksum mismatch (stored %08x, computed %08x): the file is corrupt; %s", got, want, rebuildHint)
	}
	if want := binary.LittleEndian.Uint64(b[16:]); want != size {
		if size < want {
			return nil, bad("truncated: %d bytes, the header says %d (an interrupted copy?); copy it again or %s", size, want, rebuildHint)
		}
		return nil, bad("%d bytes, the header says %d: data was appended; %s", size, want, rebuildHint)
	}
	secs := make([]section, n)
	seen := map[string]bool{}
	end := hs
	for i := range secs {
		e := b[fixedHeader+i*entrySize:]
		s := section{
			name: string(bytes.TrimRight(e[:nameSize], "\x00")),
			off:  binary.LittleEndian.Uint64(e[nameSize:]),
			len:  binary.LittleEndian.Uint64(e[nameSize+8:]),
			crc:  binary.LittleEndian.Uint32(e[nameSize+16:]),
		}
		if seen[s.name] {
			return nil, bad("section %q appears twice: the file is corrupt; %s", s.name, rebuildHint)
		}
		seen[s.name] = true
		if s.off%alignment != 0 || s.off < end || s.off > size || s.len > size-s.off {
			return nil, bad("section %q at [%d, +%d) lies outside the file or overlaps: the file is corrupt; %s", s.name, s.off, s.len, rebuildHint)
		}
		end = s.off + s.len
		secs[i] = s
	}
	return secs, nil
}

// littleEndian reports whether this machine stores integers as the format
// does, so that sections can be used in place.
var littleEndian = func() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}()

// number is what sections hold.
type number interface {
	~int8 | ~int32 | ~int64 | ~uint32 | ~uint64 | ~float32 | ~float64
}

// bytesOf returns the bytes of s in file order: s's own memory on a
// little-endian machine, an encoded copy otherwise.
func bytesOf[T number](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	if littleEndian {
		var zero T
		return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*int(unsafe.Sizeof(zero)))
	}
	b, _ := binary.Append(nil, binary.LittleEndian, s)
	return b
}

// view returns b as a slice of T: b's own memory when it is aligned and
// the machine little-endian, a decoded copy otherwise.
func view[T number](b []byte) ([]T, error) {
	var zero T
	size := int(unsafe.Sizeof(zero))
	if len(b)%size != 0 {
		return nil, fmt.Errorf("%d bytes is not a whole number of %d-byte values", len(b), size)
	}
	n := len(b) / size
	if n == 0 {
		return []T{}, nil
	}
	if littleEndian && uintptr(unsafe.Pointer(unsafe.SliceData(b)))%uintptr(size) == 0 {
		return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), n), nil
	}
	out := make([]T, n)
	if _, err := binary.Decode(b, binary.LittleEndian, out); err != nil {
		return nil, err
	}
	return out, nil
}

// countingWriter counts what passes through to w.
type countingWriter struct {
	w io.Writer
	n uint64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += uint64(n)
	return n, err
}

// errNoMmap says the file cannot be mapped here, so Open reads it instead.
var errNoMmap = errors.New("memory mapping unavailable")
