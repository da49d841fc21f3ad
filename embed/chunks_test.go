package embed

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
)

// An encoder without in-flight figures runs one chunk at a time, so the
// first chunk's failure must be the only chunk run: the place it frees
// must not start the next one before the failure stops the rest.
func TestChunksFirstErrorStopsTheRest(t *testing.T) {
	local := Func(func(context.Context, Input, []string) ([][]float32, error) { return nil, nil })
	boom := errors.New("chunk 1 failed")
	for range 200 {
		var calls atomic.Int32
		err := Chunks(context.Background(), local, 100, 10, func(ctx context.Context, lo, hi int) error {
			if calls.Add(1) == 1 {
				return boom
			}
			return ctx.Err()
		})
		if !errors.Is(err, boom) {
			t.Fatalf("error %v, want the first chunk's", err)
		}
		if n := calls.Load(); n != 1 {
			t.Fatalf("%d chunks ran after the first failed, want none", n-1)
		}
	}
}

// The first chunk to fail names the error, not a chunk it stopped.
func TestChunksReturnTheFirstFailure(t *testing.T) {
	fleet := inFlight{texts: 40, batch: 10}
	boom := errors.New("chunk 1 failed")
	release := make(chan struct{})
	err := Chunks(context.Background(), fleet, 100, 10, func(ctx context.Context, lo, hi int) error {
		if lo == 0 {
			defer close(release)
			return boom
		}
		<-release
		<-ctx.Done()
		return ctx.Err()
	})
	if !errors.Is(err, boom) {
		t.Fatalf("error %v, want the first chunk's", err)
	}
}

type inFlight struct{ texts, batch int }

func (inFlight) Embed(context.Context, Input, []string) ([][]float32, error) { return nil, nil }
func (f inFlight) InFlight() (int, int)                                      { return f.texts, f.batch }
