package index

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/r2med/r2med/analysis"
	"github.com/r2med/r2med/bm25"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/vector"
)

// Options tune Open; the zero value maps the file.
type Options struct {
	// ReadAll reads the whole file into memory instead of mapping it.
	// Where mapping is unavailable or fails, Open reads the file anyway.
	ReadAll bool
}

// Index is an opened index file. Its methods are safe for concurrent use.
// Everything it hands out (the BM25 index, the vector stores) reads the
// file's mapped memory: Close only when none of it is used any more.
// Document ids and texts are copies and stay valid after Close.
type Index struct {
	path   string
	file   *os.File // for checking bulk sections without mapping them in; nil with ReadAll
	data   []byte   // the mapping, or the file read into memory
	unmap  func() error
	secs   []section
	byName map[string]section
	meta   Meta

	ids     []string
	rank    []int32
	textOff []uint64

	checks map[string]*check

	// id is the file's identity when opened; changed is set once Changed
	// has seen it differ.
	id      fileID
	changed atomic.Bool

	lookupOnce sync.Once
	byID       map[string]int32

	docTermsOnce sync.Once
	docTermOff   []uint64
	docTerms     []int32
	docTermsErr  error

	recent recentQueries

	headsOnce sync.Once
	heads     *heads
	headsErr  error

	anOnce sync.Once
	an     analysis.Analyzer
	anErr  error

	bm25Once sync.Once
	bm25     *bm25.Index
	bm25Err  error

	flatOnce sync.Once
	flat     *vector.Flat
	flatErr  error

	quantMu sync.Mutex
	quant   map[string]vector.Index
}

// check is the lazy checksum check of one bulk section.
type check struct {
	once sync.Once
	err  error
}

// Open opens the index file at path by mapping it into memory.
func Open(path string) (*Index, error) { return OpenWith(path, Options{}) }

// OpenWith opens the index file at path.
func OpenWith(path string, o Options) (_ *Index, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("index: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("index: %w", err)
	}
	if st.IsDir() {
		f.Close()
		return nil, fmt.Errorf("index %s: is a directory, want an index file (made by `r2med index build --out FILE`)", path)
	}
	size := st.Size()
	ix := &Index{path: path, file: f, id: idOf(st)}
	defer func() {
		if err != nil {
			ix.Close()
		}
	}()
	// The header is read and checked before anything is mapped, so an
	// empty, foreign, old or truncated file gets its message at once.
	head := make([]byte, fixedHeader)
	k, _ := f.ReadAt(head, 0)
	hs, err := parseFixed(head[:k], uint64(size), path)
	if err != nil {
		return nil, err
	}
	head = make([]byte, hs)
	if _, err := f.ReadAt(head, 0); err != nil {
		return nil, fmt.Errorf("index %s: reading the header: %w", path, err)
	}
	if ix.secs, err = decodeHeader(head, uint64(size), path); err != nil {
		return nil, err
	}
	if !o.ReadAll {
		ix.data, ix.unmap, err = mmapFile(f, size)
	}
	if o.ReadAll || err != nil { // a file system that cannot map files is read instead
		ix.data, err = readAll(f, size)
		ix.unmap = nil
		f.Close()
		ix.file = nil
	}
	if err != nil {
		return nil, fmt.Errorf("index %s: %w", path, err)
	}
	if ix.unmap != nil {
		addMapping(ix)
	}
	ix.byName = make(map[string]section, len(ix.secs))
	ix.checks = map[string]*check{}
	for _, s := range ix.secs {
		ix.byName[s.name] = s
		if bulk[s.name] {
			ix.checks[s.name] = &check{}
		} else if err := ix.checkSection(s); err != nil {
			return nil, err
		}
	}
	if err := ix.load(); err != nil {
		return nil, err
	}
	return ix, nil
}

// readAll reads the file into 8-byte-aligned memory.
func readAll(f *os.File, size int64) ([]byte, error) {
	words := make([]uint64, (size+7)/8)
	b := bytesOf(words)[:size]
	if !littleEndian {
		b = make([]byte, size)
	}
	if _, err := io.ReadFull(io.NewSectionReader(f, 0, size), b); err != nil {
		return nil, err
	}
	return b, nil
}

func (ix *Index) bad(format string, args ...any) error {
	return fmt.Errorf("index %s: "+format, append([]any{ix.path}, args...)...)
}

