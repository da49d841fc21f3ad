package rerank

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/llm"
	"github.com/r2med/r2med/rerank/reranktest"
	"github.com/r2med/r2med/usage"
)

func TestParseGroupScores(t *testing.T) {
	for _, tc := range []struct {
		name, answer string
		n            int
		want         []float64
		r            Repair
		clamped      int
	}{
		{"clean", "```json\n{\"[1]\": 7, \"[2]\": 0, \"[3]\": 10}\n```", 3, []float64{7, 0, 10}, Repair{Named: 3}, 0},
		{"no fence", `{"[2]": 4, "[1]": 9}`, 2, []float64{9, 4}, Repair{Named: 2}, 0},
		{"last fence", "```json\n{\"[1]\": 1}\n```\nOn reflection:\n```json\n{\"[1]\": 6, \"[2]\": 3}\n```", 2, []float64{6, 3}, Repair{Named: 2}, 0},
		{"broken json", "```json\n{\"[1]]\": 8, \"[2]\": 5", 2, []float64{8, 5}, Repair{Named: 2}, 0},
		{"plain keys", `{"1": 3, "2": 2.5}`, 2, []float64{3, 2.5}, Repair{Named: 2}, 0},
		{"unquoted brackets", "[1]: 4, [2]: 6", 2, []float64{4, 6}, Repair{Named: 2}, 0},
		{"missing", `{"[1]": 5, "[3]": 1}`, 3, []float64{5, -1, 1}, Repair{Named: 2, Missing: 1}, 0},
		{"repeated keeps the last", `{"[1]": 5, "[2]": 1, "[1]": 8}`, 2, []float64{8, 1}, Repair{Named: 2, Repeated: 1}, 0},
		{"out of range", `{"[0]": 5, "[1]": 2, "[4]": 9, "[2]": 3}`, 2, []float64{2, 3}, Repair{Named: 2, OutOfRange: 2}, 0},
		{"clamped", `{"[1]": 12, "[2]": -3}`, 2, []float64{10, 0}, Repair{Named: 2}, 2},
		{"quoted", `{"[1]": "3", "[2]": '4.5', "[3]": 7}`, 3, []float64{3, 4.5, 7}, Repair{Named: 3, Quoted: 2}, 0},
		{"quoted, clamped", `{"[1]": "12", "[2]": "-1"}`, 2, []float64{10, 0}, Repair{Named: 2, Quoted: 2}, 2},
		{"quoted words", `{"[1]": "3 points", "[2]": "three", "[3]": " 5", "[4]": "6'}`, 4, []float64{-1, -1, -1, -1}, Repair{Missing: 4}, 0},
		{"prose", "The first passage is the best one.", 2, []float64{-1, -1}, Repair{Missing: 2}, 0},
		{"empty", "", 1, []float64{-1}, Repair{Missing: 1}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, r, clamped := ParseGroupScores(tc.answer, tc.n)
			if !slices.Equal(got, tc.want) || r != tc.r || clamped != tc.clamped {
				t.Errorf("got %v %+v clamped %d, want %v %+v %d", got, r, clamped, tc.want, tc.r, tc.clamped)
			}
		})
	}
}

// groupAnswer scores each passage of a GroupRank prompt with score(doc),
// leaving out those it gives "".
func groupAnswer(req chatReq, score func(doc string) string) reply {
	var parts []string
	for i, d := range promptDocs(lastUser(req)) {
		if s := score(d); s != "" {
			parts = append(parts, fmt.Sprintf(`"[%d]": %s`, i+1, s))
		}
	}
	return reply{Reasoning: "Compared within the group.", Content: "<answer>\n```json\n{" + strings.Join(parts, ", ") + "}\n```\n</answer>"}
}

