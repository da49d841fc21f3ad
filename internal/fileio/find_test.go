package fileio

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func gzipped(t *testing.T, s string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write([]byte(s))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestFind(t *testing.T) {
	dir := t.TempDir()
	put := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	check := func(path, wantPath string, wantOK bool, wantErr string) {
		t.Helper()
		got, ok, err := Find(path)
		msg := ""
		if err != nil {
			msg = err.Error()
		}
		if got != wantPath || ok != wantOK || msg != wantErr {
			t.Errorf("Find(%s) = %q, %v, %q; want %q, %v, %q", path, got, ok, msg, wantPath, wantOK, wantErr)
		}
	}
	base := filepath.Join(dir, "corpus.jsonl")
	check(base, "", false, "")
	gz := put("corpus.jsonl.gz", gzipped(t, "same\n"))
	check(base, gz, true, "")
	plain := put("corpus.jsonl", []byte("same\n"))
	check(base, "", false, "both "+plain+" and "+gz+" exist; they hold the same data, so remove one of them (rm "+plain+")")
	put("corpus.jsonl", []byte("same\nand more\n"))
	old := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := os.Chtimes(plain, old, old); err != nil {
		t.Fatal(err)
	}
	check(base, "", false, "both "+plain+" and "+gz+" exist and they differ; reading one would silently ignore the other, so remove the one you do not mean ("+gz+" is the newer)")
	// A prefix is not the same data.
	put("corpus.jsonl", []byte("sam"))
	if _, _, err := Find(base); err == nil || !bytes.Contains([]byte(err.Error()), []byte("they differ")) {
		t.Errorf("prefix: %v", err)
	}
	os.Remove(gz)
	check(base, plain, true, "")
	// A directory named like the file does not count.
	os.Mkdir(filepath.Join(dir, "x.jsonl.gz"), 0o755)
	put("x.jsonl", nil)
	check(filepath.Join(dir, "x.jsonl"), filepath.Join(dir, "x.jsonl"), true, "")

	t.Chdir(dir)
	check("corpus.jsonl", "corpus.jsonl", true, "")
}
