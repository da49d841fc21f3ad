package significance

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/r2med/r2med/internal/latextest"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/measure"
)

// TestEvaluateRule: every judged query counts, an unanswered one scores
// 0 and is listed; queries the run has but the qrels lack do not count.
func TestEvaluateRule(t *testing.T) {
	qrels := ir.Qrels{"q1": {"d1": 1}, "q2": {"d2": 1}, "q3": {"d3": 1}}
	run := ir.Run{"q1": {{DocID: "d1", Score: 2}}, "q2": {{DocID: "x", Score: 1}}, "zz": {{DocID: "d1", Score: 1}}}
	ms, err := measure.Parse("recip_rank")
	if err != nil {
		t.Fatal(err)
	}
	v, err := Evaluate(qrels, run, ms[0])
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(v.ByQuery, map[string]float64{"q1": 1, "q2": 0, "q3": 0}) || !reflect.DeepEqual(v.Unanswered, []string{"q3"}) || v.N() != 3 {
		t.Errorf("values %+v", v)
	}
	if !reflect.DeepEqual(v.Unjudged, []string{"zz"}) {
		t.Errorf("unjudged %v, want [zz]", v.Unjudged)
	}
	if _, err := Evaluate(nil, run, ms[0]); err == nil {
		t.Error("no qrels accepted")
	}
}

