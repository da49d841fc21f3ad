package measure

import (
	"strconv"

	"github.com/r2med/r2med/internal/pynum"
	"github.com/r2med/r2med/ir"
)

// R2MEDCutoffs are the rank cutoffs R2MED's BM25, GAR and reranker
// evaluations report. Its dense retrievers go through BEIR, which uses
// 1, 3, 5, 10 and 100 instead.
var R2MEDCutoffs = []int{1, 10, 25, 50, 100}

// BrightCutoffs are the rank cutoffs BRIGHT's evaluation reports
// (retrievers.py, calculate_retrieval_metrics: k_values 1, 5, 10, 25, 50,
// 100, with recip_rank as MRR), the same measures as R2MED's under the
// same keys, means rounded to five decimals alike.
var BrightCutoffs = []int{1, 5, 10, 25, 50, 100}

// R2MEDMeasures returns R2MED's metric set: ndcg_cut, map_cut, recall and P
// at each cutoff (R2MEDCutoffs when none are given), plus recip_rank.
func R2MEDMeasures(cutoffs ...int) []Measure {
	if len(cutoffs) == 0 {
		cutoffs = R2MEDCutoffs
	}
	ms := []Measure{{Family: RecipRank}}
	for _, f := range []Family{NDCGCut, MAPCut, Recall, P} {
		for _, k := range cutoffs {
			ms = append(ms, Measure{Family: f, Cutoff: k})
		}
	}
	return ms
}

// R2MEDResult is an evaluation with R2MED's summary numbers.
type R2MEDResult struct {
	*Result
	// Scores maps R2MED's result keys (ndcg_at_10, map_at_10, recall_at_10,
	// precision_at_10, ..., mrr) to what R2MED stores under them: the mean
	// over every judged query (MeanOverJudged), rounded by Round5.
	Scores map[string]float64
}

// MeanOverJudged names the rule EvaluateR2MED averages by, as result
// files and summaries state it (results.R2MED.MeanOver).
const MeanOverJudged = "all judged queries"

// EvaluateR2MED computes R2MED's metric set (see R2MEDMeasures) in one pass.
// Its means are over every judged query (trec_eval's -c): a judged query
// without results counts 0. That is R2MED's convention for its result
// files, whose runs rank documents for every query (gensim's BM25 scores
// the whole corpus, zeros included), so pytrec_eval, averaged as R2MED's
// calculate_retrieval_metrics averages it, returns every judged query.
// Like R2MED it sums the queries one by one; R2MED sums in pytrec_eval's
// output order and this in query-id order, which can change only the last
// bit of a mean.
func EvaluateR2MED(qrels ir.Qrels, run ir.Run, cutoffs ...int) (*R2MEDResult, error) {
	res, err := Evaluate(qrels, run, R2MEDMeasures(cutoffs...), Options{Complete: true})
	if err != nil {
		return nil, err
	}
	scores := make(map[string]float64, len(res.Measures))
	for j, m := range res.Measures {
		scores[R2MEDKey(m)] = Round5(res.All[j])
	}
	return &R2MEDResult{Result: res, Scores: scores}, nil
}

// Mean is the mean stored under R2MED's key ("ndcg_at_10", "mrr") before
// Round5, what trec_eval -c prints to four decimals: a summary printed
// from it agrees with trec_eval's digits, where one printed from the
// rounded Scores can differ in the last (0.15465 → 0.1547 for trec_eval's
// 0.1546).
func (r *R2MEDResult) Mean(key string) (float64, bool) {
	for j, m := range r.Measures {
		if R2MEDKey(m) == key {
			return r.All[j], true
		}
	}
	return 0, false
}

// R2MEDKey is the key R2MED's result files store m under ("ndcg_at_10",
// "mrr"), or m.Name() for measures R2MED does not report.
func R2MEDKey(m Measure) string {
	if !m.Family.valid() || m.Family.Hakari() || families[m.Family].r2medKey == "" {
		return m.Name()
	}
	if m.Family == RecipRank {
		return "mrr"
	}
	return families[m.Family].r2medKey + "_at_" + strconv.Itoa(m.Cutoff)
}

// Round5 is Python's round(x, 5), as R2MED rounds every score it writes:
// the exact binary value of x rounded to five decimals, ties to even, then
// read back as the nearest float64 (pynum.Round). It is not
// math.Round(x*1e5)/1e5, which rounds the already-rounded product.
func Round5(x float64) float64 { return pynum.Round(x, 5) }
