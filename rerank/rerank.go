// Package rerank reorders the top of a ranked run with a stronger model: a
// cross-encoder run locally through ONNX, a rerank server (TEI, or the
// Cohere/Jina/Voyage-style /v1/rerank), an LLM asked pointwise or
// listwise, or a reasoning LLM in one of the published recipes:
// InsertRank (listwise, shown the first-stage scores), Rank1 (reason,
// then judge), ReasonRank (reason, then permute) and GroupRank (groups
// judged together, each passage scored on one absolute scale), with
// editable prompt templates and their reasoning kept in traces; and
// DIVER's merge of a pointwise and a listwise reranker's ranks (Merge).
//
// Every backend is a Scorer: one score per document, higher is more
// relevant. Rerank does the rest the way R2MED and HAKARI-Bench do it:
//
//   - Depth: the first Depth documents of each query (R2MED: 10 or 100) are
//     scored and only they are kept, as R2MED's eval_reranker.py keeps them.
//     With depth 10, recall@100 therefore equals recall@10, and nDCG@100 can
//     fall below nDCG@10; that is the published behaviour, not a bug.
//     KeepTail appends the unscored rest below them instead (an extension).
//   - Ties: documents with equal scores keep their input order (a stable
//     sort), or with HashOrder the order HAKARI-Bench's reranker evaluation
//     gives them: candidates are shuffled by
//     sha256("hakari-reranker-candidate-order-v1\0qid\0docid") before scoring
//     and then stably sorted by score, so ties follow the hash order. The
//     reranked list is the ranking: trec.RankHits (ir.TiesAsListed) steps
//     equal scores (and scores equal only in float32) one float32 apart
//     down the list, so a written run is evaluated in this order by
//     trec_eval, pytrec_eval and ranx, which would otherwise order the
//     ties by doc id.
//   - Safeguard: NanoR2MED's reranking_hybrid lists are the RRF top 100 plus,
//     for queries where those hold no positive, one positive at rank 101.
//     KeepSafeguard reranks it with the top 100 (HAKARI's "reranking"
//     target, where a reranker may lift it into the top 10);
//     DropSafeguard removes it first ("reranking_without_safeguard").
//
// A scorer that needs more than the texts — the first-stage scores, the
// ids — implements CandidateScorer, and Rerank passes it each Candidate
// with the input run's score and rank.
package rerank

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"

	"golang.org/x/sync/errgroup"

	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/trec"
)

// Scorer scores documents against a query: one score per document, in the
// order given, higher meaning more relevant. A backend that cannot return
// exactly that (a short answer, a duplicate, a NaN) returns an error, never
// a guess.
type Scorer interface {
	Score(ctx context.Context, query string, docs []string) ([]float64, error)
}

// ScorerFunc adapts a function to Scorer.
type ScorerFunc func(ctx context.Context, query string, docs []string) ([]float64, error)

// Score calls f.
func (f ScorerFunc) Score(ctx context.Context, query string, docs []string) ([]float64, error) {
	return f(ctx, query, docs)
}

// Lister is implemented by scorers whose scores only mean something
// relative to the other documents of the same call (a listwise LLM
// ranking): Rerank then passes each query's documents in one call and
// refuses a BatchSize that would split them.
type Lister interface {
	Listwise() bool
}

// DefaultDepth is R2MED's larger rerank depth; its other is 10.
const DefaultDepth = 100

// SafeguardRank is the 1-based rank of a reranking_hybrid list's safeguard
// positive: it follows the RRF top 100.
const SafeguardRank = 101

// Order decides the order of documents with equal scores.
type Order uint8

const (
	// InputOrder keeps the input run's order among equal scores.
	InputOrder Order = iota
	// HashOrder is HAKARI-Bench's: candidates are sorted by
	// sha256("hakari-reranker-candidate-order-v1\0qid\0docid") (then input
	// position) before scoring, and ties keep that order.
	HashOrder
)

// Safeguard says how a reranking_hybrid list's rank-101 safeguard is
// treated. A list is taken to carry one when it has exactly SafeguardRank
// entries; a longer list is an error in the safeguard modes.
type Safeguard uint8

const (
	// Plain treats every list as an ordinary ranking: its first Depth
	// documents are reranked.
	Plain Safeguard = iota
	// KeepSafeguard reranks the safeguard together with the RRF top 100
	// whenever Depth reaches 100, as HAKARI's "reranking" target does;
	// at a smaller depth it lies beyond the depth like any other document.
	KeepSafeguard
	// DropSafeguard removes the safeguard before reranking, as HAKARI's
	// "reranking_without_safeguard" target does.
	DropSafeguard
)

