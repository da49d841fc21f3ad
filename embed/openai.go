package embed

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/r2med/r2med/internal/httpx"
	"github.com/r2med/r2med/usage"
)

// DefaultOpenAIBase is OpenAI's own API, used when neither the options
// nor OPENAI_BASE_URL name another server.
const DefaultOpenAIBase = "https://api.openai.com/v1"

// OpenAIOptions configure an OpenAI-compatible embedding server: OpenAI,
// vLLM, TEI's OpenAI route, Ollama, llama.cpp's server.
type OpenAIOptions struct {
	// BaseURL is the API root the path /embeddings is appended to; ""
	// means $OPENAI_BASE_URL, then DefaultOpenAIBase.
	BaseURL string
	// BaseURLs are more servers of the same model, with BaseURL one
	// fleet (httpx.Fleet): requests are spread over them.
	BaseURLs []string
	// APIKey is sent as a bearer token; "" means $OPENAI_API_KEY, and
	// none is sent when that is empty too (local servers need none).
	APIKey string
	// Model is the served model's name; required.
	Model string
	// Dimensions, if positive, asks for shorter vectors (OpenAI's
	// text-embedding-3 models, Matryoshka models on vLLM).
	Dimensions int
	// Encoding is what the servers are asked to write vectors as; the
	// zero value asks for base64 and falls back to floats per server
	// (see Encoding).
	Encoding Encoding
	// TruncateTokens, when positive, asks the server to cut each
	// document to that many tokens, keeping its start: vLLM's
	// truncate_prompt_tokens with truncation_side "right". vLLM refuses a
	// text longer than its --max-model-len otherwise, and embeds the
	// whole of one that fits where a recipe cut it. Servers that do not
	// know the fields ignore them (TEI's OpenAI route, llama.cpp,
	// Ollama); OpenAI's own API refuses them. QueryTruncateTokens is the
	// queries' (0: none asked).
	TruncateTokens, QueryTruncateTokens int
	HTTPOptions
}

// OpenAI embeds texts through POST {base}/embeddings. It is safe for
// concurrent use, as are TEI and Voyage.
type OpenAI struct {
	remote
	model            string
	dims             int
	cutDoc, cutQuery int
}

// NewOpenAI checks the options and returns the backend; it sends nothing.
func NewOpenAI(o OpenAIOptions) (*OpenAI, error) {
	bases, key, err := resolve(o.BaseURL, o.BaseURLs, "OPENAI_BASE_URL", DefaultOpenAIBase, o.APIKey, "OPENAI_API_KEY")
	if err != nil {
		return nil, fmt.Errorf("openai embeddings: %w", err)
	}
	if err := checkCommon("openai embeddings", o.Model, o.Dimensions, o.HTTPOptions); err != nil {
		return nil, err
	}
	if o.TruncateTokens < 0 || o.QueryTruncateTokens < 0 {
		return nil, fmt.Errorf("openai embeddings: token limits %d and %d must be ≥ 0", o.TruncateTokens, o.QueryTruncateTokens)
	}
	var extra []string
	if o.TruncateTokens > 0 {
		extra = append(extra, "truncate="+strconv.Itoa(o.TruncateTokens))
	}
	if o.QueryTruncateTokens > 0 {
		extra = append(extra, "query-truncate="+strconv.Itoa(o.QueryTruncateTokens))
	}
	r, err := newRemote("openai", o.Model, bases, "embeddings", key, o.Dimensions, 0, o.HTTPOptions, extra...)
	if err != nil {
		return nil, fmt.Errorf("openai embeddings: %w", err)
	}
	r.enc = newEncodings(o.Encoding, len(bases))
	return &OpenAI{remote: r, model: o.Model, dims: o.Dimensions, cutDoc: o.TruncateTokens, cutQuery: o.QueryTruncateTokens}, nil
}

