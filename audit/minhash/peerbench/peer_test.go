// Package peerbench measures package minhash side by side with a peer,
// github.com/ekzhu/minhash-lsh (the Go port of datasketch's MinHash LSH
// by its author, with dgryski/go-minhash signatures), on the same texts,
// words and LSH plan. It is its own module so that the peer never
// becomes a dependency of r2med:
//
//	cd audit/minhash/peerbench && go test -run '^$' -bench . -benchtime 1x
//
// Both sides index the documents of the synthetic R2MED-shaped tasks at
// 1/10 scale (35,708) and then search 20,000 documents of the same tasks
// under another seed, with 108 hash values and threshold 0.8 (the peer
// picks its own bands and rows for them). Both get the words of
// minhash.Normalize. The peer
// returns candidates only; ours also verifies them by exact Jaccard, so
// its figure includes work the peer leaves to the caller.
package peerbench

import (
	"strings"
	"testing"

	minhashlsh "github.com/ekzhu/minhash-lsh"

	"github.com/r2med/r2med/audit/minhash"
	"github.com/r2med/r2med/synth"
)

func texts(seed int64, n int) []string {
	var out []string
	for _, spec := range synth.R2MEDSpecs() {
		for _, d := range synth.Generate(spec.Scale(0.1), seed).Corpus {
			out = append(out, d.Text)
		}
	}
	if n > 0 && n < len(out) {
		out = out[:n]
	}
	return out
}

var docs, queries = texts(1, 0), texts(2, 20000)

// BenchmarkOurs: build a Collection, then search every query (exact key,
// shingles, signature, band probe, exact Jaccard check).
func BenchmarkOurs(b *testing.B) {
	for b.Loop() {
		h, _ := minhash.New(minhash.Spec{})
		c := minhash.NewCollection(h, docs, 1)
		s := c.NewSearcher()
		found := 0
		for _, q := range queries {
			found += len(s.Search(q))
		}
		b.ReportMetric(float64(found), "matches")
	}
	b.ReportMetric(float64(len(queries)*b.N)/b.Elapsed().Seconds(), "queries/s")
}

// BenchmarkEkzhu: the peer with the same 108 hash values (18 bands × 6
// rows) over the same words: push every word, sign, index; query each.
func BenchmarkEkzhu(b *testing.B) {
	sign := func(text string) []uint64 {
		m := minhashlsh.NewMinhash(1, 108)
		for _, w := range strings.Fields(minhash.Normalize(text)) {
			m.Push([]byte(w))
		}
		return m.Signature()
	}
	for b.Loop() {
		lsh := minhashlsh.NewMinhashLSH64(108, 0.8)
		for i, d := range docs {
			lsh.Add(i, sign(d))
		}
		lsh.Index()
		k, l := lsh.Params()
		b.ReportMetric(float64(l), "bands")
		b.ReportMetric(float64(k), "rows")
		found := 0
		for _, q := range queries {
			found += len(lsh.Query(sign(q)))
		}
		b.ReportMetric(float64(found), "candidates")
	}
	b.ReportMetric(float64(len(queries)*b.N)/b.Elapsed().Seconds(), "queries/s")
}
