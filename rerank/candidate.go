package rerank

import (
	"context"
	"fmt"
)

// Candidate is one document offered to a reranker, with what the first
// stage said about it.
type Candidate struct {
	ID   string
	Text string
	// Score is the first-stage score: the input run's, exactly as read.
	Score float64
	// Rank is its 1-based rank in the input run (before any shuffle).
	Rank int
	// RankOnly is true when the first stage gave a rank and no score (a
	// candidate list published without scores; Options.RanksOnly): Score
	// then only encodes the rank and must not be shown as a retrieval
	// score.
	RankOnly bool
}

// CandidateScorer is implemented by scorers that need more than the texts:
// the first-stage scores (InsertRank shows them to the LLM) or the ids of
// the query and documents (for traces). Rerank calls ScoreCandidates
// instead of Score when a scorer has it, with the same documents in the
// same order; the contract is Score's.
type CandidateScorer interface {
	Scorer
	ScoreCandidates(ctx context.Context, qid, query string, cands []Candidate) ([]float64, error)
}

// texts lists the candidates' texts.
func texts(cands []Candidate) []string {
	out := make([]string, len(cands))
	for i, c := range cands {
		out[i] = c.Text
	}
	return out
}

// anonymous wraps bare texts as candidates without ids or first-stage
// scores, for the Score method of a CandidateScorer.
func anonymous(docs []string) []Candidate {
	out := make([]Candidate, len(docs))
	for i, d := range docs {
		out[i] = Candidate{Text: d, Rank: i + 1}
	}
	return out
}

// Trace is one LLM exchange of a reasoning reranker: the question, the
// reasoning and answer, and what the scorer made of them. Traces are how
// the reasoning behind a ranking is kept beside the run (Job writes them
// to its trace file); the answers themselves are also in the LLM cache.
type Trace struct {
	QueryID string `json:"qid"`
	// Step orders a query's traces: the candidate's position for a
	// pointwise scorer, the window's number in call order for a listwise
	// one, pass × groups + group for GroupRank.
	Step int `json:"step"`
	// Part names the scorer of a Merge that made the exchange
	// ("pointwise", "listwise"), or "merge" for the trace of the merge
	// itself; empty for other scorers. A query's traces are written part
	// by part, each in Step order.
	Part string `json:"part,omitempty"`
	// Docs are the documents asked about, in prompt order.
	Docs      []string `json:"docs"`
	Reasoning string   `json:"reasoning"`
	Answer    string   `json:"answer"`
	// FinishReason is the server's ("length": cut off at max_tokens).
	FinishReason string `json:"finish_reason,omitempty"`
	// Score is a pointwise judgement's score; From says how it was read
	// ("logprobs", "text", "undecided").
	Score *float64 `json:"score,omitempty"`
	From  string   `json:"from,omitempty"`
	// FirstStage says what the prompt showed of the first stage beside
	// each document, and Shown what it showed, in Docs' order (InsertRank):
	// "scores", "scores scaled to 0-1" (or 0-100), or "ranks only: the
	// candidate list has no scores".
	FirstStage string   `json:"first_stage,omitempty"`
	Shown      []string `json:"shown,omitempty"`
	// Ranking is a listwise answer's order of Docs after repair; Repair
	// what was mended, and Fallback whether the window kept its input
	// order because the answer named no passage.
	Ranking  []string `json:"ranking,omitempty"`
	Repair   *Repair  `json:"repair,omitempty"`
	Fallback bool     `json:"fallback,omitempty"`
	// Scores are a GroupRank answer's scores on its 0–10 scale, in Docs'
	// order, after repair: null for a passage the answer left out, 0 for
	// every passage when it scored none (Fallback).
	Scores []*float64 `json:"scores,omitempty"`
	// Merged is a Merge's account of each document, in Docs' order: its
	// ranks in the two rankings merged and the merged score.
	Merged []MergedDoc `json:"merged,omitempty"`
}

type traceKey struct{}

// WithTrace returns a context under which reasoning rerankers hand each
// LLM exchange to fn, as net/http/httptrace hands connection events to
// its hooks. fn is called from several goroutines at once when queries or
// documents are scored concurrently.
func WithTrace(ctx context.Context, fn func(Trace)) context.Context {
	return context.WithValue(ctx, traceKey{}, fn)
}

// emitTrace hands t to the context's trace hook, if any.
func emitTrace(ctx context.Context, t Trace) {
	if fn, ok := ctx.Value(traceKey{}).(func(Trace)); ok && fn != nil {
		fn(t)
	}
}

// candidateIDs lists the candidates' ids in the order of idx.
func candidateIDs(cands []Candidate, idx []int) []string {
	out := make([]string, len(idx))
	for i, j := range idx {
		out[i] = cands[j].ID
	}
	return out
}

// needCandidates is the error of a scorer that cannot work from texts.
func needCandidates(kind string) error {
	return fmt.Errorf("%s needs the first-stage scores; rerank through rerank.Rerank or rerank.Job, which pass the candidates with their scores", kind)
}
