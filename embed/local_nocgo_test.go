//go:build !cgo

package embed

import (
	"errors"
	"testing"

	"github.com/r2med/r2med/onnx"
	"github.com/r2med/r2med/onnx/onnxtest"
)

func TestLocalWithoutCgo(t *testing.T) {
	_, err := NewLocal(onnxtest.Model("tiny-bert"), LocalOptions{Pooling: PoolCLS})
	if !errors.Is(err, onnx.ErrUnavailable) {
		t.Fatalf("NewLocal without cgo: %v", err)
	}
}
