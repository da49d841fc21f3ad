package embed

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/r2med/r2med/embed/embedtest"
)

// fakeVec is the fake servers' embedding of a text: a function of the
// text alone, so a vector in the wrong place is seen.
func fakeVec(text string, dim int) []float32 { return embedtest.Vector(text, dim) }

// fakeRequest is what a fake server saw.
type fakeRequest struct {
	path, auth string
	body       map[string]any
	texts      []string
}

// embedServer is a loopback embedding server speaking OpenAI's, Voyage's (same
// shape) or TEI's protocol. Its hooks inject faults per request.
type embedServer struct {
	t    *testing.T
	tei  bool
	dim  int
	url  string
	mu   sync.Mutex
	seen []fakeRequest
	// fault, if set, may answer the n-th request (from 0) itself and
	// return true.
	fault func(n int, w http.ResponseWriter, r *fakeRequest) bool
	// rewrite, if set, changes the data entries before they are sent.
	rewrite func(n int, data []map[string]any) []map[string]any
	// arrive, if set, runs before answering (outside the lock).
	arrive func(r *fakeRequest)
	b64    bool
}

func newEmbedServer(t *testing.T, tei bool, dim int) *embedServer {
	f := &embedServer{t: t, tei: tei, dim: dim}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	f.url = srv.URL
	return f
}

func (f *embedServer) ServeHTTP(w http.ResponseWriter, hr *http.Request) {
	raw, _ := io.ReadAll(hr.Body)
	r := fakeRequest{path: hr.URL.Path, auth: hr.Header.Get("Authorization")}
	if err := json.Unmarshal(raw, &r.body); err != nil {
		f.t.Errorf("request body %q: %v", raw, err)
		w.WriteHeader(400)
		return
	}
	key := "input"
	if f.tei {
		key = "inputs"
	}
	for _, x := range r.body[key].([]any) {
		r.texts = append(r.texts, x.(string))
	}
	f.mu.Lock()
	n := len(f.seen)
	f.seen = append(f.seen, r)
	f.mu.Unlock()
	if f.arrive != nil {
		f.arrive(&r)
	}
	if f.fault != nil && f.fault(n, w, &r) {
		return
	}
	if f.tei {
		out := make([][]float32, len(r.texts))
		for i, s := range r.texts {
			out[i] = fakeVec(s, f.dim)
		}
		json.NewEncoder(w).Encode(out)
		return
	}
	data := make([]map[string]any, len(r.texts))
	for i, s := range r.texts {
		var e any = fakeVec(s, f.dim)
		if r.body["encoding_format"] == "base64" {
			e = b64Vec(fakeVec(s, f.dim))
		}
		data[i] = map[string]any{"object": "embedding", "index": i, "embedding": e}
	}
	if f.rewrite != nil {
		data = f.rewrite(n, data)
	}
	json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data, "model": r.body["model"]})
}

func (f *embedServer) requests() []fakeRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.seen)
}

// sizes are the batch sizes the server saw, sorted (batches run
// concurrently, so they arrive in any order).
func (f *embedServer) sizes() []int {
	var s []int
	for _, r := range f.requests() {
		s = append(s, len(r.texts))
	}
	slices.Sort(s)
	return s
}

func b64Vec(v []float32) string {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return base64.StdEncoding.EncodeToString(b)
}

func someTexts(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("text number %d", i)
	}
	return out
}

// fastRetry are retry settings that keep tests from sleeping.
var fastRetry = HTTPOptions{BaseDelay: time.Millisecond, MaxDelay: 2 * time.Millisecond}

func clearEmbedEnv(t *testing.T) {
	for _, k := range []string{"OPENAI_API_KEY", "OPENAI_BASE_URL", "VOYAGE_API_KEY", "VOYAGE_BASE_URL"} {
		t.Setenv(k, "")
	}
}

func newOpenAIFake(t *testing.T, f *embedServer, mod func(*OpenAIOptions)) *OpenAI {
	t.Helper()
	clearEmbedEnv(t)
	o := OpenAIOptions{BaseURL: f.url + "/v1", Model: "m1", HTTPOptions: fastRetry}
	if mod != nil {
		mod(&o)
	}
	e, err := NewOpenAI(o)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func wantFakeVecs(t *testing.T, got [][]float32, in []string, dim int) {
	t.Helper()
	if len(got) != len(in) {
		t.Fatalf("%d vectors for %d texts", len(got), len(in))
	}
	for i, s := range in {
		if !slices.Equal(got[i], fakeVec(s, dim)) {
			t.Fatalf("vector %d is not the embedding of %q", i, s)
		}
	}
}

func wantErr(t *testing.T, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one with %q", parts)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("error %q lacks %q", err, p)
		}
	}
}

func TestOpenAIBatchesByCountInOrder(t *testing.T) {
	f := newEmbedServer(t, false, 6)
	e := newOpenAIFake(t, f, nil)
	in := someTexts(150)
	got, err := e.Embed(context.Background(), Query, in)
	if err != nil {
		t.Fatal(err)
	}
	wantFakeVecs(t, got, in, 6)
	if s := f.sizes(); !slices.Equal(s, []int{22, 64, 64}) {
		t.Errorf("batch sizes %v, want 64, 64, 22", s)
	}
	r := f.requests()[0]
	if r.path != "/v1/embeddings" || r.body["model"] != "m1" || r.body["encoding_format"] != "base64" {
		t.Errorf("request %s %v", r.path, r.body)
	}
	if _, ok := r.body["dimensions"]; ok {
		t.Errorf("dimensions sent though none was asked for: %v", r.body)
	}
	if r.auth != "" {
		t.Errorf("Authorization %q sent without a key", r.auth)
	}
}

