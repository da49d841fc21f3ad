package retrieve_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/r2med/r2med/cache"
	"github.com/r2med/r2med/embed/embedtest"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/retrieve"
)

// benchGPU is the embedding server BenchmarkDenseServer runs against: a
// model of a GPU server (embedtest.GPU) for a BERT-large-shaped encoder,
// slowed so that the test's own CPU (client and server JSON on a shared
// machine) stays well below it: an accelerator at 500k tokens/s with
// 12 ms per batch, 100 ms per request of network, parsing and tokenizing
// that requests overlap, and one CPU writing answers at 4 ms per request
// plus 320 ns per element of a 1,024-float vector as decimal JSON (80 ns
// as base64). Floats then cap the server near 3,000 docs/s of its CPU;
// base64 leaves the accelerator the limit (3,800 docs/s of the
// benchmark's 120-token documents at 512 per batch, 3,400 at 256).
func benchGPU() *embedtest.GPU {
	return &embedtest.GPU{TokensPerSecond: 5e5, PerBatch: 12 * time.Millisecond, Overhead: 100 * time.Millisecond,
		PerRequest: 4 * time.Millisecond, FloatCost: 320 * time.Nanosecond, ElementsPerVector: 1024}
}

// benchCorpus is n documents of 40 to 199 words (embedtest counts a word
// a token), varied as a real corpus is, so batches meet the token budget
// at some sizes.
func benchCorpus(n int) *ir.Task {
	t := &ir.Task{Name: "bench"}
	for i := range n {
		words := 40 + (i*7919)%160
		var b strings.Builder
		fmt.Fprintf(&b, "%d ", i) // every document distinct: the cache would embed a repeat once
		for w := range words - 1 {
			b.WriteByte(byte('a' + (i*31+w)%26)) // one-letter words: the test's own JSON stays cheap
			b.WriteByte(' ')
		}
		t.Corpus = append(t.Corpus, ir.Doc{ID: fmt.Sprint(i), Text: b.String()})
	}
	return t
}

// BenchmarkDenseServer embeds a corpus the way `r2med run --retriever
// dense --backend openai` does (the dense recipe, the embedding cache on
// disk, a fresh client per pass so the adapter starts cold each time)
// against the GPU-shaped loopback server, with the defaults (batch size
// and requests in flight adapted, base64 asked first) and with fixed
// --batch-size and --concurrency, in either --encoding. Each setting
// reports documents per second; compare a default with the best fixed
// setting of its encoding. Bounded: a few seconds per pass.
func BenchmarkDenseServer(b *testing.B) {
	task := benchCorpus(16000) // R2MED's tasks hold 10k to 60k documents
	type setting struct {
		encoding    string
		batch, conc int
	}
	// The defaults, then the fixed settings: the old defaults (64 texts,
	// 4 in flight, floats) and a grid around the best (batches of 128,
	// and 4 in flight with floats, were never best on a wider grid).
	settings := []setting{{"auto", 0, 0}, {"float", 0, 0}, {"float", 64, 4}}
	for _, batch := range []int{256, 512} {
		for _, conc := range []int{4, 8, 16} {
			settings = append(settings, setting{"base64", batch, conc})
		}
		for _, conc := range []int{8, 16} {
			settings = append(settings, setting{"float", batch, conc})
		}
	}
	name := func(n int) string {
		if n == 0 {
			return "auto"
		}
		return fmt.Sprint(n)
	}
	for _, s := range settings {
		b.Run(fmt.Sprintf("encoding=%s/batch=%s/conc=%s", s.encoding, name(s.batch), name(s.conc)), func(b *testing.B) {
			srv := embedtest.NewServer(b, embedtest.Options{Dim: 8, GPU: benchGPU()})
			d := retrieve.Dense{Model: "stub", Backend: "openai", BaseURLs: []string{srv.URL},
				BatchSize: s.batch, Concurrency: s.conc, Encoding: s.encoding}
			var docs float64
			for b.Loop() {
				b.StopTimer()
				store, err := cache.Open(b.TempDir(), cache.Options{})
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				r, err := retrieve.New(context.Background(), d, task, retrieve.Env{Cache: store})
				if err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				retrieve.Close(r)
				store.Close()
				b.StartTimer()
				docs += float64(len(task.Corpus))
			}
			b.ReportMetric(docs/b.Elapsed().Seconds(), "docs/s")
		})
	}
}
