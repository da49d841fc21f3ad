//go:build unix

package fileio

import (
	"errors"
	"os"
	"syscall"
)

// lock takes an exclusive flock on a temporary file being written; it is
// released when the file is closed (or its process ends).
func lock(f *os.File) { syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) }

// renameLocked moves the written temporary file into place while it is
// still open, and so locked, then closes it: a sweep never sees it
// unlocked under its temporary name.
func renameLocked(tmp *os.File, path string) error {
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	return tmp.Close()
}

// InUse reports whether a live process holds the lock WriteAtomic takes on
// its temporary files: such a file is being written, not left over.
func InUse(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	return errors.Is(err, syscall.EWOULDBLOCK)
}
