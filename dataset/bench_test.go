package dataset

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/r2med/r2med/ir"
)

// syntheticCorpus builds an R2MED-style corpus.jsonl of about size bytes:
// path-like ids, documents of a few hundred to a few thousand characters
// with escaped newlines and quotes and raw non-ASCII, like the real files.
func syntheticCorpus(size int, beir bool) []byte {
	words := strings.Fields("the patient presented with acute myocardial infarction and was treated using " +
		"protein expression of in cells Neanderthal average height bones from men women the to is a for on " +
		"by at this that which were are be has as it or an not after before during study results showed " +
		"significant increase decrease levels blood pressure heart rate mg/dL (p < 0.05) 95% CI")
	// About one word in a hundred needs escaping or is non-ASCII, roughly
	// as in R2MED's corpora.
	rare := []string{`\"quoted\"`, `C:\\path`, "β-blockers", "168\u00a0cm", "Einhornhöhle", "résumé"}
	rng := rand.New(rand.NewPCG(7, 7))
	var b bytes.Buffer
	for i := 0; b.Len() < size; i++ {
		if beir {
			fmt.Fprintf(&b, `{"_id": "MED-%d", "title": "", "text": "`, i)
		} else {
			fmt.Fprintf(&b, `{"id": "topic_%d/Article_%d_%d.txt", "text": "`, i/50, i%7, i)
		}
		n := 50 + rng.IntN(600)
		for w := range n {
			if w > 0 {
				if rng.IntN(40) == 0 {
					b.WriteString(`\n`)
				} else {
					b.WriteByte(' ')
				}
			}
			if rng.IntN(100) == 0 {
				b.WriteString(rare[rng.IntN(len(rare))])
			} else {
				b.WriteString(words[rng.IntN(len(words))])
			}
		}
		b.WriteString("\"}\n")
	}
	return b.Bytes()
}

// BenchmarkReadCorpus measures ReadCorpus end to end (line splitting,
// decoding, duplicate-id check), against the same loop with every line
// decoded by encoding/json, and from gzip.
func BenchmarkReadCorpus(b *testing.B) {
	data := syntheticCorpus(64<<20, false)
	b.Run("fast-path", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			n := 0
			if err := ReadCorpus(bytes.NewReader(data), "c", ir.LayoutR2MED, func(ir.Doc) error { n++; return nil }); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding-json-only", func(b *testing.B) {
		k := mustKeys(b, false)
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			lr := newLineReader(bytes.NewReader(data), "c")
			seen := make(map[string]int)
			for {
				line, ok := lr.Next()
				if !ok {
					break
				}
				d, err := slowDoc(line, k)
				if err != nil {
					b.Fatal(err)
				}
				seen[d.ID] = lr.Line()
			}
		}
	})
	b.Run("gzip", func(b *testing.B) {
		var z bytes.Buffer
		zw := gzip.NewWriter(&z)
		zw.Write(data)
		zw.Close()
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			zr, err := gzip.NewReader(bytes.NewReader(z.Bytes()))
			if err != nil {
				b.Fatal(err)
			}
			if err := ReadCorpus(zr, "c", ir.LayoutR2MED, func(ir.Doc) error { return nil }); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("gzip-readahead", func(b *testing.B) {
		var z bytes.Buffer
		zw := gzip.NewWriter(&z)
		zw.Write(data)
		zw.Close()
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			zr, err := gzip.NewReader(bytes.NewReader(z.Bytes()))
			if err != nil {
				b.Fatal(err)
			}
			ra := newReadahead(zr)
			if err := ReadCorpus(ra, "c", ir.LayoutR2MED, func(ir.Doc) error { return nil }); err != nil {
				b.Fatal(err)
			}
			ra.Close()
		}
	})
	b.Run("gunzip-only", func(b *testing.B) {
		var z bytes.Buffer
		zw := gzip.NewWriter(&z)
		zw.Write(data)
		zw.Close()
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			zr, err := gzip.NewReader(bytes.NewReader(z.Bytes()))
			if err != nil {
				b.Fatal(err)
			}
			io.Copy(io.Discard, zr)
		}
	})
}

func BenchmarkLoadNFCorpus(b *testing.B) {
	dir := sharedData(b, "nfcorpus")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Load(dir, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// The synthetic corpus must itself be valid and take the fast path, or the
// benchmark measures the wrong thing.
func TestSyntheticCorpus(t *testing.T) {
	for _, beir := range []bool{false, true} {
		data := syntheticCorpus(1<<20, beir)
		for _, line := range bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) {
			if _, _, ok := fastDoc(line, beir, nil); !ok {
				t.Fatalf("fast path declined %s", line)
			}
		}
	}
}
