package searchapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/r2med/r2med/bm25"
	"github.com/r2med/r2med/index"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/retrieve"
	"github.com/r2med/r2med/searchapi"
	"github.com/r2med/r2med/synth"
)

// The load benchmark: a Go load generator in the benchmark's process
// sends POST /v1/search requests to the service on a loopback port from
// 1, 8 and 32 connections, each level bounded in time
// (R2MED_LOAD_SECONDS, default 5) and in requests (R2MED_LOAD_MAX,
// default 200,000), and reports QPS, p50/p99 latency, errors, the
// process's RSS before and after, and the CPU time per query. Levels:
// single queries with ids and scores ("1", "8", "32"), with 300-byte
// snippets and matched terms ("32-snippets"), and batches of 16 queries
// per request ("32-batch16").
//
// Beside them, the in-process batch rate on the same queries and k:
// "batch-index" searches the stored index with one index.Searcher per
// core (the peer the issue names; bit-identical to run's BM25),
// "batch-memory" is run's BM25 retriever in memory (small sets only), and
// "service-in-process" the service's own SearchBatch without HTTP. The
// peer of the ratios is the faster batch (less CPU per query):
// "of-batch-qps" is a level's QPS over the peer's, "of-batch-cpu" the
// peer's CPU per query over the level's (the generator's CPU counts
// against the service), which other programs on a shared machine disturb
// far less than wall-clock rates.
//
// Sets: "nfcorpus" (3,395 documents, 323 test queries; needs the shared
// data), "20k" (the synthetic 20,000-document combined set with its 876
// queries, package synth) and, with R2MED_LOAD_357K=1, "357k" (the
// eight full-size tasks in one corpus). Synthetic sets' index files are
// kept in $R2MED_BENCH_DIR (default: the temporary directory's
// r2med-bench; the index package's benchmarks share them), verified
// against the corpus before use. Hits are the top 10 (R2MED_LOAD_K).
//
//	go test ./searchapi -run '^$' -bench 'Load' -benchtime 1x
//	R2MED_LOAD_357K=1 go test ./searchapi -run '^$' -bench 'Load/357k' -benchtime 1x
//
// The generator and the service share the machine's cores, as they
// would on one host. With R2MED_LOAD_URL the load goes to a service
// started apart instead (r2med serve-search over the set's index file in
// the bench directory, 20k-r2med-v1.idx), and with R2MED_LOAD_PID, its
// process id, each level reports the service's own CPU per query
// ("server-cpu-µs/query", from /proc) beside the whole machine's share:
//
//	r2med serve-search --index $R2MED_BENCH_DIR/20k-r2med-v1.idx --addr 127.0.0.1:18181 & PID=$!
//	R2MED_LOAD_URL=http://127.0.0.1:18181 R2MED_LOAD_PID=$PID go test ./searchapi -run '^$' -bench 'Load/20k' -benchtime 1x

type loadSet struct {
	name string
	task func(b *testing.B) *ir.Task
	// memory runs run's in-memory retriever as a peer too (it indexes
	// the corpus first).
	memory bool
	// cache keeps the index file in the bench directory.
	cache bool
}

func loadSets(b *testing.B) []loadSet {
	var sets []loadSet
	if _, err := os.Stat(shared); err == nil {
		sets = append(sets, loadSet{"nfcorpus", func(b *testing.B) *ir.Task { return nfcorpus(b) }, true, false})
	}
	sets = append(sets, loadSet{"20k", func(*testing.B) *ir.Task { return synth.Combined(20000, 1) }, true, true})
	if os.Getenv("R2MED_LOAD_357K") == "1" {
		sets = append(sets, loadSet{"357k", func(*testing.B) *ir.Task { return synth.Combined(0, 1) }, false, true})
	}
	return sets
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// rssMiB is the process's resident set size (Linux; 0 elsewhere).
func rssMiB() float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return 0
}

