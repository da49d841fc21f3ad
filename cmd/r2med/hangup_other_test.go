//go:build !unix

package main

import "testing"

// hangUp cannot signal here.
func hangUp(t *testing.T) bool {
	t.Log("no SIGHUP on this system: reload by signal not tested")
	return false
}
