package ir_test

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/r2med/r2med/ir"
)

func TestExclusions(t *testing.T) {
	ex := ir.Exclusions{}
	if !ex.Add("q1", "d1") || ex.Add("q1", "d1") || !ex.Add("q1", "d2") || !ex.Add("q2", "d3") {
		t.Fatal("Add")
	}
	if ex.Len() != 3 || ex.Max() != 2 || !ex.Excluded("q1", "d2") || ex.Excluded("q2", "d1") || ex.Excluded("q9", "d1") {
		t.Errorf("Len %d Max %d", ex.Len(), ex.Max())
	}
	if got := ex.Sorted("q1"); !reflect.DeepEqual(got, []string{"d1", "d2"}) {
		t.Errorf("Sorted %v", got)
	}

	run := ir.Run{
		"q1": {{"d1", 3}, {"d4", 2}, {"d2", 1}, {"d5", 0}},
		"q2": {{"d1", 1}},
		"q3": {{"d3", 1}},
	}
	filtered, n := ex.FilterRun(run)
	want := ir.Run{"q1": {{"d4", 2}, {"d5", 0}}, "q2": {{"d1", 1}}, "q3": {{"d3", 1}}}
	if n != 2 || !reflect.DeepEqual(filtered, want) {
		t.Errorf("FilterRun %v %d", filtered, n)
	}
	if len(run["q1"]) != 4 {
		t.Error("FilterRun changed its input")
	}

	qrels := ir.Qrels{"q1": {"d2": 0, "d4": 1}, "q2": {"d3": 1}, "q3": {"d3": 2}}
	fq, n := ex.FilterQrels(qrels)
	if n != 2 || !reflect.DeepEqual(fq, ir.Qrels{"q1": {"d4": 1}, "q3": {"d3": 2}}) {
		t.Errorf("FilterQrels %v %d (q2 left without a judgment is left out)", fq, n)
	}
	if len(qrels["q1"]) != 2 || len(qrels["q2"]) != 1 {
		t.Error("FilterQrels changed its input")
	}

	var none ir.Exclusions
	if r, n := none.FilterRun(run); n != 0 || !reflect.DeepEqual(r, run) || none.Max() != 0 || none.Len() != 0 {
		t.Error("nil exclusions")
	}
}

// An excluded document is removed from a ranking before the cut to k, so
// the query still gets k hits.
func ExampleExclusions_Filter() {
	ex := ir.Exclusions{}
	ex.Add("q1", "leetcode-1") // the problem's own solution
	ranking := []ir.Hit{{DocID: "leetcode-1", Score: 9}, {DocID: "leetcode-7", Score: 5}, {DocID: "leetcode-3", Score: 4}, {DocID: "leetcode-2", Score: 1}}
	kept, removed := ex.Filter("q1", ranking)
	const k = 2
	fmt.Println(kept[:k], removed)
	// Output: [{leetcode-7 5} {leetcode-3 4}] 1
}
