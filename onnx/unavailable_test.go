//go:build !cgo

package onnx

import (
	"errors"
	"testing"
)

func TestWithoutCgo(t *testing.T) {
	if Available {
		t.Fatal("Available in a build without cgo")
	}
	const want = "local ONNX inference is unavailable in this build (built without cgo); use an HTTP backend (--backend openai|tei|voyage) or rebuild with CGO_ENABLED=1"
	if _, err := Open("testdata/tiny-bert/model.onnx", Options{}); !errors.Is(err, ErrUnavailable) || err.Error() != want {
		t.Fatalf("Open: %v", err)
	}
	if err := Init(""); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Init: %v", err)
	}
}