func TestOpenAIDimensionsAndKey(t *testing.T) {
	f := newEmbedServer(t, false, 8)
	e := newOpenAIFake(t, f, func(o *OpenAIOptions) { o.Dimensions = 8; o.APIKey = "sk-local-1234" })
	if _, err := e.Embed(context.Background(), Document, someTexts(3)); err != nil {
		t.Fatal(err)
	}
	r := f.requests()[0]
	if r.body["dimensions"] != 8.0 || r.auth != "Bearer sk-local-1234" {
		t.Errorf("dimensions %v, Authorization %q", r.body["dimensions"], r.auth)
	}
	if s := e.String(); s != "openai m1 dimensions=8" || strings.Contains(s, "sk-") {
		t.Errorf("String() = %q", s)
	}

	// A server that ignores the asked dimension is caught.
	f2 := newEmbedServer(t, false, 16)
	e2 := newOpenAIFake(t, f2, func(o *OpenAIOptions) { o.Dimensions = 8 })
	_, err := e2.Embed(context.Background(), Query, someTexts(3))
	wantErr(t, err, "openai m1: texts 1-3 of 3", "dimension 16, but 8 was asked for")
}

func TestOpenAIFromEnvironment(t *testing.T) {
	f := newEmbedServer(t, false, 4)
	clearEmbedEnv(t)
	t.Setenv("OPENAI_BASE_URL", f.url+"/v1")
	t.Setenv("OPENAI_API_KEY", "sk-env-5678")
	e, err := NewOpenAI(OpenAIOptions{Model: "m1", HTTPOptions: fastRetry})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Embed(context.Background(), Query, someTexts(2)); err != nil {
		t.Fatal(err)
	}
	if r := f.requests()[0]; r.auth != "Bearer sk-env-5678" || r.path != "/v1/embeddings" {
		t.Errorf("request to %s with Authorization %q", r.path, r.auth)
	}

	// Options win over the environment.
	f2 := newEmbedServer(t, false, 4)
	e2, err := NewOpenAI(OpenAIOptions{BaseURL: f2.url, APIKey: "sk-flag-0000", Model: "m1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e2.Embed(context.Background(), Query, someTexts(1)); err != nil {
		t.Fatal(err)
	}
	if r := f2.requests()[0]; r.auth != "Bearer sk-flag-0000" || len(f.requests()) != 1 {
		t.Errorf("Authorization %q; env server saw %d requests", r.auth, len(f.requests()))
	}
}

func TestOfficialAPIsNeedAKey(t *testing.T) {
	clearEmbedEnv(t)
	_, err := NewOpenAI(OpenAIOptions{Model: "text-embedding-3-large"})
	wantErr(t, err, "OPENAI_API_KEY")
	_, err = NewVoyage(VoyageOptions{Model: "voyage-3"})
	wantErr(t, err, "VOYAGE_API_KEY")
	t.Setenv("OPENAI_API_KEY", "sk-x-1234")
	if _, err := NewOpenAI(OpenAIOptions{Model: "text-embedding-3-large"}); err != nil {
		t.Errorf("with a key: %v", err)
	}
}

func TestConstructorsValidate(t *testing.T) {
	clearEmbedEnv(t)
	base := "http://127.0.0.1:1/v1"
	for name, err := range map[string]error{
		"no model":      errOf(NewOpenAI(OpenAIOptions{BaseURL: base})),
		"blank model":   errOf(NewVoyage(VoyageOptions{BaseURL: base, Model: "  "})),
		"tei no model":  errOf(NewTEI(TEIOptions{BaseURL: base})),
		"bad base":      errOf(NewOpenAI(OpenAIOptions{BaseURL: "localhost:8080", Model: "m"})),
		"ftp base":      errOf(NewTEI(TEIOptions{BaseURL: "ftp://h/x", Model: "m"})),
		"negative dims": errOf(NewOpenAI(OpenAIOptions{BaseURL: base, Model: "m", Dimensions: -1})),
		"negative batch": errOf(NewOpenAI(OpenAIOptions{BaseURL: base, Model: "m",
			HTTPOptions: HTTPOptions{BatchSize: -2}})),
		"both cuts": errOf(NewOpenAI(OpenAIOptions{BaseURL: base, Model: "m",
			HTTPOptions: HTTPOptions{MaxChars: 10, Truncate: strings.ToLower}})),
		"tei dims": errOf(NewHTTP("tei", RemoteOptions{BaseURL: base, Model: "m", Dimensions: 8})),
		"unknown":  errOf(NewHTTP("cohere", RemoteOptions{BaseURL: base, Model: "m"})),
	} {
		want := map[string]string{
			"no model": "--model", "blank model": "--model", "tei no model": "--model",
			"bad base": "--base-url", "ftp base": "--base-url", "negative dims": "dimensions is -1",
			"negative batch": "batch size is -2", "both cuts": "set one", "tei dims": "drop --dimensions",
			"unknown": "openai, tei, voyage",
		}[name]
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want one with %q", name, err, want)
		}
	}
}

func errOf[T any](_ T, err error) error { return err }

func TestNewHTTPBuildsEachBackend(t *testing.T) {
	clearEmbedEnv(t)
	for _, b := range HTTPBackends {
		e, err := NewHTTP(b, RemoteOptions{BaseURL: "http://127.0.0.1:1", Model: "m"})
		if err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		if s := e.(fmt.Stringer).String(); s != b+" m" {
			t.Errorf("%s: String() = %q", b, s)
		}
	}
}

