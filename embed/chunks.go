package embed

import (
	"context"
	"sync"

	"golang.org/x/sync/errgroup"
)

// InFlighter is an Embedder that can have many texts out at once (the
// HTTP backends, and Cache over one): InFlight is how many now (its batch
// size times its servers' requests in flight) and its batch size. A
// caller that feeds it in chunks keeps about twice that many texts
// submitted, in chunks no smaller than a batch, so the servers never wait
// for the next chunk (Chunks).
type InFlighter interface {
	InFlight() (texts, batch int)
}

// maxChunksInFlight bounds the chunks Chunks runs at once.
const maxChunksInFlight = 32

// Chunks calls fn for the consecutive chunks [lo, hi) of n items, size
// at a time. For an embedder that is not an InFlighter (a local encoder)
// the chunks run one after another; for one that is, chunks are at least
// a batch, and as many run at once as keep about twice its in-flight
// texts submitted, reckoned as each chunk starts (the adapter raises it
// while a run goes). The first error
// stops new chunks and is returned once the running ones end; fn sees a
// context cancelled by it.
func Chunks(ctx context.Context, e Embedder, n, size int, fn func(ctx context.Context, lo, hi int) error) error {
	size = max(size, 1)
	in, _ := e.(InFlighter)
	if in != nil {
		_, batch := in.InFlight()
		size = max(size, batch) // a chunk smaller than a batch would cut every batch short
	}
	depth := func() int {
		if in == nil {
			return 1
		}
		texts, _ := in.InFlight()
		if texts <= 0 {
			return 1 // a Cache over a local encoder
		}
		// Two at least: the next chunk is out while one drains.
		return min(maxChunksInFlight, max(2, (2*texts+size-1)/size))
	}
	// A failed chunk cancels gctx before it frees its place, so the place
	// it frees never starts another chunk (errgroup's own context is
	// cancelled only after the function and its defers return).
	gctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	var g errgroup.Group
	var mu sync.Mutex
	free := sync.NewCond(&mu)
	running := 0
	for lo := 0; lo < n; lo += size {
		mu.Lock()
		for running >= depth() && gctx.Err() == nil {
			free.Wait()
		}
		if gctx.Err() != nil {
			mu.Unlock()
			break
		}
		running++
		mu.Unlock()
		hi := min(lo+size, n)
		g.Go(func() error {
			defer func() {
				mu.Lock()
				running--
				free.Broadcast()
				mu.Unlock()
			}()
			err := fn(gctx, lo, hi)
			if err != nil {
				stop(err)
			}
			return err
		})
	}
	err := g.Wait()
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if gctx.Err() != nil {
		return context.Cause(gctx) // the first chunk to fail
	}
	return err
}