// String names the mode as checkpoint keys and messages record it.
func (s Safeguard) String() string {
	switch s {
	case Plain:
		return "plain"
	case KeepSafeguard:
		return "keep"
	case DropSafeguard:
		return "drop"
	}
	return fmt.Sprintf("Safeguard(%d)", uint8(s))
}

// Options tune Rerank. The zero value reranks the top 100 of every query
// with one Score call per query, one query at a time, ties in input order.
type Options struct {
	// Depth is the number of top documents reranked per query; 0 means
	// DefaultDepth and a negative depth means all of them.
	Depth int
	// KeepTail appends the documents below Depth after the reranked ones,
	// in their input order, with scores below the lowest reranked score.
	// R2MED keeps only the reranked documents (false).
	KeepTail  bool
	Order     Order
	Safeguard Safeguard
	// BatchSize caps the documents per Score call; 0 sends each query's
	// documents in one call (R2MED scores all pairs of a query at once).
	BatchSize int
	// Workers is the number of queries scored at the same time; 0 means 1.
	Workers int
	// Progress, if set, is called after each finished query with the
	// number of queries done and the total. Calls are serialized.
	Progress func(done, total int)
	// Done holds queries already reranked (read back from a checkpoint):
	// their hits are copied to the output and they are not scored again.
	Done ir.Run
	// OnQuery, if set, hears each newly reranked query (to append it to a
	// checkpoint). Calls are serialized; an error stops the rerank.
	OnQuery func(qid string, hits []ir.Hit) error
	// RanksOnly says that the input run's scores only stand for its ranks
	// (a candidate list published without scores): the candidates are
	// passed with RankOnly set, and InsertRank shows their ranks, saying
	// that only ranks are known, instead of the numbers as scores.
	RanksOnly bool
}

