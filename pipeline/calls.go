package pipeline

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/r2med/r2med/cache"
	"github.com/r2med/r2med/internal/fileio"
	"github.com/r2med/r2med/usage"
)

// calls accounts for a run's model calls: what they cost (the manifest's
// usage) and which cache entries they read or wrote (the run's
// cache.KeysFile, which `r2med cache export --manifest` reads).
//
// A stage kept on disk may be reused by a later run without a single
// call, so each kept stage keeps its own account beside its output
// (NAME.calls.json: usage and counts; NAME.cache-keys.tsv.gz: the
// entries), and a run that reuses the stage adds that account: its usage
// as cached (the run spent nothing on it, the pipeline still costs it)
// and its entries to the run's list, so that the list is what a replay
// of the whole run needs.
type calls struct {
	store *cache.Store
	meter *usage.Meter    // the run's
	rec   *cache.Recorder // the run's; nil without a store
	extra []cache.Ref     // entries used before the run: reused stages', interrupted attempts'
}

func newCalls(store *cache.Store) *calls {
	c := &calls{store: store, meter: &usage.Meter{}}
	if store != nil {
		c.rec = store.Record()
	}
	return c
}

// stop ends the run's recording.
func (c *calls) stop() {
	if c.rec != nil {
		c.rec.Stop()
	}
}

// keys are the entries the run used, its reused stages' included.
func (c *calls) keys() []cache.Ref {
	var refs []cache.Ref
	if c.rec != nil {
		refs = c.rec.Keys()
	}
	return append(refs, c.extra...)
}

// writeKeys writes the run's entries to dir/cache.KeysFile (a run
// without a cache writes none).
func (c *calls) writeKeys(dir string) error {
	if c.store == nil {
		return nil
	}
	return cache.WriteKeys(filepath.Join(dir, cache.KeysFile), dedupe(c.keys()))
}

func dedupe(refs []cache.Ref) []cache.Ref {
	seen := map[string]bool{}
	out := refs[:0:0]
	for _, r := range refs {
		k := r.Bucket + "\x00" + string(r.Key)
		if !seen[k] {
			seen[k] = true
			out = append(out, r)
		}
	}
	return out
}

// stageCalls is one stage's account while it runs.
type stageCalls struct {
	meter *usage.Meter
	rec   *cache.Recorder
	extra []cache.Ref // entries of an interrupted earlier attempt (partial)
}

// keys are the entries the stage used so far.
func (s *stageCalls) keys() []cache.Ref {
	var refs []cache.Ref
	if s.rec != nil {
		refs = s.rec.Keys()
	}
	return append(refs, s.extra...)
}

// begin starts a stage's account.
func (c *calls) begin() *stageCalls {
	s := &stageCalls{meter: &usage.Meter{}}
	if c.store != nil {
		s.rec = c.store.Record()
	}
	return s
}

// callFiles are the files that keep a stage's account, relative to the
// stages directory.
func callFiles(name string) []string {
	return []string{name + ".calls.json", name + ".cache-keys.tsv.gz"}
}

// stageAccount is NAME.calls.json.
type stageAccount struct {
	Usage  []usage.Line   `json:"usage"`
	Counts map[string]int `json:"counts,omitempty"`
}

// end closes a stage's account: its usage goes to the run's, and with
// dir set, the account is written beside the stage's output
// (callFiles), with counts the stage's manifest counts worth keeping.
func (c *calls) end(s *stageCalls, dir, name string, counts map[string]int) error {
	if s.rec != nil {
		s.rec.Stop()
	}
	lines := s.meter.Lines()
	c.meter.Merge(lines, false)
	c.extra = append(c.extra, s.extra...)
	if dir == "" {
		return nil
	}
	files := callFiles(name)
	if err := fileio.WriteAtomic(filepath.Join(dir, files[0]), func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(stageAccount{Usage: lines, Counts: counts})
	}); err != nil {
		return err
	}
	return cache.WriteKeys(filepath.Join(dir, files[1]), dedupe(s.keys()))
}

// reuse adds the account of a stage reused from dir and returns its
// counts.
func (c *calls) reuse(dir, name string) (map[string]int, error) {
	files := callFiles(name)
	data, err := os.ReadFile(filepath.Join(dir, files[0]))
	if err != nil {
		return nil, err
	}
	var a stageAccount
	if err := json.Unmarshal(data, &a); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, files[0]), err)
	}
	refs, err := cache.ReadKeys(filepath.Join(dir, files[1]))
	if err != nil {
		return nil, err
	}
	c.meter.Merge(a.Usage, true)
	c.extra = append(c.extra, refs...)
	return a.Counts, nil
}

// summary is the manifest's usage; a run that called no model has one
// too, of zeros: it costs nothing, which a leaderboard's cost columns and
// the report's quality-against-cost chart show (a manifest without usage
// is from before usage was recorded).
func (c *calls) summary(queries int, prices usage.Prices) *usage.Summary {
	s := c.meter.Summary(queries, prices)
	return &s
}

// partial keeps the account of a stage that resumes from a checkpoint
// (the rerank) beside it as it goes, query by query: the queries a
// resumed stage takes from its checkpoint make no calls, so without it
// the stage's usage and cache entries would miss those of the process
// that was interrupted, and a replay of the run would lack them.
// CHECKPOINT.calls.json holds the usage so far (rewritten after each
// query), CHECKPOINT.cache-keys.tsv.gz the entries (appended).
type partial struct {
	usagePath, keysPath string
	prior               []usage.Line
	priorKeys           []cache.Ref
	started             bool
	written             map[string]bool
}

func openPartial(checkpoint string) *partial {
	p := &partial{usagePath: checkpoint + ".calls.json", keysPath: checkpoint + ".cache-keys.tsv.gz", written: map[string]bool{}}
	if data, err := os.ReadFile(p.usagePath); err == nil {
		var a stageAccount
		if json.Unmarshal(data, &a) == nil {
			p.prior = a.Usage
		}
	}
	p.priorKeys, _ = cache.ReadKeys(p.keysPath)
	return p
}

// progress is called after each finished query, first with the queries
// resumed from the checkpoint: none means a fresh start, and the earlier
// account goes; some means the earlier account is this stage's too.
func (p *partial) progress(s *stageCalls, done int) error {
	if !p.started {
		p.started = true
		if done == 0 {
			p.prior, p.priorKeys = nil, nil
			if err := p.remove(); err != nil {
				return err
			}
		} else {
			s.meter.Merge(p.prior, false)
			s.extra = append(s.extra, p.priorKeys...)
			for _, r := range p.priorKeys {
				p.written[r.Bucket+"\x00"+string(r.Key)] = true
			}
		}
	}
	var fresh []cache.Ref
	if s.rec != nil {
		for _, r := range s.rec.Keys() {
			if k := r.Bucket + "\x00" + string(r.Key); !p.written[k] {
				p.written[k] = true
				fresh = append(fresh, r)
			}
		}
	}
	if len(fresh) > 0 {
		if err := cache.AppendKeys(p.keysPath, fresh); err != nil {
			return err
		}
	}
	return fileio.WriteAtomic(p.usagePath, func(w io.Writer) error {
		return json.NewEncoder(w).Encode(stageAccount{Usage: s.meter.Lines()})
	})
}

// remove deletes the account, once the stage's output holds it.
func (p *partial) remove() error {
	var errs []error
	for _, f := range []string{p.usagePath, p.keysPath} {
		if err := os.Remove(f); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