// checkSection compares a section's checksum with the table's. Mapped
// files are read through the file rather than the mapping, so that a check
// does not make a whole section resident.
func (ix *Index) checkSection(s section) error {
	var got uint32
	if ix.file == nil || !bulk[s.name] {
		got = crc32.ChecksumIEEE(ix.data[s.off : s.off+s.len])
	} else {
		h := crc32.NewIEEE()
		if _, err := io.CopyBuffer(h, io.NewSectionReader(ix.file, int64(s.off), int64(s.len)), make([]byte, 1<<20)); err != nil {
			return ix.bad("reading section %s: %v", s.name, err)
		}
		got = h.Sum32()
	}
	if got != s.crc {
		return ix.bad("section %s: checksum mismatch (stored %08x, computed %08x): the file is corrupt; %s", s.name, s.crc, got, rebuildHint)
	}
	return nil
}

// checked checks the named bulk sections once each, in parallel.
func (ix *Index) checked(names ...string) error {
	if len(names) == 1 { // what every document read asks: no goroutine
		c := ix.checks[names[0]]
		if c == nil {
			return nil
		}
		c.once.Do(func() { c.err = ix.checkSection(ix.byName[names[0]]) })
		return c.err
	}
	errs := make([]error, len(names))
	var wg sync.WaitGroup
	for i, n := range names {
		c := ix.checks[n]
		if c == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.once.Do(func() { c.err = ix.checkSection(ix.byName[n]) })
			errs[i] = c.err
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// raw returns a section's bytes, or an error naming it when it is missing
// or not the size the metadata implies (want < 0: any size).
func (ix *Index) raw(name string, want int64) ([]byte, error) {
	s, ok := ix.byName[name]
	if !ok {
		return nil, ix.bad("section %s is missing: the file is incomplete; %s", name, rebuildHint)
	}
	if want >= 0 && s.len != uint64(want) {
		return nil, ix.bad("section %s has %d bytes, the metadata implies %d: the file is corrupt; %s", name, s.len, want, rebuildHint)
	}
	return ix.data[s.off : s.off+s.len : s.off+s.len], nil
}

// numbers returns a section as count numbers (count < 0: any count).
func numbers[T number](ix *Index, name string, count int64) ([]T, error) {
	var zero T
	want := int64(-1)
	if count >= 0 {
		want = count * int64(unsafe.Sizeof(zero))
	}
	b, err := ix.raw(name, want)
	if err != nil {
		return nil, err
	}
	v, err := view[T](b)
	if err != nil {
		return nil, ix.bad("section %s: %v", name, err)
	}
	return v, nil
}

// offsets checks n+1 offsets into a blob of size bytes.
func (ix *Index) offsets(name string, n int, size uint64) ([]uint64, error) {
	off, err := numbers[uint64](ix, name, int64(n)+1)
	if err != nil {
		return nil, err
	}
	if off[0] != 0 || off[n] != size {
		return nil, ix.bad("section %s spans [%d, %d) of %d bytes: the file is corrupt; %s", name, off[0], off[n], size, rebuildHint)
	}
	for i := range n {
		if off[i] > off[i+1] {
			return nil, ix.bad("section %s falls at entry %d: the file is corrupt; %s", name, i, rebuildHint)
		}
	}
	return off, nil
}

// load reads the metadata and the document table.
func (ix *Index) load() error {
	js, err := ix.raw(secMeta, -1)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(js, &ix.meta); err != nil {
		return ix.bad("metadata: %v; %s", err, rebuildHint)
	}
	n := ix.meta.Docs
	if n <= 0 || n >= math.MaxInt32 {
		return ix.bad("metadata claims %d documents; %s", n, rebuildHint)
	}
	idBlob, err := ix.raw(secIDs, -1)
	if err != nil {
		return err
	}
	idOff, err := ix.offsets(secIDOff, n, uint64(len(idBlob)))
	if err != nil {
		return err
	}
	// One copy of all ids, sliced: they outlive the mapping.
	blob := string(idBlob)
	ix.ids = make([]string, n)
	for i := range n {
		ix.ids[i] = blob[idOff[i]:idOff[i+1]]
	}
	if ix.rank, err = numbers[int32](ix, secRank, int64(n)); err != nil {
		return err
	}
	// The ranks order ties in BM25 and dense search: each document's
	// position in byte order of ids, or ties (and, out of range, scores)
	// would go to the wrong documents.
	byRank := make([]int32, n)
	for i := range byRank {
		byRank[i] = -1
	}
	for d, r := range ix.rank {
		if r < 0 || int(r) >= n || byRank[r] >= 0 {
			return ix.bad("section %s: document %d has tie rank %d, repeated or outside [0, %d): the file is corrupt; %s", secRank, d, r, n, rebuildHint)
		}
		byRank[r] = int32(d)
	}
	for r := 1; r < n; r++ {
		if ix.ids[byRank[r-1]] >= ix.ids[byRank[r]] {
			return ix.bad("section %s: rank %d is id %q, rank %d id %q, not in byte order: the file is corrupt; %s", secRank, r-1, ix.ids[byRank[r-1]], r, ix.ids[byRank[r]], rebuildHint)
		}
	}
	text := ix.byName[secText]
	if ix.textOff, err = ix.offsets(secTextOff, n, text.len); err != nil {
		return err
	}
	if _, err := ix.raw(secText, -1); err != nil {
		return err
	}
	if ix.meta.BM25 == nil && ix.meta.Dense == nil {
		return ix.bad("holds neither a BM25 index nor vectors; %s", rebuildHint)
	}
	return nil
}

// Path returns the file the index was opened from.
func (ix *Index) Path() string { return ix.path }

// Meta returns the index's description.
func (ix *Index) Meta() Meta { return ix.meta }

// Len returns the number of documents.
func (ix *Index) Len() int { return len(ix.ids) }

// ID returns the id of document i.
func (ix *Index) ID(i int) string { return ix.ids[i] }

// IDs returns the document ids in corpus order; do not modify the slice.
func (ix *Index) IDs() []string { return ix.ids }

// Lookup returns the position of the document with the given id.
func (ix *Index) Lookup(id string) (int, bool) {
	ix.lookupOnce.Do(func() {
		ix.byID = make(map[string]int32, len(ix.ids))
		for i, id := range ix.ids {
			ix.byID[id] = int32(i)
		}
	})
	i, ok := ix.byID[id]
	return int(i), ok
}

// Doc returns document i, its text copied out of the file. The first call
// checks the texts' checksum.
func (ix *Index) Doc(i int) (ir.Doc, error) {
	if err := ix.checked(secText); err != nil {
		return ir.Doc{}, err
	}
	s := ix.byName[secText]
	t := ix.data[s.off+ix.textOff[i] : s.off+ix.textOff[i+1]]
	return ir.Doc{ID: ix.ids[i], Text: string(t)}, nil
}

// DocHead returns the first n bytes of document i's text (all of it when
// it is shorter), copied out of the file, and the text's length: what a
// snippet needs, without reading the rest. The first call checks the
// texts' checksum.
func (ix *Index) DocHead(i, n int) (string, int, error) {
	if err := ix.checked(secText); err != nil {
		return "", 0, err
	}
	s := ix.byName[secText]
	lo, hi := ix.textOff[i], ix.textOff[i+1]
	size := int(hi - lo)
	if n < size {
		hi = lo + uint64(max(n, 0))
	}
	return string(ix.data[s.off+lo : s.off+hi]), size, nil
}

// DocTerms returns the ids of the BM25 terms document i holds, ascending
// (the postings transposed), and false when the file stores none
// (written before they were stored, or holding no BM25 part). The slice
// is the file's memory: do not modify it, nor keep it past Close. The
// first call checks the section's checksum and structure.
func (ix *Index) DocTerms(i int) ([]int32, bool, error) {
	ix.docTermsOnce.Do(func() { ix.docTermsErr = ix.loadDocTerms() })
	if ix.docTermsErr != nil || ix.docTermOff == nil {
		return nil, false, ix.docTermsErr
	}
	return ix.docTerms[ix.docTermOff[i]:ix.docTermOff[i+1]], true, nil
}

func (ix *Index) loadDocTerms() error {
	m := ix.meta.BM25
	if _, stored := ix.byName[secDocTerms]; !stored || m == nil {
		return nil
	}
	if err := ix.checked(secDocTerms); err != nil {
		return err
	}
	terms, err := numbers[int32](ix, secDocTerms, int64(m.Postings))
	if err != nil {
		return err
	}
	off, err := ix.offsets(secDocTermOff, ix.Len(), uint64(len(terms)))
	if err != nil {
		return err
	}
	for d := range ix.Len() {
		prev := int32(-1)
		for _, t := range terms[off[d]:off[d+1]] {
			if t <= prev || int(t) >= m.Terms {
				return ix.bad("section %s: document %d lists term %d after %d (of %d terms): the file is corrupt; %s", secDocTerms, d, t, prev, m.Terms, rebuildHint)
			}
			prev = t
		}
	}
	ix.docTermOff, ix.docTerms = off, terms
	return nil
}

// HeadToken is one token of a document's stored head (HeadBytes): its
// byte range in the text and its term's id in the BM25 dictionary (-1
// for a token the analyzer drops).
type HeadToken struct {
	Start, End int
	Term       int32
}

// heads are the stored heads' sections, checked.
type heads struct {
	off  []uint64 // first token of each document, n+1
	lens []int32  // bytes each head covers; -1: none stored
	toks []uint32 // per token: start<<16 | end, then the term id
}

// HeadTokens appends document i's stored head tokens to dst and returns
// them with the length of the text they cover; ok is false when the
// file stores none for it (written before heads were stored, holding no
// BM25 part, or a document without a break near its start). The first
// call checks the heads' checksum and structure.
func (ix *Index) HeadTokens(dst []HeadToken, i int) (_ []HeadToken, covered int, ok bool, err error) {
	ix.headsOnce.Do(func() { ix.heads, ix.headsErr = ix.loadHeads() })
	h := ix.heads
	if ix.headsErr != nil || h == nil || h.lens[i] < 0 {
		return dst, 0, false, ix.headsErr
	}
	for j := h.off[i]; j < h.off[i+1]; j++ {
		se := h.toks[2*j]
		dst = append(dst, HeadToken{Start: int(se >> 16), End: int(se & 0xffff), Term: int32(h.toks[2*j+1])})
	}
	return dst, int(h.lens[i]), true, nil
}

func (ix *Index) loadHeads() (*heads, error) {
	m := ix.meta.BM25
	if _, stored := ix.byName[secHeads]; !stored || m == nil {
		return nil, nil
	}
	if err := ix.checked(secHeads); err != nil {
		return nil, err
	}
	n := ix.Len()
	var h heads
	var err error
	if h.toks, err = numbers[uint32](ix, secHeads, -1); err != nil {
		return nil, err
	}
	if h.lens, err = numbers[int32](ix, secHeadLen, int64(n)); err != nil {
		return nil, err
	}
	if h.off, err = ix.offsets(secHeadOff, n, uint64(len(h.toks)/2)); err != nil {
		return nil, err
	}
	if len(h.toks)%2 != 0 {
		return nil, ix.bad("section %s: %d values, not pairs: the file is corrupt; %s", secHeads, len(h.toks), rebuildHint)
	}
	// Every token inside its head, in order, with a term of the
	// dictionary: a snippet slices the text by them.
	for d := range n {
		size := ix.textOff[d+1] - ix.textOff[d]
		p := h.lens[d]
		if p < -1 || int64(p) > int64(size) || p < 0 && h.off[d] != h.off[d+1] {
			return nil, ix.bad("section %s: document %d's head covers %d of %d bytes: the file is corrupt; %s", secHeadLen, d, p, size, rebuildHint)
		}
		end := 0
		for j := h.off[d]; j < h.off[d+1]; j++ {
			se, t := h.toks[2*j], int32(h.toks[2*j+1])
			s, e := int(se>>16), int(se&0xffff)
			if s < end || e <= s || e > int(p) || t < -1 || int(t) >= m.Terms {
				return nil, ix.bad("section %s: document %d's token %d [%d, %d) term %d lies outside its head or the dictionary: the file is corrupt; %s", secHeads, d, j-h.off[d], s, e, t, rebuildHint)
			}
			end = e
		}
	}
	return &h, nil
}

// Docs returns every document (texts copied).
func (ix *Index) Docs() ([]ir.Doc, error) {
	out := make([]ir.Doc, ix.Len())
	for i := range out {
		d, err := ix.Doc(i)
		if err != nil {
			return nil, err
		}
		out[i] = d
	}
	return out, nil
}

// CheckCorpus reports whether docs are the documents the index was built
// from (same ids and texts in the same order), with a message saying what
// to do when they are not.
func (ix *Index) CheckCorpus(docs []ir.Doc) error {
	if len(docs) != ix.Len() || CorpusDigest(docs) != ix.meta.CorpusSHA256 {
		return ix.bad("was built from another corpus (%d documents, sha256 %.12s…; this one has %d documents, sha256 %.12s…): rebuild the index from this data with `r2med index build`, or search the data it was built from",
			ix.Len(), ix.meta.CorpusSHA256, len(docs), CorpusDigest(docs))
	}
	return nil
}

// Analyzer returns the analyzer the BM25 part was built with, after
// checking that this build's analyzer of that name still makes the same
// terms of the probe text as it did then. Every call returns the same
// analyzer, so the searchers and highlighters of one index share its
// memo of analyzed tokens (warmed once, held once).
func (ix *Index) Analyzer() (analysis.Analyzer, error) {
	ix.anOnce.Do(func() { ix.an, ix.anErr = ix.analyzer() })
	return ix.an, ix.anErr
}

func (ix *Index) analyzer() (analysis.Analyzer, error) {
	m := ix.meta.BM25
	if m == nil {
		return nil, ix.bad("has no BM25 part (built with --retriever dense); rebuild it with --retriever bm25")
	}
	an, err := analysis.Get(m.Analyzer)
	if err != nil {
		return nil, ix.bad("was built with analyzer %q, which this build does not know (%v); %s", m.Analyzer, err, rebuildHint)
	}
	if d := analyzerDigest(an); d != m.AnalyzerDigest {
		return nil, ix.bad("was built with a version of analyzer %q that analyzes text differently from this build's (probe digest %.12s…, now %.12s…), so its postings do not match this build's queries; %s",
			m.Analyzer, m.AnalyzerDigest, d, rebuildHint)
	}
	return an, nil
}

// CheckBM25 reports whether the BM25 part was built with the given
// analyzer ("" is analysis.DefaultName) and parameters, with a message
// saying what to do when it was not. The scheme and parameters are baked
// into the postings' weights, so a search cannot change them.
func (ix *Index) CheckBM25(analyzer string, p bm25.Params) error {
	m := ix.meta.BM25
	if m == nil {
		return ix.bad("has no BM25 part (built with --retriever dense); rebuild it with --retriever bm25")
	}
	if analyzer == "" {
		analyzer = analysis.DefaultName
	}
	if analyzer != m.Analyzer {
		return ix.bad("was built with analyzer %q, this search asks for %q: rebuild the index with --analyzer %s, or search it with --analyzer %s", m.Analyzer, analyzer, analyzer, m.Analyzer)
	}
	if got := m.Params(); got != p {
		return ix.bad("was built with BM25 %s (k1=%g, b=%g), this search asks for %s (k1=%g, b=%g): the weights are stored in the postings; rebuild the index with those settings, or search with the index's",
			got.Scheme, got.K1, got.B, p.Scheme, p.K1, p.B)
	}
	_, err := ix.Analyzer()
	return err
}

// BM25 returns the BM25 index, searchable with bm25.Searcher exactly as
// the index it was written from. The first call checks the postings'
// checksums.
func (ix *Index) BM25() (*bm25.Index, error) {
	ix.bm25Once.Do(func() { ix.bm25, ix.bm25Err = ix.loadBM25() })
	return ix.bm25, ix.bm25Err
}

func (ix *Index) loadBM25() (*bm25.Index, error) {
	m := ix.meta.BM25
	if m == nil {
		return nil, ix.bad("has no BM25 part (built with --retriever dense); rebuild it with --retriever bm25")
	}
	if err := ix.checked(secPostDoc, secPostVal); err != nil {
		return nil, err
	}
	n, nt, np := int64(ix.Len()), int64(m.Terms), int64(m.Postings)
	if nt < 0 || np < 0 {
		return nil, ix.bad("metadata claims %d terms and %d postings; %s", nt, np, rebuildHint)
	}
	blob, err := ix.raw(secTerms, -1)
	if err != nil {
		return nil, err
	}
	toff, err := ix.offsets(secTermOff, int(nt), uint64(len(blob)))
	if err != nil {
		return nil, err
	}
	table, err := numbers[uint32](ix, secTermHash, -1)
	if err != nil {
		return nil, err
	}
	d, err := newDict(blob, toff, table, int(nt))
	if err != nil {
		return nil, ix.bad("term dictionary: %v; %s", err, rebuildHint)
	}
	a := bm25.Arrays{Params: m.Params(), NumDocs: int(n), Tokens: m.Tokens, DocCount: m.DocCount, Lookup: d.lookup}
	if a.DocLen, err = numbers[int32](ix, secDocLen, n); err != nil {
		return nil, err
	}
	if a.DF, err = numbers[int32](ix, secDF, nt); err != nil {
		return nil, err
	}
	if a.IDF, err = numbers[float64](ix, secIDF, nt); err != nil {
		return nil, err
	}
	if a.Off, err = numbers[int64](ix, secOff, nt+1); err != nil {
		return nil, err
	}
	if a.PostDoc, err = numbers[int32](ix, secPostDoc, np); err != nil {
		return nil, err
	}
	if a.PostVal, err = numbers[float32](ix, secPostVal, np); err != nil {
		return nil, err
	}
	if m.Scheme == bm25.Lucene {
		if a.NormInv, err = numbers[float32](ix, secNormInv, n); err != nil {
			return nil, err
		}
		a.TieRank = ix.rank
	}
	b, err := bm25.FromArrays(a)
	if err != nil {
		return nil, ix.bad("%v; %s", err, rebuildHint)
	}
	// A posting outside the corpus or out of order would put its score
	// on another document: one pass over the postings, before any search.
	if err := b.CheckPostings(); err != nil {
		return nil, ix.bad("%v; %s", err, rebuildHint)
	}
	return b, nil
}

// Flat returns the float32 vectors as a store whose rows are the
// documents. The first call checks their checksum.
func (ix *Index) Flat() (*vector.Flat, error) {
	ix.flatOnce.Do(func() { ix.flat, ix.flatErr = ix.loadFlat() })
	return ix.flat, ix.flatErr
}

func (ix *Index) loadFlat() (*vector.Flat, error) {
	m := ix.meta.Dense
	if m == nil {
		return nil, ix.bad("has no vectors (built with --retriever bm25); rebuild it with --retriever dense")
	}
	metric, err := vector.ParseMetric(m.Metric)
	if err != nil {
		return nil, ix.bad("%v; %s", err, rebuildHint)
	}
	if m.Dim <= 0 || m.Dim > 1<<20 {
		return nil, ix.bad("metadata claims %d dimensions; %s", m.Dim, rebuildHint)
	}
	if err := ix.checked(secF32); err != nil {
		return nil, err
	}
	data, err := numbers[float32](ix, secF32, int64(ix.Len())*int64(m.Dim))
	if err != nil {
		return nil, err
	}
	f, err := vector.FromRows(m.Dim, metric, ix.ids, data, ix.rank)
	if err != nil {
		return nil, ix.bad("%v; %s", err, rebuildHint)
	}
	return f, nil
}

// Dense returns the vectors in the form quant names: "" or "float32" (the
// Flat), "int8" or "binary" — the stored form when the index keeps it,
// else quantized from the float32 rows now (the same result, slower to
// get). Int8 and Binary rescore with the stored float32 rows when searched
// with vector.SearchOptions.Rescore.
func (ix *Index) Dense(quant string) (vector.Index, error) {
	f, err := ix.Flat()
	if err != nil {
		return nil, err
	}
	switch quant {
	case "", "float32":
		return f, nil
	case "int8", "binary":
	default:
		return nil, fmt.Errorf("index: unknown quantization %q (want float32, int8 or binary)", quant)
	}
	ix.quantMu.Lock()
	defer ix.quantMu.Unlock()
	if q, ok := ix.quant[quant]; ok {
		return q, nil
	}
	var q vector.Index
	stored := slices.Contains(ix.meta.Dense.Stored, quant)
	switch {
	case quant == "int8" && stored:
		if err := ix.checked(secI8); err != nil {
			return nil, err
		}
		var d vector.Int8Data
		n, dim := int64(ix.Len()), int64(f.Dim())
		if d.Codes, err = numbers[int8](ix, secI8, n*dim); err != nil {
			return nil, err
		}
		if d.Lo, err = numbers[float32](ix, secI8Lo, dim); err != nil {
			return nil, err
		}
		if d.Step, err = numbers[float32](ix, secI8Step, dim); err != nil {
			return nil, err
		}
		if q, err = vector.Int8FromData(f, d); err != nil {
			return nil, ix.bad("%v; %s", err, rebuildHint)
		}
	case quant == "binary" && stored:
		if err := ix.checked(secBin); err != nil {
			return nil, err
		}
		bits, err := numbers[uint64](ix, secBin, int64(ix.Len())*int64((f.Dim()+63)/64))
		if err != nil {
			return nil, err
		}
		if q, err = vector.BinaryFromBits(f, bits); err != nil {
			return nil, ix.bad("%v; %s", err, rebuildHint)
		}
	case quant == "int8":
		q = vector.NewInt8(f)
	default:
		q = vector.NewBinary(f)
	}
	if ix.quant == nil {
		ix.quant = map[string]vector.Index{}
	}
	ix.quant[quant] = q
	return q, nil
}

// SectionInfo describes one section of the file.
type SectionInfo struct {
	Name  string
	Bytes int64
	// Lazy sections are checked on first use (or by Verify), the others
	// when the file is opened.
	Lazy bool
	// CRC32 is the section's checksum as the header stores it (IEEE
	// CRC-32 of its bytes): what opening and Verify compare the bytes
	// with.
	CRC32 uint32
}

// Sections lists the file's sections in file order.
func (ix *Index) Sections() []SectionInfo {
	out := make([]SectionInfo, len(ix.secs))
	for i, s := range ix.secs {
		out[i] = SectionInfo{Name: s.name, Bytes: int64(s.len), Lazy: bulk[s.name], CRC32: s.crc}
	}
	return out
}

// CheckSections checks the checksum of every section not checked yet —
// the bulk ones, which first use would check — now, each once: what a
// service reports as its health before a request needs the section.
// Verify checks more.
func (ix *Index) CheckSections() error {
	var names []string
	for _, s := range ix.secs {
		if bulk[s.name] {
			names = append(names, s.name)
		}
	}
	return ix.checked(names...)
}

// Verify checks every section's checksum now, the zero padding between
// sections, the postings' structure (each list ascending inside the
// corpus), the stored heads' structure, the analyzer, and that every
// stored vector component is finite.
func (ix *Index) Verify() error {
	end := headerSize(len(ix.secs))
	for _, s := range ix.secs {
		for _, c := range ix.data[end:s.off] {
			if c != 0 {
				return ix.bad("non-zero padding before section %s: the file is corrupt; %s", s.name, rebuildHint)
			}
		}
		end = s.off + s.len
	}
	for _, s := range ix.secs {
		if bulk[s.name] {
			if err := ix.checked(s.name); err != nil {
				return err
			}
		} else if err := ix.checkSection(s); err != nil {
			return err
		}
	}
	if ix.meta.BM25 != nil {
		b, err := ix.BM25()
		if err != nil {
			return err
		}
		if err := b.CheckPostings(); err != nil {
			return ix.bad("%v; %s", err, rebuildHint)
		}
		if _, err := ix.Analyzer(); err != nil {
			return err
		}
		if _, _, _, err := ix.HeadTokens(nil, 0); err != nil {
			return err
		}
		if err := ix.checkDocTerms(b); err != nil {
			return err
		}
	}
	if ix.meta.Dense != nil {
		f, err := ix.Flat()
		if err != nil {
			return err
		}
		for i, x := range f.Data() {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return ix.bad("vector of document %q: component %d is %v; %s", ix.ids[i/f.Dim()], i%f.Dim(), x, rebuildHint)
			}
		}
		for _, q := range ix.meta.Dense.Stored[1:] {
			if _, err := ix.Dense(q); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkDocTerms checks that the stored document terms are the postings
// transposed, every pair both ways (what Verify adds to the structure
// DocTerms checks).
func (ix *Index) checkDocTerms(b *bm25.Index) error {
	if _, _, err := ix.DocTerms(0); err != nil || ix.docTermOff == nil {
		return err
	}
	a := b.Arrays()
	next := slices.Clone(ix.docTermOff[:ix.Len()])
	for t := range len(a.DF) {
		for _, d := range a.PostDoc[a.Off[t]:a.Off[t+1]] {
			if next[d] >= ix.docTermOff[d+1] || ix.docTerms[next[d]] != int32(t) {
				return ix.bad("section %s: document %d's terms are not its postings' (term %d): the file is corrupt; %s", secDocTerms, d, t, rebuildHint)
			}
			next[d]++
		}
	}
	return nil
}

// Close unmaps the file. Nothing the index handed out (BM25, Flat, Dense)
// may be used afterwards; document ids and texts may.
func (ix *Index) Close() error {
	var err error
	if ix.unmap != nil {
		dropMapping(ix)
		err = ix.unmap()
		ix.unmap = nil
	}
	if ix.file != nil {
		if e := ix.file.Close(); err == nil {
			err = e
		}
		ix.file = nil
	}
	ix.data = nil
	return err
}

// Searcher answers text queries from the BM25 part: it analyzes them with
// the index's analyzer and searches as the in-memory engine would. It is
// not safe for concurrent use; make one per goroutine.
type Searcher struct {
	ix *Index
	an analysis.Analyzer
	b  *bm25.Index
	s  *bm25.Searcher
}

// QueryTerms is text analyzed with the BM25 part's analyzer, as a search
// analyzes its query, with each token's term id (-1 for a token no
// document holds), as the search looks them up: the same tokens and ids,
// remembered for the last few texts searched, so that what follows a
// search of a query (marking its terms in the hits) neither analyzes it
// nor looks its terms up again. Do not modify the slices.
func (ix *Index) QueryTerms(text string) (toks []string, ids []int32, err error) {
	an, err := ix.Analyzer()
	if err != nil {
		return nil, nil, err
	}
	b, err := ix.BM25()
	if err != nil {
		return nil, nil, err
	}
	q := ix.queryTerms(an, b, text)
	return q.toks, q.ids, nil
}

// queryTerms is one text's tokens and their term ids.
type queryTerms struct {
	toks []string
	ids  []int32
}

// recentQueries remembers the tokens of the last texts analyzed as
// queries (recentSize of them).
type recentQueries struct {
	mu   sync.Mutex
	m    map[string]queryTerms
	ring [recentSize]string
	next int
}

const recentSize = 64

// tokenRoom keeps the room queries are analyzed in (*[]string).
var tokenRoom sync.Pool

func (ix *Index) queryTerms(an analysis.Analyzer, b *bm25.Index, text string) queryTerms {
	r := &ix.recent
	r.mu.Lock()
	q, ok := r.m[text]
	r.mu.Unlock()
	if ok {
		return q
	}
	// Analyzed in room kept for the next query, then copied at its size:
	// a query's tokens cost one allocation, not a slice's growth.
	room, _ := tokenRoom.Get().(*[]string)
	if room == nil {
		room = new([]string)
	}
	*room = an.Analyze((*room)[:0], text)
	q.toks = slices.Clone(*room)
	clear(*room)
	if cap(*room) <= 1<<12 {
		tokenRoom.Put(room)
	}
	q.ids = b.AppendTermIDs(make([]int32, 0, len(q.toks)), q.toks)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m == nil {
		r.m = make(map[string]queryTerms, recentSize)
	}
	if _, ok := r.m[text]; !ok {
		delete(r.m, r.ring[r.next])
		r.ring[r.next] = text
		r.next = (r.next + 1) % recentSize
		r.m[text] = q
	}
	return q
}

// NewSearcher returns a Searcher over the BM25 part, after the checks
// BM25 and Analyzer make.
func (ix *Index) NewSearcher() (*Searcher, error) {
	b, err := ix.BM25()
	if err != nil {
		return nil, err
	}
	an, err := ix.Analyzer()
	if err != nil {
		return nil, err
	}
	return &Searcher{ix: ix, an: an, b: b, s: b.NewSearcher()}, nil
}

// Search returns the k best documents for the query text, best first,
// with float32 scores widened to float64 as runs hold them.
func (s *Searcher) Search(text string, k int) []ir.Hit {
	hits := s.s.SearchIDs(s.ix.queryTerms(s.an, s.b, text).ids, k)
	out := make([]ir.Hit, len(hits))
	for i, h := range hits {
		out[i] = ir.Hit{DocID: s.ix.ids[h.Doc], Score: float64(h.Score)}
	}
	return out
}