func TestEmptyInputSendsNothing(t *testing.T) {
	f := newEmbedServer(t, false, 4)
	e := newOpenAIFake(t, f, nil)
	for _, in := range [][]string{nil, {}} {
		got, err := e.Embed(context.Background(), Query, in)
		if err != nil || got == nil || len(got) != 0 {
			t.Errorf("Embed(%v) = %v, %v; want an empty result", in, got, err)
		}
	}
	if n := len(f.requests()); n != 0 {
		t.Errorf("%d requests for no texts", n)
	}
}

func TestOpenAIReorderedIndices(t *testing.T) {
	f := newEmbedServer(t, false, 5)
	f.rewrite = func(_ int, data []map[string]any) []map[string]any {
		slices.Reverse(data)
		return data
	}
	e := newOpenAIFake(t, f, nil)
	in := someTexts(10)
	got, err := e.Embed(context.Background(), Query, in)
	if err != nil {
		t.Fatal(err)
	}
	wantFakeVecs(t, got, in, 5)
}

func TestOpenAIWithoutIndicesIsPositional(t *testing.T) {
	f := newEmbedServer(t, false, 5)
	f.rewrite = func(_ int, data []map[string]any) []map[string]any {
		for _, d := range data {
			delete(d, "index")
		}
		return data
	}
	e := newOpenAIFake(t, f, nil)
	in := someTexts(4)
	got, err := e.Embed(context.Background(), Query, in)
	if err != nil {
		t.Fatal(err)
	}
	wantFakeVecs(t, got, in, 5)
}

func TestOpenAIBadAnswers(t *testing.T) {
	for _, tc := range []struct {
		name    string
		rewrite func(data []map[string]any) []map[string]any
		want    string
	}{
		{"short", func(d []map[string]any) []map[string]any { return d[:2] }, "asked for 3 embeddings, got 2"},
		{"long", func(d []map[string]any) []map[string]any { return append(d, d[0]) }, "asked for 3 embeddings, got 4"},
		{"duplicate index", func(d []map[string]any) []map[string]any { d[2]["index"] = 0; return d }, "index 0 appears twice"},
		{"index out of range", func(d []map[string]any) []map[string]any { d[1]["index"] = 3; return d }, "data[1] has index 3, outside 0..2"},
		{"some indices", func(d []map[string]any) []map[string]any { delete(d[1], "index"); return d }, "data[1] has no index while data[0] has one"},
		{"late index", func(d []map[string]any) []map[string]any {
			delete(d[0], "index")
			delete(d[2], "index")
			return d
		}, "data[1] has an index while data[0] has none"},
		{"wrong dimension", func(d []map[string]any) []map[string]any { d[1]["embedding"] = []float32{1, 2}; return d }, "embedding 1 has dimension 2, expected 4"},
		{"empty vector", func(d []map[string]any) []map[string]any { d[0]["embedding"] = []float32{}; return d }, "dimension 0"},
		{"null element", func(d []map[string]any) []map[string]any { d[1]["embedding"] = []any{1, nil, 3, 4}; return d }, "element 1 is null, not a number"},
		{"string element", func(d []map[string]any) []map[string]any { d[1]["embedding"] = []any{1, "2", 3, 4}; return d }, "element 1 is \"2\", not a number"},
		{"nested", func(d []map[string]any) []map[string]any { d[1]["embedding"] = []any{[]int{1}, 2}; return d }, "not a number"},
		{"too big", func(d []map[string]any) []map[string]any { d[1]["embedding"] = []any{1, 1e39, 3, 4}; return d }, "beyond float32"},
		{"null embedding", func(d []map[string]any) []map[string]any { d[1]["embedding"] = nil; return d }, "no embedding"},
		{"object embedding", func(d []map[string]any) []map[string]any { d[1]["embedding"] = map[string]int{}; return d }, "neither a list of numbers nor base64"},
		{"NaN", func(d []map[string]any) []map[string]any {
			d[2]["embedding"] = b64Vec([]float32{1, float32(math.NaN()), 0, 0})
			return d
		}, "contains NaN"},
		{"Inf", func(d []map[string]any) []map[string]any {
			d[2]["embedding"] = b64Vec([]float32{1, float32(math.Inf(1)), 0, 0})
			return d
		}, "contains +Inf"},
		{"bad base64", func(d []map[string]any) []map[string]any { d[2]["embedding"] = "!!!"; return d }, "bad base64"},
		{"ragged base64", func(d []map[string]any) []map[string]any { d[2]["embedding"] = "AAAAAAA="; return d }, "5 bytes"},
		{"no data", func(d []map[string]any) []map[string]any { return nil }, "asked for 3 embeddings, got 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newEmbedServer(t, false, 4)
			f.rewrite = func(_ int, d []map[string]any) []map[string]any { return tc.rewrite(d) }
			e := newOpenAIFake(t, f, nil)
			got, err := e.Embed(context.Background(), Query, someTexts(3))
			if got != nil {
				t.Errorf("vectors returned with a bad answer")
			}
			wantErr(t, err, "openai m1: texts 1-3 of 3", tc.want)
			if n := len(f.requests()); n != 1 {
				t.Errorf("%d requests; a bad answer is not retried", n)
			}
		})
	}
}

