package ir

import (
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
)

func hitsOf(pairs ...any) []Hit {
	var hits []Hit
	for i := 0; i < len(pairs); i += 2 {
		hits = append(hits, Hit{DocID: pairs[i].(string), Score: pairs[i+1].(float64)})
	}
	return hits
}

func ids(hits []Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.DocID
	}
	return out
}

func f32(x float32) float64 { return float64(x) }

// below is the float32 one step under x.
func below(x float64) float64 { return f32(math.Nextafter32(float32(x), float32(math.Inf(-1)))) }

func TestRankByDocIDIsTrecEvalsOrder(t *testing.T) {
	// Listed in a scorer's own tie order (gensim's stable order), with a
	// pair equal only in float32 (1+1e-9 and 1).
	hits := hitsOf("a", 2.0, "b", 1.0, "d", 1.0+1e-9, "c", 1.0, "e", 0.5)
	Rank(hits, TiesByDocID)
	if got, want := ids(hits), []string{"a", "d", "c", "b", "e"}; !slices.Equal(got, want) {
		t.Fatalf("order %v, want %v (float32 score desc, doc id desc)", got, want)
	}
	want := []float64{2, 1.0 + 1e-9, below(1), below(below(1)), 0.5}
	for i, h := range hits {
		if h.Score != want[i] {
			t.Errorf("rank %d (%s): score %v, want %v", i+1, h.DocID, h.Score, want[i])
		}
	}
	if i := TieAt(hits); i != -1 {
		t.Errorf("TieAt after Rank = %d, want -1", i)
	}
}

func TestRankAsListedKeepsTheOrder(t *testing.T) {
	hits := hitsOf("b", 1.0, "a", 1.0, "c", 1.0, "z", 0.0)
	Rank(hits, TiesAsListed)
	if got, want := ids(hits), []string{"b", "a", "c", "z"}; !slices.Equal(got, want) {
		t.Fatalf("order %v, want the listed one", got)
	}
	one := below(1)
	want := []float64{1, one, below(one), 0}
	for i, h := range hits {
		if h.Score != want[i] {
			t.Errorf("rank %d: score %v, want %v", i+1, h.Score, want[i])
		}
	}
}

func TestRankLeavesRankedListsUntouched(t *testing.T) {
	// Strictly decreasing in float32; float64 digits below float32
	// precision are kept, not rounded.
	orig := hitsOf("a", 3.0000000001, "z", 2.5, "b", -0.1, "c", -7.25)
	for _, ties := range []Ties{TiesByDocID, TiesAsListed} {
		hits := slices.Clone(orig)
		Rank(hits, ties)
		if !slices.Equal(hits, orig) {
			t.Errorf("%v: a ranked list changed: %v", ties, hits)
		}
	}
}

func TestRankEdgeValues(t *testing.T) {
	negZero := math.Copysign(0, -1)
	tiny := f32(math.SmallestNonzeroFloat32)
	for _, c := range []struct {
		name string
		in   []float64
		want []float64
	}{
		// −0 equals +0, as C compares them: the second steps below zero.
		{"signed zeros", []float64{0, negZero}, []float64{0, -tiny}},
		{"zeros", []float64{0, 0, 0}, []float64{0, -tiny, -2 * tiny}},
		// Denormals step by one denormal.
		{"denormal", []float64{tiny, tiny}, []float64{tiny, 0}},
		// Beyond float32: +Inf in float32, as trec_eval reads it.
		{"huge", []float64{1e300, 1e300}, []float64{1e300, math.MaxFloat32}},
		{"largest", []float64{math.MaxFloat32, math.MaxFloat32}, []float64{math.MaxFloat32, below(math.MaxFloat32)}},
		// A step can reach the next score, which then steps too.
		{"cascade", []float64{1, 1, below(1), 0.5}, []float64{1, below(1), below(below(1)), 0.5}},
	} {
		hits := make([]Hit, len(c.in))
		for i, s := range c.in {
			hits[i] = Hit{DocID: strconv.Itoa(9 - i), Score: s} // ids descending: trec_eval's order already
		}
		Rank(hits, TiesByDocID)
		for i, h := range hits {
			if h.Score != c.want[i] || math.Signbit(h.Score) != math.Signbit(c.want[i]) {
				t.Errorf("%s: rank %d score %v, want %v", c.name, i+1, h.Score, c.want[i])
			}
		}
		if i := TieAt(hits); i != -1 {
			t.Errorf("%s: still tied at %d: %v", c.name, i, hits)
		}
	}
}

// TestRankRandom checks the rule's promises on random lists with many
// ties: the order (trec_eval's, or the listed one), scores strictly
// decreasing in float32, unchanged scores where nothing was tied, and
// idempotence.
func TestRankRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for n := range 300 {
		hits := make([]Hit, rng.IntN(40))
		for i := range hits {
			hits[i] = Hit{DocID: "d" + strconv.Itoa(rng.IntN(1000)), Score: float64(rng.IntN(5)) / 4}
			if rng.IntN(4) == 0 {
				hits[i].Score += 1e-12 // equal to its neighbours in float32 only
			}
		}
		for _, ties := range []Ties{TiesByDocID, TiesAsListed} {
			got := slices.Clone(hits)
			Rank(got, ties)
			want := slices.Clone(hits)
			if ties == TiesByDocID {
				slices.SortStableFunc(want, ByScore)
			}
			if !slices.EqualFunc(got, want, func(a, b Hit) bool { return a.DocID == b.DocID }) {
				t.Fatalf("case %d %v: order %v, want %v", n, ties, ids(got), ids(want))
			}
			if i := TieAt(got); i != -1 {
				t.Fatalf("case %d %v: tie at %d: %v", n, ties, i, got)
			}
			for i := range got {
				if i == 0 || float32(want[i].Score) < float32(got[i-1].Score) {
					if got[i].Score != want[i].Score {
						t.Fatalf("case %d %v: rank %d was below its predecessor and changed: %v → %v", n, ties, i+1, want[i].Score, got[i].Score)
					}
				}
			}
			// trec_eval's reading of the ranked list is the list itself.
			again := slices.Clone(got)
			slices.SortStableFunc(again, ByScore)
			if !slices.Equal(again, got) {
				t.Fatalf("case %d %v: trec_eval reads %v, the list is %v", n, ties, ids(again), ids(got))
			}
			Rank(again, ties)
			if !slices.Equal(again, got) {
				t.Fatalf("case %d %v: Rank is not idempotent", n, ties)
			}
		}
	}
}

func TestRunRankAndTieAt(t *testing.T) {
	r := Run{"q1": hitsOf("a", 1.0, "b", 1.0), "q2": hitsOf("x", 0.5)}
	if TieAt(r["q1"]) != 1 || TieAt(r["q2"]) != -1 || TieAt(nil) != -1 {
		t.Fatalf("TieAt: %d %d", TieAt(r["q1"]), TieAt(r["q2"]))
	}
	r.Rank(TiesByDocID)
	if got := ids(r["q1"]); !slices.Equal(got, []string{"b", "a"}) || TieAt(r["q1"]) != -1 {
		t.Fatalf("q1 after Run.Rank: %v", r["q1"])
	}
}
