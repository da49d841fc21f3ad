package progress

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestBarsDrawOnlyWhenEnabled(t *testing.T) {
	var on, off bytes.Buffer
	for _, f := range []Factory{{Out: &on, Enabled: true}, {Out: &off}} {
		b := f.New(10, "indexing demo")
		b.Add(10)
		b.Done()
		by := f.Bytes(2048, "corpus.jsonl")
		by.Add(2048)
		by.Done()
	}
	if off.Len() != 0 {
		t.Fatalf("a disabled factory wrote %q", off.String())
	}
	out := on.String()
	for _, want := range []string{"indexing demo", "(0/10)", "corpus.jsonl", "2.0 kB"} {
		if !strings.Contains(out, want) {
			t.Errorf("bar output lacks %q:\n%q", want, out)
		}
	}
}

func TestNilAndZeroBarsAreSilent(t *testing.T) {
	var b *Bar
	b.Add(1)
	b.Done()
	(&Bar{}).Add(1)
	if f := Auto(true); f.Enabled {
		t.Fatal("quiet factory is enabled")
	}
}

// A resumed bar starts at the resumed count, and its time left comes from
// this run's pace alone: 90 items read back and one done in 10s leave 9
// items, 1m30s, not the fraction of a second a rate over 91 items gives.
func TestResumedBarCountsOnlyThisRunsPace(t *testing.T) {
	defer func(d time.Duration) { throttle = d }(throttle)
	throttle = 0
	clock := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	var out bytes.Buffer
	f := Factory{Out: &out, Enabled: true, now: func() time.Time { return clock }}
	c := f.Counter("reranking demo")
	c.Report(90, 100) // the checkpoint's queries
	if s := out.String(); !strings.Contains(s, "reranking demo (90 resumed)") || !strings.Contains(s, "(90/100)") {
		t.Fatalf("resumed bar does not start at 90 of 100:\n%q", s)
	}
	clock = clock.Add(10 * time.Second)
	c.Report(91, 100)
	s := out.String()
	if !strings.Contains(s, "reranking demo (90 resumed, 1m30s left)") || !strings.Contains(s, "(91/100)") {
		t.Errorf("after one item in 10s, want 91/100 and 1m30s left:\n%q", s)
	}
	if strings.Contains(s, "[") {
		t.Errorf("the library's own time estimate, which counts resumed items, is shown:\n%q", s)
	}
	c.Done()

	// Nothing resumed: an ordinary bar, with the library's estimate.
	out.Reset()
	c = f.Counter("indexing")
	c.Report(0, 10)
	c.Report(5, 10)
	c.Done()
	if s := out.String(); strings.Contains(s, "resumed") || !strings.Contains(s, "(5/10)") {
		t.Errorf("fresh bar:\n%q", s)
	}
	// Silent factories and an unstarted counter stay silent.
	(Factory{}).Counter("x").Report(3, 4)
	Factory{}.Counter("x").Done()
}

// A download going on from 900 kB left on disk: those show as done, and
// the rate and time left come from this run's bytes alone: 10 kB in 10s
// is 1.0 kB/s with 90 kB (1m30s) to go, not the 91 kB/s that counting the
// bytes on disk as transferred gives.
func TestResumedBytesBarRatesOnlyThisRunsBytes(t *testing.T) {
	defer func(d time.Duration) { throttle = d }(throttle)
	throttle = 0
	clock := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	var out lockedBuffer // a bar of unknown total renders from its own goroutine too
	f := Factory{Out: &out, Enabled: true, now: func() time.Time { return clock }}
	b := f.ResumeBytes(1_000_000, 900_000, "corpus.jsonl")
	clock = clock.Add(10 * time.Second)
	b.Add(10_000)
	b.Done()
	s := out.String()
	for _, want := range []string{"corpus.jsonl (900.0 kB/1.0 MB, 900.0 kB resumed)", "corpus.jsonl (910.0 kB/1.0 MB, 900.0 kB resumed, 1.0 kB/s, 1m30s left)"} {
		if !strings.Contains(s, want) {
			t.Errorf("bar output lacks %q:\n%q", want, s)
		}
	}
	if strings.Contains(s, "91.0 kB/s") || strings.Contains(s, "[") {
		t.Errorf("a rate or time that counts the resumed bytes is shown:\n%q", s)
	}
	// An unknown total: sizes and rate, no time left.
	out.Reset()
	b = f.ResumeBytes(-1, 2000, "blob")
	clock = clock.Add(time.Second)
	b.Add(3000)
	if s := out.String(); !strings.Contains(s, "blob (5.0 kB, 2.0 kB resumed, 3.0 kB/s)") {
		t.Errorf("unknown total:\n%q", s)
	}
	b.Done()
	// Nothing on disk: an ordinary byte bar; silent factories stay silent.
	out.Reset()
	f.ResumeBytes(2048, 0, "fresh").Done()
	if s := out.String(); strings.Contains(s, "resumed") || !strings.Contains(s, "fresh") {
		t.Errorf("fresh byte bar:\n%q", s)
	}
	Factory{}.ResumeBytes(10, 5, "x").Add(1)
}

// A download that must start over (the server ignored Range and sends the
// whole file): Restart puts the bar back at zero, the bytes resumed or
// received before no longer count, and the rate is this attempt's alone;
// a plain bar restarts at zero too, and nil or silent bars ignore it.
func TestRestartedBarStartsAgain(t *testing.T) {
	defer func(d time.Duration) { throttle = d }(throttle)
	throttle = 0
	clock := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	var out lockedBuffer
	f := Factory{Out: &out, Enabled: true, now: func() time.Time { return clock }}
	b := f.ResumeBytes(1_000_000, 900_000, "corpus.jsonl")
	clock = clock.Add(10 * time.Second)
	b.Add(10_000)
	b.Restart()
	clock = clock.Add(2 * time.Second)
	b.Add(4_000)
	s := out.String()
	for _, want := range []string{"corpus.jsonl (0 B/1.0 MB, 0 B resumed)", "corpus.jsonl (4.0 kB/1.0 MB, 0 B resumed, 2.0 kB/s, 8m18s left)"} {
		if !strings.Contains(s, want) {
			t.Errorf("restarted bar lacks %q:\n%q", want, s)
		}
	}
	b.Done()

	out.Reset()
	p := f.Bytes(1000, "plain")
	p.Add(600)
	p.Restart()
	p.Add(100)
	if got := p.bar.State().CurrentNum; got != 100 {
		t.Errorf("plain bar after Restart and 100 bytes: %d done, want 100", got)
	}
	p.Done()
	var nilBar *Bar
	nilBar.Restart()
	Factory{}.ResumeBytes(10, 5, "x").Restart()
}

// lockedBuffer is a bytes.Buffer safe for the writes of a bar's own
// rendering goroutine (a spinner's) beside the test's.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func (b *lockedBuffer) Reset() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf.Reset()
}

// TestHumanBytesRoundsIntoTheNextUnit: a size that rounds to 1000 of a
// unit is 1.0 of the next (999999 bytes is 1.0 MB, not "1000.0 kB").
func TestHumanBytesRoundsIntoTheNextUnit(t *testing.T) {
	for n, want := range map[int64]string{
		0: "0 B", 999: "999 B", 1000: "1.0 kB", 999949: "999.9 kB", 999950: "1.0 MB", 999999: "1.0 MB", 1500000: "1.5 MB",
	} {
		if got := humanBytes(n); got != want {
			t.Errorf("humanBytes(%d) = %q, want %q", n, got, want)
		}
	}
}