func TestOpenAIBase64(t *testing.T) {
	f := newEmbedServer(t, false, 7)
	e := newOpenAIFake(t, f, func(o *OpenAIOptions) { o.Encoding = EncodingBase64 })
	in := someTexts(5)
	got, err := e.Embed(context.Background(), Query, in)
	if err != nil {
		t.Fatal(err)
	}
	wantFakeVecs(t, got, in, 7)
	if r := f.requests()[0]; r.body["encoding_format"] != "base64" {
		t.Errorf("encoding_format %v", r.body["encoding_format"])
	}
	// A server that answers base64 when asked for floats is read too.
	f2 := newEmbedServer(t, false, 7)
	f2.rewrite = func(_ int, d []map[string]any) []map[string]any {
		for _, x := range d {
			x["embedding"] = b64Vec(slices.Collect(func(yield func(float32) bool) {
				for _, v := range x["embedding"].([]float32) {
					yield(v)
				}
			}))
		}
		return d
	}
	got, err = newOpenAIFake(t, f2, func(o *OpenAIOptions) { o.Encoding = EncodingFloat }).Embed(context.Background(), Query, in)
	if err != nil {
		t.Fatal(err)
	}
	wantFakeVecs(t, got, in, 7)
}

func answerStatus(w http.ResponseWriter, code int, header, body string) bool {
	if header != "" {
		k, v, _ := strings.Cut(header, ": ")
		w.Header().Set(k, v)
	}
	w.WriteHeader(code)
	io.WriteString(w, body)
	return true
}

func TestRateLimitAnd5xxRetried(t *testing.T) {
	f := newEmbedServer(t, false, 4)
	f.fault = func(n int, w http.ResponseWriter, _ *fakeRequest) bool {
		switch n {
		case 0, 1:
			return answerStatus(w, 429, "Retry-After: 1", `{"error":{"message":"Rate limit reached"}}`)
		case 2:
			return answerStatus(w, 500, "", "internal")
		case 3:
			return answerStatus(w, 502, "", "<html>bad gateway</html>")
		case 4:
			return answerStatus(w, 503, "", "")
		}
		return false
	}
	var notes []string
	e := newOpenAIFake(t, f, func(o *OpenAIOptions) {
		o.Notify = func(attempt int, _ time.Duration, err error) { notes = append(notes, err.Error()) }
	})
	in := someTexts(3)
	got, err := e.Embed(context.Background(), Query, in)
	if err != nil {
		t.Fatal(err)
	}
	wantFakeVecs(t, got, in, 4)
	if len(f.requests()) != 6 || len(notes) != 5 || !strings.Contains(notes[0], "HTTP 429") {
		t.Errorf("%d requests, retries noted: %q", len(f.requests()), notes)
	}
}

func TestGiveUpIsAClearError(t *testing.T) {
	f := newEmbedServer(t, false, 4)
	f.fault = func(_ int, w http.ResponseWriter, _ *fakeRequest) bool {
		return answerStatus(w, 503, "", "model loading")
	}
	e := newOpenAIFake(t, f, func(o *OpenAIOptions) { o.MaxAttempts = 3 })
	_, err := e.Embed(context.Background(), Query, someTexts(3))
	wantErr(t, err, "openai m1: texts 1-3 of 3", "HTTP 503", "after 3 attempts", "model loading")
	if n := len(f.requests()); n != 3 {
		t.Errorf("%d requests, want 3", n)
	}
}

// An attempt longer than the timeout is cut off and retried. Requests
// that arrive before the first timeout hang until the test ends; the
// retry gets a minute and an answer, so a loaded machine, slow to answer
// or to send, can neither time out the retry nor answer the first
// attempt.
func TestTimeoutRetried(t *testing.T) {
	f := newEmbedServer(t, false, 4)
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	var retrying atomic.Bool
	f.fault = func(n int, w http.ResponseWriter, _ *fakeRequest) bool {
		if retrying.Load() {
			return false
		}
		select { // hang until the client has given up on this attempt
		case <-release:
		case <-time.After(20 * time.Second):
		}
		return true
	}
	var notes []string
	var e *OpenAI
	e = newOpenAIFake(t, f, func(o *OpenAIOptions) {
		o.Timeout = 100 * time.Millisecond
		o.Notify = func(_ int, _ time.Duration, err error) {
			notes = append(notes, err.Error())
			retrying.Store(true)
			e.client.Timeout = time.Minute
		}
	})
	in := someTexts(2)
	got, err := e.Embed(context.Background(), Query, in)
	if err != nil {
		t.Fatal(err)
	}
	wantFakeVecs(t, got, in, 4)
	if len(notes) != 1 || !strings.Contains(notes[0], "timed out") {
		t.Errorf("retries %q (%d requests arrived), want one after a timeout", notes, len(f.requests()))
	}
}

func TestMalformedJSONNotRetried(t *testing.T) {
	for _, body := range []string{`{"data": [`, `<html>gateway</html>`, `{"data": "nope"}`, `[[1,2]]`} {
		f := newEmbedServer(t, false, 4)
		f.fault = func(_ int, w http.ResponseWriter, _ *fakeRequest) bool { return answerStatus(w, 200, "", body) }
		_, err := newOpenAIFake(t, f, nil).Embed(context.Background(), Query, someTexts(2))
		wantErr(t, err, "openai m1: texts 1-2 of 2", "not the JSON expected")
		if n := len(f.requests()); n != 1 {
			t.Errorf("%q: %d requests", body, n)
		}
	}
}

