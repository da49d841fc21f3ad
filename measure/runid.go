package measure

import (
	"bufio"
	"bytes"
	"io"
	"unicode/utf8"

	"github.com/r2med/r2med/internal/fileio"
)

// ReadRunID returns the run id trec_eval's runid measure prints for a TREC
// run: the sixth column (the tag) of its last line with six or more
// fields, trec_eval reading one tag per file and keeping the last line's
// (trec.ReadRunTag gives "" when the lines carry several tags). It checks
// nothing else: trec.ReadRun does.
func ReadRunID(r io.Reader) (string, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	var tag []byte
	for sc.Scan() {
		f := bytes.FieldsFunc(sc.Bytes(), func(r rune) bool { return r < utf8.RuneSelf && fileio.IsSpace(byte(r)) })
		if len(f) >= 6 {
			tag = append(tag[:0], f[5]...)
		}
	}
	return string(tag), sc.Err()
}
