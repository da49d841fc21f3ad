package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/r2med/r2med/internal/httpx"
)

// fastRetry retries at once, so failure tests take milliseconds.
func fastRetry() *httpx.Client {
	return &httpx.Client{BaseDelay: time.Millisecond, MaxDelay: 2 * time.Millisecond, Timeout: 2 * time.Second, MaxAttempts: 4}
}

// chatServer answers each request with reply(body) and counts requests.
type chatServer struct {
	*httptest.Server
	calls  atomic.Int64
	mu     sync.Mutex
	bodies []map[string]any
	auth   []string
}

func newChatServer(t *testing.T, reply func(n int, body map[string]any, w http.ResponseWriter)) *chatServer {
	t.Helper()
	s := &chatServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" || r.Method != http.MethodPost {
			http.Error(w, "not found", http.StatusNotFound)
			return
		}
		n := int(s.calls.Add(1))
		raw, _ := io.ReadAll(r.Body)
		var body map[string]any
		if err := json.Unmarshal(raw, &body); err != nil {
			http.Error(w, "bad json", http.StatusBadRequest)
			return
		}
		s.mu.Lock()
		s.bodies = append(s.bodies, body)
		s.auth = append(s.auth, r.Header.Get("Authorization"))
		s.mu.Unlock()
		reply(n, body, w)
	}))
	t.Cleanup(s.Close)
	return s
}

func answer(w http.ResponseWriter, message map[string]any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"choices": []any{map[string]any{"index": 0, "message": message, "finish_reason": "stop"}},
		"usage":   map[string]any{"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18},
	})
}

// echo answers with the last user message, reversed in case, so that
// each prompt has its own answer.
func echo(_ int, body map[string]any, w http.ResponseWriter) {
	msgs := body["messages"].([]any)
	last := msgs[len(msgs)-1].(map[string]any)["content"].(string)
	answer(w, map[string]any{"role": "assistant", "content": "answer to " + last})
}

