package index

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/r2med/r2med/analysis"
	"github.com/r2med/r2med/bm25"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/synth"
)

// BM25 benchmarks on synthetic corpora shaped like R2MED's eight tasks
// (synth.Combined): "20k" (20,000 documents), "357k" (the eight
// full-size tasks in one index, 357,080 documents) and, with
// R2MED_BENCH_1M=1, "1m" (1,000,000). Every set has all 876 queries.
// Indexes are built once per process and kept as files under
// $R2MED_BENCH_DIR (default: the temporary directory's r2med-bench), so
// that open, search and memory figures can be taken in processes that
// never built anything:
//
//	go test ./index -run '^$' -bench 'BM25Build/20k' -benchtime 1x
//	go test ./index -run '^$' -bench 'BM25(Open|Search)' -benchtime 5x
//	R2MED_BENCH_1M=1 R2MED_BENCH_SCHEMES=r2med go test ./index -run '^$' -bench 'BM25Search/1m' -benchtime 1x
//
// A stored index is reused after checking its recorded corpus digest
// against a freshly generated corpus. With R2MED_BENCH_REUSE=1 the corpus
// is not generated: a file of this format version whose metadata names the
// set and the scheme is taken as built from the seeded generator, so that
// a search process's peak memory (peak-rss-MiB) is the search's alone. Use
// it only with files built by the same code.

type benchSet struct {
	name string
	docs int // 0: the full eight tasks
}

func benchSets() []benchSet {
	sets := []benchSet{{"20k", 20000}, {"357k", 0}}
	if os.Getenv("R2MED_BENCH_1M") == "1" {
		sets = append(sets, benchSet{"1m", 1_000_000})
	}
	return sets
}

var benchCorpora sync.Map // name → *ir.Task

func (s benchSet) task() *ir.Task {
	if t, ok := benchCorpora.Load(s.name); ok {
		return t.(*ir.Task)
	}
	t := synth.Combined(s.docs, 1)
	benchCorpora.Store(s.name, t)
	return t
}

func benchDir(b *testing.B) string {
	dir := os.Getenv("R2MED_BENCH_DIR")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "r2med-bench")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	return dir
}

// benchIndex returns the path of the set's index for the scheme, building
// and writing it when the file is missing or was built from other data
// (its recorded corpus digest is checked against the set's).
func benchIndex(b *testing.B, s benchSet, sc bm25.Scheme) string {
	path := filepath.Join(benchDir(b), fmt.Sprintf("%s-%s-v%d.idx", s.name, sc, Version))
	if os.Getenv("R2MED_BENCH_REUSE") == "1" && s.stored(path, sc) {
		return path
	}
	task := s.task()
	if ix, err := Open(path); err == nil {
		ok := ix.CheckCorpus(task.Corpus) == nil
		ix.Close()
		if ok {
			return path
		}
	}
	mem, err := BuildBM25(task.Corpus, "", bm25.DefaultParams(sc), bm25.BuildOptions{})
	if err != nil {
		b.Fatal(err)
	}
	if err := Write(path, Contents{Docs: task.Corpus, BM25: mem, Source: map[string]any{"synth": s.name}}); err != nil {
		b.Fatal(err)
	}
	return path
}

// stored reports whether the file at path holds the set's BM25 index for
// the scheme, by its metadata alone (see R2MED_BENCH_REUSE).
func (s benchSet) stored(path string, sc bm25.Scheme) bool {
	ix, err := Open(path)
	if err != nil {
		return false
	}
	defer ix.Close()
	m := ix.Meta()
	return m.Source["synth"] == s.name && m.BM25 != nil && m.BM25.Scheme == sc
}

