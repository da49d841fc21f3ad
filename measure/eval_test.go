package measure

import (
	"bytes"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/r2med/r2med/ir"
)

// smallQrels and smallRun are worked by hand below.
//
// q1 ranks, by float32 score then document id descending:
//
//	1 d9 3.0          not judged
//	2 d7 2.0          not judged; ties d1 and wins on id (d7 > d1)
//	3 d1 2.0          grade 2
//	4 d4 1.5          grade -1: judged-but-unjudged
//	5 d6 1.0          not judged; d2's 1.0000000001 is 1.0 in float32,
//	6 d2 1.0000000001 grade 1    so the id breaks the tie (d6 > d2)
//	7 d3 0.5          grade 0
//
// d5 (grade 1) is never retrieved. q2 is judged but has no relevant
// document, q3 is retrieved but not judged, q4 is judged but not retrieved.
func smallQrels() ir.Qrels {
	return ir.Qrels{
		"q1": {"d1": 2, "d2": 1, "d3": 0, "d4": -1, "d5": 1},
		"q2": {"d1": 0},
		"q4": {"d1": 1},
	}
}

func smallRun() ir.Run {
	return ir.Run{
		"q1": {
			{DocID: "d3", Score: 0.5},
			{DocID: "d2", Score: 1.0000000001},
			{DocID: "d1", Score: 2},
			{DocID: "d9", Score: 3},
			{DocID: "d6", Score: 1},
			{DocID: "d4", Score: 1.5},
			{DocID: "d7", Score: 2},
		},
		"q2": {{DocID: "d1", Score: 1}, {DocID: "d2", Score: 0.5}},
		"q3": {{DocID: "d1", Score: 1}},
	}
}

const smallSpec = "num_ret num_rel num_rel_ret map Rprec bpref recip_rank ndcg P.1,5,10 recall.5,10 ndcg_cut.1,5 map_cut.5 success.1,5"