func newClient(t *testing.T, s *chatServer, o Options) *Client {
	t.Helper()
	o.BaseURL = s.URL + "/v1"
	if o.Model == "" {
		o.Model = "test-model"
	}
	if o.HTTP == nil {
		o.HTTP = fastRetry()
	}
	c, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestChatSendsParameters(t *testing.T) {
	s := newChatServer(t, echo)
	c := newClient(t, s, Options{APIKey: "sk-secret-123"})
	r, err := c.Chat(context.Background(), Request{
		Messages:    []Message{System("You are a helpful assistant."), User("q1")},
		Temperature: 0.7, TopP: 0.8, Seed: Seed(42), MaxTokens: 100, Stop: []string{"</search>"},
		Logprobs: true, TopLogprobs: 5,
	})
	if err != nil {
		t.Fatal(err)
	}
	if r.Content != "answer to q1" || r.Reasoning != "" || r.Cached {
		t.Errorf("response %+v", r)
	}
	if u := r.Usage; u.PromptTokens != 11 || u.CompletionTokens != 7 || u.TotalTokens != 18 || u.Estimated != "" || u.Seconds <= 0 || r.FinishReason != "stop" {
		t.Errorf("usage %+v finish %q", r.Usage, r.FinishReason)
	}
	b := s.bodies[0]
	want := map[string]any{
		"model": "test-model", "temperature": 0.7, "top_p": 0.8, "seed": 42.0, "max_tokens": 100.0,
		"logprobs": true, "top_logprobs": 5.0,
	}
	for k, v := range want {
		if b[k] != v {
			t.Errorf("%s = %v, want %v", k, b[k], v)
		}
	}
	if fmt.Sprint(b["stop"]) != "[</search>]" {
		t.Errorf("stop = %v", b["stop"])
	}
	if msgs := b["messages"].([]any); len(msgs) != 2 || msgs[0].(map[string]any)["role"] != "system" ||
		msgs[0].(map[string]any)["content"] != "You are a helpful assistant." {
		t.Errorf("messages = %v", b["messages"])
	}
	if s.auth[0] != "Bearer sk-secret-123" {
		t.Errorf("Authorization %q", s.auth[0])
	}
}

func TestChatOmitsUnsetParameters(t *testing.T) {
	s := newChatServer(t, echo)
	c := newClient(t, s, Options{})
	if _, err := c.Chat(context.Background(), Request{Model: "other", Messages: []Message{User("x")}}); err != nil {
		t.Fatal(err)
	}
	b := s.bodies[0]
	for _, k := range []string{"top_p", "seed", "max_tokens", "stop", "logprobs", "top_logprobs"} {
		if _, ok := b[k]; ok {
			t.Errorf("%s sent although unset: %v", k, b[k])
		}
	}
	if b["temperature"] != 0.0 || b["model"] != "other" {
		t.Errorf("temperature %v model %v", b["temperature"], b["model"])
	}
	if s.auth[0] != "" {
		t.Errorf("Authorization sent without a key: %q", s.auth[0])
	}
}

func TestEnvironment(t *testing.T) {
	s := newChatServer(t, echo)
	t.Setenv("OPENAI_BASE_URL", s.URL+"/v1")
	t.Setenv("OPENAI_API_KEY", "env-key-456")
	c, err := New(Options{Model: "m", HTTP: fastRetry()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Chat(context.Background(), Request{Messages: []Message{User("x")}}); err != nil {
		t.Fatal(err)
	}
	if s.auth[0] != "Bearer env-key-456" || c.BaseURL() != s.URL+"/v1" {
		t.Errorf("auth %q base %q", s.auth[0], c.BaseURL())
	}
	if _, err := New(Options{BaseURL: "localhost:8000"}); err == nil {
		t.Error("a base URL without scheme was accepted")
	}
}

func TestReasoning(t *testing.T) {
	cases := []struct {
		name               string
		message            map[string]any
		reasoning, content string
		raw                string
	}{
		{"reasoning_content", map[string]any{"content": "\n\nThe answer.", "reasoning_content": "Let me think."},
			"Let me think.", "\n\nThe answer.", "<think>\nLet me think.\n</think>\n\n\n\nThe answer."},
		{"reasoning", map[string]any{"content": "A", "reasoning": "R"}, "R", "A", "<think>\nR\n</think>\n\nA"},
		{"think block", map[string]any{"content": "<think>\nstep 1\nstep 2\n</think>\n\nfinal"}, "step 1\nstep 2", "final", "<think>\nstep 1\nstep 2\n</think>\n\nfinal"},
		{"template-opened block", map[string]any{"content": "reasoning here</think>answer"}, "reasoning here", "answer", "<think>\nreasoning here\n</think>\n\nanswer"},
		{"cut off while thinking", map[string]any{"content": "  <think>still going"}, "still going", "", "<think>\nstill going\n</think>\n\n"},
		{"plain", map[string]any{"content": " plain answer \n"}, "", " plain answer \n", " plain answer \n"},
		{"null content", map[string]any{"content": nil, "reasoning_content": "only thought"}, "only thought", "", "<think>\nonly thought\n</think>\n\n"},
		{"empty reasoning field", map[string]any{"content": "<think>x</think>y", "reasoning_content": ""}, "x", "y", "<think>\nx\n</think>\n\ny"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newChatServer(t, func(_ int, _ map[string]any, w http.ResponseWriter) { answer(w, tc.message) })
			r, err := newClient(t, s, Options{}).Chat(context.Background(), Request{Messages: []Message{User("q")}})
			if err != nil {
				t.Fatal(err)
			}
			if r.Reasoning != tc.reasoning || r.Content != tc.content {
				t.Errorf("reasoning %q content %q, want %q %q", r.Reasoning, r.Content, tc.reasoning, tc.content)
			}
			if r.Raw() != tc.raw {
				t.Errorf("Raw() = %q, want %q", r.Raw(), tc.raw)
			}
		})
	}
}

func TestLogprobs(t *testing.T) {
	s := newChatServer(t, func(_ int, _ map[string]any, w http.ResponseWriter) {
		io.WriteString(w, `{"choices":[{"message":{"role":"assistant","content":"yes"},"finish_reason":"stop",
			"logprobs":{"content":[{"token":"yes","logprob":-0.1,"bytes":[121],"top_logprobs":[
				{"token":"yes","logprob":-0.1},{"token":"no","logprob":-2.4}]}]}}]}`)
	})
	r, err := newClient(t, s, Options{}).Chat(context.Background(), Request{Messages: []Message{User("q")}, Logprobs: true, TopLogprobs: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Logprobs) != 1 || r.Logprobs[0].Token != "yes" || r.Logprobs[0].Logprob != -0.1 ||
		len(r.Logprobs[0].Top) != 2 || r.Logprobs[0].Top[1] != (TopLogprob{"no", -2.4}) {
		t.Errorf("logprobs %+v", r.Logprobs)
	}
	if _, err := newClient(t, s, Options{}).Chat(context.Background(), Request{Messages: []Message{User("q")}, TopLogprobs: 2}); err == nil {
		t.Error("top_logprobs without logprobs was accepted")
	}
}

func TestCache(t *testing.T) {
	s := newChatServer(t, echo)
	store := &MemoryStore{}
	c := newClient(t, s, Options{Cache: store})
	req := Request{Messages: []Message{System("sys"), User("q")}, Temperature: 0.7, Seed: Seed(42), MaxTokens: 50}
	first, err := c.Chat(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	again, err := c.Chat(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if s.calls.Load() != 1 || !again.Cached || again.Content != first.Content || again.Usage != first.Usage {
		t.Fatalf("second call: %d requests, %+v", s.calls.Load(), again)
	}
	// A fresh client on the same store (a rerun) asks nothing either.
	c2 := newClient(t, s, Options{Cache: store})
	if r, err := c2.Chat(context.Background(), req); err != nil || !r.Cached {
		t.Fatalf("rerun: %+v %v", r, err)
	}
	// Every parameter is part of the key.
	variants := []func(*Request){
		func(r *Request) { r.Temperature = 0.8 },
		func(r *Request) { r.Seed = Seed(43) },
		func(r *Request) { r.Seed = nil },
		func(r *Request) { r.MaxTokens = 51 },
		func(r *Request) { r.TopP = 0.9 },
		func(r *Request) { r.Stop = []string{"x"} },
		func(r *Request) { r.Logprobs = true },
		func(r *Request) { r.Model = "other-model" },
		func(r *Request) { r.Messages = []Message{System("sys2"), User("q")} },
		func(r *Request) { r.Messages = []Message{User("q")} },
	}
	for i, f := range variants {
		v := req
		v.Messages = append([]Message(nil), req.Messages...)
		f(&v)
		before := s.calls.Load()
		r, err := c.Chat(context.Background(), v)
		if err != nil {
			t.Fatal(err)
		}
		if r.Cached || s.calls.Load() != before+1 {
			t.Errorf("variant %d answered from the cache", i)
		}
	}
}

func TestEmptyAnswerIsNotCached(t *testing.T) {
	s := newChatServer(t, func(n int, _ map[string]any, w http.ResponseWriter) {
		if n == 1 {
			answer(w, map[string]any{"content": ""})
			return
		}
		answer(w, map[string]any{"content": "now"})
	})
	c := newClient(t, s, Options{Cache: &MemoryStore{}})
	req := Request{Messages: []Message{User("q")}}
	if r, _ := c.Chat(context.Background(), req); r.Content != "" {
		t.Fatalf("first %q", r.Content)
	}
	if r, _ := c.Chat(context.Background(), req); r.Content != "now" || r.Cached {
		t.Fatalf("second %+v", r)
	}
}

func TestRetries(t *testing.T) {
	for _, status := range []int{http.StatusTooManyRequests, http.StatusInternalServerError, http.StatusBadGateway, http.StatusServiceUnavailable} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			s := newChatServer(t, func(n int, body map[string]any, w http.ResponseWriter) {
				if n <= 2 {
					w.Header().Set("Retry-After", "0")
					http.Error(w, "busy", status)
					return
				}
				echo(n, body, w)
			})
			r, err := newClient(t, s, Options{}).Chat(context.Background(), Request{Messages: []Message{User("q")}})
			if err != nil || r.Content != "answer to q" || s.calls.Load() != 3 {
				t.Fatalf("%+v %v after %d calls", r, err, s.calls.Load())
			}
		})
	}
	// Requests that arrive before the first timeout take longer than
	// it; the retry gets a minute and a prompt answer, so a loaded
	// machine can neither time out the retry nor answer the first
	// attempt in time.
	t.Run("timeout", func(t *testing.T) {
		var retrying atomic.Bool
		s := newChatServer(t, func(n int, body map[string]any, w http.ResponseWriter) {
			if !retrying.Load() {
				time.Sleep(300 * time.Millisecond)
			}
			echo(n, body, w)
		})
		h := fastRetry()
		h.Timeout = 50 * time.Millisecond
		c := newClient(t, s, Options{HTTP: h})
		var notes []string
		c.http.Notify = func(_ int, _ time.Duration, err error) {
			notes = append(notes, err.Error())
			retrying.Store(true)
			c.http.Timeout = time.Minute
		}
		r, err := c.Chat(context.Background(), Request{Messages: []Message{User("q")}})
		if err != nil || r.Content != "answer to q" || len(notes) != 1 || !strings.Contains(notes[0], "timed out") {
			t.Fatalf("%+v %v after retries %q; want the answer after one retry, after a timeout", r, err, notes)
		}
	})
	t.Run("gives up", func(t *testing.T) {
		s := newChatServer(t, func(int, map[string]any, http.ResponseWriter) {})
		s.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			s.calls.Add(1)
			http.Error(w, "down", http.StatusServiceUnavailable)
		})
		_, err := newClient(t, s, Options{}).Chat(context.Background(), Request{Messages: []Message{User("q")}})
		var se *httpx.StatusError
		if !errors.As(err, &se) || se.Status != 503 || s.calls.Load() != 4 {
			t.Fatalf("err %v after %d calls", err, s.calls.Load())
		}
	})
	t.Run("no retry on 400", func(t *testing.T) {
		s := newChatServer(t, func(_ int, _ map[string]any, w http.ResponseWriter) {
			http.Error(w, "model not found", http.StatusBadRequest)
		})
		_, err := newClient(t, s, Options{}).Chat(context.Background(), Request{Messages: []Message{User("q")}})
		if err == nil || s.calls.Load() != 1 || !strings.Contains(err.Error(), "test-model") {
			t.Fatalf("err %v after %d calls", err, s.calls.Load())
		}
	})
}

