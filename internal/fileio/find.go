package fileio

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Find is Exists for readers that must not guess: it returns the one of
// path and path+".gz" that names a regular file, and an error when both
// do, since they may differ and reading either would silently ignore the
// other. The error says which to remove: either, when they hold the same
// data, else the one the user does not mean, naming the newer.
func Find(path string) (string, bool, error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	found, ok, err := FindFS(os.DirFS(dir), base, func(name string) string { return filepath.Join(filepath.Dir(path), name) })
	if !ok {
		return "", false, err
	}
	return filepath.Join(filepath.Dir(path), found), true, nil
}

// FindFS is Find for the slash-separated name inside fsys, returning the
// name found there; show turns a name of fsys into the one errors give.
func FindFS(fsys fs.FS, name string, show func(string) string) (string, bool, error) {
	plain, gz := isRegular(fsys, name), isRegular(fsys, name+".gz")
	switch {
	case plain && gz:
		return "", false, ambiguous(fsys, name, show)
	case plain:
		return name, true, nil
	case gz:
		return name + ".gz", true, nil
	}
	return "", false, nil
}

func isRegular(fsys fs.FS, name string) bool {
	st, err := fs.Stat(fsys, name)
	return err == nil && st.Mode().IsRegular()
}

func ambiguous(fsys fs.FS, name string, show func(string) string) error {
	a, b := show(name), show(name+".gz")
	if same, err := sameData(fsys, name, name+".gz"); err == nil && same {
		return fmt.Errorf("both %s and %s exist; they hold the same data, so remove one of them (rm %s)", a, b, a)
	}
	msg := fmt.Sprintf("both %s and %s exist and they differ; reading one would silently ignore the other, so remove the one you do not mean", a, b)
	sa, errA := fs.Stat(fsys, name)
	sb, errB := fs.Stat(fsys, name+".gz")
	if errA == nil && errB == nil && !sa.ModTime().Equal(sb.ModTime()) {
		newer := a
		if sb.ModTime().After(sa.ModTime()) {
			newer = b
		}
		msg += fmt.Sprintf(" (%s is the newer)", newer)
	}
	return fmt.Errorf("%s", msg)
}

// sameData reports whether two files hold the same bytes once gzip is
// undone, reading both in step; only the error path pays for it.
func sameData(fsys fs.FS, a, b string) (bool, error) {
	ra, err := openFS(fsys, a)
	if err != nil {
		return false, err
	}
	defer ra.Close()
	rb, err := openFS(fsys, b)
	if err != nil {
		return false, err
	}
	defer rb.Close()
	bufA, bufB := make([]byte, 1<<16), make([]byte, 1<<16)
	for {
		na, errA := io.ReadFull(ra, bufA)
		nb, errB := io.ReadFull(rb, bufB)
		if !bytes.Equal(bufA[:na], bufB[:nb]) {
			return false, nil
		}
		endA := errA == io.EOF || errA == io.ErrUnexpectedEOF
		endB := errB == io.EOF || errB == io.ErrUnexpectedEOF
		switch {
		case endA && endB:
			return true, nil
		case endA != endB:
			return false, nil
		case errA != nil:
			return false, errA
		case errB != nil:
			return false, errB
		}
	}
}

// openFS opens name in fsys, decompressing it when it is gzip.
func openFS(fsys fs.FS, name string) (io.ReadCloser, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	br := bufio.NewReaderSize(f, 1<<16)
	if magic, _ := br.Peek(2); bytes.Equal(magic, []byte{0x1f, 0x8b}) {
		zr, err := gzip.NewReader(br)
		if err != nil {
			f.Close()
			return nil, err
		}
		return &readCloser{Reader: zr, closers: []io.Closer{zr, f}}, nil
	}
	return &readCloser{Reader: br, closers: []io.Closer{f}}, nil
}
