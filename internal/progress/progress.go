// Package progress draws progress bars on stderr for long stages, and
// nothing at all when stderr is not a terminal (CI logs, pipes) or the user
// asked for quiet, so machine-read output is never interleaved with bars.
package progress

import (
	"io"
	"os"
	"sync"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// Bar counts work done. The zero value and nil are silent.
type Bar struct {
	mu  sync.Mutex
	bar *progressbar.ProgressBar
}

// Factory makes bars, or silent ones.
type Factory struct {
	Out     io.Writer
	Enabled bool
}

// Auto enables bars when stderr is a terminal and quiet is false.
func Auto(quiet bool) Factory {
	return Factory{Out: os.Stderr, Enabled: !quiet && term.IsTerminal(int(os.Stderr.Fd()))}
}

// New starts a bar counting total items (documents, queries) with a
// description.
func (f Factory) New(total int, desc string) *Bar {
	if !f.Enabled || f.Out == nil {
		return &Bar{}
	}
	return &Bar{bar: progressbar.NewOptions(total, append(f.common(desc), progressbar.OptionShowCount())...)}
}

// Bytes starts a bar counting total bytes (a download), showing sizes and
// the transfer rate.
func (f Factory) Bytes(total int64, desc string) *Bar {
	if !f.Enabled || f.Out == nil {
		return &Bar{}
	}
	return &Bar{bar: progressbar.NewOptions64(total, append(f.common(desc), progressbar.OptionShowBytes(true), progressbar.OptionShowCount())...)}
}

func (f Factory) common(desc string) []progressbar.Option {
	// A fixed width: terminals that report no size (pseudo-terminals in CI
	// wrappers) would otherwise get an empty bar.
	return []progressbar.Option{
		progressbar.OptionSetWriter(f.Out),
		progressbar.OptionSetDescription(desc),
		progressbar.OptionSetWidth(30),
		progressbar.OptionSetRenderBlankState(true), // show the bar at once, not after the first throttle tick
		progressbar.OptionThrottle(100_000_000),
		progressbar.OptionClearOnFinish(),
		progressbar.OptionSetPredictTime(true),
	}
}

// Add records n units done; safe for concurrent use.
func (b *Bar) Add(n int) {
	if b == nil || b.bar == nil {
		return
	}
	b.mu.Lock()
	b.bar.Add(n)
	b.mu.Unlock()
}

// Done finishes and clears the bar.
func (b *Bar) Done() {
	if b == nil || b.bar == nil {
		return
	}
	b.mu.Lock()
	b.bar.Finish()
	b.mu.Unlock()
}
