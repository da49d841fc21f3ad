package highlight

import (
	"testing"

	"github.com/r2med/r2med/analysis"
	"github.com/r2med/r2med/synth"
)

// BenchmarkSnippet: a 300-byte snippet and the matched terms of each of
// the first 100 documents of the synthetic 20k set for one of its
// queries (one op: 100 documents).
func BenchmarkSnippet(b *testing.B) {
	task := synth.Combined(20000, 1)
	h := New(analysis.LuceneEnglish())
	terms := h.Terms(task.Queries[0].Text)
	docs := task.Corpus[:100]
	bytes := 0
	for _, d := range docs {
		bytes += len(d.Text)
	}
	b.ResetTimer()
	for b.Loop() {
		for _, d := range docs {
			h.Snippet(d.Text, terms, 300)
		}
	}
	b.ReportMetric(float64(bytes)/float64(len(docs)), "bytes/doc")
}
