package analysis

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// benchCorpora returns realistic biomedical texts: the reference texts
// (clinical notes, R2MED passages, NFCorpus queries, mixed case with
// punctuation) and NFCorpus's documents (long, already lowercased).
func benchCorpora(b testing.TB) map[string][]string {
	b.Helper()
	benchOnce.Do(func() { benchTexts = readBenchCorpora(b) })
	if benchTexts == nil {
		b.Fatal("benchmark corpora failed to load")
	}
	return benchTexts
}

var (
	benchOnce  sync.Once
	benchTexts map[string][]string
)

func readBenchCorpora(b testing.TB) map[string][]string {
	out := map[string][]string{}
	for _, c := range loadReference(b) {
		out["reference"] = append(out["reference"], c.Text)
	}
	path := filepath.Join("..", "..", "shared", "data", "nfcorpus", "corpus.jsonl")
	f, err := os.Open(path)
	if err != nil {
		b.Fatalf("%v (the reference file is there, so this should be too)", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		var d struct{ Title, Text string }
		if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
			b.Fatal(err)
		}
		out["nfcorpus"] = append(out["nfcorpus"], d.Title+" "+d.Text)
	}
	if err := sc.Err(); err != nil {
		b.Fatal(err)
	}
	return out
}

func benchmarkAnalyze(b *testing.B, analyze func(dst []string, text string) []string) {
	for _, name := range []string{"reference", "nfcorpus"} {
		texts := benchCorpora(b)[name]
		size := 0
		for _, t := range texts {
			size += len(t)
		}
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(size))
			b.ReportAllocs()
			var dst []string
			for b.Loop() {
				for _, t := range texts {
					dst = analyze(dst[:0], t)
				}
			}
		})
	}
}

func BenchmarkLuceneEnglish(b *testing.B) {
	benchmarkAnalyze(b, LuceneEnglish().Analyze)
}

func BenchmarkStandardTokenizer(b *testing.B) {
	benchmarkAnalyze(b, StandardTokenizer{}.Tokenize)
}

func BenchmarkAnalyzeJSONL(b *testing.B) {
	var in bytes.Buffer
	for i, text := range benchCorpora(b)["nfcorpus"] {
		line, _ := json.Marshal(map[string]any{"id": fmt.Sprint("doc", i), "text": text})
		in.Write(line)
		in.WriteByte('\n')
	}
	a := LuceneEnglish()
	b.SetBytes(int64(in.Len()))
	b.ReportAllocs()
	for b.Loop() {
		if err := AnalyzeJSONL(bytes.NewReader(in.Bytes()), io.Discard, a, "bench"); err != nil {
			b.Fatal(err)
		}
	}
}
