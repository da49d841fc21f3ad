package rerank

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/r2med/r2med/onnx/onnxtest"
)

// The tiny random-weight cross-encoders of onnx/testdata against the
// float64 numpy forward pass of the same weights (reference.json, made by
// onnx/testdata/gen/make_tiny_bert.py): a one-logit head read raw and a
// two-logit head read at class 1.
func TestCrossEncoderMatchesNumpy(t *testing.T) {
	onnxtest.Require(t)
	for _, tc := range []struct {
		model string
		col   int
	}{{"tiny-cross-1", 0}, {"tiny-cross-2", 1}} {
		ce, err := NewCrossEncoder(onnxtest.Model(tc.model), CrossEncoderOptions{BatchSize: 2})
		if err != nil {
			t.Fatal(err)
		}
		defer ce.Close()
		if ce.MaxLength() != 64 {
			t.Errorf("%s: max length %d, want the model's 64 positions", tc.model, ce.MaxLength())
		}
		ref := onnxtest.LoadReference(t, tc.model)
		// One query per case, so score each pair alone and then all at
		// once (padding and batch splits must not change a score).
		var all []float64
		for _, c := range ref.Cases {
			got, err := ce.Score(context.Background(), c.Query, []string{c.Document})
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, got...)
			if want := c.Logits[tc.col]; math.Abs(got[0]-want) > 1e-5 {
				t.Errorf("%s %q: score %v, numpy %v", tc.model, c.Query, got[0], want)
			}
		}
		q := ref.Cases[0].Query
		docs := []string{ref.Cases[0].Document, ref.Cases[0].Document + " extra words make this one longer", ref.Cases[0].Document}
		got, err := ce.Score(context.Background(), q, docs)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(got[0]-all[0]) > 1e-5 || math.Abs(got[2]-all[0]) > 1e-5 {
			t.Errorf("%s: batched scores %v differ from the single score %v", tc.model, got, all[0])
		}
		// A document far over the position limit is truncated, not an error.
		long := strings.Repeat("fever infection virus ", 200)
		if _, err := ce.Score(context.Background(), q, []string{long}); err != nil {
			t.Errorf("%s: long document: %v", tc.model, err)
		}
	}
}

func TestCrossEncoderHeads(t *testing.T) {
	onnxtest.Require(t)
	if _, err := NewCrossEncoder(onnxtest.Model("tiny-cross-2"), CrossEncoderOptions{Head: SingleLogit}); err == nil || !strings.Contains(err.Error(), "has 2 logits") {
		t.Errorf("single-logit head on a two-logit model: %v", err)
	}
	if _, err := NewCrossEncoder(onnxtest.Model("tiny-cross-1"), CrossEncoderOptions{Head: RelevantClass}); err == nil || !strings.Contains(err.Error(), "has 1 per pair") {
		t.Errorf("relevant-class head on a one-logit model: %v", err)
	}
	if _, err := NewCrossEncoder(onnxtest.Model("tiny-bert"), CrossEncoderOptions{}); err == nil || !strings.Contains(err.Error(), "rank 3") {
		t.Errorf("an encoder taken for a cross-encoder: %v", err)
	}
}

func TestCrossEncoderMissingModel(t *testing.T) {
	_, err := NewCrossEncoder(t.TempDir(), CrossEncoderOptions{})
	if err == nil || !strings.Contains(err.Error(), "no model.onnx") {
		t.Errorf("empty directory: %v", err)
	}
}
