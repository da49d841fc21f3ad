//go:build unix

package bm25_test

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/r2med/r2med/analysis"
	"github.com/r2med/r2med/bm25"
	"github.com/r2med/r2med/synth"
)

// BenchmarkSearch times top-100 search of the 876 synthetic queries over
// an in-memory index of synth.Combined, R2MED_BENCH_DOCS
// documents (default 20,000; 0 = the eight full tasks, 357,080), with one
// and two searchers, for both schemes or those listed (comma-separated) in
// R2MED_BENCH_SCHEMES, keeping R2MED_BENCH_K hits (default 100). Package
// index has the same benchmark over stored indexes, with build and open
// times (see docs/BENCHMARKS.md).
//
//	go test ./bm25 -run '^$' -bench Search -benchtime 3x -count 3
func BenchmarkSearch(b *testing.B) {
	docs, k := 20000, 100
	if s := os.Getenv("R2MED_BENCH_DOCS"); s != "" {
		fmt.Sscan(s, &docs)
	}
	if s := os.Getenv("R2MED_BENCH_K"); s != "" {
		fmt.Sscan(s, &k)
	}
	task := synth.Combined(docs, 1)
	an := analysis.LuceneEnglish().(*analysis.Chain)
	var queries [][]string
	for _, q := range task.Queries {
		queries = append(queries, an.Analyze(nil, q.Text))
	}
	ids := make([]string, len(task.Corpus))
	for i, d := range task.Corpus {
		ids[i] = d.ID
	}
	schemes := []bm25.Scheme{bm25.R2MED, bm25.Lucene}
	if env := os.Getenv("R2MED_BENCH_SCHEMES"); env != "" {
		schemes = nil
		for _, f := range strings.Split(env, ",") {
			sc, err := bm25.ParseScheme(strings.TrimSpace(f))
			if err != nil {
				b.Fatalf("R2MED_BENCH_SCHEMES: %v", err)
			}
			schemes = append(schemes, sc)
		}
	}
	for _, sc := range schemes {
		ix, err := bm25.Build(len(task.Corpus), func(i int, dst []string) []string { return an.Tokenizer.Tokenize(dst, task.Corpus[i].Text) },
			bm25.DefaultParams(sc), bm25.BuildOptions{IDs: ids, Terms: an.Term})
		if err != nil {
			b.Fatal(err)
		}
		for _, w := range []int{1, 2} {
			b.Run(fmt.Sprintf("docs=%d/%s/w=%d", len(task.Corpus), sc, w), func(b *testing.B) {
				cpu0 := cpuTime()
				for b.Loop() {
					var next atomic.Int64
					var wg sync.WaitGroup
					for range w {
						wg.Add(1)
						go func() {
							defer wg.Done()
							s := ix.NewSearcher()
							for i := int(next.Add(1)) - 1; i < len(queries); i = int(next.Add(1)) - 1 {
								s.Search(queries[i], k)
							}
						}()
					}
					wg.Wait()
				}
				n := float64(len(queries) * b.N)
				b.ReportMetric(n/b.Elapsed().Seconds(), "queries/s")
				b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/n, "cpu-µs/query")
			})
		}
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