func TestErrorObjectWith200(t *testing.T) {
	const key = "sk-secret-abcdef123456"
	f := newEmbedServer(t, false, 4)
	f.fault = func(_ int, w http.ResponseWriter, r *fakeRequest) bool {
		return answerStatus(w, 200, "", fmt.Sprintf(`{"error":{"message":"quota exceeded for %s"}}`, r.auth))
	}
	_, err := newOpenAIFake(t, f, func(o *OpenAIOptions) { o.APIKey = key }).Embed(context.Background(), Query, someTexts(2))
	wantErr(t, err, "instead of embeddings", "quota exceeded", "[REDACTED]")
	if strings.Contains(err.Error(), key) {
		t.Errorf("error leaks the key: %v", err)
	}
}

func TestErrorObjectCutAfterRedaction(t *testing.T) {
	// Long error objects whose 300-byte cut falls inside the key, or inside
	// a two-byte character: cut before redacting, the half key would no
	// longer match and would be printed.
	const key = "sk-secret-abcdef123456"
	for _, msg := range []string{
		strings.Repeat("é", 130) + " quota exceeded for " + key,
		"x" + strings.Repeat("é", 150) + " quota exceeded for " + key,
	} {
		f := newEmbedServer(t, false, 4)
		f.fault = func(_ int, w http.ResponseWriter, _ *fakeRequest) bool {
			return answerStatus(w, 200, "", fmt.Sprintf(`{"error":{"message":%q}}`, msg))
		}
		_, err := newOpenAIFake(t, f, func(o *OpenAIOptions) { o.APIKey = key }).Embed(context.Background(), Query, someTexts(2))
		wantErr(t, err, "instead of embeddings", "…")
		if strings.Contains(err.Error(), "sk-") || !utf8.ValidString(err.Error()) {
			t.Errorf("error leaks part of the key or splits a character: %q", err)
		}
	}
}

func TestKeyNeverInErrors(t *testing.T) {
	const key = "sk-secret-abcdef123456"
	for _, code := range []int{400, 401, 500} {
		f := newEmbedServer(t, false, 4)
		f.fault = func(_ int, w http.ResponseWriter, r *fakeRequest) bool {
			return answerStatus(w, code, "", fmt.Sprintf(`{"error":"Incorrect API key provided: %s (header %q)"}`, key, r.auth))
		}
		var notes []string
		e := newOpenAIFake(t, f, func(o *OpenAIOptions) {
			o.APIKey = key
			o.MaxAttempts = 2
			o.Notify = func(_ int, _ time.Duration, err error) { notes = append(notes, err.Error()) }
		})
		_, err := e.Embed(context.Background(), Query, someTexts(2))
		wantErr(t, err, fmt.Sprintf("HTTP %d", code), "[REDACTED]")
		for _, msg := range append(notes, err.Error()) {
			if strings.Contains(msg, key) || strings.Contains(msg, "abcdef") {
				t.Errorf("HTTP %d: message leaks the key: %s", code, msg)
			}
		}
		if code == 401 && !strings.Contains(err.Error(), "check the API key") {
			t.Errorf("401 without a hint: %v", err)
		}
	}
	// Voyage and TEI keep their keys out too.
	for _, mk := range []func(base string) (Embedder, error){
		func(base string) (Embedder, error) {
			return NewVoyage(VoyageOptions{BaseURL: base, APIKey: key, Model: "v", HTTPOptions: fastRetry})
		},
		func(base string) (Embedder, error) {
			return NewTEI(TEIOptions{BaseURL: base, APIKey: key, Model: "t", HTTPOptions: fastRetry})
		},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			answerStatus(w, 403, "", "forbidden: "+r.Header.Get("Authorization"))
		}))
		e, err := mk(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		_, err = e.Embed(context.Background(), Query, someTexts(1))
		srv.Close()
		wantErr(t, err, "HTTP 403", "Bearer [REDACTED]")
		if strings.Contains(err.Error(), key) {
			t.Errorf("message leaks the key: %v", err)
		}
	}
}

func TestBatchesByTokenBudget(t *testing.T) {
	f := newEmbedServer(t, false, 4)
	// Token estimate = length in bytes; budget 10 per request.
	in := []string{"aaaa", "bbbb", "cc", "dddddd", "eeeeeeeeeeeeeeee", "f", "gggggggggg", "h", "i"}
	e := newOpenAIFake(t, f, func(o *OpenAIOptions) {
		o.MaxTokens = 10
		o.Tokens = func(s string) int { return len(s) }
		o.Concurrency = 1 // so the server sees batches in order
	})
	got, err := e.Embed(context.Background(), Query, in)
	if err != nil {
		t.Fatal(err)
	}
	wantFakeVecs(t, got, in, 4)
	var batches [][]string
	for _, r := range f.requests() {
		batches = append(batches, r.texts)
	}
	want := [][]string{{"aaaa", "bbbb", "cc"}, {"dddddd"}, {"eeeeeeeeeeeeeeee"}, {"f"}, {"gggggggggg"}, {"h", "i"}}
	if fmt.Sprint(batches) != fmt.Sprint(want) {
		t.Errorf("batches %q, want %q", batches, want)
	}
}

