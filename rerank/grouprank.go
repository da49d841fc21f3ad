package rerank

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"math"
	"math/big"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"golang.org/x/sync/errgroup"

	"github.com/r2med/r2med/llm"
)

// GroupRank is the groupwise reasoning reranker of Sun, Long, Yang et
// al., "GroupRank: A Groupwise Reranking Paradigm Driven by Reinforcement
// Learning" (arXiv 2511.11653, 2025; Diver-GroupRank-32B, 46.8 nDCG@10 on
// BRIGHT), asked of any chat model, as DIVER's evaluation code asks it
// (AQ-MedAI/Diver, Reranker/rerank_groupwise.py; the facts taken are in
// testdata/diver/facts.json):
//
//   - The candidates are split into groups of GroupSize; the model sees a
//     query and one group of numbered passages, reasons (inside
//     <reason> </reason>) and answers, inside <answer> </answer>, a JSON
//     object giving every passage of the group an integer relevance score
//     on the absolute scale 0 (useless) to 10 (answers the query).
//   - The score is absolute, not a position, so scores are comparable
//     across groups (the paper trains for this with a reward that aligns
//     score distributions across groups): a passage's score is its
//     judgement / 10, and the candidates of every group are ranked
//     together by it. Groups are asked concurrently (Concurrency).
//   - Repeats passes are made, each over the candidates in another
//     order (a deterministic shuffle: sha256 of the query id, the pass
//     and the document, so a rerun sends the same prompts and is answered
//     from the cache), so a passage meets other companions in each pass;
//     its score is the mean of its judgements over the passes, computed
//     exactly from the decimals the model wrote, so equal means are equal
//     numbers (tied in first-stage order) whatever order the concurrent
//     groups' answers came back in.
//
// Parsing is robust and every repair is counted in Stats: the scores are
// read from the last <answer> block (to the end of the output when it was
// cut off), within it from the last ```json block when there is one;
// each "[n]": score pair is read even where the JSON around it is broken.
// A number naming no passage of the group is dropped (OutOfRange), a
// passage scored twice keeps its last score (Repeated: a JSON object's
// last value wins, as Python's json.loads keeps it), a score outside 0–10
// is clamped to the scale (Clamped), and a passage the answer leaves out
// (Missing) is not judged in that pass. An answer with no usable score at
// all — empty, cut off while reasoning, prose — scores every passage of
// its group 0 for that pass (DIVER's fallback), counted in Unparsed and
// marked in the trace; a passage no pass judged scores 0. Ties keep the
// order Rerank passed the candidates in (the first-stage order).
//
// The reasoning is kept in the LLM cache with the answer and in one trace
// per group (Trace: the passages asked about, their scores as read, the
// repairs).
type GroupRank struct {
	Chat  Chatter
	Model string // "" means the client's default
	// Prompts; nil means DefaultPrompts.
	Prompts *Prompts
	// GroupSize is the passages judged together; 0 means
	// DefaultGroupSize. The last group of a pass holds the rest.
	GroupSize int
	// Repeats is the passes over the candidates; 0 means DefaultRepeats.
	Repeats int
	// MaxWords cuts each passage to its first MaxWords words; 0 means 300,
	// negative means no cut.
	MaxWords int
	// MaxTokens of an answer, reasoning included; 0 means the server's
	// default.
	MaxTokens int
	// Concurrency bounds the groups asked at the same time per Score
	// call; 0 means 8.
	Concurrency int

	stats Stats
}

// DIVER's released defaults for GroupRank (rerank_groupwise.py's
// --group_size and --repeat_num); its BRIGHT run that reaches 46.8 uses
// groups of 20 and 6 passes (Reranker/reranker_script.sh).
const (
	DefaultGroupSize = 10
	DefaultRepeats   = 2
)

// GroupScale is the top of GroupRank's score scale: answers score each
// passage from 0 to GroupScale.
const GroupScale = 10

