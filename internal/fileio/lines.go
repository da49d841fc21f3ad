package fileio

import (
	"bufio"
	"bytes"
	"io"
)

// Lines reads a text file line by line by the project's rule for input
// lines, the one every line reader applies (dataset, trec, expand,
// analysis, audit, table):
//
//   - a line ends at \n, and a \r before it is dropped (CRLF files read as
//     LF ones); a last line without a newline is a line;
//   - a byte-order mark at the start of the file is skipped, one at the
//     start of a later line is an error naming the file and line (SkipBOM;
//     in a file of free texts, one per line, it is the text's own: FreeText);
//   - a line longer than the limit (MaxLineBytes unless Limit says less)
//     is an error naming the file, the line and the kind of file expected,
//     not bufio's "token too long" (ScanError);
//   - a stream cut short (a truncated gzip file) is an error saying so, not
//     a half line handed out as data.
//
// Line numbers are physical, blank lines counted, so that errors point
// where an editor would.
type Lines struct {
	sc   *bufio.Scanner
	name string
	kind string
	max  int
	line int
	off  int64
	// unterminated is set when the last token had no newline after it.
	unterminated bool
	// bad is why Scan stopped at a line it would not hand out.
	bad error
	// text: the lines are free texts (FreeText).
	text bool
}

// NewLines reads r, named name in errors; kind names the format the file
// should be ("JSON-lines", "TREC run", ...) in the error for a line over
// the limit.
func NewLines(r io.Reader, name, kind string) *Lines {
	l := &Lines{name: name, kind: kind, max: MaxLineBytes}
	l.sc = NewScanner(r, MaxLineBytes+2)
	l.sc.Split(func(data []byte, atEOF bool) (int, []byte, error) {
		adv, tok, err := bufio.ScanLines(data, atEOF)
		l.off += int64(adv)
		l.unterminated = atEOF && tok != nil && (len(data) == 0 || data[len(data)-1] != '\n') && adv == len(data)
		return adv, tok, err
	})
	return l
}

// Limit lowers the longest line accepted from MaxLineBytes to max (a
// reader whose records are short, or a test); call it before the first
// Scan.
func (l *Lines) Limit(max int) *Lines {
	l.max = max
	// Room for the line end (\r\n): the limit is the line's own length.
	l.sc.Buffer(make([]byte, 0, min(max+2, 1<<16)), max+2)
	return l
}

// FreeText marks the file as one free text per line, with no ids or JSON
// in it: a byte-order mark starting a later line is then the text's own
// first character (U+FEFF, which real texts start with: NFCorpus's query
// PLAIN-2863 does), kept as Python's "for line in f" keeps it, rather than
// an error. Call it before the first Scan.
func (l *Lines) FreeText() *Lines {
	l.text = true
	return l
}

// Resume numbers the lines of a reader that starts in the middle of the
// file: after line (1-based) and off bytes, the next line being line+1.
// Call it before the first Scan.
func (l *Lines) Resume(line int, off int64) {
	l.line, l.off = line, off
}

// Scan returns the next line, blank or not, without its line end and, on
// the first line, without a byte-order mark. The slice is only valid until
// the following call. It returns false at the end of the file or at an
// error, which Err reports.
func (l *Lines) Scan() ([]byte, bool) {
	if l.bad != nil || !l.sc.Scan() {
		return nil, false
	}
	if l.unterminated && l.sc.Err() != nil {
		// A read error (a truncated gzip stream, say) cut this line
		// short; handing it out would report it as bad data and hide the
		// real cause.
		return nil, false
	}
	l.line++
	if len(l.sc.Bytes()) > l.max {
		l.bad = ScanError(l.name, l.line, l.max, l.kind, bufio.ErrTooLong)
		return nil, false
	}
	b, err := SkipBOM(l.sc.Bytes(), l.line)
	if err != nil && l.text {
		b, err = l.sc.Bytes(), nil
	}
	if err != nil {
		l.bad = l.Errorf("%v", err)
		return nil, false
	}
	return b, true
}

// Next is Scan skipping blank lines (IsSpace only).
func (l *Lines) Next() ([]byte, bool) {
	for {
		b, ok := l.Scan()
		if !ok {
			return nil, false
		}
		if !isBlankBytes(b) {
			return b, true
		}
	}
}

// Line is the number of the line Scan or Next returned last.
func (l *Lines) Line() int { return l.line }

// Offset is the number of bytes read through the end of the line Scan or
// Next returned last, its line end included (where a reader resumes).
func (l *Lines) Offset() int64 { return l.off }

// Errorf is an error at the line Scan or Next returned last.
func (l *Lines) Errorf(format string, args ...any) error {
	return Errorf(l.name, l.line, format, args...)
}

// Err reports why reading stopped early, or nil at a clean end of file.
func (l *Lines) Err() error {
	if l.bad != nil {
		return l.bad
	}
	return ScanError(l.name, l.line+1, l.max, l.kind, l.sc.Err())
}

func isBlankBytes(b []byte) bool {
	for _, c := range b {
		if !IsSpace(c) {
			return false
		}
	}
	return true
}

// FirstByte peeks at the first byte of br that is neither white space nor
// part of the byte-order mark the file may start with, without consuming
// anything (line numbers stay right), to tell a JSON array ('[') from JSON
// lines; it returns 0 for an empty file or one whose first buffer is all
// white space.
func FirstByte(br *bufio.Reader) byte {
	for n := 1; n <= br.Size(); n++ {
		b, _ := br.Peek(n)
		if len(b) < n {
			return 0
		}
		if c := b[n-1]; !IsSpace(c) && !(n <= len(BOM) && bytes.HasPrefix(BOM, b)) {
			return c
		}
	}
	return 0
}
