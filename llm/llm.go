// Package llm talks to chat models behind the OpenAI-compatible
// POST {base}/chat/completions route that vLLM, OpenAI, Ollama, llama.cpp's
// server and LM Studio all serve.
//
// A Client sends one Request (messages and sampling parameters) and returns
// a Response with the answer split from the model's reasoning: servers that
// parse reasoning themselves return it in a separate "reasoning_content"
// (vLLM, DeepSeek) or "reasoning" (Ollama, OpenRouter) field; otherwise a
// "<think>…</think>" block at the start of the content is cut out (a
// DeepSeek-R1-style chat template opens the block in the prompt, so the
// content may hold only its closing tag).
//
// Every call goes through internal/httpx, which retries 429, 5xx and
// timeouts with backoff and keeps the API key out of messages; several
// base URLs make a fleet that requests are spread over. With a Store,
// answers are cached under a key made of the model, the full messages and
// every sampling parameter, so a rerun asks the server nothing and an
// interrupted batch resumes where it stopped; each answer keeps its usage
// (tokens and seconds) for a Meter, and Replay answers from the Store
// alone.
package llm

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/r2med/r2med/cache"
	"github.com/r2med/r2med/internal/httpx"
	"github.com/r2med/r2med/usage"
)

// Message is one chat turn.
type Message struct {
	Role    string `json:"role"` // "system", "user" or "assistant"
	Content string `json:"content"`
}

// System builds a system message.
func System(s string) Message { return Message{Role: "system", Content: s} }

// User builds a user turn.
func User(s string) Message { return Message{Role: "user", Content: s} }

// Assistant builds an assistant turn (multi-turn conversations, agents).
func Assistant(s string) Message { return Message{Role: "assistant", Content: s} }

// Request is one chat completion. Its zero sampling values mean: greedy
// (temperature 0), the server's top_p, no seed, the server's max_tokens.
type Request struct {
	// Model overrides the client's model when set.
	Model    string
	Messages []Message
	// Temperature is always sent; 0 asks for greedy decoding.
	Temperature float64
	// TopP is sent when positive.
	TopP float64
	// Seed is sent when not nil (0 is a valid seed).
	Seed *int64
	// MaxTokens is sent when positive.
	MaxTokens int
	// Stop sequences end the generation; servers differ on whether the
	// matched sequence is part of the returned content.
	Stop []string
	// Logprobs asks for the log-probabilities of the generated tokens and,
	// with TopLogprobs > 0, of that many alternatives at each position.
	Logprobs    bool
	TopLogprobs int
}

// Seed returns a pointer to s, for Request.Seed.
func Seed(s int64) *int64 { return &s }

// Response is a model's answer.
type Response struct {
	// Content is the answer with any reasoning removed.
	Content string `json:"content"`
	// Reasoning is the model's reasoning: the server's reasoning field, or
	// the text of a leading <think> block; empty for other models.
	Reasoning string `json:"reasoning,omitempty"`
	// FinishReason is the server's: "stop", "length" (max_tokens hit),
	// "content_filter" (the server's filter withheld the answer), …
	FinishReason string `json:"finish_reason,omitempty"`
	// Refusal is the model's refusal message, when it declined to answer
	// (OpenAI's message.refusal; Content is then empty).
	Refusal string `json:"refusal,omitempty"`
	// Logprobs has one entry per generated content token when asked for.
	Logprobs []TokenLogprob `json:"logprobs,omitempty"`
	Usage    Usage          `json:"usage"`
	// Cached is true when the answer came from the Store.
	Cached bool `json:"-"`
}

// Raw is the output with the reasoning put back in front as a
// "<think>…</think>" block, the way a reasoning model writes it and R2MED
// stores it (its split_response_for_r1 keeps what follows "</think>").
func (r Response) Raw() string {
	if r.Reasoning == "" {
		return r.Content
	}
	return "<think>\n" + r.Reasoning + "\n</think>\n\n" + r.Content
}

