package cache

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"time"

	bolt "go.etcd.io/bbolt"
)

// The export format shares cache entries between machines (a published
// pipeline's answers, a colleague's embeddings): gzip'd JSON lines, a
// header line, one line per entry, and a trailer with the entry count and
// the SHA-256 of every uncompressed byte before it, so Import can tell a
// whole file from a damaged or truncated one before it writes anything.
//
//	{"format":"r2med-cache-export","version":1}
//	{"bucket":"generate/gpt-4o","key":"<hex>","written":1700000000,"value":"<base64>"}
//	…
//	{"end":true,"entries":N,"sha256":"<hex>"}
const exportFormat = "r2med-cache-export"

const exportVersion = 1

type exportHeader struct {
	Format  string `json:"format"`
	Version int    `json:"version"`
}

type exportEntry struct {
	Bucket  string `json:"bucket"`
	Key     string `json:"key"`
	Written int64  `json:"written"`
	Value   string `json:"value"`
}

type exportTrailer struct {
	End     bool   `json:"end"`
	Entries int    `json:"entries"`
	SHA256  string `json:"sha256"`
}

// Selection says which entries Export writes: those Refs name (every one
// must be in the store), or those Filter selects (at least one field set,
// or All).
type Selection struct {
	Refs   []Ref
	Filter *Filter
}

// ErrMissing is wrapped by Export's error when a Ref names an entry the
// store does not hold.
var ErrMissing = errors.New("entry not in the cache")