// procCPU is the CPU time process pid has used (Linux; 0 for pid 0 or
// elsewhere), at the kernel's clock tick (10 ms).
func procCPU(pid int) time.Duration {
	if pid == 0 {
		return 0
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// Fields after the command name, which ends with the last ')'.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * 10 * time.Millisecond
}

// benchIndexFile returns the set's R2MED BM25 index file: the cached one
// when it holds this corpus, else one built and written now.
func benchIndexFile(b *testing.B, set loadSet, task *ir.Task) string {
	path := filepath.Join(b.TempDir(), set.name+".idx")
	if set.cache {
		dir := os.Getenv("R2MED_BENCH_DIR")
		if dir == "" {
			dir = filepath.Join(os.TempDir(), "r2med-bench")
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		path = filepath.Join(dir, fmt.Sprintf("%s-%s-v%d.idx", set.name, bm25.R2MED, index.Version))
		if ix, err := index.Open(path); err == nil {
			_, _, heads, _ := ix.HeadTokens(nil, 0) // files written before heads were stored are rewritten
			ok := ix.CheckCorpus(task.Corpus) == nil && ix.Meta().BM25 != nil && ix.Meta().BM25.Params() == bm25.DefaultParams(bm25.R2MED) && heads
			ix.Close()
			if ok {
				return path
			}
		}
	}
	mem, err := index.BuildBM25(task.Corpus, "", bm25.DefaultParams(bm25.R2MED), bm25.BuildOptions{})
	if err != nil {
		b.Fatal(err)
	}
	if err := index.Write(path, index.Contents{Docs: task.Corpus, BM25: mem, Source: map[string]any{"synth": set.name}}); err != nil {
		b.Fatal(err)
	}
	return path
}

type loadResult struct {
	requests, errors int
	elapsed          time.Duration
	latencies        []time.Duration
}

func (r loadResult) pct(p float64) time.Duration {
	if len(r.latencies) == 0 {
		return 0
	}
	return r.latencies[min(len(r.latencies)-1, int(p*float64(len(r.latencies))))]
}

// load sends requests from conns connections, round-robin over bodies,
// until d has passed or max requests were sent.
func load(url string, bodies [][]byte, conns int, d time.Duration, max int64) loadResult {
	tr := &http.Transport{MaxIdleConnsPerHost: conns, MaxConnsPerHost: conns, DisableCompression: true}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	var next, errs atomic.Int64
	lats := make([][]time.Duration, conns)
	deadline := time.Now().Add(d)
	start := time.Now()
	var wg sync.WaitGroup
	for c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) {
				i := next.Add(1) - 1
				if i >= max {
					return
				}
				t0 := time.Now()
				resp, err := client.Post(url, "application/json", bytes.NewReader(bodies[i%int64(len(bodies))]))
				if err != nil {
					errs.Add(1)
					continue
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					errs.Add(1)
					continue
				}
				lats[c] = append(lats[c], time.Since(t0))
			}
		}()
	}
	wg.Wait()
	r := loadResult{elapsed: time.Since(start), errors: int(errs.Load())}
	for _, l := range lats {
		r.latencies = append(r.latencies, l...)
	}
	r.requests = len(r.latencies)
	slices.Sort(r.latencies)
	return r
}

func BenchmarkLoad(b *testing.B) {
	secs := time.Duration(envInt("R2MED_LOAD_SECONDS", 5)) * time.Second
	maxReq := int64(envInt("R2MED_LOAD_MAX", 200000))
	k := envInt("R2MED_LOAD_K", 10)
	for _, set := range loadSets(b) {
		b.Run(set.name, func(b *testing.B) { loadBench(b, set, secs, maxReq, k) })
	}
}

// rate is a throughput measured over wall time and over the process's
// CPU time: queries per second, and CPU microseconds per query.
type rate struct {
	qps, cpuPerQuery float64
}

func (r rate) report(b *testing.B) {
	b.ReportMetric(r.qps, "qps")
	b.ReportMetric(r.cpuPerQuery, "cpu-µs/query")
	b.ReportMetric(0, "ns/op")
}

// timed calls batch (which answers n queries) once to warm up (page
// faults on a freshly mapped index, pools), then again and again for d,
// and returns the rate.
func timed(d time.Duration, batch func() (int, error)) (rate, error) {
	if _, err := batch(); err != nil {
		return rate{}, err
	}
	start, cpu0 := time.Now(), cpuTime()
	n := 0
	for time.Since(start) < d {
		m, err := batch()
		if err != nil {
			return rate{}, err
		}
		n += m
	}
	wall, cpu := time.Since(start), cpuTime()-cpu0
	return rate{float64(n) / wall.Seconds(), float64(cpu.Microseconds()) / float64(n)}, nil
}

