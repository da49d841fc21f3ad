package cache

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

func open(t *testing.T, dir string) *Store {
	t.Helper()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestKeyIsUnambiguous(t *testing.T) {
	if bytes.Equal(Key("ab", "c"), Key("a", "bc")) {
		t.Error(`Key("ab","c") == Key("a","bc")`)
	}
	if bytes.Equal(Key("a", ""), Key("a")) {
		t.Error(`Key("a","") == Key("a")`)
	}
	if bytes.Equal(Key(""), Key()) {
		t.Error(`Key("") == Key()`)
	}
	if !bytes.Equal(Key("x", "y"), Key("x", "y")) {
		t.Error("Key is not deterministic")
	}
	if len(Key("x")) != 32 {
		t.Errorf("key length %d, want 32", len(Key("x")))
	}
}

func TestPutGetRoundTripAcrossReopen(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir)
	keys := [][]byte{Key("a"), Key("b"), Key("empty")}
	vals := [][]byte{[]byte("alpha"), []byte("beta"), {}}
	if err := s.PutMany("embed/m", keys, vals); err != nil {
		t.Fatal(err)
	}
	s.Close()

	s = open(t, dir)
	got, err := s.GetMany("embed/m", append(keys, Key("missing")))
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range vals {
		if got[i] == nil || !bytes.Equal(got[i], want) {
			t.Errorf("value %d = %q, want %q", i, got[i], want)
		}
	}
	if got[3] != nil {
		t.Errorf("miss returned %q", got[3])
	}
	if _, ok, err := s.Get("embed/other", keys[0]); ok || err != nil {
		t.Errorf("other bucket: ok=%v err=%v", ok, err)
	}
	v, ok, err := s.Get("embed/m", keys[1])
	if !ok || err != nil || string(v) != "beta" {
		t.Errorf("Get = %q %v %v", v, ok, err)
	}
}

func TestPutManyValidates(t *testing.T) {
	s := open(t, t.TempDir())
	if err := s.PutMany("b", [][]byte{Key("a")}, nil); err == nil {
		t.Error("mismatched keys and values accepted")
	}
	if err := s.PutMany("", [][]byte{Key("a")}, [][]byte{nil}); err == nil {
		t.Error("empty bucket name accepted")
	}
	if err := s.PutMany("b", [][]byte{Key("a"), {}}, [][]byte{nil, nil}); err == nil {
		t.Error("empty key accepted")
	}
	// The failed transaction wrote nothing.
	if _, ok, _ := s.Get("b", Key("a")); ok {
		t.Error("a failed PutMany left an entry behind")
	}
}

func TestSecondWriterGetsClearError(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir)
	_ = s
	_, err := Open(dir, Options{Timeout: 50 * time.Millisecond})
	if !errors.Is(err, ErrInUse) {
		t.Fatalf("second Open: %v, want ErrInUse", err)
	}
	for _, want := range []string{dir, "in use by another r2med process", "--cache DIR"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

func TestReadOnly(t *testing.T) {
	dir := t.TempDir()
	if _, err := Open(dir, Options{ReadOnly: true}); !errors.Is(err, ErrNotExist) {
		t.Fatalf("read-only Open of an empty dir: %v, want ErrNotExist", err)
	}
	s := open(t, dir)
	if err := s.PutMany("k/l", [][]byte{Key("x")}, [][]byte{[]byte("v")}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	r, err := Open(dir, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if v, ok, err := r.Get("k/l", Key("x")); !ok || err != nil || string(v) != "v" {
		t.Errorf("read-only Get = %q %v %v", v, ok, err)
	}
	if err := r.PutMany("k/l", [][]byte{Key("y")}, [][]byte{nil}); err == nil {
		t.Error("read-only store accepted a write")
	}
	if _, err := r.Prune(Filter{All: true}); err == nil {
		t.Error("read-only store accepted a prune")
	}
}

func TestDamagedEntryIsAnError(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir)
	// A value without our header, as a damaged or foreign file would hold.
	err := s.db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists([]byte("embed/m"))
		if err != nil {
			return err
		}
		return b.Put(Key("x"), []byte{9, 1})
	})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = s.Get("embed/m", Key("x"))
	if err == nil || !strings.Contains(err.Error(), "r2med cache prune") {
		t.Errorf("damaged entry: %v", err)
	}
	if _, err := s.Stats(); err == nil {
		t.Error("Stats accepted a damaged entry")
	}
}

func fill(t *testing.T, s *Store, bucket string, n int, at time.Time) {
	t.Helper()
	s.now = func() time.Time { return at }
	keys := make([][]byte, n)
	vals := make([][]byte, n)
	for i := range keys {
		keys[i] = Key(bucket, fmt.Sprint(at.Unix()), fmt.Sprint(i))
		vals[i] = make([]byte, 10)
	}
	if err := s.PutMany(bucket, keys, vals); err != nil {
		t.Fatal(err)
	}
}

