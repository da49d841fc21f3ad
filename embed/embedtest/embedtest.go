// Package embedtest runs loopback OpenAI-compatible embedding servers for
// tests and benchmarks of code that embeds remotely, as net/http/httptest
// does for HTTP servers: deterministic vectors (a function of the text
// alone, so any server of a fleet gives the same vector), a latency and a
// cap on requests answered at once (like a GPU server's batch slots), a
// model of a GPU server's time (GPU: overlapping overhead, one
// accelerator with a token rate, one CPU writing answers, floats dearer
// than base64), the three answers to a request for base64 (Base64Mode),
// and the faults a fleet must survive: rate limiting (429 with
// Retry-After) and a server killed mid-run.
//
// Each server counts the texts it answered with 200 (Embedded), so a test
// can check that across a fleet every text was embedded exactly once.
package embedtest

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Options configure a Server; the zero value answers at once, any number
// of requests at a time, with 8-dimensional vectors, in the encoding asked
// for.
type Options struct {
	Dim int // vector dimension; 0 means 8
	// Latency is added to every answer (a model's compute time).
	Latency time.Duration
	// MaxConcurrent bounds the requests computed at once; the others wait
	// for a slot, as on a server with a fixed batch capacity. 0: no bound.
	MaxConcurrent int
	// Base64 is what the server does with encoding_format "base64".
	Base64 Base64Mode
	// GPU, if set, makes the server spend time as a GPU server does (see
	// GPU); Latency and MaxConcurrent apply too.
	GPU *GPU
}

// Base64Mode is how a server treats a request for base64 vectors.
type Base64Mode uint8

const (
	// Base64Answered answers base64 when asked, floats otherwise (OpenAI,
	// vLLM).
	Base64Answered Base64Mode = iota
	// Base64Refused answers a request for base64 with 400 naming
	// encoding_format (a server that knows floats only).
	Base64Refused
	// Base64Ignored answers floats whatever is asked (a server that
	// ignores the field).
	Base64Ignored
)

// GPU is a model of where an embedding server's time goes, for
// benchmarks of clients: every request costs Overhead on its own
// (network, parsing, tokenizing: requests overlap in it), then waits for
// the one accelerator, which takes PerBatch plus its tokens at
// TokensPerSecond (requests queue for it, one batch at a time), then
// writes its answer on the one CPU that serializes answers (requests
// queue for it too): PerRequest, plus FloatCost per vector element
// written as decimal JSON, or a quarter of it as base64, as Python
// servers spend it. Tokens are Tokens(text) of the texts sent.
type GPU struct {
	TokensPerSecond float64
	PerBatch        time.Duration
	Overhead        time.Duration
	PerRequest      time.Duration
	FloatCost       time.Duration
	// ElementsPerVector is the vector size FloatCost is charged for (a
	// real model's, when Dim is kept small so that the test's own JSON
	// stays cheap); 0 means Dim.
	ElementsPerVector int
	gpu, cpu          sync.Mutex
}

// Server is one loopback embedding server. Its methods are safe for
// concurrent use.
type Server struct {
	// URL is the base URL (…/v1) to give an OpenAI-compatible client.
	URL string

	srv   *httptest.Server
	opts  Options
	slots chan struct{}

	// live is held (read) from the dead check until an answer is written,
	// and (write) by Kill, so a text is counted only when its answer left.
	live      sync.RWMutex
	dead      atomic.Bool
	limited   atomic.Bool
	killAfter atomic.Int64 // answered requests after which to die; 0: never

	mu       sync.Mutex
	embedded map[string]int
	answered int64
	requests atomic.Int64
	inflight atomic.Int64
	maxIn    atomic.Int64
	asked    sync.Map // encoding_format → *atomic.Int64
}

// NewServer starts a server, closed when the test ends.
func NewServer(tb testing.TB, o Options) *Server {
	if o.Dim == 0 {
		o.Dim = 8
	}
	s := &Server{opts: o, embedded: map[string]int{}}
	if o.MaxConcurrent > 0 {
		s.slots = make(chan struct{}, o.MaxConcurrent)
	}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL + "/v1"
	tb.Cleanup(func() {
		s.Kill()
		s.srv.Close()
	})
	return s
}

// Vector is every server's embedding of text: a function of the text
// alone, in [-1, 1] per dimension.
func Vector(text string, dim int) []float32 {
	v := make([]float32, dim)
	for i := range v {
		h := fnv.New32a()
		fmt.Fprintf(h, "%d|%s", i, text)
		v[i] = float32(h.Sum32()%20001)/10000 - 1
	}
	return v
}

// Base64 is v as OpenAI writes base64 vectors: little-endian float32s.
func Base64(v []float32) string {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return base64.StdEncoding.EncodeToString(b)
}

// Tokens is the prompt token count the server reports for a text: its
// words, plus one.
func Tokens(text string) int { return len(strings.Fields(text)) + 1 }

// RateLimit makes the server answer every request with 429 and
// Retry-After: 1 (on) or serve again (off).
func (s *Server) RateLimit(on bool) { s.limited.Store(on) }

// KillAfter makes the server die (Kill) once it has answered n requests.
func (s *Server) KillAfter(n int) { s.killAfter.Store(int64(n)) }

