package searchapi

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
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
}

func newMetrics() *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "r2med_search_http_requests_total",
			Help: "HTTP requests answered, by route (the pattern matched; \"unmatched\" for none) and status code.",
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
			Help: "Model answers taken from the r2med cache, by kind (generate: LLM expansions).",
		}, []string{"kind"}),
		misses: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "r2med_search_cache_misses_total",
			Help: "Model answers computed because the r2med cache lacked them, by kind.",
		}, []string{"kind"}),
	}
	m.reg.MustRegister(m.requests, m.latency, m.inflight, m.queries, m.hits, m.misses,
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

// handler serves the registry in the Prometheus text format.
func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// statusWriter remembers the status a handler sent.
type statusWriter struct {
	http.ResponseWriter
	code int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// instrument counts requests by the route they matched (the mux inside h
// sets Request.Pattern) and status, and times them.
func (m *metrics) instrument(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		m.inflight.Inc()
		defer m.inflight.Dec()
		sw := &statusWriter{ResponseWriter: w}
		h.ServeHTTP(sw, r)
		route := r.Pattern
		if route == "" {
			route = "unmatched"
		}
		if sw.code == 0 {
			sw.code = http.StatusOK
		}
		m.requests.WithLabelValues(route, strconv.Itoa(sw.code)).Inc()
		m.latency.WithLabelValues(route).Observe(time.Since(start).Seconds())
	})
}
