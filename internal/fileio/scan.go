package fileio

import (
	"bufio"
	"errors"
	"fmt"
	"io"
)

// MaxLineBytes is the longest line the line readers (dataset, trec)
// accept. Real corpora have documents of a few hundred kilobytes at most
// and run lines are short; the cap exists so that a binary or
// newline-free file fails with a clear message instead of exhausting
// memory.
const MaxLineBytes = 64 << 20

// NewScanner is a line scanner over r that takes lines of up to max bytes
// (MaxLineBytes, or less in tests); ScanError explains why it stopped.
func NewScanner(r io.Reader, max int) *bufio.Scanner {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, min(max, 1<<16)), max)
	return sc
}

// ScanError is the error for a scanner over the file name that stopped
// with err (bufio.Scanner.Err) while reading line (1-based), or nil for
// nil. A line over max bytes (the scanner's limit) says what the file
// should have been (kind: "JSON-lines", "TREC run", ...) and what to
// check; a stream cut short (a truncated gzip file) says to fetch it
// again; any other read error is named as it is.
func ScanError(name string, line, max int, kind string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, bufio.ErrTooLong):
		return Errorf(name, line, "line is longer than %s, the most the readers accept; a %s file holds one record per line, so check that this is one (a binary file, or one whose line breaks were lost, reads as one long line)", Size(max), kind)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return Errorf(name, line, "file ends in the middle of its data (%v); it is probably truncated, download or decompress it again", err)
	default:
		return Errorf(name, line, "read failed: %v", err)
	}
}

// Size writes a byte count as people read it: whole MiB where it is
// some, bytes otherwise.
func Size(n int) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}
