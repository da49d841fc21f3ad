// Package bm25 is an in-memory inverted index with the BM25 variants that
// medical-retrieval papers actually report:
//
//   - R2MED (default): gensim's LuceneBM25Model scored through
//     SparseMatrixSimilarity, which is what R2MED's published BM25 rows come
//     from. The BM25 transform is applied to the query bag of words as well, and
//     the score is a float32 dot product, so idf is effectively squared.
//   - Lucene: Lucene ≥ 8 BM25Similarity as Pyserini/Anserini run it, but with
//     exact document lengths instead of Lucene's one-byte lossy length norms.
//   - Robertson: the bm25s "robertson" method HAKARI-Bench uses for NanoR2MED.
//
// Search is term-at-a-time over score accumulators, never a dense
// query×document matrix. Floating-point evaluation order follows the
// reference implementations wherever it can change a ranking (see Build).
package bm25

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// Scheme selects the scoring formula.
type Scheme string

const (
	R2MED     Scheme = "r2med"
	Lucene    Scheme = "lucene"
	Robertson Scheme = "robertson"
)

// Schemes lists the schemes in the order the CLI documents them.
func Schemes() []Scheme { return []Scheme{R2MED, Lucene, Robertson} }

// ParseScheme accepts a scheme name case-insensitively.
func ParseScheme(s string) (Scheme, error) {
	for _, sc := range Schemes() {
		if strings.EqualFold(s, string(sc)) {
			return sc, nil
		}
	}
	return "", fmt.Errorf("unknown BM25 scheme %q (known: r2med, lucene, robertson)", s)
}

// Params are the scheme and its free parameters.
type Params struct {
	Scheme Scheme
	K1, B  float64
}

// DefaultParams returns the parameters the scheme's reference uses: R2MED's
// k1=0.9 b=0.4 (also Anserini's defaults) and bm25s/HAKARI's k1=1.5 b=0.75.
func DefaultParams(s Scheme) Params {
	switch s {
	case Robertson:
		return Params{Scheme: s, K1: 1.5, B: 0.75}
	case Lucene:
		return Params{Scheme: s, K1: 0.9, B: 0.4}
	default:
		return Params{Scheme: R2MED, K1: 0.9, B: 0.4}
	}
}

func (p Params) validate() error {
	if _, err := ParseScheme(string(p.Scheme)); err != nil {
		return err
	}
	if !(p.K1 >= 0) || math.IsInf(p.K1, 0) {
		return fmt.Errorf("bm25: k1 must be a finite number ≥ 0, got %v", p.K1)
	}
	if !(p.B >= 0 && p.B <= 1) {
		return fmt.Errorf("bm25: b must lie in [0, 1], got %v", p.B)
	}
	return nil
}

// Hit is one scored document, by its position in the indexed corpus.
type Hit struct {
	Doc   int32
	Score float32
}

// Index is an immutable inverted index; any number of Searchers may use it
// concurrently.
type Index struct {
	params  Params
	numDocs int
	docLen  []int32
	total   int64 // tokens in the whole corpus
	vocab   map[string]int32
	// dict looks terms up when vocab is nil: an index opened from a
	// stored form (FromArrays) brings its own term dictionary.
	dict    func(term string) (int32, bool)
	df      []int32
	off     []int64 // postings of term t are [off[t], off[t+1])
	postDoc []int32
	// postVal is the precomputed float32 document-side weight for R2MED and
	// Robertson, and the raw term frequency for Lucene, whose formula mixes
	// the query boost in before the frequency (see luceneScore).
	postVal []float32
	idf     []float64
	// Lucene-only: float32 inverse length norm per document, and the
	// statistics Lucene takes over documents that have the field.
	normInv  []float32
	docCount int
	// tieRank orders equal scores: a smaller rank wins. R2MED and bm25s keep
	// corpus order (Python's stable sort; tieRank nil), Anserini breaks ties
	// by doc id.
	tieRank []int32
}

// lookup returns a term's id.
func (ix *Index) lookup(term string) (int32, bool) {
	if ix.vocab != nil {
		id, ok := ix.vocab[term]
		return id, ok
	}
	if ix.dict != nil {
		return ix.dict(term)
	}
	return 0, false
}

// Params returns the index's scoring parameters.
func (ix *Index) Params() Params { return ix.params }

// NumDocs is the number of indexed documents, empty ones included.
func (ix *Index) NumDocs() int { return ix.numDocs }

// NumTerms is the vocabulary size.
func (ix *Index) NumTerms() int { return len(ix.df) }

// NumPostings is the number of (term, document) pairs.
func (ix *Index) NumPostings() int { return len(ix.postDoc) }

// AvgDocLen is the mean analyzed document length over all documents.
func (ix *Index) AvgDocLen() float64 {
	if ix.numDocs == 0 {
		return 0
	}
	return float64(ix.total) / float64(ix.numDocs)
}

// TermID returns a term's id in the index, and false when no document
// holds it.
func (ix *Index) TermID(term string) (int32, bool) { return ix.lookup(term) }

// Holds reports whether document doc holds the term with id t: a search
// of the term's postings (which words of a query a hit holds, without
// reading its text). Document numbers spread evenly, so a few
// interpolation steps narrow the list before a binary search finishes:
// a handful of reads of a long list instead of one per halving.
func (ix *Index) Holds(t, doc int32) bool {
	p := ix.postDoc[ix.off[t]:ix.off[t+1]]
	lo, hi := 0, len(p)-1
	for range 4 {
		if lo > hi || doc < p[lo] || doc > p[hi] {
			return false
		}
		if p[hi] == p[lo] {
			return p[lo] == doc
		}
		mid := lo + int(int64(doc-p[lo])*int64(hi-lo)/int64(p[hi]-p[lo]))
		switch {
		case p[mid] == doc:
			return true
		case p[mid] < doc:
			lo = mid + 1
		default:
			hi = mid - 1
		}
	}
	if lo > hi {
		return false
	}
	_, ok := slices.BinarySearch(p[lo:hi+1], doc)
	return ok
}

// DocFreq returns the number of documents containing term (0 if unknown).
func (ix *Index) DocFreq(term string) int {
	if id, ok := ix.lookup(term); ok {
		return int(ix.df[id])
	}
	return 0
}
