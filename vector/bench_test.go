package vector

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"

	"github.com/viterin/vek/vek32"
)

// Benchmarks report MB/s as the bytes of stored vectors scanned per second:
// rows × bytes per row × queries per op. With one query that is real
// memory traffic; with a query batch each chunk of rows is read from memory
// once and scored against every query while it sits in cache, so the
// figure can exceed memory bandwidth.
//
//	go test ./vector -run '^$' -bench . -benchtime 3x

var synth struct {
	sync.Mutex
	flats map[[2]int]*Flat
}

// synthFlat returns a cached cosine store of n unit-normalized random rows.
// Rows are filled directly (no Add) to keep set-up short at 1M rows.
func synthFlat(n, dim int) *Flat {
	synth.Lock()
	defer synth.Unlock()
	key := [2]int{n, dim}
	if f, ok := synth.flats[key]; ok {
		return f
	}
	if synth.flats == nil {
		synth.flats = map[[2]int]*Flat{}
	}
	f := &Flat{dim: dim, metric: Cosine, rankOnce: new(sync.Once), data: make([]float32, n*dim), ids: make([]string, n), index: make(map[string]int32, n)}
	var wg sync.WaitGroup
	workers := runtime.GOMAXPROCS(0)
	for w := range workers {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), 99))
			for i := w; i < n; i += workers {
				row := f.data[i*dim : (i+1)*dim]
				for j := range row {
					row[j] = float32(r.Uint32()>>8)/(1<<24) - 0.5
				}
				normalize(row)
			}
		}(w)
	}
	wg.Wait()
	for i := range n {
		id := fmt.Sprintf("doc%07d", i)
		f.ids[i] = id
		f.index[id] = int32(i)
	}
	f.ranks()
	synth.flats[key] = f
	return f
}

type benchSize struct{ n, dim int }

var benchSizes = []benchSize{{100_000, 768}, {1_000_000, 384}}

// BenchmarkMemBandwidth measures this machine's read bandwidth (an AVX2 sum
// over 1 GiB, as a scan reads rows) and copy bandwidth, on one goroutine
// and on GOMAXPROCS.
func BenchmarkMemBandwidth(b *testing.B) {
	const n = 1 << 28 // 1 GiB of float32
	src := make([]float32, n)
	dst := make([]float32, n)
	for i := range src {
		src[i] = 1
	}
	copy(dst, src)
	for _, threads := range []int{1, runtime.GOMAXPROCS(0)} {
		b.Run(fmt.Sprintf("read/threads=%d", threads), func(b *testing.B) {
			b.SetBytes(int64(n * 4))
			var sink float32
			for b.Loop() {
				sums := make([]float32, threads)
				parallel(threads, n, func(t, lo, hi int) { sums[t] = vek32.Sum(src[lo:hi]) })
				sink += sums[0]
			}
			_ = sink
		})
		b.Run(fmt.Sprintf("copy/threads=%d", threads), func(b *testing.B) {
			b.SetBytes(int64(n * 4 * 2)) // read + write
			for b.Loop() {
				parallel(threads, n, func(_, lo, hi int) { copy(dst[lo:hi], src[lo:hi]) })
			}
		})
	}
}

func parallel(threads, n int, f func(t, lo, hi int)) {
	var wg sync.WaitGroup
	per := (n + threads - 1) / threads
	for t := range threads {
		wg.Add(1)
		go func(t int) {
			defer wg.Done()
			f(t, t*per, min(n, (t+1)*per))
		}(t)
	}
	wg.Wait()
}

func benchQueries(nq, dim int) [][]float32 { return randRows(uint64(dim), nq, dim) }

func BenchmarkFlatSearch(b *testing.B) {
	for _, s := range benchSizes {
		for _, nq := range []int{1, 64} {
			b.Run(fmt.Sprintf("%dx%d/q=%d", s.n, s.dim, nq), func(b *testing.B) {
				f := synthFlat(s.n, s.dim)
				qs := benchQueries(nq, s.dim)
				b.SetBytes(int64(s.n * s.dim * 4 * nq))
				b.ResetTimer()
				for b.Loop() {
					if _, err := f.Search(qs, 100, SearchOptions{}); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

var quantCache sync.Map // [2]int → *Int8 / *Binary by kind

func cachedIndex(kind string, n, dim int) Index {
	key := fmt.Sprint(kind, n, dim)
	if v, ok := quantCache.Load(key); ok {
		return v.(Index)
	}
	f := synthFlat(n, dim)
	var idx Index
	switch kind {
	case "int8":
		idx = NewInt8(f)
	case "binary":
		idx = NewBinary(f)
	}
	quantCache.Store(key, idx)
	return idx
}

func benchQuant(b *testing.B, kind string, rowBytes func(dim int) int) {
	for _, s := range benchSizes {
		for _, nq := range []int{1, 64} {
			for _, rescore := range []bool{false, true} {
				name := fmt.Sprintf("%dx%d/q=%d", s.n, s.dim, nq)
				if rescore {
					name += "/rescore"
				}
				b.Run(name, func(b *testing.B) {
					idx := cachedIndex(kind, s.n, s.dim)
					qs := benchQueries(nq, s.dim)
					b.SetBytes(int64(s.n * rowBytes(s.dim) * nq))
					b.ResetTimer()
					for b.Loop() {
						if _, err := idx.Search(qs, 100, SearchOptions{Rescore: rescore}); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		}
	}
}

func BenchmarkInt8Search(b *testing.B) {
	benchQuant(b, "int8", func(dim int) int { return dim })
}

func BenchmarkBinarySearch(b *testing.B) {
	benchQuant(b, "binary", func(dim int) int { return (dim + 63) / 64 * 8 })
}

// BenchmarkFlatBatch is the side of the FAISS comparison
// (bench/faiss/flat_ip.py: IndexFlatIP over the same shapes): 100k × 768
// cosine rows, top 100 of 1, 100 and 1,000 queries, on 1 and 2 workers.
// "3q" is Search as it runs, three queries per pass over the rows (four
// rows at a time); "1q" scores one query per pass, for comparison.
//
//	go test ./vector -run '^$' -bench FlatBatch -benchtime 3x -count 3
func BenchmarkFlatBatch(b *testing.B) {
	const n, dim = 100_000, 768
	for _, w := range []int{1, 2} {
		for _, nq := range []int{1, 100, 1000} {
			for _, kind := range []string{"3q", "1q"} {
				if nq == 1 && kind == "1q" {
					continue // one query is scored one query at a time anyway
				}
				b.Run(fmt.Sprintf("q=%d/w=%d/%s", nq, w, kind), func(b *testing.B) {
					f := synthFlat(n, dim)
					qs := benchQueries(nq, dim)
					b.ResetTimer()
					for b.Loop() {
						if kind == "3q" {
							if _, err := f.Search(qs, 100, SearchOptions{Workers: w}); err != nil {
								b.Fatal(err)
							}
							continue
						}
						pq, err := f.prepare(qs, 100, SearchOptions{})
						if err != nil {
							b.Fatal(err)
						}
						one := struct{ kernel }{newFloatKernel(f, pq)} // hides score3
						scan(one, f.Len(), len(pq), 100, nil, f.ranks(), w, f.dim*4)
					}
					b.ReportMetric(float64(nq*b.N)/b.Elapsed().Seconds(), "queries/s")
				})
			}
		}
	}
}
