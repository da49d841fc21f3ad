package weaviatetest

import (
	"hash/fnv"
	"math"

	"github.com/r2med/r2med/analysis"
)

// Embedder is a deterministic stand-in for an embedding model: each text's
// Lucene-English terms, weighted by (1 + ln tf)·idf over a corpus, are
// hashed into Dim signed dimensions and the vector L2-normalized (a sparse
// random projection of TF-IDF). Vectors carry lexical signal — a document
// sharing rare terms with a query lies close to it — so vector and hybrid
// search give meaningful rankings, and the same text always gives the same
// vector, on any machine.
type Embedder struct {
	Dim int
	an  analysis.Analyzer
	idf map[string]float64
	dfl float64 // idf of a term the corpus lacks
}

// NewEmbedder learns document frequencies from corpus.
func NewEmbedder(dim int, corpus []string) *Embedder {
	an := analysis.LuceneEnglish()
	df := map[string]int{}
	var toks []string
	for _, text := range corpus {
		toks = an.Analyze(toks[:0], text)
		seen := map[string]bool{}
		for _, t := range toks {
			if !seen[t] {
				seen[t] = true
				df[t]++
			}
		}
	}
	n := float64(len(corpus))
	e := &Embedder{Dim: dim, an: an, idf: make(map[string]float64, len(df)), dfl: math.Log(1 + n)}
	for t, d := range df {
		e.idf[t] = math.Log(1 + n/float64(d))
	}
	return e
}

// Embed returns text's vector.
func (e *Embedder) Embed(text string) []float32 {
	tf := map[string]int{}
	for _, t := range e.an.Analyze(nil, text) {
		tf[t]++
	}
	v := make([]float64, e.Dim)
	for t, n := range tf {
		idf, ok := e.idf[t]
		if !ok {
			idf = e.dfl
		}
		h := fnv.New64a()
		h.Write([]byte(t))
		x := h.Sum64()
		w := (1 + math.Log(float64(n))) * idf
		// Two signed slots per term lower the cost of collisions.
		for _, slot := range []uint64{x, x >> 32} {
			i := int(slot % uint64(e.Dim))
			if slot&(1<<31) != 0 {
				v[i] -= w
			} else {
				v[i] += w
			}
		}
	}
	var ss float64
	for _, x := range v {
		ss += x * x
	}
	out := make([]float32, e.Dim)
	if ss == 0 {
		out[0] = 1 // an empty text: a fixed unit vector, never NaN
		return out
	}
	norm := math.Sqrt(ss)
	for i, x := range v {
		out[i] = float32(x / norm)
	}
	return out
}

// EmbedAll embeds every text.
func (e *Embedder) EmbedAll(texts []string) [][]float32 {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = e.Embed(t)
	}
	return out
}
