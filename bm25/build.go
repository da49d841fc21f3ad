package bm25

import (
	"cmp"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
)

// Tokenize returns the terms of document i appended to dst. Build calls it
// from several goroutines at once.
type Tokenize func(i int, dst []string) []string

// BuildOptions tune indexing; the zero value works.
type BuildOptions struct {
	// Workers analyzing documents in parallel; 0 means GOMAXPROCS.
	Workers int
	// IDs, when given, are the documents' ids. The Lucene scheme breaks
	// score ties by them, as Anserini does; the other schemes keep corpus
	// order like the Python sorts behind them.
	IDs []string
	// Progress, when set, is called from worker goroutines with the number
	// of documents just analyzed, at most ProgressStep at a time.
	Progress func(docs int)
	// Terms, when set, maps each token Tokenize returns to its index term,
	// or drops it (ok false); Tokenize then returns raw tokens. Build calls
	// Terms once per distinct raw token in a chunk, not once per
	// occurrence, so the hot loop makes one map lookup per token instead of
	// one in the analyzer and one here. Terms must be safe for concurrent
	// use and a pure function of its input.
	Terms func(tok string) (term string, ok bool)
}

// ProgressStep is the most documents Build reports to Progress at once:
// often enough for a bar to move smoothly, seldom enough to cost nothing.
const ProgressStep = 256

// chunk is what one worker learns about a contiguous run of documents. Term
// ids are local to the chunk until the merge.
type chunk struct {
	start    int
	terms    []string
	first    []int32 // global index of the document where a local term first occurs
	docOff   []int32 // per document, its pairs are pairs[docOff[i]:docOff[i+1]]
	pairTerm []int32
	pairTF   []int32
	docLen   []int32
}

// Build analyzes and indexes n documents.
//
// Term ids follow gensim's Dictionary: terms are numbered by the document
// where they first occur, and terms new in the same document in string
// order. R2MED's scores are float32 sums taken in term-id order, so keeping
// that numbering makes our sums, and so near-tied rankings, identical.
func Build(n int, tokenize Tokenize, p Params, opt BuildOptions) (*Index, error) {
	if err := p.validate(); err != nil {
		return nil, err
	}
	if opt.IDs != nil && len(opt.IDs) != n {
		return nil, fmt.Errorf("bm25: %d ids given for %d documents", len(opt.IDs), n)
	}
	chunks := analyzeChunks(n, tokenize, opt)
	ix := &Index{params: p, numDocs: n, docLen: make([]int32, n)}
	local2global := ix.mergeVocab(chunks)
	ix.fillPostings(chunks, local2global)
	ix.computeWeights(opt)
	return ix, nil
}

func analyzeChunks(n int, tokenize Tokenize, opt BuildOptions) []*chunk {
	workers := opt.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	// A few chunks per worker balance uneven document lengths; more would
	// repeat the same vocabulary in every chunk, and the merge of chunk
	// vocabularies is sequential.
	size := max(1024, n/(workers*3)+1)
	nchunks := (n + size - 1) / size
	chunks := make([]*chunk, nchunks)
	next := make(chan int, nchunks)
	for c := range nchunks {
		next <- c
	}
	close(next)
	var wg sync.WaitGroup
	for range min(workers, max(nchunks, 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var toks []string
			counts := []int32{}
			var touched []int32
			// One map per worker, cleared between chunks, keeps its grown
			// table instead of regrowing it for every chunk.
			ids := make(map[string]int32)
			raw := make(map[string]int32) // raw token → term id, or -1 when dropped
			for c := range next {
				start := c * size
				end := min(n, start+size)
				ch := &chunk{start: start, docOff: make([]int32, 1, end-start+1)}
				reported := 0
				clear(ids)
				clear(raw)
				termID := func(t string, doc int) int32 {
					id, ok := ids[t]
					if !ok {
						id = int32(len(ch.terms))
						t = strings.Clone(t) // do not pin the document text
						ids[t] = id
						ch.terms = append(ch.terms, t)
						ch.first = append(ch.first, int32(doc))
						counts = append(counts, 0)
					}
					return id
				}
				for i := start; i < end; i++ {
					toks = tokenize(i, toks[:0])
					dl := 0
					for _, t := range toks {
						var id int32
						if opt.Terms == nil {
							id = termID(t, i)
						} else {
							r, seen := raw[t]
							if !seen {
								r = -1
								if term, keep := opt.Terms(t); keep {
									r = termID(term, i)
								}
								raw[strings.Clone(t)] = r
							}
							if r < 0 {
								continue
							}
							id = r
						}
						dl++
						if counts[id] == 0 {
							touched = append(touched, id)
						}
						counts[id]++
					}
					for _, id := range touched {
						ch.pairTerm = append(ch.pairTerm, id)
						ch.pairTF = append(ch.pairTF, counts[id])
						counts[id] = 0
					}
					touched = touched[:0]
					ch.docLen = append(ch.docLen, int32(dl))
					ch.docOff = append(ch.docOff, int32(len(ch.pairTerm)))
					if done := i + 1 - start; opt.Progress != nil && (done%ProgressStep == 0 || i+1 == end) {
						opt.Progress(done - reported)
						reported = done
					}
				}
				counts = counts[:0]
				chunks[c] = ch
			}
		}()
	}
	wg.Wait()
	return chunks
}

