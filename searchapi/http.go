package searchapi

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/r2med/r2med/fusion"
	"github.com/r2med/r2med/internal/errtext"
	"github.com/r2med/r2med/internal/httpserve"
)

// route is one endpoint: its method and path as net/http's ServeMux
// patterns write them, and its handler. The OpenAPI description lists
// the same routes (a test checks both ways).
type route struct {
	method, path string
	handle       func(s *Service, w http.ResponseWriter, r *http.Request)
}

var routes = []route{
	{"GET", "/v1/search", (*Service).getSearch},
	{"POST", "/v1/search", (*Service).postSearch},
	{"GET", "/v1/doc/{id}", (*Service).getDoc},
	{"GET", "/v1/retrievers", (*Service).getRetrievers},
	{"GET", "/healthz", (*Service).getHealth},
	{"GET", "/metrics", nil}, // the Prometheus handler
	{"GET", "/openapi.json", (*Service).getOpenAPI},
}

//go:embed openapi.json
var openAPI []byte

// HandlerOptions secure the service's handler.
type HandlerOptions struct {
	// Addr is the address the service is bound to: requests must name
	// its host, a loopback name or one of AllowHosts in their Host
	// header (internal/httpserve.Hosts).
	Addr       string
	AllowHosts []string
	// Key, when set, must come with every request but /healthz as
	// "Authorization: Bearer KEY".
	Key string
	// AllowFlag is the flag that allows another host name, for the
	// message of a refused request; "" means --allow-host.
	AllowFlag string
}

// Handler serves the API: the routes, counted in /metrics, behind the
// Host check, security headers and (with a key) the bearer check.
func (s *Service) Handler(o HandlerOptions) http.Handler {
	mux := http.NewServeMux()
	for _, rt := range routes {
		pattern := rt.method + " " + rt.path
		if rt.handle == nil {
			mux.Handle(pattern, s.metrics.handler())
			continue
		}
		mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) { rt.handle(s, w, r) })
	}
	// Other paths get a JSON 404; other methods on these paths the mux's
	// 405 with the methods allowed.
	mux.HandleFunc("GET /", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, notFound("no route %s %s; GET /openapi.json describes the API", r.Method, r.URL.Path))
	})
	flag := o.AllowFlag
	if flag == "" {
		flag = "--allow-host"
	}
	var h http.Handler = mux
	h = httpserve.Bearer(h, o.Key, "/healthz")
	h = httpserve.Guard(h, httpserve.GuardOptions{Hosts: httpserve.NewHosts(o.Addr, o.AllowHosts), Name: "search service", AllowFlag: flag})
	return s.metrics.instrument(h)
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		code, buf = http.StatusInternalServerError, bytes.Buffer{}
		fmt.Fprintf(&buf, "{\"error\":%q}\n", err.Error())
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(code)
	w.Write(buf.Bytes()) // the status is sent; a failed write is the client gone
}

// ErrorBody is what every error answer holds.
type ErrorBody struct {
	Error string `json:"error"`
}

func writeError(w http.ResponseWriter, err error) {
	code := statusOf(err)
	msg := err.Error()
	switch code {
	case http.StatusGatewayTimeout:
		msg = "the request took longer than this service allows: " + msg
	case statusClientClosed:
		msg = "the request was cancelled: " + msg
	}
	var e *Error
	if errors.As(err, &e) && e.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(max(1, e.RetryAfter.Round(time.Second)/time.Second))))
	}
	writeJSON(w, code, ErrorBody{Error: msg})
}

// withTimeout bounds a request by Limits.Timeout.
func (s *Service) withTimeout(r *http.Request) (context.Context, context.CancelFunc) {
	return context.WithTimeout(r.Context(), s.limits.Timeout)
}

// BatchResult is the answer to a batch: one Result per query, in order.
type BatchResult struct {
	Results []*Result `json:"results"`
}

// SearchBody is POST /v1/search's body: one query (Query) or a batch
// (Queries), and the settings every query of it takes.
type SearchBody struct {
	Query      *string      `json:"query,omitempty"`
	ID         string       `json:"id,omitempty"`
	Queries    []QueryItem  `json:"queries,omitempty"`
	K          int          `json:"k,omitempty"`
	Retrievers []string     `json:"retrievers,omitempty"`
	Fuse       *fusion.Spec `json:"fuse,omitempty"`
	GAR        string       `json:"gar,omitempty"`
	Rerank     bool         `json:"rerank,omitempty"`
	// RerankDepth reranks this many hits (and implies Rerank).
	RerankDepth int  `json:"rerank_depth,omitempty"`
	Snippet     *int `json:"snippet,omitempty"`
}

// QueryItem is one query of a batch: its text, or an object with its
// text and id.
type QueryItem struct {
	ID    string `json:"id,omitempty"`
	Query string `json:"query"`
}

