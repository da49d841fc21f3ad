package cache

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/r2med/r2med/internal/fileio"
)

// KeysFile is the name of the list of cache entries a run used, written
// beside its manifest (Recorder.WriteFile) and read by `r2med cache export
// --manifest`.
const KeysFile = "cache-keys.tsv.gz"

// keysHeader opens a keys file.
const keysHeader = "# r2med cache keys v1: bucket<TAB>hex key"

// Ref names one entry.
type Ref struct {
	Bucket string
	Key    []byte
}

// Recorder collects the entries a run reads (hits only) and writes, so
// that exactly those can be exported and shared. Every recorder of a
// Store sees every access from its start to its Stop, including other
// runs in the same process at the same time: the list is then a superset,
// never a subset. It is safe for concurrent use.
type Recorder struct {
	s    *Store
	mu   sync.Mutex
	seen map[string]map[string]struct{} // bucket → key (as a string)
}

// Record starts recording the entries used from now on.
func (s *Store) Record() *Recorder {
	r := &Recorder{s: s, seen: map[string]map[string]struct{}{}}
	s.recMu.Lock()
	s.recorders = append(s.recorders, r)
	s.recMu.Unlock()
	return r
}

// Stop ends the recording; the keys recorded so far stay readable.
func (r *Recorder) Stop() {
	r.s.recMu.Lock()
	defer r.s.recMu.Unlock()
	r.s.recorders = slices.DeleteFunc(r.s.recorders, func(x *Recorder) bool { return x == r })
}

// touch tells the recorders about keys used in bucket; with found, only
// the keys whose value is non-nil.
func (s *Store) touch(bucket string, keys, found [][]byte) {
	s.recMu.Lock()
	recs := slices.Clone(s.recorders)
	s.recMu.Unlock()
	for _, r := range recs {
		r.mu.Lock()
		m := r.seen[bucket]
		if m == nil {
			m = map[string]struct{}{}
			r.seen[bucket] = m
		}
		for i, k := range keys {
			if found == nil || found[i] != nil {
				m[string(k)] = struct{}{}
			}
		}
		r.mu.Unlock()
	}
}

// Keys are the entries recorded, sorted by bucket then key.
func (r *Recorder) Keys() []Ref {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Ref
	for b, m := range r.seen {
		for k := range m {
			out = append(out, Ref{Bucket: b, Key: []byte(k)})
		}
	}
	sortRefs(out)
	return out
}

func sortRefs(refs []Ref) {
	slices.SortFunc(refs, func(a, b Ref) int {
		if c := strings.Compare(a.Bucket, b.Bucket); c != 0 {
			return c
		}
		return bytes.Compare(a.Key, b.Key)
	})
}

// WriteFile writes the recorded keys to path (conventionally KeysFile in
// the run's directory), whole or not at all: gzip'd lines of bucket, tab,
// hex key, sorted, after a header line.
func (r *Recorder) WriteFile(path string) error { return WriteKeys(path, r.Keys()) }

// WriteKeys writes refs as Recorder.WriteFile does.
func WriteKeys(path string, refs []Ref) error {
	refs = slices.Clone(refs)
	sortRefs(refs)
	return fileio.WriteAtomic(path, func(w io.Writer) error { return writeKeys(w, refs, true) })
}

// AppendKeys adds refs to the keys file at path, making it (header
// first) when it does not exist: a list that grows as a long stage goes
// (a rerank kept in a checkpoint, query by query), each call one gzip
// member, which ReadKeys reads as one stream. A call cut short leaves a
// damaged last member, which ReadKeys reports.
func AppendKeys(path string, refs []Ref) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	st, err := f.Stat()
	if err == nil {
		err = writeKeys(f, refs, st.Size() == 0)
	}
	return errors.Join(err, f.Close())
}

// writeKeys writes refs as one gzip member, the header line first when
// header is set.
func writeKeys(w io.Writer, refs []Ref, header bool) error {
	for _, ref := range refs {
		if ref.Bucket == "" || strings.ContainsAny(ref.Bucket, "\t\n\r") || len(ref.Key) == 0 {
			return fmt.Errorf("cache keys: bucket %q, key %x cannot be written (empty, or a tab or newline in the bucket name)", ref.Bucket, ref.Key)
		}
	}
	zw := gzip.NewWriter(w)
	bw := bufio.NewWriter(zw)
	if header {
		bw.WriteString(keysHeader + "\n")
	}
	for _, ref := range refs {
		bw.WriteString(ref.Bucket)
		bw.WriteByte('\t')
		bw.WriteString(hex.EncodeToString(ref.Key))
		bw.WriteByte('\n')
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	return zw.Close()
}

// ReadKeys reads a keys file written by WriteKeys; errors name its line.
func ReadKeys(path string) ([]Ref, error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%s does not exist: the run recorded no cache keys (runs record them in %s beside their manifest); export by --kind and --label instead", path, KeysFile)
		}
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("%s: not a gzip'd cache key list: %w", path, err)
	}
	sc := bufio.NewScanner(zr)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var out []Ref
	line := 0
	for sc.Scan() {
		line++
		s := sc.Text()
		if line == 1 {
			if s != keysHeader {
				return nil, fileio.Errorf(path, 1, "not an r2med cache key list (first line %q)", s)
			}
			continue
		}
		b, k, ok := strings.Cut(s, "\t")
		key, err := hex.DecodeString(k)
		if !ok || b == "" || err != nil || len(key) == 0 {
			return nil, fileio.Errorf(path, line, "want bucket<TAB>hex key, got %q", s)
		}
		out = append(out, Ref{Bucket: b, Key: key})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w (the file is damaged or truncated)", path, err)
	}
	if line == 0 {
		return nil, fmt.Errorf("%s: empty file; not an r2med cache key list", path)
	}
	return out, nil
}
