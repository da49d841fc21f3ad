package weaviate_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/r2med/r2med/analysis"
	"github.com/r2med/r2med/bm25"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/vector"
	"github.com/r2med/r2med/weaviate"
	"github.com/r2med/r2med/weaviate/weaviatetest"
)

// clients is the number of queries in flight in every query benchmark,
// against Weaviate and in process alike.
const clients = 4

// The benchmarks measure, on NFCorpus (3,395 documents, 323 test queries,
// 128-dimensional stand-in vectors), push throughput and query throughput
// and latency of weaviate:bm25/vector/hybrid on one node and on a 3-node
// cluster (3 shards × 3 replicas), next to r2med's in-process BM25 and
// exact flat search on the same data. b.N counts objects (push) or
// queries (search); run them with a fixed count, bounded in time:
//
//	go test -run '^$' -bench . -benchtime 3000x ./weaviate/
//
// Each reports objects/s or queries/s and p50/p99 latency in ms.

func BenchmarkSingleNode(b *testing.B) {
	f := nfcorpus(b)
	node := weaviatetest.Start(b, weaviatetest.Options{})
	benchWeaviate(b, f, []*weaviatetest.Node{node}, weaviate.Schema{Vectors: f.vectors()}, "")
}

func BenchmarkCluster(b *testing.B) {
	f := nfcorpus(b)
	nodes := weaviatetest.StartCluster(b, 3, weaviatetest.Options{Env: weaviatetest.ClusterSettings})
	benchWeaviate(b, f, nodes, weaviate.Schema{Shards: 3, Replicas: 3, Vectors: f.vectors()}, "QUORUM")
}

func benchWeaviate(b *testing.B, f *fixture, nodes []*weaviatetest.Node, schema weaviate.Schema, consistency string) {
	ctx := context.Background()
	open := func(name string) *weaviate.Collection {
		c, err := weaviate.Open(weaviate.Config{URL: nodes[0].URL(), GRPC: nodes[0].GRPCAddr(), Collection: name})
		if err != nil {
			b.Fatal(err)
		}
		return c
	}
	pushes := 0
	b.Run("push", func(b *testing.B) {
		// b.N objects: the corpus, again with new ids while b.N asks for more.
		docs := make([]ir.Doc, b.N)
		vecs := make([][]float32, b.N)
		for i := range docs {
			d := f.task.Corpus[i%len(f.task.Corpus)]
			docs[i] = ir.Doc{ID: fmt.Sprintf("%s#%d", d.ID, i/len(f.task.Corpus)), Text: d.Text}
			vecs[i] = f.vecs[i%len(f.vecs)]
		}
		pushes++
		c := open(fmt.Sprintf("Push%d", pushes))
		if _, err := c.Ensure(ctx, schema); err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		st, err := c.Push(ctx, docs, vecs, weaviate.PushOptions{Consistency: consistency})
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		b.ReportMetric(float64(st.Written)/st.Elapsed.Seconds(), "objects/s")
		if err := c.Delete(ctx); err != nil {
			b.Fatal(err)
		}
	})

	c := open("Bench")
	if _, err := c.Ensure(ctx, schema); err != nil {
		b.Fatal(err)
	}
	if _, err := c.Push(ctx, f.task.Corpus, f.vecs, weaviate.PushOptions{Consistency: consistency}); err != nil {
		b.Fatal(err)
	}
	for _, n := range nodes {
		if err := n.WaitFlushed(ctx); err != nil {
			b.Fatal(err)
		}
	}
	qs := f.queries()
	for _, o := range []weaviate.SearchOptions{
		{Mode: weaviate.BM25},
		{Mode: weaviate.Vector},
		{Mode: weaviate.Hybrid, Alpha: weaviate.DefaultAlpha},
	} {
		o.K, o.Consistency = 100, consistency
		b.Run("weaviate:"+o.Mode.String(), func(b *testing.B) {
			load(b, len(qs), func(i int) error {
				_, err := c.Search(ctx, qs[i], o)
				return err
			})
		})
	}
}

// BenchmarkInProcess is r2med's own retrievers on the same data and
// queries: BM25 (Lucene's analyzer and scoring) and exact flat cosine
// search, one query at a time from the same number of clients.
func BenchmarkInProcess(b *testing.B) {
	f := nfcorpus(b)
	an := analysis.LuceneEnglish()
	ids := make([]string, len(f.task.Corpus))
	for i, d := range f.task.Corpus {
		ids[i] = d.ID
	}
	ix, err := bm25.Build(len(ids), func(i int, dst []string) []string { return an.Analyze(dst, f.task.Corpus[i].Text) },
		bm25.DefaultParams(bm25.Lucene), bm25.BuildOptions{IDs: ids})
	if err != nil {
		b.Fatal(err)
	}
	searchers := sync.Pool{New: func() any { return ix.NewSearcher() }}
	b.Run("r2med:bm25-lucene", func(b *testing.B) {
		load(b, len(f.task.Queries), func(i int) error {
			s := searchers.Get().(*bm25.Searcher)
			s.Search(an.Analyze(nil, f.task.Queries[i].Text), 100)
			searchers.Put(s)
			return nil
		})
	})
	flat := vector.NewFlat(embedDim, vector.Cosine)
	if err := flat.AddAll(ids, f.vecs); err != nil {
		b.Fatal(err)
	}
	b.Run("r2med:flat", func(b *testing.B) {
		load(b, len(f.qvecs), func(i int) error {
			_, err := flat.Search(f.qvecs[i:i+1], 100, vector.SearchOptions{Workers: 1})
			return err
		})
	})
}

// load sends b.N queries (query i%n) from clients goroutines, one at a
// time each, and reports the throughput and the latency percentiles. Any
// failed query fails the benchmark.
func load(b *testing.B, n int, query func(i int) error) {
	b.Helper()
	lat := make([]time.Duration, b.N)
	var next atomic.Int64
	var failed atomic.Int64
	var firstErr atomic.Value
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= b.N {
					return
				}
				t0 := time.Now()
				if err := query(i % n); err != nil {
					failed.Add(1)
					firstErr.CompareAndSwap(nil, err)
				}
				lat[i] = time.Since(t0)
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	if failed.Load() > 0 {
		b.Fatalf("%d of %d queries failed; first: %v", failed.Load(), b.N, firstErr.Load())
	}
	slices.Sort(lat)
	pct := func(p float64) float64 {
		return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))].Microseconds()) / 1000
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "queries/s")
	b.ReportMetric(pct(0.50), "p50_ms")
	b.ReportMetric(pct(0.99), "p99_ms")
}