func TestDefaultTokenEstimate(t *testing.T) {
	for s, want := range map[string]int{"": 0, "a": 1, "abcd": 1, "abcde": 2, "é": 1, strings.Repeat("x", 400): 100} {
		if got := EstimateTokens(s); got != want {
			t.Errorf("EstimateTokens(%q) = %d, want %d", s, got, want)
		}
	}
	// Batches under the default budget of 100k: 30 texts of 20k bytes
	// (5k tokens each) go 20 to a request.
	f := newEmbedServer(t, false, 4)
	in := make([]string, 30)
	for i := range in {
		in[i] = fmt.Sprintf("%05d", i) + strings.Repeat("x", 20_000-5)
	}
	if _, err := newOpenAIFake(t, f, nil).Embed(context.Background(), Query, in); err != nil {
		t.Fatal(err)
	}
	if s := f.sizes(); !slices.Equal(s, []int{10, 20}) {
		t.Errorf("batch sizes %v, want 20 and 10", s)
	}
}

func TestSpans(t *testing.T) {
	tok := func(s string) int { return len(s) }
	for _, tc := range []struct {
		in           []string
		size, budget int
		want         string
	}{
		{nil, 3, 10, "[]"},
		{[]string{"a", "b", "c", "d"}, 3, 100, "[{0 3} {3 4}]"},
		{[]string{"a", "b", "c"}, 3, 100, "[{0 3}]"},
		{[]string{"aaaaa", "aaaaa", "a"}, 10, 10, "[{0 2} {2 3}]"},
		{[]string{"a", "aaaaaaaaaaaa", "a"}, 10, 10, "[{0 1} {1 2} {2 3}]"},
		{[]string{"aaaaaaaaaaaa"}, 10, 10, "[{0 1}]"},
		{[]string{"", "", ""}, 2, 1, "[{0 2} {2 3}]"},
	} {
		if got := fmt.Sprint(spans(tc.in, tc.size, tc.budget, tok)); got != tc.want {
			t.Errorf("spans(%q, %d, %d) = %s, want %s", tc.in, tc.size, tc.budget, got, tc.want)
		}
	}
}

func TestConcurrencyBound(t *testing.T) {
	const limit = 3
	f := newEmbedServer(t, false, 4)
	var mu sync.Mutex
	cond := sync.NewCond(&mu)
	inFlight, maxSeen, started := 0, 0, 0
	const batches = 10
	// Each request waits until the limit has been reached once (or every
	// batch has started), so the test sees the bound actually used.
	f.arrive = func(*fakeRequest) {
		mu.Lock()
		inFlight++
		started++
		maxSeen = max(maxSeen, inFlight)
		cond.Broadcast()
		for maxSeen < limit && started < batches {
			cond.Wait()
		}
		inFlight--
		mu.Unlock()
	}
	// A fixed encoding: in auto mode the server's first request runs
	// alone, which this server's barrier would never let finish.
	e := newOpenAIFake(t, f, func(o *OpenAIOptions) { o.BatchSize = 5; o.Concurrency = limit; o.Encoding = EncodingFloat })
	in := someTexts(5 * batches)
	got, err := e.Embed(context.Background(), Query, in)
	if err != nil {
		t.Fatal(err)
	}
	wantFakeVecs(t, got, in, 4)
	if maxSeen != limit {
		t.Errorf("at most %d requests in flight, want exactly %d", maxSeen, limit)
	}
}

func TestConcurrencyNeverExceeded(t *testing.T) {
	f := newEmbedServer(t, false, 4)
	var mu sync.Mutex
	inFlight, maxSeen := 0, 0
	f.arrive = func(*fakeRequest) {
		mu.Lock()
		inFlight++
		maxSeen = max(maxSeen, inFlight)
		mu.Unlock()
		time.Sleep(time.Millisecond) // let others pile up if they may
		mu.Lock()
		inFlight--
		mu.Unlock()
	}
	e := newOpenAIFake(t, f, func(o *OpenAIOptions) { o.BatchSize = 1; o.Concurrency = 2 })
	if _, err := e.Embed(context.Background(), Query, someTexts(40)); err != nil {
		t.Fatal(err)
	}
	if maxSeen > 2 {
		t.Errorf("%d requests in flight, limit 2", maxSeen)
	}
}

func TestFirstErrorStopsTheRest(t *testing.T) {
	f := newEmbedServer(t, false, 4)
	f.fault = func(n int, w http.ResponseWriter, _ *fakeRequest) bool {
		if n == 1 {
			return answerStatus(w, 400, "", "input too long")
		}
		return false
	}
	e := newOpenAIFake(t, f, func(o *OpenAIOptions) { o.BatchSize = 2; o.Concurrency = 1 })
	_, err := e.Embed(context.Background(), Query, someTexts(20))
	wantErr(t, err, "openai m1: texts 3-4 of 20", "HTTP 400", "input too long")
	if n := len(f.requests()); n != 2 {
		t.Errorf("%d requests after the first failure at request 2", n)
	}
}

func TestCallerCancellation(t *testing.T) {
	f := newEmbedServer(t, false, 4)
	ctx, cancel := context.WithCancel(context.Background())
	f.fault = func(n int, w http.ResponseWriter, _ *fakeRequest) bool {
		cancel()
		return answerStatus(w, 503, "", "")
	}
	_, err := newOpenAIFake(t, f, nil).Embed(ctx, Query, someTexts(3))
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error %v, want context.Canceled", err)
	}
}

func TestProgress(t *testing.T) {
	f := newEmbedServer(t, false, 4)
	var seen []int
	e := newOpenAIFake(t, f, func(o *OpenAIOptions) {
		o.BatchSize = 7
		o.Progress = func(done int) { seen = append(seen, done) } // calls do not overlap
	})
	if _, err := e.Embed(context.Background(), Query, someTexts(30)); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 5 || seen[4] != 30 || !slices.IsSorted(seen) {
		t.Errorf("progress %v, want 5 growing counts ending at 30", seen)
	}
}