func TestMalformedAnswers(t *testing.T) {
	cases := map[string]struct {
		body string
		want string
	}{
		"not json":     {`{"choices": [`, "JSON"},
		"no choices":   {`{"choices": []}`, ErrNoChoices.Error()},
		"null choices": {`{"id": "x"}`, ErrNoChoices.Error()},
		"no message":   {`{"choices": [{"finish_reason": "stop"}]}`, `no "message"`},
		"content type": {`{"choices": [{"message": {"content": 3}}]}`, "content"},
		// OpenRouter and gateways answer 200 with the error in the body
		// (OpenRouter's API reference: check the body for an error field
		// even on a 200); its message was lost as "no choices".
		"error in a 200": {`{"error": {"message": "Rate limit exceeded: free-models-per-day", "code": 429}}`,
			`the server answered 200 with an error instead of choices: Rate limit exceeded: free-models-per-day (code 429)`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := newChatServer(t, func(_ int, _ map[string]any, w http.ResponseWriter) { io.WriteString(w, tc.body) })
			store := &MemoryStore{}
			_, err := newClient(t, s, Options{Cache: store}).Chat(context.Background(), Request{Messages: []Message{User("q")}})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want %q", err, tc.want)
			}
			if store.Len() != 0 {
				t.Error("a failed answer was cached")
			}
		})
	}
	s := newChatServer(t, func(_ int, _ map[string]any, w http.ResponseWriter) { io.WriteString(w, `{"choices": []}`) })
	_, err := newClient(t, s, Options{}).Chat(context.Background(), Request{Messages: []Message{User("q")}})
	if !errors.Is(err, ErrNoChoices) {
		t.Errorf("errors.Is(%v, ErrNoChoices) = false", err)
	}
}