// TestFooterSmallGroupsCohen: the footer says exact only when every test
// was; Cohen's d is "—" when undefined; groups under MinQueries are listed
// untested; pooled tasks are named.
func TestFooterSmallGroupsCohen(t *testing.T) {
	base := System{Name: "a", Values: map[string]float64{}}
	same := System{Name: "b", Values: map[string]float64{}}
	shift := System{Name: "c", Values: map[string]float64{}}
	task := Grouping{Name: TaskGrouping, Of: map[string]string{}}
	for i := range 40 {
		q := fmt.Sprintf("T%d/q%02d", i%2, i)
		base.Values[q], same.Values[q], shift.Values[q] = float64(i%5)/10, float64(i%5)/10+.1, float64(i%7)/10
		task.Of[q] = fmt.Sprintf("T%d", i%2)
		if i == 39 {
			task.Of[q] = "tiny" // one query: no test
		}
	}
	rep, err := Compare("ndcg_cut.10", []System{base, same, shift}, []Grouping{task}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var sb strings.Builder
	if err := rep.Write(&sb, Text); err != nil {
		t.Fatal(err)
	}
	out := sb.String()
	for _, want := range []string{"pooled over 3 tasks (T0, T1, tiny", "tiny (1 query, too few to test)", "10000 random sign flips", "under 5 queries are listed without tests"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "randomization test, exact") {
		t.Errorf("footer says exact for sampled tests:\n%s", out)
	}
	// b = a + 0.1 everywhere: d undefined, printed "—".
	if r := rep.Rows[0]; r.CohenDefined || !strings.Contains(strings.Split(out, "\n")[3], "—") {
		t.Errorf("d of a constant shift: defined %v\n%s", r.CohenDefined, out)
	}
	for _, g := range rep.Breakdowns[0].Groups {
		if g.Name == "tiny" && (!g.Rows[0].Untested || g.Rows[0].RandP != 0) {
			t.Errorf("tiny group tested: %+v", g.Rows[0])
		}
	}
	small, err := Compare("ndcg_cut.10", []System{{Name: "a", Values: map[string]float64{"q1": 0, "q2": .5}}, {Name: "b", Values: map[string]float64{"q1": 1, "q2": .2}}}, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	sb.Reset()
	small.Write(&sb, Text)
	if !strings.Contains(sb.String(), "exact (every sign flip enumerated)") {
		t.Errorf("exact test not said so:\n%s", sb.String())
	}
	sb.Reset()
	if err := WriteAll(&sb, []*Report{rep, small}, LaTeX); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`\toprule`, `paired randomization test`, `\textbf{`} {
		if !strings.Contains(sb.String(), want) {
			t.Errorf("LaTeX lacks %q:\n%s", want, sb.String())
		}
	}
	latextest.Compile(t, sb.String())
}

// TestFooterSaysTTestOfNoDifference: where no query differs, the t-test
// is undefined (SciPy's ttest_rel returns nan) and the table prints p 1;
// the footer says so, and only then, where it printed 1.0000 as if SciPy
// had computed it.
func TestFooterSaysTTestOfNoDifference(t *testing.T) {
	vals := map[string]float64{"q1": .1, "q2": .5, "q3": .7, "q4": 0, "q5": 1, "q6": .3}
	shifted := map[string]float64{"q1": .2, "q2": .5, "q3": .6, "q4": .4, "q5": 1, "q6": .3}
	const note = "t = paired t-test (p 1 where no query differs; SciPy's ttest_rel gives nan there)"
	for _, c := range []struct {
		b    map[string]float64
		want bool
	}{{vals, true}, {shifted, false}} {
		rep, err := Compare("ndcg_cut.10", []System{{Name: "a", Values: vals}, {Name: "b", Values: c.b}}, nil, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(rep.Footer(), note); got != c.want {
			t.Errorf("identical %v: footer %q", c.want, rep.Footer())
		}
		if c.want && (rep.Rows[0].TTestP != 1 || rep.Rows[0].RandP != 1) {
			t.Errorf("identical systems: t p %v, rand p %v, want 1", rep.Rows[0].TTestP, rep.Rows[0].RandP)
		}
	}
}

// TestReportSaysUnjudgedQueries: the queries a system ranks that the
// judgments lack are left out of every test, and the report says how
// many, where they vanished without a word (a run with half its query
// ids rewritten was compared on the other half).
func TestReportSaysUnjudgedQueries(t *testing.T) {
	vals := map[string]float64{"q1": .1, "q2": .5, "q3": .7, "q4": 0, "q5": 1}
	rep, err := Compare("ndcg_cut.10", []System{{Name: "a", Values: vals}, {Name: "b", Values: vals, Unjudged: []string{"x1", "x2"}}}, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Unjudged["b"]) != 2 || len(rep.Unjudged["a"]) != 0 {
		t.Errorf("Unjudged %v", rep.Unjudged)
	}
	var sb strings.Builder
	if err := rep.Write(&sb, Text); err != nil {
		t.Fatal(err)
	}
	want := `note: b ranks 2 queries the judgments lack ("x1", "x2"); they are left out, as trec_eval leaves them`
	if !strings.Contains(strings.Join(strings.Fields(sb.String()), " "), want) {
		t.Errorf("report lacks %q:\n%s", want, sb.String())
	}
}

// A measure trec_eval prints only for the whole run (gm_map) or only as a
// text (relstring) has no per-query number: Evaluate refuses it by name,
// where it gave each query a value no test should read (measure's
// Family.NoPerQueryNumber is the rule; compare asked it, the report's
// per-query path did not).
func TestEvaluateRefusesMeasuresWithoutPerQueryNumbers(t *testing.T) {
	qrels := ir.Qrels{"q1": {"d1": 1}, "q2": {"d2": 1}}
	run := ir.Run{"q1": {{DocID: "d1", Score: 2}}, "q2": {{DocID: "d3", Score: 1}}}
	for _, name := range []string{"gm_map", "num_q", "runid", "relstring", "gm_bpref"} {
		ms, err := measure.ParseIn(name, measure.TrecProfile)
		if err != nil || len(ms) != 1 {
			t.Fatalf("%s: %v %v", name, ms, err)
		}
		_, err = Evaluate(qrels, run, ms[0])
		if err == nil || !strings.Contains(err.Error(), "no per-query number") || !strings.Contains(err.Error(), ms[0].Name()) {
			t.Errorf("%s: err %v, want a refusal naming it", name, err)
		}
	}
	ms, _ := measure.ParseIn("map", measure.TrecProfile)
	v, err := Evaluate(qrels, run, ms[0])
	if err != nil || v.ByQuery["q1"] != 1 || v.ByQuery["q2"] != 0 {
		t.Errorf("map: %v %v", v, err)
	}
}
