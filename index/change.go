package index

import (
	"errors"
	"fmt"
	"os"
	"time"
)

// A mapped file is only as good as the bytes under it. An index file
// replaced by rename (written elsewhere, then moved over the old name)
// leaves the open Index intact: the mapping holds the old inode, which
// lives on until it is closed. A file overwritten or truncated in place
// changes under the mapping: its pages show the new bytes (wrong hits
// from arrays that no longer agree), and pages past a new, shorter end
// fault (SIGBUS). Changed and Replaced tell the two apart from the file's
// identity — device, inode, size, modification and change time — as Open
// saw it; Guard turns a fault into an error.

// ErrChanged is the error (errors.Is) of an index whose file was
// overwritten or truncated in place while it was open, and of a read
// that faulted on its mapping.
var ErrChanged = errors.New("index file changed in place while open")

// fileID is what identifies a file's version without reading it.
type fileID struct {
	dev, ino     uint64
	size         int64
	mtime, ctime time.Time
	nlink        uint64 // 0 where unknown
}

// sameContent reports whether the file of an open descriptor, once id,
// still holds what it held: size and modification time, and the change
// time unless the file has since been unlinked (renamed over or
// removed) or moved away from its path (mv live.idx old.idx), which
// change it without touching the content. The change time catches a
// copy that restores the modification time (cp -p); it moves on chmod
// and ln too, which then count as changes.
func (id fileID) sameContent(now fileID, movedAway func() bool) bool {
	if id.size != now.size || !id.mtime.Equal(now.mtime) {
		return false
	}
	if id.ctime.Equal(now.ctime) || id.nlink > 0 && now.nlink == 0 {
		return true
	}
	return movedAway != nil && movedAway()
}

// movedAway reports whether the index's path no longer names its file
// (renamed elsewhere, removed, or another file in its place): the
// change time a rename sets is then no sign of new content.
func (ix *Index) movedAway() bool {
	fi, err := os.Stat(ix.path)
	if err != nil {
		return true
	}
	now := idOf(fi)
	return now.dev != ix.id.dev || now.ino != ix.id.ino
}

func idOf(fi os.FileInfo) fileID {
	id := fileID{size: fi.Size(), mtime: fi.ModTime()}
	sysID(fi, &id)
	return id
}

// Changed returns an error wrapping ErrChanged when the open file has
// been written, truncated or had its times set since Open (one fstat, no
// read), and nil when it has not or when the index was read into memory
// (Options.ReadAll), which no change can reach. A changed Index must not
// be used any more: close it and open the file again once it is whole.
func (ix *Index) Changed() error {
	if ix.file == nil {
		return nil
	}
	if ix.changed.Load() {
		return ix.changedErr()
	}
	fi, err := ix.file.Stat()
	if err != nil {
		return fmt.Errorf("index %s: %w", ix.path, err)
	}
	if !ix.id.sameContent(idOf(fi), ix.movedAway) {
		ix.changed.Store(true)
		return ix.changedErr()
	}
	return nil
}

func (ix *Index) changedErr() error {
	return fmt.Errorf("index %s: %w (overwritten or truncated under the running service); write new index files elsewhere and rename them over the old ones", ix.path, ErrChanged)
}

// Replaced reports whether the path the index was opened from now names
// another file (renamed over it, or removed) or the same file changed:
// either way, opening the path again gives another index. It costs one
// stat.
func (ix *Index) Replaced() bool {
	fi, err := os.Stat(ix.path)
	if err != nil {
		return true
	}
	now := idOf(fi)
	return now.dev != ix.id.dev || now.ino != ix.id.ino || !ix.id.sameContent(now, nil)
}
