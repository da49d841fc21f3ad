package onnx_test

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/r2med/r2med/onnx"
	"github.com/r2med/r2med/onnx/onnxtest"
)

const tol = 1e-5

func open(t *testing.T, name string, opts onnx.Options) *onnx.Session {
	t.Helper()
	onnxtest.Require(t)
	s, err := onnx.Open(filepath.Join(onnxtest.Model(name), "model.onnx"), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// pad lays cases out as one right-padded batch.
func pad(cases []onnxtest.Case) onnx.Batch {
	n := 0
	for _, c := range cases {
		n = max(n, len(c.IDs))
	}
	b := onnx.Batch{Rows: len(cases), Len: n}
	b.IDs = make([]int64, b.Rows*n)
	b.TypeIDs = make([]int64, b.Rows*n)
	b.AttentionMask = make([]int64, b.Rows*n)
	for r, c := range cases {
		copy(b.IDs[r*n:], c.IDs)
		copy(b.TypeIDs[r*n:], c.TypeIDs)
		for i := range c.IDs {
			b.AttentionMask[r*n+i] = 1
		}
	}
	return b
}

// maxDiff compares row r of a [rows, seq, dim] output (tokens starting at
// off) with the reference hidden states.
func maxDiff(out onnx.Tensor, r, off int, want [][]float64) float64 {
	seq, dim := out.Shape[1], out.Shape[2]
	d := 0.0
	for i, row := range want {
		for j, w := range row {
			d = max(d, math.Abs(float64(out.Data[(r*seq+off+i)*dim+j])-w))
		}
	}
	return d
}

func TestEncoderSignature(t *testing.T) {
	s := open(t, "tiny-bert", onnx.Options{})
	if got := s.Inputs(); !slices.Equal(got, []string{"input_ids", "attention_mask", "token_type_ids"}) {
		t.Errorf("inputs %v", got)
	}
	if s.Output() != "last_hidden_state" || s.Rank() != 3 || s.Dim() != 32 {
		t.Errorf("output %s rank %d dim %d", s.Output(), s.Rank(), s.Dim())
	}
	if !strings.HasPrefix(onnx.Version(), "1.") || onnx.Library() == "" {
		t.Errorf("version %q library %q", onnx.Version(), onnx.Library())
	}
}

func TestEncoderMatchesReference(t *testing.T) {
	s := open(t, "tiny-bert", onnx.Options{Threads: 1})
	ref := onnxtest.LoadReference(t, "tiny-bert")
	for _, c := range ref.Cases {
		b := pad([]onnxtest.Case{c})
		out, err := s.Run(b)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(out.Shape, []int{1, len(c.IDs), 32}) {
			t.Fatalf("%q: shape %v", c.Text, out.Shape)
		}
		if d := maxDiff(out, 0, 0, c.Hidden); d > tol {
			t.Errorf("%q: max |ORT − numpy| = %g", c.Text, d)
		}
	}
}

// Padding must not change a sequence's vectors: every row of a padded
// batch matches the text's unpadded reference. (Right padding only: BERT's
// absolute positions count from the first slot, so left padding would move
// them; it is for decoder models that take position ids.)
func TestEncoderPaddedBatch(t *testing.T) {
	s := open(t, "tiny-bert", onnx.Options{})
	ref := onnxtest.LoadReference(t, "tiny-bert")
	b := pad(ref.Cases)
	out, err := s.Run(b)
	if err != nil {
		t.Fatal(err)
	}
	for r, c := range ref.Cases {
		if d := maxDiff(out, r, 0, c.Hidden); d > tol {
			t.Errorf("%q: max diff %g in a batch padded to %d", c.Text, d, b.Len)
		}
	}
}

// The padding test above can fail: without the attention mask the padded
// rows' vectors move far from the reference.
func TestEncoderMaskMatters(t *testing.T) {
	s := open(t, "tiny-bert", onnx.Options{})
	ref := onnxtest.LoadReference(t, "tiny-bert")
	b := pad(ref.Cases)
	b.AttentionMask = nil
	out, err := s.Run(b)
	if err != nil {
		t.Fatal(err)
	}
	shortest := 0
	for r, c := range ref.Cases {
		if len(c.IDs) < len(ref.Cases[shortest].IDs) {
			shortest = r
		}
	}
	if d := maxDiff(out, shortest, 0, ref.Cases[shortest].Hidden); d < 1e-2 {
		t.Errorf("ignoring the mask changed a padded row by only %g", d)
	}
}

func TestCrossEncoders(t *testing.T) {
	for _, m := range []struct {
		name   string
		labels int
	}{{"tiny-cross-1", 1}, {"tiny-cross-2", 2}} {
		s := open(t, m.name, onnx.Options{})
		if s.Output() != "logits" || s.Rank() != 2 || s.Dim() != m.labels {
			t.Fatalf("%s: output %s rank %d dim %d", m.name, s.Output(), s.Rank(), s.Dim())
		}
		ref := onnxtest.LoadReference(t, m.name)
		b := pad(ref.Cases)
		out, err := s.Run(b)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(out.Shape, []int{len(ref.Cases), m.labels}) {
			t.Fatalf("%s: shape %v", m.name, out.Shape)
		}
		for r, c := range ref.Cases {
			for j, w := range c.Logits {
				if d := math.Abs(float64(out.Data[r*m.labels+j]) - w); d > tol {
					t.Errorf("%s %q: logit %d = %g, numpy %g", m.name, c.Query, j, out.Data[r*m.labels+j], w)
				}
			}
		}
	}
}

func TestConcurrentRuns(t *testing.T) {
	s := open(t, "tiny-bert", onnx.Options{})
	ref := onnxtest.LoadReference(t, "tiny-bert")
	var wg sync.WaitGroup
	errs := make(chan error, 8*len(ref.Cases))
	for g := 0; g < 8; g++ {
		for _, c := range ref.Cases {
			wg.Add(1)
			go func() {
				defer wg.Done()
				b := pad([]onnxtest.Case{c})
				out, err := s.Run(b)
				if err == nil {
					if d := maxDiff(out, 0, 0, c.Hidden); d > tol {
						err = fmt.Errorf("%q: diff %g", c.Text, d)
					}
				}
				if err != nil {
					errs <- err
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestSessionErrors(t *testing.T) {
	onnxtest.Require(t)
	model := filepath.Join(onnxtest.Model("tiny-bert"), "model.onnx")
	if _, err := onnx.Open(model, onnx.Options{Output: "pooler_output"}); err == nil ||
		!strings.Contains(err.Error(), `no output "pooler_output" (outputs: last_hidden_state)`) {
		t.Errorf("unknown output: %v", err)
	}
	if _, err := onnx.Open(filepath.Join(t.TempDir(), "model.onnx"), onnx.Options{}); err == nil ||
		!strings.Contains(err.Error(), "model.onnx") {
		t.Errorf("missing model: %v", err)
	}
	if _, err := onnx.Open(model, onnx.Options{Threads: -1}); err == nil {
		t.Error("negative threads accepted")
	}
	if err := onnx.Init("/elsewhere/libonnxruntime.so.1"); err == nil || !strings.Contains(err.Error(), "already loaded") {
		t.Errorf("switching libraries: %v", err)
	}

	s := open(t, "tiny-bert", onnx.Options{})
	if _, err := s.Run(onnx.Batch{IDs: []int64{2, 3, 2}, Rows: 2, Len: 2}); err == nil || !strings.Contains(err.Error(), "IDs has 3 values") {
		t.Errorf("ragged batch: %v", err)
	}
	// An id beyond the vocabulary is ONNX Runtime's error, returned, not a crash.
	if _, err := s.Run(onnx.Batch{IDs: []int64{2, 100000, 3}, Rows: 1, Len: 3}); err == nil || !strings.Contains(err.Error(), "running a batch of 1 × 3 tokens") {
		t.Errorf("out-of-vocabulary id: %v", err)
	}
	s.Close()
	if _, err := s.Run(onnx.Batch{IDs: []int64{2, 3}, Rows: 1, Len: 2}); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("run after close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second close: %v", err)
	}
}
