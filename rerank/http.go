package rerank

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"os"
	"strings"
	"sync"

	"github.com/r2med/r2med/internal/httpx"
)

// TEI scores with a Hugging Face text-embeddings-inference server's native
// route, POST {BaseURL}/rerank with {"query", "texts", "raw_scores",
// "truncate": true}. TEI answers [{"index", "score"}] sorted by score, not
// by input; the scores are mapped back through the indices.
type TEI struct {
	BaseURL string // e.g. http://localhost:8080
	// BaseURLs are more servers of the same model: with BaseURL, one
	// fleet (httpx.Fleet) that requests are spread over.
	BaseURLs []string
	// Sigmoid asks TEI to squash scores into (0, 1) (raw_scores false).
	// The default keeps the raw logits, which is what R2MED ranks by.
	Sigmoid bool
	// MaxBatch caps the texts per request; 0 means 32, TEI's default
	// --max-client-batch-size.
	MaxBatch int
	// Key, if set, is sent as a bearer token (TEI's --api-key).
	Key    string
	Client *httpx.Client // nil means a default client; its Fleet is replaced
	// Fleet tunes the servers' concurrency bound and health checks.
	Fleet httpx.FleetOptions

	conn lazyClient
}

// lazyClient is a scorer's client with its fleet, made on first use so
// the scorers stay plain structs.
type lazyClient struct {
	once sync.Once
	c    *httpx.Client
	err  error
}

func (l *lazyClient) get(c *httpx.Client, key string, routes []string, fo httpx.FleetOptions) (*httpx.Client, error) {
	l.once.Do(func() {
		fleet, err := httpx.NewFleet(routes, fo)
		if err != nil {
			l.err = fmt.Errorf("rerank servers: %w", err)
			return
		}
		cc := *client(c, key) // a copy: the caller's client is not changed
		cc.Fleet = fleet
		l.c = &cc
	})
	return l.c, l.err
}

// bases are BaseURL and BaseURLs, without empty ones.
func bases(base string, more []string) []string {
	var out []string
	for _, b := range append([]string{base}, more...) {
		if b != "" {
			out = append(out, b)
		}
	}
	return out
}

type indexScore struct {
	Index *int     `json:"index"`
	Score *float64 `json:"score"`
	// Cohere, Jina and Voyage call it relevance_score.
	Relevance *float64 `json:"relevance_score"`
}

// Score sends docs in requests of at most MaxBatch texts.
func (t *TEI) Score(ctx context.Context, query string, docs []string) ([]float64, error) {
	bs := bases(t.BaseURL, t.BaseURLs)
	c, err := t.conn.get(t.Client, t.Key, bs, t.Fleet)
	if err != nil {
		return nil, err
	}
	where := "POST " + httpx.RedactURL(httpx.JoinURL(bs[0], "rerank"))
	return batched(docs, t.MaxBatch, 32, func(part []string) ([]float64, error) {
		var ans []indexScore
		body := map[string]any{"query": query, "texts": part, "raw_scores": !t.Sigmoid, "truncate": true}
		if err := c.Do(ctx, httpx.Request{Path: "rerank", Header: httpx.Bearer(t.Key), Body: body}, &ans); err != nil {
			return nil, err
		}
		return byIndex(ans, len(part), where)
	})
}

// API scores with a hosted rerank API in the Cohere style: POST
// {"model", "query", "documents"} to the rerank route and read
// {"results": [{"index", "relevance_score"}]} (Voyage names the list
// "data"; both are accepted). Cohere, Jina, Voyage, vLLM and Infinity serve
// it. No top_n is sent, so every document comes back.
type API struct {
	// BaseURL is the server or its versioned root: "/rerank" is appended
	// to a URL ending in a version (…/v1, …/v2), "/v1/rerank" to a bare
	// host, and a URL already ending in /rerank is used as is.
	BaseURL string
	// BaseURLs are more servers of the same model, with BaseURL one fleet.
	BaseURLs []string
	Model    string
	Key      string // bearer token; see KeyFromEnv
	// MaxBatch caps the documents per request; 0 means 1000 (Cohere's
	// limit; Voyage and Jina take at least as many).
	MaxBatch int
	Client   *httpx.Client // its Fleet is replaced
	// Fleet tunes the servers' concurrency bound and health checks.
	Fleet httpx.FleetOptions

	conn lazyClient
}

// Provider base URLs and key variables for NewAPI.
var providers = map[string]struct{ base, env string }{
	"cohere": {"https://api.cohere.com/v2", "COHERE_API_KEY"},
	"jina":   {"https://api.jina.ai/v1", "JINA_API_KEY"},
	"voyage": {"https://api.voyageai.com/v1", "VOYAGE_API_KEY"},
}

