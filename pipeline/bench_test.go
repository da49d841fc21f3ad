package pipeline

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/r2med/r2med/synth"
)

// BenchmarkSweepSynthetic is the 8-task BM25 sweep of issue #2's target:
// index, top-100 search and evaluation of synthetic tasks shaped like the
// full R2MED tasks (357k documents, 876 queries). Generation is outside the
// timer; tasks are generated one at a time, as a real sweep loads them, so
// the reported peak RSS (VmHWM) is the sweep's. R2MED_BENCH_SCALE shrinks
// every task (e.g. 0.1) for a quick look.
func BenchmarkSweepSynthetic(b *testing.B) {
	scale := 1.0
	if s := os.Getenv("R2MED_BENCH_SCALE"); s != "" {
		var err error
		if scale, err = strconv.ParseFloat(s, 64); err != nil {
			b.Fatal(err)
		}
	}
	docs := 0
	for b.Loop() {
		docs = 0
		for _, spec := range synth.R2MEDSpecs() {
			b.StopTimer()
			if scale != 1 {
				spec = spec.Scale(scale)
			}
			task := synth.Generate(spec, 1)
			docs += len(task.Corpus)
			b.StartTimer()
			if _, err := Run(context.Background(), task, DefaultConfig(), Options{}); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(docs), "docs")
	if hwm := peakRSS(); hwm > 0 {
		b.ReportMetric(hwm/(1<<20), "peak-MiB")
	}
}

// peakRSS reads the process's resident high-water mark in bytes (Linux).
func peakRSS() float64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			f := strings.Fields(rest)
			if kb, err := strconv.ParseFloat(f[0], 64); err == nil {
				return kb * 1024
			}
		}
	}
	return 0
}
