package errtext

import (
	"bytes"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/r2med/r2med/internal/fileio"
)

// TextError is input that is not valid Unicode text: a byte sequence that
// is not UTF-8, or, in JSON, a \u escape of half a UTF-16 surrogate pair.
// Go's decoders (encoding/json, strings.ToValidUTF8) would silently turn
// either into U+FFFD, so the readers refuse them, and so do the Python
// tools whose files these are (Python's utf-8 codec is strict by default).
// Line and Offset locate the problem inside the bytes checked: the 1-based
// line and the 0-based byte offset in that line.
type TextError struct {
	Line, Offset int
	What         string // what Offset counts in: "line", "value"
	Problem      string // what is wrong, without where
	Fix          string // what to do; a reader may put its own advice here
}

func (e *TextError) Error() string {
	return fmt.Sprintf("%s at byte offset %d of the %s; %s", e.Problem, e.Offset, e.What, e.Fix)
}

const utf8Fix = "the file must be UTF-8 text: convert it from its real encoding " +
	"(iconv -f WINDOWS-1252 -t UTF-8 for text from Windows tools, say), or drop the bad bytes with iconv -c -f UTF-8 -t UTF-8"

// CheckUTF8 returns nil when b is valid UTF-8 and otherwise a *TextError
// naming the first bad byte. what names the unit offsets count in ("line"
// for one line of a file, "value" for a table cell); b may hold several
// lines, and then the error's Line says which.
func CheckUTF8(b []byte, what string) error {
	if utf8.Valid(b) {
		return nil
	}
	off := invalidAt(b)
	return locate(b, off, what, fmt.Sprintf("invalid UTF-8 (byte 0x%02x)", b[off]), utf8Fix)
}

// CheckJSONText is CheckUTF8 for JSON text, which must also not escape a
// lone UTF-16 surrogate (\ud800 without the \udc00 after it): encoding/json
// reads one as U+FFFD. Escapes are found by their backslash alone, since
// a backslash outside a string is a syntax error the JSON decoder reports.
func CheckJSONText(b []byte, what string) error {
	if err := CheckUTF8(b, what); err != nil {
		return err
	}
	for i := 0; ; {
		j := bytes.IndexByte(b[i:], '\\')
		if j < 0 {
			return nil
		}
		i += j
		if i+1 >= len(b) {
			return nil // a trailing backslash: the decoder's syntax error
		}
		if b[i+1] != 'u' {
			i += 2 // \" \\ \n …: skipped whole, so \\u is not an escape
			continue
		}
		r, ok := hex4(b, i+2)
		switch {
		case !ok || r < 0xd800 || r > 0xdfff:
		case r <= 0xdbff:
			if lo, ok := hex4(b, i+8); ok && i+7 < len(b) && b[i+6] == '\\' && b[i+7] == 'u' && lo >= 0xdc00 && lo <= 0xdfff {
				i += 12
				continue
			}
			fallthrough
		default:
			return locate(b, i, what, fmt.Sprintf(`unpaired UTF-16 surrogate %s (half of a character)`, b[i:i+6]),
				`write both halves of the pair (an emoji is two escapes, as in \ud83d\ude00) or remove the escape`)
		}
		i += 2
	}
}

func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// invalidAt is the offset of the first byte of b that does not start a
// valid UTF-8 sequence; b is known to hold one.
func invalidAt(b []byte) int {
	for i := 0; i < len(b); {
		if b[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 {
			return i
		}
		i += size
	}
	return len(b)
}

func locate(b []byte, off int, what, problem, fix string) *TextError {
	line := 1 + bytes.Count(b[:off], []byte("\n"))
	if nl := bytes.LastIndexByte(b[:off], '\n'); nl >= 0 {
		off -= nl + 1
	}
	return &TextError{Line: line, Offset: off, What: what, Problem: problem, Fix: fix}
}

// CheckFile is the readers' one rule for a text file read whole (a
// template, a YAML table): nil when data is valid UTF-8, else an error
// naming file, line and the byte offset in that line (a *fileio.LineError
// wrapping the *TextError).
func CheckFile(file string, data []byte) error { return inFile(file, CheckUTF8(data, "line")) }

// CheckJSONFile is CheckFile for a JSON file (a manifest, a result or
// metadata file), which must also escape no lone surrogate
// (CheckJSONText).
func CheckJSONFile(file string, data []byte) error {
	return inFile(file, CheckJSONText(data, "line"))
}

func inFile(file string, err error) error {
	var te *TextError
	if !errors.As(err, &te) {
		return err
	}
	return &fileError{LineError: fileio.Errorf(file, te.Line, "%v", te), text: te}
}

// fileError is a *fileio.LineError that unwraps to its *TextError.
type fileError struct {
	*fileio.LineError
	text *TextError
}

func (e *fileError) Unwrap() []error { return []error{e.LineError, e.text} }
