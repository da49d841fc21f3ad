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
	sc := newScanner(r)
	var f [6][]byte
	var tag []byte
	line := 0
	for sc.Scan() {
		line++
		b := sc.Bytes()
		if line == 1 {
			b = bytes.TrimPrefix(b, fileio.BOM)
		}
		if splitFields(&f, b) != 6 {
			continue
		}
		switch {
		case tag == nil:
			tag = append([]byte{}, f[5]...)
		case !bytes.Equal(tag, f[5]):
			return "", nil
		}
	}
	if err := fileio.ScanError(name, line+1, maxLine, "TREC run", sc.Err()); err != nil {
		return "", err
	}
	return string(tag), nil
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
