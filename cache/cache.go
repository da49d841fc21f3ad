// Package cache is a content-addressed store on disk for results that are
// expensive to recompute and safe to share: embeddings, LLM generations,
// reranker scores. One store serves every run, task and query-expansion
// variant, so a text embedded once by one model is never embedded again.
//
// Entries live in buckets named KIND/LABEL: the kind says what the values
// are ("embed", "generate", "rerank") and the label who made them (a model
// id), so `r2med cache stats` can report per model and `r2med cache prune
// --model M` can drop one model's entries at once. Keys are hashes (Key)
// of everything that determines the value; what the key does not cover,
// the cache cannot tell apart.
//
// Each value carries a small header with its format version and write
// time, which lets Prune drop entries older than a date.
//
// The store is one bbolt file, DIR/cache.db. bbolt takes an exclusive file
// lock for a writer (a shared one read-only), so a second r2med process
// that opens the same cache waits up to Options.Timeout and then fails
// with an error that says so, rather than corrupting it.
package cache

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/r2med/r2med/usage"
)

// FileName is the store's file inside its directory.
const FileName = "cache.db"

// DefaultTimeout is how long Open waits for another process's lock when
// Options.Timeout is zero.
const DefaultTimeout = 3 * time.Second

// Options says how to open a store. The zero value opens it for writing
// and waits DefaultTimeout for a lock held by another process.
type Options struct {
	ReadOnly bool
	Timeout  time.Duration
}

// Store is an open cache. Its methods are safe for concurrent use.
type Store struct {
	db   *bolt.DB
	dir  string
	ro   bool
	now  func() time.Time // tests set the clock
	path string

	recMu     sync.Mutex
	recorders []*Recorder
}

// ErrNotExist is returned by Open with ReadOnly when the directory holds no
// cache yet.
var ErrNotExist = errors.New("no cache")

// ErrInUse is returned by Open when another process holds the cache.
var ErrInUse = errors.New("cache in use")

// ErrDamaged is the error of a read or write that found the cache file
// damaged.
var ErrDamaged = errors.New("cache file damaged")

// view and update run a bbolt transaction. bbolt panics (an assertion, or
// a bad slice) where a page of the file is damaged, rather than return an
// error; that panic becomes an error naming the file and what to do, and
// bbolt rolls the transaction back as the panic passes through it.
func (s *Store) view(fn func(*bolt.Tx) error) error {
	return s.guard(func() error { return s.db.View(fn) })
}

func (s *Store) update(fn func(*bolt.Tx) error) error {
	return s.guard(func() error { return s.db.Update(fn) })
}

func (s *Store) guard(tx func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: %s could not be read (%v); delete it (rm %s) or use --cache DIR for another: what it held is computed again as needed",
				ErrDamaged, s.path, r, s.path)
		}
	}()
	return tx()
}

// DefaultDir is $R2MED_CACHE, else r2med under the user's cache directory
// (~/.cache/r2med on Linux).
func DefaultDir() string {
	if d := os.Getenv("R2MED_CACHE"); d != "" {
		return d
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "r2med")
	}
	return filepath.Join(os.TempDir(), "r2med-cache")
}

// Open opens the store in directory dir, creating both unless
// opts.ReadOnly is set.
func Open(dir string, opts Options) (*Store, error) {
	if dir == "" {
		dir = DefaultDir()
	}
	path := filepath.Join(dir, FileName)
	if opts.ReadOnly {
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w at %s (nothing has been cached there yet)", ErrNotExist, dir)
		}
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("creating the cache directory: %w", err)
	}
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	if !opts.ReadOnly {
		// Opened for writing, bbolt rebuilds its free list by walking
		// every page in a goroutine of its own, where a damaged page's
		// panic cannot be recovered and ends the process with a stack
		// trace. Walking the pages here first, opened read-only, where it
		// can be, turns that into ErrDamaged. It reads the branch and leaf
		// pages once more, as bbolt's own walk does.
		if _, err := os.Stat(path); err == nil {
			ro, err := openBolt(dir, path, true, timeout)
			if err != nil {
				return nil, err
			}
			err = ro.view(func(tx *bolt.Tx) error {
				return tx.ForEach(func(_ []byte, b *bolt.Bucket) error {
					return b.ForEach(func(_, _ []byte) error { return nil })
				})
			})
			ro.Close()
			if err != nil {
				return nil, err
			}
		}
	}
	return openBolt(dir, path, opts.ReadOnly, timeout)
}

