package audit

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/r2med/r2med/ir"
)

// An audit file reads back as written, Find picks audit.json and
// *.audit.json, and the section escapes every text it shows.
func TestFileAndSection(t *testing.T) {
	task := &ir.Task{Name: "t<b>",
		Corpus:  []ir.Doc{{ID: "d1", Text: "<script>alert(1)</script> aspirin platelets"}, {ID: "d2", Text: "<script>alert(1)</script> aspirin platelets"}},
		Queries: []ir.Query{{ID: "q1", Text: "what does aspirin do & why"}},
		Qrels:   ir.Qrels{"q1": {"d1": 1}},
	}
	dir := t.TempDir()
	train := filepath.Join(dir, "train.txt")
	os.WriteFile(train, []byte("What does aspirin do & why?\n<script>alert(1)</script> aspirin platelets\n"), 0o644)
	res, err := Leakage(context.Background(), []*ir.Task{task}, []string{train}, LeakageOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	ds, err := Dataset(task, DatasetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f := &File{Leakage: res.Report, Datasets: []*DatasetReport{ds}}
	path := filepath.Join(dir, "x.audit.json")
	var buf bytes.Buffer
	if err := f.Write(&buf); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(path, buf.Bytes(), 0o644)
	os.WriteFile(filepath.Join(dir, "audit.json"), buf.Bytes(), 0o644)
	os.WriteFile(filepath.Join(dir, "other.json"), []byte("{}"), 0o644)
	back, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, f) {
		t.Errorf("read back differs:\n%+v\n%+v", back, f)
	}
	found, _ := Find(dir)
	if len(found) != 2 || filepath.Base(found[0]) != "audit.json" || filepath.Base(found[1]) != "x.audit.json" {
		t.Errorf("Find: %q", found)
	}
	secs, err := Sections(dir)
	if err != nil || len(secs) != 2 {
		t.Fatalf("Sections: %d, %v", len(secs), err)
	}
	html := string(secs[1])
	if strings.Contains(html, "<script>") || strings.Contains(html, "<b>") {
		t.Error("the section does not escape texts")
	}
	for _, want := range []string{"Leakage audit", "Dataset audit", "t&lt;b&gt;", "&lt;script&gt;", "Duplicate documents: [d1, d2]", "q1: d1 (1) vs its exact copy d2 (unjudged)"} {
		if !strings.Contains(html, want) {
			t.Errorf("section lacks %q", want)
		}
	}
	if strings.Count(html, "<table>") != strings.Count(html, "</table>") || strings.Count(html, "<tr>") != strings.Count(html, "</tr>") {
		t.Error("unbalanced table markup")
	}
	os.WriteFile(filepath.Join(dir, "bad.audit.json"), []byte(`{"format":"other/9"}`), 0o644)
	if _, err := Sections(dir); err == nil || !strings.Contains(err.Error(), "bad.audit.json") {
		t.Errorf("a bad audit file: %v", err)
	}
	var tab bytes.Buffer
	if err := res.Report.WriteTable(&tab); err != nil || !strings.Contains(tab.String(), "t<b>") {
		t.Errorf("table: %v\n%s", err, tab.String())
	}
}
