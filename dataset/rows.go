package dataset

import (
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strings"

	"github.com/r2med/r2med/ir"
)

// What follows lets readers of other layouts built on this package
// (hubrepo for Hugging Face dataset repositories, table for parquet and
// JSON tables) open files and read fields exactly as Load does, so an id,
// a text or a grade is held to the same rules whichever file it comes
// from.

// Dir is a directory of data files seen through an fs.FS: files are
// gzip-transparent and named in errors by the paths the user knows.
type Dir struct{ s source }

// OpenDir opens the directory dir; what names it in errors ("dataset
// repository") and notDir is appended to the error for a path that is
// not a directory.
func OpenDir(dir, what, notDir string) (Dir, error) {
	s, err := osDirSource(dir, what, notDir)
	return Dir{s}, err
}

// OpenDirFS is OpenDir for the directory root of fsys.
func OpenDirFS(fsys fs.FS, root, what, notDir string) (Dir, error) {
	s, err := subFSSource(fsys, root, what, notDir)
	return Dir{s}, err
}

// Show names the file rel (relative to the directory, slash-separated)
// in messages and Task.Files.
func (d Dir) Show(rel string) string { return d.s.show(rel) }

// Find returns the name under which rel exists, plain or gzipped; both at
// once is an error saying which to remove (fileio.FindFS).
func (d Dir) Find(rel string) (string, bool, error) { return d.s.find(rel) }

// Open opens rel, decompressing it when it is gzip (by its magic bytes,
// not its name).
func (d Dir) Open(rel string) (io.ReadCloser, error) { return d.s.open(rel) }

// OpenFile opens rel as it is on disk, undecompressed; errors name it.
func (d Dir) OpenFile(rel string) (fs.File, error) {
	f, err := d.s.fsys.Open(d.s.full(rel))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", d.s.show(rel), unwrapPath(err))
	}
	return f, nil
}

// Files lists every regular file whose path has no element starting with
// ".", relative and slash-separated, sorted. Snapshot directories hold
// symbolic links to the cache's blobs, so a link counts as the file it
// points to.
func (d Dir) Files() ([]string, error) {
	s := d.s
	var files []string
	err := fs.WalkDir(s.fsys, s.root, func(p string, de fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("%s: %w", s.show(s.rel(p)), unwrapPath(err))
		}
		if p == s.root {
			return nil
		}
		if strings.HasPrefix(de.Name(), ".") {
			if de.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		switch {
		case de.IsDir():
		case de.Type().IsRegular():
			files = append(files, s.rel(p))
		case de.Type()&fs.ModeSymlink != 0:
			if st, err := fs.Stat(s.fsys, p); err == nil && st.Mode().IsRegular() {
				files = append(files, s.rel(p))
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(files)
	return files, nil
}

// rel turns a path inside fsys into one relative to the source's root.
func (s source) rel(p string) string {
	if s.root == "." {
		return p
	}
	return strings.TrimPrefix(p, s.root+"/")
}

// IDKeys names a record's id field: ID, and AltID, another layout's
// spelling, named with Hint when a record has it instead.
type IDKeys struct {
	ID, AltID, Hint string
}

// ID reads a record's id field (a string, or a number taken by its
// literal text), non-empty and free of white space, as Load's readers do;
// what names the record in messages ("document", "judgment").
func ID(m map[string]json.RawMessage, k IDKeys, what string) (string, error) {
	return idField(m, keys{id: k.ID, altID: k.AltID, hint: k.Hint}, what)
}

// Text reads a string field; an empty string is data, a missing or null
// field is an error when required.
func Text(m map[string]json.RawMessage, key string, required bool) (string, error) {
	return stringField(m, key, required)
}

// Grade reads a judgment's grade: an integer, or a float with no fraction.
func Grade(raw json.RawMessage) (int, error) { return jsonGrade(raw) }

// ReadCorpusLines streams an R2MED- or BEIR-layout corpus file to fn like
// ReadCorpus, and returns the line of every document id.
func ReadCorpusLines(r io.Reader, name string, layout ir.Layout, fn func(ir.Doc) error) (map[string]int, error) {
	return readCorpus(r, name, layout, fn)
}

// CheckKnown reports judgments whose query (queries != nil) or document
// (docs != nil) is unknown, naming the first few ids; qrelsName and
// otherName name the files in the message. locate, when not nil, places
// the error at the first such judgment (Load places it at its line).
func CheckKnown(q ir.Qrels, queries map[string]bool, docs map[string]int, qrelsName, otherName string, locate Locate) error {
	return checkKnown(q, queries, docs, qrelsName, otherName, locate)
}

// KeepJudged appends the queries with judgments to t.Queries, in order,
// and counts the others in t.UnjudgedQueries (their ids in t.Unjudged).
func KeepJudged(t *ir.Task, queries []ir.Query) { keepJudged(t, queries) }

// LayoutName is the layout's name as its authors write it, for messages.
func LayoutName(l ir.Layout) string { return layoutName(l) }
