package analysis

import (
	"strings"
	"sync"
	"sync/atomic"
)

// memo is a bounded, concurrent token → filtered-term cache tuned for a
// Zipfian stream: reads vastly outnumber writes and soon almost all hit.
// Readers look only at an immutable snapshot map behind an atomic pointer,
// so a hit costs one ordinary map lookup and no shared-memory writes (a
// mutex or sync.Map there showed up as half the analyzer's time). Writers
// collect new entries under a mutex and publish a merged snapshot whenever
// the pending set reaches a quarter of it; the copying that costs is
// amortised to a constant per entry.
type memo struct {
	max     int
	snap    atomic.Pointer[map[string]memoEntry]
	mu      sync.Mutex
	pending map[string]memoEntry
	size    int // len(*snap) + len(pending), under mu
	repeats int // misses on pending entries since the last publication
	full    atomic.Bool
}

type memoEntry struct {
	term string
	keep bool
}

func (m *memo) get(tok string) (memoEntry, bool) {
	if s := m.snap.Load(); s != nil {
		e, ok := (*s)[tok]
		return e, ok
	}
	return memoEntry{}, false
}

func (m *memo) put(tok, term string, keep bool) {
	if m.full.Load() {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var snap map[string]memoEntry
	if s := m.snap.Load(); s != nil {
		snap = *s
	}
	if _, ok := snap[tok]; ok {
		return
	}
	if _, ok := m.pending[tok]; ok {
		// Publishing also when pending entries keep being asked for makes
		// a stream that has stopped bringing new tokens reach all-hits.
		m.repeats++
		m.publishIfDue(snap)
		return
	}
	if m.pending == nil {
		m.pending = make(map[string]memoEntry)
	}
	// Tokens are substrings of whole documents; the memo must own copies
	// or it would keep every document it ever saw alive.
	key := strings.Clone(tok)
	val := key
	if term != tok {
		val = strings.Clone(term)
	}
	m.pending[key] = memoEntry{val, keep}
	m.size++
	if m.size >= m.max {
		m.full.Store(true)
	}
	m.publishIfDue(snap)
}

// publishIfDue replaces the snapshot with snap+pending once the pending work
// (new entries plus recomputations they would have saved) reaches a quarter
// of the snapshot, so the copying stays proportional to the work saved.
// The final publication happens when the memo fills up. Callers hold mu.
func (m *memo) publishIfDue(snap map[string]memoEntry) {
	if len(m.pending)+m.repeats < max(len(snap)/4, 256) && !m.full.Load() {
		return
	}
	merged := make(map[string]memoEntry, len(snap)+len(m.pending))
	for k, v := range snap {
		merged[k] = v
	}
	for k, v := range m.pending {
		merged[k] = v
	}
	m.snap.Store(&merged)
	m.pending = nil
	m.repeats = 0
}