func openBolt(dir, path string, readOnly bool, timeout time.Duration) (*Store, error) {
	db, err := bolt.Open(path, 0o644, &bolt.Options{
		Timeout:  timeout,
		ReadOnly: readOnly,
		// The free list is rebuilt on open instead of written on every
		// commit: commits stay small while a run writes batch after batch.
		NoFreelistSync: true,
		FreelistType:   bolt.FreelistMapType,
	})
	if errors.Is(err, berrors.ErrTimeout) {
		return nil, fmt.Errorf("%w: the cache %s is in use by another r2med process (waited %v for its lock); wait for it to finish or use --cache DIR for a separate cache", ErrInUse, dir, timeout)
	}
	if err != nil {
		return nil, fmt.Errorf("opening the cache %s: %w (if the file is damaged, delete it or use --cache DIR)", path, err)
	}
	return &Store{db: db, dir: dir, ro: readOnly, now: time.Now, path: path}, nil
}

// Dir is the directory the store lives in.
func (s *Store) Dir() string { return s.dir }

// Path is the store's file.
func (s *Store) Path() string { return s.path }

// Close releases the store and its lock.
func (s *Store) Close() error { return s.db.Close() }

// Key hashes the parts that determine a value into a key. Each part is
// length-prefixed, so ("ab", "c") and ("a", "bc") differ.
func Key(parts ...string) []byte {
	h := sha256.New()
	var n [binary.MaxVarintLen64]byte
	for _, p := range parts {
		h.Write(n[:binary.PutUvarint(n[:], uint64(len(p)))])
		h.Write([]byte(p))
	}
	return h.Sum(nil)
}

// Bucket names the bucket for values of one kind made by one label, e.g.
// Bucket("embed", "BAAI/bge-large-en-v1.5").
func Bucket(kind, label string) string {
	if label == "" {
		return kind
	}
	return kind + "/" + label
}

// SplitBucket is the inverse of Bucket.
func SplitBucket(name string) (kind, label string) {
	kind, label, _ = strings.Cut(name, "/")
	return kind, label
}

// The value header: a format byte and the write time in Unix seconds.
const (
	headerVersion = 1
	headerLen     = 9
)

func (s *Store) encode(val []byte) []byte { return encodeAt(val, s.now()) }

func decode(bucket string, key, raw []byte) (val []byte, written time.Time, err error) {
	if len(raw) < headerLen || raw[0] != headerVersion {
		return nil, time.Time{}, fmt.Errorf("cache entry %s/%s has no valid header (format %d, %d bytes); the cache file is damaged or from a newer r2med: prune the bucket (r2med cache prune) or use a new --cache DIR", bucket, hex.EncodeToString(key), firstByte(raw), len(raw))
	}
	return raw[headerLen:], time.Unix(int64(binary.LittleEndian.Uint64(raw[1:headerLen])), 0), nil
}

func firstByte(b []byte) int {
	if len(b) == 0 {
		return -1
	}
	return int(b[0])
}

func checkBucket(name string) error {
	if name == "" {
		return errors.New("cache: empty bucket name")
	}
	return nil
}

// Get returns the value stored under key in bucket, and whether there was
// one.
func (s *Store) Get(bucket string, key []byte) ([]byte, bool, error) {
	vals, err := s.GetMany(bucket, [][]byte{key})
	if err != nil {
		return nil, false, err
	}
	return vals[0], vals[0] != nil, nil
}

