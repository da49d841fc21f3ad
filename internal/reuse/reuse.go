// Package reuse is the one rule by which a stage of a run skips its work:
// an output is reused when the fingerprint of what produced it matches
// and every one of its files still has the checksum recorded when it was
// written. The record is written after the files, and removed before they
// are rewritten, so an interrupted write never leaves a record vouching
// for a half-written or foreign file.
package reuse

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/r2med/r2med/internal/fileio"
)

// Record says which fingerprint produced a set of files and what they
// held: file name (relative to the record's directory) → sha256.
type Record struct {
	Fingerprint string            `json:"fingerprint"`
	SHA256      map[string]string `json:"sha256"`
}

// Seal checksums files (relative to dir) into a record for fp.
func Seal(dir, fp string, files ...string) (Record, error) {
	r := Record{Fingerprint: fp, SHA256: make(map[string]string, len(files))}
	for _, f := range files {
		sum, err := Sum(filepath.Join(dir, f))
		if err != nil {
			return Record{}, err
		}
		r.SHA256[f] = sum
	}
	return r, nil
}

// Sum is a file's sha256, hex-encoded.
func Sum(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// ErrOtherFingerprint is Check's error when the record was made for
// other data or settings.
var ErrOtherFingerprint = errors.New("made with other data or settings")

// Check returns nil when r was made under fp, lists files, and every file
// in dir still has its recorded checksum; otherwise an error saying why
// (errors.Is(err, ErrOtherFingerprint) for another fingerprint).
func (r Record) Check(dir, fp string, files ...string) error {
	if r.Fingerprint != fp {
		return ErrOtherFingerprint
	}
	for _, f := range files {
		want, ok := r.SHA256[f]
		if !ok {
			return fmt.Errorf("%s has no recorded checksum", f)
		}
		got, err := Sum(filepath.Join(dir, f))
		if err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		if got != want {
			return fmt.Errorf("%s changed since it was written (sha256 %.12s…, recorded %.12s…)", f, got, want)
		}
	}
	return nil
}

// Stage is an output kept in Dir: its files and the record NAME.json.
type Stage struct {
	Dir, Name string
}

func (s Stage) recordPath() string { return filepath.Join(s.Dir, s.Name+".json") }

// Check reports why the stage's files cannot be reused for fp (nil: they
// can): no record, another fingerprint, or a changed file.
func (s Stage) Check(fp string, files ...string) error {
	data, err := os.ReadFile(s.recordPath())
	if err != nil {
		return err
	}
	var r Record
	if err := json.Unmarshal(data, &r); err != nil {
		return fmt.Errorf("%s: %v", s.recordPath(), err)
	}
	return r.Check(s.Dir, fp, files...)
}

// Files lists, sorted, the files the stage's record vouches for
// (relative to Dir); none when it has no record.
func (s Stage) Files() []string {
	data, err := os.ReadFile(s.recordPath())
	if err != nil {
		return nil
	}
	var r Record
	if json.Unmarshal(data, &r) != nil || r.Fingerprint == "" {
		return nil
	}
	return slices.Sorted(maps.Keys(r.SHA256))
}

// Begin removes the stage's record before its files are rewritten.
func (s Stage) Begin() error {
	if err := os.Remove(s.recordPath()); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// Keep records the files (written already) as the stage's output for fp.
func (s Stage) Keep(fp string, files ...string) error {
	r, err := Seal(s.Dir, fp, files...)
	if err != nil {
		return err
	}
	return fileio.WriteAtomic(s.recordPath(), func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	})
}

// Sweep removes the temporary files an interrupted atomic write left in
// dir (".NAME.tmp-*", fileio.WriteAtomic's names), and returns their
// names. Files a live writer holds (fileio.InUse) are left alone.
func Sweep(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	var removed []string
	for _, e := range entries {
		n := e.Name()
		if e.Type().IsRegular() && strings.HasPrefix(n, ".") && strings.Contains(n, ".tmp-") && !fileio.InUse(filepath.Join(dir, n)) {
			if err := os.Remove(filepath.Join(dir, n)); err != nil {
				return removed, err
			}
			removed = append(removed, n)
		}
	}
	slices.Sort(removed)
	return removed, nil
}

// SweepTree is Sweep for dir and every directory below it.
func SweepTree(dir string) ([]string, error) {
	var removed []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, os.ErrNotExist) && p == dir {
				return fs.SkipDir
			}
			return err
		}
		if !d.IsDir() {
			return nil
		}
		names, err := Sweep(p)
		for _, n := range names {
			rel, _ := filepath.Rel(dir, filepath.Join(p, n))
			removed = append(removed, rel)
		}
		return err
	})
	return removed, err
}
