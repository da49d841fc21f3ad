package rerank

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync/atomic"
	"unicode"

	"golang.org/x/sync/errgroup"

	"github.com/r2med/r2med/llm"
)

// Chatter sends one chat request; *llm.Client is one (with its retries and
// its answer cache, which makes a rerun of an LLM rerank free).
type Chatter interface {
	Chat(ctx context.Context, req llm.Request) (llm.Response, error)
}

// The built-in LLM rerankers' defaults: RankGPT's passage cut and
// windows, OpenAI's most top_logprobs, and the pointwise answer's one
// token.
const (
	DefaultMaxWords    = 300
	DefaultTopLogprobs = 20
	DefaultWindow      = 20
	DefaultStep        = 10
	pointwiseMaxTokens = 1
)

// DefaultPointwisePrompt asks for a one-word relevance judgement. {query}
// and {passage} are replaced by the texts.
const DefaultPointwisePrompt = `Passage: {passage}

Query: {query}

Does the passage help answer the query? Answer yes or no.`

// Pointwise scores each document alone with an LLM: the score is the
// probability of "yes" as the first answer token, normalized against "no",
// p(yes) / (p(yes) + p(no)), summed over the spellings of each word among
// the first token's top logprobs (" Yes", "YES", "yes."). This is the
// relevance-generation scoring of Liang et al. (HELM) and Nogueira et
// al.'s monoT5, asked of a chat model. A word absent from the top
// logprobs (a confident model's "no") counts at its upper bound, the
// least listed alternative or what the list leaves if less, not 0: else
// every confident yes would score 1 and tie.
//
// Fallbacks, counted in Stats: a server that returns no logprobs is scored
// from the answer text, 1 for yes and 0 for no; an answer that is neither
// (and whose top logprobs hold neither word) scores 0.5, undecided.
type Pointwise struct {
	Chat  Chatter
	Model string // "" means the client's default
	// Prompt is the user message, with {query} and {passage}; "" means
	// DefaultPointwisePrompt.
	Prompt string
	// MaxWords cuts passages to their first MaxWords words; 0 means 300
	// (RankGPT's cut), negative means no cut.
	MaxWords int
	// TopLogprobs asked for; 0 means 20, OpenAI's maximum.
	TopLogprobs int
	// MaxTokens of the answer; 0 means 1 (the yes or no). A reasoning model
	// needs more, and its logprobs then cover the reasoning's first token,
	// so it is scored from its answer text.
	MaxTokens int
	// Concurrency bounds the requests in flight per Score call; 0 means 8.
	Concurrency int

	stats Stats
}

// Stats counts an LLM reranker's answers: how many, what they cost, and
// those it could not use as intended. The counts cover every answer the
// scorer used, from the cache or not (a cached answer keeps the usage the
// server reported for it), so the tokens describe what the rerank costs
// rather than what this process was billed.
type Stats struct {
	Calls int64
	// Cached: answers that came from the cache.
	Cached int64
	// PromptTokens and CompletionTokens: the servers' usage, summed.
	PromptTokens, CompletionTokens int64
	// NoLogprobs: pointwise answers scored from their text, because the
	// server sent no logprobs, they belonged to reasoning, or the first
	// token's listed neither yes nor no.
	NoLogprobs int64
	// Undecided: pointwise answers that said neither yes nor no (0.5).
	Undecided int64
	// Unparsed: listwise answers without one usable passage number; the
	// window kept its input order (the fallback). For GroupRank: answers
	// without one usable score; the group scored 0 (its fallback).
	Unparsed int64
	// Partial: listwise answers that named some passages but not all, or
	// named some twice or out of range; repaired as RankGPT does (and
	// GroupRank answers so repaired: see ParseGroupScores).
	Partial int64
	// Missing, Repeated and OutOfRange count the passage numbers repaired
	// in listwise answers (see Repair); kept by the reasoning rerankers.
	Missing, Repeated, OutOfRange int64
	// Truncated: answers cut off at max_tokens (finish_reason "length").
	Truncated int64
	// NoReasoning: answers of a reasoning reranker that came without any
	// reasoning (scored all the same).
	NoReasoning int64
	// Clamped: GroupRank scores outside its 0–10 scale, clamped to it.
	Clamped int64
	// Quoted: GroupRank scores written as quoted numbers ("3"), read as
	// the numbers.
	Quoted int64
}

