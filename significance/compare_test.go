package significance

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestCompare(t *testing.T) {
	base := System{Name: "bm25", Values: map[string]float64{"q1": .1, "q2": .2, "q3": .3, "q4": .4, "q5": .5, "q6": .6}}
	better := System{Name: "hyde", Values: map[string]float64{"q1": .3, "q2": .5, "q3": .4, "q4": .7, "q5": .6, "q6": .95}}
	// lacks q6, which counts as 0
	worse := System{Name: "dense", Values: map[string]float64{"q1": .1, "q2": .1, "q3": .3, "q4": .3, "q5": .5}}
	g := Grouping{Name: "body_system", Of: map[string]string{"q1": "Cardio", "q2": "Cardio", "q3": "Cardio", "q4": "Neuro"}}
	rep, err := Compare("ndcg_cut.10", []System{base, better, worse}, []Grouping{g}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Queries != 6 || rep.Missing["dense"] != 1 || rep.Missing["hyde"] != 0 {
		t.Fatalf("queries %d missing %v", rep.Queries, rep.Missing)
	}
	h, d := rep.Rows[0], rep.Rows[1]
	// hyde wins all 6: exact p = 2/64; dense loses q2, q4, q6 (.1 .1 .6), ties 3: p = 2/8.
	if h.RandP != 2.0/64 || h.Wins != 6 || d.RandP != 0.25 || d.Losses != 3 || d.Ties != 3 {
		t.Errorf("rows %+v %+v", h.Result, d.Result)
	}
	if want := Holm([]float64{2.0 / 64, 0.25}); h.HolmP != want[0] || d.HolmP != want[1] {
		t.Errorf("holm %v %v, want %v", h.HolmP, d.HolmP, want)
	}
	if len(h.TopGains) != Extremes || h.TopGains[0].Query != "q6" || len(h.TopLosses) != 0 || d.TopLosses[0].Query != "q6" {
		t.Errorf("extremes gains %v losses %v / %v", h.TopGains, h.TopLosses, d.TopLosses)
	}
	b := rep.Breakdowns[0]
	if b.By != "body_system" || len(b.Groups) != 3 || b.Groups[0].Name != "Cardio" || b.Groups[0].Queries != 3 || b.Groups[1].Name != "(none)" {
		t.Errorf("breakdown %+v", b)
	}
	for _, f := range []Format{Text, Markdown, JSON} {
		var sb strings.Builder
		if err := rep.Write(&sb, f); err != nil {
			t.Fatal(err)
		}
		out := sb.String()
		switch f {
		case JSON:
			var back Report
			if err := json.Unmarshal([]byte(out), &back); err != nil || back.Rows[0].RandP != h.RandP {
				t.Errorf("json: %v", err)
			}
		default:
			if !strings.Contains(out, "0.0312 (exact)") || !strings.Contains(out, "dense has no value for 1 of the 6 queries") || !strings.Contains(out, "Neuro") {
				t.Errorf("%s report:\n%s", f, out)
			}
		}
	}
	if _, err := Compare("x", []System{base}, nil, Options{}); err == nil {
		t.Error("one system accepted")
	}
}

// TestWriteMissingOrder: the notes on missing values follow the systems'
// order, so the same comparison prints the same text every time.
func TestWriteMissingOrder(t *testing.T) {
	systems := []System{{Name: "base", Values: map[string]float64{"q1": .1, "q2": .2}}}
	var want []string
	for _, n := range []string{"s1", "s2", "s3", "s4", "s5", "s6"} {
		systems = append(systems, System{Name: n, Values: map[string]float64{"q1": .3}})
		want = append(want, "note: "+n+" has no value")
	}
	rep, err := Compare("ndcg_cut.10", systems, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		var sb strings.Builder
		if err := rep.Write(&sb, Text); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, l := range strings.Split(sb.String(), "\n") {
			if strings.HasPrefix(l, "note: ") {
				got = append(got, l[:len("note: s1 has no value")])
			}
		}
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Fatalf("notes %q, want %q", got, want)
		}
	}
}

// TestCompareNeverNegativeZero: a mean difference too small for four
// decimals keeps its sign on something shown ("-8.0e-06", never
// "-0.0000" or "+0.0000"), in every format, as the report and the viewer
// print it (numtext.Signed); no difference at all is "0.0000".
func TestCompareNeverNegativeZero(t *testing.T) {
	base := System{Name: "bm25", Values: map[string]float64{"q1": .5, "q2": .6, "q3": .7, "q4": .8}}
	near := System{Name: "near", Values: map[string]float64{"q1": .5 - 32e-6, "q2": .6, "q3": .7, "q4": .8}}
	same := System{Name: "same", Values: base.Values}
	rep, err := Compare("ndcg_cut.10", []System{base, near, same}, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []Format{Text, Markdown, LaTeX} {
		var sb strings.Builder
		if err := rep.Write(&sb, f); err != nil {
			t.Fatal(err)
		}
		out := sb.String()
		if strings.Contains(out, "-0.0000") || strings.Contains(out, "+0.0000") {
			t.Errorf("%s prints a signed zero:\n%s", f, out)
		}
		if want := map[Format]string{Text: "q1 0.5000→0.5000 (Δ -3.2e-05)", Markdown: "-8.0e-06", LaTeX: `$-8.0 \times 10^{-6}$`}[f]; !strings.Contains(out, want) {
			t.Errorf("%s does not print %s:\n%s", f, want, out)
		}
	}
}