// mergeVocab assigns global term ids in gensim order and returns, per chunk,
// the map from local to global ids.
func (ix *Index) mergeVocab(chunks []*chunk) [][]int32 {
	ix.vocab = make(map[string]int32)
	l2g := make([][]int32, len(chunks))
	order := []int32{}
	for c, ch := range chunks {
		order = order[:0]
		for id := range ch.terms {
			order = append(order, int32(id))
		}
		slices.SortFunc(order, func(a, b int32) int {
			if d := cmp.Compare(ch.first[a], ch.first[b]); d != 0 {
				return d
			}
			return strings.Compare(ch.terms[a], ch.terms[b])
		})
		m := make([]int32, len(ch.terms))
		for _, id := range order {
			t := ch.terms[id]
			g, ok := ix.vocab[t]
			if !ok {
				g = int32(len(ix.vocab))
				ix.vocab[t] = g
			}
			m[id] = g
		}
		l2g[c] = m
	}
	return l2g
}

func (ix *Index) fillPostings(chunks []*chunk, l2g [][]int32) {
	nt := len(ix.vocab)
	ix.df = make([]int32, nt)
	for c, ch := range chunks {
		m := l2g[c]
		for _, id := range ch.pairTerm {
			ix.df[m[id]]++
		}
		copy(ix.docLen[ch.start:], ch.docLen)
		for _, l := range ch.docLen {
			ix.total += int64(l)
		}
	}
	ix.off = make([]int64, nt+1)
	for t, d := range ix.df {
		ix.off[t+1] = ix.off[t] + int64(d)
	}
	np := ix.off[nt]
	ix.postDoc = make([]int32, np)
	ix.postVal = make([]float32, np)
	cursor := make([]int64, nt)
	copy(cursor, ix.off[:nt])
	for c, ch := range chunks {
		m := l2g[c]
		for i := range len(ch.docOff) - 1 {
			d := int32(ch.start + i)
			for j := ch.docOff[i]; j < ch.docOff[i+1]; j++ {
				g := m[ch.pairTerm[j]]
				k := cursor[g]
				cursor[g]++
				ix.postDoc[k] = d
				ix.postVal[k] = float32(ch.pairTF[j]) // raw tf until computeWeights
			}
		}
		chunks[c] = nil // let the chunk go as soon as it is copied
	}
}