// UnmarshalJSON reads "text" or {"id": …, "query": …}.
func (q *QueryItem) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		q.ID = ""
		return json.Unmarshal(b, &q.Query)
	}
	type plain QueryItem
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var p plain
	if err := dec.Decode(&p); err != nil {
		return fmt.Errorf("each of queries is a string or {\"id\", \"query\"}: %w", err)
	}
	*q = QueryItem(p)
	return nil
}

// Requests turns a body into the requests it stands for and whether it
// is a batch.
func (b *SearchBody) Requests() ([]Request, bool, error) {
	base := Request{K: b.K, Retrievers: b.Retrievers, Fuse: b.Fuse, GAR: b.GAR, Rerank: b.Rerank, RerankDepth: b.RerankDepth, Snippet: b.Snippet}
	switch {
	case b.Query != nil && b.Queries != nil:
		return nil, false, badRequest(`give "query" (one query) or "queries" (a batch), not both`)
	case b.Query != nil:
		base.Query, base.ID = *b.Query, b.ID
		return []Request{base}, false, nil
	case b.Queries != nil:
		if b.ID != "" {
			return nil, false, badRequest(`"id" goes with "query"; a batch gives each query its id ({"id", "query"})`)
		}
		if len(b.Queries) == 0 {
			return nil, false, badRequest(`"queries" is empty`)
		}
		out := make([]Request, len(b.Queries))
		for i, q := range b.Queries {
			out[i] = base
			out[i].Query, out[i].ID = q.Query, q.ID
		}
		return out, true, nil
	}
	return nil, false, badRequest(`no query: give "query" (one query) or "queries" (a batch)`)
}

// requestBodies keeps the room POST bodies are read into (up to 64 KiB).
var requestBodies = sync.Pool{New: func() any { return new(bytes.Buffer) }}

func putRequestBody(b *bytes.Buffer) {
	if b.Cap() <= 64<<10 {
		b.Reset()
		requestBodies.Put(b)
	}
}

func (s *Service) postSearch(w http.ResponseWriter, r *http.Request) {
	if err := requireJSON(r); err != nil {
		writeError(w, err)
		return
	}
	body := requestBodies.Get().(*bytes.Buffer)
	defer putRequestBody(body)
	_, err := body.ReadFrom(http.MaxBytesReader(w, r.Body, s.limits.MaxBody))
	data := body.Bytes() // decoded into strings of their own: the room goes back
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeError(w, &Error{Status: http.StatusRequestEntityTooLarge, Msg: fmt.Sprintf("request body over %d bytes; send fewer queries per request", tooBig.Limit)})
			return
		}
		writeError(w, badRequest("request body: %v", err))
		return
	}
	if err := checkJSONText(data); err != nil {
		writeError(w, badRequest("request body: %v", err))
		return
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	// k and rerank_depth are read apart: 0 is refused, where leaving one
	// out means its default.
	var in struct {
		SearchBody
		K           *int `json:"k"`
		RerankDepth *int `json:"rerank_depth"`
	}
	if err := dec.Decode(&in); err != nil {
		writeError(w, badRequest("request body: %s", errtext.JSONMsg(err)))
		return
	}
	if _, err := dec.Token(); err != io.EOF {
		writeError(w, badRequest("request body: one JSON object, nothing after it"))
		return
	}
	sb := in.SearchBody
	if in.K != nil {
		if *in.K == 0 {
			writeError(w, badRequest("k must be between 1 and %d, got 0 (leave k out for %d)", s.limits.MaxK, DefaultK))
			return
		}
		sb.K = *in.K
	}
	if in.RerankDepth != nil {
		if *in.RerankDepth == 0 {
			writeError(w, badRequest(rerankDepthZero))
			return
		}
		sb.RerankDepth = *in.RerankDepth
	}
	if f := sb.Fuse; f != nil && (f.K == 0 || f.Depth == 0) {
		if err := fuseZeros(data); err != nil {
			writeError(w, badRequest("fuse: %v", err))
			return
		}
	}
	reqs, batch, err := sb.Requests()
	if err != nil {
		writeError(w, err)
		return
	}
	s.respond(w, r, reqs, batch)
}

// requireJSON refuses a POST whose body is not declared JSON: a page on
// another site can send a form or text/plain POST from a visitor's
// browser, but not an application/json one without asking first (CORS),
// which this service never allows.
// The body is read as it is sent: UTF-8 (JSON's only encoding, RFC 8259)
// and not compressed.
func requireJSON(r *http.Request) error {
	ct := r.Header.Get("Content-Type")
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil || mt != "application/json" {
		if ct == "" {
			ct = "none"
		}
		return &Error{Status: http.StatusUnsupportedMediaType, Msg: fmt.Sprintf("POST a JSON body with Content-Type: application/json (this one: %s)", ct)}
	}
	if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") {
		return &Error{Status: http.StatusUnsupportedMediaType, Msg: fmt.Sprintf("the body is declared charset=%s; JSON bodies are UTF-8: send UTF-8 with charset=utf-8 or no charset", cs)}
	}
	if ce := r.Header.Get("Content-Encoding"); ce != "" && !strings.EqualFold(ce, "identity") {
		return &Error{Status: http.StatusUnsupportedMediaType, Msg: fmt.Sprintf("Content-Encoding: %s is not accepted: send the body uncompressed", ce)}
	}
	return nil
}