// groupSettings are a group size and repeats with 0 meaning the
// defaults; fewer than 1 is an error.
func groupSettings(size, repeats int) (int, int, error) {
	if size < 0 || repeats < 0 {
		return 0, 0, fmt.Errorf("grouprank needs a group size and repeats of at least 1, got %d and %d", size, repeats)
	}
	if size == 0 {
		size = DefaultGroupSize
	}
	if repeats == 0 {
		repeats = DefaultRepeats
	}
	return size, repeats, nil
}

// groupSeed is hashed with the query id, the pass and each document to
// order the candidates of a pass.
const groupSeed = "r2med-grouprank-pass-v1"

// Stats returns the counts so far.
func (g *GroupRank) Stats() Stats { return g.stats.snapshot() }

// Score judges docs (without ids, so its traces name no documents; the
// passes shuffle by text).
func (g *GroupRank) Score(ctx context.Context, query string, docs []string) ([]float64, error) {
	return g.ScoreCandidates(ctx, "", query, anonymous(docs))
}

// ScoreCandidates judges the candidates in groups, Repeats passes, and
// returns each one's mean judgement / GroupScale.
func (g *GroupRank) ScoreCandidates(ctx context.Context, qid, query string, cands []Candidate) ([]float64, error) {
	if g.Chat == nil {
		return nil, fmt.Errorf("grouprank reranker has no LLM client")
	}
	size, repeats, err := groupSettings(g.GroupSize, g.Repeats)
	if err != nil {
		return nil, err
	}
	prompts := orDefault(g.Prompts)
	n := len(cands)
	groups := (n + size - 1) / size
	var (
		mu    sync.Mutex
		sum   = make([]big.Rat, n) // exact: equal means are equal numbers, in any order of answers
		count = make([]int, n)
	)
	eg, ctx := errgroup.WithContext(ctx)
	limit := g.Concurrency
	if limit <= 0 {
		limit = 8
	}
	eg.SetLimit(limit)
	for pass := range repeats {
		order := passOrder(qid, pass, cands)
		for k := range groups {
			group := order[k*size : min((k+1)*size, n)]
			eg.Go(func() error {
				scores, err := g.judge(ctx, prompts, qid, query, cands, group, pass*groups+k)
				if err != nil {
					return err
				}
				mu.Lock()
				defer mu.Unlock()
				for i, d := range group {
					if scores[i] >= 0 {
						sum[d].Add(&sum[d], decimal(scores[i]))
						count[d]++
					}
				}
				return nil
			})
		}
	}
	if err := eg.Wait(); err != nil {
		return nil, err
	}
	out := make([]float64, n)
	for d := range out {
		if count[d] > 0 {
			out[d], _ = new(big.Rat).Quo(&sum[d], big.NewRat(int64(count[d])*GroupScale, 1)).Float64()
		}
	}
	return out, nil
}

// passOrder is the order of the candidates' indices in one pass: by
// sha256(groupSeed, qid, pass, document id — its text when it has none),
// then by position.
func passOrder(qid string, pass int, cands []Candidate) []int {
	keys := make([][sha256.Size]byte, len(cands))
	idx := make([]int, len(cands))
	for i, c := range cands {
		id := c.ID
		if id == "" {
			id = c.Text
		}
		keys[i] = sha256.Sum256([]byte(groupSeed + "\x00" + qid + "\x00" + strconv.Itoa(pass) + "\x00" + id))
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return bytes.Compare(keys[a][:], keys[b][:]) })
	return idx
}

