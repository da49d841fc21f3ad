package hubrepo

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"unicode/utf8"

	"github.com/r2med/r2med/internal/errtext"
	"github.com/r2med/r2med/internal/fileio"
	"github.com/r2med/r2med/table"
)

// FuzzParseHubConfigs insists that any card either parses into configs that
// name files inside the repository, or fails with an error at a line of it.
func FuzzParseHubConfigs(f *testing.F) {
	for _, p := range []string{"testdata/r2med-mini/README.md", "testdata/nano-mini/README.md"} {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("---\nconfigs:\n- config_name: a\n  data_files: [x.jsonl, '**/y-*.parquet']\n---\n"))
	f.Add([]byte("---\nconfigs: [{config_name: a, data_files: [{split: s, path: [a, b]}]}]\n---"))
	f.Fuzz(func(t *testing.T, data []byte) {
		configs, declared, err := ParseConfigs(data, "README.md")
		if err != nil {
			var le *fileio.LineError
			if !errors.As(err, &le) || le.File != "README.md" || le.Line < 0 || le.Line > bytes.Count(data, []byte("\n"))+1 {
				t.Fatalf("error %v does not point into the card", err)
			}
			return
		}
		if !declared && configs != nil {
			t.Fatal("configs without a configs block")
		}
		for _, c := range configs {
			if c.Name == "" || len(c.Splits) == 0 {
				t.Fatalf("config %+v", c)
			}
			for _, s := range c.Splits {
				if s.Name == "" || len(s.Patterns) == 0 {
					t.Fatalf("split %+v", s)
				}
				for _, p := range s.Patterns {
					if p == "" || strings.HasPrefix(p, "/") || strings.Contains(p, "..") && strings.Contains("/"+p+"/", "/../") {
						t.Fatalf("pattern %q leaves the repository", p)
					}
				}
			}
		}
	})
}

// FuzzTableRows feeds arbitrary bytes to the JSON table reader (lines or an
// array): it must fail with an error naming the file, never panic, and
// hand on only valid JSON. Parquet input is not fuzzed: a page header can
// claim any size and the parquet library allocates it before anything can
// check, so damaged parquet files are only tested by truncation
// (TestParquetDamaged); downloads are checked against the Hub's sha256
// before they are read.
func FuzzTableRows(f *testing.F) {
	b, err := os.ReadFile(filepath.Join("testdata", "r2med-mini", "query2doc", "gpt4", "query_with_hydoc.json"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add([]byte("{\"a\": 1}\n[2]\n"))
	f.Add([]byte("\xef\xbb\xbf [{\"a\": [1, {\"b\": null}]}]"))
	f.Add([]byte("[{\"a\": \"\xff\"}, {\"\\udc00\": 1}]"))
	f.Add([]byte("{\"a\": \"ok\"}\n{\"a\": \"\\ud83d\\ude00 \\ud83d\"}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		fsys := fstest.MapFS{"t.json": {Data: data}}
		src, err := openRepoFS(fsys, ".")
		if err != nil {
			t.Fatal(err)
		}
		err = table.Each(src.Dir, "t.json", nil, func(m map[string]json.RawMessage, at table.At) error {
			for k, v := range m {
				if !json.Valid(v) {
					t.Fatalf("%s: field %q holds invalid JSON %q", at, k, v)
				}
				if errtext.CheckJSONText(v, "value") != nil || !utf8.ValidString(k) {
					t.Fatalf("%s: field %q holds text that is not valid Unicode: %q", at, k, v)
				}
			}
			return nil
		})
		if err != nil && !strings.HasPrefix(err.Error(), "t.json") {
			t.Fatalf("error %v does not name the file", err)
		}
	})
}

// TestParquetDamaged cuts a parquet file short in several places: each must
// be an error that names the file.
func TestParquetDamaged(t *testing.T) {
	b, err := os.ReadFile("testdata/nano-mini/bm25/NanoMini-00000-of-00001.parquet")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{0, 4, 8, len(b) / 3, len(b) / 2, len(b) - 8, len(b) - 1} {
		fsys := fstest.MapFS{"t.parquet": {Data: b[:n]}}
		src, err := openRepoFS(fsys, ".")
		if err != nil {
			t.Fatal(err)
		}
		err = table.Each(src.Dir, "t.parquet", nil, func(map[string]json.RawMessage, table.At) error { return nil })
		if err == nil || !strings.HasPrefix(err.Error(), "t.parquet: not a readable parquet file: ") {
			t.Errorf("cut at %d of %d: %v", n, len(b), err)
		}
	}
}
