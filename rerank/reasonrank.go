package rerank

import (
	"context"
	"fmt"
)

// ReasonRank is the reasoning listwise reranker of Liu et al.,
// "ReasonRank: Empowering Passage Ranking with Strong Reasoning Ability"
// (arXiv 2508.07050, 2025), asked of any chat model: for each window the
// model reasons first (inside <think> </think>, or in the server's
// reasoning field) and then writes the permutation inside
// <answer> </answer>. Windows slide as RankGPT's (20 passages, step 10,
// bottom to top; see Listwise), as in the paper.
//
// Parsing is robust and every repair is counted in Stats: the ranking is
// read from the last <answer> block (to the end of the output when it was
// cut off before </answer>), else from the whole answer; numbers out of
// range are dropped (OutOfRange), a repeated number counts at its first
// place (Repeated), and passages never named follow the named ones in
// their input order (Missing). An answer naming no passage at all — empty,
// cut off while reasoning, or prose — leaves the window in its input
// order, the fallback, counted in Unparsed and marked in the trace.
// Answers without reasoning are counted in NoReasoning, outputs cut off
// at max_tokens in Truncated.
type ReasonRank struct {
	Chat  Chatter
	Model string // "" means the client's default
	// Prompts; nil means DefaultPrompts.
	Prompts *Prompts
	// Window and Step: 0 means 20 and 10.
	Window, Step int
	// MaxWords cuts each passage to its first MaxWords words; 0 means
	// 300, negative means no cut.
	MaxWords int
	// MaxTokens of an answer, reasoning included; 0 means the server's
	// default.
	MaxTokens int

	stats Stats
}

// Listwise reports that the scores only order one call's documents.
func (r *ReasonRank) Listwise() bool { return true }

// Stats returns the counts so far.
func (r *ReasonRank) Stats() Stats { return r.stats.snapshot() }

// Score ranks docs (without ids, so its traces name no documents).
func (r *ReasonRank) Score(ctx context.Context, query string, docs []string) ([]float64, error) {
	return r.ScoreCandidates(ctx, "", query, anonymous(docs))
}

// ScoreCandidates ranks the candidates by sliding windows of reasoning
// and permutation.
func (r *ReasonRank) ScoreCandidates(ctx context.Context, qid, query string, cands []Candidate) ([]float64, error) {
	if r.Chat == nil {
		return nil, fmt.Errorf("reasonrank reranker has no LLM client")
	}
	w := &windowLLM{
		chat: r.Chat, model: r.Model, method: KindReasonRank, prompts: orDefault(r.Prompts),
		maxWords: r.MaxWords, maxTokens: r.MaxTokens, stats: &r.stats, reasoning: true,
		qid: qid, query: query, cands: cands,
	}
	return slideWindows(ctx, len(cands), r.Window, r.Step, w.rank)
}