func TestKeyNeverInErrors(t *testing.T) {
	const key = "sk-very-secret-key"
	s := newChatServer(t, func(_ int, _ map[string]any, w http.ResponseWriter) {
		http.Error(w, "invalid key "+key, http.StatusUnauthorized)
	})
	_, err := newClient(t, s, Options{APIKey: key}).Chat(context.Background(), Request{Messages: []Message{User("q")}})
	if err == nil || strings.Contains(err.Error(), key) || !strings.Contains(err.Error(), "401") {
		t.Fatalf("err %v", err)
	}
	// Nor in an error a gateway sends in a 200 answer.
	s200 := newChatServer(t, func(_ int, _ map[string]any, w http.ResponseWriter) {
		io.WriteString(w, `{"error": {"message": "key `+key+` is over its quota", "code": 429}}`)
	})
	_, err = newClient(t, s200, Options{APIKey: key}).Chat(context.Background(), Request{Messages: []Message{User("q")}})
	if err == nil || strings.Contains(err.Error(), key) || !strings.Contains(err.Error(), "over its quota") {
		t.Errorf("err %v", err)
	}
	c := newClient(t, s, Options{APIKey: key})
	if d := fmt.Sprint(c.Describe(Request{})); strings.Contains(d, key) {
		t.Errorf("Describe shows the key: %s", d)
	}
}