func (s *Stats) snapshot() Stats {
	return Stats{
		Calls: atomic.LoadInt64(&s.Calls), Cached: atomic.LoadInt64(&s.Cached),
		PromptTokens: atomic.LoadInt64(&s.PromptTokens), CompletionTokens: atomic.LoadInt64(&s.CompletionTokens),
		NoLogprobs: atomic.LoadInt64(&s.NoLogprobs),
		Undecided:  atomic.LoadInt64(&s.Undecided), Unparsed: atomic.LoadInt64(&s.Unparsed),
		Partial: atomic.LoadInt64(&s.Partial), Missing: atomic.LoadInt64(&s.Missing),
		Repeated: atomic.LoadInt64(&s.Repeated), OutOfRange: atomic.LoadInt64(&s.OutOfRange),
		Truncated: atomic.LoadInt64(&s.Truncated), NoReasoning: atomic.LoadInt64(&s.NoReasoning),
		Clamped: atomic.LoadInt64(&s.Clamped), Quoted: atomic.LoadInt64(&s.Quoted),
	}
}

// plus is the sum of two scorers' counts (a Merge's parts).
func (s Stats) plus(o Stats) Stats {
	return Stats{
		Calls: s.Calls + o.Calls, Cached: s.Cached + o.Cached,
		PromptTokens: s.PromptTokens + o.PromptTokens, CompletionTokens: s.CompletionTokens + o.CompletionTokens,
		NoLogprobs: s.NoLogprobs + o.NoLogprobs, Undecided: s.Undecided + o.Undecided, Unparsed: s.Unparsed + o.Unparsed,
		Partial: s.Partial + o.Partial, Missing: s.Missing + o.Missing, Repeated: s.Repeated + o.Repeated,
		OutOfRange: s.OutOfRange + o.OutOfRange, Truncated: s.Truncated + o.Truncated,
		NoReasoning: s.NoReasoning + o.NoReasoning, Clamped: s.Clamped + o.Clamped, Quoted: s.Quoted + o.Quoted,
	}
}

// answer counts one answer received.
func (s *Stats) answer(r llm.Response) {
	atomic.AddInt64(&s.Calls, 1)
	if r.Cached {
		atomic.AddInt64(&s.Cached, 1)
	}
	atomic.AddInt64(&s.PromptTokens, int64(r.Usage.PromptTokens))
	atomic.AddInt64(&s.CompletionTokens, int64(r.Usage.CompletionTokens))
	if r.FinishReason == "length" {
		atomic.AddInt64(&s.Truncated, 1)
	}
}

// repaired counts a listwise answer's repairs.
func (s *Stats) repaired(r Repair) {
	switch {
	case r.Named == 0:
		atomic.AddInt64(&s.Unparsed, 1)
	case !r.Clean():
		atomic.AddInt64(&s.Partial, 1)
	}
	atomic.AddInt64(&s.Missing, int64(r.Missing))
	atomic.AddInt64(&s.Repeated, int64(r.Repeated))
	atomic.AddInt64(&s.OutOfRange, int64(r.OutOfRange))
	atomic.AddInt64(&s.Quoted, int64(r.Quoted))
}

// Counts are the statistics by name, for a run manifest's counts (the
// pipeline prefixes them with "rerank_"). Every field is listed, zeros
// included, so a manifest says a count was kept and found nothing.
func (s Stats) Counts() map[string]int {
	return map[string]int{
		"llm_calls": int(s.Calls), "llm_cached": int(s.Cached),
		"prompt_tokens": int(s.PromptTokens), "completion_tokens": int(s.CompletionTokens),
		"no_logprobs": int(s.NoLogprobs), "undecided": int(s.Undecided),
		"unparsed": int(s.Unparsed), "partial": int(s.Partial),
		"missing_ids": int(s.Missing), "repeated_ids": int(s.Repeated), "out_of_range_ids": int(s.OutOfRange),
		"truncated": int(s.Truncated), "no_reasoning": int(s.NoReasoning), "clamped_scores": int(s.Clamped),
		"quoted_scores": int(s.Quoted),
	}
}

// Notes are the counts worth a user's attention, in words; empty when
// every answer was used as intended.
func (s Stats) Notes() []string {
	var notes []string
	add := func(n int64, format string) {
		if n > 0 {
			notes = append(notes, fmt.Sprintf(format, n))
		}
	}
	add(s.NoLogprobs, "%d scored from the answer text (no logprobs for yes or no)")
	add(s.Undecided, "%d said neither yes nor no (scored 0.5)")
	add(s.Unparsed, "%d named no passage (the fallback: a window keeps its order, a group scores 0)")
	add(s.Partial, "%d incomplete permutations (repaired)")
	add(s.Missing, "%d passage numbers missing")
	add(s.Repeated, "%d repeated")
	add(s.OutOfRange, "%d out of range")
	add(s.Truncated, "%d cut off at max_tokens")
	add(s.NoReasoning, "%d came without reasoning")
	add(s.Clamped, "%d scores outside 0–10 clamped")
	add(s.Quoted, "%d scores written as quoted numbers, read as numbers")
	return notes
}

