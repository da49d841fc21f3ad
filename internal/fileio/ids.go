package fileio

import (
	"bytes"
	"errors"
	"fmt"
	"unicode"
	"unicode/utf8"
)

// The rules below are the ones every reader of the TREC text formats and
// of the JSON-lines files those ids come from applies (dataset, trec):
// written once here, the lowest package both import.

// BOM is the UTF-8 byte-order mark Windows tools write at the start of a
// text file; it is not data.
var BOM = []byte("\xef\xbb\xbf")

// SkipBOM returns the line numbered line (1-based) without the byte-order
// mark a file may start with, and an error (without file and line: the
// caller adds them) for a line after the first that starts with one: that
// is where files with one were joined (cat a b), and readers disagree on
// it (JSON parsers refuse it, trec_eval and pytrec_eval take it into the
// query id, which then matches no other file's), while an editor does not
// show it.
func SkipBOM(b []byte, line int) ([]byte, error) {
	if !bytes.HasPrefix(b, BOM) {
		return b, nil
	}
	if line == 1 {
		return b[len(BOM):], nil
	}
	return nil, errors.New(`line starts with a byte-order mark (U+FEFF, bytes EF BB BF), as where files with one were joined; remove it (sed -i '2,$ s/^\xEF\xBB\xBF//' FILE)`)
}

// PythonSpace finds the first character of s that Python's str.split()
// takes for white space although it is not ASCII white space (IsSpace,
// what trec_eval and Fields split on): the separators U+001C to U+001F
// and Unicode white space beyond ASCII (U+0085, U+00A0, U+2003, ...).
// pytrec_eval's parse_run and parse_qrel split lines with str.split(), so
// they would cut a field there. It returns the character and its byte
// offset, or -1 for the offset when s has none.
func PythonSpace[T ~string | ~[]byte](s T) (rune, int) {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 0x1c && c <= 0x1f || c >= utf8.RuneSelf {
			r, _ := utf8.DecodeRuneInString(string(s[i:min(len(s), i+utf8.UTFMax)]))
			if r >= 0x1c && r <= 0x1f || unicode.IsSpace(r) {
				return r, i
			}
		}
	}
	return 0, -1
}

// CheckID rejects an id that TREC's white-space separated files cannot
// carry: an empty one, one holding ASCII white space, which trec_eval
// splits on, and one holding a character PythonSpace finds. The error
// starts with the quoted id, for the caller to name what it is
// ("document id", "query-id").
func CheckID(id string) error {
	if id == "" {
		return errors.New(`is empty; give every record a non-empty id`)
	}
	for i := 0; i < len(id); i++ {
		if IsSpace(id[i]) {
			return fmt.Errorf("%q contains whitespace at byte %d; TREC run and qrels files separate fields by whitespace, so rename the id", id, i)
		}
	}
	if r, i := PythonSpace(id); i >= 0 {
		return fmt.Errorf("%q contains %U, which Python's str.split() takes for whitespace, at byte %d; pytrec_eval (and scripts that split TREC lines in Python) would cut the id there, so rename it", id, r, i)
	}
	return nil
}
