package fusion

import (
	"errors"
	"io"
	"math"
	"reflect"
	"testing"

	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/measure/measuretest"
	"github.com/r2med/r2med/trec"
)

func TestSpecDefaults(t *testing.T) {
	var s Spec
	if s.Name() != "rrf" || s.RRFK() != 60 || s.DepthFor(10) != 100 || s.DepthFor(1000) != 1000 {
		t.Errorf("zero Spec: %s k=%v depth %d/%d", s.Name(), s.RRFK(), s.DepthFor(10), s.DepthFor(1000))
	}
	if n, err := s.Normalization(); err != nil || n != MinMax {
		t.Errorf("norm %v %v", n, err)
	}
	if (Spec{Depth: 30}).DepthFor(10) != 30 || (Spec{Method: "CombSUM"}).Name() != "combsum" {
		t.Error("explicit depth or method case")
	}
	if got := (Spec{}).Describe(); !reflect.DeepEqual(got, map[string]any{"method": "rrf", "k": 60.0}) {
		t.Errorf("describe %v", got)
	}
	if got := (Spec{Method: "combsum", Norm: "zscore", Weights: []float64{1, 2}, Depth: 7}).Describe(); !reflect.DeepEqual(got,
		map[string]any{"method": "combsum", "norm": "zmuv", "weights": []float64{1, 2}, "depth": 7}) {
		t.Errorf("describe %v", got)
	}
}

func TestSpecValidate(t *testing.T) {
	for _, c := range []struct {
		s     Spec
		field string
	}{
		{Spec{Method: "max"}, "method"},
		{Spec{K: -1}, "k"},
		{Spec{Method: "combsum", Norm: "l2"}, "norm"},
		{Spec{Method: "combsum", Weights: []float64{1}}, "weights"},
		{Spec{Depth: -3}, "depth"},
		// A NaN or infinite weight made every fused score NaN or ±Inf,
		// which no run file can hold; a negative one turned a run's best
		// documents into its worst. `r2med fuse --weights` refused them
		// all, pipeline files and the search service did not.
		{Spec{Method: "combsum", Weights: []float64{math.NaN(), 1}}, "weights"},
		{Spec{Method: "combsum", Weights: []float64{1, math.Inf(1)}}, "weights"},
		{Spec{Method: "combsum", Weights: []float64{-0.5, 1}}, "weights"},
		{Spec{K: math.Inf(1)}, "k"},
		{Spec{K: math.NaN()}, "k"},
	} {
		err := c.s.Validate(2)
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != c.field {
			t.Errorf("%+v: %v, want an error about %s", c.s, err, c.field)
		}
		if _, err := c.s.Fuse(nil, 10); err == nil {
			t.Errorf("%+v: Fuse accepted it", c.s)
		}
	}
	if err := (Spec{Method: "combsum", Weights: []float64{1, 2}}).Validate(2); err != nil {
		t.Error(err)
	}
}

// ranked is run ranked as the fusion stage ranks it.
func ranked(run ir.Run) ir.Run {
	trec.Rank(run, ir.TiesAsListed)
	return run
}

// TestSpecFuse: Fuse is the package functions with the settings' values,
// ranked as listed.
func TestSpecFuse(t *testing.T) {
	a := ir.Run{"q": {{DocID: "a", Score: 3}, {DocID: "b", Score: 2}, {DocID: "c", Score: 1}}}
	b := ir.Run{"q": {{DocID: "c", Score: 9}, {DocID: "a", Score: 1}}}
	runs := []ir.Run{a, b}
	for _, c := range []struct {
		s    Spec
		want ir.Run
	}{
		{Spec{}, ranked(RRF(runs, 60, 2))},
		{Spec{K: 1}, ranked(RRF(runs, 1, 2))},
		{Spec{Method: "combsum"}, ranked(CombSUM(runs, nil, MinMax, 2))},
		{Spec{Method: "combsum", Norm: "none", Weights: []float64{2, 0.5}}, ranked(CombSUM(runs, []float64{2, 0.5}, Raw, 2))},
	} {
		got, err := c.s.Fuse(runs, 2)
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%+v: %v %v, want %v", c.s, got, err, c.want)
		}
	}
}

