package vector

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

func TestFileRoundTrip(t *testing.T) {
	dir := t.TempDir()
	for _, m := range []Metric{Cosine, Dot} {
		rows := randRows(21, 130, 9)
		ids := seqIDs(130)
		ids[3] = "ünïcode id with spaces"
		ids[4] = ""
		f := buildFlat(t, m, rows, ids)
		path := filepath.Join(dir, m.String()+".vec")
		if err := f.WriteFile(path); err != nil {
			t.Fatal(err)
		}
		g, err := ReadFile(path, 9)
		if err != nil {
			t.Fatal(err)
		}
		if g.Metric() != m || g.Dim() != 9 || !slices.Equal(g.IDs(), f.IDs()) || !slices.Equal(g.data, f.data) {
			t.Fatalf("%v: round trip changed the store", m)
		}
		if i, ok := g.Lookup("ünïcode id with spaces"); !ok || i != 3 {
			t.Fatal("id index not rebuilt")
		}
		qs := randRows(1, 3, 9)
		a, _ := f.Search(qs, 7, SearchOptions{})
		b, _ := g.Search(qs, 7, SearchOptions{})
		if !slices.EqualFunc(a, b, slices.Equal) {
			t.Fatal("search results differ after a round trip")
		}
		// adding to the loaded store works and keeps ids unique
		if err := g.Add("d00000", rows[0]); err == nil {
			t.Fatal("duplicate id accepted after load")
		}
	}
	// an empty store with a dimension
	path := filepath.Join(dir, "empty.vec")
	if err := NewFlat(5, Dot).WriteFile(path); err != nil {
		t.Fatal(err)
	}
	g, err := ReadFile(path, 0)
	if err != nil || g.Len() != 0 || g.Dim() != 5 || g.Metric() != Dot {
		t.Fatalf("empty store: %v %v", g, err)
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tmp") {
			t.Fatalf("temporary file left behind: %s", e.Name())
		}
	}
}

func TestFileErrors(t *testing.T) {
	dir := t.TempDir()
	f := buildFlat(t, Cosine, randRows(2, 10, 4), seqIDs(10))
	var buf bytes.Buffer
	if _, err := f.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	good := buf.Bytes()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	expect := func(p string, dim int, want string) {
		t.Helper()
		_, err := ReadFile(p, dim)
		if err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), want) {
			t.Fatalf("%s: error %v, want one naming the file and saying %q", filepath.Base(p), err, want)
		}
	}
	expect(write("ok.vec", good), 8, "vectors have 4 dimensions, want 8")
	// truncated anywhere: in the header, the ids, the vectors, the checksum
	for _, cut := range []int{0, 5, 20, 30, 60, len(good) - 100, len(good) - 2} {
		msg := "truncated"
		if cut == 0 {
			msg = "truncated: 0 bytes"
		}
		expect(write("cut.vec", good[:cut]), 0, msg)
	}
	expect(write("magic.vec", append([]byte("PK\x03\x04not"), good[8:]...)), 0, "not a vector file")
	expect(write("json.vec", []byte(`{"a":1}`)), 0, "not a vector file")
	v := slices.Clone(good)
	binary.LittleEndian.PutUint32(v[8:], 2)
	expect(write("version.vec", v), 0, "version 2")
	v = slices.Clone(good)
	v[12] = 2
	expect(write("dtype.vec", v), 0, "element type 2")
	v = slices.Clone(good)
	v[len(v)-30] ^= 0x40
	expect(write("flip.vec", v), 0, "checksum mismatch")
	expect(write("tail.vec", append(slices.Clone(good), 0)), 0, "after the checksum")
	v = slices.Clone(good)
	binary.LittleEndian.PutUint32(v[28:], 1<<30)
	expect(write("idlen.vec", v), 0, "id length")
	// well-formed files with bad content (written around Add's checks)
	dup := &Flat{rankOnce: new(sync.Once), dim: 1, metric: Dot, data: []float32{1, 2}, ids: []string{"a", "a"}}
	buf.Reset()
	dup.WriteTo(&buf)
	expect(write("dup.vec", buf.Bytes()), 0, `id "a" appears twice`)
	nan := &Flat{rankOnce: new(sync.Once), dim: 2, metric: Dot, data: []float32{1, float32(math.Inf(1))}, ids: []string{"a"}}
	buf.Reset()
	nan.WriteTo(&buf)
	expect(write("inf.vec", buf.Bytes()), 0, "row 0 component 1 is +Inf")
	if _, err := ReadFile(filepath.Join(dir, "missing.vec"), 0); err == nil || !strings.Contains(err.Error(), "missing.vec") {
		t.Fatalf("missing file: %v", err)
	}
	// a write to an impossible place fails and names the path
	bad := filepath.Join(write("file", nil), "sub", "x.vec")
	if err := f.WriteFile(bad); err == nil || !strings.Contains(err.Error(), bad) {
		t.Fatalf("write under a file: %v", err)
	}
}
