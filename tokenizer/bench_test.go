package tokenizer

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// benchText is a realistic medical passage: the R2MED-style demo corpus
// (PubMed-like abstracts with numbers, units and abbreviations).
func benchText(b *testing.B) string {
	data, err := os.ReadFile(filepath.Join("..", "demo", "data", "corpus.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	var texts []string
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var rec struct{ Text string }
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			b.Fatal(err)
		}
		texts = append(texts, rec.Text)
	}
	return strings.Join(texts[:8], " ")
}

func benchEncode(b *testing.B, tk *Tokenizer, text string, maxLen int) {
	n := len(tk.Encode(text, maxLen).IDs)
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		tk.Encode(text, maxLen)
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
}

// BenchmarkEncodeBERT: the real uncased BERT vocabulary (what bge, e5 and
// MedCPT use), no truncation.
func BenchmarkEncodeBERT(b *testing.B) {
	benchEncode(b, bertUncased(b), benchText(b), 1<<30)
}

// BenchmarkEncodeBERT512 truncates to 512 tokens as an encoder would.
func BenchmarkEncodeBERT512(b *testing.B) {
	benchEncode(b, bertUncased(b), benchText(b), 512)
}

// BenchmarkEncodeAccented: the same text with accents and capitals, so
// the NFD path runs.
func BenchmarkEncodeAccented(b *testing.B) {
	text := strings.NewReplacer("e", "é", "a", "À", "o", "ö").Replace(benchText(b))
	benchEncode(b, bertUncased(b), text, 1<<30)
}

func BenchmarkEncodeParallel(b *testing.B) {
	tk, text := bertUncased(b), benchText(b)
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			tk.Encode(text, 512)
		}
	})
}
