package vector

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"runtime"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
)

// Hit is one search result: the row index in the store, its id and score.
type Hit struct {
	Index int
	ID    string
	Score float32
}

// SearchOptions tunes a search. The zero value searches with GOMAXPROCS
// workers, excludes nothing and, for quantized indexes, does not rescore.
type SearchOptions struct {
	// Workers is the number of goroutines scanning rows; 0 means
	// GOMAXPROCS. Results do not depend on it.
	Workers int

	// SkipSelf drops, for query i, the row whose id equals QueryIDs[i],
	// as BEIR's DenseRetrievalExactSearch does. QueryIDs must then hold
	// one id per query.
	SkipSelf bool
	QueryIDs []string

	// Exclude, when not nil, holds one list of row ids per query that the
	// query must not return (BRIGHT's excluded_ids). Ids absent from the
	// store exclude nothing.
	Exclude [][]string

	// Rescore makes a quantized index take the Oversample·k best rows by
	// the quantized score and order them by their exact float32 score.
	// Oversample 0 means 4, the rescore_multiplier sentence-transformers'
	// quantization examples pass (its semantic_search_faiss and
	// semantic_search_usearch default to 2).
	// A Flat ignores both.
	Rescore    bool
	Oversample float64
}

func (o SearchOptions) workers() int {
	if o.Workers > 0 {
		return o.Workers
	}
	return runtime.GOMAXPROCS(0)
}

func checkSearch(nq, k int, o SearchOptions) error {
	if k < 0 {
		return fmt.Errorf("vector: search: k is %d; want k ≥ 0", k)
	}
	if o.SkipSelf && len(o.QueryIDs) != nq {
		return fmt.Errorf("vector: search: SkipSelf needs one query id per query: got %d ids for %d queries", len(o.QueryIDs), nq)
	}
	if o.Exclude != nil && len(o.Exclude) != nq {
		return fmt.Errorf("vector: search: Exclude needs one list per query: got %d lists for %d queries", len(o.Exclude), nq)
	}
	if o.Oversample < 0 || (o.Oversample > 0 && o.Oversample < 1) {
		return fmt.Errorf("vector: search: Oversample is %g; want 0 (default 4) or ≥ 1", o.Oversample)
	}
	return nil
}

var errNoDim = errors.New("vector: search: the store has no dimension yet (add a row or use NewFlat)")

// exclusions turns the options' excluded ids into sorted row indices per
// query; nil when nothing is excluded.
func exclusions(nq int, o SearchOptions, lookup func(string) (int, bool)) [][]int32 {
	if !o.SkipSelf && o.Exclude == nil {
		return nil
	}
	ex := make([][]int32, nq)
	for qi := range nq {
		var l []int32
		if o.SkipSelf {
			if i, ok := lookup(o.QueryIDs[qi]); ok {
				l = append(l, int32(i))
			}
		}
		if o.Exclude != nil {
			for _, id := range o.Exclude[qi] {
				if i, ok := lookup(id); ok {
					l = append(l, int32(i))
				}
			}
		}
		slices.Sort(l)
		ex[qi] = slices.Compact(l)
	}
	return ex
}

func (f *Flat) exclusions(nq int, o SearchOptions) [][]int32 {
	return exclusions(nq, o, f.Lookup)
}

// kernel computes raw scores of one query against a run of rows. Higher is
// better. A kernel must give a (query, row) pair the same score however the
// rows are chunked, so that results do not depend on the worker count.
type kernel interface {
	score(qi, lo, hi int, out []float32)
}

// multiKernel is a kernel that can also score several queries in one pass
// over the rows, each exactly as score would: batch search then reads each
// row once per several queries, so that it is bound by arithmetic rather
// than by loading rows.
type multiKernel interface {
	kernel
	// scoreMany scores queries qi, qi+1, … against rows [lo, hi), query
	// qi+b into out[b·stride:][:hi-lo], as many at once as it can (at
	// least one, at most most), and returns how many it scored.
	scoreMany(qi, lo, hi int, out []float32, stride, most int) int
}

// maxMany is the most queries a multiKernel is offered at once.
const maxMany = 6

type cand struct {
	score float32
	idx   int32
}

