package table

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/parquet-go/parquet-go"
	"github.com/r2med/r2med/dataset"
)

// rows reads every row of rel in fsys as compact JSON, or the error.
func rows(t *testing.T, fsys fstest.MapFS, rel string, cols []string) ([]string, error) {
	t.Helper()
	d, err := dataset.OpenDirFS(fsys, ".", "dataset repository", "")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	err = Each(d, rel, cols, func(m Row, at At) error {
		b, err := json.Marshal(m)
		if err != nil {
			return err
		}
		out = append(out, at.String()+" "+string(b))
		return nil
	})
	return out, err
}

// TestParquetColumnTypes reads a DuckDB-written file with every column type
// over two row groups (hubrepo/testdata/gen-parquet.mjs).
func TestParquetColumnTypes(t *testing.T) {
	data, err := os.ReadFile("testdata/types.parquet")
	if err != nil {
		t.Fatal(err)
	}
	fsys := fstest.MapFS{"types.parquet": {Data: data}}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(data)
	zw.Close()
	fsys["types.parquet.gz"] = &fstest.MapFile{Data: gz.Bytes()}

	want := map[string][]string{
		"i32":  {"1", "-2", "3", "4"},
		"i64":  {"10", "9007199254740993", "30", "40"},
		"f64":  {"1", "0.1", `"NaN"`, "1e+30"},
		"f32":  {"2.5", "null", `"+Inf"`, "0"}, // DuckDB stores -0.0 as 0
		"flag": {"true", "false", "null", "true"},
		"s":    {`"a\"b"`, "null", `"é\n"`, `""`},
		"l":    {`["x","y"]`, "[]", "null", `["z",null]`},
		"li":   {"[1,2]", "[]", "null", "[3]"},
	}
	for _, name := range []string{"types.parquet", "types.parquet.gz"} {
		for col, values := range want {
			got, err := rows(t, fsys, name, []string{col})
			if err != nil {
				t.Fatalf("%s %s: %v", name, col, err)
			}
			var w []string
			for i, v := range values {
				w = append(w, name+" row "+string(rune('1'+i))+` {"`+col+`":`+v+"}")
			}
			if !reflect.DeepEqual(got, w) {
				t.Errorf("%s:\n got %q\nwant %q", col, got, w)
			}
		}
	}
	for col, msg := range map[string]string{
		"st": `types.parquet: column "st": is a struct or map column; want a string, number or list column`,
		"ll": `types.parquet: column "ll": is a list of lists; want a string, number or list column`,
		"m":  `types.parquet: column "m": is a struct or map column; want a string, number or list column`,
	} {
		if _, err := rows(t, fsys, "types.parquet", []string{col}); err == nil || err.Error() != msg {
			t.Errorf("%s: %v, want %s", col, err, msg)
		}
	}
	// Columns a file lacks are simply absent from its rows.
	got, err := rows(t, fsys, "types.parquet", []string{"i32", "nope"})
	if err != nil || got[0] != `types.parquet row 1 {"i32":1}` {
		t.Errorf("absent column: %q, %v", got, err)
	}
	if _, err := rows(t, fstest.MapFS{"x.parquet": {Data: []byte("not parquet at all")}}, "x.parquet", nil); err == nil || !strings.HasPrefix(err.Error(), "x.parquet: not a readable parquet file: ") {
		t.Errorf("garbage: %v", err)
	}
}

// TestParquetListEncodings covers the two-level list (a bare repeated
// field) beside parquet-go's three-level one, optional columns, and rows
// spread over row groups and pages.
func TestParquetListEncodings(t *testing.T) {
	type row struct {
		ID    string   `parquet:"query-id"`
		Bare  []string `parquet:"bare"`
		List  []string `parquet:"list,list"`
		Score *int32   `parquet:"score,optional"`
	}
	one := int32(1)
	long := make([]string, 300)
	for i := range long {
		long[i] = strings.Repeat("x", 20) + string(rune('a'+i%26))
	}
	in := []row{
		{"q1", []string{"a", "b"}, []string{"c"}, &one},
		{"q2", nil, nil, nil},
		{"q3", []string{"d"}, []string{"e", "f", "g"}, &one},
		{"q4", long, long[:7], nil},
		{"q5", []string{"h"}, long, &one},
	}
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[row](&buf, parquet.MaxRowsPerRowGroup(2), parquet.PageBufferSize(256))
	if _, err := w.Write(in); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil || len(f.RowGroups()) != 3 {
		t.Fatalf("the file should have 3 row groups: %v", err)
	}
	got, err := rows(t, fstest.MapFS{"t.parquet": {Data: data}}, "t.parquet", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(in) {
		t.Fatalf("%d rows, want %d", len(got), len(in))
	}
	js := func(v []string) string {
		if v == nil {
			return "[]"
		}
		b, _ := json.Marshal(v)
		return string(b)
	}
	for i, r := range in {
		score := "null"
		if r.Score != nil {
			score = "1"
		}
		want := fmt.Sprintf(`t.parquet row %d {"bare":%s,"list":%s,"query-id":%q,"score":%s}`, i+1, js(r.Bare), js(r.List), r.ID, score)
		if got[i] != want {
			t.Errorf("row %d:\n got %.200q\nwant %.200q", i+1, got[i], want)
		}
	}
}

func TestJSONTables(t *testing.T) {
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte("\n{\"a\": 1}\n\n{\"a\": 2}\n"))
	zw.Close()
	fsys := fstest.MapFS{
		"lines.jsonl.gz": {Data: gz.Bytes()},
		"bom.json":       {Data: []byte("\xef\xbb\xbf  \n[{\"a\": 1},\n {\"a\": 2}]\n")},
		"lines.json":     {Data: []byte("\xef\xbb\xbf{\"a\": 1}\n{\"a\": 2}")},
		"empty.json":     {Data: []byte("[]")},
		"nothing.jsonl":  {Data: nil},
	}
	for name, want := range map[string][]string{
		"lines.jsonl.gz": {`lines.jsonl.gz:2 {"a":1}`, `lines.jsonl.gz:4 {"a":2}`},
		"bom.json":       {`bom.json:2 {"a":1}`, `bom.json:3 {"a":2}`},
		"lines.json":     {`lines.json:1 {"a":1}`, `lines.json:2 {"a":2}`},
		"empty.json":     nil,
		"nothing.jsonl":  nil,
	} {
		got, err := rows(t, fsys, name, nil)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %q, %v; want %q", name, got, err, want)
		}
	}
}