// TestSpecFuseAllTies: the fusion stage's output, written and read back,
// is evaluated in the tie order fusion chose (HAKARI's best rank), not by
// doc id, for RRF and CombSUM alike, in memory and from the file.
func TestSpecFuseAllTies(t *testing.T) {
	// m and n tie in RRF (each second in one list); every document ties
	// in CombSUM over constant lists.
	seconds := []ir.Run{{"q": list("d3", "d1")}, {"q": list("d3", "d0")}}
	constant := []ir.Run{
		{"q": {{DocID: "d3", Score: 5}, {DocID: "d0", Score: 5}}},
		{"q": {{DocID: "d1", Score: 5}, {DocID: "d0", Score: 5}}},
		{"q": {{DocID: "d4", Score: 5}}},
	}
	// trec_eval's doc-id order would put d4 before d1 and d1 before d0.
	qrels := ir.Qrels{"q": {"d1": 1, "d0": 2}}
	for _, c := range []struct {
		s    Spec
		runs []ir.Run
		want []string
	}{
		{Spec{}, seconds, []string{"d3", "d0", "d1"}},
		{Spec{Method: "combsum"}, constant, []string{"d1", "d3", "d4", "d0"}},
		{Spec{Method: "combsum", Norm: "zscore"}, constant, []string{"d1", "d3", "d4", "d0"}},
	} {
		got, err := c.s.Fuse(c.runs, 0)
		if err != nil {
			t.Fatal(err)
		}
		if ids := ids(got["q"]); !reflect.DeepEqual(ids, c.want) {
			t.Fatalf("%+v: fused %v, want %v", c.s, ids, c.want)
		}
		listed := measuretest.CheckRun(t, got, qrels)
		if !reflect.DeepEqual(listed["q"], c.want) {
			t.Errorf("%+v: the written run lists %v, want %v", c.s, listed["q"], c.want)
		}
		measuretest.CheckEvaluated(t, got, listed, qrels)
	}
}

// TestSpecFuseRefusesScoresBeyondFloat32: CombSUM without normalization
// can sum raw scores beyond float32's range, in which trec_eval reads a
// run's scores (as −Inf, all equal). Fuse refuses such a run, saying
// which score and what to do, instead of its writer failing later with
// "score -Inf".
func TestSpecFuseRefusesScoresBeyondFloat32(t *testing.T) {
	a := ir.Run{"q1": {{DocID: "d1", Score: -2e38}, {DocID: "d2", Score: -3e38}}}
	b := ir.Run{"q1": {{DocID: "d1", Score: -2e38}, {DocID: "d2", Score: -3e38}}}
	_, err := Spec{Method: "combsum", Norm: "none"}.Fuse([]ir.Run{a, b}, 0)
	want := `query "q1": document "d1" has the fused score -4e+38 (combsum, norm none), beyond float32's range (±3.4e+38), in which trec_eval reads a run's scores: it would read -Inf and rank the document otherwise than fused; normalize the runs' scores (norm minmax or zscore), lower the weights or scale the runs' scores down`
	if err == nil || err.Error() != want {
		t.Fatalf("error\n got: %v\nwant: %s", err, want)
	}
	// Within range, the same runs fuse.
	if _, err := (Spec{Method: "combsum", Norm: "minmax"}).Fuse([]ir.Run{a, b}, 0); err != nil {
		t.Fatal(err)
	}
}

// Fuse refuses a fused score exactly where trec.WriteRun would refuse to
// write it (trec.Writable): one rule, not two. Just above float32's
// largest value a double still rounds to it (trec_eval reads
// 3.4028235e38, finite), from the midpoint to 2^128 on it reads +Inf.
func TestSpecFuseRangeIsWriteRuns(t *testing.T) {
	mid := math.Ldexp(1, 128) - math.Ldexp(1, 103)
	for _, score := range []float64{math.MaxFloat32, math.Nextafter(mid, 0), mid, 1e39, -1e39} {
		in := ir.Run{"q1": {{DocID: "d1", Score: score}, {DocID: "d2", Score: 1}}}
		if score < 0 {
			in["q1"][0], in["q1"][1] = in["q1"][1], in["q1"][0]
		}
		_, fuseErr := Spec{Method: "combsum", Norm: "none"}.Fuse([]ir.Run{in}, 0)
		writeErr := trec.WriteRun(io.Discard, in, "t")
		if (fuseErr == nil) != (writeErr == nil) {
			t.Errorf("score %v: fuse says %v, WriteRun %v", score, fuseErr, writeErr)
		}
	}
}