// Stats returns the counts so far (safe during a rerank).
func (p *Pointwise) Stats() Stats { return p.stats.snapshot() }

// Score asks about each document in its own request, at most Concurrency
// at a time; a request that fails after the client's retries fails the call.
func (p *Pointwise) Score(ctx context.Context, query string, docs []string) ([]float64, error) {
	if p.Chat == nil {
		return nil, fmt.Errorf("pointwise reranker has no LLM client")
	}
	prompt := p.Prompt
	if prompt == "" {
		prompt = DefaultPointwisePrompt
	}
	top := p.TopLogprobs
	if top <= 0 {
		top = DefaultTopLogprobs
	}
	maxTok := p.MaxTokens
	if maxTok <= 0 {
		maxTok = pointwiseMaxTokens
	}
	out := make([]float64, len(docs))
	g, ctx := errgroup.WithContext(ctx)
	n := p.Concurrency
	if n <= 0 {
		n = 8
	}
	g.SetLimit(n)
	for i, d := range docs {
		g.Go(func() error {
			msg := strings.NewReplacer("{query}", query, "{passage}", truncateWords(d, p.MaxWords)).Replace(prompt)
			resp, err := p.Chat.Chat(ctx, llm.Request{
				Model: p.Model, Messages: []llm.Message{llm.User(msg)},
				MaxTokens: maxTok, Logprobs: true, TopLogprobs: top,
			})
			if err != nil {
				return err
			}
			p.stats.answer(resp)
			out[i] = p.yes(resp)
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return out, nil
}

// yes turns an answer into p(yes | yes or no).
func (p *Pointwise) yes(r llm.Response) float64 {
	if len(r.Logprobs) > 0 && r.Reasoning == "" {
		first := r.Logprobs[0]
		cands := first.Top
		if len(cands) == 0 {
			cands = []llm.TopLogprob{{Token: first.Token, Logprob: first.Logprob}}
		}
		var py, pn, all float64
		for _, c := range cands {
			p := math.Exp(c.Logprob)
			all += p
			switch yesNo(c.Token) {
			case 1:
				py += p
			case 0:
				pn += p
			}
		}
		if py+pn > 0 {
			// A word the list leaves out is not 0: at most its bound.
			if py == 0 {
				py = absentBound(all, first.Top)
			}
			if pn == 0 {
				pn = absentBound(all, first.Top)
			}
			return py / (py + pn)
		}
	}
	// No logprobs, logprobs of reasoning, or a first token's logprobs
	// that list neither word ("**", a newline): the text decides.
	atomic.AddInt64(&p.stats.NoLogprobs, 1)
	switch yesNo(firstWord(r.Content)) {
	case 1:
		return 1
	case 0:
		return 0
	}
	atomic.AddInt64(&p.stats.Undecided, 1)
	return 0.5
}

// absentBound is the most probability a token missing from a position's
// logprobs can have: what the listed tokens (summing to listed) leave and,
// since a server's top_logprobs are the position's most probable tokens,
// the least of top.
func absentBound(listed float64, top []llm.TopLogprob) float64 {
	b := max(0, 1-listed)
	for _, a := range top {
		b = min(b, math.Exp(a.Logprob))
	}
	return b
}

// yesNo is 1 for a spelling of yes, 0 for no, −1 otherwise.
func yesNo(tok string) int {
	w := strings.ToLower(strings.TrimFunc(tok, func(r rune) bool { return !unicode.IsLetter(r) }))
	switch w {
	case "yes":
		return 1
	case "no":
		return 0
	}
	return -1
}

func firstWord(s string) string {
	f := strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) })
	if len(f) == 0 {
		return ""
	}
	return f[0]
}

// truncateWords keeps the first n white-space separated words of s (n 0
// means 300, negative means all), joined by single spaces when cut.
func truncateWords(s string, n int) string {
	if n == 0 {
		n = DefaultMaxWords
	}
	if n < 0 {
		return s
	}
	f := strings.Fields(s)
	if len(f) <= n {
		return s
	}
	return strings.Join(f[:n], " ")
}