func TestStatsAndPrune(t *testing.T) {
	s := open(t, t.TempDir())
	old := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	recent := time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)
	fill(t, s, Bucket("embed", "BAAI/bge-large-en-v1.5"), 3, old)
	fill(t, s, Bucket("embed", "BAAI/bge-large-en-v1.5"), 2, recent)
	fill(t, s, Bucket("embed", "facebook/contriever-msmarco"), 4, recent)
	fill(t, s, Bucket("generate", "gpt-4o"), 1, old)

	st, err := s.Stats()
	if err != nil {
		t.Fatal(err)
	}
	want := []BucketStats{
		{Name: "embed/BAAI/bge-large-en-v1.5", Kind: "embed", Label: "BAAI/bge-large-en-v1.5", Entries: 5, Bytes: 5 * (32 + 9 + 10), Oldest: old, Newest: recent},
		{Name: "embed/facebook/contriever-msmarco", Kind: "embed", Label: "facebook/contriever-msmarco", Entries: 4, Bytes: 4 * 51, Oldest: recent, Newest: recent},
		{Name: "generate/gpt-4o", Kind: "generate", Label: "gpt-4o", Entries: 1, Bytes: 51, Oldest: old, Newest: old},
	}
	if len(st) != len(want) {
		t.Fatalf("Stats = %+v", st)
	}
	for i := range want {
		g, w := st[i], want[i]
		if g.Name != w.Name || g.Kind != w.Kind || g.Label != w.Label || g.Entries != w.Entries || g.Bytes != w.Bytes || !g.Oldest.Equal(w.Oldest) || !g.Newest.Equal(w.Newest) {
			t.Errorf("bucket %d = %+v, want %+v", i, g, w)
		}
	}

	if _, err := s.Prune(Filter{}); err == nil {
		t.Error("a zero Filter pruned")
	}
	// By age: the three old bge entries and the old generation go.
	n, err := s.Prune(Filter{Before: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)})
	if err != nil || n != 4 {
		t.Fatalf("prune by age removed %d (%v), want 4", n, err)
	}
	// By label, case-insensitively, within a kind.
	n, err = s.Prune(Filter{Kind: "embed", Label: "facebook/Contriever-MSMARCO"})
	if err != nil || n != 4 {
		t.Fatalf("prune by label removed %d (%v), want 4", n, err)
	}
	st, _ = s.Stats()
	if len(st) != 1 || st[0].Name != "embed/BAAI/bge-large-en-v1.5" || st[0].Entries != 2 {
		t.Fatalf("after pruning: %+v", st)
	}
	n, err = s.Prune(Filter{All: true})
	if err != nil || n != 2 {
		t.Fatalf("prune all removed %d (%v), want 2", n, err)
	}
	if st, _ = s.Stats(); len(st) != 0 {
		t.Fatalf("after prune all: %+v", st)
	}
}

func TestPruneByAgeInBatches(t *testing.T) {
	defer func(n int) { pruneBatch = n }(pruneBatch)
	pruneBatch = 5
	s := open(t, t.TempDir())
	old := time.Unix(1000, 0)
	fill(t, s, "k/l", pruneBatch+7, old)
	fill(t, s, "k/l", 3, time.Unix(5000, 0))
	n, err := s.Prune(Filter{Before: time.Unix(2000, 0)})
	if err != nil || n != pruneBatch+7 {
		t.Fatalf("removed %d (%v), want %d", n, err, pruneBatch+7)
	}
	st, _ := s.Stats()
	if len(st) != 1 || st[0].Entries != 3 {
		t.Fatalf("left %+v, want 3 entries", st)
	}
}

func TestDefaultDir(t *testing.T) {
	t.Setenv("R2MED_CACHE", "/somewhere/else")
	if d := DefaultDir(); d != "/somewhere/else" {
		t.Errorf("DefaultDir = %q", d)
	}
	t.Setenv("R2MED_CACHE", "")
	t.Setenv("XDG_CACHE_HOME", "/xdg")
	if d := DefaultDir(); d != filepath.Join("/xdg", "r2med") {
		t.Errorf("DefaultDir = %q", d)
	}
}

// TestDamagedFileIsAnError: a cache file whose pages are damaged (all but
// its two meta pages overwritten) is an error naming it and what to do,
// whether it is opened for writing or read, where bbolt's assertion
// panicked and ended the process with a stack trace.
func TestDamagedFileIsAnError(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	fill(t, s, "embed/m", 3000, time.Now())
	s.Close()
	path := filepath.Join(dir, FileName)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	page := os.Getpagesize()
	for i := 2 * page; i < len(b); i++ {
		b[i] = 0xAB
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}

	check := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "rm "+path) {
			t.Errorf("%s: %v", what, err)
		}
	}
	// Opened for writing: bbolt would walk the damaged pages at once.
	_, err = Open(dir, Options{})
	check("Open", err)

	s, err = Open(dir, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, _, err = s.Get("embed/m", Key("x"))
	check("Get", err)
	_, err = s.Stats()
	check("Stats", err)
}
