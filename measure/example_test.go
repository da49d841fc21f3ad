package measure_test

import (
	"fmt"
	"os"

	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/measure"
)

// Evaluate scores a run as trec_eval 9.0.8 does: by score (as float32),
// ties by document id descending, the list order ignored. Means are over
// the queries the run answers unless Complete (trec_eval's -c) is set,
// which counts a judged query the run lacks as 0: R2MED's and
// pytrec_eval's convention when every judged query is evaluated.
func ExampleEvaluate() {
	qrels := ir.Qrels{
		"q1": {"d1": 2, "d3": 1},
		"q2": {"d2": 1},
	}
	run := ir.Run{"q1": {{DocID: "d3", Score: 2.5}, {DocID: "d1", Score: 1.5}, {DocID: "d2", Score: 0.5}}}
	ndcg, rr := measure.MustParse("ndcg_cut.10")[0], measure.MustParse("recip_rank")[0]
	for _, complete := range []bool{false, true} {
		res, err := measure.Evaluate(qrels, run, []measure.Measure{ndcg, rr}, measure.Options{Complete: complete})
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("complete=%v over %d queries: ndcg_cut_10 %.4f, recip_rank %.4f\n", complete, res.NumQueries, res.All[res.Index(ndcg)], res.All[res.Index(rr)])
	}
	// Output:
	// complete=false over 1 queries: ndcg_cut_10 0.8597, recip_rank 1.0000
	// complete=true over 2 queries: ndcg_cut_10 0.4299, recip_rank 0.5000
}

// Parse takes trec_eval's -m names, R2MED's result keys and HAKARI-Bench's
// family@k; "@k" always means HAKARI's definition (list order, binary gain).
func ExampleParse() {
	for _, spec := range []string{"ndcg_cut.10", "ndcg_at_10", "P.5,10", "ndcg@10"} {
		ms, err := measure.Parse(spec)
		if err != nil {
			fmt.Println(err)
			continue
		}
		for _, m := range ms {
			fmt.Printf("%-12s → %s (HAKARI %v)\n", spec, m, m.Family.Hakari())
		}
	}
	// Output:
	// ndcg_cut.10  → ndcg_cut.10 (HAKARI false)
	// ndcg_at_10   → ndcg_cut.10 (HAKARI false)
	// P.5,10       → P.5 (HAKARI false)
	// P.5,10       → P.10 (HAKARI false)
	// ndcg@10      → ndcg@10 (HAKARI true)
}

// WriteTrecEval prints what "trec_eval -q -m ..." prints, byte for byte.
func ExampleWriteTrecEval() {
	qrels := ir.Qrels{"q1": {"d1": 1}}
	run := ir.Run{"q1": {{DocID: "d2", Score: 3}, {DocID: "d1", Score: 2}}}
	res, _ := measure.Evaluate(qrels, run, measure.MustParse("map P.1,2"), measure.Options{})
	measure.WriteTrecEval(os.Stdout, res, false)
	// Output:
	// map                   	all	0.5000
	// P_1                   	all	0.0000
	// P_2                   	all	0.5000
}

// trec_eval's official set adds runid, num_q and gm_map, which it prints
// in the summary only, and iprec_at_recall, interpolated precision at
// recall levels (Measure.Cutoff holds the level in hundredths).
func ExampleWriteTrecEval_official() {
	qrels := ir.Qrels{"q1": {"d1": 1, "d2": 1}, "q2": {"d9": 1}}
	run := ir.Run{
		"q1": {{DocID: "d1", Score: 3}, {DocID: "d5", Score: 2}, {DocID: "d2", Score: 1}},
		"q2": {{DocID: "d7", Score: 1}},
	}
	ms := measure.MustParse("runid num_q map gm_map iprec_at_recall.0.5,1")
	res, err := measure.Evaluate(qrels, run, ms, measure.Options{RunID: "bm25"})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := measure.WriteTrecEval(os.Stdout, res, true); err != nil {
		fmt.Println(err)
	}
	// Output:
	// map                   	q1	0.8333
	// iprec_at_recall_0.50  	q1	1.0000
	// iprec_at_recall_1.00  	q1	0.6667
	// map                   	q2	0.0000
	// iprec_at_recall_0.50  	q2	0.0000
	// iprec_at_recall_1.00  	q2	0.0000
	// runid                 	all	bm25
	// num_q                 	all	2
	// map                   	all	0.4167
	// gm_map                	all	0.0029
	// iprec_at_recall_0.50  	all	0.5000
	// iprec_at_recall_1.00  	all	0.3333
}

// Measures with free parameters keep them as given, which trec_eval
// prints after the name: utility's coefficients, ndcg's gains per grade.
// relstring is a text per query (a document outside the qrels is '-', one
// judged below 0 '.'), which trec_eval prints per query only.
func ExampleWriteTrecEval_params() {
	qrels := ir.Qrels{"q1": {"d1": 2, "d2": 1, "d3": 0, "d4": -1}}
	run := ir.Run{"q1": {{DocID: "d3", Score: 4}, {DocID: "d4", Score: 3}, {DocID: "d9", Score: 2}, {DocID: "d1", Score: 1}}}
	ms := measure.MustParse("relstring infAP utility.2,-1,0,0 ndcg.1=0,2=1")
	res, err := measure.Evaluate(qrels, run, ms, measure.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := measure.WriteTrecEval(os.Stdout, res, true); err != nil {
		fmt.Println(err)
	}
	// Output:
	// relstring             	q1	'0.-2'
	// infAP                 	q1	0.1250
	// utility_2,-1,0,0      	q1	-1.0000
	// ndcg_1=0,2=1          	q1	0.4307
	// infAP                 	all	0.1250
	// utility_2,-1,0,0      	all	-1.0000
	// ndcg_1=0,2=1          	all	0.4307
}
