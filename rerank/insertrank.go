package rerank

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// InsertRank is the listwise LLM reranker of Seetharaman, Dhole and Bansal,
// "InsertRank: LLMs can reason over BM25 scores to Improve Listwise
// Reranking" (arXiv 2506.14086, 2025): RankGPT's sliding windows (20
// passages, step 10, bottom to top; see Listwise) with each passage's
// first-stage retrieval score written beside it in the prompt, so the
// model weighs the lexical signal with its own reading. With DeepSeek-R1
// it reaches 51.1 average nDCG@10 on R2MED.
//
// The scores are the input run's, exactly as read (Candidate.Score):
//
//   - ScoresRaw (the default) prints them as they are, with Decimals
//     digits after the point (0 means 2), e.g. "12.35";
//   - ScoresMinMax maps them to [0, 1] by min-max over the query's
//     candidates (v − min) / (max − min), ScoresPercent to 0–100 by the
//     same ×100, printed with Decimals digits as well; when every
//     candidate has the same score they all show the top of the scale.
//
// Decimals is a minimum: where it would print two different scores of a
// query's candidates alike (RRF scores such as 0.0196 and 0.0194, cosine
// similarities that agree to two places), all of that query's scores get
// as many more digits as keep them apart (see ShownScores), so the model
// never reads a tie the first stage did not make.
//
// The paper's ablations vary this scale; the prompt says which is used.
// Candidates that come with a rank and no score (Candidate.RankOnly: a
// candidate list published without scores) are shown with their ranks,
// and the prompt and the trace say that only ranks are known; numbers made
// from ranks are never shown as retrieval scores.
// The prompt is the insertrank templates' (see Prompts); the answer is
// read by ParseRanking (the part inside <answer> </answer> if the model
// writes one), repairs counted in Stats, a window whose answer names no
// passage keeps its order (Stats.Unparsed).
//
// InsertRank needs the candidates (Rerank and Job pass them); its Score
// method, given texts alone, is an error.
type InsertRank struct {
	Chat  Chatter
	Model string // "" means the client's default
	// Prompts; nil means DefaultPrompts.
	Prompts *Prompts
	// Window and Step: 0 means RankGPT's 20 and 10.
	Window, Step int
	// MaxWords cuts each passage to its first MaxWords words; 0 means 300
	// (RankGPT's), negative means no cut.
	MaxWords int
	// MaxTokens of an answer; 0 means the server's default.
	MaxTokens int
	Scores    ScoreScale
	Decimals  int

	stats Stats
}

// ScoreScale is how InsertRank shows first-stage scores.
type ScoreScale string

const (
	ScoresRaw     ScoreScale = "raw"
	ScoresMinMax  ScoreScale = "minmax"
	ScoresPercent ScoreScale = "percent"
)

// ParseScoreScale reads a scale name; "" is ScoresRaw.
func ParseScoreScale(s string) (ScoreScale, error) {
	switch ScoreScale(strings.ToLower(strings.TrimSpace(s))) {
	case "", ScoresRaw:
		return ScoresRaw, nil
	case ScoresMinMax:
		return ScoresMinMax, nil
	case ScoresPercent:
		return ScoresPercent, nil
	}
	return "", fmt.Errorf("unknown InsertRank score scale %q: raw (the first-stage scores as they are), minmax (0 to 1 over each query's candidates) or percent (0 to 100)", s)
}

// Listwise reports that the scores only order one call's documents.
func (r *InsertRank) Listwise() bool { return true }

// Stats returns the counts so far.
func (r *InsertRank) Stats() Stats { return r.stats.snapshot() }

// Score refuses: InsertRank shows the first-stage scores, which bare
// texts lack.
func (r *InsertRank) Score(context.Context, string, []string) ([]float64, error) {
	return nil, needCandidates("insertrank")
}

