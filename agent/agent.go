// Package agent is agentic reasoning retrieval in the spirit of Search-o1
// and Search-R1: the LLM reasons, asks for searches in tags, reads what our
// retriever finds, and ends with a final passage that drives the final
// retrieval (the query's expansion).
//
// The loop runs over the chat API: each model turn stops at the search
// query's closing tag (a stop sequence), the query goes to the Searcher,
// and its passages come back in the next user turn between result tags.
// The loop is bounded in searches, turns and completion tokens. A run that
// ends without a usable answer (the model failed, stayed malformed, or ran
// out of budget) falls back to the original query and says why in its
// Trace; every turn is logged there for the run manifest.
//
// R2MED publishes search-o1 and search-r1 results but no code or prompts
// for them, so the prompt here is ours.
package agent

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"text/template"

	"github.com/r2med/r2med/expand"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/llm"
	"github.com/r2med/r2med/usage"
)

// Passage is one search result.
type Passage struct {
	ID    string
	Text  string
	Score float64
}

// Searcher answers one search query with up to k passages, best first.
type Searcher func(ctx context.Context, query string, k int) ([]Passage, error)

// Chatter sends one chat request; *llm.Client is one.
type Chatter interface {
	Chat(ctx context.Context, req llm.Request) (llm.Response, error)
}

// Protocol is the tag vocabulary the model speaks.
type Protocol struct {
	Name                    string // R2MED's method name, "search-r1" or "search-o1"
	SearchOpen, SearchClose string
	ResultOpen, ResultClose string
	AnswerOpen, AnswerClose string
}

var (
	// SearchR1 uses <search>, <information> and <answer> tags.
	SearchR1 = Protocol{expand.SearchR1, "<search>", "</search>", "<information>", "</information>", "<answer>", "</answer>"}
	// SearchO1 uses Search-o1's special markers for searches and results.
	SearchO1 = Protocol{expand.SearchO1, "<|begin_search_query|>", "<|end_search_query|>", "<|begin_search_result|>", "<|end_search_result|>", "<answer>", "</answer>"}
)

// DefaultPrompt is the first user message's template. It sees the
// Protocol's tags, Query, Target and MaxSearches.
const DefaultPrompt = `Answer the following medical question by reasoning step by step. Whenever you need knowledge you do not have, search for it: write a search query between {{.SearchOpen}} and {{.SearchClose}}, and the search results will be given to you between {{.ResultOpen}} and {{.ResultClose}}. You may search at most {{.MaxSearches}} times. When you know enough, write {{.Target}} between {{.AnswerOpen}} and {{.AnswerClose}}.

Question: {{.Query}}`

// Config bounds and shapes a run. The zero value works: Search-R1 tags,
// 5 searches of 3 passages, 16,384 completion tokens in all.
type Config struct {
	Protocol Protocol // zero: SearchR1
	// Request carries the model and sampling parameters; Messages and Stop
	// are set per turn, and MaxTokens (if set) caps each turn.
	Request llm.Request
	// System is the system message; empty means "You are a helpful
	// assistant.".
	System string
	// Prompt is a text/template for the first user message; empty means
	// DefaultPrompt.
	Prompt string
	// Target says what the final answer is; empty means "a passage that
	// answers the question, naming the most likely diagnosis, mechanism or
	// treatment".
	Target string
	// MaxSearches bounds the searches (0: 5); MaxTurns the model turns
	// (0: MaxSearches+3); TokenBudget the completion tokens over all turns
	// (0: 16384).
	MaxSearches, MaxTurns, TokenBudget int
	// K is the passages per search (0: 3); PassageWords cuts each to its
	// first words (0: 200).
	K, PassageWords int
}