// respond answers requests (a batch when batch is set): it checks them
// all, refuses from another site what calls a model, admits the work
// (Limits.MaxInFlight) and writes the answer as it is made.
func (s *Service) respond(w http.ResponseWriter, r *http.Request, reqs []Request, batch bool) {
	st := s.acquire()
	defer st.release()
	qs, err := s.checkAll(st, reqs)
	if err != nil {
		if e, ok := err.(*Error); ok && e.Status == http.StatusBadRequest {
			s.metrics.refused.WithLabelValues("limits").Inc()
		}
		writeError(w, err)
		return
	}
	var cost int64
	for _, q := range qs {
		if why := httpserve.CrossSite(r); why != "" && q.callsModel() {
			writeError(w, &Error{Status: http.StatusForbidden, Msg: fmt.Sprintf("a request from another site (%s) may not call a model (LLM expansion, reranking, query embedding); send it from this service's own origin or from a program", why)})
			return
		}
		cost += q.estimate()
	}
	leave, err := s.admit.enter(cost)
	if err != nil {
		s.metrics.refused.WithLabelValues("busy").Inc()
		writeError(w, err)
		return
	}
	defer leave()
	ctx, cancel := s.withTimeout(r)
	defer cancel()
	aw := newAnswerWriter(w, s.limits.MaxResponse, s.metrics.cut.Inc)
	if !batch {
		res, err := s.search(ctx, qs[0])
		if err == nil {
			s.metrics.queries.Inc()
			err = aw.result(res)
		}
		aw.finish(err)
		return
	}
	_, err = io.WriteString(aw, `{"results":[`)
	if err == nil {
		err = s.inOrder(ctx, qs, func(i int, res *Result) error {
			if i > 0 {
				if _, err := io.WriteString(aw, ","); err != nil {
					return err
				}
			}
			s.metrics.queries.Inc()
			return aw.result(res)
		})
	}
	if err == nil {
		_, err = io.WriteString(aw, "]}\n")
	}
	aw.finish(err)
}

// fuseZeros refuses a body whose fuse writes k or depth out as 0
// (fusion.WrittenZero); it reads the body again, only when the decoded
// fuse holds a zero.
func fuseZeros(body []byte) error {
	var in struct {
		Fuse struct {
			K     *float64 `json:"k"`
			Depth *int     `json:"depth"`
		} `json:"fuse"`
	}
	json.Unmarshal(body, &in) // decoded strictly before
	switch {
	case in.Fuse.K != nil && *in.Fuse.K == 0:
		return fusion.WrittenZero("k")
	case in.Fuse.Depth != nil && *in.Fuse.Depth == 0:
		return fusion.WrittenZero("depth")
	}
	return nil
}

// rerankDepthZero refuses rerank_depth=0, which would otherwise read as
// "the reranker's own depth".
const rerankDepthZero = "rerank_depth must be at least 1, got 0 (leave rerank_depth out for the service's reranking depth)"

// searchParams are GET /v1/search's parameters.
var searchParams = []string{"q", "id", "k", "retriever", "fuse", "rrf_k", "norm", "weights", "fuse_depth", "gar", "rerank", "rerank_depth", "snippet"}

func (s *Service) getSearch(w http.ResponseWriter, r *http.Request) {
	req, err := parseSearchQuery(r)
	if err != nil {
		writeError(w, err)
		return
	}
	s.respond(w, r, []Request{req}, false)
}

