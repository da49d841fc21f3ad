package synth

import (
	"strings"
	"testing"
)

func TestCombined(t *testing.T) {
	task := Combined(2000, 1)
	if len(task.Queries) != 876 {
		t.Errorf("%d queries, want all 876 of the eight tasks", len(task.Queries))
	}
	if n := len(task.Corpus); n < 1990 || n > 2010 {
		t.Errorf("%d documents, want about 2000", n)
	}
	seen := map[string]bool{}
	for _, d := range task.Corpus {
		if seen[d.ID] {
			t.Fatalf("document id %q twice", d.ID)
		}
		seen[d.ID] = true
	}
	for qid, m := range task.Qrels {
		if !strings.Contains(qid, "/") {
			t.Errorf("query id %q has no task prefix", qid)
		}
		for did := range m {
			if !seen[did] {
				t.Errorf("qrels of %s name %q, not in the corpus", qid, did)
			}
		}
	}
	if a, b := writeHash(t, task), writeHash(t, Combined(2000, 1)); a != b {
		t.Error("two builds with the same seed differ")
	}
}

func TestCombinedQueriesDoNotDependOnCorpusSize(t *testing.T) {
	a, b := CombinedQueries(1), Combined(3000, 1).Queries
	if len(a) != len(b) {
		t.Fatalf("%d and %d queries", len(a), len(b))
	}
	for i := range a {
		if a[i].ID != b[i].ID || a[i].Text != b[i].Text {
			t.Fatalf("query %d differs: %q vs %q", i, a[i].Text, b[i].Text)
		}
	}
}
