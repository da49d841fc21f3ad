package fusion

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/trec"
)

// list builds hits in the given order with descending dummy scores, since
// RRF looks only at list order.
func list(ids ...string) []ir.Hit {
	hits := make([]ir.Hit, len(ids))
	for i, id := range ids {
		hits[i] = ir.Hit{DocID: id, Score: float64(len(ids) - i)}
	}
	return hits
}

func scored(pairs ...any) []ir.Hit {
	var hits []ir.Hit
	for i := 0; i < len(pairs); i += 2 {
		hits = append(hits, ir.Hit{DocID: pairs[i].(string), Score: pairs[i+1].(float64)})
	}
	return hits
}

func ids(hits []ir.Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.DocID
	}
	return out
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-12 }

func TestRRFHandComputed(t *testing.T) {
	a := ir.Run{"q1": list("a", "b", "c")}
	b := ir.Run{"q1": list("b", "d", "a")}
	got := RRF([]ir.Run{a, b}, 60, 0)
	k := 60.0 // a variable, so the sums below are float64 arithmetic
	want := []ir.Hit{
		{DocID: "b", Score: 1/(k+2) + 1/(k+1)},
		{DocID: "a", Score: 1/(k+1) + 1/(k+3)},
		{DocID: "d", Score: 1 / (k + 2)},
		{DocID: "c", Score: 1 / (k + 3)},
	}
	if !reflect.DeepEqual(got["q1"], want) {
		t.Fatalf("RRF = %v, want %v", got["q1"], want)
	}
}

func TestRRFSumsInRunOrder(t *testing.T) {
	// HAKARI adds the BM25 term first, then the dense one; the stored score
	// must be that exact float64 sum.
	a := ir.Run{"q": list("x", "y", "z")}
	b := ir.Run{"q": list("z", "y", "x")}
	got := RRF([]ir.Run{a, b}, 100, 0)["q"]
	k := 100.0
	for _, h := range got {
		var want float64
		switch h.DocID {
		case "x":
			want = 0.0 + 1/(k+1) + 1/(k+3)
		case "y":
			want = 0.0 + 1/(k+2) + 1/(k+2)
		case "z":
			want = 0.0 + 1/(k+3) + 1/(k+1)
		}
		if h.Score != want {
			t.Errorf("%s: score %v, want exactly %v", h.DocID, h.Score, want)
		}
	}
}

// With k=0 these four documents all score exactly 1.0: d3, d1 and d4 by a
// first place in one list, d0 by two second places (1/2 + 1/2).
func tiedRuns() []ir.Run {
	return []ir.Run{
		{"q": list("d3", "d0")},
		{"q": list("d1", "d0")},
		{"q": list("d4")},
	}
}

func TestRRFTiesBestRank(t *testing.T) {
	got := RRF(tiedRuns(), 0, 0)["q"]
	for _, h := range got {
		if h.Score != 1 {
			t.Fatalf("expected an exact four-way tie at 1.0, got %v", got)
		}
	}
	// HAKARI: best source rank first (d1, d3, d4 were ranked 1st somewhere,
	// d0 only 2nd), then doc id ascending.
	if want := []string{"d1", "d3", "d4", "d0"}; !reflect.DeepEqual(ids(got), want) {
		t.Errorf("BestRank order %v, want %v", ids(got), want)
	}
}

func TestRRFTiesDocID(t *testing.T) {
	got := Fuser{Ties: DocID}.RRF(tiedRuns(), 0, 0)["q"]
	if want := []string{"d0", "d1", "d3", "d4"}; !reflect.DeepEqual(ids(got), want) {
		t.Errorf("DocID order %v, want %v", ids(got), want)
	}
}