func (c Config) withDefaults() Config {
	if c.Protocol.SearchOpen == "" {
		c.Protocol = SearchR1
	}
	if c.System == "" {
		c.System = "You are a helpful assistant."
	}
	if c.Prompt == "" {
		c.Prompt = DefaultPrompt
	}
	if c.Target == "" {
		c.Target = "a passage that answers the question, naming the most likely diagnosis, mechanism or treatment"
	}
	if c.MaxSearches <= 0 {
		c.MaxSearches = 5
	}
	if c.MaxTurns <= 0 {
		c.MaxTurns = c.MaxSearches + 3
	}
	if c.TokenBudget <= 0 {
		c.TokenBudget = 16384
	}
	if c.K <= 0 {
		c.K = 3
	}
	if c.PassageWords <= 0 {
		c.PassageWords = 200
	}
	return c
}

// Why a run stopped.
const (
	StopAnswer      = "answer"
	StopMaxSearches = "max-searches"
	StopMaxTurns    = "max-turns"
	StopMaxTokens   = "max-tokens"
	StopMalformed   = "malformed"
	StopLLMError    = "llm-error"
)

// Step is one model turn.
type Step struct {
	Turn             int `json:"turn"`
	PromptChars      int `json:"prompt_chars"`
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	// Estimated names the token estimator when the server did not count
	// (usage.Estimator).
	Estimated    string   `json:"estimated,omitempty"`
	Cached       bool     `json:"cached,omitempty"`
	FinishReason string   `json:"finish_reason,omitempty"`
	Search       string   `json:"search,omitempty"`
	Retrieved    []string `json:"retrieved,omitempty"`
	Note         string   `json:"note,omitempty"`
}

// Trace is one query's run, for the run manifest.
type Trace struct {
	QueryID          string `json:"query_id,omitempty"`
	Protocol         string `json:"protocol"`
	Steps            []Step `json:"steps"`
	Searches         int    `json:"searches"`
	PromptTokens     int    `json:"prompt_tokens"`
	CompletionTokens int    `json:"completion_tokens"`
	Stop             string `json:"stop"`
	Answer           string `json:"answer,omitempty"`
	// Fallback is set when Expansion is the original query; Reason says why.
	Fallback bool   `json:"fallback,omitempty"`
	Reason   string `json:"reason,omitempty"`
	// Expansion drives the final retrieval: Answer, or the query itself on
	// a fallback.
	Expansion string `json:"-"`
}