// TokenLogprob is one generated token with its log-probability and the
// most likely alternatives at its position.
type TokenLogprob struct {
	Token   string       `json:"token"`
	Logprob float64      `json:"logprob"`
	Top     []TopLogprob `json:"top_logprobs,omitempty"`
}

// TopLogprob is one alternative token.
type TopLogprob struct {
	Token   string  `json:"token"`
	Logprob float64 `json:"logprob"`
}

// Usage counts tokens as the server reports them, or as estimated
// (Usage.Estimated names the estimator) when it does not, and the call's
// wall time. A cached answer keeps the usage it had when it was made.
type Usage = usage.Usage

// Store is where answers are cached; *cache.Store satisfies it.
type Store interface {
	Get(bucket string, key []byte) ([]byte, bool, error)
	PutMany(bucket string, keys, vals [][]byte) error
}

// Kind is the cache kind of chat answers: they live in the bucket
// cache.Bucket(Kind, model), so the cache's stats and prune commands see
// them per model.
const Kind = "generate"

func init() { cache.RegisterUsage(Kind, cachedUsage) }

// cachedUsage is the usage a cached answer was stored with, for the
// cache's stats; false for an answer stored before usage was recorded
// (Chat estimates it from the prompt, which the entry does not hold).
func cachedUsage(val []byte) (Usage, bool) {
	var r struct {
		Usage Usage `json:"usage"`
	}
	if err := json.Unmarshal(val, &r); err != nil || r.Usage.PromptTokens == 0 && r.Usage.CompletionTokens == 0 && r.Usage.Estimated == "" {
		return Usage{}, false
	}
	return r.Usage, true
}

// Options configure a Client.
type Options struct {
	// BaseURL is the API root, e.g. http://localhost:8000/v1; empty means
	// $OPENAI_BASE_URL, then https://api.openai.com/v1.
	BaseURL string
	// BaseURLs are more servers of the same model: with BaseURL, one
	// fleet (httpx.Fleet) that requests are spread over.
	BaseURLs []string
	// Fleet bounds each server's requests in flight (PerEndpoint; 0: no
	// bound beyond the callers' own) and tunes how failing servers are
	// taken out and back, and who hears of it.
	Fleet httpx.FleetOptions
	// APIKey is sent as a bearer token; empty means $OPENAI_API_KEY (local
	// servers usually need none).
	APIKey string
	// Model is the default model name sent with each request.
	Model string
	// Cache, if set, stores answers (see the package comment).
	Cache Store
	// HTTP is the retrying transport; nil means httpx's defaults. The API
	// key is added to its Secrets.
	HTTP *httpx.Client
	// Concurrency bounds GenerateAll's requests in flight per server;
	// 0 means 8.
	Concurrency int
	// Meter, if set, hears the usage of every answer: new ones and, with
	// the usage they had when made, cached ones (kind Kind).
	Meter *usage.Meter
	// Replay answers from the Cache only: a request it lacks is an error
	// wrapping ErrReplay, and nothing is sent. It needs a Cache.
	Replay bool
}

// ErrReplay is wrapped by the error of a request refused in replay mode.
var ErrReplay = httpx.ErrReplay

// DefaultBaseURL is used when neither the options nor the environment name
// a server.
const DefaultBaseURL = "https://api.openai.com/v1"

// Client sends chat completions. It is safe for concurrent use.
type Client struct {
	bases       []string
	key, model  string
	cache       Store
	http        *httpx.Client
	concurrency int
	meter       *usage.Meter
	replay      bool
	secrets     []string // the key and URL passwords, redacted from answers
}