// topk keeps the k best candidates offered, among at most 2k held:
// candidates are appended while they are not below the bar, and when 2k
// are held the k best are selected (selectBest) and the bar raised to the
// worst of them. "Better" is score descending, then id ascending: a strict
// total order on rows (ids are unique), so what is kept does not depend on
// the order candidates arrive in, and a candidate below the bar is worse
// than k kept ones and can never be among the k best. An append costs one
// store where a heap pays a sift through its levels; selecting costs O(k)
// per k appends. (FAISS's reservoir result handler works this way.)
type topk struct {
	k   int
	h   []cand
	bar float32 // the least score kept: −Inf until the first selection
	ids []int32 // rank of each row's id in byte order
}

// worse reports whether a ranks below b; rank holds each row's position in
// id order, so ties cost two array reads, not a string comparison (binary
// scores tie by the thousand).
func worse(a, b cand, rank []int32) bool {
	if a.score != b.score {
		return a.score < b.score
	}
	return rank[a.idx] > rank[b.idx]
}

func (t *topk) push(c cand) {
	t.h = append(t.h, c)
	if len(t.h) >= 2*t.k {
		selectBest(t.h, t.k, t.ids)
		t.h = t.h[:t.k]
		t.bar = t.h[t.k-1].score
	}
}

// selectBest reorders c so that its k best candidates come first, the
// k-th best at k−1 and the others in no particular order (quickselect,
// median-of-three pivots; deterministic).
func selectBest(c []cand, k int, rank []int32) {
	lo, hi := 0, len(c)-1
	for lo < hi {
		mid := lo + (hi-lo)/2
		// Order lo, mid, hi best first, and take the middle as the pivot.
		if worse(c[lo], c[mid], rank) {
			c[lo], c[mid] = c[mid], c[lo]
		}
		if worse(c[mid], c[hi], rank) {
			c[mid], c[hi] = c[hi], c[mid]
			if worse(c[lo], c[mid], rank) {
				c[lo], c[mid] = c[mid], c[lo]
			}
		}
		p := c[mid]
		i, j := lo, hi
		for i <= j {
			for worse(p, c[i], rank) {
				i++
			}
			for worse(c[j], p, rank) {
				j--
			}
			if i <= j {
				c[i], c[j] = c[j], c[i]
				i++
				j--
			}
		}
		// c[lo..j] are not worse than p, c[i..hi] not better.
		switch {
		case k-1 <= j:
			hi = j
		case k-1 >= i:
			lo = i
		default:
			return
		}
	}
}

// feed offers the scores of rows lo.. to the top-k, skipping excluded rows.
// The threshold test comes first, 64 scores at a time, so exclusions cost
// nothing for rows that would not be kept anyway; a candidate the bar
// has risen above since its block was tested is not offered.
func (t *topk) feed(lo int, scores []float32, ex []int32) {
	for base := 0; base < len(scores); base += 64 {
		block := scores[base:min(len(scores), base+64)]
		for m := notBelowMask(block, t.bar); m != 0; m &= m - 1 {
			j := base + bits.TrailingZeros64(m)
			s := scores[j]
			if s < t.bar {
				continue
			}
			idx := int32(lo + j)
			if len(ex) > 0 {
				if _, found := slices.BinarySearch(ex, idx); found {
					continue
				}
			}
			t.push(cand{s, idx})
		}
	}
}

// maxHeldCands bounds the candidates held at once (workers × batched
// queries × up to 2k), about 64 MiB, so that a search over many queries with a
// large k does not hold a queries × workers × k table.
const maxHeldCands = 8 << 20

// chunkBytes is the size of the run of rows a worker scores against every
// query of a batch before moving on: it stays in L2 while the queries pass
// over it, so each row is read from memory once per batch.
const chunkBytes = 128 << 10