// Run answers one query.
func Run(ctx context.Context, chat Chatter, search Searcher, query string, cfg Config) (Trace, error) {
	cfg = cfg.withDefaults()
	p := cfg.Protocol
	tr := Trace{Protocol: p.Name, Steps: []Step{}}
	fallback := func(stop, reason string) (Trace, error) {
		tr.Stop, tr.Fallback, tr.Reason, tr.Expansion = stop, true, reason, query
		return tr, nil
	}
	user, err := renderPrompt(cfg, query)
	if err != nil {
		return tr, err
	}
	msgs := []llm.Message{llm.System(cfg.System), llm.User(user)}
	nudged, limitSaid := false, false
	for turn := 0; ; turn++ {
		if turn >= cfg.MaxTurns {
			return fallback(StopMaxTurns, fmt.Sprintf("no answer after %d model turns", turn))
		}
		left := cfg.TokenBudget - tr.CompletionTokens
		if left <= 0 {
			return fallback(StopMaxTokens, fmt.Sprintf("no answer within %d completion tokens", cfg.TokenBudget))
		}
		req := cfg.Request
		req.Messages = append([]llm.Message(nil), msgs...)
		req.Stop = []string{p.SearchClose}
		if req.MaxTokens <= 0 || req.MaxTokens > left {
			req.MaxTokens = left
		}
		st := Step{Turn: turn, PromptChars: chars(msgs)}
		resp, err := chat.Chat(ctx, req)
		if err != nil {
			if ctx.Err() != nil {
				return tr, ctx.Err()
			}
			tr.Steps = append(tr.Steps, st)
			return fallback(StopLLMError, err.Error())
		}
		st.PromptTokens, st.CompletionTokens, st.Estimated = resp.Usage.PromptTokens, resp.Usage.CompletionTokens, resp.Usage.Estimated
		if st.CompletionTokens == 0 && resp.Content+resp.Reasoning != "" {
			// The server counted the prompt only: the answer's tokens by
			// the estimator the client uses for uncounted calls.
			st.CompletionTokens = usage.EstimateTokens(resp.Content) + usage.EstimateTokens(resp.Reasoning)
			st.Estimated = usage.Estimator
		}
		st.Cached, st.FinishReason = resp.Cached, resp.FinishReason
		tr.PromptTokens += st.PromptTokens
		tr.CompletionTokens += st.CompletionTokens

		if ans, ok := cut(resp.Content, p.AnswerOpen, p.AnswerClose, resp.FinishReason != "length"); ok && ans != "" {
			tr.Steps = append(tr.Steps, st)
			tr.Stop, tr.Answer, tr.Expansion = StopAnswer, ans, ans
			return tr, nil
		}
		q, ok := lastSearch(resp.Content, p)
		said := resp.Content // the assistant turn the conversation keeps
		if !ok {
			if q, ok = lastSearch(resp.Reasoning, p); ok {
				// Chat templates drop earlier turns' reasoning, so a search
				// asked there is kept in the turn's answer: the model must
				// see what it searched for beside the results.
				said = strings.TrimSpace(resp.Content + "\n" + p.SearchOpen + q)
			}
		}
		switch {
		case ok && q != "" && tr.Searches >= cfg.MaxSearches:
			if limitSaid {
				tr.Steps = append(tr.Steps, st)
				return fallback(StopMaxSearches, fmt.Sprintf("kept searching after the limit of %d searches", cfg.MaxSearches))
			}
			limitSaid = true
			st.Search, st.Note = q, "search refused: limit reached"
			msgs = append(msgs, llm.Assistant(closeSearch(said, p)),
				llm.User(p.ResultOpen+"\nThe search limit is reached; no more searches are possible. Write your final answer now between "+p.AnswerOpen+" and "+p.AnswerClose+".\n"+p.ResultClose))
		case ok && q != "":
			passages, err := search(ctx, q, cfg.K)
			if err != nil {
				return tr, fmt.Errorf("search %q: %w", q, err)
			}
			tr.Searches++
			st.Search = q
			st.Retrieved = make([]string, len(passages))
			for i, ps := range passages {
				st.Retrieved[i] = ps.ID
			}
			msgs = append(msgs, llm.Assistant(closeSearch(said, p)),
				llm.User(p.ResultOpen+"\n"+formatPassages(passages, cfg.PassageWords)+"\n"+p.ResultClose))
		case resp.FinishReason == "length":
			tr.Steps = append(tr.Steps, st)
			return fallback(StopMaxTokens, "the model ran out of tokens before answering")
		case !nudged:
			nudged = true
			st.Note = "no search and no answer: reminded of the format"
			msgs = append(msgs, llm.Assistant(resp.Content),
				llm.User("Continue: either search with "+p.SearchOpen+"query"+p.SearchClose+" or give your final answer between "+p.AnswerOpen+" and "+p.AnswerClose+"."))
		default:
			tr.Steps = append(tr.Steps, st)
			return fallback(StopMalformed, "the model gave neither a search nor an answer, twice")
		}
		tr.Steps = append(tr.Steps, st)
	}
}

func renderPrompt(cfg Config, query string) (string, error) {
	t, err := template.New("agent").Option("missingkey=error").Parse(cfg.Prompt)
	if err != nil {
		return "", fmt.Errorf("agent prompt: %w", err)
	}
	p := cfg.Protocol
	var b bytes.Buffer
	err = t.Execute(&b, map[string]any{
		"Query": query, "Target": cfg.Target, "MaxSearches": cfg.MaxSearches,
		"SearchOpen": p.SearchOpen, "SearchClose": p.SearchClose,
		"ResultOpen": p.ResultOpen, "ResultClose": p.ResultClose,
		"AnswerOpen": p.AnswerOpen, "AnswerClose": p.AnswerClose,
	})
	if err != nil {
		return "", fmt.Errorf("agent prompt: %w", err)
	}
	return b.String(), nil
}

