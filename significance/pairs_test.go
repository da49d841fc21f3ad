package significance

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/r2med/r2med/internal/latextest"
	"github.com/r2med/r2med/usage"
)

// threeSystems has, on two tasks of 25 queries each, a baseline "a", a
// "b" that differs from it by noise, and a "c" far above both.
func threeSystems() ([]System, []Grouping) {
	rng := rand.New(rand.NewPCG(3, 4))
	a := System{Name: "bm25", Values: map[string]float64{}}
	b := System{Name: "hyde/gpt4 → nv", Values: map[string]float64{}}
	c := System{Name: "rrf(bm25,bge) → insertrank:deepseek-r1@20", Values: map[string]float64{}}
	task := Grouping{Name: TaskGrouping, Of: map[string]string{}}
	for i := range 50 {
		t := []string{"Biology", "MedQA-Diag"}[i%2]
		q := fmt.Sprintf("%s/q%02d", t, i)
		v := rng.Float64() * 0.5
		a.Values[q], b.Values[q], c.Values[q] = v, v+(rng.Float64()-0.5)*0.02, min(v+0.3+rng.Float64()*0.1, 1)
		task.Of[q] = t
	}
	return []System{a, b, c}, []Grouping{task}
}

// TestAllPairs: every pair is tested in each task and pooled; a value
// carries the letters of the systems it is significantly better than,
// under each of the three tests; the randomised Tukey HSD of two systems
// is the randomization test.
func TestAllPairs(t *testing.T) {
	systems, groupings := threeSystems()
	for _, test := range []Test{Rand, T, Tukey} {
		rep, err := Compare("ndcg_cut.10", systems, groupings, Options{Test: test, Permutations: 2000})
		if err != nil {
			t.Fatal(err)
		}
		p := rep.AllPairs
		if p.Test != test || p.MaxP != DefaultMaxP || len(p.Groups) != 3 {
			t.Fatalf("%s: %+v", test, p)
		}
		if g := p.Groups; g[0].Task != "Biology" || g[1].Task != "MedQA-Diag" || !g[2].Pooled || g[2].Queries != 50 || g[0].Queries != 25 {
			t.Errorf("%s groups %+v", test, g)
		}
		for _, g := range p.Groups {
			if l := p.Letters(g, 2); l != "ab" {
				t.Errorf("%s %s: c's letters %q, want ab (p %v)", test, groupLabel(g), l, g.P[2])
			}
			if l := p.Letters(g, 0) + p.Letters(g, 1); l != "" {
				t.Errorf("%s %s: a or b better than something: %q (p %v)", test, groupLabel(g), l, g.P)
			}
			if g.P[0][2] != g.P[2][0] || g.P[1][1] != 1 {
				t.Errorf("%s: p not symmetric with 1 on the diagonal: %v", test, g.P)
			}
		}
	}
	// Two systems: shuffling a query's two values is flipping the sign of
	// its difference, so the randomised Tukey HSD is the randomization test.
	two := systems[:2]
	tu, err := Compare("x", two, nil, Options{Test: Tukey, Permutations: 20000})
	if err != nil {
		t.Fatal(err)
	}
	d := make([]float64, 0, 50)
	for q, v := range two[1].Values {
		d = append(d, v-two[0].Values[q])
	}
	want, _, _ := Randomization(d, 20000, rand.New(rand.NewPCG(9, 9)))
	if got := tu.AllPairs.Groups[0].P[0][1]; math.Abs(got-want) > 0.02 {
		t.Errorf("Tukey HSD of two systems p = %.4f, randomization test %.4f", got, want)
	}
	if _, err := ParseTest("anova"); err == nil {
		t.Error("ParseTest(anova) accepted")
	}
	if _, err := Compare("x", two, nil, Options{MaxP: 2}); err == nil {
		t.Error("max p 2 accepted")
	}
}