func TestEvaluateByHand(t *testing.T) {
	l2, l3, l4, l7 := math.Log2(2), math.Log2(3), math.Log2(4), math.Log2(7)
	idcg := 2/l2 + 1/l3 + 1/l4 // gains 2, 1, 1 ideally ranked
	q1 := map[string]float64{
		"num_ret": 7, "num_rel": 3, "num_rel_ret": 2,
		"map":        (1.0/3 + 2.0/6) / 3,
		"Rprec":      1.0 / 3,
		"bpref":      2.0 / 3, // the one judged non-relevant doc comes after both relevant ones
		"recip_rank": 1.0 / 3,
		"ndcg":       (2/l4 + 1/l7) / idcg,
		"P_1":        0, "P_5": 1.0 / 5, "P_10": 2.0 / 10,
		"recall_5": 1.0 / 3, "recall_10": 2.0 / 3,
		"ndcg_cut_1": 0, "ndcg_cut_5": (2 / l4) / idcg,
		"map_cut_5": (1.0 / 3) / 3,
		"success_1": 0, "success_5": 1,
	}
	q2 := map[string]float64{"num_ret": 2} // everything else 0: nothing is relevant

	res, err := Evaluate(smallQrels(), smallRun(), MustParse(smallSpec), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if ids := queryIDs(res); ids != "q1 q2" {
		t.Fatalf("evaluated queries %q, want q1 q2 (q3 has no judgments, q4 no results)", ids)
	}
	checkQuery(t, res, 0, q1)
	checkQuery(t, res, 1, q2)
	if res.NumQueries != 2 {
		t.Errorf("NumQueries = %d, want 2", res.NumQueries)
	}
	checkAll(t, res, map[string]float64{
		"num_ret": 9, "num_rel": 3, "num_rel_ret": 2, // sums
		"map": q1["map"] / 2, "ndcg": q1["ndcg"] / 2, "P_10": q1["P_10"] / 2,
	})

	// -c: q4 joins the denominator and its relevant document num_rel's sum.
	res, err = Evaluate(smallQrels(), smallRun(), MustParse(smallSpec), Options{Complete: true})
	if err != nil {
		t.Fatal(err)
	}
	if ids := queryIDs(res); ids != "q1 q2" || res.NumQueries != 3 {
		t.Fatalf("-c: queries %q over %d, want q1 q2 over 3", ids, res.NumQueries)
	}
	checkAll(t, res, map[string]float64{
		"num_ret": 9, "num_rel": 4, "num_rel_ret": 2,
		"map": q1["map"] / 3, "bpref": q1["bpref"] / 3, "success_5": 1.0 / 3,
	})
}

func TestEvaluateRelevanceLevel(t *testing.T) {
	// At level 2 only d1 is relevant and d2, d3 and d5 are judged
	// non-relevant; nDCG still gains by grade.
	res, err := Evaluate(smallQrels(), smallRun(), MustParse(smallSpec), Options{RelevanceLevel: 2})
	if err != nil {
		t.Fatal(err)
	}
	l2, l3, l4, l7 := math.Log2(2), math.Log2(3), math.Log2(4), math.Log2(7)
	idcg := 2/l2 + 1/l3 + 1/l4
	checkQuery(t, res, 0, map[string]float64{
		"num_ret": 7, "num_rel": 1, "num_rel_ret": 1,
		"map":        1.0 / 3,
		"Rprec":      0, // the top 1 is d9
		"bpref":      1, // no judged non-relevant document above d1
		"recip_rank": 1.0 / 3,
		"ndcg":       (2/l4 + 1/l7) / idcg, // gains are grades, whatever the level
		"P_1":        0, "P_5": 1.0 / 5, "P_10": 1.0 / 10,
		"recall_5": 1, "recall_10": 1,
		"ndcg_cut_1": 0, "ndcg_cut_5": (2 / l4) / idcg,
		"map_cut_5": 1.0 / 3,
		"success_1": 0, "success_5": 1,
	})
	// trec_eval recounts num_rel under -c as grades above zero, ignoring -l.
	res, err = Evaluate(smallQrels(), smallRun(), MustParse("num_rel"), Options{RelevanceLevel: 2, Complete: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.All[0]; got != 4 {
		t.Errorf("-c -l2 num_rel all = %v, want 4", got)
	}
}

func TestEvaluateBprefCountsJudgedNonrelevantAbove(t *testing.T) {
	qrels := ir.Qrels{"q": {"r1": 1, "r2": 1, "n1": 0, "n2": 0, "n3": 0, "u": -1}}
	run := ir.Run{"q": {
		{DocID: "n1", Score: 6}, {DocID: "x", Score: 5.5}, {DocID: "r1", Score: 5},
		{DocID: "u", Score: 4.5}, {DocID: "n2", Score: 4}, {DocID: "n3", Score: 3}, {DocID: "r2", Score: 2},
	}}
	// R = 2, judged non-relevant = 3. r1 has 1 non-relevant above it, r2 has
	// 3, capped at R: bpref = (1 - 1/2 + 1 - 2/2) / 2. x and u are skipped.
	res, err := Evaluate(qrels, run, MustParse("bpref"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := res.Queries[0].Values[0], 0.25; got != want {
		t.Errorf("bpref = %v, want %v", got, want)
	}
}

func TestEvaluateOrderAndErrors(t *testing.T) {
	res, err := Evaluate(smallQrels(), smallRun(), MustParse("success.1 ndcg map_cut.5 P.5 map num_ret P.5"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range res.Measures {
		names = append(names, m.Name())
	}
	if got, want := strings.Join(names, " "), "num_ret map P_5 ndcg map_cut_5 success_1"; got != want {
		t.Errorf("measure order %q, want trec_eval's table order %q", got, want)
	}
	if i := res.Index(Measure{Family: P, Cutoff: 5}); i != 2 {
		t.Errorf("Index(P.5) = %d, want 2", i)
	}
	if i := res.Index(Measure{Family: P, Cutoff: 10}); i != -1 {
		t.Errorf("Index(P.10) = %d, want -1", i)
	}

	bad := []struct {
		name  string
		qrels ir.Qrels
		run   ir.Run
		ms    []Measure
		opt   Options
	}{
		{"mixed kinds", smallQrels(), smallRun(), MustParse("map ndcg@10"), Options{}},
		{"missing cutoff", smallQrels(), smallRun(), []Measure{{Family: P}}, Options{}},
		{"stray cutoff", smallQrels(), smallRun(), []Measure{{Family: MAP, Cutoff: 5}}, Options{}},
		{"unknown family", smallQrels(), smallRun(), []Measure{{Family: 200}}, Options{}},
		{"no measures", smallQrels(), smallRun(), nil, Options{}},
		{"negative level", smallQrels(), smallRun(), MustParse("map"), Options{RelevanceLevel: -1}},
		{"NaN score", smallQrels(), ir.Run{"q1": {{DocID: "d1", Score: math.NaN()}}}, MustParse("map"), Options{}},
	}
	for _, c := range bad {
		if _, err := Evaluate(c.qrels, c.run, c.ms, c.opt); err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
	if _, err := Evaluate(smallQrels(), ir.Run{"q9": {{DocID: "d1", Score: 1}}}, MustParse("map"), Options{}); !errors.Is(err, ErrNoQueries) {
		t.Errorf("disjoint query ids: err = %v, want ErrNoQueries", err)
	}
}

func TestEvaluateEmptyRanking(t *testing.T) {
	// A query listed with no documents (possible in memory, not in a file)
	// is evaluated as retrieving nothing, as pytrec_eval does.
	res, err := Evaluate(smallQrels(), ir.Run{"q1": nil}, MustParse("num_ret num_rel map ndcg_cut.5 P.5"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkQuery(t, res, 0, map[string]float64{"num_ret": 0, "num_rel": 3})
}

func TestEvaluateParallelMatchesSerial(t *testing.T) {
	qrels, run := synthetic(500, 200, 7)
	ms := MustParse("map bpref ndcg P.10 ndcg_cut.10,100 recall.100")
	res, err := Evaluate(qrels, run, ms, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Query by query, each alone, must give the same bits.
	for i, q := range res.Queries {
		one, err := Evaluate(qrels, ir.Run{q.ID: run[q.ID]}, ms, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for j := range q.Values {
			if math.Float64bits(q.Values[j]) != math.Float64bits(one.Queries[0].Values[j]) {
				t.Fatalf("query %d %s: %v in the batch, %v alone", i, res.Measures[j].Name(), q.Values[j], one.Queries[0].Values[j])
			}
		}
	}
}

func TestWriteTrecEval(t *testing.T) {
	res := &Result{
		Measures: MustParse("num_ret P.5 ndcg_cut.10 map_cut.1000"),
		Queries: []QueryResult{
			{ID: "q1", Values: []float64{7, 0.03125, 0.84375, 0.00005}},
		},
		All:        []float64{12345, 1.0 / 3, 0.99995, 0},
		NumQueries: 1,
	}
	// The digits are what glibc's printf("%6.4f") gives for these exact
	// binary values: ties go to even, 0.00005 and 0.99995 lie above theirs.
	want := "" +
		"num_ret               \tq1\t7\n" +
		"P_5                   \tq1\t0.0312\n" +
		"ndcg_cut_10           \tq1\t0.8438\n" +
		"map_cut_1000          \tq1\t0.0001\n" +
		"num_ret               \tall\t12345\n" +
		"P_5                   \tall\t0.3333\n" +
		"ndcg_cut_10           \tall\t1.0000\n" +
		"map_cut_1000          \tall\t0.0000\n"
	var b bytes.Buffer
	if err := WriteTrecEval(&b, res, true); err != nil {
		t.Fatal(err)
	}
	if d := firstDiff(b.String(), want); d != "" {
		t.Error(d)
	}
	b.Reset()
	if err := WriteTrecEval(&b, res, false); err != nil {
		t.Fatal(err)
	}
	if got := b.String(); got != want[strings.Index(want, "num_ret               \tall"):] {
		t.Errorf("without per-query lines:\n%s", got)
	}
}

func queryIDs(res *Result) string {
	var ids []string
	for _, q := range res.Queries {
		ids = append(ids, q.ID)
	}
	return strings.Join(ids, " ")
}

// checkQuery compares query i's values with want, by measure name; measures
// not in want must be 0.
func checkQuery(t *testing.T, res *Result, i int, want map[string]float64) {
	t.Helper()
	q := res.Queries[i]
	for j, m := range res.Measures {
		if got, w := q.Values[j], want[m.Name()]; !approxEqual(got, w) {
			t.Errorf("%s %s = %v, want %v", q.ID, m.Name(), got, w)
		}
	}
}

func checkAll(t *testing.T, res *Result, want map[string]float64) {
	t.Helper()
	for name, w := range want {
		i := slicesIndexName(res, name)
		if i < 0 {
			t.Fatalf("%s not evaluated", name)
		}
		if got := res.All[i]; !approxEqual(got, w) {
			t.Errorf("all %s = %v, want %v", name, got, w)
		}
	}
}

func slicesIndexName(res *Result, name string) int {
	for i, m := range res.Measures {
		if m.Name() == name {
			return i
		}
	}
	return -1
}

// approxEqual allows for the different order in which the hand computation adds
// its terms; exactness is the reference tests' job.
func approxEqual(a, b float64) bool { return math.Abs(a-b) <= 1e-12 }

func TestRadixSortScore(t *testing.T) {
	for _, n := range []int{1, 2, 64, 1000} {
		keys := make([]uint64, n)
		seed := uint64(n)
		for i := range keys {
			seed = seed*6364136223846793005 + 1442695040888963407
			// Few distinct scores, spread over all four bytes, so that ties
			// and skipped passes both occur.
			keys[i] = uint64(descending(float32(seed>>60)*1e3-7e3))<<32 | uint64(i)
		}
		want := slices.Clone(keys)
		slices.Sort(want)
		got := radixSortScore(slices.Clone(keys), make([]uint64, n))
		if !slices.Equal(got, want) {
			t.Errorf("n=%d: radix order differs from a full sort", n)
		}
	}
	if !(descending(2) < descending(1) && descending(1) < descending(0) &&
		descending(0) == descending(float32(math.Copysign(0, -1))) && descending(0) < descending(-1) &&
		descending(-1) < descending(-2) && descending(float32(math.Inf(1))) < descending(2)) {
		t.Error("descending does not reverse the order of scores")
	}
}