func TestRRFTiesAtK100(t *testing.T) {
	// Docs found by only one list at the same rank tie; the HAKARI order then
	// falls back to doc id. "m" and "n" both sit at rank 2 of one list.
	a := ir.Run{"q": list("s", "m")}
	b := ir.Run{"q": list("s", "n")}
	got := RRF([]ir.Run{a, b}, 100, 0)["q"]
	if want := []string{"s", "m", "n"}; !reflect.DeepEqual(ids(got), want) {
		t.Errorf("order %v, want %v", ids(got), want)
	}
	b = ir.Run{"q": list("s", "l")}
	got = RRF([]ir.Run{a, b}, 100, 0)["q"]
	if want := []string{"s", "l", "m"}; !reflect.DeepEqual(ids(got), want) {
		t.Errorf("order %v, want %v", ids(got), want)
	}
}

func TestRRFDepthQueriesAndDuplicates(t *testing.T) {
	a := ir.Run{"q1": list("a", "b", "a", "c"), "q2": list("z")}
	b := ir.Run{"q1": list("c"), "q3": nil}
	got := RRF([]ir.Run{a, b}, 60, 2)
	if len(got) != 3 {
		t.Fatalf("queries %v, want q1 q2 q3", trec.QueryIDs(got))
	}
	// The second "a" is ignored, but "c" keeps rank 4 in the first list
	// (positions count as listed) and rank 1 in the second.
	k := 60.0
	want := []ir.Hit{{DocID: "c", Score: 1/(k+4) + 1/(k+1)}, {DocID: "a", Score: 1 / (k + 1)}}
	if !reflect.DeepEqual(got["q1"], want) {
		t.Errorf("q1 = %v, want %v", got["q1"], want)
	}
	if !reflect.DeepEqual(ids(got["q2"]), []string{"z"}) {
		t.Errorf("q2 = %v", got["q2"])
	}
	if got["q3"] == nil || len(got["q3"]) != 0 {
		t.Errorf("q3 = %#v, want an empty list", got["q3"])
	}
}

func TestRRFRejectsNegativeK(t *testing.T) {
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "k must be") {
			t.Errorf("panic = %v", r)
		}
	}()
	RRF(nil, -1, 0)
}

func TestCombSUMMinMax(t *testing.T) {
	a := ir.Run{"q": scored("a", 3.0, "c", 2.0, "b", 1.0)}
	b := ir.Run{"q": scored("b", 10.0, "d", 0.0)}
	got := CombSUM([]ir.Run{a, b}, []float64{1, 2}, MinMax, 0)["q"]
	// a: 1, c: 0.5, b: 0 + 2·1, d: 2·0 (and the lowest of a list scores as
	// if missing).
	want := []ir.Hit{{DocID: "b", Score: 2}, {DocID: "a", Score: 1}, {DocID: "c", Score: 0.5}, {DocID: "d", Score: 0}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("CombSUM = %v, want %v", got, want)
	}
}

func TestCombSUMZScore(t *testing.T) {
	a := ir.Run{"q": scored("a", 3.0, "c", 2.0, "b", 1.0)}
	b := ir.Run{"q": scored("b", 10.0, "d", 0.0)}
	got := CombSUM([]ir.Run{a, b}, nil, ZScore, 0)["q"]
	// List a: mean 2, σ = √(2/3); list b: mean 5, σ 5.
	za := 1 / math.Sqrt(2.0/3)
	want := []ir.Hit{{DocID: "a", Score: za}, {DocID: "c", Score: 0}, {DocID: "b", Score: 1 - za}, {DocID: "d", Score: -1}}
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for i := range want {
		if got[i].DocID != want[i].DocID || !near(got[i].Score, want[i].Score) {
			t.Errorf("rank %d: %v, want %v", i+1, got[i], want[i])
		}
	}
}

