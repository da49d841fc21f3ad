//go:build unix

package audit

import (
	"errors"
	"os"
	"syscall"
)

// lockState takes an exclusive lock on a run's matches file, held until
// the file is closed (or the process ends); busy reports that another
// process holds it.
func lockState(f *os.File) (busy bool, err error) {
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return true, nil
	}
	return false, err
}