func (ix *Index) computeWeights(opt BuildOptions) {
	p := ix.params
	n := ix.numDocs
	nt := len(ix.df)
	ix.idf = make([]float64, nt)
	switch p.Scheme {
	case R2MED:
		// gensim: idf = ln(N+1) − ln(df+0.5); avgdl = num_pos / num_docs.
		avgdl := ix.AvgDocLen()
		for t, df := range ix.df {
			ix.idf[t] = idfOf(p.Scheme, n, 0, df)
		}
		parallelTerms(nt, func(t int) {
			idf := ix.idf[t]
			for j := ix.off[t]; j < ix.off[t+1]; j++ {
				ix.postVal[j] = float32(r2medWeight(idf, float64(ix.postVal[j]), float64(ix.docLen[ix.postDoc[j]]), p.K1, p.B, avgdl))
			}
		})
	case Robertson:
		// bm25s: idf = ln(max(1, (N−df+0.5)/(df+0.5))) stored as float32;
		// the tf part is float32 arithmetic on a float64 length factor.
		avgdl := ix.AvgDocLen()
		for t, df := range ix.df {
			ix.idf[t] = idfOf(p.Scheme, n, 0, df)
		}
		parallelTerms(nt, func(t int) {
			idf := float32(ix.idf[t])
			for j := ix.off[t]; j < ix.off[t+1]; j++ {
				dl := float64(ix.docLen[ix.postDoc[j]])
				lenPart := float32(p.K1 * ((1 - p.B) + p.B*dl/avgdl))
				tf := ix.postVal[j]
				ix.postVal[j] = idf * float32(tf/float32(lenPart+tf))
			}
		})
	case Lucene:
		var avgdl float32
		ix.docCount, avgdl = luceneDocs(ix.docLen)
		for t, df := range ix.df {
			ix.idf[t] = idfOf(p.Scheme, n, ix.docCount, df)
		}
		ix.normInv = make([]float32, n)
		for d, l := range ix.docLen {
			ix.normInv[d] = luceneNormInv(p, l, avgdl)
		}
		if opt.IDs != nil {
			order := make([]int32, n)
			for i := range order {
				order[i] = int32(i)
			}
			slices.SortFunc(order, func(a, b int32) int { return strings.Compare(opt.IDs[a], opt.IDs[b]) })
			ix.tieRank = make([]int32, n)
			for r, d := range order {
				ix.tieRank[d] = int32(r)
			}
		}
	}
}

// idfOf is a term's idf as the scheme computes it, from its document
// frequency and the number of documents (Lucene: those with the field,
// docCount). Build and FromArrays share it, so a stored index is checked
// against the very formula that made it.
func idfOf(s Scheme, n, docCount int, df int32) float64 {
	switch s {
	case R2MED:
		// gensim: idf = ln(N+1) − ln(df+0.5).
		return math.Log(float64(n)+1.0) - math.Log(float64(df)+0.5)
	case Robertson:
		// bm25s: idf = ln(max(1, (N−df+0.5)/(df+0.5))) stored as float32.
		inner := (float64(n) - float64(df) + 0.5) / (float64(df) + 0.5)
		if inner < 1 {
			inner = 1
		}
		return float64(float32(math.Log(inner)))
	default:
		return float64(float32(math.Log(1 + (float64(docCount)-float64(df)+0.5)/(float64(df)+0.5))))
	}
}

// luceneDocs is Lucene's docCount and average length: it takes both over
// the documents that have the field.
func luceneDocs(docLen []int32) (docCount int, avgdl float32) {
	var sum int64
	for _, l := range docLen {
		if l > 0 {
			docCount++
			sum += int64(l)
		}
	}
	if docCount > 0 {
		avgdl = float32(float64(sum) / float64(docCount))
	}
	return docCount, avgdl
}

// luceneNormInv is a document's inverse length norm in float32.
func luceneNormInv(p Params, l int32, avgdl float32) float32 {
	k1, b := float32(p.K1), float32(p.B)
	return 1 / (k1 * ((1 - b) + b*float32(l)/avgdl))
}

// r2medWeight is gensim's LuceneBM25Model term weight, with Python's
// left-to-right evaluation order kept so the float64 result is bit-identical:
// idf * (tf / (tf + k1 * (1 - b + b * dl / avgdl))).
func r2medWeight(idf, tf, dl, k1, b, avgdl float64) float64 {
	norm := float64(1-b) + float64(b*dl)/avgdl
	return idf * float64(tf/float64(tf+float64(k1*norm)))
}

func parallelTerms(nt int, fn func(t int)) {
	workers := runtime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	step := (nt + workers - 1) / max(workers, 1)
	for w := range workers {
		lo, hi := w*step, min(nt, (w+1)*step)
		if lo >= hi {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for t := lo; t < hi; t++ {
				fn(t)
			}
		}()
	}
	wg.Wait()
}
