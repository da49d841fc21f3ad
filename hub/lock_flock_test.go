//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package hub

import (
	"context"
	"errors"
	"os"
	"syscall"
	"testing"
	"time"
)

// Python's filelock takes flock on .locks/REPO/ETAG.lock; while another
// process holds it, we must wait rather than write the same blob.
func TestWaitsForForeignBlobLock(t *testing.T) {
	h, c, _ := setup(t)
	corpus := biologyFiles()[1]
	rc, _ := c.repoCache(bio)
	os.MkdirAll(rc.locks, 0o755)
	f, err := os.OpenFile(rc.lock(corpus.ETag()), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err = c.Snapshot(ctx, bio, "main", corpus.Path)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want to be still waiting for the lock", err)
	}
	if n := h.Count("cdn", "GET", ""); n != 0 {
		t.Fatalf("downloaded %d times while the lock was held", n)
	}

	syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	if _, err := c.Snapshot(context.Background(), bio, "main", corpus.Path); err != nil {
		t.Fatal(err)
	}
}
