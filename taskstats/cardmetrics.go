package taskstats

import (
	"errors"
	"math"
	"slices"

	"github.com/r2med/r2med/internal/pynum"
	"github.com/r2med/r2med/ir"
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
func ScoreCandidates(qrels ir.Qrels, lists map[string][]string, sub CandidateSubset) (CandidateMetrics, error) {
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
	var ndcg, hit, count pynum.Sum
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
		count.Add(float64(n))
		m.CandidateCountMin = min(m.CandidateCountMin, n)
		m.CandidateCountMax = max(m.CandidateCountMax, n)

		top10 := list[:min(n, 10)]
		ndcg.Add(ndcgAt(top10, isPos, positives, 10))
		if slices.ContainsFunc(top10, isPos) {
			hit.Add(1)
		} else {
			hit.Add(0)
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
	m.NDCGAt10 = ndcg.Value() / nq
	m.HitAt10 = hit.Value() / nq
	if relevant > 0 {
		m.RecallAt100 = float64(covered) / float64(relevant)
	}
	m.RelevantCoverageAt100 = m.RecallAt100
	m.CandidateCountMean = count.Value() / nq
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
			dcg += 1 / pynum.Log2(i+2)
		}
	}
	var idcg pynum.Sum
	for i := 1; i <= min(positives, k); i++ {
		idcg.Add(1 / pynum.Log2(i+1))
	}
	if s := idcg.Value(); s != 0 {
		return dcg / s
	}
	return 0
}

// Rounded rounds the metrics as the card prints them: quality and
// coverage to 10 decimals, the mean count to 6, as Python's round does.
func (m CandidateMetrics) Rounded() CandidateMetrics {
	r := m
	for _, f := range []*float64{&r.NDCGAt10, &r.HitAt10, &r.RecallAt100, &r.QueryCoverage, &r.RelevantCoverageAt100} {
		*f = pynum.Round(*f, 10)
	}
	r.CandidateCountMean = pynum.Round(r.CandidateCountMean, 6)
	return r
}
