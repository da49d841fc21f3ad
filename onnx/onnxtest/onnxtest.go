// Package onnxtest gives tests the ONNX Runtime library and the tiny
// random-weight models in onnx/testdata (made by
// onnx/testdata/gen/make_tiny_bert.py, with numpy reference outputs).
package onnxtest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/r2med/r2med/onnx"
)

// Require starts ONNX Runtime or ends the test: it skips when this build
// has no cgo or the library cannot be found, except under R2MED_CI=1,
// where a missing library fails the test (CI must run these tests).
// Besides onnx.FindLibrary's places it looks in the repository's
// .ci/.tools/onnxruntime-*, where .ci/run puts the library.
func Require(tb testing.TB) {
	tb.Helper()
	if !onnx.Available {
		tb.Skip(onnx.ErrUnavailable)
	}
	path := ""
	if os.Getenv(onnx.LibraryEnv) == "" {
		if _, err := onnx.FindLibrary(); err != nil {
			matches, _ := filepath.Glob(filepath.Join(repoRoot(), ".ci", ".tools", "onnxruntime-*", "libonnxruntime.so.1"))
			if len(matches) > 0 {
				path = matches[len(matches)-1]
			}
		}
	}
	if err := onnx.Init(path); err != nil {
		if os.Getenv("R2MED_CI") == "1" {
			tb.Fatalf("R2MED_CI=1 and ONNX Runtime is unavailable: %v", err)
		}
		tb.Skipf("ONNX Runtime not found (set R2MED_CI=1 to make this an error): %v", err)
	}
}

// Model returns the absolute path of a model directory in onnx/testdata:
// "tiny-bert" (last_hidden_state), "tiny-cross-1" (logits [batch, 1]) or
// "tiny-cross-2" (logits [batch, 2]). Each holds model.onnx,
// tokenizer.json, config.json and reference.json.
func Model(name string) string {
	return filepath.Join(repoRoot(), "onnx", "testdata", name)
}

// Files are what a model directory holds for the local ONNX backend, by
// path: its graph (onnx/model.onnx, else model.onnx), tokenizer.json and
// config.json, to be laid out elsewhere (another model directory, a Hub
// cache's snapshot).
func Files(tb testing.TB, dir string) map[string][]byte {
	tb.Helper()
	graph := filepath.Join("onnx", "model.onnx")
	if _, err := os.Stat(filepath.Join(dir, graph)); err != nil {
		graph = "model.onnx"
	}
	files := map[string][]byte{}
	for _, f := range []string{graph, "tokenizer.json", "config.json"} {
		data, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			tb.Fatal(err)
		}
		files[filepath.ToSlash(f)] = data
	}
	return files
}

// WriteModel lays the model directory from's Files out in dir (a
// --model-dir), over what dir holds.
func WriteModel(tb testing.TB, from, dir string) {
	tb.Helper()
	for f, data := range Files(tb, from) {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
			tb.Fatal(err)
		}
	}
}

// Script returns the absolute path of the fixture generator.
func Script() string {
	return filepath.Join(repoRoot(), "onnx", "testdata", "gen", "make_tiny_bert.py")
}

func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// Reference is a model directory's reference.json: the numpy float64
// forward pass of the same weights, per text (encoders) or pair
// (cross-encoders).
type Reference struct {
	Kind  string `json:"kind"`
	Cases []Case `json:"cases"`
}

// Case is one reference input with its token ids and expected outputs.
type Case struct {
	Text            string // encoders
	Query, Document string // cross-encoders
	IDs, TypeIDs    []int64
	Hidden          [][]float64          // encoders: last_hidden_state [seq][dim]
	Pooled          map[string][]float64 // encoders: "cls", "mean", "last"
	Normalized      map[string][]float64 // encoders: the same, L2-normalized
	Logits          []float64            // cross-encoders
}

// LoadReference reads Model(name)/reference.json.
func LoadReference(tb testing.TB, name string) Reference {
	tb.Helper()
	raw, err := os.ReadFile(filepath.Join(Model(name), "reference.json"))
	if err != nil {
		tb.Fatal(err)
	}
	var doc struct {
		Kind  string `json:"kind"`
		Cases []struct {
			Text       string               `json:"text"`
			Query      string               `json:"query"`
			Document   string               `json:"document"`
			IDs        []int64              `json:"ids"`
			TypeIDs    []int64              `json:"type_ids"`
			Hidden     [][]float64          `json:"last_hidden_state"`
			Pooled     map[string][]float64 `json:"pooled"`
			Normalized map[string][]float64 `json:"normalized"`
			Logits     []float64            `json:"logits"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		tb.Fatalf("%s/reference.json: %v", Model(name), err)
	}
	ref := Reference{Kind: doc.Kind}
	for _, c := range doc.Cases {
		ref.Cases = append(ref.Cases, Case{Text: c.Text, Query: c.Query, Document: c.Document,
			IDs: c.IDs, TypeIDs: c.TypeIDs, Hidden: c.Hidden, Pooled: c.Pooled,
			Normalized: c.Normalized, Logits: c.Logits})
	}
	if len(ref.Cases) == 0 {
		tb.Fatalf("%s/reference.json has no cases", Model(name))
	}
	return ref
}