func chars(msgs []llm.Message) int {
	n := 0
	for _, m := range msgs {
		n += len(m.Content)
	}
	return n
}

// cut returns the trimmed text between the first open tag and the next
// close tag; with openEnded, a missing close tag takes the rest.
func cut(s, open, close string, openEnded bool) (string, bool) {
	i := strings.Index(s, open)
	if i < 0 {
		return "", false
	}
	rest := s[i+len(open):]
	if j := strings.Index(rest, close); j >= 0 {
		return strings.TrimSpace(rest[:j]), true
	}
	if openEnded {
		return strings.TrimSpace(rest), true
	}
	return "", false
}

// lastSearch is the last search query in s. The stop sequence usually
// removes its closing tag, so a query may run to the end of s.
func lastSearch(s string, p Protocol) (string, bool) {
	i := strings.LastIndex(s, p.SearchOpen)
	if i < 0 {
		return "", false
	}
	rest := s[i+len(p.SearchOpen):]
	if j := strings.Index(rest, p.SearchClose); j >= 0 {
		rest = rest[:j]
	}
	return strings.TrimSpace(rest), true
}

// closeSearch is the assistant turn as the conversation keeps it: up to
// the last search query, closed with its tag whether or not the server
// returned the stop sequence.
func closeSearch(s string, p Protocol) string {
	i := strings.LastIndex(s, p.SearchOpen)
	if i < 0 {
		return s
	}
	rest := s[i:]
	if j := strings.Index(rest, p.SearchClose); j >= 0 {
		return s[:i+j+len(p.SearchClose)]
	}
	return strings.TrimRight(s, " \n") + p.SearchClose
}

func formatPassages(ps []Passage, words int) string {
	if len(ps) == 0 {
		return "(no results)"
	}
	var b strings.Builder
	for i, p := range ps {
		w := strings.Fields(p.Text)
		if len(w) > words {
			w = w[:words]
		}
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "[%d] %s", i+1, strings.Join(w, " "))
	}
	return b.String()
}

// RunAll runs every query with at most concurrency (0: 4) in flight and
// returns their traces in order. progress, if set, hears of each finished
// query. A searcher error or ctx's cancellation stops the batch.
func RunAll(ctx context.Context, chat Chatter, search Searcher, queries []ir.Query, cfg Config, concurrency int, progress func(done, total int)) ([]Trace, error) {
	if concurrency <= 0 {
		concurrency = 4
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	out := make([]Trace, len(queries))
	var (
		next     atomic.Int64
		wg       sync.WaitGroup
		mu       sync.Mutex
		done     int
		firstErr error
	)
	for range min(concurrency, max(1, len(queries))) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(queries) || ctx.Err() != nil {
					return
				}
				tr, err := Run(ctx, chat, search, queries[i].Text, cfg)
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = fmt.Errorf("query %q: %w", queries[i].ID, err)
					cancel()
				}
				tr.QueryID = queries[i].ID
				out[i] = tr
				done++
				if progress != nil && err == nil {
					progress(done, len(queries))
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// Generations turns traces into generations that expand's rules combine
// with the queries (hy_doc is the expansion), labelled with the protocol's
// method and the LLM name.
func Generations(queries []ir.Query, traces []Trace, llmName string) []expand.Generation {
	out := make([]expand.Generation, len(queries))
	for i, q := range queries {
		out[i] = expand.Generation{ID: q.ID, Text: q.Text, HyDoc: traces[i].Expansion, Method: traces[i].Protocol, LLM: llmName}
	}
	return out
}

// Fallbacks lists the ids of the queries that fell back.
func Fallbacks(traces []Trace) []string {
	var ids []string
	for _, t := range traces {
		if t.Fallback {
			ids = append(ids, t.QueryID)
		}
	}
	return ids
}