// GetMany looks up keys in one read transaction; a miss is nil in the
// result. A hit is never nil (an empty value is an empty slice).
func (s *Store) GetMany(bucket string, keys [][]byte) ([][]byte, error) {
	if err := checkBucket(bucket); err != nil {
		return nil, err
	}
	out := make([][]byte, len(keys))
	err := s.view(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte(bucket))
		if b == nil {
			return nil
		}
		for i, k := range keys {
			raw := b.Get(k)
			if raw == nil {
				continue
			}
			v, _, err := decode(bucket, k, raw)
			if err != nil {
				return err
			}
			// bbolt's memory is valid only inside the transaction.
			out[i] = append(make([]byte, 0, len(v)), v...)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	s.touch(bucket, keys, out)
	return out, nil
}

// PutMany stores vals[i] under keys[i] in bucket, creating it, in one
// transaction: after a crash either all of them are there or none.
func (s *Store) PutMany(bucket string, keys [][]byte, vals [][]byte) error {
	if err := checkBucket(bucket); err != nil {
		return err
	}
	if len(keys) != len(vals) {
		return fmt.Errorf("cache: %d keys for %d values", len(keys), len(vals))
	}
	if s.ro {
		return fmt.Errorf("cache %s was opened read-only", s.dir)
	}
	if len(keys) == 0 {
		return nil
	}
	err := s.update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists([]byte(bucket))
		if err != nil {
			return err
		}
		for i, k := range keys {
			if len(k) == 0 {
				return fmt.Errorf("value %d has an empty key", i)
			}
			if err := b.Put(k, s.encode(vals[i])); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("writing %d entries to the cache %s (bucket %s): %w", len(keys), s.dir, bucket, err)
	}
	s.touch(bucket, keys, nil)
	return nil
}

// BucketStats describes one bucket: its entries, and what they cost when
// made where the kind's package says how to read it (RegisterUsage).
type BucketStats struct {
	Name        string // KIND/LABEL
	Kind, Label string
	Entries     int
	Bytes       int64 // keys and values as stored, headers included
	// Oldest and Newest are the earliest and latest write times.
	Oldest, Newest time.Time
	// Metered says the kind's package registered how to read its entries'
	// usage (RegisterUsage); the fields below are zero otherwise.
	Metered bool
	// Usage sums what the entries that record it cost when they were made
	// (Usage.Calls counts them; EstimatedCalls those whose tokens were
	// estimated because the server reported none). NoUsage counts the
	// entries that record none (written before r2med recorded usage, or
	// unreadable).
	Usage   usage.Tally
	NoUsage int
	// Served are the other names the server answered with (Usage.Model
	// where it is not Label), sorted.
	Served []string
}

// Stats describes every bucket, sorted by name, reading every entry.
func (s *Store) Stats() ([]BucketStats, error) {
	var out []BucketStats
	err := s.view(func(tx *bolt.Tx) error {
		return tx.ForEach(func(name []byte, b *bolt.Bucket) error {
			st := BucketStats{Name: string(name)}
			st.Kind, st.Label = SplitBucket(st.Name)
			u := bucketUsage{&st, usageDecoder(st.Kind)}
			st.Metered = u.decode != nil
			err := b.ForEach(func(k, raw []byte) error {
				val, t, err := decode(st.Name, k, raw)
				if err != nil {
					return err
				}
				u.add(val)
				st.Entries++
				st.Bytes += int64(len(k) + len(raw))
				if st.Oldest.IsZero() || t.Before(st.Oldest) {
					st.Oldest = t
				}
				if t.After(st.Newest) {
					st.Newest = t
				}
				return nil
			})
			out = append(out, st)
			return err
		})
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, err
}

// Filter selects entries for Prune. Fields left zero select anything; at
// least one must be set, or All, so that a zero Filter removes nothing by
// accident.
type Filter struct {
	Kind   string    // bucket kind, "embed"
	Label  string    // bucket label, compared ignoring case (Hub ids are)
	Before time.Time // entries written before this time
	All    bool      // everything the other fields select, even if none is set
}

func (f Filter) empty() bool { return f.Kind == "" && f.Label == "" && f.Before.IsZero() }

func (f Filter) bucket(name string) bool {
	kind, label := SplitBucket(name)
	return (f.Kind == "" || f.Kind == kind) && (f.Label == "" || strings.EqualFold(f.Label, label))
}

// pruneBatch bounds the keys one Prune transaction deletes, so pruning a
// huge cache by age needs bounded memory. A variable for the tests.
var pruneBatch = 50000

// Prune removes the entries f selects and returns how many. Buckets left
// empty are removed too. The file does not shrink (bbolt reuses the freed
// pages for later writes).
func (s *Store) Prune(f Filter) (removed int, err error) {
	if f.empty() && !f.All {
		return 0, errors.New("cache prune: say what to remove (a kind, a label, an age) or ask for all")
	}
	if s.ro {
		return 0, fmt.Errorf("cache %s was opened read-only", s.dir)
	}
	var names [][]byte
	err = s.view(func(tx *bolt.Tx) error {
		return tx.ForEach(func(name []byte, _ *bolt.Bucket) error {
			if f.bucket(string(name)) {
				names = append(names, bytes.Clone(name))
			}
			return nil
		})
	})
	if err != nil {
		return 0, err
	}
	for _, name := range names {
		n, err := s.pruneBucket(name, f.Before)
		removed += n
		if err != nil {
			return removed, fmt.Errorf("pruning %s in the cache %s: %w", name, s.dir, err)
		}
	}
	return removed, nil
}

func (s *Store) pruneBucket(name []byte, before time.Time) (removed int, err error) {
	for {
		done := true
		err := s.update(func(tx *bolt.Tx) error {
			b := tx.Bucket(name)
			if b == nil {
				return nil
			}
			if before.IsZero() {
				removed += b.Stats().KeyN
				return tx.DeleteBucket(name)
			}
			var stale [][]byte
			c := b.Cursor()
			for k, raw := c.First(); k != nil; k, raw = c.Next() {
				_, t, err := decode(string(name), k, raw)
				if err != nil {
					return err
				}
				if t.Before(before) {
					stale = append(stale, bytes.Clone(k))
					if len(stale) == pruneBatch {
						done = false
						break
					}
				}
			}
			for _, k := range stale {
				if err := b.Delete(k); err != nil {
					return err
				}
			}
			removed += len(stale)
			if k, _ := b.Cursor().First(); k == nil {
				return tx.DeleteBucket(name)
			}
			return nil
		})
		if err != nil || done {
			return removed, err
		}
	}
}
