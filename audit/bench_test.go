package audit

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/r2med/r2med/audit/minhash"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/synth"
)

// benchData writes n synthetic training texts (documents of the synthetic
// R2MED-shaped tasks under another seed, so they overlap the benchmark
// only by chance) and returns the file and the benchmark tasks at scale.
func benchData(b *testing.B, scale float64, n int) (string, []*ir.Task) {
	b.Helper()
	var tasks []*ir.Task
	for _, spec := range synth.R2MEDSpecs() {
		tasks = append(tasks, synth.Generate(spec.Scale(scale), 1))
	}
	path := filepath.Join(b.TempDir(), "train.jsonl")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriter(f)
	written := 0
	for seed := int64(2); written < n; seed++ {
		for _, spec := range synth.R2MEDSpecs() {
			t := synth.Generate(spec.Scale(scale), seed)
			for _, d := range t.Corpus {
				if written == n {
					break
				}
				line, _ := json.Marshal(map[string]string{"id": d.ID, "text": d.Text})
				w.Write(append(line, '\n'))
				written++
			}
		}
	}
	w.Flush()
	f.Close()
	return path, tasks
}

// BenchmarkLeakage audits 20,000 synthetic training texts against the
// synthetic R2MED tasks at 1/10 scale (35,708 documents, all audited);
// texts/s counts training texts. docs/BENCHMARKS.md has the full-size run.
func BenchmarkLeakage(b *testing.B) {
	path, tasks := benchData(b, 0.1, 20000)
	b.ResetTimer()
	for b.Loop() {
		res, err := Leakage(context.Background(), tasks, []string{path}, LeakageOptions{Documents: AllDocs})
		if err != nil {
			b.Fatal(err)
		}
		res.Close()
	}
	b.ReportMetric(20000*float64(b.N)/b.Elapsed().Seconds(), "texts/s")
}

// BenchmarkSearch is the per-text cost alone: normalise, shingle, sign,
// probe and verify one synthetic document against a collection of 35,708.
func BenchmarkSearch(b *testing.B) {
	var texts []string
	for _, spec := range synth.R2MEDSpecs() {
		for _, d := range synth.Generate(spec.Scale(0.1), 1).Corpus {
			texts = append(texts, d.Text)
		}
	}
	h, _ := minhash.New(minhash.Spec{})
	c := minhash.NewCollection(h, texts, 0)
	var queries []string
	for _, d := range synth.Generate(synth.R2MEDSpecs()[4].Scale(0.1), 2).Corpus {
		queries = append(queries, d.Text)
	}
	s := c.NewSearcher()
	b.ResetTimer()
	i := 0
	for b.Loop() {
		s.Search(queries[i%len(queries)])
		i++
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "texts/s")
}
