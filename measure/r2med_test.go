package measure

import (
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/r2med/r2med/trec"
)

func TestRound5(t *testing.T) {
	// Expected values are CPython's round(x, 5).
	cases := []struct{ x, want float64 }{
		{0.123455, 0.12345},     // stored just below the tie
		{0.123445, 0.12344},     // likewise
		{0.285715, 0.28571},     // x*1e5 rounds up to 28571.5 in float64, so math.Round would give 0.28572
		{0.000015, 0.00002},     // stored just above the tie
		{2.675e-5, 0.00003},     //
		{5e-06, 0.00001},        //
		{1.000005, 1.00001},     //
		{0.999995, 0.99999},     //
		{0.9999950000000001, 1}, // one ulp up crosses the tie
		{0.60305, 0.60305},
		{0.1234549999999999, 0.12345},
		{-0.000001, math.Copysign(0, -1)},
		{0, 0},
	}
	naiveWrong := 0
	for _, c := range cases {
		got := Round5(c.x)
		if math.Float64bits(got) != math.Float64bits(c.want) {
			t.Errorf("Round5(%v) = %v, want %v", c.x, got, c.want)
		}
		if math.Round(c.x*1e5)/1e5 != c.want {
			naiveWrong++
		}
	}
	if naiveWrong == 0 {
		t.Error("no case separates Round5 from math.Round(x*1e5)/1e5")
	}
	for _, x := range []float64{math.Inf(1), math.Inf(-1)} {
		if Round5(x) != x {
			t.Errorf("Round5(%v) = %v", x, Round5(x))
		}
	}
	if !math.IsNaN(Round5(math.NaN())) {
		t.Error("Round5(NaN) is not NaN")
	}
}

func TestEvaluateR2MED(t *testing.T) {
	res, err := EvaluateR2MED(smallQrels(), smallRun())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Scores) != 21 || len(res.Measures) != 21 {
		t.Fatalf("%d scores over %d measures, want 4 families × 5 cutoffs + mrr", len(res.Scores), len(res.Measures))
	}
	// q1's reciprocal rank is 1/3, q2's 0, and q4, judged but not in the
	// run, counts 0: the mean is over all 3 judged queries (R2MED's rule).
	if got := res.Scores["mrr"]; got != 0.11111 || res.NumQueries != 3 {
		t.Errorf("mrr = %v over %d queries, want 0.11111 over 3", got, res.NumQueries)
	}
	if got := res.Scores["precision_at_10"]; got != 0.06667 {
		t.Errorf("precision_at_10 = %v, want 0.06667", got)
	}
	if _, ok := res.Scores["ndcg_at_25"]; !ok {
		t.Errorf("no ndcg_at_25 in %v", res.Scores)
	}
	dense, err := EvaluateR2MED(smallQrels(), smallRun(), 1, 3, 5, 10, 100)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := dense.Scores["recall_at_3"]; !ok || len(dense.Scores) != 21 {
		t.Errorf("BEIR cutoffs: %v", dense.Scores)
	}
	if got := R2MEDKey(Measure{Family: BPref}); got != "bpref" {
		t.Errorf("R2MEDKey(bpref) = %q", got)
	}
}

// TestR2MEDMatchesReference checks R2MED's numbers for the NFCorpus BM25
// run against trec_eval's printed means (4 decimals).
func TestR2MEDMatchesReference(t *testing.T) {
	qrels, err := trec.ReadQrelsFile(refPath(t, "nfcorpus.qrels"))
	if err != nil {
		t.Fatal(err)
	}
	run, err := trec.ReadRunFile(refPath(t, "nfcorpus.bm25.run"))
	if err != nil {
		t.Fatal(err)
	}
	ref := readAllRow(t, "nfcorpus.bm25.trec_eval")
	res, err := EvaluateR2MED(qrels, run)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range res.Measures {
		want, ok := ref[m.Name()]
		if !ok {
			t.Fatalf("%s missing from the reference", m.Name())
		}
		if got := res.Scores[R2MEDKey(m)]; math.Abs(got-want) > 0.00005+0.000005 {
			t.Errorf("%s = %v, trec_eval printed %v", R2MEDKey(m), got, want)
		}
	}
}

func readAllRow(t *testing.T, name string) map[string]float64 {
	t.Helper()
	data, err := readRef(t, name)
	if err != nil {
		t.Fatal(err)
	}
	row := map[string]float64{}
	for line := range strings.Lines(data) {
		f := strings.Split(strings.TrimSuffix(line, "\n"), "\t")
		if len(f) == 3 && f[1] == "all" {
			v, err := strconv.ParseFloat(f[2], 64)
			if err != nil {
				t.Fatal(err)
			}
			row[strings.TrimSpace(f[0])] = v
		}
	}
	return row
}
