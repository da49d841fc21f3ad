package measure

import (
	"slices"
	"strings"
	"testing"

	"github.com/r2med/r2med/ir"
)

// TestEveryFamilyIsComputed: each family of the table is computed by the
// pass of its kind, so none can score a silent 0.
func TestEveryFamilyIsComputed(t *testing.T) {
	for f := Family(0); f < numFamilies; f++ {
		if !slices.Contains(computedBy[f.Hakari()], f) {
			t.Errorf("%s (HAKARI %v) is in the family table but not in computedBy[%v]", f, f.Hakari(), f.Hakari())
		}
		if slices.Contains(computedBy[!f.Hakari()], f) {
			t.Errorf("%s is listed in the other pass too", f)
		}
	}
}

// TestFamilyWithoutComputationIsAnError: a family taken out of its pass
// makes Evaluate fail at plan time, naming it, instead of scoring 0.
func TestFamilyWithoutComputationIsAnError(t *testing.T) {
	qrels := ir.Qrels{"q": {"d1": 1}}
	run := ir.Run{"q": {{DocID: "d1", Score: 1}}}
	for _, m := range []Measure{{Family: BPref}, {Family: HakariMRR, Cutoff: 10}} {
		saved := computedBy[m.Family.Hakari()]
		computedBy[m.Family.Hakari()] = slices.DeleteFunc(slices.Clone(saved), func(f Family) bool { return f == m.Family })
		res, err := Evaluate(qrels, run, []Measure{m}, Options{})
		computedBy[m.Family.Hakari()] = saved
		if err == nil || !strings.Contains(err.Error(), m.Family.String()) {
			t.Errorf("%s left out of its pass: result %v, error %v; want an error naming it", m, res, err)
		}
		if res, err := Evaluate(qrels, run, []Measure{m}, Options{}); err != nil || res.All[0] != 1 {
			t.Errorf("%s in its pass: %v, %v; want 1", m, res, err)
		}
	}
}
