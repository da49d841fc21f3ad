package bm25

import (
	"cmp"
	"math"
	"math/bits"
	"slices"
)

// windowDocs is the width of the document-id windows Search scores in, as
// Lucene's BooleanScorer scores in windows of 2,048 documents: a window's
// accumulators (32 KiB of float64 at most) stay in L1/L2 whatever the
// corpus size, where one accumulator per corpus document (8 MB of float64
// at 1M documents, and a mark array beside it) is touched at random and
// overflows the cache, more so with a second searcher on the next core.
// The window is 64 blocks of 64 documents, and which blocks a clause
// touched is kept in a register while it runs, so marking costs no memory
// traffic. A variable so that tests can narrow it (to at most 4,096) to
// exercise the seams.
var windowDocs = maxWindow

// maxWindow is the widest window: 64 blocks of 64 documents.
const maxWindow = 4096

// Searcher holds per-goroutine scratch space. It is not safe for
// concurrent use; make one per goroutine.
type Searcher struct {
	ix     *Index
	acc32  []float32 // one window of accumulators (R2MED, Robertson)
	acc64  []float64 // one window of accumulators (Lucene)
	win    int32     // window width in documents
	blocks uint64    // which 64-document blocks of the window were touched
	ids    []int32   // the query's term ids (Search)
	terms  []qterm
	tpos   []int32 // term id → 1 + its index in terms, 0 when absent
	cur    []int64 // per scored clause, its next posting
	heap   hitHeap
}

// qterm is one scored clause: a term with its query count and the float32
// query-side weight the scheme multiplies its postings by.
type qterm struct {
	id  int32
	qtf int32
	w   float32
}

// NewSearcher returns a Searcher over ix.
func (ix *Index) NewSearcher() *Searcher {
	// The accumulators are always maxWindow long, so the add loops can
	// index them without bounds checks; a narrower window uses a prefix.
	s := &Searcher{ix: ix, tpos: make([]int32, len(ix.df)), win: int32(min(windowDocs, maxWindow))}
	if ix.params.Scheme == Lucene {
		s.acc64 = make([]float64, maxWindow)
	} else {
		s.acc32 = make([]float32, maxWindow)
	}
	return s
}

// Search scores every document for the analyzed query and returns the best
// k, best first.
//
// R2MED and Robertson rank the whole corpus, as their Python references sort
// all scores: when fewer than k documents match, zero-score documents fill
// the list in corpus order. Lucene returns matching documents only.
//
// Scoring runs window by window over document ids; inside a window the
// clauses are applied in the same order as a whole-corpus term-at-a-time
// pass would apply them, so every document's score is the same sum in the
// same order, bit for bit. The heap's order (score, then tie rank) is
// strict and total, so the kept hits do not depend on the visiting order.
func (s *Searcher) Search(query []string, k int) []Hit {
	s.ids = s.ix.AppendTermIDs(s.ids[:0], query)
	return s.SearchIDs(s.ids, k)
}

// SearchIDs is Search for a query whose tokens were looked up already
// (AppendTermIDs on this index: a term id per token, -1 for a token no
// document holds), for a caller that needs the ids too: the same hits.
func (s *Searcher) SearchIDs(ids []int32, k int) []Hit {
	if k <= 0 {
		return nil
	}
	switch s.ix.params.Scheme {
	case R2MED:
		s.clausesR2MED(ids)
	case Robertson:
		s.clausesRobertson(ids)
	case Lucene:
		s.clausesLucene(ids)
	}
	s.heap.reset(k, s.ix.tieRank)
	s.scoreWindows()
	return s.topK(k)
}

// AppendTermIDs appends the id of each of terms to dst, -1 for a term no
// document holds, and returns the extended slice.
func (ix *Index) AppendTermIDs(dst []int32, terms []string) []int32 {
	for _, t := range terms {
		id, ok := ix.lookup(t)
		if !ok {
			id = -1
		}
		dst = append(dst, id)
	}
	return dst
}

