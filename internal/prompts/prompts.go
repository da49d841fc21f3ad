// Package prompts holds sets of editable prompt templates: files embedded
// in the binary, each replaceable by the file of the same name in a
// directory the user edits, with a digest of the texts in use (for
// manifests and for keys that must change when a prompt does). expand's
// GAR prompts and rerank's reasoning-reranker prompts are such sets.
package prompts

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/r2med/r2med/internal/errtext"
	"github.com/r2med/r2med/internal/fileio"
)

// Embedded is where a file of a Set came from when no directory
// overrides it.
const Embedded = "embedded"

// Set is the text of every file of a template set.
type Set struct {
	files map[string][]byte
	// Sources says where each file came from: Embedded or its path.
	Sources map[string]string
	digest  string
}

// Load reads the files names from fsys under root and replaces each by the
// file of the same name in dir, when dir is not empty and has it. A file
// in dir with one of exts (".tmpl", ".json") that is not one of names is
// an error, so a misspelt override does not go unnoticed; other files are
// ignored.
func Load(fsys fs.FS, root string, names []string, dir string, exts ...string) (*Set, error) {
	s := &Set{files: map[string][]byte{}, Sources: map[string]string{}}
	for _, name := range names {
		b, err := fs.ReadFile(fsys, path.Join(root, name))
		if err != nil {
			return nil, err
		}
		s.files[name], s.Sources[name] = b, Embedded
	}
	if dir != "" {
		ents, err := os.ReadDir(dir)
		if err != nil {
			return nil, fmt.Errorf("templates directory: %w", err)
		}
		for _, e := range ents {
			name := e.Name()
			if e.IsDir() || strings.HasPrefix(name, ".") {
				continue
			}
			if _, ok := s.files[name]; !ok {
				for _, ext := range exts {
					if strings.HasSuffix(name, ext) {
						return nil, fmt.Errorf("%s: not a template file name; the names are %s", filepath.Join(dir, name), strings.Join(names, ", "))
					}
				}
				continue
			}
			p := filepath.Join(dir, name)
			b, err := os.ReadFile(p)
			if err != nil {
				return nil, err
			}
			check := errtext.CheckFile
			if strings.HasSuffix(name, ".json") {
				check = errtext.CheckJSONFile
			}
			if err := check(p, b); err != nil {
				return nil, err
			}
			s.files[name], s.Sources[name] = b, p
		}
	}
	h := sha256.New()
	for _, name := range names {
		fmt.Fprintf(h, "%s\x00%d\x00", name, len(s.files[name]))
		h.Write(s.files[name])
	}
	s.digest = hex.EncodeToString(h.Sum(nil))
	return s, nil
}

// Bytes is a file's content as read.
func (s *Set) Bytes(name string) []byte { return s.files[name] }

// Text is a file's content without its one trailing newline: editors end
// files with "\n", which is not part of the prompt, so a prompt may end in
// "Passage: ".
func (s *Set) Text(name string) string { return strings.TrimSuffix(string(s.files[name]), "\n") }

// Digest is a SHA-256 over every file's name, length and content, in the
// order of Load's names.
func (s *Set) Digest() string { return s.digest }

// Write copies the embedded files names (from fsys under root) into dir,
// to edit and pass back to Load. It refuses to overwrite a file and
// returns the paths written so far.
func Write(fsys fs.FS, root string, names []string, dir string) ([]string, error) {
	var written []string
	for _, name := range names {
		p := filepath.Join(dir, name)
		if _, err := os.Stat(p); err == nil {
			return written, fmt.Errorf("%s exists; remove it or choose another directory", p)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return written, err
		}
		b, err := fs.ReadFile(fsys, path.Join(root, name))
		if err != nil {
			return written, err
		}
		if err := fileio.WriteAtomic(p, func(w io.Writer) error { _, err := w.Write(b); return err }); err != nil {
			return written, err
		}
		written = append(written, p)
	}
	return written, nil
}
