package embed

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/r2med/r2med/onnx/onnxtest"
)

func TestPoolHandComputed(t *testing.T) {
	// Two rows of three tokens, dim 2. Row 0 is right-padded (tokens at
	// 0,1), row 1 left-padded (tokens at 1,2).
	hidden := []float32{
		1, 2, 3, 4, 100, 100,
		100, 100, 5, 6, 7, 9,
	}
	mask := []int64{1, 1, 0, 0, 1, 1}
	for _, tc := range []struct {
		p    Pooling
		want [][]float32
	}{
		{PoolCLS, [][]float32{{1, 2}, {5, 6}}},
		{PoolLast, [][]float32{{3, 4}, {7, 9}}},
		{PoolMean, [][]float32{{2, 3}, {6, 7.5}}},
	} {
		got, err := tc.p.Pool(hidden, mask, 2, 3, 2)
		if err != nil {
			t.Fatalf("%s: %v", tc.p, err)
		}
		for r := range got {
			if !slices.Equal(got[r], tc.want[r]) {
				t.Errorf("%s row %d: %v, want %v", tc.p, r, got[r], tc.want[r])
			}
		}
	}
}

func TestPoolErrors(t *testing.T) {
	hidden := make([]float32, 12)
	if _, err := PoolMean.Pool(hidden, []int64{1, 1, 1, 0, 0, 0}, 2, 3, 2); err == nil || !strings.Contains(err.Error(), "row 1 has no attended tokens") {
		t.Errorf("empty row, mean: %v", err)
	}
	if _, err := PoolCLS.Pool(hidden, []int64{0, 0, 0, 1, 0, 0}, 2, 3, 2); err == nil || !strings.Contains(err.Error(), "row 0") {
		t.Errorf("empty row, cls: %v", err)
	}
	if _, err := PoolLast.Pool(hidden[:11], make([]int64, 6), 2, 3, 2); err == nil {
		t.Error("short hidden accepted")
	}
	if _, err := PoolModel.Pool(hidden, []int64{1, 1, 1, 1, 1, 1}, 2, 3, 2); err == nil {
		t.Error("PoolModel reduced token vectors")
	}
}

func TestParsePooling(t *testing.T) {
	for s, want := range map[string]Pooling{"": PoolModel, "model": PoolModel, "CLS": PoolCLS, "mean": PoolMean, "last_token": PoolLast, "last": PoolLast} {
		if got, err := ParsePooling(s); err != nil || got != want {
			t.Errorf("%q: %v, %v", s, got, err)
		}
		if got, _ := ParsePooling(want.String()); got != want {
			t.Errorf("%s does not round-trip", want)
		}
	}
	if _, err := ParsePooling("max"); err == nil {
		t.Error("max accepted")
	}
}

// Pooling the numpy hidden states, laid out in a padded batch, gives numpy's
// own pooled vectors: an independent check of the three reductions.
func TestPoolMatchesNumpy(t *testing.T) {
	ref := onnxtest.LoadReference(t, "tiny-bert")
	seq, dim := 0, len(ref.Cases[0].Hidden[0])
	for _, c := range ref.Cases {
		seq = max(seq, len(c.Hidden))
	}
	rows := len(ref.Cases)
	hidden := make([]float32, rows*seq*dim)
	mask := make([]int64, rows*seq)
	for r, c := range ref.Cases {
		for i, h := range c.Hidden {
			mask[r*seq+i] = 1
			for j, x := range h {
				hidden[(r*seq+i)*dim+j] = float32(x)
			}
		}
		for i := len(c.Hidden); i < seq; i++ {
			for j := range dim {
				hidden[(r*seq+i)*dim+j] = 1e6 // padding must never leak in
			}
		}
	}
	for _, p := range []Pooling{PoolCLS, PoolMean, PoolLast} {
		got, err := p.Pool(hidden, mask, rows, seq, dim)
		if err != nil {
			t.Fatal(err)
		}
		for r, c := range ref.Cases {
			want, wantNorm := c.Pooled[p.String()], c.Normalized[p.String()]
			norm := Normalize(slices.Clone(got[r]))
			for j := range want {
				if d := math.Abs(float64(got[r][j]) - want[j]); d > 1e-6 {
					t.Fatalf("%s %q dim %d: %g, numpy %g", p, c.Text, j, got[r][j], want[j])
				}
				if d := math.Abs(float64(norm[j]) - wantNorm[j]); d > 1e-6 {
					t.Fatalf("%s normalized %q dim %d: %g, numpy %g", p, c.Text, j, norm[j], wantNorm[j])
				}
			}
		}
	}
}
