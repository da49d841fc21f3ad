//go:build !unix

package fileio

import "os"

// lock is a no-op where there is no flock.
func lock(*os.File) {}

// renameLocked closes the temporary file, then moves it into place (an
// open file cannot be renamed everywhere).
func renameLocked(tmp *os.File, path string) error {
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// InUse cannot tell here; every temporary file counts as left over.
func InUse(string) bool { return false }