// Embed embeds texts in order. The input side is not sent: OpenAI's API
// has no such field, so instructions must already be in the texts.
func (e *OpenAI) Embed(ctx context.Context, input Input, texts []string) ([][]float32, error) {
	v, _, err := e.EmbedMetered(ctx, input, texts)
	return v, err
}

// EmbedMetered is Embed with each text's share of the server's usage.
func (e *OpenAI) EmbedMetered(ctx context.Context, input Input, texts []string) ([][]float32, []usage.Usage, error) {
	cut := e.cutDoc
	if input == Query {
		cut = e.cutQuery
	}
	side := ""
	if cut > 0 {
		side = "right"
	}
	return e.embedList(ctx, texts, func(batch []string, enc Encoding) any {
		return openAIRequest{Model: e.model, Input: batch, EncodingFormat: string(enc), Dimensions: e.dims, TruncatePromptTokens: cut, TruncationSide: side}
	})
}

type openAIRequest struct {
	Model          string   `json:"model"`
	Input          []string `json:"input"`
	EncodingFormat string   `json:"encoding_format"`
	Dimensions     int      `json:"dimensions,omitempty"`
	// vLLM's: cut each text to this many tokens, keeping its start.
	TruncatePromptTokens int    `json:"truncate_prompt_tokens,omitempty"`
	TruncationSide       string `json:"truncation_side,omitempty"`
}

// remote is what every HTTP backend holds: the route on its servers and
// the key, the retrying client with its fleet, and the batcher.
type remote struct {
	path   string
	header http.Header
	client *httpx.Client
	batch  *batcher
	desc   string
	enc    *encodings    // what each server is asked to write vectors as
	served *servedModels // the model names the answers gave
}

// servedModels counts the texts each model name a server's answers gave
// (OpenAI's and Voyage's "model") embedded.
type servedModels struct {
	mu    sync.Mutex
	texts map[string]int64
}

func (s *servedModels) add(name string, texts int) {
	if name == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.texts == nil {
		s.texts = map[string]int64{}
	}
	s.texts[name] += int64(texts)
}

func (s *servedModels) snapshot() map[string]int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.texts)
}

func newRemote(backend, model string, bases []string, path, key string, dims, batchCap int, o HTTPOptions, extra ...string) (remote, error) {
	c, err := o.client(bases, key)
	if err != nil {
		return remote{}, err
	}
	return remote{
		path: path, header: httpx.Bearer(key), client: c,
		batch:  newBatcher(backend+" "+model, o, dims, c.Fleet, batchCap),
		desc:   describe(backend, model, dims, o, extra...),
		enc:    newEncodings(EncodingFloat, len(bases)),
		served: &servedModels{},
	}, nil
}

// String names what the vectors depend on (backend, model, dimensions,
// text preparation), never the key or the URL; a cache key can include
// it. The input side is not in it: it is a property of each call.
func (r *remote) String() string { return r.desc }

// Fleet is the backend's servers, for their health and request counts.
func (r *remote) Fleet() *httpx.Fleet { return r.client.Fleet }

// Stats are what the backend settled on (batch size, requests in flight,
// encoding per server) and what it embedded, for manifests and progress.
func (r *remote) Stats() AdaptStats {
	st := r.batch.adapt.stats(r.enc)
	st.Served = r.served.snapshot()
	return st
}

// InFlight is how many texts the backend can have out at once now (its
// batch size times its servers' requests in flight together) and the
// largest batch it may send (see InFlighter).
func (r *remote) InFlight() (texts, batch int) {
	st := r.Stats()
	n := 0
	for _, s := range st.Servers {
		n += s.Concurrency
	}
	return n * st.BatchSize, r.batch.adapt.largestBatch()
}

