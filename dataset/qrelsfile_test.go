package dataset

import (
	"reflect"
	"strings"
	"testing"

	"github.com/r2med/r2med/ir"
)

// ReadQrels tells the three formats apart by their first non-blank line
// (after a byte-order mark) and reads each to the same judgments.
func TestReadQrelsAnyFormat(t *testing.T) {
	want := ir.Qrels{"q1": {"d1": 2, "d2": 0}, "q2": {"d3": 1}}
	for name, text := range map[string]string{
		"trec":        "q1 0 d1 2\nq1 0 d2 0\nq2 0 d3 1\n",
		"trec-bom":    "\ufeffq1 0 d1 2\nq1 0 d2 0\nq2 0 d3 1\n",
		"jsonl":       "\n" + `{"q_id":"q1","p_id":"d1","score":2}` + "\n" + `{"q_id":"q1","p_id":"d2","score":0}` + "\n" + `{"q_id":"q2","p_id":"d3","score":1}` + "\n",
		"jsonl-bom":   "\ufeff" + `{"q_id":"q1","p_id":"d1","score":2}` + "\n" + `{"q_id":"q1","p_id":"d2","score":0}` + "\n" + `{"q_id":"q2","p_id":"d3","score":1}` + "\n",
		"beir":        "query-id\tcorpus-id\tscore\nq1\td1\t2\nq1\td2\t0\nq2\td3\t1\n",
		"beir-spaced": "  \nquery-id corpus-id score\nq1 d1 2\nq1 d2 0\nq2 d3 1\n",
	} {
		got, err := ReadQrels(strings.NewReader(text), name)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %v, want %v", name, got, want)
		}
	}
	for _, c := range []struct{ text, want string }{
		{"q1\td1\t1\n", "x:1: first line is a judgment, not the header"},
		{`{"q_id":"q1"}` + "\n", `x:1: `},
		{"q1 0 d1\n", "x:1: qrels line has 3 fields, want 4"},
	} {
		if _, err := ReadQrels(strings.NewReader(c.text), "x"); err == nil || !strings.HasPrefix(err.Error(), c.want) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want one starting %q", c.text, err, c.want)
		}
	}
}
