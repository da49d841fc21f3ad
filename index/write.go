package index

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/r2med/r2med/analysis"
	"github.com/r2med/r2med/bm25"
	"github.com/r2med/r2med/highlight"
	"github.com/r2med/r2med/internal/fileio"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/vector"
)

// Contents is what Write stores: the documents and at least one way of
// searching them.
type Contents struct {
	// Docs is the corpus, in the order the BM25 index and the vectors
	// number it. Ids must be unique.
	Docs []ir.Doc
	// Source says where the documents came from (task name, directory,
	// split…); it is recorded, not interpreted.
	Source map[string]any

	// BM25, when not nil, is the corpus's BM25 index, built with the
	// analyzer named by Analyzer (BuildBM25 builds one).
	BM25     *bm25.Index
	Analyzer string

	// Dense, when not nil, holds one vector per document, row i with id
	// Docs[i].ID. Quantized lists the quantized forms stored beside the
	// float32 rows ("int8", "binary"). Recipe describes how the vectors
	// were made (model, revision, pooling, instructions, truncation…) in
	// the form the dense retriever records in manifests; it is stored as
	// given, so a search can check that its queries are embedded the same
	// way.
	Dense     *vector.Flat
	Quantized []string
	Recipe    map[string]any
}

// Meta is an index's description, stored as JSON in its "meta" section.
type Meta struct {
	Docs int `json:"docs"`
	// CorpusSHA256 is CorpusDigest of the documents.
	CorpusSHA256 string         `json:"corpus_sha256"`
	Source       map[string]any `json:"source,omitempty"`
	BM25         *BM25Meta      `json:"bm25,omitempty"`
	Dense        *DenseMeta     `json:"dense,omitempty"`
}

// BM25Meta describes the BM25 part.
type BM25Meta struct {
	Analyzer string `json:"analyzer"`
	// AnalyzerDigest fingerprints what the analyzer did when the index was
	// built (see Index.Analyzer).
	AnalyzerDigest string      `json:"analyzer_digest"`
	Scheme         bm25.Scheme `json:"scheme"`
	K1             float64     `json:"k1"`
	B              float64     `json:"b"`
	Terms          int         `json:"terms"`
	Postings       int         `json:"postings"`
	Tokens         int64       `json:"tokens"`
	DocCount       int         `json:"doc_count,omitempty"`
}

// Params returns the scheme and parameters the index was built with.
func (m *BM25Meta) Params() bm25.Params { return bm25.Params{Scheme: m.Scheme, K1: m.K1, B: m.B} }

// DenseMeta describes the dense part.
type DenseMeta struct {
	Dim    int    `json:"dim"`
	Metric string `json:"metric"`
	// Stored lists the forms kept: "float32" always, then "int8",
	// "binary" as written.
	Stored []string       `json:"stored"`
	Recipe map[string]any `json:"recipe,omitempty"`
}

