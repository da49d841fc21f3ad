package synth

import (
	"testing"
)

// BenchmarkGenerate generates each full-size R2MED task; bytes/s counts the
// document and query text produced.
func BenchmarkGenerate(b *testing.B) {
	for _, spec := range R2MEDSpecs() {
		b.Run(spec.Name, func(b *testing.B) {
			var size int64
			for b.Loop() {
				t := Generate(spec, 1)
				size = 0
				for _, d := range t.Corpus {
					size += int64(len(d.Text))
				}
				for _, q := range t.Queries {
					size += int64(len(q.Text))
				}
			}
			b.SetBytes(size)
			b.ReportMetric(float64(spec.Docs)*float64(b.N)/b.Elapsed().Seconds(), "docs/s")
		})
	}
}
