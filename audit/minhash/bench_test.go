package minhash

import (
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
