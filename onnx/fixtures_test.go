package onnx_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/r2med/r2med/onnx/onnxtest"
)

// The committed fixtures are exactly what the script makes (it is seeded),
// so they can be regenerated and reviewed, never hand-edited.
func TestFixturesAreFresh(t *testing.T) {
	if testing.Short() {
		t.Skip("regenerates the fixtures")
	}
	// -I (isolated): neither the working directory nor PYTHONPATH is on
	// the path, so the repository's own onnx/ folder can never pass for
	// the onnx module.
	if b, err := exec.Command("/usr/bin/python3", "-I", "-c", "import onnx, numpy, scipy").CombinedOutput(); err != nil {
		if os.Getenv("R2MED_CI") == "1" {
			t.Fatalf("R2MED_CI=1 but Debian's python3-onnx, python3-numpy and python3-scipy are not all importable (apt-get install python3-onnx python3-numpy python3-scipy): %v\n%s", err, b)
		}
		t.Skip("needs Debian's python3-onnx, python3-numpy and python3-scipy (set R2MED_CI=1 to make this an error)")
	}
	out := t.TempDir()
	if b, err := exec.Command("/usr/bin/python3", "-I", onnxtest.Script(), out).CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	for _, m := range []string{"tiny-bert", "tiny-cross-1", "tiny-cross-2"} {
		for _, f := range []string{"model.onnx", "tokenizer.json", "config.json", "reference.json"} {
			want, err := os.ReadFile(filepath.Join(out, m, f))
			if err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(filepath.Join(onnxtest.Model(m), f))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("onnx/testdata/%s/%s differs from what %s writes; rerun it: /usr/bin/python3 onnx/testdata/gen/make_tiny_bert.py onnx/testdata",
					m, f, filepath.Base(onnxtest.Script()))
			}
		}
	}
}
