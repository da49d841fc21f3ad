package onnx_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/r2med/r2med/onnx"
	"github.com/r2med/r2med/onnx/onnxtest"
)

// TestExternalData checks that the files a graph keeps its weights in are
// read from the graph (what LocalRevision hashes beside it), and that a
// graph holding its weights names none.
func TestExternalData(t *testing.T) {
	raw := onnxtest.ExternalGraph("model.onnx_data", "", "model.onnx_data", "weights/w3.bin")
	got, err := onnx.ExternalData(raw)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"model.onnx_data", "weights/w3.bin"}; !slices.Equal(got, want) {
		t.Errorf("external data %q, want %q", got, want)
	}

	tiny, err := os.ReadFile(filepath.Join(onnxtest.Model("tiny-bert"), "model.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := onnx.ExternalData(tiny); err != nil || len(got) != 0 {
		t.Errorf("tiny-bert holds its weights, yet external data is %q (err %v)", got, err)
	}

	if _, err := onnx.ExternalData(onnxtest.ExternalGraph("../elsewhere.bin")); err == nil || !strings.Contains(err.Error(), "not a file beside the graph") {
		t.Errorf("a location outside the graph's directory: err %v", err)
	}
	if _, err := onnx.ExternalData(raw[:len(raw)-3]); err == nil {
		t.Error("a truncated graph read without error")
	}
}