func TestCombSUMConstantListAndRaw(t *testing.T) {
	a := ir.Run{"q": scored("x", 5.0, "y", 5.0)}
	got := CombSUM([]ir.Run{a}, nil, MinMax, 0)["q"]
	for _, h := range got {
		if h.Score != 0 {
			t.Errorf("constant list: %v, want 0 (ranx's 1e-9 floor)", h)
		}
	}
	got = CombSUM([]ir.Run{a}, nil, ZScore, 0)["q"]
	for _, h := range got {
		if h.Score != 0 {
			t.Errorf("constant list z-score: %v, want 0", h)
		}
	}
	// Raw sums tie at 3: "x" was 2nd in the first list, "y" 1st in the
	// second, so "y" has the better source rank.
	a = ir.Run{"q": scored("w", 9.0, "x", 3.0, "y", 1.0)}
	b := ir.Run{"q": scored("y", 2.0)}
	got = CombSUM([]ir.Run{a, b}, nil, Raw, 0)["q"]
	want := []ir.Hit{{DocID: "w", Score: 9}, {DocID: "y", Score: 3}, {DocID: "x", Score: 3}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("raw: %v, want %v", got, want)
	}
	got = Fuser{Ties: DocID}.CombSUM([]ir.Run{a, b}, nil, Raw, 2)["q"]
	if want := []string{"w", "x"}; !reflect.DeepEqual(ids(got), want) {
		t.Errorf("raw, DocID ties, depth 2: %v, want %v", ids(got), want)
	}
}

func TestCombSUMWeightCountMismatchPanics(t *testing.T) {
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "2 weights for 1 runs") {
			t.Errorf("panic = %v", r)
		}
	}()
	CombSUM([]ir.Run{{}}, []float64{1, 2}, MinMax, 0)
}

func TestInputsUntouched(t *testing.T) {
	a := ir.Run{"q": scored("a", 3.0, "b", 1.0)}
	CombSUM([]ir.Run{a}, []float64{2}, MinMax, 0)
	RRF([]ir.Run{a}, 60, 1)
	if want := scored("a", 3.0, "b", 1.0); !reflect.DeepEqual(a["q"], want) {
		t.Errorf("input run changed: %v", a["q"])
	}
}

func TestNormString(t *testing.T) {
	for n, want := range map[Norm]string{MinMax: "min-max", ZScore: "zmuv", Raw: "none", 9: "Norm(9)"} {
		if n.String() != want {
			t.Errorf("%d: %q, want %q", n, n.String(), want)
		}
	}
}

// The expected order was produced by HAKARI-Bench's rrf_hybrid_rankings
// logic in Python (scores summed per source in order, then sorted by
// (-score, best_source_rank, doc_id)) on two lists drawn with
// random.Random(7); d20 and d26 tie exactly and fall back to doc id.
func TestRRFMatchesHAKARIOrder(t *testing.T) {
	a := ir.Run{"q": list("d21", "d05", "d15", "d29", "d07", "d28", "d09", "d00", "d13", "d08", "d27", "d22", "d26", "d14", "d23", "d24", "d19", "d06", "d16", "d25")}
	b := ir.Run{"q": list("d27", "d02", "d11", "d25", "d06", "d00", "d19", "d08", "d14", "d15", "d28", "d10", "d20", "d16", "d24", "d05", "d21", "d03", "d23", "d22")}
	want := []string{"d27", "d15", "d00", "d21", "d28", "d05", "d08", "d06", "d25", "d14", "d19", "d24", "d22", "d16", "d23", "d02", "d11", "d29", "d07", "d09", "d13", "d10", "d20", "d26", "d03"}
	if got := ids(RRF([]ir.Run{a, b}, 100, 0)["q"]); !reflect.DeepEqual(got, want) {
		t.Errorf("order\n got %v\nwant %v", got, want)
	}
}

func TestParseNorm(t *testing.T) {
	for name, want := range map[string]Norm{"minmax": MinMax, "Min-Max": MinMax, "zscore": ZScore, "z-score": ZScore, "ZMUV": ZScore, "none": Raw, "raw": Raw} {
		if got, err := ParseNorm(name); err != nil || got != want {
			t.Errorf("ParseNorm(%q) = %v, %v; want %v", name, got, err, want)
		}
	}
	for _, bad := range []string{"", "l2", "min max"} {
		if _, err := ParseNorm(bad); err == nil || !strings.Contains(err.Error(), "minmax, zscore or none") {
			t.Errorf("ParseNorm(%q): %v", bad, err)
		}
	}
}
