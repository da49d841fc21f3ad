package hub

import (
	"context"
	"os"
	"path/filepath"
	"sync"
)

// inProcess serializes goroutines of this process on a lock path; the file
// lock then serializes processes. Both are needed where file locks are not
// available, and cost nothing where they are.
var inProcess sync.Map // lock path → chan struct{} (capacity 1)

// lockBlob takes the lock huggingface_hub takes before writing a blob, so a
// Python process and this one never write the same .incomplete file at once.
// It waits until ctx is done.
func lockBlob(ctx context.Context, path string) (unlock func(), err error) {
	v, _ := inProcess.LoadOrStore(path, make(chan struct{}, 1))
	sem := v.(chan struct{})
	select {
	case sem <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	release := func() { <-sem }
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		release()
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		release()
		return nil, err
	}
	if err := lockFile(ctx, f); err != nil {
		f.Close()
		release()
		return nil, err
	}
	return func() {
		unlockFile(f)
		f.Close()
		release()
	}, nil
}
