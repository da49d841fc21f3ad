//go:build unix

package main

import (
	"os"
	"syscall"
	"testing"
)

// hangUp sends this process SIGHUP (what reloads serve-search); a
// serve-search running in it must be listening.
func hangUp(t *testing.T) bool {
	t.Helper()
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	return true
}
