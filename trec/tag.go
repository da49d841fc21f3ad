package trec

import (
	"bytes"
	"io"

	"github.com/r2med/r2med/internal/fileio"
)

// ReadRunTag returns the run tag (the sixth column) of a TREC run when
// every line carries the same one, and "" when the lines carry several,
// or none. It checks nothing else (ReadRun does) but that the file reads:
// an error names the file (name) and line.
func ReadRunTag(r io.Reader, name string) (string, error) {
	var tag []byte
	same := true
	err := eachTag(r, name, func(t []byte) {
		switch {
		case tag == nil:
			tag = append([]byte{}, t...)
		case !bytes.Equal(tag, t):
			same = false
		}
	})
	if err != nil || !same {
		return "", err
	}
	return string(tag), nil
}

// ReadRunLastTag is the tag of the run's last line, what trec_eval's
// runid measure prints: trec_eval keeps one tag per file, the last line's
// (ReadRunTag says "" when the lines carry several).
func ReadRunLastTag(r io.Reader, name string) (string, error) {
	var tag []byte
	err := eachTag(r, name, func(t []byte) { tag = append(tag[:0], t...) })
	return string(tag), err
}

// eachTag hands f the tag of each line of six fields, in order; it checks
// nothing else (ReadRun does).
func eachTag(r io.Reader, name string, f func(tag []byte)) error {
	sc := newScanner(r)
	var fs [6][]byte
	line := 0
	for sc.Scan() {
		line++
		b, err := fileio.SkipBOM(sc.Bytes(), line)
		if err != nil {
			return fileio.Errorf(name, line, "%v", err)
		}
		if splitFields(&fs, b) == 6 {
			f(fs[5])
		}
	}
	return fileio.ScanError(name, line+1, maxLine, "TREC run", sc.Err())
}

// ReadRunTagFile is ReadRunTag of a run file, gzip or plain.
func ReadRunTagFile(path string) (string, error) {
	rc, err := fileio.Open(path)
	if err != nil {
		return "", err
	}
	defer rc.Close()
	return ReadRunTag(rc, path)
}
