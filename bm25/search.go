package bm25

import (
	"cmp"
	"container/heap"
	"math"
	"slices"
)

// Searcher holds per-goroutine scratch space for term-at-a-time scoring. It
// is not safe for concurrent use; make one per goroutine.
type Searcher struct {
	ix      *Index
	acc32   []float32
	acc64   []float64
	mark    []uint32
	epoch   uint32
	touched []int32
	terms   []qterm
	tpos    []int32 // term id → 1 + its index in terms, 0 when absent
	heap    hitHeap
}

type qterm struct {
	id  int32
	qtf int32
}

// NewSearcher returns a Searcher over ix.
func (ix *Index) NewSearcher() *Searcher {
	s := &Searcher{ix: ix, mark: make([]uint32, ix.numDocs), tpos: make([]int32, len(ix.df))}
	if ix.params.Scheme == Lucene {
		s.acc64 = make([]float64, ix.numDocs)
	} else {
		s.acc32 = make([]float32, ix.numDocs)
	}
	return s
}

// Search scores every document for the analyzed query and returns the best
// k, best first.
//
// R2MED and Robertson rank the whole corpus, as their Python references sort
// all scores: when fewer than k documents match, zero-score documents fill
// the list in corpus order. Lucene returns matching documents only.
func (s *Searcher) Search(query []string, k int) []Hit {
	if k <= 0 {
		return nil
	}
	s.epoch++
	if s.epoch == 0 { // wrapped: old marks could alias the new epoch
		clear(s.mark)
		s.epoch = 1
	}
	s.touched = s.touched[:0]
	switch s.ix.params.Scheme {
	case R2MED:
		s.scoreR2MED(query)
	case Robertson:
		s.scoreRobertson(query)
	case Lucene:
		s.scoreLucene(query)
	}
	return s.topK(k)
}

func (s *Searcher) touch(d int32) {
	if s.mark[d] != s.epoch {
		s.mark[d] = s.epoch
		s.touched = append(s.touched, d)
	}
}

// uniqueTerms collects the query's known terms with their counts, in term-id
// order, and the number of known tokens.
func (s *Searcher) uniqueTerms(query []string) (n int) {
	s.terms = s.terms[:0]
	for _, t := range query {
		id, ok := s.ix.vocab[t]
		if !ok {
			continue
		}
		n++
		if p := s.tpos[id]; p > 0 {
			s.terms[p-1].qtf++
			continue
		}
		s.terms = append(s.terms, qterm{id: id, qtf: 1})
		s.tpos[id] = int32(len(s.terms))
	}
	for _, qt := range s.terms {
		s.tpos[qt.id] = 0
	}
	return n
}

func (s *Searcher) scoreR2MED(query []string) {
	ix := s.ix
	qlen := s.uniqueTerms(query)
	// gensim's doc2bow drops unknown tokens before the BM25 transform, so the
	// query length counts known tokens only; the sparse product then visits
	// each document's terms in ascending id order.
	slices.SortFunc(s.terms, func(a, b qterm) int { return cmp.Compare(a.id, b.id) })
	avgdl := ix.AvgDocLen()
	for _, qt := range s.terms {
		wq := float32(r2medWeight(ix.idf[qt.id], float64(qt.qtf), float64(qlen), ix.params.K1, ix.params.B, avgdl))
		for j := ix.off[qt.id]; j < ix.off[qt.id+1]; j++ {
			d := ix.postDoc[j]
			s.touch(d)
			// The conversion forbids fusing into an FMA: scipy rounds the
			// product to float32 before adding.
			s.acc32[d] += float32(wq * ix.postVal[j])
		}
	}
}

func (s *Searcher) scoreRobertson(query []string) {
	ix := s.ix
	// bm25s adds one posting column per query token occurrence, in query order.
	for _, t := range query {
		id, ok := ix.vocab[t]
		if !ok {
			continue
		}
		for j := ix.off[id]; j < ix.off[id+1]; j++ {
			d := ix.postDoc[j]
			s.touch(d)
			s.acc32[d] += ix.postVal[j]
		}
	}
}

func (s *Searcher) scoreLucene(query []string) {
	ix := s.ix
	// Anserini's bag-of-words query boosts each distinct term by its count;
	// Lucene scores each clause in float32 and sums clauses in float64.
	s.uniqueTerms(query)
	for _, qt := range s.terms {
		w := float32(qt.qtf) * float32(ix.idf[qt.id])
		for j := ix.off[qt.id]; j < ix.off[qt.id+1]; j++ {
			d := ix.postDoc[j]
			s.touch(d)
			sc := w - w/(1+ix.postVal[j]*ix.normInv[d])
			s.acc64[d] += float64(sc)
		}
	}
}

func (s *Searcher) score(d int32) float32 {
	if s.acc64 != nil {
		return float32(s.acc64[d])
	}
	return s.acc32[d]
}

func (s *Searcher) reset(d int32) {
	if s.acc64 != nil {
		s.acc64[d] = 0
	} else {
		s.acc32[d] = 0
	}
}

func (s *Searcher) topK(k int) []Hit {
	ix := s.ix
	h := &s.heap
	h.hits = h.hits[:0]
	h.rank = ix.tieRank
	for _, d := range s.touched {
		sc := s.score(d)
		s.reset(d)
		if sc == 0 || math.IsNaN(float64(sc)) {
			// Zero sums (idf 0 in Robertson) join the zero-score tail
			// filled in below, in corpus order, like untouched documents.
			s.mark[d] = 0
			continue
		}
		hit := Hit{Doc: d, Score: sc}
		if len(h.hits) < k {
			heap.Push(h, hit)
		} else if h.better(hit, h.hits[0]) {
			h.hits[0] = hit
			heap.Fix(h, 0)
		}
	}
	out := make([]Hit, len(h.hits), k)
	for i := len(out) - 1; i >= 0; i-- {
		out[i] = heap.Pop(h).(Hit)
	}
	if ix.params.Scheme != Lucene && len(out) < k {
		// The heap kept every positive document, and only those are still
		// marked; all others score exactly zero, and R2MED's stable sort
		// keeps them in corpus order.
		for d := int32(0); int(d) < ix.numDocs && len(out) < k; d++ {
			if s.mark[d] != s.epoch {
				out = append(out, Hit{Doc: d})
			}
		}
	}
	return out
}

// hitHeap is a min-heap whose root is the worst hit kept so far.
type hitHeap struct {
	hits []Hit
	rank []int32
}

// better orders hits by score, then by the index's tie rank.
func (h *hitHeap) better(a, b Hit) bool {
	if a.Score != b.Score {
		return a.Score > b.Score
	}
	return h.rank[a.Doc] < h.rank[b.Doc]
}

func (h *hitHeap) Len() int           { return len(h.hits) }
func (h *hitHeap) Less(i, j int) bool { return h.better(h.hits[j], h.hits[i]) }
func (h *hitHeap) Swap(i, j int)      { h.hits[i], h.hits[j] = h.hits[j], h.hits[i] }
func (h *hitHeap) Push(x any)         { h.hits = append(h.hits, x.(Hit)) }
func (h *hitHeap) Pop() any {
	x := h.hits[len(h.hits)-1]
	h.hits = h.hits[:len(h.hits)-1]
	return x
}
