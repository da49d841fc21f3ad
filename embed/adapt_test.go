package embed

import (
	"context"
	"testing"
	"time"
)

// simServer is a server's throughput in tokens per second as a function
// of the batch size and the requests in flight: every request pays a
// fixed overhead that requests in flight hide, the accelerator pays a
// fixed cost per batch, and beyond gpuBest texts a batch gets slower per
// text (padding, memory): the best batch is gpuBest, and requests in
// flight help until they hide the overhead.
func simServer(batch, conc int) float64 {
	const tokPerText, overhead, perBatch, perToken, gpuBest = 100.0, 0.100, 0.010, 2e-6, 256
	perTok := perToken
	if batch > gpuBest {
		perTok *= 1 + float64(batch-gpuBest)/gpuBest
	}
	gpu := perBatch + float64(batch)*tokPerText*perTok // seconds per batch on the accelerator
	gpuRate := float64(batch) * tokPerText / gpu
	offered := float64(conc*batch) * tokPerText / (overhead + gpu)
	return min(gpuRate, offered)
}

// drive runs n requests through a, one server, completing each after the
// time its share of the server's throughput takes, on a's clock.
func drive(t *testing.T, a *adapter, n int, tput func(batch, conc int) float64) {
	t.Helper()
	now := time.Unix(0, 0)
	a.now = func() time.Time { return now }
	ctx := context.Background()
	for range n {
		if err := a.acquire(ctx); err != nil {
			t.Fatal(err)
		}
		b, c := a.batchSize(), a.servers[0].limit
		tokens := b * 100
		now = now.Add(time.Duration(float64(tokens) / tput(b, c) * float64(time.Second)))
		a.release(0, b, tokens, true)
	}
}

// TestAdapterFindsTheBest: from the defaults (64 texts, 4 in flight) the
// adapter doubles the batch to the server's best and raises the requests
// in flight until they stop paying, within a few percent of the best
// throughput any setting gives.
func TestAdapterFindsTheBest(t *testing.T) {
	a := newAdapter(nil, startBatch, maxAdaptBatch, startConcurrency, false, false)
	drive(t, a, 400, simServer)
	best := 0.0
	for _, b := range []int{32, 64, 128, 256, 512} {
		for c := 1; c <= 64; c++ {
			best = max(best, simServer(b, c))
		}
	}
	b, c := a.batchSize(), a.servers[0].limit
	if b != 256 {
		t.Errorf("settled on batches of %d, want the server's best, 256", b)
	}
	if got := simServer(b, c); got < 0.97*best {
		t.Errorf("settled on %d texts × %d in flight: %.0f tokens/s, the best setting gives %.0f", b, c, got, best)
	}
	if c > 16 {
		t.Errorf("raised requests in flight to %d though %d already gave %.0f%%", c, 8, 100*simServer(b, 8)/best)
	}
}

// TestAdapterBacksOffOnOverload: a retryable failure (429, 503) halves
// the server's requests in flight; it grows again after a hold.
func TestAdapterBacksOffOnOverload(t *testing.T) {
	a := newAdapter(nil, 128, maxAdaptBatch, 16, true, false)
	failures := int64(0)
	a.failures = func(int) int64 { return failures }
	drive(t, a, 5, simServer)
	failures = 1
	drive(t, a, 1, simServer)
	if got := a.servers[0].limit; got != 8 {
		t.Fatalf("after a 429 the limit is %d, want 16/2", got)
	}
	failures = 2
	drive(t, a, 1, simServer)
	if got := a.servers[0].limit; got != 4 {
		t.Fatalf("after a second 429 the limit is %d, want 4", got)
	}
	drive(t, a, 200, simServer)
	if got := a.servers[0].limit; got <= 4 {
		t.Errorf("the limit stayed at %d after the overload passed", got)
	}
}

// TestAdapterKeepsFixedSettings: what the user gives stays; only the
// other setting adapts.
func TestAdapterKeepsFixedSettings(t *testing.T) {
	a := newAdapter(nil, 64, maxAdaptBatch, 2, true, true)
	drive(t, a, 300, simServer)
	if a.batchSize() != 64 || a.servers[0].limit != 2 {
		t.Errorf("fixed 64 × 2 became %d × %d", a.batchSize(), a.servers[0].limit)
	}
	a = newAdapter(nil, startBatch, maxAdaptBatch, 3, false, true)
	drive(t, a, 300, simServer)
	if a.batchSize() == startBatch || a.servers[0].limit != 3 {
		t.Errorf("batch adaptive, 3 in flight fixed: got %d × %d", a.batchSize(), a.servers[0].limit)
	}
	if st := a.stats(nil); !st.Adaptive || st.BatchSize != a.batchSize() || st.Servers[0].Concurrency != 3 || st.Requests != 300 {
		t.Errorf("stats %+v", st)
	}
}