// TestGroupRankAcrossGroups: 25 candidates in groups of 10 over three
// passes. Each pass asks about every candidate once, in another order
// (so companions change), groups of 10, 10 and 5; each candidate's score
// is its judgement / 10 whatever group it was judged in, so candidates of
// different groups are ranked by one scale; the traces record each group.
func TestGroupRankAcrossGroups(t *testing.T) {
	judged := map[string]int{}
	for i := range 25 {
		judged[fmt.Sprintf("d%d", i+1)] = (i * 7) % 11 // 0..10, spread over every group
	}
	srv := newScripted(t, func(req chatReq) reply {
		return groupAnswer(req, func(d string) string { return fmt.Sprint(judged[d]) })
	})
	g := &GroupRank{Chat: srv.client(t, nil), GroupSize: 10, Repeats: 3, Concurrency: 4}
	var mu sync.Mutex
	var traces []Trace
	ctx := WithTrace(context.Background(), func(tr Trace) { mu.Lock(); traces = append(traces, tr); mu.Unlock() })
	cs := cands(25)
	scores, err := g.ScoreCandidates(ctx, "q7", "the query", cs)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range cs {
		if want := float64(judged[c.ID]) / 10; math.Abs(scores[i]-want) > 1e-15 {
			t.Errorf("%s scored %v, want %v", c.ID, scores[i], want)
		}
	}
	if len(srv.reqs) != 9 || len(traces) != 9 {
		t.Fatalf("%d requests and %d traces, want 3 passes × 3 groups", len(srv.reqs), len(traces))
	}
	slices.SortFunc(traces, func(a, b Trace) int { return a.Step - b.Step })
	var passes [3][]string
	for i, tr := range traces {
		if tr.Step != i || tr.QueryID != "q7" || tr.Reasoning != "Compared within the group." || tr.Fallback || len(tr.Scores) != len(tr.Docs) {
			t.Errorf("trace %d: %+v", i, tr)
		}
		if want := []int{10, 10, 5}[i%3]; len(tr.Docs) != want {
			t.Errorf("group %d has %d passages, want %d", i, len(tr.Docs), want)
		}
		for j, d := range tr.Docs {
			if tr.Scores[j] == nil || *tr.Scores[j] != float64(judged[d]) {
				t.Errorf("trace %d: %s recorded as %v", i, d, tr.Scores[j])
			}
		}
		passes[i/3] = append(passes[i/3], tr.Docs...)
	}
	for p, docs := range passes {
		if sorted := slices.Sorted(slices.Values(docs)); !slices.Equal(sorted, slices.Sorted(slices.Values(order(cs, make([]float64, 25))))) {
			t.Errorf("pass %d asked about %v, not each candidate once", p, docs)
		}
	}
	if slices.Equal(passes[0], passes[1]) || slices.Equal(passes[1], passes[2]) {
		t.Error("two passes showed the candidates in the same order")
	}
	// The order of a pass is the same on every run: a rerun's prompts
	// are the cache's keys.
	srv.reqs = nil
	if _, err := g.ScoreCandidates(context.Background(), "q7", "the query", cs); err != nil {
		t.Fatal(err)
	}
	again := map[string]bool{}
	for _, r := range srv.reqs {
		again[lastUser(r)] = true
	}
	for _, tr := range traces {
		found := false
		for u := range again {
			if slices.Equal(promptDocs(u), tr.Docs) {
				found = true
			}
		}
		if !found {
			t.Errorf("group %v was not asked again in the same order", tr.Docs)
		}
	}
}

