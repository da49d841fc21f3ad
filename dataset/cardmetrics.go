package dataset

import (
	"errors"
	"math"
	"slices"
	"strconv"

	"github.com/r2med/r2med/trec"
)

// CandidateSubset names a candidate config and how a task card scores it.
type CandidateSubset struct {
	Name   string // the card's key: bm25, dense, reranking_hybrid
	Config string // the repository config holding the lists
	Label  string
	// TopK is the list length the config was built to, before any
	// safeguard.
	TopK int
	// Safeguard marks lists that may end in one appended positive, at rank
	// TopK+1, when their first TopK hold none (reranking_hybrid's rank-101
	// safeguard).
	Safeguard bool
}

// NanoR2MEDCandidates are the candidate configs of hakari-bench/NanoR2MED
// as its task cards score them (scripts/update_benchmark_task_candidate_
// metadata.py fixes these depths).
var NanoR2MEDCandidates = []CandidateSubset{
	{Name: "bm25", Config: "bm25", Label: "BM25", TopK: 500},
	{Name: "dense", Config: "harrier_oss_v1_270m", Label: "Dense", TopK: 500},
	{Name: "reranking_hybrid", Config: "reranking_hybrid", Label: "Reranking hybrid", TopK: 100, Safeguard: true},
}

// CandidateSource is the card's source of candidate metrics.
const CandidateSource = "dataset_candidate_subset"

// CandidateMetrics is a candidate subset's entry in a HAKARI-Bench task
// card (task_metadata.candidate_subsets), with the card's field names.
// Values are unrounded; Rounded rounds them as the card prints them.
type CandidateMetrics struct {
	Config   string  `json:"config"`
	Label    string  `json:"label"`
	Source   string  `json:"source"`
	TopK     int     `json:"top_k"`
	NDCGAt10 float64 `json:"ndcg_at_10"`
	HitAt10  float64 `json:"hit_at_10"`
	// RecallAt100 is micro-averaged, and so equals RelevantCoverageAt100.
	RecallAt100           float64 `json:"recall_at_100"`
	CandidateCountMin     int     `json:"candidate_count_min"`
	CandidateCountMax     int     `json:"candidate_count_max"`
	CandidateCountMean    float64 `json:"candidate_count_mean"`
	QueryCount            int     `json:"query_count"`
	QueryCoverage         float64 `json:"query_coverage"`
	RelevantCoverageAt100 float64 `json:"relevant_coverage_at_100"`
	// Only for subsets with a safeguard.
	SafeguardPositiveRows *int `json:"safeguard_positive_rows,omitempty"`
	RowsWith101           *int `json:"rows_with_101_candidates,omitempty"`
}

