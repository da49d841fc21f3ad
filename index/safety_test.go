package index

import (
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/r2med/r2med/bm25"
	"github.com/r2med/r2med/highlight"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/vector"
)

// TestCraftedFilesRefused: files whose checksums all match but whose
// numbers point outside the corpus or contradict what they derive from —
// posting ids, tie ranks, document lengths, idf, Lucene norms — are
// refused when opened or first searched, never searched with a wrong
// score.
func TestCraftedFilesRefused(t *testing.T) {
	task := demoTask(t)
	put32 := func(b []byte, s section, i int, v int32) {
		binary.LittleEndian.PutUint32(b[s.off+uint64(4*i):], uint32(v))
	}
	get32 := func(b []byte, s section, i int) int32 {
		return int32(binary.LittleEndian.Uint32(b[s.off+uint64(4*i):]))
	}
	n := int32(len(task.Corpus))
	for _, c := range []struct {
		name   string
		scheme bm25.Scheme
		edit   func(b []byte, secs map[string]section)
		want   string
	}{
		{"posting past the corpus", bm25.R2MED, func(b []byte, secs map[string]section) {
			s := secs[secPostDoc]
			put32(b, s, int(s.len/4)-1, n+3) // the last term's last posting
		}, "names document"},
		{"negative posting", bm25.R2MED, func(b []byte, secs map[string]section) { put32(b, secs[secPostDoc], 0, -7) }, "names document -7"},
		{"postings out of order", bm25.R2MED, func(b []byte, secs map[string]section) {
			s := secs[secPostDoc]
			a, c := get32(b, s, 0), get32(b, s, 1)
			put32(b, s, 0, c)
			put32(b, s, 1, a)
		}, "names document"},
		{"tie rank outside the corpus", bm25.R2MED, func(b []byte, secs map[string]section) { put32(b, secs[secRank], 2, n) }, "repeated or outside"},
		{"tie ranks swapped", bm25.Lucene, func(b []byte, secs map[string]section) {
			s := secs[secRank]
			a, c := get32(b, s, 0), get32(b, s, 1)
			put32(b, s, 0, c)
			put32(b, s, 1, a)
		}, "not in byte order"},
		{"negative document length", bm25.R2MED, func(b []byte, secs map[string]section) { put32(b, secs[secDocLen], 4, -1) }, "document 4 has length -1"},
		{"document length off by one", bm25.R2MED, func(b []byte, secs map[string]section) {
			s := secs[secDocLen]
			put32(b, s, 4, get32(b, s, 4)+1)
		}, "document lengths sum to"},
		{"lengths shifted between documents", bm25.Lucene, func(b []byte, secs map[string]section) {
			s := secs[secDocLen]
			put32(b, s, 4, get32(b, s, 4)+1)
			put32(b, s, 5, get32(b, s, 5)-1)
		}, "length norm"},
		{"idf edited", bm25.Robertson, func(b []byte, secs map[string]section) {
			s := secs[secIDF]
			x := math.Float64frombits(binary.LittleEndian.Uint64(b[s.off:]))
			binary.LittleEndian.PutUint64(b[s.off:], math.Float64bits(x*1.01))
		}, "has idf"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path, _ := writeBM25(t, task, "", bm25.DefaultParams(c.scheme))
			if c.name == "tie rank outside the corpus" { // dense search orders ties by rank too
				mem, err := BuildBM25(task.Corpus, "", bm25.DefaultParams(c.scheme), bm25.BuildOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if err := Write(path, Contents{Docs: task.Corpus, BM25: mem, Dense: randomFlat(t, task.Corpus, 8, vector.Cosine)}); err != nil {
					t.Fatal(err)
				}
			}
			rewrite(t, path, true, func(b []byte, secs map[string]section) []byte { c.edit(b, secs); return b })
			ix, err := Open(path)
			if err == nil {
				defer ix.Close()
				_, err = ix.NewSearcher()
			}
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), rebuildHint) {
				t.Errorf("error %v, want one naming %q and saying to rebuild", err, c.want)
			}
		})
	}
}

