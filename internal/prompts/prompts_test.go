package prompts

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
)

var fsys = fstest.MapFS{
	"t/a.tmpl":  {Data: []byte("Passage: \n")},
	"t/b.json":  {Data: []byte("{}")},
	"t/c.other": {Data: []byte("x")},
}

func TestLoadOverrideWrite(t *testing.T) {
	names := []string{"a.tmpl", "b.json"}
	s, err := Load(fsys, "t", names, "", ".tmpl", ".json")
	if err != nil {
		t.Fatal(err)
	}
	if s.Text("a.tmpl") != "Passage: " || string(s.Bytes("a.tmpl")) != "Passage: \n" || s.Sources["b.json"] != Embedded {
		t.Errorf("%q %v", s.Text("a.tmpl"), s.Sources)
	}
	dir := t.TempDir()
	written, err := Write(fsys, "t", names, dir)
	if err != nil || len(written) != 2 {
		t.Fatalf("%v %v", written, err)
	}
	if _, err := Write(fsys, "t", names, dir); err == nil || !strings.Contains(err.Error(), "exists") {
		t.Errorf("overwrote: %v", err)
	}
	same, err := Load(fsys, "t", names, dir, ".tmpl", ".json")
	if err != nil || same.Digest() != s.Digest() || same.Sources["a.tmpl"] != filepath.Join(dir, "a.tmpl") {
		t.Fatalf("round trip: %v %v", err, same.Sources)
	}
	os.WriteFile(filepath.Join(dir, "a.tmpl"), []byte("Query: \n"), 0o644)
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("ignored"), 0o644)
	edited, err := Load(fsys, "t", names, dir, ".tmpl", ".json")
	if err != nil || edited.Text("a.tmpl") != "Query: " || edited.Digest() == s.Digest() {
		t.Errorf("edit: %v %q", err, edited.Text("a.tmpl"))
	}
	os.WriteFile(filepath.Join(dir, "a2.tmpl"), []byte("x"), 0o644)
	if _, err := Load(fsys, "t", names, dir, ".tmpl", ".json"); err == nil || !strings.Contains(err.Error(), "a2.tmpl: not a template file name; the names are a.tmpl, b.json") {
		t.Errorf("misspelt: %v", err)
	}
	if _, err := Load(fsys, "t", names, filepath.Join(dir, "absent")); err == nil {
		t.Error("missing directory accepted")
	}
	if _, err := Load(fsys, "t", []string{"z.tmpl"}, ""); err == nil {
		t.Error("missing embedded file accepted")
	}
}
