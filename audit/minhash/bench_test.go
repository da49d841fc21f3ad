package minhash

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

func benchText(r *rand.Rand, words int) string {
	w := make([]string, words)
	for i := range w {
		w[i] = "w" + string(rune('a'+r.IntN(26))) + string(rune('a'+r.IntN(26))) + string(rune('a'+r.IntN(26)))
	}
	return strings.Join(w, " ")
}

// BenchmarkSignature signs a 110-word text's shingle set (a 700-character
// document).
func BenchmarkSignature(b *testing.B) {
	h, _ := New(Spec{})
	sh := h.Shingles(nil, Normalize(benchText(rand.New(rand.NewPCG(1, 1)), 110)))
	var sig []uint32
	for b.Loop() {
		sig = h.Signature(sig, sh)
	}
}

// BenchmarkShingles normalises and shingles a 110-word text.
func BenchmarkShingles(b *testing.B) {
	h, _ := New(Spec{})
	text := benchText(rand.New(rand.NewPCG(1, 1)), 110)
	var sh []uint64
	var norm []byte
	for b.Loop() {
		norm = AppendNormalized(norm[:0], text)
		sh = h.Shingles(sh[:0], string(norm))
	}
}

// shortTexts draws n texts of 6–16 words from a 20,000-word vocabulary
// (Zipf-distributed, as words are), for the word-edit benchmarks.
func shortTexts(r *rand.Rand, n int) []string {
	zipf := rand.NewZipf(r, 1.1, 1, 19999)
	out := make([]string, n)
	var b strings.Builder
	for i := range out {
		b.Reset()
		for j := range 6 + r.IntN(11) {
			if j > 0 {
				b.WriteByte(' ')
			}
			fmt.Fprintf(&b, "w%d", zipf.Uint64())
		}
		out[i] = b.String()
	}
	return out
}

// BenchmarkEditSearch is the word-edit detector's cost per training text
// against 100,000 indexed short texts: a short text with one word
// replaced (found), a short text matching nothing, and a 110-word document
// (longer than any indexed text: counted and skipped); beside it, for
// scale, the MinHash collection's search of the same short texts.
func BenchmarkEditSearch(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	members := shortTexts(r, 100000)
	ix, err := NewEditIndex(Edits{}, members)
	if err != nil {
		b.Fatal(err)
	}
	h, _ := New(Spec{})
	coll := NewCollection(h, members, 0)
	edited := make([]string, 1000)
	for i := range edited {
		w := strings.Fields(members[r.IntN(len(members))])
		w[r.IntN(len(w))] = "replaced"
		edited[i] = strings.Join(w, " ")
	}
	none := shortTexts(rand.New(rand.NewPCG(3, 4)), 1000)
	for _, c := range []struct {
		name   string
		probes []string
	}{
		{"short-found", edited},
		{"short-none", none},
		{"long", []string{Normalize(benchText(r, 110))}},
	} {
		b.Run(c.name, func(b *testing.B) {
			s := ix.NewSearcher()
			i := 0
			for b.Loop() {
				s.SearchNormalized(c.probes[i%len(c.probes)])
				i++
			}
		})
	}
	b.Run("minhash-short-none", func(b *testing.B) {
		s := coll.NewSearcher()
		i := 0
		for b.Loop() {
			s.SearchNormalized(none[i%len(none)])
			i++
		}
	})
}

// BenchmarkEditIndex indexes 100,000 short texts.
func BenchmarkEditIndex(b *testing.B) {
	members := shortTexts(rand.New(rand.NewPCG(1, 2)), 100000)
	for b.Loop() {
		if _, err := NewEditIndex(Edits{}, members); err != nil {
			b.Fatal(err)
		}
	}
}