// Rerank reorders the top of each query's list in run with s. queries maps
// query id to text and docs looks up a document's text; a query of the run
// without text, or a reranked document docs cannot find, is an error
// (nothing is dropped silently). Queries with an empty list are left out.
func Rerank(ctx context.Context, run ir.Run, queries map[string]string, docs func(id string) (string, bool), s Scorer, opts Options) (ir.Run, error) {
	if opts.Order > HashOrder {
		return nil, fmt.Errorf("rerank: unknown tie order %d", opts.Order)
	}
	if opts.Safeguard > DropSafeguard {
		return nil, fmt.Errorf("rerank: unknown safeguard mode %d", opts.Safeguard)
	}
	if opts.BatchSize < 0 {
		return nil, fmt.Errorf("rerank: batch size must be ≥ 0, got %d", opts.BatchSize)
	}
	if l, ok := s.(Lister); ok && l.Listwise() && opts.BatchSize > 0 {
		return nil, fmt.Errorf("rerank: a listwise reranker ranks each query's documents in one call; use batch size 0, not %d", opts.BatchSize)
	}
	qids := make([]string, 0, len(run))
	for _, qid := range trec.QueryIDs(run) {
		if len(run[qid]) == 0 {
			continue
		}
		if _, ok := queries[qid]; !ok {
			return nil, fmt.Errorf("rerank: query %q of the run has no text; rerank the run against the task it was retrieved for", qid)
		}
		qids = append(qids, qid)
	}
	out := make(ir.Run, len(qids))
	var todo []string
	for _, qid := range qids {
		if hits, ok := opts.Done[qid]; ok {
			trec.RankHits(hits, ir.TiesAsListed) // as rerankQuery leaves a query
			out[qid] = hits
			continue
		}
		todo = append(todo, qid)
	}

	workers := max(opts.Workers, 1)
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(workers)
	var (
		mu   sync.Mutex // guards out, the callbacks and done
		done = len(qids) - len(todo)
	)
	var failed atomic.Bool
	for _, qid := range todo {
		if failed.Load() {
			break
		}
		g.Go(func() error {
			if err := ctx.Err(); err != nil {
				return err // another query failed, or the caller gave up
			}
			hits, err := rerankQuery(ctx, qid, run[qid], queries[qid], docs, s, opts)
			if err != nil {
				failed.Store(true)
				return err
			}
			mu.Lock()
			defer mu.Unlock()
			out[qid] = hits
			done++
			if opts.OnQuery != nil {
				if err := opts.OnQuery(qid, hits); err != nil {
					failed.Store(true)
					return err
				}
			}
			if opts.Progress != nil {
				opts.Progress(done, len(qids))
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return out, nil
}

// Candidates returns the documents of one query's list that Rerank scores
// under opts (before any shuffle), and the tail it leaves unscored.
func Candidates(qid string, hits []ir.Hit, opts Options) (head, tail []ir.Hit, err error) {
	depth := opts.Depth
	if depth == 0 {
		depth = DefaultDepth
	}
	if opts.Safeguard != Plain {
		if len(hits) > SafeguardRank {
			return nil, nil, fmt.Errorf("query %q has %d candidates; a reranking_hybrid list has at most %d (the RRF top %d and one safeguard). Rerank other runs without the safeguard option", qid, len(hits), SafeguardRank, SafeguardRank-1)
		}
		if len(hits) == SafeguardRank {
			switch {
			case opts.Safeguard == DropSafeguard:
				hits = hits[:SafeguardRank-1]
			case depth == SafeguardRank-1:
				depth = SafeguardRank
			}
		}
	}
	if depth < 0 || depth > len(hits) {
		depth = len(hits)
	}
	return hits[:depth], hits[depth:], nil
}

func rerankQuery(ctx context.Context, qid string, hits []ir.Hit, query string, docs func(string) (string, bool), s Scorer, opts Options) ([]ir.Hit, error) {
	head, tail, err := Candidates(qid, hits, opts)
	if err != nil {
		return nil, fmt.Errorf("rerank: %w", err)
	}
	cands := make([]ir.Hit, len(head))
	copy(cands, head)
	rank := make(map[string]int, len(head)) // the input rank, kept through the shuffle
	for i, h := range head {
		if _, dup := rank[h.DocID]; !dup {
			rank[h.DocID] = i + 1
		}
	}
	if opts.Order == HashOrder {
		HashShuffle(qid, cands)
	}
	offered := make([]Candidate, len(cands))
	for i, h := range cands {
		t, ok := docs(h.DocID)
		if !ok {
			return nil, fmt.Errorf("rerank: query %q: document %q is not in the corpus; the run and the corpus must come from the same task", qid, h.DocID)
		}
		offered[i] = Candidate{ID: h.DocID, Text: t, Score: h.Score, Rank: rank[h.DocID], RankOnly: opts.RanksOnly}
	}
	batch := opts.BatchSize
	if batch <= 0 {
		batch = max(len(offered), 1)
	}
	cs, withCands := s.(CandidateScorer)
	scores := make([]float64, 0, len(offered))
	for start := 0; start < len(offered); start += batch {
		end := min(start+batch, len(offered))
		var got []float64
		var err error
		if withCands {
			got, err = cs.ScoreCandidates(ctx, qid, query, offered[start:end])
		} else {
			got, err = s.Score(ctx, query, texts(offered[start:end]))
		}
		if err != nil {
			return nil, fmt.Errorf("rerank: query %q: %w", qid, err)
		}
		if len(got) != end-start {
			return nil, fmt.Errorf("rerank: query %q: the reranker returned %d scores for %d documents", qid, len(got), end-start)
		}
		for i, v := range got {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("rerank: query %q: the reranker scored document %q %v; scores must be finite", qid, cands[start+i].DocID, v)
			}
		}
		scores = append(scores, got...)
	}
	for i := range cands {
		cands[i].Score = scores[i]
	}
	slices.SortStableFunc(cands, func(a, b ir.Hit) int { return cmp.Compare(b.Score, a.Score) })
	out := cands
	if opts.KeepTail && len(tail) > 0 {
		out = append(cands, make([]ir.Hit, len(tail))...)
		low := 0.0
		if len(cands) > 0 {
			low = cands[len(cands)-1].Score
		}
		for i, h := range tail {
			low = below(low)
			out[len(cands)+i] = ir.Hit{DocID: h.DocID, Score: low}
		}
	}
	trec.RankHits(out, ir.TiesAsListed)
	return out, nil
}

// below is a score strictly under s: s−1, or the next float down where
// s is too large for s−1 to differ.
func below(s float64) float64 {
	if n := s - 1; n < s {
		return n
	}
	return math.Nextafter(s, math.Inf(-1))
}

// HashSeed is the string HAKARI-Bench hashes with each candidate to order
// a reranker's input.
const HashSeed = "hakari-reranker-candidate-order-v1"

// HashShuffle orders hits in place as HAKARI-Bench does before scoring:
// by the bytes of sha256(HashSeed + "\0" + qid + "\0" + docid), then by
// input position.
func HashShuffle(qid string, hits []ir.Hit) {
	type keyed struct {
		key [sha256.Size]byte
		hit ir.Hit
	}
	ks := make([]keyed, len(hits))
	for i, h := range hits {
		ks[i] = keyed{sha256.Sum256([]byte(HashSeed + "\x00" + qid + "\x00" + h.DocID)), h}
	}
	slices.SortStableFunc(ks, func(a, b keyed) int { return bytes.Compare(a.key[:], b.key[:]) })
	for i, k := range ks {
		hits[i] = k.hit
	}
}
