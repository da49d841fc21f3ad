package minhash

import (
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
)

// Match is a member of a Collection that a searched text duplicates.
type Match struct {
	Member int // the member's position in the texts the collection was built from
	// Similarity is the exact Jaccard similarity of the two shingle sets
	// (1 for an exact match).
	Similarity float64
	// Exact reports equal normalised texts.
	Exact bool
}

// Collection holds a fixed set of texts for duplicate search: their exact
// keys, shingle sets and an LSH index. Memory is about 8 bytes per distinct
// shingle of each text plus 16 bytes per text per band; the texts
// themselves are not kept. Build it with NewCollection; it is then read-only and safe for
// concurrent use through Searchers.
type Collection struct {
	h     *Hasher
	ix    *Index
	sets  [][]uint64 // member i's sorted shingle set
	exact map[[2]uint64]int32
	next  []int32 // next member with the same exact key, -1 at the end
	empty int
}

// NewCollection normalises and indexes texts with workers goroutines (0
// means GOMAXPROCS). Empty texts (nothing left after normalisation) are
// members that nothing matches; Empty counts them.
func NewCollection(h *Hasher, texts []string, workers int) *Collection {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	n := len(texts)
	type item struct {
		key  [2]uint64
		sh   []uint64
		band []uint64
	}
	items := make([]item, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	const chunk = 256
	for range min(workers, (n+chunk-1)/chunk) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var norm []byte
			var sig []uint32
			var sh []uint64
			for {
				lo := int(next.Add(chunk) - chunk)
				if lo >= n {
					return
				}
				for i := lo; i < min(lo+chunk, n); i++ {
					norm = AppendNormalized(norm[:0], texts[i])
					if len(norm) == 0 {
						continue
					}
					s := string(norm)
					it := &items[i]
					it.key = h.TextKey(s)
					sh = h.Shingles(sh[:0], s)
					it.sh = slices.Clone(sh) // exact size: the sets are most of the memory
					sig = h.Signature(sig, it.sh)
					it.band = h.Keys(nil, sig)
				}
			}
		}()
	}
	wg.Wait()
	c := &Collection{h: h, ix: NewIndex(h.spec.Bands), sets: make([][]uint64, n), exact: make(map[[2]uint64]int32, n), next: make([]int32, n)}
	for i := range items {
		it := &items[i]
		c.next[i] = -1
		if it.sh == nil {
			c.empty++
			c.ix.Add(nil)
		} else {
			c.ix.Add(it.band)
			if first, ok := c.exact[it.key]; ok {
				// Chain after the last member with this key, keeping
				// members in order.
				last := first
				for c.next[last] >= 0 {
					last = c.next[last]
				}
				c.next[last] = int32(i)
			} else {
				c.exact[it.key] = int32(i)
			}
		}
		c.sets[i] = it.sh
		*it = item{}
	}
	c.ix.Freeze()
	return c
}

// Len is the number of members.
func (c *Collection) Len() int { return len(c.sets) }

// Empty counts members with no text after normalisation.
func (c *Collection) Empty() int { return c.empty }

// Hasher returns the collection's hasher.
func (c *Collection) Hasher() *Hasher { return c.h }

// Shingles returns member i's shingle set (shared; do not modify).
func (c *Collection) Shingles(i int) []uint64 { return c.sets[i] }

// Searcher searches a Collection; each goroutine uses its own.
type Searcher struct {
	c     *Collection
	probe *Probe
	norm  []byte
	sh    []uint64
	sig   []uint32
	keys  []uint64
	out   []Match
}

// NewSearcher makes a searcher of c.
func (c *Collection) NewSearcher() *Searcher { return &Searcher{c: c, probe: c.ix.NewProbe()} }

// Search returns the members text duplicates: exact matches first (in
// member order), then near-duplicates at or above the threshold that are
// not exact matches (in member order). The slice is reused by the next
// call.
func (s *Searcher) Search(text string) []Match {
	s.norm = AppendNormalized(s.norm[:0], text)
	return s.SearchNormalized(string(s.norm))
}

// SearchNormalized is Search for a text already normalised.
func (s *Searcher) SearchNormalized(normalized string) []Match {
	s.out = s.out[:0]
	if normalized == "" {
		return s.out
	}
	c := s.c
	h := c.h
	first, hasExact := c.exact[h.TextKey(normalized)]
	if hasExact {
		for m := first; m >= 0; m = c.next[m] {
			s.out = append(s.out, Match{Member: int(m), Similarity: 1, Exact: true})
		}
	}
	nExact := len(s.out)
	s.sh = h.Shingles(s.sh[:0], normalized)
	s.sig = h.Signature(s.sig, s.sh)
	s.keys = h.Keys(s.keys[:0], s.sig)
	t := h.spec.Threshold
	e := 0 // exact matches and candidates are both in member order
	for _, m := range s.probe.Candidates(s.keys) {
		for e < nExact && s.out[e].Member < int(m) {
			e++
		}
		if e < nExact && s.out[e].Member == int(m) {
			continue
		}
		other := c.Shingles(int(m))
		// The Jaccard similarity of two sets is at most the ratio of
		// their sizes: a cheap test before the merge. Divided as Jaccard
		// divides, so that a pair at the threshold passes (t·max rounds
		// up: 0.55 × 100 is 55.000000000000007).
		la, lb := len(s.sh), len(other)
		if float64(min(la, lb))/float64(max(la, lb)) < t {
			continue
		}
		if j := Jaccard(s.sh, other); j >= t {
			s.out = append(s.out, Match{Member: int(m), Similarity: j})
		}
	}
	return s.out
}