// parseSearchQuery reads GET /v1/search's parameters; an unknown one is
// an error (a misspelt ?retreiver= must not fall back to the default).
func parseSearchQuery(r *http.Request) (Request, error) {
	v, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return Request{}, badRequest("query string: %v", err)
	}
	for name := range v {
		if !slices.Contains(searchParams, name) {
			return Request{}, badRequest("unknown parameter %q; the parameters are %s", name, strings.Join(searchParams, ", "))
		}
	}
	one := func(name string) (string, error) {
		if len(v[name]) > 1 {
			return "", badRequest("parameter %q given %d times", name, len(v[name]))
		}
		return v.Get(name), nil
	}
	var req Request
	num := func(name string, dst *int) {
		s, e := one(name)
		if e != nil || s == "" {
			err = errors.Join(err, e)
			return
		}
		n, e := strconv.Atoi(s)
		if e != nil {
			err = errors.Join(err, badRequest("%s=%q: want a whole number", name, s))
		}
		*dst = n
	}
	text := func(name string, dst *string) {
		s, e := one(name)
		err = errors.Join(err, e)
		*dst = s
	}
	if !v.Has("q") {
		return req, badRequest("no query: give ?q=TEXT")
	}
	text("q", &req.Query)
	text("id", &req.ID)
	num("k", &req.K)
	if v.Has("k") && req.K == 0 && err == nil {
		err = badRequest("k must be between 1 and the service's most, got 0 (leave k out for %d)", DefaultK)
	}
	for _, rv := range v["retriever"] {
		for n := range strings.SplitSeq(rv, ",") {
			if n = strings.TrimSpace(n); n != "" {
				req.Retrievers = append(req.Retrievers, n)
			}
		}
	}
	if v.Has("fuse") || v.Has("rrf_k") || v.Has("norm") || v.Has("weights") || v.Has("fuse_depth") {
		f := &fusion.Spec{}
		text("fuse", &f.Method)
		text("norm", &f.Norm)
		num("fuse_depth", &f.Depth)
		if s, e := one("rrf_k"); e != nil {
			err = errors.Join(err, e)
		} else if s != "" {
			if f.K, e = strconv.ParseFloat(s, 64); e != nil {
				err = errors.Join(err, badRequest("rrf_k=%q: want a number", s))
			}
		}
		if s, e := one("weights"); e != nil {
			err = errors.Join(err, e)
		} else if s != "" {
			for ws := range strings.SplitSeq(s, ",") {
				x, e := strconv.ParseFloat(strings.TrimSpace(ws), 64)
				if e != nil {
					err = errors.Join(err, badRequest("weights=%q: want numbers separated by commas", s))
					break
				}
				f.Weights = append(f.Weights, x)
			}
		}
		if err == nil && v.Has("rrf_k") && f.K == 0 {
			err = badRequest("rrf_k: %v", fusion.WrittenZero("k"))
		}
		if err == nil && v.Has("fuse_depth") && f.Depth == 0 {
			err = badRequest("fuse_depth: %v", fusion.WrittenZero("depth"))
		}
		req.Fuse = f
	}
	text("gar", &req.GAR)
	if s, e := one("rerank"); e != nil {
		err = errors.Join(err, e)
	} else if s != "" {
		b, e := strconv.ParseBool(s)
		if e != nil {
			err = errors.Join(err, badRequest("rerank=%q: want true or false", s))
		}
		req.Rerank = b
	}
	num("rerank_depth", &req.RerankDepth)
	if v.Has("rerank_depth") && req.RerankDepth == 0 && err == nil {
		err = badRequest(rerankDepthZero)
	}
	if v.Has("snippet") {
		n := 0
		num("snippet", &n)
		req.Snippet = &n
	}
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			return req, e
		}
		return req, badRequest("%v", err)
	}
	return req, nil
}

func (s *Service) getDoc(w http.ResponseWriter, r *http.Request) {
	v, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		writeError(w, badRequest("query string: %v", err))
		return
	}
	for name := range v {
		if name != "retriever" {
			writeError(w, badRequest("unknown parameter %q; the parameter is retriever", name))
			return
		}
	}
	d, err := s.Doc(r.PathValue("id"), v.Get("retriever"))
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, d)
}

// RetrieversBody is GET /v1/retrievers' answer.
type RetrieversBody struct {
	Retrievers []RetrieverInfo `json:"retrievers"`
}

func (s *Service) getRetrievers(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, RetrieversBody{Retrievers: s.Retrievers()})
}

// Health is GET /healthz's answer: "ok", or "degraded" (answered with
// 503) with the problems — index sections failing their checksums,
// files that cannot be opened or were replaced by one that cannot.
type Health struct {
	Status     string   `json:"status"`
	Retrievers int      `json:"retrievers"`
	Problems   []string `json:"problems,omitempty"`
}

// Health says whether every index file serves as it should.
func (s *Service) Health() Health {
	st := s.acquire()
	defer st.release()
	h := Health{Status: "ok", Retrievers: len(st.retrievers), Problems: st.problems}
	for _, l := range st.slots {
		if l != nil {
			if err := l.ix.Changed(); err != nil {
				h.Problems = append(slices.Clip(h.Problems), err.Error())
			}
		}
	}
	if len(h.Problems) > 0 {
		h.Status = "degraded"
	}
	return h
}

func (s *Service) getHealth(w http.ResponseWriter, r *http.Request) {
	h := s.Health()
	code := http.StatusOK
	if h.Status != "ok" {
		code = http.StatusServiceUnavailable
	}
	writeJSON(w, code, h)
}

func (s *Service) getOpenAPI(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Write(openAPI)
}
