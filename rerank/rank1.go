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

// Rank1 is the reasoning pointwise reranker of Weller et al., "Rank1:
// Test-Time Compute for Reranking in Information Retrieval" (arXiv
// 2502.18418, 2025), asked of any chat model: each document is judged
// alone; the model reasons, then answers true (relevant) or false.
//
// The score is read from the final answer:
//
//   - From its log-probability, where the server returns logprobs: the
//     last generated token that spells the answer's word (true, false,
//     yes or no, any case) is found, and the score is p(true) / (p(true) +
//     p(false)) over the alternatives at that position, each word's
//     spellings summed — Rank1's softmax over the true and false tokens.
//     When one of the two words is not among the alternatives, it gets its
//     upper bound: the probability mass they leave, 1 − their sum, or,
//     where the server listed its most probable tokens (top_logprobs),
//     the least of those when that is lower. (Rank1's own code asks again
//     with only the two words allowed, for their exact ratio.)
//   - Otherwise from the answer's text (counted in Stats.NoLogprobs): its
//     first judgement word gives 1 for true or yes, 0 for false or no; an
//     answer with none — empty, cut off while reasoning, prose — scores
//     0.5 (Stats.Undecided). These scores tie often; Rerank's stable sort
//     keeps tied documents in their input order (the first-stage ranking,
//     or HAKARI's hash order with HashOrder), so the tie-break is
//     deterministic.
//
// The reasoning is kept: in the LLM cache with the answer, and in the
// trace of each judgement (see Trace, Job). Answers without reasoning are
// counted in Stats.NoReasoning, outputs cut off at max_tokens in
// Stats.Truncated.
type Rank1 struct {
	Chat  Chatter
	Model string // "" means the client's default
	// Prompts; nil means DefaultPrompts.
	Prompts *Prompts
	// MaxWords cuts passages to their first MaxWords words; 0 means 300,
	// negative means no cut.
	MaxWords int
	// MaxTokens of an answer, reasoning included; 0 means the server's
	// default.
	MaxTokens int
	// TopLogprobs asked for at each position; 0 means 5. TextOnly asks
	// for no logprobs at all (servers that refuse them, such as OpenAI's
	// reasoning models): every answer is then scored from its text.
	TopLogprobs int
	TextOnly    bool
	// Concurrency bounds the requests in flight per Score call; 0 means 8.
	Concurrency int

	stats Stats
}

// Stats returns the counts so far.
func (r *Rank1) Stats() Stats { return r.stats.snapshot() }

// Score judges docs (without ids, so its traces name no documents).
func (r *Rank1) Score(ctx context.Context, query string, docs []string) ([]float64, error) {
	return r.ScoreCandidates(ctx, "", query, anonymous(docs))
}

// ScoreCandidates judges each candidate in its own request, at most
// Concurrency at a time; a request that fails after the client's retries
// fails the call.
func (r *Rank1) ScoreCandidates(ctx context.Context, qid, query string, cands []Candidate) ([]float64, error) {
	if r.Chat == nil {
		return nil, fmt.Errorf("rank1 reranker has no LLM client")
	}
	prompts := orDefault(r.Prompts)
	top := r.TopLogprobs
	if top <= 0 {
		top = 5
	}
	n := r.Concurrency
	if n <= 0 {
		n = 8
	}
	out := make([]float64, len(cands))
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(n)
	for i, c := range cands {
		g.Go(func() error {
			msgs, err := prompts.Messages(KindRank1, PointPrompt{Query: query, Passage: truncateWords(c.Text, r.MaxWords)})
			if err != nil {
				return err
			}
			req := llm.Request{Model: r.Model, Messages: msgs, MaxTokens: r.MaxTokens}
			if !r.TextOnly {
				req.Logprobs, req.TopLogprobs = true, top
			}
			resp, err := r.Chat.Chat(ctx, req)
			if err != nil {
				return err
			}
			r.stats.answer(resp)
			if strings.TrimSpace(resp.Reasoning) == "" {
				atomic.AddInt64(&r.stats.NoReasoning, 1)
			}
			score, from := r.judge(resp)
			out[i] = score
			emitTrace(ctx, Trace{
				QueryID: qid, Step: i, Docs: []string{c.ID}, Reasoning: resp.Reasoning, Answer: resp.Content,
				FinishReason: resp.FinishReason, Score: &score, From: from,
			})
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return out, nil
}

// judge scores one answer and says how: "logprobs", "text" or
// "undecided".
func (r *Rank1) judge(resp llm.Response) (float64, string) {
	v := firstVerdict(resp.Content)
	if v < 0 {
		atomic.AddInt64(&r.stats.Undecided, 1)
		return 0.5, "undecided"
	}
	if p, ok := verdictLogprob(resp.Logprobs, v); ok {
		return p, "logprobs"
	}
	atomic.AddInt64(&r.stats.NoLogprobs, 1)
	return float64(v), "text"
}

// verdict is 1 for a spelling of true or yes, 0 for false or no, −1 for
// anything else; surrounding non-letters are ignored (" True", "false.").
func verdict(tok string) int {
	switch strings.ToLower(strings.TrimFunc(tok, func(r rune) bool { return !unicode.IsLetter(r) })) {
	case "true", "yes":
		return 1
	case "false", "no":
		return 0
	}
	return -1
}

// firstVerdict is the verdict of the first judgement word in s, or −1.
func firstVerdict(s string) int {
	for _, w := range strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) }) {
		if v := verdict(w); v >= 0 {
			return v
		}
	}
	return -1
}

// verdictLogprob finds the last generated token spelling verdict v and
// returns p(true) / (p(true) + p(false)) over its position's
// alternatives; ok is false when no token spells it.
func verdictLogprob(lps []llm.TokenLogprob, v int) (float64, bool) {
	for i := len(lps) - 1; i >= 0; i-- {
		tok := lps[i]
		if verdict(tok.Token) != v {
			continue
		}
		alts := tok.Top
		found := false
		for _, a := range alts {
			if a.Token == tok.Token {
				found = true
				break
			}
		}
		if !found {
			alts = append(append([]llm.TopLogprob(nil), alts...), llm.TopLogprob{Token: tok.Token, Logprob: tok.Logprob})
		}
		var pt, pf, all float64
		for _, a := range alts {
			p := math.Exp(a.Logprob)
			all += p
			switch verdict(a.Token) {
			case 1:
				pt += p
			case 0:
				pf += p
			}
		}
		// An absent word is at most what the alternatives leave and, when
		// the server listed its most probable tokens, at most the least
		// of them.
		bound := absentBound(all, tok.Top)
		if pt == 0 {
			pt = bound
		}
		if pf == 0 {
			pf = bound
		}
		if pt+pf == 0 {
			return float64(v), true
		}
		return pt / (pt + pf), true
	}
	return 0, false
}
