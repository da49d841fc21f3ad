package server

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"runtime"
	"slices"
	"sync"

	"golang.org/x/sync/semaphore"

	"github.com/r2med/r2med/leaderboard"
	"github.com/r2med/r2med/significance"
)

// Significance marks (?baseline=) are the viewer's costliest work: a
// paired randomization test per system and task, about a second of CPU
// over a dozen runs, the same answer every time for the same results
// (the test is seeded). So a viewer (one state of the results
// directory) works each table's marks out once, whoever asks first, and
// lays them on the table every later request builds; and the server
// works out at most MaxMarking tables at once, the others waiting their
// turn while their client waits (a client that leaves gives its turn
// up), so that requests for marks cannot take every core from the pages.

// MaxMarking bounds the tables whose marks are worked out at once.
var MaxMarking = int64(max(1, runtime.GOMAXPROCS(0)/2))

// MaxMarked bounds the tables whose marks a viewer keeps; beyond it the
// marks are worked out for the request and not kept.
const MaxMarked = 256

func newMarking() *semaphore.Weighted { return semaphore.NewWeighted(MaxMarking) }

// marked is a table's marks against a baseline, worked out once (done
// closed when they are).
type marked struct {
	done     chan struct{}
	err      error
	ids      []string              // the rows' systems, in order
	cells    [][]leaderboard.Score // per row, Scores then Other
	baseline string
	test     string
	notes    []string
}

// marks keeps a viewer's marked tables by their options and baseline.
type marks struct {
	mu     sync.Mutex
	tables map[string]*marked
	worked int // tables worked out, kept or not (for tests)
}

// markTable marks t (built with opt) against the system b as
// leaderboard.MarkAgainst does, and returns the notes on systems not
// tested.
func (s *viewer) markTable(ctx context.Context, t *leaderboard.Table, opt leaderboard.Options, b string) ([]string, error) {
	key := fmt.Sprintf("%#v\x00%s", opt, b)
	s.marks.mu.Lock()
	m, ok := s.marks.tables[key]
	if !ok {
		m = &marked{done: make(chan struct{})}
		if len(s.marks.tables) < MaxMarked {
			if s.marks.tables == nil {
				s.marks.tables = map[string]*marked{}
			}
			s.marks.tables[key] = m
		}
	}
	s.marks.mu.Unlock()
	if !ok {
		s.work(ctx, m, t, b, key)
		if m.err != nil {
			return nil, m.err
		}
	}
	select {
	case <-m.done:
	case <-ctx.Done():
		return nil, &httpError{http.StatusServiceUnavailable, "the significance marks of this table are being worked out; retry in a moment"}
	}
	if m.err != nil {
		return nil, m.err
	}
	if !m.lay(t) {
		return nil, fmt.Errorf("the marks kept for this table do not fit it (rows %d, kept %d)", len(t.Rows), len(m.ids))
	}
	return m.notes, nil
}

// work works m out on t, in turn with the server's other tables; a
// request that leaves before its turn drops m, so the next one works it
// out.
func (s *viewer) work(ctx context.Context, m *marked, t *leaderboard.Table, b, key string) {
	defer close(m.done)
	if err := s.marking.Acquire(ctx, 1); err != nil {
		s.marks.mu.Lock()
		if s.marks.tables[key] == m {
			delete(s.marks.tables, key)
		}
		s.marks.mu.Unlock()
		m.err = &httpError{http.StatusServiceUnavailable, fmt.Sprintf("the viewer works out at most %d tables of significance marks at once; retry in a moment", MaxMarking)}
		return
	}
	defer s.marking.Release(1)
	s.marks.mu.Lock()
	s.marks.worked++
	s.marks.mu.Unlock()
	base, err := s.data.OursSystem(b)
	if err != nil {
		m.err = badRequest("baseline: %v", err)
		return
	}
	// The results are worked out for every request that asks, so they
	// are not the asking request's to cancel.
	untested, err := t.MarkAgainst(base, s.data.PerQueryFunc(context.WithoutCancel(ctx), t.Metric.Key), significance.Options{})
	if err != nil {
		m.err = badRequest("baseline: %v", err)
		return
	}
	for _, name := range slices.Sorted(maps.Keys(untested)) {
		m.notes = append(m.notes, fmt.Sprintf("%s not tested against %s: %s", name, base.Name, untested[name]))
	}
	m.baseline, m.test = t.Baseline, t.Test
	for _, r := range t.Rows {
		m.ids = append(m.ids, r.System.ID)
		m.cells = append(m.cells, append(slices.Clone(r.Scores), r.Other...))
	}
}

// lay puts m's marks on t, a table built again with m's options from the
// same results; false if t's rows are not m's.
func (m *marked) lay(t *leaderboard.Table) bool {
	if len(t.Rows) != len(m.ids) {
		return false
	}
	for i := range t.Rows {
		r := &t.Rows[i]
		if r.System.ID != m.ids[i] || len(r.Scores)+len(r.Other) != len(m.cells[i]) {
			return false
		}
	}
	for i := range t.Rows {
		r := &t.Rows[i]
		for j, c := range m.cells[i] {
			cell := &r.Scores
			k := j
			if j >= len(r.Scores) {
				cell, k = &r.Other, j-len(r.Scores)
			}
			(*cell)[k].Mark, (*cell)[k].P = c.Mark, c.P
		}
	}
	t.Baseline, t.Test = m.baseline, m.test
	return true
}
