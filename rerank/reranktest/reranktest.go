// Package reranktest serves, on loopback, a model that finds every passage
// equally relevant, in the shapes every reranker kind speaks: for tests
// of what a ranking of ties becomes once it is reranked, written and
// evaluated.
package reranktest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
)

// Ties is a loopback model server that judges every passage alike:
//
//   - POST /rerank (TEI): every text scores Score;
//   - POST /v1/rerank (Cohere, Jina, Voyage): every document scores Score;
//   - POST /v1/chat/completions: a prompt that lists numbered passages
//     ("[1] …" at the start of a line: llm-listwise, insertrank,
//     reasonrank) is answered with them in the order shown, "[1] > [2] >
//     …", or, when it asks for scores as JSON ("[1]": in the prompt:
//     grouprank), with the same score for every passage, <answer>{"[1]":
//     5, "[2]": 5, …}</answer>; any other (llm-pointwise, rank1) with
//     "yes" — relevant, as every other one. Answers carry reasoning and
//     usage, no logprobs.
type Ties struct {
	*httptest.Server
	Score float64
	calls atomic.Int64
}

// Calls is the number of requests answered.
func (s *Ties) Calls() int64 { return s.calls.Load() }

var passage = regexp.MustCompile(`(?m)^\[(\d+)\]`)

// NewTies starts a Ties server scoring score; the test closes it.
func NewTies(t testing.TB, score float64) *Ties {
	s := &Ties{Score: score}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.calls.Add(1)
		var req struct {
			Texts     []string `json:"texts"`
			Documents []any    `json:"documents"`
			Messages  []struct {
				Content string `json:"content"`
			} `json:"messages"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		switch r.URL.Path {
		case "/rerank":
			out := make([]map[string]any, len(req.Texts))
			for i := range out {
				out[i] = map[string]any{"index": i, "score": s.Score}
			}
			json.NewEncoder(w).Encode(out)
		case "/v1/rerank":
			out := make([]map[string]any, len(req.Documents))
			for i := range out {
				out[i] = map[string]any{"index": i, "relevance_score": s.Score}
			}
			json.NewEncoder(w).Encode(map[string]any{"results": out})
		case "/v1/chat/completions":
			n, scores := 0, false
			for _, m := range req.Messages {
				scores = scores || strings.Contains(m.Content, `"[1]":`)
				for _, g := range passage.FindAllStringSubmatch(m.Content, -1) {
					k, _ := strconv.Atoi(g[1])
					n = max(n, k)
				}
			}
			answer := "yes"
			if n > 0 {
				parts := make([]string, n)
				for i := range parts {
					parts[i] = fmt.Sprintf("[%d]", i+1)
					if scores {
						parts[i] = fmt.Sprintf(`"[%d]": 5`, i+1)
					}
				}
				answer = strings.Join(parts, " > ")
				if scores {
					answer = "<answer>{" + strings.Join(parts, ", ") + "}</answer>"
				}
			}
			json.NewEncoder(w).Encode(map[string]any{
				"choices": []any{map[string]any{
					"message":       map[string]any{"role": "assistant", "content": answer, "reasoning_content": "Every passage is as relevant as the others."},
					"finish_reason": "stop",
				}},
				"usage": map[string]int{"prompt_tokens": 10, "completion_tokens": 2},
			})
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(s.Close)
	return s
}