// New makes a client, filling unset options from the environment.
func New(o Options) (*Client, error) {
	var bases []string
	for _, b := range append([]string{o.BaseURL}, o.BaseURLs...) {
		if b != "" {
			bases = append(bases, b)
		}
	}
	if len(bases) == 0 {
		if b := os.Getenv("OPENAI_BASE_URL"); b != "" {
			bases = []string{b}
		} else {
			bases = []string{DefaultBaseURL}
		}
	}
	key := o.APIKey
	if key == "" {
		key = os.Getenv("OPENAI_API_KEY")
	}
	for _, b := range bases {
		if !strings.HasPrefix(b, "http://") && !strings.HasPrefix(b, "https://") {
			return nil, fmt.Errorf("LLM base URL %q must start with http:// or https:// (e.g. http://localhost:8000/v1)", httpx.Redact(httpx.RedactURL(b), key))
		}
	}
	fleet, err := httpx.NewFleet(bases, o.Fleet)
	if err != nil {
		return nil, fmt.Errorf("LLM servers: %w", err)
	}
	if o.Replay && o.Cache == nil {
		return nil, errors.New("replay mode needs the cache the answers are in (do not combine it with --no-cache)")
	}
	hc := &httpx.Client{}
	if o.HTTP != nil {
		c := *o.HTTP
		c.Secrets = append([]string(nil), o.HTTP.Secrets...)
		hc = &c
	}
	if key != "" {
		hc.Secrets = append(hc.Secrets, key)
	}
	hc.Fleet = fleet
	hc.Replay = hc.Replay || o.Replay
	n := o.Concurrency
	if n <= 0 {
		n = 8
	}
	secrets := append(append([]string(nil), hc.Secrets...), fleet.Secrets()...)
	return &Client{bases: bases, key: key, model: o.Model, cache: o.Cache, http: hc, concurrency: n,
		meter: o.Meter, replay: o.Replay, secrets: secrets}, nil
}

// BaseURL is the API root the client sends to (the first of a fleet's);
// it may hold credentials: print httpx.RedactURL of it.
func (c *Client) BaseURL() string { return c.bases[0] }

// Fleet is the client's servers, for their health and request counts.
func (c *Client) Fleet() *httpx.Fleet { return c.http.Fleet }

// Model is the client's default model.
func (c *Client) Model() string { return c.model }

// ErrNoChoices is returned when the server answers without any choice.
var ErrNoChoices = errors.New("the server returned no choices")

// wireRequest is the JSON body. Field order is fixed, so its encoding is
// also the cache key's input.
type wireRequest struct {
	Model       string    `json:"model"`
	Messages    []Message `json:"messages"`
	Temperature float64   `json:"temperature"`
	TopP        float64   `json:"top_p,omitempty"`
	Seed        *int64    `json:"seed,omitempty"`
	MaxTokens   int       `json:"max_tokens,omitempty"`
	Stop        []string  `json:"stop,omitempty"`
	Logprobs    bool      `json:"logprobs,omitempty"`
	TopLogprobs int       `json:"top_logprobs,omitempty"`
}