// TestChangedAndReplaced: an open index tells a file overwritten or
// truncated in place (Changed) from one renamed over its path
// (Replaced), which leaves the mapping whole.
func TestChangedAndReplaced(t *testing.T) {
	task := demoTask(t)
	path, _ := writeBM25(t, task, "", bm25.DefaultParams(bm25.R2MED))
	newer, err := os.ReadFile(writeDocs(t, task.Corpus[:20]))
	if err != nil {
		t.Fatal(err)
	}

	// Renamed over: the open index stays good, the path names another.
	ix, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ix.NewSearcher()
	if err != nil {
		t.Fatal(err)
	}
	before := s.Search("crushing chest pain", 5)
	tmp := filepath.Join(filepath.Dir(path), "next.idx")
	if err := os.WriteFile(tmp, newer, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	if err := ix.Changed(); err != nil {
		t.Errorf("renamed over: Changed says %v", err)
	}
	if !ix.Replaced() {
		t.Error("renamed over: Replaced says no")
	}
	if after := s.Search("crushing chest pain", 5); len(after) != len(before) || after[0] != before[0] {
		t.Errorf("the mapping of a file renamed over changed: %v, was %v", after, before)
	}
	ix.Close()

	// Renamed away (mv live.idx old.idx, before the new file is moved
	// in): the rename sets the file's change time, yet its bytes are
	// what they were; where Changed took it for an overwrite, the
	// service dropped a whole index and answered 503.
	if ix, err = Open(path); err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond) // a change time the rename can move
	away := filepath.Join(filepath.Dir(path), "old.idx")
	if err := os.Rename(path, away); err != nil {
		t.Fatal(err)
	}
	if err := ix.Changed(); err != nil {
		t.Errorf("renamed away: Changed says %v", err)
	}
	if !ix.Replaced() {
		t.Error("renamed away: Replaced says no")
	}
	// Moved back and then copied over in place, its times kept (cp -p):
	// Changed.
	if err := os.Rename(away, path); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	old, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	old[len(old)-1] ^= 1
	if err := os.WriteFile(path, old, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	if err := ix.Changed(); !errors.Is(err, ErrChanged) {
		t.Errorf("copied over in place with its times kept: Changed says %v", err)
	}
	ix.Close()

	// Overwritten in place by a smaller file (cp smaller live): Changed,
	// and reading past the new end faults into an error, not a crash.
	path, _ = writeBM25(t, task, "", bm25.DefaultParams(bm25.R2MED))
	ix, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if _, err := ix.Doc(0); err != nil {
		t.Fatal(err)
	}
	if err := ix.Changed(); err != nil {
		t.Fatalf("untouched: %v", err)
	}
	if err := os.WriteFile(path, newer, 0o644); err != nil { // truncates, then writes: what cp does
		t.Fatal(err)
	}
	if err := ix.Changed(); !errors.Is(err, ErrChanged) || !strings.Contains(err.Error(), "rename them over") {
		t.Errorf("overwritten in place: Changed says %v", err)
	}
	last := ix.Len() - 1
	read := func() error {
		return Guard(func() error {
			_, err := ix.Doc(last) // its text lies past the smaller file's end
			return err
		})
	}
	if err := read(); !errors.Is(err, ErrChanged) || !strings.Contains(err.Error(), path) {
		t.Errorf("reading the overwritten file: %v, want an error naming %s", err, path)
	}
	// Truncated to nothing: the offsets themselves lie past the end, and
	// reading them faults.
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	var fe *FaultError
	if err := read(); !errors.As(err, &fe) || fe.Path != path || !errors.Is(err, ErrChanged) {
		t.Errorf("reading past the new end: %v, want a FaultError naming %s", err, path)
	}
	// Guard leaves other panics alone.
	func() {
		defer func() {
			if p := recover(); p != "boom" {
				t.Errorf("recovered %v, want boom", p)
			}
		}()
		Guard(func() error { panic("boom") })
	}()
}

// TestStoredHeadsAndTerms: what an index stores for snippets is what
// analyzing the documents gives: each document's head tokens (byte
// ranges and term ids, up to the first break at or after HeadBytes),
// none for a document with no break near its start, and each document's
// terms (the postings transposed).
func TestStoredHeadsAndTerms(t *testing.T) {
	task := demoTask(t)
	docs := slices.Clone(task.Corpus)
	docs = append(docs,
		ir.Doc{ID: "long", Text: strings.Repeat("Myocardial infarction presents with chest pain. ", 30)},
		ir.Doc{ID: "nospace", Text: strings.Repeat("x", HeadBytes+headReach+10) + " tail"},
		ir.Doc{ID: "empty", Text: ""})
	path := writeDocs(t, docs)
	ix, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if err := ix.Verify(); err != nil {
		t.Fatal(err)
	}
	an, _ := ix.Analyzer()
	h := highlight.New(an)
	b, _ := ix.BM25()
	for i, d := range docs {
		toks, covered, ok, err := ix.HeadTokens(nil, i)
		if err != nil {
			t.Fatal(err)
		}
		p := headLen(d.Text)
		if ok != (p >= 0) || ok && covered != p {
			t.Fatalf("%s: head covers %d (stored %v), want %d", d.ID, covered, ok, p)
		}
		if d.ID == "long" && (p <= HeadBytes || p >= len(d.Text) || d.Text[p] != ' ') {
			t.Errorf("long: head ends at %d", p)
		}
		if ok {
			want := h.Tokens(d.Text[:p])
			if len(toks) != len(want) {
				t.Fatalf("%s: %d tokens stored, %d analyzed", d.ID, len(toks), len(want))
			}
			for j, w := range want {
				id := int32(-1)
				if w.Keep {
					id, _ = b.TermID(w.Term)
				}
				if toks[j] != (HeadToken{Start: w.Start, End: w.End, Term: id}) {
					t.Fatalf("%s: token %d stored %+v, analyzed %+v (id %d)", d.ID, j, toks[j], w, id)
				}
			}
		}
		terms, ok, err := ix.DocTerms(i)
		if err != nil || !ok {
			t.Fatalf("%s: no terms stored (%v)", d.ID, err)
		}
		var want []int32
		for _, term := range an.Analyze(nil, d.Text) {
			id, _ := b.TermID(term)
			if !slices.Contains(want, id) {
				want = append(want, id)
			}
		}
		slices.Sort(want)
		if !slices.Equal(terms, want) {
			t.Fatalf("%s: terms %v, analyzed %v", d.ID, terms, want)
		}
	}
	// Crafted: a head token past its head, a document's terms out of
	// order; both refused when first read.
	for _, c := range []struct {
		name string
		edit func(b []byte, secs map[string]section)
		read func(ix *Index) error
		want string
	}{
		{"head token past its head", func(b []byte, secs map[string]section) {
			binary.LittleEndian.PutUint32(b[secs[secHeads].off:], 0<<16|2000)
		}, func(ix *Index) error { _, _, _, err := ix.HeadTokens(nil, 0); return err }, "lies outside its head"},
		{"terms out of order", func(b []byte, secs map[string]section) {
			s := secs[secDocTerms]
			binary.LittleEndian.PutUint32(b[s.off:], 1<<30)
		}, func(ix *Index) error { _, _, err := ix.DocTerms(0); return err }, "lists term"},
	} {
		p := copyFile(t, path)
		rewrite(t, p, true, func(b []byte, secs map[string]section) []byte { c.edit(b, secs); return b })
		ix, err := Open(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.read(ix); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v", c.name, err)
		}
		ix.Close()
	}
}

// writeDocs writes an R2MED-scheme BM25 index of docs and returns its
// path.
func writeDocs(t *testing.T, docs []ir.Doc) string {
	t.Helper()
	mem, err := BuildBM25(docs, "", bm25.DefaultParams(bm25.R2MED), bm25.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "docs.idx")
	if err := Write(path, Contents{Docs: docs, BM25: mem}); err != nil {
		t.Fatal(err)
	}
	return path
}