// ScoreCandidates scores candidate lists (query id → document ids, best
// first) against qrels exactly as HAKARI-Bench's task-card script does:
//
//   - The queries are those with a positive judgment (grade > 0), in byte
//     order; a query without a list has an empty one.
//   - ndcg_at_10 and hit_at_10 are their means over those queries of
//     binary-gain nDCG@10 (a positive listed twice gains twice; the ideal
//     is min(positives, 10) positives in a row) and of hit@10.
//   - recall_at_100 and relevant_coverage_at_100 are micro: the distinct
//     positives among each list's first 100 candidates, summed, over all
//     positives. A safeguard is left out: it sits at rank 101 of a
//     TopK-100 list, and for a shorter TopK the candidate after the first
//     TopK of a TopK+1 list is left out likewise.
//   - candidate_count_* describe the list lengths, query_coverage is the
//     share of queries with a non-empty list.
//   - With Safeguard, rows_with_101_candidates counts lists of TopK+1
//     (101) candidates and safeguard_positive_rows those of them whose last
//     candidate is a positive and whose first TopK hold none.
//
// The arithmetic is the script's on CPython 3.12+: C's correctly rounded
// log2 for the discounts, DCG summed in rank order, the ideal DCG and the
// means summed as Python's sum does (Neumaier-compensated), so the
// unrounded values are the card's bit for bit.
func ScoreCandidates(qrels trec.Qrels, lists map[string][]string, sub CandidateSubset) (CandidateMetrics, error) {
	m := CandidateMetrics{Config: sub.Config, Label: sub.Label, Source: CandidateSource, TopK: sub.TopK}
	var qids []string
	for qid, judged := range qrels {
		for _, g := range judged {
			if g > 0 {
				qids = append(qids, qid)
				break
			}
		}
	}
	if len(qids) == 0 {
		return m, errors.New("cannot score candidates without positive judgments")
	}
	slices.Sort(qids)
	recallCut := 100
	var ndcg, hit, count pysum
	covered, relevant, withCandidates := 0, 0, 0
	rows101, safeguarded := 0, 0
	m.CandidateCountMin = math.MaxInt
	for _, qid := range qids {
		judged := qrels[qid]
		isPos := func(doc string) bool { return judged[doc] > 0 }
		positives := 0
		for _, g := range judged {
			if g > 0 {
				positives++
			}
		}
		list := lists[qid]
		n := len(list)
		if n > 0 {
			withCandidates++
		}
		count.add(float64(n))
		m.CandidateCountMin = min(m.CandidateCountMin, n)
		m.CandidateCountMax = max(m.CandidateCountMax, n)

		top10 := list[:min(n, 10)]
		ndcg.add(ndcgAt(top10, isPos, positives, 10))
		if slices.ContainsFunc(top10, isPos) {
			hit.add(1)
		} else {
			hit.add(0)
		}

		cut := min(n, recallCut)
		hasSlot := sub.Safeguard && n == sub.TopK+1
		if hasSlot {
			cut = min(cut, sub.TopK)
		}
		seen := make(map[string]bool, cut)
		for _, doc := range list[:cut] {
			if isPos(doc) && !seen[doc] {
				seen[doc] = true
				covered++
			}
		}
		relevant += positives
		if hasSlot {
			rows101++
			if isPos(list[sub.TopK]) && !slices.ContainsFunc(list[:sub.TopK], isPos) {
				safeguarded++
			}
		}
	}
	nq := float64(len(qids))
	m.NDCGAt10 = ndcg.sum() / nq
	m.HitAt10 = hit.sum() / nq
	if relevant > 0 {
		m.RecallAt100 = float64(covered) / float64(relevant)
	}
	m.RelevantCoverageAt100 = m.RecallAt100
	m.CandidateCountMean = count.sum() / nq
	m.QueryCount = len(qids)
	m.QueryCoverage = float64(withCandidates) / nq
	if sub.Safeguard {
		m.RowsWith101, m.SafeguardPositiveRows = &rows101, &safeguarded
	}
	return m, nil
}

// ndcgAt is the script's ndcg_at_k over an already cut list.
func ndcgAt(list []string, isPos func(string) bool, positives, k int) float64 {
	if positives == 0 {
		return 0
	}
	dcg := 0.0
	for i, doc := range list {
		if isPos(doc) {
			dcg += 1 / pyLog2(i+2)
		}
	}
	var idcg pysum
	for i := 1; i <= min(positives, k); i++ {
		idcg.add(1 / pyLog2(i+1))
	}
	if s := idcg.sum(); s != 0 {
		return dcg / s
	}
	return 0
}

// log2Small holds C's log2(n) for n < 12, correctly rounded as glibc gives
// them (math.Log2 is one unit in the last place off for 3 and 9). The
// card's nDCG@10 needs no more.
var log2Small = [...]float64{2: 1, 3: 1.584962500721156, 4: 2, 5: 2.321928094887362, 6: 2.584962500721156,
	7: 2.807354922057604, 8: 3, 9: 3.169925001442312, 10: 3.321928094887362, 11: 3.4594316186372973}

func pyLog2(n int) float64 {
	if n < len(log2Small) {
		return log2Small[n]
	}
	return math.Log2(float64(n))
}

// pysum is CPython 3.12's sum() of floats: Neumaier's compensated sum.
type pysum struct{ s, c float64 }

func (a *pysum) add(x float64) {
	t := a.s + x
	if math.Abs(a.s) >= math.Abs(x) {
		a.c += (a.s - t) + x
	} else {
		a.c += (x - t) + a.s
	}
	a.s = t
}

func (a *pysum) sum() float64 {
	if a.c != 0 && !math.IsInf(a.c, 0) && !math.IsNaN(a.c) {
		return a.s + a.c
	}
	return a.s
}

// Rounded rounds the metrics as the card prints them: quality and
// coverage to 10 decimals, the mean count to 6, as Python's round does.
func (m CandidateMetrics) Rounded() CandidateMetrics {
	r := m
	for _, f := range []*float64{&r.NDCGAt10, &r.HitAt10, &r.RecallAt100, &r.QueryCoverage, &r.RelevantCoverageAt100} {
		*f = pyRound(*f, 10)
	}
	r.CandidateCountMean = pyRound(r.CandidateCountMean, 6)
	return r
}

// pyRound is Python's round(x, digits) for finite x: the decimal nearest
// the exact binary value, ties to even, which is how strconv formats.
func pyRound(x float64, digits int) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return x
	}
	r, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'f', digits, 64), 64)
	return r
}