// Kill stops the server as a crash does: its socket is closed (new
// connections are refused), open connections are dropped, and requests
// in flight get no answer.
func (s *Server) Kill() {
	s.live.Lock()
	s.dead.Store(true)
	s.live.Unlock()
	s.srv.Listener.Close()
	s.srv.CloseClientConnections()
}

// Embedded is how many times each text was answered with 200.
func (s *Server) Embedded() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int, len(s.embedded))
	for k, v := range s.embedded {
		out[k] = v
	}
	return out
}

// Requests is the number of requests received, answered or not.
func (s *Server) Requests() int64 { return s.requests.Load() }

// MaxInFlight is the most requests the server held at once.
func (s *Server) MaxInFlight() int64 { return s.maxIn.Load() }

// Asked is how many requests asked for vectors in encoding ("base64",
// "float", or "" for none named).
func (s *Server) Asked(encoding string) int64 {
	if n, ok := s.asked.Load(encoding); ok {
		return n.(*atomic.Int64).Load()
	}
	return 0
}

type request struct {
	Model          string   `json:"model"`
	Input          []string `json:"input"`
	EncodingFormat string   `json:"encoding_format"`
}

// spend makes the request take the time g says it takes.
func (g *GPU) spend(texts []string, dim int, base64 bool) {
	time.Sleep(g.Overhead)
	tokens := 0
	for _, t := range texts {
		tokens += Tokens(t)
	}
	g.gpu.Lock()
	time.Sleep(g.PerBatch + time.Duration(float64(tokens)/g.TokensPerSecond*float64(time.Second)))
	g.gpu.Unlock()
	elems := g.ElementsPerVector
	if elems == 0 {
		elems = dim
	}
	write := g.FloatCost * time.Duration(elems*len(texts))
	if base64 {
		write /= 4
	}
	g.cpu.Lock()
	time.Sleep(g.PerRequest + write)
	g.cpu.Unlock()
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.requests.Add(1)
	n := s.inflight.Add(1)
	defer s.inflight.Add(-1)
	for m := s.maxIn.Load(); n > m && !s.maxIn.CompareAndSwap(m, n); m = s.maxIn.Load() {
	}
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/embeddings") {
		http.Error(w, `{"error":"not found"}`, http.StatusNotFound)
		return
	}
	var req request
	if err := json.NewDecoder(io.LimitReader(r.Body, 64<<20)).Decode(&req); err != nil || req.Model == "" {
		http.Error(w, `{"error":"bad request"}`, http.StatusBadRequest)
		return
	}
	count, _ := s.asked.LoadOrStore(req.EncodingFormat, new(atomic.Int64))
	count.(*atomic.Int64).Add(1)
	if s.limited.Load() {
		w.Header().Set("Retry-After", "1")
		http.Error(w, `{"error":"rate limited"}`, http.StatusTooManyRequests)
		return
	}
	b64 := req.EncodingFormat == "base64"
	switch {
	case b64 && s.opts.Base64 == Base64Refused:
		http.Error(w, `{"error":{"message":"encoding_format: only 'float' is supported","type":"invalid_request_error","param":"encoding_format"}}`, http.StatusBadRequest)
		return
	case s.opts.Base64 == Base64Ignored:
		b64 = false
	}
	if s.slots != nil {
		select {
		case s.slots <- struct{}{}:
			defer func() { <-s.slots }()
		case <-r.Context().Done():
			return
		}
	}
	time.Sleep(s.opts.Latency)
	if s.opts.GPU != nil {
		s.opts.GPU.spend(req.Input, s.opts.Dim, b64)
	}
	type item struct {
		Object    string `json:"object"`
		Index     int    `json:"index"`
		Embedding any    `json:"embedding"`
	}
	ans := struct {
		Object string `json:"object"`
		Data   []item `json:"data"`
		Model  string `json:"model"`
		Usage  struct {
			PromptTokens int `json:"prompt_tokens"`
			TotalTokens  int `json:"total_tokens"`
		} `json:"usage"`
	}{Object: "list", Model: req.Model}
	for i, t := range req.Input {
		var v any = Vector(t, s.opts.Dim)
		if b64 {
			v = Base64(Vector(t, s.opts.Dim))
		}
		ans.Data = append(ans.Data, item{Object: "embedding", Index: i, Embedding: v})
		ans.Usage.PromptTokens += Tokens(t)
	}
	ans.Usage.TotalTokens = ans.Usage.PromptTokens
	body, _ := json.Marshal(ans)

	s.live.RLock()
	if s.dead.Load() {
		s.live.RUnlock()
		panic(http.ErrAbortHandler) // killed: no answer
	}
	w.Header().Set("Content-Type", "application/json")
	// A length, not chunks: the answer is whole once written, so a kill
	// right after cannot cut a counted answer short.
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	_, err := w.Write(body)
	if err == nil {
		w.(http.Flusher).Flush()
		s.mu.Lock()
		for _, t := range req.Input {
			s.embedded[t]++
		}
		s.answered++
		die := s.killAfter.Load() > 0 && s.answered >= s.killAfter.Load()
		s.mu.Unlock()
		s.live.RUnlock()
		if die {
			go s.Kill()
		}
		return
	}
	s.live.RUnlock()
}