// embedList embeds texts batch by batch through an API that answers with
// OpenAI's embedding list; req builds one batch's request body for a
// server asked for vectors in enc.
func (r *remote) embedList(ctx context.Context, texts []string, req func(batch []string, enc Encoding) any) ([][]float32, []usage.Usage, error) {
	return r.batch.embed(ctx, texts, func(ctx context.Context, batch []string) (sent, error) {
		var ans listAnswer
		server := -1
		var probes []int // servers this request probes (auto encoding)
		hr := httpx.Request{Path: r.path, Header: r.header, Refused: r.enc.refused,
			BodyFor: func(i int) (any, error) {
				server = i
				if slices.Contains(probes, i) { // a retry of this server's probe
					return req(batch, r.enc.again(i)), nil
				}
				enc, probe, err := r.enc.ask(ctx, i)
				if probe {
					probes = append(probes, i)
				}
				return req(batch, enc), err
			}}
		err := r.client.Do(ctx, hr, &ans)
		var v [][]float32
		if err == nil {
			v, err = ans.vectors(len(batch), r.client.Secrets)
		}
		res := sent{server: server}
		for _, i := range probes {
			if err != nil || i != server {
				r.enc.failed(i)
			}
		}
		if err != nil {
			var se *httpx.StatusError
			if errors.As(err, &se) && r.enc.mode == EncodingBase64 && refusesEncoding(se) {
				err = fmt.Errorf("%w; the server refuses base64 vectors: ask for floats (--encoding float or auto)", err)
			}
			return res, err
		}
		r.enc.answered(server, ans.encodingOf(), slices.Contains(probes, server))
		r.served.add(ans.Model, len(batch))
		res.vecs, res.tokens = v, ans.tokens()
		return res, nil
	})
}

// listAnswer is OpenAI's embedding list, which Voyage shares.
type listAnswer struct {
	Data []struct {
		Index     *int            `json:"index"`
		Embedding json.RawMessage `json:"embedding"`
	} `json:"data"`
	// Some proxies answer 200 with an error object instead of data.
	Error json.RawMessage `json:"error"`
	// Model is the model the server says embedded the texts.
	Model string `json:"model"`
	// OpenAI counts prompt_tokens, Voyage total_tokens.
	Usage *struct {
		PromptTokens *int `json:"prompt_tokens"`
		TotalTokens  *int `json:"total_tokens"`
	} `json:"usage"`
}

// tokens are the input tokens the server counted, or -1. A count of 0
// is none: texts are embedded from at least one token each (an empty
// text's estimate is 0 all the same), so a server answering 0 counted
// nothing, and the texts are estimated (and said to be).
func (a *listAnswer) tokens() int {
	switch {
	case a.Usage == nil:
	case a.Usage.PromptTokens != nil && *a.Usage.PromptTokens > 0:
		return *a.Usage.PromptTokens
	case a.Usage.TotalTokens != nil && *a.Usage.TotalTokens > 0:
		return *a.Usage.TotalTokens
	}
	return -1
}

// vectors places the answer's vectors by their index (servers may
// reorder them), requiring exactly one vector for each of n texts.
func (a *listAnswer) vectors(n int, secrets []string) ([][]float32, error) {
	if len(a.Data) == 0 && len(a.Error) > 0 && string(a.Error) != "null" {
		msg := httpx.Snippet(httpx.Redact(string(a.Error), secrets...))
		return nil, fmt.Errorf("the server answered with an error instead of embeddings: %s", msg)
	}
	if len(a.Data) != n {
		return nil, fmt.Errorf("asked for %d embeddings, got %d", n, len(a.Data))
	}
	out := make([][]float32, n)
	indexed := a.Data[0].Index != nil
	for i, d := range a.Data {
		at := i
		if indexed != (d.Index != nil) {
			if indexed {
				return nil, fmt.Errorf("data[%d] has no index while data[0] has one; cannot place the embeddings", i)
			}
			return nil, fmt.Errorf("data[%d] has an index while data[0] has none; cannot place the embeddings", i)
		}
		if indexed {
			at = *d.Index
			if at < 0 || at >= n {
				return nil, fmt.Errorf("data[%d] has index %d, outside 0..%d", i, at, n-1)
			}
			if out[at] != nil {
				return nil, fmt.Errorf("index %d appears twice in the answer", at)
			}
		}
		v, err := parseVector(d.Embedding)
		if err != nil {
			return nil, fmt.Errorf("embedding with index %d: %w", at, err)
		}
		out[at] = v
	}
	return out, nil
}

