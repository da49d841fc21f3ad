package measure

import (
	"math"
	"testing"

	"github.com/r2med/r2med/ir"
)

// In h1 the list order contradicts the scores, a positive is listed twice,
// and d is judged relevant at grade 1 but c only at 0:
//
//	rank 1 x   miss
//	rank 2 a   positive
//	rank 3 a   positive again (a duplicate)
//	rank 4 c   grade 0: not a positive
//	rank 5 b   positive
//	rank 6 y   miss
//	rank 7 d   positive
//
// h1 has 3 positives (a, b, d). h2 is retrieved but not judged; h3 is
// judged but not retrieved.
func hakariFixture() (ir.Qrels, ir.Run) {
	qrels := ir.Qrels{
		"h1": {"a": 1, "b": 2, "c": 0, "d": 1},
		"h3": {"a": 1},
	}
	run := ir.Run{
		"h1": {
			{DocID: "x", Score: 9}, {DocID: "a", Score: 1}, {DocID: "a", Score: 1}, {DocID: "c", Score: 5},
			{DocID: "b", Score: 0}, {DocID: "y", Score: 3}, {DocID: "d", Score: 0},
		},
		"h2": {{DocID: "a", Score: 1}},
	}
	return qrels, run
}

func TestHakariByHand(t *testing.T) {
	qrels, run := hakariFixture()
	ms := MustParse("hit@1 acc@2 precision@5 recall@5 recall@10 mrr@1 mrr@5 ndcg@5 ndcg@2 map@2 map@5")
	res, err := Evaluate(qrels, run, ms, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if ids := queryIDs(res); ids != "h1 h2" || res.NumQueries != 2 {
		t.Fatalf("queries %q over %d, want every run query: h1 h2 over 2", ids, res.NumQueries)
	}
	l3, l4, l6 := math.Log2(3), math.Log2(4), math.Log2(6)
	h1 := map[string]float64{
		"hit@1":       0,
		"hit@2":       1,
		"precision@5": 2.0 / 5, // a and b, a counted once
		"recall@5":    2.0 / 3,
		"recall@10":   1,
		"mrr@1":       0,
		"mrr@5":       1.0 / 2,
		"ndcg@5":      (1/l3 + 1/l4 + 1/l6) / (1 + 1/l3 + 1/l4), // the duplicate gains again
		"ndcg@2":      (1 / l3) / (1 + 1/l3),
		"map@2":       (1.0 / 2) / 2, // divided by min(R, k) = 2, not R = 3
		"map@5":       (1.0/2 + 2.0/3 + 3.0/5) / 3,
	}
	checkQuery(t, res, 0, h1)
	checkQuery(t, res, 1, nil) // no positives: every measure 0
	for j, m := range res.Measures {
		if got, want := res.All[j], h1[m.Name()]/2; !approxEqual(got, want) {
			t.Errorf("mean %s = %v, want %v (h2 counts as 0)", m.Name(), got, want)
		}
	}

	res, err = Evaluate(qrels, run, ms, Options{Complete: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.NumQueries != 3 || !approxEqual(res.All[res.Index(Measure{Family: HakariMAP, Cutoff: 5})], h1["map@5"]/3) {
		t.Errorf("Complete: mean over %d queries, map@5 %v; want 3 and %v", res.NumQueries, res.All[res.Index(Measure{Family: HakariMAP, Cutoff: 5})], h1["map@5"]/3)
	}
}

func TestHakariIgnoresScoresTrecIgnoresOrder(t *testing.T) {
	qrels := ir.Qrels{"q": {"rel": 1}}
	// Listed first, scored last.
	run := ir.Run{"q": {{DocID: "rel", Score: 0}, {DocID: "other", Score: 1}}}
	h, err := Evaluate(qrels, run, MustParse("mrr@10"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := Evaluate(qrels, run, MustParse("recip_rank"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if h.All[0] != 1 || r.All[0] != 0.5 {
		t.Errorf("HAKARI mrr@10 = %v (want 1, list order), trec_eval recip_rank = %v (want 0.5, score order)", h.All[0], r.All[0])
	}
}

func TestHakariIdealLongerThanRanking(t *testing.T) {
	// 4 positives, 1 retrieved: the ideal DCG still has min(R,k) = 3 terms.
	qrels := ir.Qrels{"q": {"a": 1, "b": 1, "c": 1, "d": 1}}
	run := ir.Run{"q": {{DocID: "a", Score: 1}}}
	res, err := Evaluate(qrels, run, MustParse("ndcg@3"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := res.All[0], 1/(1+1/math.Log2(3)+1/math.Log2(4)); !approxEqual(got, want) {
		t.Errorf("ndcg@3 = %v, want %v", got, want)
	}
}

func TestHakariEmptyRun(t *testing.T) {
	qrels, _ := hakariFixture()
	res, err := Evaluate(qrels, ir.Run{}, MustParse("ndcg@10"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.NumQueries != 0 || res.All[0] != 0 || len(res.Queries) != 0 {
		t.Errorf("empty run: %+v", res)
	}
}
