package expand

import (
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/r2med/r2med/dataset"
	"github.com/r2med/r2med/ir"
)

// TestBiologyDemoGolden runs R2MED's published hyde/qwen-7b generations for
// the first two Biology queries through Apply. The expected strings in
// testdata/biology-demo.qwen-7b.golden.json were built outside Go, by
// decoding the file with Python's json module and applying R2MED's string
// expressions (hy_doc; text*2+" "+hy_doc; text+" "+hy_doc; text+"[SEP]"+hy_doc);
// query2doc and lamer relabel the same outputs to test the concatenations
// on real text.
func TestBiologyDemoGolden(t *testing.T) {
	f, err := os.Open("testdata/biology-demo/query.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	qs, err := dataset.ReadQueries(f, "query.jsonl", ir.LayoutR2MED)
	if err != nil {
		t.Fatal(err)
	}
	gens, err := LoadDir("testdata/biology-demo", HyDE, "qwen-7b")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("testdata/biology-demo.qwen-7b.golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var golden struct {
		BM25  map[string]map[string]string `json:"bm25"`
		Dense map[string]map[string]any    `json:"dense"`
	}
	if err := json.Unmarshal(b, &golden); err != nil {
		t.Fatal(err)
	}

	// By hand, from the file: the hyde query is the output alone, which
	// opens and closes like this, and the query text is not in it.
	if len(gens) != 2 || gens[1].ID != "1" {
		t.Fatalf("read %d generations", len(gens))
	}
	got, err := Apply(qs, gens)
	if err != nil {
		t.Fatal(err)
	}
	q1 := got[1].Text
	if !strings.HasPrefix(q1, "The phenomenon of only breathing through one nostril at a time is a natural and normal occurrence") ||
		!strings.HasSuffix(q1, "and part of the body's natural respiratory process.") ||
		strings.Contains(q1, "Why do I only breathe out of one nostril?") {
		t.Errorf("hyde query 1 = %.100q…", q1)
	}
	if got[0].Text != gens[0].HyDoc || !strings.HasPrefix(got[0].Text, "Certainly! Here’s a passage") {
		t.Errorf("hyde query 0 = %.100q…", got[0].Text)
	}
	if !reflect.DeepEqual(got[0].Extra, qs[0].Extra) || len(got[0].Extra) != 3 {
		t.Errorf("Extra = %v, want the query's body_system, answer, doc_id", got[0].Extra)
	}

	for _, method := range []string{HyDE, Query2Doc, LameR} {
		relabeled := make([]Generation, len(gens))
		for i, g := range gens {
			g.Method = method
			relabeled[i] = g
		}
		got, err := Apply(qs, relabeled)
		if err != nil {
			t.Fatal(err)
		}
		want := golden.BM25[method]
		if len(want) != len(got) {
			t.Fatalf("%s: golden has %d queries", method, len(want))
		}
		for _, q := range got {
			if q.Text != want[q.ID] {
				t.Errorf("%s query %s:\n got %.200q\nwant %.200q", method, q.ID, q.Text, want[q.ID])
			}
		}
		for _, g := range relabeled {
			var wantTexts []string
			switch w := golden.Dense[method][g.ID].(type) {
			case string:
				wantTexts = []string{w}
			case []any:
				for _, s := range w {
					wantTexts = append(wantTexts, s.(string))
				}
			}
			d := g.Dense()
			if !reflect.DeepEqual(d.Texts(), wantTexts) || d.Average != (len(wantTexts) == 2) {
				t.Errorf("%s dense query %s = %+.80v, want %.80q", method, g.ID, d, wantTexts)
			}
		}
	}
}