func TestRequestValidation(t *testing.T) {
	s := newChatServer(t, echo)
	c, _ := New(Options{BaseURL: s.URL})
	if _, err := c.Chat(context.Background(), Request{Messages: []Message{User("q")}}); err == nil || !strings.Contains(err.Error(), "model") {
		t.Errorf("no model: %v", err)
	}
	c = newClient(t, s, Options{})
	for _, r := range []Request{{}, {Messages: []Message{User("q")}, Temperature: -1}, {Messages: []Message{User("q")}, MaxTokens: -5}} {
		if _, err := c.Chat(context.Background(), r); err == nil {
			t.Errorf("%+v accepted", r)
		}
	}
	if s.calls.Load() != 0 {
		t.Error("an invalid request reached the server")
	}
}

func TestSplitThink(t *testing.T) {
	cases := []struct{ in, r, a string }{
		{"<think>a</think>b", "a", "b"},
		{"a</think>b</think>c", "a", "b</think>c"},
		{"no tags", "", "no tags"},
		{"<think>", "", ""},
		{"answer <think>later</think>", "answer <think>later", ""},
	}
	for _, tc := range cases {
		if r, a := SplitThink(tc.in); r != tc.r || a != tc.a {
			t.Errorf("SplitThink(%q) = %q, %q; want %q, %q", tc.in, r, a, tc.r, tc.a)
		}
	}
}

func TestGenerateAll(t *testing.T) {
	var inFlight, peak atomic.Int64
	s := newChatServer(t, func(n int, body map[string]any, w http.ResponseWriter) {
		cur := inFlight.Add(1)
		defer inFlight.Add(-1)
		for {
			p := peak.Load()
			if cur <= p || peak.CompareAndSwap(p, cur) {
				break
			}
		}
		time.Sleep(5 * time.Millisecond)
		last := body["messages"].([]any)[0].(map[string]any)["content"].(string)
		if last == "q7" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		echo(n, body, w)
	})
	store := &MemoryStore{}
	c := newClient(t, s, Options{Cache: store, Concurrency: 3})
	var reqs []Request
	for i := range 20 {
		reqs = append(reqs, Request{Messages: []Message{User(fmt.Sprintf("q%d", i))}})
	}
	var calls []int
	res, err := c.GenerateAll(context.Background(), reqs, func(done, total int) {
		if total != 20 {
			t.Errorf("total %d", total)
		}
		calls = append(calls, done)
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res {
		if i == 7 {
			if r.Err == nil {
				t.Error("q7 failed on the server but has no error")
			}
			continue
		}
		if r.Err != nil || r.Content != fmt.Sprintf("answer to q%d", i) {
			t.Errorf("result %d: %+v", i, r)
		}
	}
	if peak.Load() > 3 {
		t.Errorf("%d requests in flight, concurrency is 3", peak.Load())
	}
	if len(calls) != 20 || calls[19] != 20 {
		t.Errorf("progress calls %v", calls)
	}
	// The rerun asks only for the failed one.
	before := s.calls.Load()
	if _, err := c.GenerateAll(context.Background(), reqs, nil); err != nil {
		t.Fatal(err)
	}
	if got := s.calls.Load() - before; got != 1 {
		t.Errorf("rerun sent %d requests, want 1 (the failed q7)", got)
	}
}

func TestGenerateAllResumesAfterCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := newChatServer(t, func(n int, body map[string]any, w http.ResponseWriter) {
		if n == 5 {
			cancel()
		}
		echo(n, body, w)
	})
	store := &MemoryStore{}
	c := newClient(t, s, Options{Cache: store, Concurrency: 1})
	var reqs []Request
	for i := range 10 {
		reqs = append(reqs, Request{Messages: []Message{User(fmt.Sprintf("q%d", i))}})
	}
	if _, err := c.GenerateAll(ctx, reqs, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
	cached := store.Len()
	if cached == 0 || cached >= 10 {
		t.Fatalf("%d answers cached before the interruption", cached)
	}
	before := s.calls.Load()
	res, err := c.GenerateAll(context.Background(), reqs, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := int(s.calls.Load() - before); got != 10-cached {
		t.Errorf("resume sent %d requests, want %d", got, 10-cached)
	}
	for i, r := range res {
		if r.Err != nil || r.Content != fmt.Sprintf("answer to q%d", i) {
			t.Errorf("result %d: %+v", i, r)
		}
	}
}