// ScoreCandidates ranks the candidates by sliding windows, each passage
// shown with its first-stage score.
func (r *InsertRank) ScoreCandidates(ctx context.Context, qid, query string, cands []Candidate) ([]float64, error) {
	if r.Chat == nil {
		return nil, fmt.Errorf("insertrank reranker has no LLM client")
	}
	ranksOnly := len(cands) > 0 && cands[0].RankOnly
	var shown []string
	var scale, firstStage string
	switch {
	case ranksOnly:
		shown, firstStage = make([]string, len(cands)), firstStageRanks
		for i, c := range cands {
			if !c.RankOnly {
				return nil, fmt.Errorf("document %q has a first-stage score and %q none; candidates have scores or ranks alone, not both", c.ID, cands[0].ID)
			}
			shown[i] = strconv.Itoa(c.Rank)
		}
	default:
		var err error
		if shown, scale, err = ShownScores(cands, r.Scores, r.Decimals); err != nil {
			return nil, err
		}
		firstStage = "scores"
		if scale != "" {
			firstStage = "scores scaled to " + scale
		}
	}
	w := &windowLLM{
		chat: r.Chat, model: r.Model, method: KindInsertRank, prompts: orDefault(r.Prompts),
		maxWords: r.MaxWords, maxTokens: r.MaxTokens, stats: &r.stats,
		shown: shown, scale: scale, ranksOnly: ranksOnly, firstStage: firstStage, qid: qid, query: query, cands: cands,
	}
	return slideWindows(ctx, len(cands), r.Window, r.Step, w.rank)
}

// firstStageRanks is what a trace says when only ranks were shown.
const firstStageRanks = "ranks only: the candidate list has no scores"

// ShownScores are the first-stage scores as InsertRank prints them, one
// per candidate, and the scale's label for the prompt ("" for raw,
// "0-1", "0-100"). decimals 0 means 2. All are printed with the same
// digits after the point: decimals, or more (up to maxShownDecimals)
// where decimals would show different scores alike; equal scores are
// shown alike.
func ShownScores(cands []Candidate, scale ScoreScale, decimals int) (shown []string, label string, err error) {
	if decimals == 0 {
		decimals = 2
	}
	if decimals < 0 {
		return nil, "", fmt.Errorf("InsertRank decimals must be positive, got %d", decimals)
	}
	scale, err = ParseScoreScale(string(scale))
	if err != nil {
		return nil, "", err
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, c := range cands {
		if math.IsNaN(c.Score) || math.IsInf(c.Score, 0) {
			return nil, "", fmt.Errorf("document %q has first-stage score %v; InsertRank shows finite scores only", c.ID, c.Score)
		}
		lo, hi = min(lo, c.Score), max(hi, c.Score)
	}
	top := 1.0
	switch scale {
	case ScoresMinMax:
		label = "0-1"
	case ScoresPercent:
		label, top = "0-100", 100
	}
	vals := make([]float64, len(cands))
	for i, c := range cands {
		vals[i] = c.Score
		if scale != ScoresRaw {
			vals[i] = top
			if hi > lo {
				vals[i] = (c.Score - lo) / (hi - lo) * top
			}
		}
	}
	// More digits where decimals would show different first-stage scores
	// as one number (RRF's 0.0196 and 0.0194, cosines agreeing to two
	// places): the model would read a tie the retriever never made.
	for d := decimals; ; d++ {
		shown = formatScores(shown, vals, d)
		if d >= max(decimals, maxShownDecimals) || apart(vals, shown) {
			return shown, label, nil
		}
	}
}

// maxShownDecimals bounds the digits ShownScores adds to keep scores
// apart; scores closer than that are shown alike.
const maxShownDecimals = 12

// formatScores prints vals with d digits after the point into dst.
func formatScores(dst []string, vals []float64, d int) []string {
	dst = dst[:0]
	for _, v := range vals {
		s := strconv.FormatFloat(v, 'f', d, 64)
		if strings.Trim(s, "-0.") == "" {
			s = strings.TrimPrefix(s, "-") // no "-0.00"
		}
		dst = append(dst, s)
	}
	return dst
}

// apart says whether values that differ are shown differently.
func apart(vals []float64, shown []string) bool {
	idx := make([]int, len(vals))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return cmp.Compare(vals[a], vals[b]) })
	for k := 1; k < len(idx); k++ {
		a, b := idx[k-1], idx[k]
		if vals[a] != vals[b] && shown[a] == shown[b] {
			return false
		}
	}
	return true
}

func orDefault(p *Prompts) *Prompts {
	if p == nil {
		return DefaultPrompts()
	}
	return p
}
