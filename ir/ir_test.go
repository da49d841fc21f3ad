package ir

import "testing"

// TestQrelsAdd: a judgment is recorded once, the first grade kept (a
// reader reports the repeat), grades of zero and below kept as judged;
// Len counts judgments over every query.
func TestQrelsAdd(t *testing.T) {
	q := Qrels{}
	for _, j := range []struct {
		qid, doc string
		grade    int
		added    bool
	}{
		{"q1", "d1", 2, true},
		{"q1", "d2", 0, true},
		{"q2", "d1", -1, true},
		{"q1", "d1", 1, false},
	} {
		if got := q.Add(j.qid, j.doc, j.grade); got != j.added {
			t.Errorf("Add(%s, %s, %d) = %v, want %v", j.qid, j.doc, j.grade, got, j.added)
		}
	}
	if q["q1"]["d1"] != 2 || q["q1"]["d2"] != 0 || q["q2"]["d1"] != -1 {
		t.Errorf("qrels %v", q)
	}
	if q.Len() != 3 || (Qrels{}).Len() != 0 {
		t.Errorf("Len %d", q.Len())
	}
}
