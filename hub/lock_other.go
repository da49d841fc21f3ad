//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package hub

import (
	"context"
	"os"
)

// Without flock only this process is serialized (by lockBlob's in-process
// lock); a concurrent Python download of the same blob is not.
func lockFile(context.Context, *os.File) error { return nil }

func unlockFile(*os.File) {}