// NewAPI configures an API scorer for a provider ("cohere", "jina",
// "voyage", or "" for any compatible server at baseURL, such as vLLM or
// Infinity). An empty key is read from the provider's environment
// variable (COHERE_API_KEY, JINA_API_KEY, VOYAGE_API_KEY); it is required
// only when baseURL is empty, i.e. for the provider's hosted API.
func NewAPI(provider, baseURL, model, key string) (*API, error) {
	p, known := providers[strings.ToLower(provider)]
	if provider != "" && !known {
		return nil, fmt.Errorf("unknown rerank provider %q (cohere, jina, voyage, or none for a compatible server given by its base URL)", provider)
	}
	hosted := baseURL == ""
	if hosted {
		baseURL = p.base
	}
	if baseURL == "" {
		return nil, fmt.Errorf("a rerank server needs a base URL (--rerank-url, e.g. http://localhost:8000 for vLLM) or a provider")
	}
	if key == "" && p.env != "" {
		key = os.Getenv(p.env)
		if key == "" && hosted {
			return nil, fmt.Errorf("%s's API needs a key: set %s in the environment", provider, p.env)
		}
	}
	if model == "" {
		return nil, fmt.Errorf("a rerank API needs a model name (e.g. rerank-v3.5, jina-reranker-v2-base-multilingual, rerank-2)")
	}
	return &API{BaseURL: baseURL, Model: model, Key: key}, nil
}

// URL is the rerank route the scorer posts to (of its first server).
func (a *API) URL() string { return rerankRoute(a.BaseURL) }

// rerankRoute is the rerank route of a base URL.
func rerankRoute(base string) string {
	u, err := url.Parse(base)
	if err != nil {
		return base
	}
	path := strings.TrimRight(u.Path, "/")
	last := path[strings.LastIndex(path, "/")+1:]
	switch {
	case last == "rerank":
		return base
	case len(last) >= 2 && last[0] == 'v' && strings.Trim(last[1:], "0123456789") == "":
		return httpx.JoinURL(base, "rerank")
	}
	return httpx.JoinURL(base, "v1/rerank")
}

// Score sends docs in requests of at most MaxBatch documents.
func (a *API) Score(ctx context.Context, query string, docs []string) ([]float64, error) {
	var routes []string
	for _, b := range bases(a.BaseURL, a.BaseURLs) {
		routes = append(routes, rerankRoute(b))
	}
	c, err := a.conn.get(a.Client, a.Key, routes, a.Fleet)
	if err != nil {
		return nil, err
	}
	where := "POST " + httpx.RedactURL(routes[0])
	return batched(docs, a.MaxBatch, 1000, func(part []string) ([]float64, error) {
		var ans struct {
			Results json.RawMessage `json:"results"`
			Data    json.RawMessage `json:"data"`
		}
		body := map[string]any{"model": a.Model, "query": query, "documents": part}
		if err := c.Do(ctx, httpx.Request{Header: httpx.Bearer(a.Key), Body: body}, &ans); err != nil {
			return nil, err
		}
		list := ans.Results
		if len(list) == 0 || string(list) == "null" {
			list = ans.Data
		}
		if len(list) == 0 || string(list) == "null" {
			return nil, fmt.Errorf("%s: the answer has neither \"results\" nor \"data\"; is this a rerank server?", where)
		}
		var items []indexScore
		if err := json.Unmarshal(list, &items); err != nil {
			return nil, fmt.Errorf("%s: the results are not a list of {index, relevance_score}: %v", where, err)
		}
		return byIndex(items, len(part), where)
	})
}

// client is c with key added to its secrets, or a default client.
func client(c *httpx.Client, key string) *httpx.Client {
	if c == nil {
		c = &httpx.Client{}
	}
	if key == "" {
		return c
	}
	cc := *c
	cc.Secrets = append(append([]string(nil), c.Secrets...), key)
	return &cc
}

// batched calls score on slices of at most limit docs (def when limit is 0)
// and joins the answers.
func batched(docs []string, limit, def int, score func([]string) ([]float64, error)) ([]float64, error) {
	if limit <= 0 {
		limit = def
	}
	out := make([]float64, 0, len(docs))
	for start := 0; start < len(docs); start += limit {
		got, err := score(docs[start:min(start+limit, len(docs))])
		if err != nil {
			return nil, err
		}
		out = append(out, got...)
	}
	return out, nil
}

// byIndex puts a server's (index, score) pairs back in input order, and
// refuses an answer that does not score every document exactly once.
func byIndex(items []indexScore, n int, where string) ([]float64, error) {
	if len(items) != n {
		return nil, fmt.Errorf("%s: asked to score %d documents, the server returned %d results", where, n, len(items))
	}
	out := make([]float64, n)
	seen := make([]bool, n)
	for i, it := range items {
		if it.Index == nil {
			return nil, fmt.Errorf("%s: result %d has no \"index\"", where, i)
		}
		s := it.Score
		if s == nil {
			s = it.Relevance
		}
		if s == nil {
			return nil, fmt.Errorf("%s: result %d has neither \"score\" nor \"relevance_score\"", where, i)
		}
		j := *it.Index
		switch {
		case j < 0 || j >= n:
			return nil, fmt.Errorf("%s: result %d has index %d, outside 0..%d", where, i, j, n-1)
		case seen[j]:
			return nil, fmt.Errorf("%s: document %d is scored twice", where, j)
		case math.IsNaN(*s) || math.IsInf(*s, 0):
			return nil, fmt.Errorf("%s: document %d has score %v", where, j, *s)
		}
		seen[j] = true
		out[j] = *s
	}
	return out, nil
}