// CorpusDigest is the sha256 of the documents' ids and texts, each
// length-prefixed, in corpus order: what an index records of the corpus
// it was built from, so that a run can check it searches the corpus it
// was asked for.
func CorpusDigest(docs []ir.Doc) string {
	h := sha256.New()
	var l [8]byte
	for _, d := range docs {
		for _, s := range []string{d.ID, d.Text} {
			binary.LittleEndian.PutUint64(l[:], uint64(len(s)))
			h.Write(l[:])
			io.WriteString(h, s)
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// part is one section to write: its bytes come from write, called twice
// (once to checksum, once to store), and must be size bytes each time.
type part struct {
	name  string
	size  uint64
	write func(w io.Writer) error
}

func bytesPart(name string, b []byte) part {
	return part{name: name, size: uint64(len(b)), write: func(w io.Writer) error { _, err := w.Write(b); return err }}
}

func numPart[T number](name string, s []T) part { return bytesPart(name, bytesOf(s)) }

// stringsPart stores strings back to back, and offPart their n+1 offsets.
func stringsPart(name string, n int, at func(int) string) part {
	var size uint64
	for i := range n {
		size += uint64(len(at(i)))
	}
	return part{name: name, size: size, write: func(w io.Writer) error {
		for i := range n {
			if _, err := io.WriteString(w, at(i)); err != nil {
				return err
			}
		}
		return nil
	}}
}

func offPart(name string, n int, at func(int) string) part {
	off := make([]uint64, n+1)
	for i := range n {
		off[i+1] = off[i] + uint64(len(at(i)))
	}
	return numPart(name, off)
}

// WriteOptions tune WriteWith; the zero value works.
type WriteOptions struct {
	// Progress, when set, is called with the number of documents just
	// prepared for the file (their snippets' tokens analyzed), at most
	// bm25.ProgressStep at a time, every document once, before the file
	// is written: what a build does after its postings, which takes as
	// long as analyzing them.
	Progress func(docs int)
}

// Write stores c at path, atomically: the file appears whole or not at
// all, and the same contents always give the same bytes. It replaces an
// index file, or an empty one, at path, and refuses any other file
// (CheckTarget).
func Write(path string, c Contents) error { return WriteWith(path, c, WriteOptions{}) }

// WriteWith is Write with options.
func WriteWith(path string, c Contents, o WriteOptions) error {
	if err := CheckTarget(path); err != nil {
		return err
	}
	progress := o.Progress
	if progress == nil {
		progress = func(int) {}
	}
	parts, err := plan(c, progress)
	if err != nil {
		return fmt.Errorf("index %s: %w", path, err)
	}
	secs := make([]section, len(parts))
	off := alignUp(headerSize(len(parts)))
	for i, p := range parts {
		h := crc32.NewIEEE()
		cw := &countingWriter{w: h}
		if err := p.write(cw); err != nil {
			return fmt.Errorf("index %s: section %s: %w", path, p.name, err)
		}
		if cw.n != p.size {
			return fmt.Errorf("index %s: section %s wrote %d bytes, planned %d", path, p.name, cw.n, p.size)
		}
		secs[i] = section{name: p.name, off: off, len: p.size, crc: h.Sum32()}
		off = alignUp(off + p.size)
	}
	size := secs[len(secs)-1].off + secs[len(secs)-1].len
	err = fileio.WriteAtomic(path, func(w io.Writer) error {
		cw := &countingWriter{w: w}
		if _, err := cw.Write(encodeHeader(secs, size)); err != nil {
			return err
		}
		var zeros [alignment]byte
		for i, p := range parts {
			if _, err := cw.Write(zeros[:secs[i].off-cw.n]); err != nil {
				return err
			}
			if err := p.write(cw); err != nil {
				return err
			}
		}
		if cw.n != size {
			return fmt.Errorf("wrote %d bytes, planned %d (a document changed while writing?)", cw.n, size)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("index %s: %w", path, err)
	}
	return nil
}

// plan checks c and lists its sections, reporting the documents it has
// prepared to progress.
func plan(c Contents, progress func(docs int)) ([]part, error) {
	n := len(c.Docs)
	if n == 0 {
		return nil, errors.New("no documents to index")
	}
	if c.BM25 == nil && c.Dense == nil {
		return nil, errors.New("nothing to search by: give a BM25 index, dense vectors or both")
	}
	rank, err := idRanks(c.Docs)
	if err != nil {
		return nil, err
	}
	meta := Meta{Docs: n, CorpusSHA256: CorpusDigest(c.Docs), Source: c.Source}
	id := func(i int) string { return c.Docs[i].ID }
	text := func(i int) string { return c.Docs[i].Text }
	parts := []part{
		{name: secMeta}, // filled in below, once the parts' metadata is known
		offPart(secIDOff, n, id), stringsPart(secIDs, n, id),
		numPart(secRank, rank),
		offPart(secTextOff, n, text), stringsPart(secText, n, text),
	}
	if c.BM25 != nil {
		bp, bm, err := planBM25(c.BM25, c.Analyzer, c.Docs, rank, progress)
		if err != nil {
			return nil, err
		}
		parts, meta.BM25 = append(parts, bp...), bm
	} else {
		progress(n) // vectors only: nothing is prepared per document
	}
	if c.Dense != nil {
		dp, dm, err := planDense(c)
		if err != nil {
			return nil, err
		}
		parts, meta.Dense = append(parts, dp...), dm
	}
	js, err := json.MarshalIndent(meta, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("metadata: %w", err)
	}
	parts[0] = bytesPart(secMeta, append(js, '\n'))
	return parts, nil
}

// idRanks returns each document's position in byte order of ids, and an
// error naming two documents that share an id.
func idRanks(docs []ir.Doc) ([]int32, error) {
	order := make([]int32, len(docs))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int { return strings.Compare(docs[a].ID, docs[b].ID) })
	rank := make([]int32, len(docs))
	for r, d := range order {
		if r > 0 && docs[order[r-1]].ID == docs[d].ID {
			a, b := min(order[r-1], d), max(order[r-1], d)
			return nil, fmt.Errorf("documents %d and %d share the id %q; ids must be unique", a+1, b+1, docs[d].ID)
		}
		rank[d] = int32(r)
	}
	return rank, nil
}

func planBM25(ix *bm25.Index, analyzer string, docs []ir.Doc, rank []int32, progress func(docs int)) ([]part, *BM25Meta, error) {
	n := len(docs)
	if analyzer == "" {
		analyzer = analysis.DefaultName
	}
	an, err := analysis.Get(analyzer)
	if err != nil {
		return nil, nil, err
	}
	a := ix.Arrays()
	if a.NumDocs != n {
		return nil, nil, fmt.Errorf("the BM25 index has %d documents, the corpus %d", a.NumDocs, n)
	}
	if a.Terms == nil {
		return nil, nil, errors.New("the BM25 index has no term list (it was opened from a stored form, not built)")
	}
	if a.Params.Scheme == bm25.Lucene && !slices.Equal(a.TieRank, rank) {
		return nil, nil, errors.New("the Lucene-scheme BM25 index was not built with the documents' ids (bm25.BuildOptions.IDs), so its tie order is not theirs")
	}
	heads, err := planHeads(docs, an, a.Terms, progress)
	if err != nil {
		return nil, nil, err
	}
	term := func(i int) string { return a.Terms[i] }
	parts := []part{
		offPart(secTermOff, len(a.Terms), term), stringsPart(secTerms, len(a.Terms), term),
		numPart(secTermHash, hashTable(a.Terms)),
		numPart(secDocLen, a.DocLen), numPart(secDF, a.DF), numPart(secIDF, a.IDF),
		numPart(secOff, a.Off), numPart(secPostDoc, a.PostDoc), numPart(secPostVal, a.PostVal),
	}
	if a.Params.Scheme == bm25.Lucene {
		parts = append(parts, numPart(secNormInv, a.NormInv))
	}
	parts = append(parts, heads...)
	parts = append(parts, docTermParts(a, n)...)
	m := &BM25Meta{
		Analyzer: analyzer, AnalyzerDigest: analyzerDigest(an),
		Scheme: a.Params.Scheme, K1: a.Params.K1, B: a.Params.B,
		Terms: len(a.Terms), Postings: len(a.PostDoc), Tokens: a.Tokens, DocCount: a.DocCount,
	}
	return parts, m, nil
}

// HeadBytes is how much of each document's start an index with BM25
// postings stores analyzed: the byte range and term id of every token up
// to the first ASCII space or line break at or after HeadBytes (words
// never run across one, so the tokens are the whole text's), so that a
// snippet of up to that many bytes is marked without analyzing the text
// (Index.HeadTokens). A document with no such break soon after stores
// none, and is analyzed when shown.
const HeadBytes = 320

// headReach is how far past HeadBytes the break may be.
const headReach = 1024

// headLen is how much of text a stored head covers, or -1 for none.
func headLen(text string) int {
	if len(text) <= HeadBytes {
		return len(text)
	}
	i := strings.IndexAny(text[HeadBytes:min(len(text), HeadBytes+headReach)], " \t\n\r")
	if i < 0 {
		return -1
	}
	return HeadBytes + i
}

// planHeads stores each document's head tokens: per token two uint32,
// its start and end (16 bits each) and its term's id (-1: the analyzer
// drops it); per document the offset of its first token and the head's
// length (-1: none stored). It reports the documents done to progress.
func planHeads(docs []ir.Doc, an analysis.Analyzer, terms []string, progress func(docs int)) ([]part, error) {
	ids := make(map[string]int32, len(terms))
	for i, t := range terms {
		ids[t] = int32(i)
	}
	h := highlight.New(an)
	off := make([]uint64, len(docs)+1)
	lens := make([]int32, len(docs))
	var toks []uint32
	reported := 0
	for i, d := range docs {
		p := headLen(d.Text)
		lens[i] = int32(p)
		if p >= 0 {
			for _, t := range h.Tokens(d.Text[:p]) {
				id := int32(-1)
				if t.Keep {
					var ok bool
					if id, ok = ids[t.Term]; !ok {
						return nil, fmt.Errorf("document %q: term %q of its start is not in the BM25 index (built with another analyzer?)", d.ID, t.Term)
					}
				}
				toks = append(toks, uint32(t.Start)<<16|uint32(t.End), uint32(id))
			}
		}
		off[i+1] = uint64(len(toks) / 2)
		if done := i + 1; done%bm25.ProgressStep == 0 || done == len(docs) {
			progress(done - reported)
			reported = done
		}
	}
	return []part{numPart(secHeadOff, off), numPart(secHeadLen, lens), numPart(secHeads, toks)}, nil
}

// docTermParts stores the postings transposed: each document's term ids,
// ascending (Lucene's term vectors without positions), so that which of
// a query's terms a hit holds is one merge of two short sorted lists
// (Index.DocTerms) instead of a search of each term's postings.
func docTermParts(a bm25.Arrays, n int) []part {
	off := make([]uint64, n+1)
	for _, d := range a.PostDoc {
		off[d+1]++
	}
	for d := range n {
		off[d+1] += off[d]
	}
	terms := make([]int32, len(a.PostDoc))
	next := slices.Clone(off[:n])
	for t := range len(a.DF) {
		for _, d := range a.PostDoc[a.Off[t]:a.Off[t+1]] {
			terms[next[d]] = int32(t)
			next[d]++
		}
	}
	return []part{numPart(secDocTermOff, off), numPart(secDocTerms, terms)}
}

func planDense(c Contents) ([]part, *DenseMeta, error) {
	f := c.Dense
	if f.Len() != len(c.Docs) {
		return nil, nil, fmt.Errorf("%d vectors for %d documents", f.Len(), len(c.Docs))
	}
	for i, d := range c.Docs {
		if f.ID(i) != d.ID {
			return nil, nil, fmt.Errorf("vector %d has id %q, document %d has %q: vectors must follow the corpus order", i+1, f.ID(i), i+1, d.ID)
		}
	}
	m := &DenseMeta{Dim: f.Dim(), Metric: f.Metric().String(), Stored: []string{"float32"}, Recipe: c.Recipe}
	parts := []part{numPart(secF32, f.Data())}
	for _, q := range c.Quantized {
		if slices.Contains(m.Stored, q) {
			return nil, nil, fmt.Errorf("quantization %q given twice", q)
		}
		switch q {
		case "int8":
			d := vector.NewInt8(f).Data()
			parts = append(parts, numPart(secI8, d.Codes), numPart(secI8Lo, d.Lo), numPart(secI8Step, d.Step))
		case "binary":
			parts = append(parts, numPart(secBin, vector.NewBinary(f).Bits()))
		default:
			return nil, nil, fmt.Errorf("unknown quantization %q (want int8 or binary)", q)
		}
		m.Stored = append(m.Stored, q)
	}
	return parts, m, nil
}

// CheckTarget says whether Write may write path: nothing is there, or an
// index file, or an empty file. Any other file (a corpus, a run file, a
// mistyped --out) is refused, naming what it starts with, so that a
// build cannot destroy data it was not asked to replace. Callers that
// build before they write check first, so a refusal costs no build.
func CheckTarget(path string) error {
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("index %s: %w", path, err)
	case st.IsDir():
		return fmt.Errorf("index %s: is a directory, want an index file to write", path)
	case !st.Mode().IsRegular():
		return fmt.Errorf("index %s: the file there is not an r2med index (%s), and is not replaced: remove it or write the index elsewhere", path, st.Mode().Type())
	case st.Size() == 0:
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("index %s: %w", path, err)
	}
	defer f.Close()
	head := make([]byte, len(magic))
	n, _ := io.ReadFull(f, head)
	if string(head[:n]) == magic {
		return nil
	}
	return fmt.Errorf("index %s: the file there is not an r2med index (it starts with %q), and is not replaced: remove it or write the index elsewhere", path, head[:n])
}