// batchIndex searches every query once over the stored index, one
// index.Searcher per worker.
func batchIndex(ix *index.Index, qs []ir.Query, k, workers int) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := ix.NewSearcher()
			if err != nil {
				errs[w] = err
				return
			}
			for i := int(next.Add(1) - 1); i < len(qs); i = int(next.Add(1) - 1) {
				s.Search(qs[i].Text, k)
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func loadBench(b *testing.B, set loadSet, secs time.Duration, maxReq int64, k int) {
	task := set.task(b)
	path := benchIndexFile(b, set, task)
	corpus := task.Corpus
	task.Corpus = nil // the service maps the file; the generator needs the queries only
	// The peer is the faster of the in-process batches (less CPU per
	// query), so the service is compared with the best it could do.
	var peer rate
	better := func(r rate) {
		if peer.cpuPerQuery == 0 || r.cpuPerQuery < peer.cpuPerQuery {
			peer = r
		}
	}
	b.Run("batch-index", func(b *testing.B) {
		ix, err := index.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		defer ix.Close()
		var rt rate
		for b.Loop() {
			if rt, err = timed(secs, func() (int, error) {
				return len(task.Queries), batchIndex(ix, task.Queries, k, runtime.GOMAXPROCS(0))
			}); err != nil {
				b.Fatal(err)
			}
		}
		better(rt)
		rt.report(b)
	})
	if set.memory {
		b.Run("batch-memory", func(b *testing.B) {
			t := *task
			t.Corpus = corpus
			r, err := retrieve.New(context.Background(), retrieve.DefaultBM25(), &t, retrieve.Env{})
			if err != nil {
				b.Fatal(err)
			}
			queries := retrieve.Queries(task.Queries)
			var rt rate
			for b.Loop() {
				if rt, err = timed(secs, func() (int, error) {
					_, err := r.Search(context.Background(), queries, k)
					return len(queries), err
				}); err != nil {
					b.Fatal(err)
				}
			}
			better(rt)
			rt.report(b)
		})
	}
	corpus = nil
	zero := 0
	b.Run("service-in-process", func(b *testing.B) {
		svc, err := searchapi.Open(context.Background(), one(path), searchapi.Options{Limits: searchapi.Limits{MaxBatch: len(task.Queries)}})
		if err != nil {
			b.Fatal(err)
		}
		defer svc.Close()
		reqs := make([]searchapi.Request, len(task.Queries))
		for i, q := range task.Queries {
			reqs[i] = searchapi.Request{ID: q.ID, Query: q.Text, K: k, Snippet: &zero}
		}
		var rt rate
		for b.Loop() {
			if rt, err = timed(secs, func() (int, error) {
				_, err := svc.SearchBatch(context.Background(), reqs)
				return len(reqs), err
			}); err != nil {
				b.Fatal(err)
			}
		}
		rt.report(b)
	})

	base, pid := os.Getenv("R2MED_LOAD_URL"), envInt("R2MED_LOAD_PID", 0)
	if base == "" {
		base = start(b, one(path), searchapi.Options{}, searchapi.HandlerOptions{}).url
	}
	for _, level := range []struct {
		name    string
		conns   int
		snippet int
		batch   int // queries per request; 0: one, as "query"
	}{{"1", 1, 0, 0}, {"8", 8, 0, 0}, {"32", 32, 0, 0}, {"32-snippets", 32, searchapi.DefaultSnippet, 0}, {"32-batch16", 32, 0, 16}} {
		var bodies [][]byte
		per := max(1, level.batch)
		for lo := 0; lo+per <= len(task.Queries); lo += per {
			body := searchapi.SearchBody{K: k, Snippet: &level.snippet}
			if level.batch == 0 {
				q := task.Queries[lo]
				body.Query, body.ID = &q.Text, q.ID
			} else {
				for _, q := range task.Queries[lo : lo+per] {
					body.Queries = append(body.Queries, searchapi.QueryItem{ID: q.ID, Query: q.Text})
				}
			}
			data, err := json.Marshal(body)
			if err != nil {
				b.Fatal(err)
			}
			bodies = append(bodies, data)
		}
		b.Run("conns="+level.name, func(b *testing.B) {
			for b.Loop() {
				runtime.GC()
				before, cpu0, srv0 := rssMiB(), cpuTime(), procCPU(pid)
				res := load(base+"/v1/search", bodies, level.conns, secs, maxReq)
				after, cpu, srv := rssMiB(), cpuTime()-cpu0, procCPU(pid)-srv0
				n := float64(res.requests * per)
				rt := rate{n / res.elapsed.Seconds(), float64((cpu + srv).Microseconds()) / n}
				rt.report(b)
				if pid > 0 {
					b.ReportMetric(float64(srv.Microseconds())/n, "server-cpu-µs/query")
				}
				b.ReportMetric(float64(res.pct(0.5).Microseconds())/1000, "p50-ms")
				b.ReportMetric(float64(res.pct(0.99).Microseconds())/1000, "p99-ms")
				b.ReportMetric(float64(res.errors), "errors")
				b.ReportMetric(before, "rss-before-MiB")
				b.ReportMetric(after, "rss-after-MiB")
				if peer.qps > 0 {
					b.ReportMetric(rt.qps/peer.qps, "of-batch-qps")
					b.ReportMetric(peer.cpuPerQuery/rt.cpuPerQuery, "of-batch-cpu")
				}
				if res.errors > 0 {
					b.Errorf("%d requests failed", res.errors)
				}
			}
		})
	}
}
