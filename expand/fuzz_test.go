package expand

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/r2med/r2med/internal/fileio"
)

// FuzzExtract checks every format on arbitrary text: no panic, the result is
// a substring of the input, and it is either the input itself or carries no
// whitespace that Python's strip would have removed.
func FuzzExtract(f *testing.F) {
	for _, s := range []string{
		"", "<think>a</think> b ", "</think></think>", "Final Response\n x\n", "Final Respons",
		"<|begin_of_solution|> s <|end_of_solution|>", "<|end_of_solution|><|begin_of_solution|>",
		"<answer>a</answer>", "<answer></answer", "\x1c</think>\u3000\x85", "</think>\xff\xfe",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, fm := range []Format{Plain, Think, FinalResponse, Solution, Answer} {
			out := fm.Extract(s)
			if !strings.Contains(s, out) {
				t.Fatalf("%v.Extract(%q) = %q, not part of the input", fm, s, out)
			}
			if out == s {
				continue
			}
			if fm == Plain {
				t.Fatalf("Plain changed %q to %q", s, out)
			}
			if out != "" {
				first, _ := utf8.DecodeRuneInString(out)
				last, _ := utf8.DecodeLastRuneInString(out)
				if isPySpace(first) || isPySpace(last) {
					t.Fatalf("%v.Extract(%q) = %q, not stripped", fm, s, out)
				}
			}
		}
	})
}

// FuzzReadGenerations checks that any input either reads or fails with an
// error pointing into it, and that what reads has unique, non-empty ids.
func FuzzReadGenerations(f *testing.F) {
	files, _ := filepath.Glob("testdata/malformed/*")
	files = append(files, "testdata/biology-demo/hyde/qwen-7b/query_with_hydoc.jsonl")
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		gens, err := ReadGenerations(bytes.NewReader(data), "in", SearchR1, "qwen-7b-ins")
		if err != nil {
			var le *fileio.LineError
			if !errors.As(err, &le) {
				t.Fatalf("error %v is a %T", err, err)
			}
			if lines := bytes.Count(data, []byte("\n")) + 1; le.File != "in" || le.Line < 0 || le.Line > lines {
				t.Fatalf("error %v points outside the %d-line input", err, lines)
			}
			return
		}
		seen := map[string]bool{}
		for _, g := range gens {
			if g.ID == "" || seen[g.ID] || g.Method != SearchR1 || g.LLM != "qwen-7b-ins" {
				t.Fatalf("bad generation %+v", g)
			}
			seen[g.ID] = true
			_ = g.BM25Text()
			_ = g.Dense()
		}
	})
}