// scan runs kern over all n rows for nq queries and returns each query's k
// best candidates, best first. Memory beyond the output is
// O(workers × batch × k) plus one chunk of scores per worker.
func scan(kern kernel, n, nq, k int, ex [][]int32, ids []int32, workers, rowBytes int) [][]cand {
	out := make([][]cand, nq)
	if k == 0 || n == 0 || nq == 0 {
		return out
	}
	kk := min(k, n)
	chunk := max(16, chunkBytes/max(rowBytes, 1))
	if c := (n + 4*workers - 1) / (4 * workers); c < chunk {
		chunk = max(16, c) // enough chunks to keep every worker busy
	}
	if chunk >= 16 {
		chunk &^= 3 // whole tiles of the four-row batch kernel
	}
	nchunks := (n + chunk - 1) / chunk
	workers = max(1, min(workers, nchunks))
	batch := max(1, min(nq, maxHeldCands/(workers*2*kk)))

	mk, _ := kern.(multiKernel)
	tops := make([][]topk, workers)
	scratch := make([][]float32, workers)
	for w := range workers {
		tops[w] = make([]topk, batch)
		scratch[w] = make([]float32, maxMany*chunk)
	}
	var fault carried
	for q0 := 0; q0 < nq; q0 += batch {
		q1 := min(nq, q0+batch)
		var next atomic.Int64
		var wg sync.WaitGroup
		for w := range workers {
			hs := tops[w][:q1-q0]
			for i := range hs {
				hs[i] = topk{k: kk, h: hs[i].h[:0], bar: float32(math.Inf(-1)), ids: ids}
			}
			wg.Add(1)
			go func(hs []topk, buf []float32) {
				defer wg.Done()
				defer fault.catch()
				debug.SetPanicOnFault(true) // rows may be a mapped file's (package index)
				for {
					c := int(next.Add(1)) - 1
					if c >= nchunks {
						return
					}
					lo := c * chunk
					hi := min(n, lo+chunk)
					m := hi - lo
					var sc [maxMany][]float32
					for i := range sc {
						sc[i] = buf[i*chunk : i*chunk+m]
					}
					for qi := q0; qi < q1; {
						nb := 1
						if mk != nil {
							nb = mk.scoreMany(qi, lo, hi, buf, chunk, min(maxMany, q1-qi))
						} else {
							kern.score(qi, lo, hi, sc[0])
						}
						// Which queries have a score to offer: after the
						// first chunks, almost never any.
						offer := 1<<nb - 1
						if nb == maxMany {
							var bars [maxMany]float32
							for b := range bars {
								bars[b] = hs[qi+b-q0].bar
							}
							offer = notBelow6(&sc, m, &bars)
						}
						for ; offer != 0; offer &= offer - 1 {
							b := bits.TrailingZeros(uint(offer))
							var e []int32
							if ex != nil {
								e = ex[qi+b]
							}
							hs[qi+b-q0].feed(lo, sc[b], e)
						}
						qi += nb
					}
				}
			}(hs, scratch[w])
		}
		wg.Wait()
		fault.rethrow()
		for qi := q0; qi < q1; qi++ {
			var all []cand
			for w := range workers {
				all = append(all, tops[w][qi-q0].h...)
			}
			if len(all) > kk {
				selectBest(all, kk, ids)
				all = all[:kk:kk]
			}
			sortCands(all, ids)
			out[qi] = all
		}
	}
	return out
}

// carried takes a worker's panic to the goroutine that waits for the
// workers. Workers read rows that may be a mapped index file's; if the
// file is truncated under the mapping, the read faults, and the fault,
// made a panic by debug.SetPanicOnFault, panics again in the caller, where
// index.Guard turns it into an error (a panic in a worker would end the
// process whatever the caller does).
type carried struct {
	mu sync.Mutex
	p  any
}

// catch is deferred by a worker.
func (c *carried) catch() {
	if p := recover(); p != nil {
		c.mu.Lock()
		if c.p == nil {
			c.p = p
		}
		c.mu.Unlock()
	}
}

// rethrow panics with the first worker's panic, if any.
func (c *carried) rethrow() {
	if c.p != nil {
		panic(c.p)
	}
}

// sortCands orders candidates best first: score descending, id ascending.
func sortCands(c []cand, ids []int32) {
	slices.SortFunc(c, func(a, b cand) int {
		switch {
		case worse(b, a, ids):
			return -1
		case worse(a, b, ids):
			return 1
		}
		return 0
	})
}

// toHits converts candidates to hits; conv, if not nil, maps a query's raw
// kernel score to the reported score.
func toHits(res [][]cand, ids []string, conv func(qi int, raw float32) float32) [][]Hit {
	out := make([][]Hit, len(res))
	for qi, cs := range res {
		hs := make([]Hit, len(cs))
		for i, c := range cs {
			s := c.score
			if conv != nil {
				s = conv(qi, s)
			}
			hs[i] = Hit{Index: int(c.idx), ID: ids[c.idx], Score: s}
		}
		out[qi] = hs
	}
	return out
}