// uniqueTerms collects the query's known terms with their counts, in order
// of first occurrence, and the number of known tokens.
func (s *Searcher) uniqueTerms(ids []int32) (n int) {
	s.terms = s.terms[:0]
	for _, id := range ids {
		if id < 0 {
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

func (s *Searcher) clausesR2MED(ids []int32) {
	ix := s.ix
	qlen := s.uniqueTerms(ids)
	// gensim's doc2bow drops unknown tokens before the BM25 transform, so the
	// query length counts known tokens only; the sparse product then visits
	// each document's terms in ascending id order.
	slices.SortFunc(s.terms, func(a, b qterm) int { return cmp.Compare(a.id, b.id) })
	avgdl := ix.AvgDocLen()
	for i, qt := range s.terms {
		s.terms[i].w = float32(r2medWeight(ix.idf[qt.id], float64(qt.qtf), float64(qlen), ix.params.K1, ix.params.B, avgdl))
	}
}

func (s *Searcher) clausesRobertson(ids []int32) {
	// bm25s adds one posting column per query token occurrence, in query
	// order: one clause per occurrence, repeated terms included.
	s.terms = s.terms[:0]
	for _, id := range ids {
		if id >= 0 {
			s.terms = append(s.terms, qterm{id: id, qtf: 1, w: 1})
		}
	}
}

func (s *Searcher) clausesLucene(ids []int32) {
	ix := s.ix
	// Anserini's bag-of-words query boosts each distinct term by its count;
	// Lucene scores each clause in float32 and sums clauses in float64.
	s.uniqueTerms(ids)
	for i, qt := range s.terms {
		s.terms[i].w = float32(qt.qtf) * float32(ix.idf[qt.id])
	}
}

// scoreWindows applies every clause to every window of document ids and
// offers each window's positive scores to the heap.
func (s *Searcher) scoreWindows() {
	ix := s.ix
	s.cur = s.cur[:0]
	next := int32(math.MaxInt32) // smallest document id any clause has left
	for _, qt := range s.terms {
		j := ix.off[qt.id]
		s.cur = append(s.cur, j)
		if j < ix.off[qt.id+1] {
			next = min(next, ix.postDoc[j])
		}
	}
	win := s.win
	for int(next) < ix.numDocs {
		// Windows are aligned so that a document always falls in the same
		// one; a window no clause reaches is skipped.
		lo := next / win * win
		hi := lo + win
		next = math.MaxInt32
		for c, qt := range s.terms {
			j, end := s.cur[c], ix.off[qt.id+1]
			switch ix.params.Scheme {
			case R2MED, Robertson:
				// Robertson's clauses weigh 1, and float32(1·x) is x.
				j = s.addWeighted(j, end, lo, hi, qt.w)
			case Lucene:
				j = s.addLucene(j, end, lo, hi, qt.w)
			}
			s.cur[c] = j
			if j < end {
				next = min(next, ix.postDoc[j])
			}
		}
		s.collect(lo)
	}
}

// The add loops below run once per posting, so they are written for the
// compiler: postings are resliced to the clause's remaining run and the
// window is a fixed-size array indexed under a mask, which removes every
// bounds check from the loop; the touched blocks collect in a register.

// addWeighted adds the clause weight times each stored posting weight.
func (s *Searcher) addWeighted(j, end int64, lo, hi int32, wq float32) int64 {
	post := s.ix.postDoc[j:end]
	val := s.ix.postVal[j:end]
	val = val[:len(post)]
	acc := (*[maxWindow]float32)(s.acc32)
	var blocks uint64
	for k, d := range post {
		if d >= hi {
			s.blocks |= blocks
			return j + int64(k)
		}
		i := uint32(d-lo) & (maxWindow - 1)
		blocks |= 1 << (i >> 6)
		// The conversion forbids fusing into an FMA: scipy (R2MED) rounds
		// the product to float32 before adding.
		acc[i] += float32(wq * val[k])
	}
	s.blocks |= blocks
	return end
}

func (s *Searcher) addLucene(j, end int64, lo, hi int32, w float32) int64 {
	post := s.ix.postDoc[j:end]
	val := s.ix.postVal[j:end]
	val = val[:len(post)]
	norm := s.ix.normInv
	acc := (*[maxWindow]float64)(s.acc64)
	var blocks uint64
	for k, d := range post {
		if d >= hi {
			s.blocks |= blocks
			return j + int64(k)
		}
		i := uint32(d-lo) & (maxWindow - 1)
		blocks |= 1 << (i >> 6)
		sc := w - w/(1+val[k]*norm[d])
		acc[i] += float64(sc)
	}
	s.blocks |= blocks
	return end
}

// collect offers the window's non-zero scores to the heap and clears the
// window. A document no clause reached holds zero, like one whose sum is
// zero (idf 0 in Robertson); both, and NaN sums, join the zero-score tail
// filled in later, in corpus order, so only touched blocks need a look.
func (s *Searcher) collect(lo int32) {
	h := &s.heap
	for blocks := s.blocks; blocks != 0; blocks &= blocks - 1 {
		b := int32(bits.TrailingZeros64(blocks)) * 64
		if s.acc64 != nil {
			acc := s.acc64[b : b+64]
			for i, x := range acc {
				if sc := float32(x); sc != 0 && sc == sc && h.wants(sc) {
					h.offer(Hit{Doc: lo + b + int32(i), Score: sc})
				}
			}
			clear(acc)
		} else {
			acc := s.acc32[b : b+64]
			for i, sc := range acc {
				if sc != 0 && sc == sc && h.wants(sc) {
					h.offer(Hit{Doc: lo + b + int32(i), Score: sc})
				}
			}
			clear(acc)
		}
	}
	s.blocks = 0
}

func (s *Searcher) topK(k int) []Hit {
	ix := s.ix
	h := &s.heap
	out := h.drain()
	if ix.params.Scheme != Lucene && len(out) < k {
		// The heap kept every positive document; all others score exactly
		// zero, and R2MED's stable sort keeps them in corpus order.
		pos := make([]int32, len(out))
		for i, hit := range out {
			pos[i] = hit.Doc
		}
		slices.Sort(pos)
		for d := int32(0); int(d) < ix.numDocs && len(out) < k; d++ {
			if len(pos) > 0 && pos[0] == d {
				pos = pos[1:]
				continue
			}
			out = append(out, Hit{Doc: d})
		}
	}
	return out
}

// hitHeap is a bounded min-heap whose root is the worst hit kept so far.
type hitHeap struct {
	k    int
	hits []Hit
	rank []int32 // tie rank per document; nil means corpus order
}

func (h *hitHeap) reset(k int, rank []int32) {
	h.k, h.hits, h.rank = k, h.hits[:0], rank
}

// better orders hits by score, then by the index's tie rank.
func (h *hitHeap) better(a, b Hit) bool {
	if a.Score != b.Score {
		return a.Score > b.Score
	}
	if h.rank == nil {
		return a.Doc < b.Doc
	}
	return h.rank[a.Doc] < h.rank[b.Doc]
}

// wants reports whether a hit with this score may enter the heap: a cheap
// test that turns most hits away before offer's tie-aware comparison.
func (h *hitHeap) wants(score float32) bool {
	return len(h.hits) < h.k || score >= h.hits[0].Score
}

// offer keeps hit if it is among the k best seen.
func (h *hitHeap) offer(hit Hit) {
	if len(h.hits) < h.k {
		h.hits = append(h.hits, hit)
		h.up(len(h.hits) - 1)
		return
	}
	if !h.better(hit, h.hits[0]) {
		return
	}
	h.hits[0] = hit
	h.down(0)
}

func (h *hitHeap) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !h.better(h.hits[p], h.hits[i]) {
			break
		}
		h.hits[i], h.hits[p] = h.hits[p], h.hits[i]
		i = p
	}
}

func (h *hitHeap) down(i int) {
	n := len(h.hits)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && h.better(h.hits[l], h.hits[r]) {
			m = r
		}
		if !h.better(h.hits[i], h.hits[m]) {
			return
		}
		h.hits[i], h.hits[m] = h.hits[m], h.hits[i]
		i = m
	}
}

// drain empties the heap into a new slice, best first, with room for k.
func (h *hitHeap) drain() []Hit {
	out := make([]Hit, len(h.hits), h.k)
	for i := len(out) - 1; i >= 0; i-- {
		out[i] = h.hits[0]
		last := len(h.hits) - 1
		h.hits[0] = h.hits[last]
		h.hits = h.hits[:last]
		h.down(0)
	}
	return out
}
