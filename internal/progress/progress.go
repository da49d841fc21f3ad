// Package progress draws progress bars on stderr for long stages, and
// nothing at all when stderr is not a terminal (CI logs, pipes) or the user
// asked for quiet, so machine-read output is never interleaved with bars.
package progress

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// Bar counts work done. The zero value and nil are silent.
type Bar struct {
	mu  sync.Mutex
	bar *progressbar.ProgressBar
	// A resumed bar (Factory.Resume) starts at resumed items done and
	// says itself how long is left, from this run's items only.
	resumed, added, total int
	desc                  string
	start                 time.Time
	now                   func() time.Time
}

// Factory makes bars, or silent ones.
type Factory struct {
	Out     io.Writer
	Enabled bool
	now     func() time.Time // the clock; nil is time.Now (tests set it)
}

// throttle is the least time between two redraws of a bar.
var throttle = 100 * time.Millisecond

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

// Resume starts a bar counting total items of which done were finished
// by an earlier, interrupted run (read back from a checkpoint or a cache).
// They show as done from the start, but the time left is estimated from
// the items this run does, so a resumed run does not look instantly fast
// and then stall; the description says how many were resumed.
func (f Factory) Resume(total, done int, desc string) *Bar {
	if done <= 0 {
		return f.New(total, desc)
	}
	if !f.Enabled || f.Out == nil {
		return &Bar{}
	}
	now := f.now
	if now == nil {
		now = time.Now
	}
	b := &Bar{resumed: done, total: total, desc: desc, start: now(), now: now}
	opts := append(f.common(b.describe()), progressbar.OptionShowCount(),
		// The library would count the resumed items in its rate.
		progressbar.OptionSetPredictTime(false), progressbar.OptionSetRenderBlankState(false))
	b.bar = progressbar.NewOptions(total, opts...)
	b.bar.Add(done)
	return b
}

// describe is a resumed bar's description: what was resumed and, once an
// item of this run is done, the time left at this run's pace.
func (b *Bar) describe() string {
	s := fmt.Sprintf("%s (%d resumed", b.desc, b.resumed)
	if b.added > 0 {
		elapsed := b.now().Sub(b.start)
		left := time.Duration(float64(elapsed) / float64(b.added) * float64(max(b.total-b.resumed-b.added, 0)))
		s += ", " + left.Round(time.Second).String() + " left"
	}
	return s + ")"
}

func (f Factory) common(desc string) []progressbar.Option {
	// A fixed width: terminals that report no size (pseudo-terminals in CI
	// wrappers) would otherwise get an empty bar.
	return []progressbar.Option{
		progressbar.OptionSetWriter(f.Out),
		progressbar.OptionSetDescription(desc),
		progressbar.OptionSetWidth(30),
		progressbar.OptionSetRenderBlankState(true), // show the bar at once, not after the first throttle tick
		progressbar.OptionThrottle(throttle),
		progressbar.OptionClearOnFinish(),
		progressbar.OptionSetPredictTime(true),
	}
}

// Counter draws progress reported as running totals, the way resumable
// jobs report it (rerank.Job.Progress): the first Report gives the items
// an earlier run finished, and the bar starts there (Factory.Resume).
type Counter struct {
	f    Factory
	desc string
	mu   sync.Mutex
	bar  *Bar
	last int
}

// Counter returns a Counter for bars described by desc.
func (f Factory) Counter(desc string) *Counter { return &Counter{f: f, desc: desc} }

// Report records done items out of total; safe for concurrent use.
func (c *Counter) Report(done, total int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.bar == nil {
		c.bar, c.last = c.f.Resume(total, done, c.desc), done
		return
	}
	c.bar.Add(done - c.last)
	c.last = done
}

// Done finishes and clears the bar, if one was started.
func (c *Counter) Done() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.bar.Done()
}

// Add records n units done; safe for concurrent use.
func (b *Bar) Add(n int) {
	if b == nil || b.bar == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.resumed == 0 {
		b.bar.Add(n)
		return
	}
	b.added += n
	b.bar.Add(n)
	b.bar.Describe(b.describe())
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