// parseVector reads an embedding as a JSON list of numbers or as
// base64 of little-endian float32s. Unlike encoding/json it refuses null
// elements (which json would leave as 0, a silent wrong vector) and
// numbers beyond float32.
func parseVector(raw json.RawMessage) ([]float32, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, errors.New("no embedding")
	}
	switch raw[0] {
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return nil, fmt.Errorf("bad base64: %w", err)
		}
		if len(b)%4 != 0 {
			return nil, fmt.Errorf("base64 embedding has %d bytes, not a whole number of float32s", len(b))
		}
		v := make([]float32, len(b)/4)
		for i := range v {
			v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		}
		return v, nil
	case '[':
		// The whole answer has been parsed as JSON already, so raw is
		// well-formed; every element must be a number.
		body := strings.TrimSpace(string(raw[1 : len(raw)-1]))
		if body == "" {
			return []float32{}, nil
		}
		v := make([]float32, 0, strings.Count(body, ",")+1)
		for i, f := range strings.Split(body, ",") {
			f = strings.TrimSpace(f)
			x, err := strconv.ParseFloat(f, 32)
			if err != nil {
				if errors.Is(err, strconv.ErrRange) {
					return nil, fmt.Errorf("element %d (%s) is beyond float32", i, f)
				}
				return nil, fmt.Errorf("element %d is %.20s, not a number", i, f)
			}
			v = append(v, float32(x))
		}
		return v, nil
	}
	return nil, fmt.Errorf("embedding is %.20s…, neither a list of numbers nor base64", raw)
}

// resolve fills the base URLs and key from the environment and checks
// that the official API gets a key.
func resolve(base string, more []string, baseEnv, def, key, keyEnv string) ([]string, string, error) {
	var bases []string
	for _, b := range append([]string{base}, more...) {
		if b != "" {
			bases = append(bases, b)
		}
	}
	if len(bases) == 0 {
		if b := os.Getenv(baseEnv); baseEnv != "" && b != "" {
			bases = []string{b}
		} else {
			bases = []string{def}
		}
	}
	if key == "" && keyEnv != "" {
		key = os.Getenv(keyEnv)
	}
	for _, b := range bases {
		if err := checkBase(b); err != nil {
			return nil, "", err
		}
		if key == "" && keyEnv != "" && sameHost(b, def) {
			return nil, "", fmt.Errorf("%s needs an API key: set %s", def, keyEnv)
		}
	}
	return bases, key, nil
}

func sameHost(a, b string) bool {
	ua, err1 := url.Parse(a)
	ub, err2 := url.Parse(b)
	return err1 == nil && err2 == nil && strings.EqualFold(ua.Host, ub.Host)
}

// checkCommon checks what every HTTP backend needs.
func checkCommon(what, model string, dims int, o HTTPOptions) error {
	if strings.TrimSpace(model) == "" {
		return fmt.Errorf("%s: no model; name the served model with --model", what)
	}
	if dims < 0 {
		return fmt.Errorf("%s: dimensions is %d; it must be positive, or 0 for the model's own", what, dims)
	}
	if err := o.validate(); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// describe is the String of an HTTP backend.
func describe(backend, model string, dims int, o HTTPOptions, extra ...string) string {
	parts := []string{backend, model}
	if dims > 0 {
		parts = append(parts, "dimensions="+strconv.Itoa(dims))
	}
	switch {
	case o.Truncate != nil:
		parts = append(parts, "truncate=custom")
	case o.MaxChars > 0:
		parts = append(parts, "max-chars="+strconv.Itoa(o.MaxChars))
	}
	if o.QuoteInputs {
		parts = append(parts, "quote-inputs")
	}
	return strings.Join(append(parts, extra...), " ")
}
