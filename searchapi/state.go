package searchapi

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"sync/atomic"
	"time"

	"github.com/r2med/r2med/analysis"
	"github.com/r2med/r2med/index"
	"github.com/r2med/r2med/retrieve"
)

// A Service answers from a state: the index files as last opened, the
// retrievers built on them and the corpora they share. A reload opens
// the files that changed, keeps the others, builds a new state and swaps
// it in; requests under way finish on the state they began with, which
// closes what only it holds when the last of them lets go. So an index
// file is rolled out by writing it elsewhere and renaming it over the
// served one: the old mapping stays whole until no request reads it.

type state struct {
	// slots holds one opened file per index file, in order; nil where
	// the file cannot be searched now (down says why).
	slots      []*loaded
	down       map[string]error // retriever name → why its file is down
	downFiles  map[int]string   // slot → the message, for comparing states
	retrievers []*retriever
	byName     map[string]*retriever
	corpora    []*corpus
	// problems are what /healthz reports: files kept from before because
	// their replacement cannot be opened (the first reloadOnly), sections
	// failing their checksums, files down.
	problems   []string
	reloadOnly int
	// refs counts the requests using the state, plus one while it is
	// the service's current state; at 0 it is closed.
	refs atomic.Int64
}

// acquire returns the current state, held until release; nil after
// Close (no request may start then).
func (s *Service) acquire() *state {
	for {
		st := s.cur.Load()
		if st == nil {
			return nil
		}
		// A state whose count fell to 0 was swapped out and closed;
		// the next Load sees its successor.
		if n := st.refs.Load(); n > 0 && st.refs.CompareAndSwap(n, n+1) {
			return st
		}
	}
}

func (st *state) release() {
	if st.refs.Add(-1) == 0 {
		for _, l := range st.slots {
			if l != nil {
				l.release()
			}
		}
	}
}

// assemble builds a state over the opened files (slots, nil for a file
// down), taking over their references. names lists, for each slot down,
// the retriever names its file had.
func (s *Service) assemble(slots []*loaded, down map[int]error, names map[int][]string, problems []string) (*state, error) {
	st := &state{slots: slots, down: map[string]error{}, downFiles: map[int]string{}, byName: map[string]*retriever{},
		problems: slices.Clone(problems), reloadOnly: len(problems)}
	st.refs.Store(1)
	for i, l := range slots {
		if l == nil {
			err := down[i]
			for _, n := range names[i] {
				st.down[n] = err
			}
			st.downFiles[i] = err.Error()
			st.problems = append(st.problems, err.Error())
			continue
		}
		if l.bad != nil {
			st.problems = append(st.problems, l.bad.Error())
		}
		c := st.corpusOf(l.ix, l.file.Name)
		for _, part := range l.parts {
			r := part
			r.corpus = c
			if o, dup := st.byName[r.name]; dup {
				return nil, fmt.Errorf("index %s: retriever name %q is taken by %s; name the file with NAME=PATH", l.file.Path, r.name, o.file.Path)
			}
			st.byName[r.name] = &r
			st.retrievers = append(st.retrievers, &r)
			if r.kind != "bm25" {
				continue
			}
			m := l.ix.Meta().BM25
			if def := retrieve.DefaultBM25(); c.lamer == nil && m.Analyzer == def.Analyzer && m.Params() == def.Params {
				c.lamer = &r
			}
			if c.terms == nil && m.Analyzer == analysis.DefaultName {
				c.terms = &r
			}
		}
	}
	for _, n := range s.defaults {
		if _, ok := st.byName[n]; !ok && st.down[n] == nil {
			return nil, fmt.Errorf("unknown retriever %q, a default; this service has %s", n, listNames(st))
		}
	}
	return st, nil
}

func listNames(st *state) string {
	var ns []string
	for _, r := range st.retrievers {
		ns = append(ns, r.name)
	}
	ns = append(ns, slices.Sorted(maps.Keys(st.down))...)
	return joinQuoted(ns)
}

// corpusOf finds the corpus an index was built from among those already
// in the state, or adds it.
func (st *state) corpusOf(ix *index.Index, name string) *corpus {
	m := ix.Meta()
	for _, c := range st.corpora {
		if c.digest == m.CorpusSHA256 {
			return c
		}
	}
	c := &corpus{name: name, digest: m.CorpusSHA256, task: task(ix), ix: ix}
	for _, id := range ix.IDs() {
		c.maxID = max(c.maxID, len(id))
	}
	st.corpora = append(st.corpora, c)
	return c
}