// TestAllPairsTable: systems × metrics × tasks in one table, letters as
// superscripts, every mark explained under it; as text it keeps to the
// width by splitting the tasks over tables; LaTeX has a column group per
// task and fits a page; Markdown writes the letters as <sup>.
func TestAllPairsTable(t *testing.T) {
	systems, groupings := threeSystems()
	var reps []*Report
	for _, m := range []string{"ndcg_cut.10", "recall.100"} {
		rep, err := Compare(m, systems, groupings, Options{Permutations: 2000})
		if err != nil {
			t.Fatal(err)
		}
		reps = append(reps, rep)
	}
	var wide strings.Builder
	if err := writePairs(&wide, reps, Text, 0); err != nil {
		t.Fatal(err)
	}
	out := wide.String()
	for _, want := range []string{"Biology (25 q)", "MedQA-Diag (25 q)", "pooled (50 q)", "nDCG@10   Recall@100  nDCG@10", "c  rrf(bm25,bge) → insertrank:deepseek-r1@20", "ᵃᵇ",
		"superscript letters: the systems (lettered in the first column) a value is significantly better than: two-sided paired randomization test, Holm–Bonferroni over the 3 pairs of each column, adjusted p ≤ 0.05",
		"pooled: every task's queries together"} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
	var narrow strings.Builder
	if err := writePairs(&narrow, reps, Text, 80); err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(narrow.String(), "\n") {
		if utf8.RuneCountInString(l) > 80 {
			t.Errorf("line of %d columns: %s", utf8.RuneCountInString(l), l)
		}
	}
	// The whole report keeps to the width too: the comparisons with the
	// baseline wrap their long system names.
	var all strings.Builder
	if err := WriteAllWith(&all, reps, Text, 120); err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(all.String(), "\n") {
		if utf8.RuneCountInString(l) > 120 {
			t.Errorf("report line of %d columns: %s", utf8.RuneCountInString(l), l)
		}
	}
	if strings.Count(narrow.String(), "#  system") < 2 {
		t.Errorf("the tasks were not split over tables at 80 columns:\n%s", narrow.String())
	}
	var md strings.Builder
	if err := writePairs(&md, reps, Markdown, 0); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "<sup>ab</sup>") || !strings.Contains(md.String(), "| Biology (25 q) nDCG@10 |") {
		t.Errorf("markdown:\n%s", md.String())
	}
	var tex strings.Builder
	if err := WriteAll(&tex, reps, LaTeX); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`\multicolumn{2}{c}{Biology (25 q)}`, `\cmidrule(lr){3-4}`, `$^{ab}$`, `0.2320\hphantom{$^{bc}$}`, `\resizebox`} {
		if !strings.Contains(tex.String(), want) {
			t.Errorf("LaTeX lacks %q:\n%s", want, tex.String())
		}
	}
	latextest.CompilePage(t, []string{"booktabs", "graphicx"}, tex.String())
}

// TestAllPairsManyMeasures: one group of more measures than fit beside
// the names (trec_eval's official set has 27) goes on over several
// tables, and the title wraps, where one line ran to 400 columns.
func TestAllPairsManyMeasures(t *testing.T) {
	systems, _ := threeSystems()
	var reps []*Report
	for _, m := range []string{"map", "Rprec", "bpref", "recip_rank", "P.5", "P.10", "P.15", "P.20", "P.30", "P.100", "P.200", "P.500", "P.1000", "recall.5", "recall.10", "recall.100"} {
		rep, err := Compare(m, systems, nil, Options{Permutations: 200})
		if err != nil {
			t.Fatal(err)
		}
		reps = append(reps, rep)
	}
	var b strings.Builder
	if err := writePairs(&b, reps, Text, 100); err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(b.String(), "\n") {
		if utf8.RuneCountInString(l) > 100 {
			t.Errorf("line of %d columns: %s", utf8.RuneCountInString(l), l)
		}
	}
	for _, m := range reps {
		if !strings.Contains(b.String(), "  "+MetricLabel(m.Metric)) {
			t.Errorf("no column %s:\n%s", MetricLabel(m.Metric), b.String())
		}
	}
}

// TestCompareSections: the LaTeX comparison writes every signed number
// alike ($-0.0046$ beside $+0.0031$); rows are marked † ‡ as the
// leaderboard marks, the footer says so; there is no cost section for
// runs that called no model, and no breakdown into one group.
func TestCompareSections(t *testing.T) {
	systems, groupings := threeSystems()
	zero := usage.Cost{}
	for i := range systems {
		systems[i].Cost = &zero
	}
	body := Grouping{Name: "body_system", Of: map[string]string{}}
	for q := range systems[0].Values {
		body.Of[q] = "" // no value anywhere: one "(none)" group
	}
	rep, err := Compare("ndcg_cut.10", systems, append(groupings, body), Options{Permutations: 2000})
	if err != nil {
		t.Fatal(err)
	}
	var text, tex strings.Builder
	if err := rep.Write(&text, Text); err != nil {
		t.Fatal(err)
	}
	if err := rep.Write(&tex, LaTeX); err != nil {
		t.Fatal(err)
	}
	out := text.String()
	for _, bad := range []string{"Cost per query", "By body_system", "(none)", "**"} {
		if strings.Contains(out, bad) {
			t.Errorf("text has %q:\n%s", bad, out)
		}
	}
	if !strings.Contains(out, " ‡") || !strings.Contains(out, "‡ Holm p < 0.01") || !strings.Contains(out, "By task:") {
		t.Errorf("text lacks the marks, their explanation or the task breakdown:\n%s", out)
	}
	for _, bad := range []string{"[-0.", "$+$", ", +0.", "[+0."} {
		if strings.Contains(tex.String(), bad) {
			t.Errorf("LaTeX has %q:\n%s", bad, tex.String())
		}
	}
	if !strings.Contains(tex.String(), "[$-0.") && !strings.Contains(tex.String(), "[$+0.") {
		t.Errorf("LaTeX bounds not in math mode:\n%s", tex.String())
	}
	latextest.CompilePage(t, []string{"booktabs", "graphicx"}, tex.String())
}
