package mteb

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"github.com/r2med/r2med/internal/pynum"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/measure"
)

// Evaluate scores a run as MTEB's retrieval evaluator does
// (mteb/_evaluators/retrieval_metrics.py, calculate_retrieval_scores) at
// its cutoffs (Cutoffs), under its keys, rounded as its files hold them:
// ndcg_at_k, map_at_k, recall_at_k and precision_at_k are pytrec_eval's
// ndcg_cut, map_cut, recall and P (trec_eval's measures, which package
// measure computes byte for byte), their means rounded to five decimals;
// mrr_at_k is MTEB's own MRR, the reciprocal rank of the first document
// judged above 0 among each query's top k, the run sorted by score and
// then document id, both descending, as pytrec_eval orders ties (mteb
// ≥ 2.18.19, PR #5136; earlier versions kept tied documents in the order
// the search returned them), its mean unrounded and written to six
// decimals (TaskResult.to_disk). See testdata/FACTS.md. Means are over every judged query, a query without results
// counting 0, as R2MED's are; MTEB's runs rank every query. Queries the
// run ranks but nobody judged are left out, as pytrec_eval leaves them.
func Evaluate(qrels ir.Qrels, run ir.Run) (map[string]float64, error) {
	var trec, mrr []measure.Measure
	for _, k := range Cutoffs {
		for _, f := range []measure.Family{measure.NDCGCut, measure.MAPCut, measure.Recall, measure.P} {
			trec = append(trec, measure.Measure{Family: f, Cutoff: k})
		}
		mrr = append(mrr, measure.Measure{Family: measure.HakariMRR, Cutoff: k})
	}
	out := map[string]float64{}
	ev, err := measure.Evaluate(qrels, run, trec, measure.Options{Complete: true})
	if err != nil {
		return nil, err
	}
	for i, m := range ev.Measures {
		out[measure.R2MEDKey(m)] = pynum.Round(ev.All[i], 5)
	}
	judged := make(ir.Run, len(run))
	for qid, hits := range run {
		if _, ok := qrels[qid]; ok {
			sorted := slices.Clone(hits)
			slices.SortStableFunc(sorted, func(a, b ir.Hit) int {
				if c := cmp.Compare(b.Score, a.Score); c != 0 {
					return c
				}
				return strings.Compare(b.DocID, a.DocID)
			})
			judged[qid] = sorted
		}
	}
	ev, err = measure.Evaluate(qrels, judged, mrr, measure.Options{Complete: true})
	if err != nil {
		return nil, err
	}
	for i, m := range ev.Measures {
		out["mrr_at_"+strconv.Itoa(m.Cutoff)] = pynum.Round(ev.All[i], 6)
	}
	return out, nil
}
