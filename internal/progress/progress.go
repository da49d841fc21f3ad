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
	// A resumed bar (Factory.Resume, Factory.ResumeBytes) starts at
	// resumed units done and says itself how long is left (and, counting
	// bytes, how fast it goes), from this run's units only.
	resumed, added, total int64
	self                  bool // the bar describes its own rate and time left (resumed bars)
	bytes                 bool
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
	return f.resume(int64(total), int64(done), false, desc)
}

// ResumeBytes is Resume for a bar counting bytes: a download that goes on
// from the bytes an earlier attempt left on disk. Those show as done, and
// the transfer rate and time left come from this run's bytes alone
// (progressbar's own rate would count the bytes on disk as transferred in
// the first instant). A total below zero is unknown.
func (f Factory) ResumeBytes(total, done int64, desc string) *Bar {
	if done <= 0 {
		return f.Bytes(total, desc)
	}
	return f.resume(total, done, true, desc)
}

func (f Factory) resume(total, done int64, bytes bool, desc string) *Bar {
	if !f.Enabled || f.Out == nil {
		return &Bar{}
	}
	now := f.now
	if now == nil {
		now = time.Now
	}
	b := &Bar{resumed: done, total: total, self: true, bytes: bytes, desc: desc, start: now(), now: now}
	// The library would count the resumed units in its rate and time
	// left, so the bar says both itself (describe); counting bytes, it
	// also gives the sizes, since the library's byte count comes with its
	// rate.
	opts := append(f.common(b.describe()), progressbar.OptionSetPredictTime(false), progressbar.OptionSetRenderBlankState(false))
	if !bytes {
		opts = append(opts, progressbar.OptionShowCount())
	}
	b.bar = progressbar.NewOptions64(total, opts...)
	b.bar.Add64(done)
	return b
}

// describe is a resumed bar's description: what was resumed and, once a
// unit of this run is done, the rate (bytes) and the time left at this
// run's pace.
func (b *Bar) describe() string {
	if !b.bytes {
		s := fmt.Sprintf("%s (%d resumed", b.desc, b.resumed)
		if b.added > 0 {
			s += ", " + b.left().String() + " left"
		}
		return s + ")"
	}
	s := b.desc + " (" + humanBytes(b.resumed+b.added)
	if b.total >= 0 {
		s += "/" + humanBytes(b.total)
	}
	s += ", " + humanBytes(b.resumed) + " resumed"
	if b.added > 0 {
		if secs := b.now().Sub(b.start).Seconds(); secs > 0 {
			s += ", " + humanBytes(int64(float64(b.added)/secs)) + "/s"
		}
		if b.total >= 0 {
			s += ", " + b.left().String() + " left"
		}
	}
	return s + ")"
}

// left is the time the rest takes at this run's pace.
func (b *Bar) left() time.Duration {
	elapsed := b.now().Sub(b.start)
	return time.Duration(float64(elapsed) / float64(b.added) * float64(max(b.total-b.resumed-b.added, 0))).Round(time.Second)
}

// humanBytes writes n in SI units, as progressbar's byte counts do.
func humanBytes(n int64) string {
	const unit = 1000
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	// The unit is chosen after rounding: 999999 bytes is 1.0 MB, not
	// 1000.0 kB.
	v, i := float64(n)/unit, 0
	for i < 5 && (v >= unit || fmt.Sprintf("%.1f", v) == "1000.0") {
		v /= unit
		i++
	}
	return fmt.Sprintf("%.1f %cB", v, "kMGTPE"[i])
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

// Describe replaces the bar's description (a rate the caller measures:
// "embedding documents (812 docs/s, 190.0k estimated tokens/s)"); safe for
// concurrent use. A resumed bar keeps describing its own progress.
func (b *Bar) Describe(desc string) {
	if b == nil || b.bar == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.self {
		b.desc = desc
		b.bar.Describe(b.describe())
		return
	}
	b.bar.Describe(desc)
}

// Add records n units done; safe for concurrent use.
func (b *Bar) Add(n int) {
	if b == nil || b.bar == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.self {
		b.bar.Add(n)
		return
	}
	b.added += int64(n)
	b.bar.Add(n)
	b.bar.Describe(b.describe())
}

// Restart sets the bar back to nothing done, as when a download must
// start over (a server that ignores a Range request sends the whole file
// again): what was done, resumed or not, no longer counts, and the rate
// and time left start afresh.
func (b *Bar) Restart() {
	if b == nil || b.bar == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.bar.Reset()
	if b.self {
		b.resumed, b.added, b.start = 0, 0, b.now()
		b.bar.Describe(b.describe())
	}
	b.bar.RenderBlank() // at once, past the throttle: starting over is news
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