// unavailable is the answer to a request that needs a file being
// replaced: 503, to be retried shortly.
func unavailable(err error) error {
	return &Error{Status: http.StatusServiceUnavailable, Msg: err.Error(), RetryAfter: time.Second}
}

// Reload opens every index file again and swaps the service over to
// them — what serve-search does on SIGHUP. Requests under way finish on
// the files they began with. A file that cannot be opened now (a copy
// still being written) leaves its previous copy serving where that copy
// is whole (the new file was renamed over it), else its retrievers
// answer 503 until a later reload opens it; /healthz reports either, and
// so does the error returned.
func (s *Service) Reload(ctx context.Context) error { return s.refresh(ctx, true) }

// Watch reloads, until ctx ends, the index files that were replaced
// (renamed over), changed in place or could not be opened: every
// interval, and at once when a request finds a file changed.
func (s *Service) Watch(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-s.wake:
		}
		if s.stale() {
			s.refresh(ctx, false)
		}
	}
}

// poke asks Watch to look at the files now.
func (s *Service) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// stale reports whether a file of the current state should be opened
// again (false once the service is closed).
func (s *Service) stale() bool {
	st := s.acquire()
	if st == nil {
		return false
	}
	defer st.release()
	for _, l := range st.slots {
		if l == nil || l.ix.Replaced() || l.ix.Changed() != nil {
			return true
		}
	}
	return false
}

// refresh opens again the files that changed (all with force) and swaps
// in the state they make, unless nothing differs.
func (s *Service) refresh(ctx context.Context, force bool) error {
	s.reloadMu.Lock()
	defer s.reloadMu.Unlock()
	old := s.cur.Load()
	if old == nil {
		return errors.New("the service is closed")
	}
	slots := make([]*loaded, len(s.files))
	down := map[int]error{}
	names := map[int][]string{}
	var problems []string
	var errs []error
	swap := false
	for i, f := range s.files {
		prev := old.slots[i]
		whole := prev != nil && prev.ix.Changed() == nil
		if whole && !force && !prev.ix.Replaced() {
			prev.retain()
			slots[i] = prev
			continue
		}
		l, err := s.load(ctx, f)
		if err == nil {
			slots[i], swap = l, true
			if s.lastErr[f.Path] != "" || prev == nil || prev.ix.Changed() != nil || prev.ix.Replaced() || force {
				logf(s.opt.Env.Log, "reloaded index %s", f.Path)
			}
			delete(s.lastErr, f.Path)
			continue
		}
		errs = append(errs, err)
		if msg := err.Error(); s.lastErr[f.Path] != msg {
			logf(s.opt.Env.Log, "cannot reload index %s: %v", f.Path, err)
			s.lastErr[f.Path] = msg
		}
		if whole {
			prev.retain()
			slots[i] = prev
			problems = append(problems, fmt.Sprintf("%v; serving the copy opened before", err))
			continue
		}
		down[i] = err
		if prev != nil {
			for _, r := range prev.parts {
				names[i] = append(names[i], r.name)
			}
		} else {
			names[i] = old.namesDown(f)
		}
	}
	release := func() {
		for _, l := range slots {
			if l != nil {
				l.release()
			}
		}
	}
	if !swap && slices.Equal(slots, old.slots) && sameDown(old, down) && slices.Equal(problems, old.reloadProblems()) {
		release()
		return errors.Join(errs...)
	}
	st, err := s.assemble(slots, down, names, problems)
	if err != nil {
		release()
		logf(s.opt.Env.Log, "cannot reload: %v", err)
		return errors.Join(append(errs, err)...)
	}
	s.cur.Store(st)
	old.release()
	return errors.Join(errs...)
}

// namesDown are the retriever names a file that is down had in this
// state.
func (st *state) namesDown(f IndexFile) []string {
	var out []string
	for n, err := range st.down {
		if err != nil && (n == f.Name || n == f.Name+DenseSuffix) {
			out = append(out, n)
		}
	}
	if len(out) == 0 {
		out = []string{f.Name}
	}
	return out
}

func sameDown(st *state, down map[int]error) bool {
	if len(st.downFiles) != len(down) {
		return false
	}
	for i, err := range down {
		if st.downFiles[i] != err.Error() {
			return false
		}
	}
	return true
}

// reloadProblems are the problems refresh passed in (files kept from
// before), which come first.
func (st *state) reloadProblems() []string { return st.problems[:st.reloadOnly] }
