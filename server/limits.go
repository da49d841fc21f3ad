package server

import (
	"fmt"
	"net/http"

	"golang.org/x/sync/semaphore"
)

// Bounds of the drill-down's work (/query and /api/query), the one page
// whose size a request chooses: k hits of every system with a run on the
// task, each with its snippet. A page is made whole in memory and held
// until the client has read it, so slow readers hold what they asked
// for. Variables so that tests can lower them.
var (
	// MaxPageBytes bounds one drill-down: a request whose estimate is
	// larger is refused (400) naming the k that fits.
	MaxPageBytes int64 = 32 << 20
	// MaxInFlightBytes bounds the estimated bytes of the drill-downs
	// being made or sent at once; a request that does not fit is
	// refused (503 with Retry-After) rather than queued. The memory
	// they hold is about three times their bytes (the page's data, its
	// rendering, the collector's headroom). 40 drill-downs of 12
	// NFCorpus runs at k=1000 at once peaked at 2.3 GB unbounded; with
	// this bound at 0.47 GB, 37 of them answered 503.
	MaxInFlightBytes int64 = 64 << 20
)

// hitBytes is a hit's share of a drill-down, estimated: its snippet
// twice over (highlight markup, JSON escapes) and its row. A page of
// NFCorpus hits measures about 700 bytes a hit.
const hitBytes = 2*SnippetBytes + 512

// pageEstimate is the drill-down of qid at depth k in bytes, roughly:
// the hits the systems' runs hold for it (at most k each) and the
// relevant documents.
func (s *viewer) pageEstimate(task, qid string, k int) (est int64, hits int) {
	for _, sys := range s.taskSystems(task) {
		if run, err := s.data.RunFile(sys.ID, task); err == nil {
			hits += min(k, len(run[qid]))
		}
	}
	return int64(hits+len(s.taskSystems(task))+16) * hitBytes, hits
}

// admit takes the drill-down's estimated bytes from the server's
// capacity and returns what gives them back, or the error to answer:
// 400 when the page alone is over MaxPageBytes, 503 when the server is
// busy with other pages.
func (s *viewer) admit(task, qid string, k int) (func(), error) {
	est, hits := s.pageEstimate(task, qid, k)
	if est > MaxPageBytes {
		systems := len(s.taskSystems(task))
		fit := max(1, int(MaxPageBytes/hitBytes)/max(systems, 1)-1)
		return nil, badRequest("k=%d: the drill-down of %s would hold %d hits of %d systems with their snippets, about %.0f MiB; this viewer makes pages of at most %.0f MiB: ask for k=%d or less",
			k, qid, hits, systems, float64(est)/(1<<20), float64(MaxPageBytes)/(1<<20), fit)
	}
	w := min(est, MaxInFlightBytes)
	if !s.inflight.TryAcquire(w) {
		return nil, &httpError{http.StatusServiceUnavailable, fmt.Sprintf("the viewer is busy sending other large pages (%.0f MiB at once at most); retry in a moment, or ask for a smaller k", float64(MaxInFlightBytes)/(1<<20))}
	}
	return func() { s.inflight.Release(w) }, nil
}

func newInflight() *semaphore.Weighted { return semaphore.NewWeighted(MaxInFlightBytes) }