// Export writes the selected entries to w in the export format and
// returns how many it wrote.
func (s *Store) Export(w io.Writer, sel Selection) (int, error) {
	if (sel.Filter == nil) == (sel.Refs == nil) {
		return 0, errors.New("cache export: select entries by keys or by a filter (one of the two)")
	}
	if sel.Filter != nil && sel.Filter.empty() && !sel.Filter.All {
		return 0, errors.New("cache export: say what to export (a kind, a label, an age) or ask for all")
	}
	zw := gzip.NewWriter(w)
	h := sha256.New()
	bw := bufio.NewWriterSize(io.MultiWriter(zw, h), 1<<16)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(exportHeader{Format: exportFormat, Version: exportVersion}); err != nil {
		return 0, err
	}
	n := 0
	put := func(bucket string, k, raw []byte) error {
		v, t, err := decode(bucket, k, raw)
		if err != nil {
			return err
		}
		n++
		return enc.Encode(exportEntry{Bucket: bucket, Key: hex.EncodeToString(k), Written: t.Unix(), Value: base64.StdEncoding.EncodeToString(v)})
	}
	err := s.view(func(tx *bolt.Tx) error {
		if sel.Filter != nil {
			return tx.ForEach(func(name []byte, b *bolt.Bucket) error {
				if !sel.Filter.bucket(string(name)) {
					return nil
				}
				return b.ForEach(func(k, raw []byte) error {
					if !sel.Filter.Before.IsZero() {
						if _, t, err := decode(string(name), k, raw); err != nil || !t.Before(sel.Filter.Before) {
							return err
						}
					}
					return put(string(name), k, raw)
				})
			})
		}
		missing, first := 0, ""
		for _, ref := range sel.Refs {
			var raw []byte
			if b := tx.Bucket([]byte(ref.Bucket)); b != nil {
				raw = b.Get(ref.Key)
			}
			if raw == nil {
				if missing == 0 {
					first = ref.Bucket + " " + hex.EncodeToString(ref.Key)
				}
				missing++
				continue
			}
			if err := put(ref.Bucket, ref.Key, raw); err != nil {
				return err
			}
		}
		if missing > 0 {
			return fmt.Errorf("%w: %d of the %d entries the run used are not in the cache %s (first: %s); they were pruned or the run used another --cache", ErrMissing, missing, len(sel.Refs), s.dir, first)
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("cache export: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return 0, err
	}
	// The trailer is not part of its own checksum.
	tr, _ := json.Marshal(exportTrailer{End: true, Entries: n, SHA256: hex.EncodeToString(h.Sum(nil))})
	if _, err := zw.Write(append(tr, '\n')); err != nil {
		return 0, err
	}
	return n, zw.Close()
}

// ImportOptions tune Import.
type ImportOptions struct {
	// Replace takes the file's value where the store holds another value
	// under the same key; by default the store's is kept and counted.
	Replace bool
}

// ImportStats says what Import did.
type ImportStats struct {
	Entries   int // in the file
	Added     int // not in the store before
	Same      int // already there with the same value
	Different int // there with another value, kept (see ImportOptions.Replace)
	Replaced  int // there with another value, replaced
}

// importBatch bounds the entries one Import transaction writes.
const importBatch = 10000

// Import adds the entries of an export file to the store, keeping their
// original write times. The whole file is verified first (format, every
// line, entry count, checksum): a damaged file changes nothing.
func (s *Store) Import(path string, o ImportOptions) (ImportStats, error) {
	if s.ro {
		return ImportStats{}, fmt.Errorf("cache %s was opened read-only", s.dir)
	}
	n, err := VerifyExport(path)
	if err != nil {
		return ImportStats{}, err
	}
	st := ImportStats{Entries: n}
	var batch []Entry
	flush := func() error {
		err := s.update(func(tx *bolt.Tx) error {
			for _, e := range batch {
				b, err := tx.CreateBucketIfNotExists([]byte(e.Bucket))
				if err != nil {
					return err
				}
				if old := b.Get(e.Key); old != nil {
					v, _, err := decode(e.Bucket, e.Key, old)
					switch {
					case err == nil && bytes.Equal(v, e.Value):
						st.Same++
						continue
					case !o.Replace && err == nil:
						st.Different++
						continue
					}
					st.Replaced++
				} else {
					st.Added++
				}
				if err := b.Put(e.Key, encodeAt(e.Value, e.Written)); err != nil {
					return err
				}
			}
			return nil
		})
		batch = batch[:0]
		return err
	}
	err = readExport(path, func(e Entry) error {
		batch = append(batch, e)
		if len(batch) == importBatch {
			return flush()
		}
		return nil
	}, nil)
	if err == nil && len(batch) > 0 {
		err = flush()
	}
	if err != nil {
		return st, fmt.Errorf("importing %s into the cache %s: %w", path, s.dir, err)
	}
	return st, nil
}

// Entry is one cache entry with its write time.
type Entry struct {
	Bucket  string
	Key     []byte
	Value   []byte
	Written time.Time
}

// VerifyExport reads an export file through, checking its format, every
// entry, the entry count and the checksum, and returns the entry count.
func VerifyExport(path string) (int, error) {
	n := 0
	var tr exportTrailer
	err := readExport(path, func(Entry) error { n++; return nil }, &tr)
	if err != nil {
		return 0, err
	}
	return n, nil
}

// readExport streams the entries of an export file to fn. With tr, it
// verifies the whole file (the caller then trusts it and passes nil).
func readExport(path string, fn func(Entry) error, tr *exportTrailer) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("cache import: %w", err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(bufio.NewReaderSize(f, 1<<16))
	if err != nil {
		return fmt.Errorf("%s: not an r2med cache export (not gzip: %v)", path, err)
	}
	br := bufio.NewReaderSize(zr, 1<<16)
	var h hash.Hash = sha256.New()
	line, entries := 0, 0
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%s:%d: %s", path, line, fmt.Sprintf(format, args...))
	}
	ended := false
	for {
		b, err := br.ReadBytes('\n')
		if len(b) == 0 && err == io.EOF {
			break
		}
		if err != nil && err != io.EOF {
			return fmt.Errorf("%s: the file is damaged or truncated after line %d: %v", path, line, err)
		}
		line++
		if ended {
			return bad("data after the end line; the file was altered")
		}
		if line == 1 {
			var hd exportHeader
			if json.Unmarshal(b, &hd) != nil || hd.Format != exportFormat {
				return bad("not an r2med cache export (no header line)")
			}
			if hd.Version != exportVersion {
				return bad("export format version %d; this r2med reads version %d", hd.Version, exportVersion)
			}
			h.Write(b)
			continue
		}
		if bytes.HasPrefix(b, []byte(`{"end":`)) {
			var t exportTrailer
			if json.Unmarshal(b, &t) != nil || !t.End {
				return bad("unreadable end line")
			}
			if tr != nil {
				if t.Entries != entries {
					return bad("the end line counts %d entries, the file holds %d; the file was altered", t.Entries, entries)
				}
				if sum := hex.EncodeToString(h.Sum(nil)); sum != t.SHA256 {
					return bad("checksum %s does not match the end line's %s; the file is damaged or was altered", sum, t.SHA256)
				}
				*tr = t
			}
			ended = true
			continue
		}
		h.Write(b)
		var e exportEntry
		if err := json.Unmarshal(b, &e); err != nil {
			return bad("unreadable entry: %v", err)
		}
		key, err1 := hex.DecodeString(e.Key)
		val, err2 := base64.StdEncoding.DecodeString(e.Value)
		switch {
		case e.Bucket == "":
			return bad("entry without a bucket")
		case err1 != nil || len(key) == 0:
			return bad("entry key %q is not hex", e.Key)
		case err2 != nil:
			return bad("entry value is not base64: %v", err2)
		}
		entries++
		if err := fn(Entry{Bucket: e.Bucket, Key: key, Value: val, Written: time.Unix(e.Written, 0)}); err != nil {
			return err
		}
	}
	if !ended {
		return fmt.Errorf("%s: no end line after %d lines; the file is truncated", path, line)
	}
	return nil
}

// encodeAt is encode with a given write time.
func encodeAt(val []byte, t time.Time) []byte {
	out := make([]byte, headerLen+len(val))
	out[0] = headerVersion
	binary.LittleEndian.PutUint64(out[1:headerLen], uint64(t.Unix()))
	copy(out[headerLen:], val)
	return out
}
