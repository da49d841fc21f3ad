package searchapi

import (
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/r2med/r2med/retrieve"
)

// metrics are the service's Prometheus metrics, in a registry of its own
// (two services in one process do not share counters).
type metrics struct {
	reg      *prometheus.Registry
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	inflight prometheus.Gauge
	queries  prometheus.Counter
	hits     *prometheus.CounterVec
	misses   *prometheus.CounterVec
	refused  *prometheus.CounterVec
	cut      prometheus.Counter
}

func newMetrics() *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "r2med_search_http_requests_total",
			Help: "HTTP requests answered, by route (the pattern matched: \"GET /\" for a path no route serves, answered 404; \"unmatched\" for a request refused before routing, such as a wrong Host) and status code.",
		}, []string{"route", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "r2med_search_http_request_duration_seconds",
			Help:    "Time from a request's arrival to its answer, by route.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60},
		}, []string{"route"}),
		inflight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "r2med_search_http_requests_in_flight",
			Help: "Requests being answered now.",
		}),
		queries: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "r2med_search_queries_total",
			Help: "Queries answered (a batch counts each of its queries).",
		}),
		hits: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "r2med_search_cache_hits_total",
			Help: "Model answers taken from the r2med cache, by kind (generate: LLM expansions; embed: query embeddings).",
		}, []string{"kind"}),
		misses: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "r2med_search_cache_misses_total",
			Help: "Model answers computed because the r2med cache lacked them, by kind.",
		}, []string{"kind"}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "r2med_search_refused_total",
			Help: "Requests refused before any search, by reason (busy: the work in flight was at its limit; limits: the request asked for more than one may).",
		}, []string{"reason"}),
		cut: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "r2med_search_answers_cut_total",
			Help: "Answers cut off after they began streaming (the search failed, the answer outgrew its limit or the client stopped reading): the client sees an incomplete body.",
		}),
	}
	m.reg.MustRegister(m.requests, m.latency, m.inflight, m.queries, m.hits, m.misses, m.refused, m.cut,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

func (m *metrics) cacheHit(kind string, hit bool) {
	if hit {
		m.hits.WithLabelValues(kind).Inc()
	} else {
		m.misses.WithLabelValues(kind).Inc()
	}
}

// embedRecorder hears one dense retriever's embedding-cache counts (its
// cache's running totals) and adds what is new to the embed series.
func (m *metrics) embedRecorder() retrieve.Recorder { return &embedCounts{m: m} }

type embedCounts struct {
	m                *metrics
	mu               sync.Mutex
	cached, computed int
}

func (e *embedCounts) Time(_ string, fn func() error) error { return fn() }
func (e *embedCounts) Note(string, any)                     {}

func (e *embedCounts) Count(name string, n int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	switch name {
	case "embeddings_cached":
		if n > e.cached {
			e.m.hits.WithLabelValues("embed").Add(float64(n - e.cached))
			e.cached = n
		}
	case "embeddings_computed":
		if n > e.computed {
			e.m.misses.WithLabelValues("embed").Add(float64(n - e.computed))
			e.computed = n
		}
	}
}

// handler serves the registry in the Prometheus text format.
func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// ClientClosed is the code /metrics counts a request under when its
// client hung up before the answer was whole (nginx's 499).
const ClientClosed = "499"

// statusWriter remembers the status a handler sent and whether a write
// of its answer failed (the client gone).
type statusWriter struct {
	http.ResponseWriter
	code   int
	failed bool
}

func (w *statusWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

// Unwrap lets http.ResponseController reach the connection (flushes,
// write deadlines of streamed answers).
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	if err != nil {
		w.failed = true
	}
	return n, err
}

// instrument counts requests by the route they matched (the mux inside h
// sets Request.Pattern) and status, and times them.
func (m *metrics) instrument(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		m.inflight.Inc()
		defer m.inflight.Dec()
		sw := &statusWriter{ResponseWriter: w}
		defer func() {
			route := r.Pattern
			if route == "" {
				route = "unmatched"
			}
			code := strconv.Itoa(sw.code)
			p := recover()
			if p != nil {
				defer panic(p) // an answer cut off must stay cut off
			}
			switch gone := r.Context().Err() != nil; {
			case sw.failed || gone && (sw.code == 0 || p != nil):
				// The client hung up before its answer was whole: what
				// was sent, if anything, is not what it is counted as.
				// (A client that closes its connection the moment it
				// has read a whole answer cancels the context too: that
				// answer counts under its status.)
				code = ClientClosed
			case p != nil:
				code = "aborted"
			case sw.code == 0:
				code = "200"
			}
			m.requests.WithLabelValues(route, code).Inc()
			m.latency.WithLabelValues(route).Observe(time.Since(start).Seconds())
		}()
		h.ServeHTTP(sw, r)
	})
}
