//go:build !unix

package index

import "time"

func cpuTime() time.Duration { return 0 }
