package cache

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func put(t *testing.T, s *Store, bucket string, kv ...string) {
	t.Helper()
	var ks, vs [][]byte
	for i := 0; i < len(kv); i += 2 {
		ks = append(ks, Key(kv[i]))
		vs = append(vs, []byte(kv[i+1]))
	}
	if err := s.PutMany(bucket, ks, vs); err != nil {
		t.Fatal(err)
	}
}

// A recorder lists exactly the entries read (hits) and written while it
// runs, and the list round-trips through its file.
func TestRecorder(t *testing.T) {
	s := open(t, t.TempDir())
	put(t, s, "embed/m", "before", "v0")
	rec := s.Record()
	put(t, s, "embed/m", "a", "1", "b", "2")
	if _, err := s.GetMany("embed/m", [][]byte{Key("before"), Key("absent")}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Get("generate/llm", Key("nothing")); err != nil {
		t.Fatal(err)
	}
	rec.Stop()
	put(t, s, "embed/m", "after", "3")
	got := rec.Keys()
	want := []Ref{{"embed/m", Key("a")}, {"embed/m", Key("b")}, {"embed/m", Key("before")}}
	sortRefs(want)
	if len(got) != len(want) {
		t.Fatalf("keys %v, want %v", got, want)
	}
	for i := range want {
		if got[i].Bucket != want[i].Bucket || !bytes.Equal(got[i].Key, want[i].Key) {
			t.Errorf("key %d: %v, want %v", i, got[i], want[i])
		}
	}
	path := filepath.Join(t.TempDir(), "run", KeysFile)
	if err := rec.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	back, err := ReadKeys(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(back) != 3 || !bytes.Equal(back[2].Key, got[2].Key) {
		t.Errorf("read back %v", back)
	}
	if _, err := ReadKeys(filepath.Join(t.TempDir(), KeysFile)); err == nil || !strings.Contains(err.Error(), "recorded no cache keys") {
		t.Errorf("missing file: %v", err)
	}
}

// TestAppendKeys: a list grown by appends reads back whole, the header
// written once; a cut-off append is reported, not read as fewer keys.
func TestAppendKeys(t *testing.T) {
	path := filepath.Join(t.TempDir(), "partial.keys.gz")
	if err := AppendKeys(path, []Ref{{"generate/m", Key("b")}}); err != nil {
		t.Fatal(err)
	}
	if err := AppendKeys(path, nil); err != nil {
		t.Fatal(err)
	}
	if err := AppendKeys(path, []Ref{{"generate/m", Key("a")}, {"embed/e", Key("c")}}); err != nil {
		t.Fatal(err)
	}
	back, err := ReadKeys(path)
	if err != nil || len(back) != 3 || back[0].Bucket != "generate/m" || !bytes.Equal(back[2].Key, Key("c")) {
		t.Fatalf("read back %v %v", back, err)
	}
	if err := AppendKeys(path, []Ref{{"", Key("x")}}); err == nil {
		t.Error("an empty bucket was appended")
	}
	if back, err := ReadKeys(path); err != nil || len(back) != 3 {
		t.Fatalf("a refused append changed the file: %v %v", back, err)
	}
	data, _ := os.ReadFile(path)
	os.WriteFile(path, data[:len(data)-5], 0o644)
	if _, err := ReadKeys(path); err == nil {
		t.Error("a cut-off append read without error")
	}
}

func exportTo(t *testing.T, s *Store, sel Selection) (string, int) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "share.jsonl.gz")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	n, err := s.Export(f, sel)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	return path, n
}