// TestGroupRankRepairs: one pass's malformed answer and another's clean
// one over the same four candidates (one group, two passes, asked one
// after the other): a passage the first answer left out takes the second
// one's score alone; an unusable answer scores the whole group 0 for its
// pass (the fallback), averaged in; the counts and traces say so.
func TestGroupRankRepairs(t *testing.T) {
	clean := func(req chatReq) reply {
		return groupAnswer(req, func(d string) string { return map[string]string{"d1": "8", "d2": "6", "d3": "4", "d4": "2"}[d] })
	}
	for _, tc := range []struct {
		name  string
		first func(chatReq) reply
		want  []float64
		st    Stats
		fall  bool
	}{
		{"missing", func(req chatReq) reply {
			return groupAnswer(req, func(d string) string { return map[string]string{"d1": "10", "d3": "0", "d4": "2"}[d] })
		}, []float64{0.9, 0.6, 0.2, 0.2}, Stats{Partial: 1, Missing: 1}, false},
		{"unparsed", func(chatReq) reply { return reply{Reasoning: "I am still thinking", Finish: "length"} },
			[]float64{0.4, 0.3, 0.2, 0.1}, Stats{Unparsed: 1, Missing: 4, Truncated: 1}, true},
		{"clamped, no reasoning", func(req chatReq) reply {
			a := groupAnswer(req, func(d string) string { return map[string]string{"d1": "14", "d2": "6", "d3": "4", "d4": "-2"}[d] })
			a.Reasoning = ""
			return a
		}, []float64{0.9, 0.6, 0.4, 0.1}, Stats{Clamped: 2, NoReasoning: 1}, false},
		// Scores written as strings are read when the string is exactly a
		// number, and counted; "4 points" is no score.
		{"quoted", func(req chatReq) reply {
			return groupAnswer(req, func(d string) string {
				return map[string]string{"d1": `"10"`, "d2": `'6'`, "d3": `"4 points"`, "d4": `"2.0"`}[d]
			})
		}, []float64{0.9, 0.6, 0.4, 0.2}, Stats{Partial: 1, Missing: 1, Quoted: 3}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := 0
			srv := newScripted(t, func(req chatReq) reply {
				n++
				if n == 1 {
					return tc.first(req)
				}
				return clean(req)
			})
			g := &GroupRank{Chat: srv.client(t, nil), GroupSize: 4, Repeats: 2, Concurrency: 1}
			var traces []Trace
			ctx := WithTrace(context.Background(), func(tr Trace) { traces = append(traces, tr) })
			scores, err := g.ScoreCandidates(ctx, "q", "query", cands(4))
			if err != nil {
				t.Fatal(err)
			}
			for i := range tc.want {
				if math.Abs(scores[i]-tc.want[i]) > 1e-12 {
					t.Errorf("scores %v, want %v", scores, tc.want)
					break
				}
			}
			got := g.Stats()
			got.PromptTokens, got.CompletionTokens = 0, 0
			want := tc.st
			want.Calls = 2
			if got != want {
				t.Errorf("stats %+v, want %+v", got, want)
			}
			if len(traces) != 2 || traces[0].Fallback != tc.fall || traces[1].Fallback {
				t.Fatalf("traces %+v", traces)
			}
			if tc.fall {
				for _, s := range traces[0].Scores {
					if s == nil || *s != 0 {
						t.Errorf("the fallback's trace scores %v", traces[0].Scores)
					}
				}
			}
			if tc.name == "missing" {
				if i := slices.Index(traces[0].Docs, "d2"); traces[0].Scores[i] != nil {
					t.Errorf("the missing passage's trace score %v", *traces[0].Scores[i])
				}
			}
			if tc.name == "quoted" {
				// The trace says the scores were quoted, and the notes.
				b, err := json.Marshal(traces[0])
				if err != nil || traces[0].Repair.Quoted != 3 || !strings.Contains(string(b), `"Quoted":3`) {
					t.Errorf("trace %s %v", b, err)
				}
				if b, _ := json.Marshal(traces[1]); strings.Contains(string(b), "Quoted") {
					t.Errorf("an answer without quoted scores: %s", b)
				}
				if !slices.Contains(got.Notes(), "3 scores written as quoted numbers, read as numbers") || got.Counts()["quoted_scores"] != 3 {
					t.Errorf("notes %q, counts %v", got.Notes(), got.Counts())
				}
			}
		})
	}
	// A passage no pass scored scores 0.
	srv := newScripted(t, func(chatReq) reply { return reply{Reasoning: "r", Content: `<answer>{"[1]": 7}</answer>`} })
	s, err := (&GroupRank{Chat: srv.client(t, nil), Repeats: 1}).Score(context.Background(), "q", []string{"a", "b"})
	if err != nil || len(s) != 2 || s[0]+s[1] != 0.7 || min(s[0], s[1]) != 0 {
		t.Errorf("one passage scored: %v %v", s, err)
	}
}

