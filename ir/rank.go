package ir

import (
	"math"
	"slices"
	"strconv"
	"strings"
)

// Ties says which order hits with equal scores are in: the one rule by
// which every ranking r2med writes or evaluates is made to mean the same
// thing to every evaluator.
//
// trec_eval 9.0.8 — and pytrec_eval, which embeds it, ranx, and r2med's
// measure, which imitate it — ignores the rank column and the order of the
// lines: it reads each score into a C float (float32) and ranks by that
// score descending, equal float32 scores by document id descending in byte
// order. A run whose float32 scores tie therefore means that order, not
// the order it lists them in. Rank makes the two agree.
type Ties uint8

const (
	// TiesByDocID is trec_eval's reading of scores: equal float32 scores
	// carry no order of their own and rank by document id descending. It
	// is the rule for first-stage scorers (BM25, dense, a Weaviate
	// collection, an index file) and for run files read from disk, whose
	// evaluated numbers (R2MED's published ones among them) were computed
	// that way.
	TiesByDocID Ties = iota
	// TiesAsListed takes the list order as the ranking: equal scores keep
	// the order they are listed in. It is the rule for stages whose order
	// is their output — a reranker (ties in first-stage order), a fusion
	// with its own tie order, a published candidate list.
	TiesAsListed
)

// String names the rule as documents and messages do.
func (t Ties) String() string {
	switch t {
	case TiesByDocID:
		return "by doc id"
	case TiesAsListed:
		return "as listed"
	}
	return "Ties(" + strconv.Itoa(int(t)) + ")"
}

// ByScore orders two hits as trec_eval ranks them: float32 score
// descending (−0 and +0 equal, as C compares them), then document id
// descending in byte order. Sorting with it gives the ranking trec_eval
// reads from a run, whatever order it lists the hits in.
func ByScore(a, b Hit) int {
	sa, sb := float32(a.Score), float32(b.Score)
	switch {
	case sa > sb:
		return -1
	case sa < sb:
		return 1
	}
	return strings.Compare(b.DocID, a.DocID)
}

// Rank makes hits a ranking that every evaluator reads the same way, in
// place: with TiesByDocID it first sorts them as trec_eval ranks them
// (ByScore, stably); then, with either rule, walking down the list, a hit
// whose float32 score is not below the one before it is given the next
// float32 below that one (math.Nextafter32 towards −∞). Afterwards the
// float32 scores strictly decrease along the list, so trec_eval,
// pytrec_eval, ranx and r2med all rank the hits in list order, and a rank
// column written from the list agrees with them.
//
// The change is the least that does it: a list whose float32 scores
// already strictly decrease is left bit for bit as it is (float64 scores
// that differ only below float32 precision stay as they are too), and a
// tied hit moves one float32 step below its predecessor, so a run of n
// equal scores spans n−1 steps (about n × 6e-8 relative). Every score that
// is changed becomes a float32, which the TREC writer prints exactly.
// −0 and +0 are equal, as in C, so a −0 after a +0 steps down to the
// smallest negative denormal; denormals step like any other float32. NaN
// and infinite scores are refused where runs are read and written
// (trec.ReadRun, trec.WriteRun, rerank.Rerank), never ranked here. A
// float64 beyond float32's range reads as ±Inf in float32, as trec_eval
// reads it: a tie at +Inf steps down to the largest finite float32, and
// one at −Inf cannot step (trec.WriteRun refuses it).
func Rank(hits []Hit, t Ties) {
	if t == TiesByDocID && !slices.IsSortedFunc(hits, ByScore) {
		slices.SortStableFunc(hits, ByScore)
	}
	for i := 1; i < len(hits); i++ {
		prev := float32(hits[i-1].Score)
		if float32(hits[i].Score) >= prev {
			hits[i].Score = float64(math.Nextafter32(prev, float32(math.Inf(-1))))
		}
	}
}

// Rank ranks every query's hits by Rank's rule.
func (r Run) Rank(t Ties) {
	for _, hits := range r {
		Rank(hits, t)
	}
}

// Cut keeps the first k hits of every query's list.
func (r Run) Cut(k int) {
	for qid, hits := range r {
		if len(hits) > k {
			r[qid] = hits[:k]
		}
	}
}

// TieAt returns the index of the first hit whose float32 score is not
// strictly below the one before it, or −1 when the scores strictly
// decrease: a list Rank has made, which every evaluator reads in list
// order.
func TieAt(hits []Hit) int {
	for i := 1; i < len(hits); i++ {
		if !(float32(hits[i].Score) < float32(hits[i-1].Score)) {
			return i
		}
	}
	return -1
}
