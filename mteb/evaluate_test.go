package mteb

import (
	"strconv"
	"strings"
	"testing"

	"github.com/r2med/r2med/ir"
)

// TestEvaluateByHand: MTEB's scores of a run computed by hand. q1 judges
// d2 and d4 relevant and d9 not; the run lists d1 0.9, d2 0.5, d3 0.5,
// d4 0.1, which MTEB (and pytrec_eval) rank d1 d3 d2 d4: the tie goes to
// the larger id. q2's d5 (grade 2) is first; q3 is judged and has no
// results (0); q4 is ranked and not judged (left out).
//
//	mrr_at_1  = (0 + 1 + 0) / 3 = 0.333333 (six decimals, MTEB's to_disk)
//	mrr_at_3  = (1/3 + 1 + 0) / 3 = 0.444444 (d2 third, not second)
//	ndcg_at_1 = (0 + 1 + 0) / 3 = 0.33333 (five decimals)
//	recall_at_3 = (1/2 + 1 + 0) / 3 = 0.5
//	precision_at_3 = (1/3 + 1/3 + 0) / 3 = 0.22222
//	recall_at_1000 = (2/2 + 1 + 0) / 3 = 0.66667
//	ndcg_at_3 = ((1/log2 4) / (1 + 1/log2 3) + 1 + 0) / 3 = 0.43552 (d2 third)
func TestEvaluateByHand(t *testing.T) {
	qrels := ir.Qrels{"q1": {"d2": 1, "d4": 1, "d9": 0}, "q2": {"d5": 2}, "q3": {"d7": 1}}
	run := ir.Run{
		"q1": {{DocID: "d1", Score: 0.9}, {DocID: "d2", Score: 0.5}, {DocID: "d3", Score: 0.5}, {DocID: "d4", Score: 0.1}},
		"q2": {{DocID: "d5", Score: 3}},
		"q4": {{DocID: "d1", Score: 1}},
	}
	got, err := Evaluate(qrels, run)
	if err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]float64{
		"mrr_at_1": 0.333333, "mrr_at_3": 0.444444, "mrr_at_1000": 0.444444,
		"ndcg_at_1": 0.33333, "recall_at_3": 0.5, "precision_at_3": 0.22222, "recall_at_1000": 0.66667, "precision_at_1": 0.33333, "ndcg_at_3": 0.43552,
	} {
		if got[key] != want {
			t.Errorf("%s %v, want %v", key, got[key], want)
		}
	}
	for _, k := range Cutoffs {
		for _, f := range families {
			if _, ok := got[f+strconv.Itoa(k)]; !ok {
				t.Errorf("no %s%d", f, k)
			}
		}
	}
	if len(got) != len(Cutoffs)*len(families) {
		t.Errorf("%d keys, want MTEB's %d", len(got), len(Cutoffs)*len(families))
	}
}

// TestFromRunEvaluated: with the run's file evaluated, every MTEB key the
// run's depth holds is written (mrr_at_1 … mrr_at_100 for a run 100
// deep, ndcg_at_3, …), none deeper; a file that disagrees with the run's
// results is an error.
func TestFromRunEvaluated(t *testing.T) {
	ev := map[string]float64{}
	for _, k := range Cutoffs {
		for _, f := range families {
			ev[f+strconv.Itoa(k)] = 0.1
		}
	}
	scores := map[string]float64{"ndcg_at_10": 0.1, "ndcg_at_25": 0.2, "recall_at_100": 0.1, "mrr": 0.11111}
	r, notes, err := FromRun(RunScores{Task: "Biology", Revision: biology, Depth: 100, Documents: 57359, Scores: scores, Evaluated: ev})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"mrr_at_1", "mrr_at_20", "mrr_at_100", "ndcg_at_3", "precision_at_5", "map_at_20"} {
		if _, ok := r.Score("test", k); !ok {
			t.Errorf("no %s", k)
		}
	}
	for _, k := range []string{"mrr_at_1000", "ndcg_at_1000", "ndcg_at_25"} {
		if v, ok := r.Score("test", k); ok {
			t.Errorf("%s %v written", k, v)
		}
	}
	if len(notes) != 1 || !strings.HasPrefix(notes[0], "ndcg_at_1000, map_at_1000, recall_at_1000, precision_at_1000 and mrr_at_1000 left out") {
		t.Errorf("notes %q", notes)
	}
	scores["ndcg_at_10"] = 0.2
	if _, _, err := FromRun(RunScores{Task: "Biology", Revision: biology, Depth: 100, Scores: scores, Evaluated: ev}); err == nil ||
		!strings.Contains(err.Error(), "the run's file gives ndcg_at_10 0.1 where its results gave 0.2") {
		t.Errorf("disagreeing file: %v", err)
	}
}