// TestGroupRankTies: a judge that finds every passage alike (the same
// score everywhere) leaves the first-stage order, through Rerank, for
// grouprank and for a diver merge of it.
func TestGroupRankTies(t *testing.T) {
	srv := reranktest.NewTies(t, 1)
	run := ir.Run{"q": nil}
	for i := range 23 {
		run["q"] = append(run["q"], ir.Hit{DocID: fmt.Sprintf("d%02d", 23-i), Score: float64(40 - i)})
	}
	for _, spec := range []Spec{
		{Kind: KindGroupRank, GroupSize: 5, Repeats: 3},
		{Kind: KindDiver, Merge: MergeSpec{Pointwise: KindGroupRank, Listwise: KindReasonRank}},
		{Kind: KindDiver, Merge: MergeSpec{Pointwise: KindRank1, Listwise: KindGroupRank}},
	} {
		spec.Model, spec.BaseURL, spec.HTTP = "m", srv.URL+"/v1", fastClient()
		s := mustNew(t, spec)
		got, err := Rerank(context.Background(), run, map[string]string{"q": "query"}, textIsID, s, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(ids(got["q"]), ids(run["q"])) {
			t.Errorf("%s %+v: %v, want the first-stage order %v", spec.Kind, spec.Merge, ids(got["q"]), ids(run["q"]))
		}
		if st := s.(interface{ Stats() Stats }).Stats(); st.Calls == 0 || st.Unparsed != 0 || st.Partial != 0 {
			t.Errorf("%s: stats %+v", spec.Kind, st)
		}
	}
}

// TestMergeRanks checks DIVER's merge against values worked by hand:
// pointwise scores 0.9, 0.2, 0.9, 0.5 rank d1 1st (first of the tie), d3
// 2nd, d4 3rd, d2 4th; the listwise ranking is d2, d4, d3, d1; merged =
// 0.6·−ln(point rank) + 0.4·−ln(list rank).
func TestMergeRanks(t *testing.T) {
	scores, pr, lr, err := MergeRanks([]float64{0.9, 0.2, 0.9, 0.5}, []float64{1, 4, 2, 3}, DefaultMergeWeight)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(pr, []int{1, 4, 2, 3}) || !slices.Equal(lr, []int{4, 1, 3, 2}) {
		t.Fatalf("ranks %v %v", pr, lr)
	}
	// d1: 0.4·−ln 4; d2: 0.6·−ln 4; d3: 0.6·−ln 2 + 0.4·−ln 3; d4: 0.6·−ln 3 + 0.4·−ln 2.
	want := []float64{-0.5545177444479562, -0.8317766166719344, -0.8553332238032112, -0.936426245424844}
	for i := range want {
		if math.Abs(scores[i]-want[i]) > 1e-15 {
			t.Errorf("d%d merged %v, want %v", i+1, scores[i], want[i])
		}
	}
	// The rule's weights are DIVER's: 0.4 for the listwise ranking.
	if 1-DefaultMergeWeight != 0.4 {
		t.Errorf("listwise weight %v", 1-DefaultMergeWeight)
	}
}

// TestMergeTies: rank pairs whose merged values are equal (with 0.6,
// p³l² equal: ranks 1 and 8 against 4 and 1) get the same score, not two
// sums differing in their last digits, so Rerank keeps them in
// first-stage order; and over every pair of ranks up to 100 the scores
// order as the exact values do. Weights need at most three decimals.
func TestMergeTies(t *testing.T) {
	// Eight documents: d1 first pointwise and last listwise, d4 fourth
	// pointwise and first listwise.
	point := []float64{8, 7, 6, 5, 4, 3, 2, 1}
	list := []float64{1, 7, 6, 8, 5, 4, 3, 2}
	scores, pr, lr, err := MergeRanks(point, list, 0.6)
	if err != nil {
		t.Fatal(err)
	}
	if pr[0] != 1 || lr[0] != 8 || pr[3] != 4 || lr[3] != 1 || scores[0] != scores[3] {
		t.Fatalf("ranks (%d, %d) and (%d, %d) merge to %v and %v", pr[0], lr[0], pr[3], lr[3], scores[0], scores[3])
	}
	cs := cands(8)
	if got := order(cs, scores); slices.Index(got, "d1") > slices.Index(got, "d4") {
		t.Errorf("tied d1 and d4 out of input order: %v", got)
	}
	slices.Reverse(cs)
	slices.Reverse(scores)
	if got := order(cs, scores); slices.Index(got, "d4") > slices.Index(got, "d1") {
		t.Errorf("tied d4 and d1 out of input order: %v", got)
	}
	type pair struct {
		exact int64 // p³l²
		score float64
	}
	var ps []pair
	for p := 1; p <= 100; p++ {
		for l := 1; l <= 100; l++ {
			ps = append(ps, pair{exact: int64(p * p * p * l * l), score: mergedScore(p, l, 3, 5)})
		}
	}
	slices.SortFunc(ps, func(a, b pair) int { return int(a.exact - b.exact) })
	for i := 1; i < len(ps); i++ {
		a, b := ps[i-1], ps[i]
		if a.exact == b.exact && a.score != b.score || a.exact < b.exact && a.score <= b.score {
			t.Fatalf("p³l² %d → %v, %d → %v", a.exact, a.score, b.exact, b.score)
		}
	}
	for _, w := range []float64{0, 1, -0.5, 0.1234} {
		if _, _, _, err := MergeRanks(point, list, w); err == nil {
			t.Errorf("weight %v accepted", w)
		}
	}
	if p, q, err := mergeFraction(0.625); p != 5 || q != 8 || err != nil {
		t.Errorf("0.625 = %d/%d %v", p, q, err)
	}
}

// TestDIVERFacts: the defaults and the merge are those of the facts
// recorded from DIVER's code (testdata/diver/facts.json), and the
// built-in grouprank prompt asks for the answer format they describe.
func TestDIVERFacts(t *testing.T) {
	var facts struct {
		GroupRank struct {
			ScoreScale struct{ Min, Max int } `json:"score_scale"`
			Answer     struct {
				Reasoning []string `json:"reasoning_tags"`
				Answer    []string `json:"answer_tags"`
				Keys      []string `json:"example_keys"`
			} `json:"answer_format"`
			Defaults struct {
				GroupSize int `json:"group_size"`
				Interval  int `json:"interval"`
				Repeats   int `json:"repeat_num"`
			} `json:"defaults"`
		} `json:"grouprank"`
		Merge struct {
			Weights struct{ Pointwise, Listwise float64 } `json:"weights"`
			Example struct {
				Point  []string           `json:"pointwise_order"`
				List   []string           `json:"listwise_order"`
				Merged map[string]float64 `json:"merged"`
				Order  []string           `json:"merged_order"`
			} `json:"example"`
		} `json:"merge"`
	}
	b, err := os.ReadFile(filepath.Join("testdata", "diver", "facts.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &facts); err != nil {
		t.Fatal(err)
	}
	g := facts.GroupRank
	if DefaultGroupSize != g.Defaults.GroupSize || g.Defaults.Interval != g.Defaults.GroupSize || DefaultRepeats != g.Defaults.Repeats || g.ScoreScale.Min != 0 || GroupScale != g.ScoreScale.Max {
		t.Errorf("grouprank defaults %d, %d, scale 0–%d; DIVER's %+v, scale %+v", DefaultGroupSize, DefaultRepeats, GroupScale, g.Defaults, g.ScoreScale)
	}
	if DefaultMergeWeight != facts.Merge.Weights.Pointwise || 1-DefaultMergeWeight != facts.Merge.Weights.Listwise {
		t.Errorf("merge weight %v, DIVER's %+v", DefaultMergeWeight, facts.Merge.Weights)
	}
	msgs, err := DefaultPrompts().Messages(KindGroupRank, ListPrompt{Query: "q", Num: 3, Passages: []PromptPassage{{N: 1, Text: "a"}, {N: 2, Text: "b"}, {N: 3, Text: "c"}}})
	if err != nil {
		t.Fatal(err)
	}
	var all strings.Builder
	for _, m := range msgs {
		all.WriteString(m.Content)
	}
	for _, s := range append(append(append(g.Answer.Reasoning, g.Answer.Answer...), "```json", "0 to 10"), g.Answer.Keys...) {
		if !strings.Contains(all.String(), s) {
			t.Errorf("the grouprank prompt lacks %q", s)
		}
	}
	// The worked example: each document's rank in each ordering.
	ex := facts.Merge.Example
	point, list := make([]float64, len(ex.Point)), make([]float64, len(ex.Point))
	for i, d := range ex.Point {
		point[i] = float64(len(ex.Point) - i)
		list[i] = float64(len(ex.List) - slices.Index(ex.List, d))
	}
	scores, _, _, err := MergeRanks(point, list, DefaultMergeWeight)
	if err != nil {
		t.Fatal(err)
	}
	for i, d := range ex.Point {
		if math.Abs(scores[i]-ex.Merged[d]) > 1e-15 {
			t.Errorf("%s merged %v, the example says %v", d, scores[i], ex.Merged[d])
		}
	}
	cs := make([]Candidate, len(ex.Point))
	for i, d := range ex.Point {
		cs[i] = Candidate{ID: d}
	}
	if got := order(cs, scores); !slices.Equal(got, ex.Order) {
		t.Errorf("merged order %v, the example's %v", got, ex.Order)
	}
}

// diverOracle answers rank1's prompts true for the documents in good and
// false for the rest, and listwise prompts with the passages ordered by
// list (ids best first), reasoning in a sentence.
func diverOracle(good map[string]bool, list []string) func(chatReq) reply {
	return func(req chatReq) reply {
		u := lastUser(req)
		docs := promptDocs(u)
		if strings.Contains(u, "\nPassage: ") {
			if good[docs[0]] {
				return reply{Reasoning: "It answers.", Content: "true"}
			}
			return reply{Reasoning: "It does not.", Content: "false"}
		}
		idx := make([]int, len(docs))
		for i := range idx {
			idx[i] = i
		}
		slices.SortStableFunc(idx, func(a, b int) int { return slices.Index(list, docs[a]) - slices.Index(list, docs[b]) })
		parts := make([]string, len(idx))
		for i, j := range idx {
			parts[i] = fmt.Sprintf("[%d]", j+1)
		}
		return reply{Reasoning: "Ordered.", Content: "<answer>" + strings.Join(parts, " > ") + "</answer>"}
	}
}

// TestDiverMerge reranks through New's diver kind (rank1 and reasonrank
// against one scripted server): the run is the hand-merged ranking, the
// pointwise ties ranked in first-stage order; both rerankers' exchanges
// and the merge's account are traced; the stats and the usage meter count
// every call of both; a replay from the cache sends nothing and gives the
// same run.
func TestDiverMerge(t *testing.T) {
	// First stage d1..d5. rank1: d2, d4 true (p = 1), the rest false
	// (0): pointwise ranks d2 1, d4 2, d1 3, d3 4, d5 5. reasonrank:
	// d5, d1, d4, d3, d2.
	srv := newScripted(t, diverOracle(map[string]bool{"d2": true, "d4": true}, []string{"d5", "d1", "d4", "d3", "d2"}))
	store := &llm.MemoryStore{}
	meter := &usage.Meter{}
	spec := Spec{Kind: "DIVER", Model: "m", BaseURL: srv.URL + "/v1", HTTP: fastClient(), LLMCache: store, Meter: meter, TextOnly: true}
	s := mustNew(t, spec)
	run := ir.Run{"q": nil}
	for i := range 5 {
		run["q"] = append(run["q"], ir.Hit{DocID: fmt.Sprintf("d%d", i+1), Score: float64(10 - i)})
	}
	var mu sync.Mutex
	var traces []Trace
	ctx := WithTrace(context.Background(), func(tr Trace) { mu.Lock(); traces = append(traces, tr); mu.Unlock() })
	got, err := Rerank(ctx, run, map[string]string{"q": "query"}, textIsID, s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// merged = 0.6·−ln(p) + 0.4·−ln(l):
	// d1 (3, 2) −0.9363; d2 (1, 5) −0.6438; d3 (4, 4) −1.3863;
	// d4 (2, 3) −0.8553; d5 (5, 1) −0.9657.
	if want := []string{"d2", "d4", "d1", "d5", "d3"}; !slices.Equal(ids(got["q"]), want) {
		t.Errorf("merged %v, want %v", ids(got["q"]), want)
	}
	parts := map[string]int{}
	for _, tr := range traces {
		parts[tr.Part]++
		if tr.Part == MergeTrace {
			want := map[string]MergedDoc{"d1": {3, 2, 0}, "d2": {1, 5, 0}, "d3": {4, 4, 0}, "d4": {2, 3, 0}, "d5": {5, 1, 0}}
			for i, d := range tr.Docs {
				m := tr.Merged[i]
				w := want[d]
				if m.Pointwise != w.Pointwise || m.Listwise != w.Listwise || math.Abs(m.Score-(0.6*-math.Log(float64(w.Pointwise))+0.4*-math.Log(float64(w.Listwise)))) > 1e-15 {
					t.Errorf("%s: merge trace %+v, want ranks %d and %d", d, m, w.Pointwise, w.Listwise)
				}
			}
		}
	}
	if parts[MergePointwise] != 5 || parts[MergeListwise] != 1 || parts[MergeTrace] != 1 || len(parts) != 3 {
		t.Errorf("traces by part %v, want 5 pointwise, 1 listwise, 1 merge", parts)
	}
	st := s.(interface{ Stats() Stats }).Stats()
	lines := meter.Lines()
	if st.Calls != 6 || srv.calls.Load() != 6 || len(lines) != 1 || lines[0].New.Calls != 6 || lines[0].New.PromptTokens != st.PromptTokens || st.PromptTokens == 0 {
		t.Errorf("stats %+v, meter %+v after %d requests", st, lines, srv.calls.Load())
	}

	// Replay: the cache answers, nothing is sent.
	spec.Replay, spec.Meter = true, &usage.Meter{}
	replay := mustNew(t, spec)
	again, err := Rerank(context.Background(), run, map[string]string{"q": "query"}, textIsID, replay, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if srv.calls.Load() != 6 || !slices.Equal(ids(again["q"]), ids(got["q"])) {
		t.Errorf("the replay sent %d requests and ranked %v", srv.calls.Load()-6, ids(again["q"]))
	}
	if st := replay.(interface{ Stats() Stats }).Stats(); st.Cached != 6 {
		t.Errorf("replay stats %+v", st)
	}
	if l := spec.Meter.Lines(); len(l) != 1 || l[0].Cached.Calls != 6 || l[0].New.Calls != 0 {
		t.Errorf("replay meter %+v", l)
	}
	// A batch size would split the listwise ranking: refused.
	if _, err := Rerank(context.Background(), run, map[string]string{"q": "query"}, textIsID, replay, Options{BatchSize: 2}); err == nil {
		t.Error("a batched diver merge was accepted")
	}
}

func TestNewGroupRankDiver(t *testing.T) {
	base := "http://localhost:8000/v1"
	g, err := New(Spec{Kind: "grouprank", BaseURL: base, Model: "m", GroupSize: 20, Repeats: 6, Concurrency: 3, MaxTokens: 99})
	if gr, ok := g.(*GroupRank); err != nil || !ok || gr.GroupSize != 20 || gr.Repeats != 6 || gr.Concurrency != 3 || gr.MaxTokens != 99 {
		t.Errorf("grouprank: %+v %v", g, err)
	}
	if g, _ := New(Spec{Kind: "grouprank", BaseURL: base, Model: "m"}); g.(*GroupRank).GroupSize != DefaultGroupSize || g.(*GroupRank).Repeats != DefaultRepeats {
		t.Errorf("grouprank defaults: %+v", g)
	}
	d, err := New(Spec{Kind: "diver", BaseURL: base, Model: "m", Merge: MergeSpec{Pointwise: "grouprank", Listwise: "insertrank", Weight: 0.7}})
	if m, ok := d.(*Merge); err != nil || !ok || m.Weight != 0.7 {
		t.Fatalf("diver: %+v %v", d, err)
	} else if _, ok := m.Point.(*GroupRank); !ok {
		t.Errorf("diver's pointwise reranker %T", m.Point)
	} else if _, ok := m.List.(*InsertRank); !ok {
		t.Errorf("diver's listwise reranker %T", m.List)
	}
	if d, _ := New(Spec{Kind: "diver", BaseURL: base, Model: "m"}); d.(*Merge).Weight != 0.6 {
		t.Errorf("diver default weight %v", d.(*Merge).Weight)
	} else if _, ok := d.(*Merge).Point.(*Rank1); !ok {
		t.Errorf("diver's default pointwise reranker %T", d.(*Merge).Point)
	} else if _, ok := d.(*Merge).List.(*ReasonRank); !ok {
		t.Errorf("diver's default listwise reranker %T", d.(*Merge).List)
	}
	for _, tc := range []struct {
		spec Spec
		want string
	}{
		{Spec{Kind: "grouprank", BaseURL: base, Model: "m", GroupSize: -1}, "group size and repeats of at least 1"},
		{Spec{Kind: "diver", BaseURL: base, Model: "m", Merge: MergeSpec{Pointwise: "reasonrank"}}, "pointwise reranker is one of llm-pointwise, rank1, grouprank"},
		{Spec{Kind: "diver", BaseURL: base, Model: "m", Merge: MergeSpec{Listwise: "tei"}}, "listwise reranker is one of"},
		{Spec{Kind: "diver", BaseURL: base, Model: "m", Merge: MergeSpec{Weight: 1}}, "between 0 and 1"},
		{Spec{Kind: "diver", BaseURL: base}, "needs the model name"},
	} {
		if _, err := New(tc.spec); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.spec, err, tc.want)
		}
		if _, err := tc.spec.Settings(); tc.spec.Model != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("settings of %+v: %v, want %q", tc.spec, err, tc.want)
		}
	}
	for _, k := range []string{"grouprank", "diver"} {
		if !UsesLLM(k) || !slices.Contains(Kinds, k) {
			t.Errorf("%s: UsesLLM %v, in Kinds %v", k, UsesLLM(k), slices.Contains(Kinds, k))
		}
	}
	// Settings change with every knob of both kinds.
	gs, _ := Spec{Kind: "grouprank"}.Settings()
	if gs["group_size"] != DefaultGroupSize || gs["repeats"] != DefaultRepeats || gs["prompts_sha256"] != DefaultPrompts().Digest() {
		t.Errorf("grouprank settings %v", gs)
	}
	ds, _ := Spec{Kind: "diver", TextOnly: true}.Settings()
	p, _ := ds[MergePointwise].(map[string]any)
	l, _ := ds[MergeListwise].(map[string]any)
	if ds["weight"] != 0.6 || p["kind"] != KindRank1 || p["logprobs"] != false || l["kind"] != KindReasonRank || l["prompts_sha256"] == nil {
		t.Errorf("diver settings %v", ds)
	}
	other, _ := Spec{Kind: "diver", Merge: MergeSpec{Listwise: "llm-listwise"}}.Settings()
	if fmt.Sprint(other) == fmt.Sprint(ds) || other[MergeListwise].(map[string]any)["kind"] != "llm-listwise" {
		t.Errorf("another listwise reranker, the same settings: %v", other)
	}
}

// TestGroupRankMeanExact: a passage's mean was summed in floating point
// in the order its groups' answers came back, so two passages judged
// 0.1, 0.2, 0.3 and 0.2, 0.3, 0.1 scored 0.020000000000000004 and 0.02:
// not the tie in first-stage order GroupRank promises, and with
// concurrent groups a rerun from the cache could sum in another order
// and rank otherwise. The mean is now exact: equal means are equal
// numbers, whatever the order of the answers.
func TestGroupRankMeanExact(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]int{}
	judged := map[string][]string{"d1": {"0.1", "0.2", "0.3"}, "d2": {"0.2", "0.3", "0.1"}}
	srv := newScripted(t, func(req chatReq) reply {
		mu.Lock()
		defer mu.Unlock()
		return groupAnswer(req, func(d string) string { seen[d]++; return judged[d][seen[d]-1] })
	})
	g := &GroupRank{Chat: srv.client(t, nil), GroupSize: 1, Repeats: 3, Concurrency: 1}
	scores, err := g.ScoreCandidates(context.Background(), "q", "the query", cands(2))
	if err != nil {
		t.Fatal(err)
	}
	if scores[0] != scores[1] || scores[0] != 0.02 {
		t.Errorf("scores %v: two passages of mean judgement 0.2 must score 0.02 alike", scores)
	}
}
