package bm25

import (
	"fmt"
	"math"
)

// Arrays is an index's content as flat arrays: what a stored form keeps
// so that the index can be reopened without analyzing the corpus again
// (package index writes them to a file and maps them back). FromArrays
// takes slices as they are, so they may live in a read-only memory map.
type Arrays struct {
	Params  Params
	NumDocs int
	// Tokens is the number of analyzed tokens in the corpus; DocCount the
	// number of documents with at least one (Lucene's docCount; 0 for the
	// other schemes).
	Tokens   int64
	DocCount int
	// Terms lists the terms by id (Arrays fills it for an index Build
	// made; FromArrays ignores it). Lookup maps a term to its id (FromArrays needs it; Arrays
	// leaves it nil).
	Terms  []string
	Lookup func(term string) (int32, bool)
	// DocLen holds each document's analyzed length, DF each term's
	// document frequency and IDF its idf as the scheme computes it.
	DocLen []int32
	DF     []int32
	IDF    []float64
	// The postings of term t are PostDoc[Off[t]:Off[t+1]] (ascending
	// document numbers) with PostVal beside them: the document-side weight
	// (R2MED, Robertson) or the raw term frequency (Lucene).
	Off     []int64
	PostDoc []int32
	PostVal []float32
	// NormInv is Lucene's inverse length norm per document (Lucene only).
	NormInv []float32
	// TieRank orders equal scores, a smaller rank first: nil keeps corpus
	// order (R2MED, Robertson); Lucene's is each document's position in
	// id order.
	TieRank []int32
}

// Arrays returns the index's content. The slices are the index's own; do
// not modify them.
func (ix *Index) Arrays() Arrays {
	var terms []string
	if ix.vocab != nil {
		terms = make([]string, len(ix.df))
		for t, id := range ix.vocab {
			terms[id] = t
		}
	}
	return Arrays{
		Params: ix.params, NumDocs: ix.numDocs, Tokens: ix.total, DocCount: ix.docCount,
		Terms: terms, DocLen: ix.docLen, DF: ix.df, IDF: ix.idf,
		Off: ix.off, PostDoc: ix.postDoc, PostVal: ix.postVal,
		NormInv: ix.normInv, TieRank: ix.tieRank,
	}
}

// FromArrays returns the index whose content a holds, without copying.
// It checks what costs O(terms + documents) — every length, the offsets
// agreeing with the document frequencies, the statistics scores use
// (document lengths against the token count, Lucene's document count and
// norms, every idf recomputed from its document frequency) — and leaves
// the postings themselves to CheckPostings. Searching it gives exactly what
// searching the index a came from gives.
func FromArrays(a Arrays) (*Index, error) {
	if err := a.Params.validate(); err != nil {
		return nil, err
	}
	nt := len(a.DF)
	bad := func(format string, args ...any) error {
		return fmt.Errorf("bm25: inconsistent arrays: "+format, args...)
	}
	switch {
	case a.Lookup == nil:
		return nil, bad("no term lookup")
	case a.NumDocs < 0 || len(a.DocLen) != a.NumDocs:
		return nil, bad("%d document lengths for %d documents", len(a.DocLen), a.NumDocs)
	case len(a.IDF) != nt:
		return nil, bad("%d idf values for %d terms", len(a.IDF), nt)
	case len(a.Off) != nt+1:
		return nil, bad("%d offsets for %d terms", len(a.Off), nt)
	case len(a.PostDoc) != len(a.PostVal):
		return nil, bad("%d posting documents but %d values", len(a.PostDoc), len(a.PostVal))
	case a.Off[0] != 0 || a.Off[nt] != int64(len(a.PostDoc)):
		return nil, bad("offsets span [%d, %d), postings are %d", a.Off[0], a.Off[nt], len(a.PostDoc))
	case a.TieRank != nil && len(a.TieRank) != a.NumDocs:
		return nil, bad("%d tie ranks for %d documents", len(a.TieRank), a.NumDocs)
	case a.Params.Scheme == Lucene && len(a.NormInv) != a.NumDocs:
		return nil, bad("%d length norms for %d documents", len(a.NormInv), a.NumDocs)
	case a.Params.Scheme != Lucene && (a.NormInv != nil || a.TieRank != nil):
		return nil, bad("length norms or tie ranks for the %s scheme, which has none", a.Params.Scheme)
	}
	for t, df := range a.DF {
		if a.Off[t+1]-a.Off[t] != int64(df) {
			return nil, bad("term %d has %d postings but document frequency %d", t, a.Off[t+1]-a.Off[t], df)
		}
	}
	if err := a.checkStats(); err != nil {
		return nil, bad("%v", err)
	}
	return &Index{
		params: a.Params, numDocs: a.NumDocs, docLen: a.DocLen, total: a.Tokens,
		dict: a.Lookup, df: a.DF, off: a.Off, postDoc: a.PostDoc, postVal: a.PostVal,
		idf: a.IDF, normInv: a.NormInv, docCount: a.DocCount, tieRank: a.TieRank,
	}, nil
}