// What one cache exports, another imports: same values, same write times;
// the selection by keys takes exactly those entries.
func TestExportImportRoundTrip(t *testing.T) {
	src := open(t, t.TempDir())
	src.now = func() time.Time { return time.Unix(1_700_000_000, 0) }
	put(t, src, "embed/m", "a", "vec-a", "b", "vec-b")
	put(t, src, "generate/llm", "q", "answer")
	put(t, src, "embed/other", "z", "vec-z")

	path, n := exportTo(t, src, Selection{Filter: &Filter{Kind: "embed", Label: "m"}})
	if n != 2 {
		t.Fatalf("exported %d, want 2", n)
	}
	dst := open(t, t.TempDir())
	put(t, dst, "embed/m", "b", "vec-b")
	st, err := dst.Import(path, ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if st != (ImportStats{Entries: 2, Added: 1, Same: 1}) {
		t.Errorf("stats %+v", st)
	}
	if v, ok, _ := dst.Get("embed/m", Key("a")); !ok || string(v) != "vec-a" {
		t.Errorf("imported value %q %v", v, ok)
	}
	stats, _ := dst.Stats()
	if stats[0].Oldest != time.Unix(1_700_000_000, 0) {
		t.Errorf("write time not kept: %v", stats[0].Oldest)
	}

	// By keys (a run's list): just those; a key the cache lacks is an error.
	path2, n := exportTo(t, src, Selection{Refs: []Ref{{"generate/llm", Key("q")}, {"embed/other", Key("z")}}})
	if n != 2 {
		t.Errorf("exported %d by keys", n)
	}
	if c, err := VerifyExport(path2); err != nil || c != 2 {
		t.Errorf("verify %d %v", c, err)
	}
	_, err = src.Export(io.Discard, Selection{Refs: []Ref{{"generate/llm", Key("q")}, {"generate/llm", Key("gone")}}})
	if !errors.Is(err, ErrMissing) || !strings.Contains(err.Error(), "1 of the 2 entries") {
		t.Errorf("missing key: %v", err)
	}
	if _, err := src.Export(io.Discard, Selection{Filter: &Filter{}}); err == nil {
		t.Error("an empty filter exported")
	}

	// A different value under the same key is kept unless Replace.
	dst2 := open(t, t.TempDir())
	put(t, dst2, "embed/m", "a", "mine")
	if st, _ := dst2.Import(path, ImportOptions{}); st.Different != 1 || st.Added != 1 {
		t.Errorf("keep: %+v", st)
	}
	if v, _, _ := dst2.Get("embed/m", Key("a")); string(v) != "mine" {
		t.Errorf("kept %q", v)
	}
	if st, _ := dst2.Import(path, ImportOptions{Replace: true}); st.Replaced != 1 || st.Same != 1 {
		t.Errorf("replace: %+v", st)
	}
	if v, _, _ := dst2.Get("embed/m", Key("a")); string(v) != "vec-a" {
		t.Errorf("replaced %q", v)
	}
}

// rewrite decompresses an export, applies f to its text and compresses it
// again.
func rewrite(t *testing.T, path string, f func(string) string) string {
	t.Helper()
	raw, _ := os.ReadFile(path)
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	text, _ := io.ReadAll(zr)
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write([]byte(f(string(text))))
	zw.Close()
	out := filepath.Join(t.TempDir(), "altered.jsonl.gz")
	os.WriteFile(out, b.Bytes(), 0o644)
	return out
}

// A damaged, truncated or altered file changes nothing.
func TestImportVerifiesFirst(t *testing.T) {
	src := open(t, t.TempDir())
	put(t, src, "embed/m", "a", "vec-a", "b", "vec-b")
	path, _ := exportTo(t, src, Selection{Filter: &Filter{All: true}})
	raw, _ := os.ReadFile(path)
	truncated := filepath.Join(t.TempDir(), "cut.gz")
	os.WriteFile(truncated, raw[:len(raw)-10], 0o644)
	cases := map[string]string{
		"truncated": truncated,
		"altered":   rewrite(t, path, func(s string) string { return strings.Replace(s, `"bucket":"embed/m"`, `"bucket":"embed/x"`, 1) }),
		"no end":    rewrite(t, path, func(s string) string { return s[:strings.Index(s, `{"end"`)] }),
		"dropped":   rewrite(t, path, func(s string) string { l := strings.SplitAfter(s, "\n"); return l[0] + l[2] + l[3] }),
		"not ours":  rewrite(t, path, func(string) string { return "{}\n" }),
	}
	for name, p := range cases {
		dst := open(t, t.TempDir())
		_, err := dst.Import(p, ImportOptions{})
		if err == nil {
			t.Errorf("%s: imported", name)
			continue
		}
		if st, _ := dst.Stats(); len(st) != 0 {
			t.Errorf("%s: %v, yet entries were written", name, err)
		}
	}
}
