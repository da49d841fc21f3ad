// Package fileio holds the file plumbing every reader and writer shares:
// transparent gzip on input, errors that point at a file and line, and
// output files that appear whole or not at all.
package fileio

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// LineError locates a problem in an input file. Line is 1-based; 0 means the
// problem concerns the file as a whole.
type LineError struct {
	File string
	Line int
	Msg  string
	// Err, when set, is the kind of problem (errors.Is), for callers that
	// add what to do in their own terms (a command-line flag).
	Err error
}

func (e *LineError) Unwrap() error { return e.Err }

func (e *LineError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

// Errorf builds a LineError.
func Errorf(file string, line int, format string, args ...any) *LineError {
	return &LineError{File: file, Line: line, Msg: fmt.Sprintf(format, args...)}
}

type readCloser struct {
	io.Reader
	closers []io.Closer
}

func (r *readCloser) Close() error {
	var first error
	for _, c := range r.closers {
		if err := c.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Open opens path for reading, decompressing it when it is gzip (detected by
// its magic bytes, so a misnamed file still reads).
func Open(path string) (io.ReadCloser, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	br := bufio.NewReaderSize(f, 1<<16)
	magic, _ := br.Peek(2)
	if bytes.Equal(magic, []byte{0x1f, 0x8b}) {
		zr, err := gzip.NewReader(br)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("%s: not a readable gzip file: %w", path, err)
		}
		return &readCloser{Reader: zr, closers: []io.Closer{zr, f}}, nil
	}
	return &readCloser{Reader: br, closers: []io.Closer{f}}, nil
}

// Exists reports whether path, or path+".gz", names a regular file, and
// returns the one found (the plain name wins). Readers use Find, which
// refuses the pair.
func Exists(path string) (string, bool) {
	for _, p := range []string{path, path + ".gz"} {
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			return p, true
		}
	}
	return "", false
}

// NotDir is an error when path, a file to be written, is a directory: a
// command whose output is one file checks it before its work, not when
// the file is renamed into place.
func NotDir(path string) error {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return fmt.Errorf("%s is a directory: give the path of the file to write", path)
	}
	return nil
}

// WriteAtomic writes path through a temporary file in the same directory and
// renames it into place only when write succeeded, so readers never see a
// partial file and an interrupted run leaves the old file (or none). The
// temporary file (".NAME.tmp-*") is locked while it is written (flock,
// where there is one), so that a sweep of the directory (InUse) leaves it
// alone, and one left by a killed process can be removed by the next.
//
// A path that is a directory is an error before anything is written
// (NotDir).
func WriteAtomic(path string, write func(w io.Writer) error) (err error) {
	if err := NotDir(path); err != nil {
		return err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	lock(tmp)
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	bw := bufio.NewWriterSize(tmp, 1<<16)
	if err = write(bw); err != nil {
		return err
	}
	if err = bw.Flush(); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Chmod(0o644); err != nil {
		return err
	}
	return renameLocked(tmp, path)
}

// Fields splits s on ASCII whitespace without allocating the substrings'
// backing data; it appends into dst to let hot loops reuse one slice.
func Fields(dst []string, s string) []string {
	dst = dst[:0]
	i := 0
	for i < len(s) {
		for i < len(s) && IsSpace(s[i]) {
			i++
		}
		start := i
		for i < len(s) && !IsSpace(s[i]) {
			i++
		}
		if i > start {
			dst = append(dst, s[start:i])
		}
	}
	return dst
}

var spaceTable = [256]bool{' ': true, '\t': true, '\r': true, '\n': true, '\v': true, '\f': true}

// IsSpace reports whether c is ASCII white space, the separators of TREC
// text formats (a table lookup: it sits in the run reader's hot loop).
func IsSpace(c byte) bool { return spaceTable[c] }

// IsBlank reports whether s holds only whitespace.
func IsBlank(s string) bool { return strings.TrimSpace(s) == "" }
