package measure

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/r2med/r2med/ir"
)

// hakariRefDir holds inputs and what HAKARI-Bench's own metrics.py returned
// for them (see its README).
const hakariRefDir = "testdata/hakari"

type hakariCase struct {
	Name     string
	Measures []string
	Queries  []struct {
		ID   string
		Hits [][2]json.RawMessage // [doc, score]
	}
	Qrels ir.Qrels
}

type hakariOutput struct {
	Means    map[string]float64
	PerQuery map[string]map[string]float64 `json:"per_query"`
}

func readJSON(t *testing.T, name string, v any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(hakariRefDir, name))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

// hakariName is the name metrics.py gives m: it says acc where r2med says
// hit (both read either).
func hakariName(m Measure) string {
	if m.Family == Hit {
		return "acc@" + m.Param()
	}
	return m.Name()
}

// TestHakariReference checks every per-query value and every mean against
// HAKARI-Bench's metrics.py, to the last bit (its floats are printed with
// repr, which reads back exactly): duplicates, ties and scores that
// contradict the list order, grade-0 judgments, queries without positives or
// without hits, cut-offs beyond the list, NanoR2MED's rank-101 safeguard, and
// 300 seeded random queries whose means depend on how they are summed.
func TestHakariReference(t *testing.T) {
	var in struct{ Cases []hakariCase }
	var out map[string]hakariOutput
	readJSON(t, "inputs.json", &in)
	readJSON(t, "outputs.json", &out)
	if len(in.Cases) != len(out) {
		t.Fatalf("%d input cases, %d outputs", len(in.Cases), len(out))
	}
	for _, c := range in.Cases {
		t.Run(c.Name, func(t *testing.T) {
			want, ok := out[c.Name]
			if !ok {
				t.Fatalf("no output for case %s", c.Name)
			}
			run := make(ir.Run, len(c.Queries))
			var order []string
			for _, q := range c.Queries {
				order = append(order, q.ID)
				hits := make([]ir.Hit, 0, len(q.Hits))
				for _, h := range q.Hits {
					var hit ir.Hit
					if err := json.Unmarshal(h[0], &hit.DocID); err != nil {
						t.Fatal(err)
					}
					if err := json.Unmarshal(h[1], &hit.Score); err != nil {
						t.Fatal(err)
					}
					hits = append(hits, hit)
				}
				run[q.ID] = hits
			}
			res, err := Evaluate(c.Qrels, run, MustParse(strings.Join(c.Measures, " ")), Options{QueryOrder: order})
			if err != nil {
				t.Fatal(err)
			}
			if res.NumQueries != len(want.PerQuery) || len(res.Queries) != len(want.PerQuery) {
				t.Errorf("%d queries, mean over %d; metrics.py scored %d", len(res.Queries), res.NumQueries, len(want.PerQuery))
			}
			if len(res.Measures) != len(want.Means) {
				t.Errorf("%d measures, metrics.py returned %d", len(res.Measures), len(want.Means))
			}
			bad := 0
			for _, q := range res.Queries {
				for j, m := range res.Measures {
					w, ok := want.PerQuery[q.ID][hakariName(m)]
					if got := q.Values[j]; !ok || got != w {
						if bad++; bad <= 20 {
							t.Errorf("query %s %s = %v, metrics.py %v", q.ID, hakariName(m), got, w)
						}
					}
				}
			}
			for j, m := range res.Measures {
				w, ok := want.Means[hakariName(m)]
				if got := res.All[j]; !ok || got != w {
					t.Errorf("mean %s = %v, metrics.py %v", hakariName(m), got, w)
				}
			}
		})
	}
}