// judge asks about one group and returns each passage's score on the 0–10
// scale, −1 for a passage the answer did not score.
func (g *GroupRank) judge(ctx context.Context, prompts *Prompts, qid, query string, cands []Candidate, group []int, step int) ([]float64, error) {
	lp := ListPrompt{Query: query, Num: len(group), Passages: make([]PromptPassage, len(group))}
	for i, d := range group {
		lp.Passages[i] = PromptPassage{N: i + 1, Text: oneLine(cands[d].Text, g.MaxWords), Rank: cands[d].Rank}
	}
	msgs, err := prompts.Messages(KindGroupRank, lp)
	if err != nil {
		return nil, err
	}
	resp, err := g.Chat.Chat(ctx, llm.Request{Model: g.Model, Messages: msgs, MaxTokens: g.MaxTokens})
	if err != nil {
		return nil, err
	}
	g.stats.answer(resp)
	answer, reasoning := answerPart(resp)
	reasoning = strings.TrimSpace(strings.NewReplacer("<reason>", "", "</reason>", "").Replace(reasoning))
	if reasoning == "" {
		atomic.AddInt64(&g.stats.NoReasoning, 1)
	}
	scores, r, clamped := ParseGroupScores(answer, len(group))
	g.stats.repaired(r)
	atomic.AddInt64(&g.stats.Clamped, int64(clamped))
	shown := make([]*float64, len(scores))
	for i := range scores {
		switch {
		case r.Named == 0:
			scores[i] = 0 // the fallback: the whole group scores 0
		case scores[i] < 0:
			continue
		}
		shown[i] = &scores[i]
	}
	emitTrace(ctx, Trace{
		QueryID: qid, Step: step, Docs: candidateIDs(cands, group), Reasoning: reasoning, Answer: resp.Content,
		FinishReason: resp.FinishReason, Scores: shown, Repair: &r, Fallback: r.Named == 0,
	})
	return scores, nil
}

// groupPair is one "[n]": score of a GroupRank answer: the key quoted,
// with or without brackets (and with a doubled closing bracket, a slip
// DIVER's parser mends), or bracketed without quotes; the score a number,
// or a number in double or single quotes with nothing else inside them
// ("3", '4.5'; not "3 points" or "three").
var groupPair = regexp.MustCompile(`(?:"\s*\[?\s*(\d+)\s*\]*\s*"|\[\s*(\d+)\s*\])\s*:\s*(?:(-?\d+(?:\.\d+)?)|"(-?\d+(?:\.\d+)?)"|'(-?\d+(?:\.\d+)?)')`)

// jsonFence is a ```json block.
var jsonFence = regexp.MustCompile("(?s)```json\\s*(.*?)(?:```|$)")

// decimal is a judgement as the model wrote it, a decimal number (its
// shortest form: 0.1, not the binary fraction 0.1 parses to), exactly.
func decimal(v float64) *big.Rat {
	r, _ := new(big.Rat).SetString(strconv.FormatFloat(v, 'g', -1, 64))
	return r
}

// ParseGroupScores reads a GroupRank answer (the part inside <answer>)
// scoring n passages numbered from 1: the scores on the 0–GroupScale
// scale, in passage order, −1 for a passage the answer does not score.
// The pairs are read from the last ```json block when there is one, else
// from the whole answer. Numbers outside 1..n are dropped (OutOfRange), a
// passage scored twice keeps its last score (Repeated), scores outside
// the scale are clamped to it (clamped counts them), and passages never
// scored are Missing. A score written as a string that is exactly a
// number ("3") is read as that number and counted (Quoted); any other
// string is no score. Named 0 means nothing usable was found.
func ParseGroupScores(answer string, n int) (scores []float64, r Repair, clamped int) {
	if ms := jsonFence.FindAllStringSubmatch(answer, -1); len(ms) > 0 {
		answer = ms[len(ms)-1][1]
	}
	scores = make([]float64, n)
	for i := range scores {
		scores[i] = -1
	}
	for _, m := range groupPair.FindAllStringSubmatch(answer, -1) {
		key := m[1]
		if key == "" {
			key = m[2]
		}
		k, err := strconv.Atoi(key)
		if err != nil || k < 1 || k > n {
			r.OutOfRange++
			continue
		}
		score, quoted := m[3], m[3] == ""
		if quoted {
			score = m[4] + m[5]
		}
		v, err := strconv.ParseFloat(score, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			r.OutOfRange++
			continue
		}
		if quoted {
			r.Quoted++
		}
		if v < 0 || v > GroupScale {
			v = min(max(v, 0), GroupScale)
			clamped++
		}
		if scores[k-1] >= 0 {
			r.Repeated++
		} else {
			r.Named++
		}
		scores[k-1] = v
	}
	for _, s := range scores {
		if s < 0 {
			r.Missing++
		}
	}
	return scores, r, clamped
}