// BenchmarkBM25Build times analysis and indexing in memory (what every
// run without a stored index pays) and writing the index file.
func BenchmarkBM25Build(b *testing.B) {
	for _, s := range benchSets() {
		b.Run(s.name+"/analyze+index", func(b *testing.B) {
			task := s.task()
			b.ResetTimer()
			for b.Loop() {
				if _, err := BuildBM25(task.Corpus, "", bm25.DefaultParams(bm25.R2MED), bm25.BuildOptions{}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(task.Corpus))*float64(b.N)/b.Elapsed().Seconds(), "docs/s")
		})
		b.Run(s.name+"/write", func(b *testing.B) {
			task := s.task()
			mem, err := BuildBM25(task.Corpus, "", bm25.DefaultParams(bm25.R2MED), bm25.BuildOptions{})
			if err != nil {
				b.Fatal(err)
			}
			path := filepath.Join(b.TempDir(), "x.idx")
			b.ResetTimer()
			for b.Loop() {
				if err := Write(path, Contents{Docs: task.Corpus, BM25: mem}); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			if st, err := os.Stat(path); err == nil {
				b.ReportMetric(float64(st.Size())/(1<<20), "file-MiB")
			}
		})
	}
}

// BenchmarkBM25Open times opening a stored index (page cache warm, or
// cold with R2MED_BENCH_COLD=1): Open alone (header, metadata, document
// ids, small sections' checksums) and Open plus the first BM25 call, after
// which searches run (the postings' checksums, the term dictionary, the
// arrays' consistency).
//
//	R2MED_BENCH_REUSE=1 go test ./index -run '^$' -bench 'BM25Open' -benchtime 10x -count 2
//	R2MED_BENCH_COLD=1 R2MED_BENCH_REUSE=1 go test ./index -run '^$' -bench 'BM25Open' -benchtime 3x
func BenchmarkBM25Open(b *testing.B) {
	cold := os.Getenv("R2MED_BENCH_COLD") == "1"
	for _, s := range benchSets() {
		path := benchIndex(b, s, bm25.R2MED)
		b.Run(s.name+"/open", func(b *testing.B) {
			for range b.N {
				dropPageCache(b, cold)
				ix, err := Open(path)
				if err != nil {
					b.Fatal(err)
				}
				ix.Close()
			}
		})
		b.Run(s.name+"/open+bm25", func(b *testing.B) {
			for range b.N {
				dropPageCache(b, cold)
				ix, err := Open(path)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := ix.BM25(); err != nil {
					b.Fatal(err)
				}
				ix.Close()
			}
		})
	}
}

// dropPageCache, when cold, empties the kernel's page cache outside the
// timer (Linux, as root: R2MED_BENCH_COLD=1), so that an open reads the
// file from disk as after a reboot.
func dropPageCache(b *testing.B, cold bool) {
	if !cold {
		return
	}
	b.StopTimer()
	defer b.StartTimer()
	if err := exec.Command("sync").Run(); err != nil {
		b.Fatalf("R2MED_BENCH_COLD: sync: %v", err)
	}
	if err := os.WriteFile("/proc/sys/vm/drop_caches", []byte("3\n"), 0o200); err != nil {
		b.Fatalf("R2MED_BENCH_COLD needs Linux and root to drop the page cache: %v", err)
	}
}

// BenchmarkBM25Search runs all 876 analyzed queries, top 100, over the
// stored index, mapped: "single" one query after another on one searcher
// (per-query latency: mean, p50, p99), "batch/w=N" with N searchers taking
// queries from a shared counter (throughput). Queries are analyzed outside
// the timer, as the Lucene harness (bench/lucene) builds its queries
// before timing. It reports the process's resident memory after the runs.
func BenchmarkBM25Search(b *testing.B) {
	for _, s := range benchSets() {
		schemes := benchSchemes(b)
		paths := map[bm25.Scheme]string{}
		for _, sc := range schemes {
			paths[sc] = benchIndex(b, s, sc)
		}
		// The corpus and what building left behind are not the search's.
		benchCorpora.Delete(s.name)
		runtime.GC()
		debug.FreeOSMemory()
		for _, sc := range schemes {
			ix, err := Open(paths[sc])
			if err != nil {
				b.Fatal(err)
			}
			bi, err := ix.BM25()
			if err != nil {
				b.Fatal(err)
			}
			queries := analyzedQueries(b)
			b.Run(fmt.Sprintf("%s/%s/single", s.name, sc), func(b *testing.B) {
				lat := make([]time.Duration, 0, len(queries)*b.N)
				srch := bi.NewSearcher()
				cpu0 := cpuTime()
				for b.Loop() {
					for _, q := range queries {
						t0 := time.Now()
						srch.Search(q, 100)
						lat = append(lat, time.Since(t0))
					}
				}
				slices.Sort(lat)
				b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(len(lat)), "µs/query")
				b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(len(lat)), "cpu-µs/query")
				b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
				b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
				reportRSS(b)
			})
			for _, w := range []int{1, 2} {
				b.Run(fmt.Sprintf("%s/%s/batch/w=%d", s.name, sc, w), func(b *testing.B) {
					cpu0 := cpuTime()
					for b.Loop() {
						searchBatch(bi, queries, w)
					}
					b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(len(queries)*b.N), "cpu-µs/query")
					b.ReportMetric(float64(len(queries)*b.N)/b.Elapsed().Seconds(), "queries/s")
					reportRSS(b)
				})
			}
			ix.Close()
		}
	}
}

// benchSchemes returns the schemes BenchmarkBM25Search runs: both, or the
// comma-separated list in R2MED_BENCH_SCHEMES (at 1M documents each
// scheme's index takes minutes to build).
func benchSchemes(b *testing.B) []bm25.Scheme {
	env := os.Getenv("R2MED_BENCH_SCHEMES")
	if env == "" {
		return []bm25.Scheme{bm25.R2MED, bm25.Lucene}
	}
	var out []bm25.Scheme
	for _, f := range strings.Split(env, ",") {
		sc, err := bm25.ParseScheme(strings.TrimSpace(f))
		if err != nil {
			b.Fatalf("R2MED_BENCH_SCHEMES: %v", err)
		}
		out = append(out, sc)
	}
	return out
}

var benchQueries struct {
	once sync.Once
	q    [][]string
}

func analyzedQueries(b *testing.B) [][]string {
	benchQueries.once.Do(func() {
		an, err := analysis.Get("")
		if err != nil {
			b.Fatal(err)
		}
		for _, q := range synth.CombinedQueries(1) {
			benchQueries.q = append(benchQueries.q, an.Analyze(nil, q.Text))
		}
	})
	return benchQueries.q
}

func searchBatch(ix *bm25.Index, queries [][]string, workers int) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := ix.NewSearcher()
			for {
				i := int(next.Add(1)) - 1
				if i >= len(queries) {
					return
				}
				s.Search(queries[i], 100)
			}
		}()
	}
	wg.Wait()
}

// reportRSS reports the process's resident set size now (Linux): the
// index's pages the searches touched, the searchers and the queries; and
// its peak so far (the corpus and the build too, unless R2MED_BENCH_REUSE
// spared the process them).
func reportRSS(b *testing.B) {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return
	}
	for _, line := range strings.Split(string(data), "\n") {
		for prefix, unit := range map[string]string{"VmRSS:": "rss-MiB", "VmHWM:": "peak-rss-MiB"} {
			if rest, ok := strings.CutPrefix(line, prefix); ok {
				if f := strings.Fields(rest); len(f) > 0 {
					if kb, err := strconv.ParseFloat(f[0], 64); err == nil {
						b.ReportMetric(kb/1024, unit)
					}
				}
			}
		}
	}
}