type wireResponse struct {
	Choices []struct {
		Message *struct {
			Content          *string `json:"content"`
			ReasoningContent *string `json:"reasoning_content"`
			Reasoning        *string `json:"reasoning"`
			Refusal          *string `json:"refusal"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
		Logprobs     *struct {
			Content []TokenLogprob `json:"content"`
		} `json:"logprobs"`
	} `json:"choices"`
	// Model is the model the server says answered.
	Model string     `json:"model"`
	Usage *wireUsage `json:"usage"`
	// Error is an error a gateway (OpenRouter, proxies) sends in the body
	// of a 200 answer, in OpenAI's error shape.
	Error *struct {
		Message string          `json:"message"`
		Code    json.RawMessage `json:"code"`
	} `json:"error"`
}

// wireUsage is an answer's usage as OpenAI-compatible servers write it.
type wireUsage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	TotalTokens         int `json:"total_tokens"`
	PromptTokensDetails *struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails *struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
	// PromptCacheHitTokens is DeepSeek's name for cached prompt tokens.
	PromptCacheHitTokens int `json:"prompt_cache_hit_tokens"`
}

// usage is the server's count, or false when it gave none: no usage, or
// one without token counts ({}, or zeros, as some gateways and local
// servers send), which is estimated instead, as a rerun from the cache
// would.
func (u *wireUsage) usage() (Usage, bool) {
	if u == nil || u.PromptTokens == 0 && u.CompletionTokens == 0 {
		return Usage{}, false
	}
	out := Usage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, TotalTokens: u.TotalTokens,
		CachedPromptTokens: u.PromptCacheHitTokens}
	if out.TotalTokens == 0 {
		out.TotalTokens = u.PromptTokens + u.CompletionTokens
	}
	if d := u.PromptTokensDetails; d != nil && d.CachedTokens > 0 {
		out.CachedPromptTokens = d.CachedTokens
	}
	out.CachedPromptTokens = min(max(out.CachedPromptTokens, 0), out.PromptTokens)
	if d := u.CompletionTokensDetails; d != nil {
		out.ReasoningTokens = d.ReasoningTokens
	}
	return out, true
}

func (c *Client) wire(req Request) (wireRequest, error) {
	model := req.Model
	if model == "" {
		model = c.model
	}
	if model == "" {
		return wireRequest{}, errors.New("no LLM model given; pass the model name the server serves (e.g. --llm-model Qwen/Qwen2.5-7B-Instruct)")
	}
	if len(req.Messages) == 0 {
		return wireRequest{}, errors.New("chat request has no messages")
	}
	if req.Temperature < 0 || req.TopP < 0 || req.MaxTokens < 0 || req.TopLogprobs < 0 {
		return wireRequest{}, fmt.Errorf("negative sampling parameter (temperature %g, top_p %g, max_tokens %d, top_logprobs %d)", req.Temperature, req.TopP, req.MaxTokens, req.TopLogprobs)
	}
	if req.TopLogprobs > 0 && !req.Logprobs {
		return wireRequest{}, errors.New("top_logprobs needs logprobs: set Logprobs too")
	}
	return wireRequest{
		Model: model, Messages: req.Messages, Temperature: req.Temperature, TopP: req.TopP,
		Seed: req.Seed, MaxTokens: req.MaxTokens, Stop: req.Stop,
		Logprobs: req.Logprobs, TopLogprobs: req.TopLogprobs,
	}, nil
}

// Key is the cache key of req as this client would send it: a SHA-256 of
// the model, the full messages and every sampling parameter. The server's
// address is not part of it, so one model served elsewhere shares answers.
func (c *Client) Key(req Request) ([]byte, error) {
	w, err := c.wire(req)
	if err != nil {
		return nil, err
	}
	return key(w), nil
}

func key(w wireRequest) []byte {
	b, _ := json.Marshal(w) // cannot fail: strings, numbers and slices only
	h := sha256.New()
	h.Write([]byte("r2med/llm/chat/v1\x00"))
	h.Write(b)
	return h.Sum(nil)
}

// Chat sends one request, or answers it from the cache.
//
// Before an answer is returned or cached, the API key and any password in
// a base URL are cut out of its content and reasoning (a server or model
// that echoes its prompt or headers would otherwise store them). With
// MaxTokens set, the answer's body is capped in proportion to it (see
// answerCap), so a server that ignores the limit cannot send without end.
func (c *Client) Chat(ctx context.Context, req Request) (Response, error) {
	w, err := c.wire(req)
	if err != nil {
		return Response{}, err
	}
	var k []byte
	if c.cache != nil {
		k = key(w)
		if b, ok, err := c.cache.Get(cache.Bucket(Kind, w.Model), k); err != nil {
			return Response{}, fmt.Errorf("reading the LLM cache: %w", err)
		} else if ok {
			var r Response
			if err := json.Unmarshal(b, &r); err == nil {
				r.Cached = true
				if r.Usage.PromptTokens == 0 && r.Usage.CompletionTokens == 0 && r.Usage.Estimated == "" {
					estimate(&r, w) // cached before usage was estimated
				}
				c.meter.Add(Kind, w.Model, r.Usage, true)
				return r, nil
			}
			// A damaged entry is asked again and overwritten.
		}
	}
	if c.replay {
		return Response{}, fmt.Errorf("chat completion with %s: %w: the answer is not in the cache (key %x); import the run's cache file (r2med cache import) or run without replay", w.Model, ErrReplay, k)
	}
	start := time.Now()
	var wr wireResponse
	if err := c.http.Do(ctx, httpx.Request{Path: "chat/completions", Header: httpx.Bearer(c.key), Body: w, MaxBody: answerCap(w)}, &wr); err != nil {
		return Response{}, fmt.Errorf("chat completion with %s: %w", w.Model, err)
	}
	if wr.Error != nil {
		wr.Error.Message = httpx.Redact(wr.Error.Message, c.secrets...)
	}
	r, err := parse(wr)
	if err != nil {
		return Response{}, fmt.Errorf("chat completion with %s from %s: %w", w.Model, c.where(), err)
	}
	r.Content = httpx.Redact(r.Content, c.secrets...)
	r.Reasoning = httpx.Redact(r.Reasoning, c.secrets...)
	r.Refusal = httpx.Redact(r.Refusal, c.secrets...)
	if _, ok := wr.Usage.usage(); !ok {
		estimate(&r, w)
	}
	r.Usage.Seconds = time.Since(start).Seconds()
	r.Usage.Model = wr.Model
	c.meter.Add(Kind, w.Model, r.Usage, false)
	// An empty answer is often a server hiccup: leave it uncached so a
	// rerun asks again.
	if c.cache != nil && (r.Content != "" || r.Reasoning != "") {
		b, _ := json.Marshal(r)
		if err := c.cache.PutMany(cache.Bucket(Kind, w.Model), [][]byte{k}, [][]byte{b}); err != nil {
			return Response{}, fmt.Errorf("writing the LLM cache: %w", err)
		}
	}
	return r, nil
}

// where names the client's servers for a message.
func (c *Client) where() string {
	names := c.http.Fleet.Names()
	if len(names) == 1 {
		return names[0]
	}
	return fmt.Sprintf("the fleet %s", strings.Join(names, ", "))
}

// estimate fills the usage of an answer whose server reported none: the
// tokens of the messages and of the output by usage.EstimateTokens.
func estimate(r *Response, w wireRequest) {
	p := 0
	for _, m := range w.Messages {
		p += usage.EstimateTokens(m.Content)
	}
	cpl := usage.EstimateTokens(r.Content) + usage.EstimateTokens(r.Reasoning)
	r.Usage = Usage{PromptTokens: p, CompletionTokens: cpl, TotalTokens: p + cpl, Seconds: r.Usage.Seconds, Estimated: usage.Estimator}
}

// answerCap bounds an answer's body by what max_tokens allows: room for
// the envelope, then per token generously more than the longest token's
// JSON-escaped text, and for each of its logprob entries. Without
// max_tokens the client's own cap applies.
func answerCap(w wireRequest) int64 {
	if w.MaxTokens <= 0 {
		return 0
	}
	perToken := int64(128)
	if w.Logprobs {
		perToken += 256 * int64(1+w.TopLogprobs)
	}
	return 1<<20 + int64(w.MaxTokens)*perToken
}

func parse(wr wireResponse) (Response, error) {
	if len(wr.Choices) == 0 {
		if e := wr.Error; e != nil && e.Message != "" {
			code := ""
			if c := strings.Trim(string(e.Code), `"`); c != "" && c != "null" {
				code = " (code " + c + ")"
			}
			return Response{}, fmt.Errorf("the server answered 200 with an error instead of choices: %s%s", e.Message, code)
		}
		return Response{}, ErrNoChoices
	}
	ch := wr.Choices[0]
	if ch.Message == nil {
		return Response{}, errors.New(`the first choice has no "message"`)
	}
	var r Response
	r.FinishReason = ch.FinishReason
	if ch.Message.Refusal != nil {
		r.Refusal = *ch.Message.Refusal
	}
	r.Usage, _ = wr.Usage.usage()
	if ch.Logprobs != nil {
		r.Logprobs = ch.Logprobs.Content
	}
	var content string
	if ch.Message.Content != nil {
		content = *ch.Message.Content
	}
	switch {
	case ch.Message.ReasoningContent != nil && *ch.Message.ReasoningContent != "":
		r.Reasoning, r.Content = *ch.Message.ReasoningContent, content
	case ch.Message.Reasoning != nil && *ch.Message.Reasoning != "":
		r.Reasoning, r.Content = *ch.Message.Reasoning, content
	default:
		r.Reasoning, r.Content = SplitThink(content)
	}
	return r, nil
}