// checkStats checks the numbers a score is computed from against the
// document lengths and frequencies they derive from, with the formulas
// Build uses: every length non-negative and their sum the token count,
// Lucene's document count and length norms, every term's idf. A stored
// index whose statistics were edited would otherwise score every query
// slightly wrong.
func (a *Arrays) checkStats() error {
	var sum int64
	for d, l := range a.DocLen {
		if l < 0 {
			return fmt.Errorf("document %d has length %d", d, l)
		}
		sum += int64(l)
	}
	if sum != a.Tokens {
		return fmt.Errorf("document lengths sum to %d, the token count is %d", sum, a.Tokens)
	}
	docCount := 0
	if a.Params.Scheme == Lucene {
		var avgdl float32
		docCount, avgdl = luceneDocs(a.DocLen)
		for d, l := range a.DocLen {
			if want := luceneNormInv(a.Params, l, avgdl); math.Float32bits(a.NormInv[d]) != math.Float32bits(want) {
				return fmt.Errorf("document %d has length norm %g, its length %d gives %g", d, a.NormInv[d], l, want)
			}
		}
	}
	if a.DocCount != docCount {
		return fmt.Errorf("document count %d, the lengths give %d", a.DocCount, docCount)
	}
	for t, df := range a.DF {
		if df < 0 || int(df) > a.NumDocs {
			return fmt.Errorf("term %d has document frequency %d of %d documents", t, df, a.NumDocs)
		}
		if want := idfOf(a.Params.Scheme, a.NumDocs, docCount, df); math.Float64bits(a.IDF[t]) != math.Float64bits(want) {
			return fmt.Errorf("term %d has idf %g, its document frequency %d gives %g", t, a.IDF[t], df, want)
		}
	}
	return nil
}

// CheckPostings checks what FromArrays leaves out: every posting list
// strictly ascending and inside [0, NumDocs), every tie rank a
// permutation. It reads all postings once.
func (ix *Index) CheckPostings() error {
	for t := range len(ix.df) {
		prev := int32(-1)
		for j := ix.off[t]; j < ix.off[t+1]; j++ {
			d := ix.postDoc[j]
			if d <= prev || int(d) >= ix.numDocs {
				return fmt.Errorf("bm25: term %d: posting %d names document %d after %d (of %d documents)", t, j-ix.off[t], d, prev, ix.numDocs)
			}
			prev = d
		}
	}
	if ix.tieRank != nil {
		seen := make([]bool, ix.numDocs)
		for d, r := range ix.tieRank {
			if r < 0 || int(r) >= ix.numDocs || seen[r] {
				return fmt.Errorf("bm25: tie rank %d of document %d repeats or lies outside [0, %d)", r, d, ix.numDocs)
			}
			seen[r] = true
		}
	}
	return nil
}