func TestDimensionKeptAcrossCalls(t *testing.T) {
	f := newEmbedServer(t, false, 4)
	e := newOpenAIFake(t, f, nil)
	if _, err := e.Embed(context.Background(), Query, someTexts(2)); err != nil {
		t.Fatal(err)
	}
	f.dim = 5 // the server switches models under us
	_, err := e.Embed(context.Background(), Document, someTexts(2))
	wantErr(t, err, "dimension 5, expected 4")
}

func TestDimensionConsistentAcrossBatches(t *testing.T) {
	f := newEmbedServer(t, false, 4)
	f.rewrite = func(n int, d []map[string]any) []map[string]any {
		if n == 1 {
			for _, x := range d {
				x["embedding"] = []float32{1, 2, 3}
			}
		}
		return d
	}
	e := newOpenAIFake(t, f, func(o *OpenAIOptions) { o.BatchSize = 2; o.Concurrency = 1 })
	_, err := e.Embed(context.Background(), Query, someTexts(6))
	wantErr(t, err, "texts 3-4 of 6", "dimension 3, expected 4")
}

func TestVoyageInputTypePerSide(t *testing.T) {
	f := newEmbedServer(t, false, 4)
	clearEmbedEnv(t)
	e, err := NewVoyage(VoyageOptions{BaseURL: f.url + "/v1", APIKey: "pa-test-1234", Model: "voyage-3", Dimensions: 4, HTTPOptions: fastRetry})
	if err != nil {
		t.Fatal(err)
	}
	in := someTexts(3)
	for _, side := range []Input{Query, Document} {
		got, err := e.Embed(context.Background(), side, in)
		if err != nil {
			t.Fatal(err)
		}
		wantFakeVecs(t, got, in, 4)
	}
	rs := f.requests()
	if len(rs) != 2 || rs[0].body["input_type"] != "query" || rs[1].body["input_type"] != "document" {
		t.Fatalf("requests %v", rs)
	}
	r := rs[0]
	if r.path != "/v1/embeddings" || r.auth != "Bearer pa-test-1234" || r.body["model"] != "voyage-3" || r.body["output_dimension"] != 4.0 {
		t.Errorf("request %s %q %v", r.path, r.auth, r.body)
	}
	if r.body["encoding_format"] != "base64" {
		t.Errorf("encoding_format %v, want base64 by default: %v", r.body["encoding_format"], r.body)
	}
	if _, err := e.Embed(context.Background(), Input(7), in); err == nil {
		t.Error("an unknown input side was accepted")
	}
}

func TestVoyageFromEnvironment(t *testing.T) {
	f := newEmbedServer(t, false, 4)
	clearEmbedEnv(t)
	t.Setenv("VOYAGE_BASE_URL", f.url)
	t.Setenv("VOYAGE_API_KEY", "pa-env-9876")
	e, err := NewVoyage(VoyageOptions{Model: "voyage-3", Encoding: EncodingBase64})
	if err != nil {
		t.Fatal(err)
	}
	in := someTexts(2)
	got, err := e.Embed(context.Background(), Document, in)
	if err != nil {
		t.Fatal(err)
	}
	wantFakeVecs(t, got, in, 4)
	if r := f.requests()[0]; r.auth != "Bearer pa-env-9876" || r.body["encoding_format"] != "base64" {
		t.Errorf("Authorization %q, body %v", r.auth, r.body)
	}
}