const (
	thinkOpen  = "<think>"
	thinkClose = "</think>"
)

// SplitThink separates a leading reasoning block from the answer:
//
//   - "<think>R</think>A" and "R</think>A" (the template opened the block)
//     give R and A, both trimmed of surrounding white space;
//   - "<think>R" with no closing tag (generation cut off while reasoning)
//     gives R and an empty answer;
//   - anything else is all answer, returned unchanged.
//
// The answer is what follows the first "</think>", as R2MED's
// split_response_for_r1 takes it.
func SplitThink(s string) (reasoning, answer string) {
	if i := strings.Index(s, thinkClose); i >= 0 {
		r := strings.TrimSpace(s[:i])
		r = strings.TrimSpace(strings.TrimPrefix(r, thinkOpen))
		return r, strings.TrimSpace(s[i+len(thinkClose):])
	}
	if t := strings.TrimLeft(s, " \t\r\n"); strings.HasPrefix(t, thinkOpen) {
		return strings.TrimSpace(t[len(thinkOpen):]), ""
	}
	return "", s
}

// Result is one answer of GenerateAll: a Response or the error that left
// the request without one.
type Result struct {
	Response
	Err error
}

// GenerateAll sends the requests with at most the client's Concurrency in
// flight and returns their results in request order. A failed request
// (after httpx's retries) gives a Result with Err and does not stop the
// others; only ctx's cancellation stops the batch, returning ctx's error.
// Answers are cached one by one as they come, so a rerun after an
// interruption asks only for the missing ones. progress, if set, is called
// after each request (from several goroutines, one at a time) with the
// number done.
func (c *Client) GenerateAll(ctx context.Context, reqs []Request, progress func(done, total int)) ([]Result, error) {
	out := make([]Result, len(reqs))
	var (
		next atomic.Int64
		wg   sync.WaitGroup
		mu   sync.Mutex
		done int
	)
	for range min(c.concurrency*c.http.Fleet.Len(), max(1, len(reqs))) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(reqs) || ctx.Err() != nil {
					return
				}
				r, err := c.Chat(ctx, reqs[i])
				out[i] = Result{Response: r, Err: err}
				mu.Lock()
				done++
				if progress != nil {
					progress(done, len(reqs))
				}
				mu.Unlock()
			}
		}()
	}
	// Requests in flight end quickly once ctx is cancelled; waiting for
	// them means no goroutine outlives the call.
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// Describe lists the settings that determine req's answers, for manifests.
// Neither the key nor credentials in a base URL appear: base_url is
// redacted (httpx.RedactURL), and a fleet adds every server as base_urls.
func (c *Client) Describe(req Request) map[string]any {
	names := c.http.Fleet.Names()
	m := map[string]any{"base_url": names[0], "temperature": req.Temperature}
	if len(names) > 1 {
		m["base_urls"] = names
	}
	model := req.Model
	if model == "" {
		model = c.model
	}
	m["model"] = model
	if req.TopP > 0 {
		m["top_p"] = req.TopP
	}
	if req.Seed != nil {
		m["seed"] = *req.Seed
	}
	if req.MaxTokens > 0 {
		m["max_tokens"] = req.MaxTokens
	}
	if len(req.Stop) > 0 {
		m["stop"] = req.Stop
	}
	return m
}