func TestTEI(t *testing.T) {
	f := newEmbedServer(t, true, 3)
	e, err := NewTEI(TEIOptions{BaseURL: f.url, Model: "bge", HTTPOptions: fastRetry})
	if err != nil {
		t.Fatal(err)
	}
	in := someTexts(50)
	got, err := e.Embed(context.Background(), Document, in)
	if err != nil {
		t.Fatal(err)
	}
	wantFakeVecs(t, got, in, 3)
	if s := f.sizes(); !slices.Equal(s, []int{18, 32}) {
		t.Errorf("batch sizes %v, want TEI's default limit of 32", s)
	}
	r := f.requests()[0]
	if r.path != "/embed" || r.body["truncate"] != true || r.body["normalize"] != true || r.auth != "" {
		t.Errorf("request %s %q %v", r.path, r.auth, r.body)
	}

	f2 := newEmbedServer(t, true, 3)
	e2, err := NewTEI(TEIOptions{BaseURL: f2.url, Model: "bge", Unnormalized: true, APIKey: "tei-key-1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e2.Embed(context.Background(), Query, in[:2]); err != nil {
		t.Fatal(err)
	}
	if r := f2.requests()[0]; r.body["normalize"] != false || r.auth != "Bearer tei-key-1" {
		t.Errorf("normalize %v, Authorization %q", r.body["normalize"], r.auth)
	}
	if e2.String() != "tei bge unnormalized" {
		t.Errorf("String() = %q", e2.String())
	}
}

func TestTEIBadAnswers(t *testing.T) {
	for body, want := range map[string]string{
		`[[1,2,3],[4,5,6]]`:            "asked for 3 embeddings, got 2",
		`[[1,2,3],[4,5],[7,8,9]]`:      "embedding 1 has dimension 2, expected 3",
		`[[1,2,3],[4,null,6],[1]]`:     "embedding 1: element 1 is null",
		`{"error":"x"}`:                "not the JSON expected",
		`[[1,2,3],[4,5,6],"AAAAAA=="]`: "dimension 1, expected 3", // base64 of one float32
		`[[1,2,3],[4,5,6],[1e400]]`:    "element 0 (1e400) is beyond float32",
	} {
		f := newEmbedServer(t, true, 3)
		f.fault = func(_ int, w http.ResponseWriter, _ *fakeRequest) bool { return answerStatus(w, 200, "", body) }
		e, err := NewTEI(TEIOptions{BaseURL: f.url, Model: "bge", HTTPOptions: fastRetry})
		if err != nil {
			t.Fatal(err)
		}
		got, err := e.Embed(context.Background(), Query, someTexts(3))
		if got != nil {
			t.Errorf("%s: vectors returned", body)
		}
		wantErr(t, err, "tei bge: texts 1-3 of 3", want)
	}
}

func TestTEIRetries413IsNot(t *testing.T) {
	f := newEmbedServer(t, true, 3)
	f.fault = func(n int, w http.ResponseWriter, _ *fakeRequest) bool {
		return answerStatus(w, 413, "", `{"error":"batch size 40 > maximum allowed batch size 32","error_type":"Validation"}`)
	}
	e, err := NewTEI(TEIOptions{BaseURL: f.url, Model: "bge", HTTPOptions: HTTPOptions{BatchSize: 40}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.Embed(context.Background(), Query, someTexts(40))
	wantErr(t, err, "HTTP 413", "maximum allowed batch size 32", "lower the batch size")
	if len(f.requests()) != 1 {
		t.Errorf("%d requests", len(f.requests()))
	}
}

func TestMaxCharsAndTruncate(t *testing.T) {
	f := newEmbedServer(t, false, 4)
	e := newOpenAIFake(t, f, func(o *OpenAIOptions) { o.MaxChars = 5 })
	in := []string{"héllo wörld", "abc", "日本語のテキスト"}
	got, err := e.Embed(context.Background(), Query, in)
	if err != nil {
		t.Fatal(err)
	}
	sent := f.requests()[0].texts
	if want := []string{"héllo", "abc", "日本語のテ"}; !slices.Equal(sent, want) {
		t.Errorf("sent %q, want %q", sent, want)
	}
	// The vectors are those of the texts sent, in the caller's order.
	wantFakeVecs(t, got, sent, 4)
	if s := e.String(); s != "openai m1 max-chars=5" {
		t.Errorf("String() = %q", s)
	}

	f2 := newEmbedServer(t, false, 4)
	e2 := newOpenAIFake(t, f2, func(o *OpenAIOptions) { o.Truncate = func(s string) string { return s[:1] } })
	if _, err := e2.Embed(context.Background(), Query, in[:2]); err != nil {
		t.Fatal(err)
	}
	if sent := f2.requests()[0].texts; !slices.Equal(sent, []string{"h", "a"}) {
		t.Errorf("sent %q", sent)
	}
}

// The expected strings were printed by Debian's python3:
// print(json.dumps(s)) for each s (json.dumps's defaults, as R2MED used).
func TestQuoteInputsMatchesPythonJSONDumps(t *testing.T) {
	cases := [][2]string{
		{"plain text", `"plain text"`},
		{`say "hi"\path`, `"say \"hi\"\\path"`},
		{"tab\there\rcr\b\f\x01\x7f", `"tab\there\rcr\b\f\u0001\u007f"`},
		{"café naïve – “quotes” 中文", `"caf\u00e9 na\u00efve \u2013 \u201cquotes\u201d \u4e2d\u6587"`},
		{"emoji 😀 𝔘", `"emoji \ud83d\ude00 \ud835\udd18"`},
		{"line1\nline2", `"line1 line2"`}, // R2MED replaced newlines first
		{"", `""`},
	}
	f := newEmbedServer(t, false, 4)
	e, err := NewVoyage(VoyageOptions{BaseURL: f.url, APIKey: "k-1234", Model: "voyage-3",
		HTTPOptions: HTTPOptions{QuoteInputs: true, MaxChars: 100}})
	if err != nil {
		t.Fatal(err)
	}
	var in []string
	for _, c := range cases {
		in = append(in, c[0])
	}
	if _, err := e.Embed(context.Background(), Document, in); err != nil {
		t.Fatal(err)
	}
	sent := f.requests()[0].texts
	for i, c := range cases {
		if sent[i] != c[1] {
			t.Errorf("%q sent as %s, want %s", c[0], sent[i], c[1])
		}
	}
	if s := e.String(); s != "voyage voyage-3 max-chars=100 quote-inputs" {
		t.Errorf("String() = %q", s)
	}
	// Truncation comes first, as in R2MED: the quotes are added after the cut.
	f2 := newEmbedServer(t, false, 4)
	e2 := newOpenAIFake(t, f2, func(o *OpenAIOptions) { o.QuoteInputs = true; o.MaxChars = 3 })
	if _, err := e2.Embed(context.Background(), Query, []string{"a\nbcdef"}); err != nil {
		t.Fatal(err)
	}
	if got := f2.requests()[0].texts[0]; got != `"a b"` {
		t.Errorf("sent %s, want \"a b\"", got)
	}
}

func TestCutRunes(t *testing.T) {
	for _, tc := range []struct {
		s    string
		n    int
		want string
	}{{"abc", 5, "abc"}, {"abc", 3, "abc"}, {"abcd", 3, "abc"}, {"ééé", 2, "éé"}, {"ééé", 3, "ééé"}, {"x", 0, ""}} {
		if got := cutRunes(tc.s, tc.n); got != tc.want {
			t.Errorf("cutRunes(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.want)
		}
	}
}
