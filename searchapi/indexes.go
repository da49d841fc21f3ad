package searchapi

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/r2med/r2med/highlight"
	"github.com/r2med/r2med/index"
	"github.com/r2med/r2med/retrieve"
)

// IndexFile is an index file to serve and the name its retrievers take.
type IndexFile struct {
	Name string
	Path string
}

// Ext is the extension index files are named with; a name given without
// NAME= is the file's base name without it.
const Ext = ".idx"

var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// ParseIndexArgs reads index arguments: PATH or NAME=PATH, a directory
// standing for its *.idx files (named by their base names, in name
// order). Names are letters, digits, '.', '_' and '-', and unique.
func ParseIndexArgs(args []string) ([]IndexFile, error) {
	var out []IndexFile
	for _, a := range args {
		name, path, named := strings.Cut(a, "=")
		if !named {
			name, path = "", a
		}
		if path == "" {
			return nil, fmt.Errorf("index %q: give a file (NAME=PATH or PATH)", a)
		}
		st, err := os.Stat(path)
		if err != nil {
			return nil, fmt.Errorf("index %s: %w", path, errors.Unwrap(err))
		}
		if st.IsDir() {
			if named {
				return nil, fmt.Errorf("index %q: a directory serves each of its %s files under its own name; name files one by one", a, Ext)
			}
			files, err := filepath.Glob(filepath.Join(path, "*"+Ext))
			if err != nil {
				return nil, err
			}
			if len(files) == 0 {
				return nil, fmt.Errorf("index directory %s holds no %s files (r2med index build --task all --out %s writes them)", path, Ext, path)
			}
			slices.Sort(files)
			for _, f := range files {
				out = append(out, IndexFile{Name: strings.TrimSuffix(filepath.Base(f), Ext), Path: f})
			}
			continue
		}
		if !named {
			name = strings.TrimSuffix(filepath.Base(path), Ext)
		}
		out = append(out, IndexFile{Name: name, Path: path})
	}
	seen := map[string]string{}
	for _, f := range out {
		if !nameRE.MatchString(f.Name) {
			return nil, fmt.Errorf("index %s: name %q: use letters, digits, '.', '_' and '-' (NAME=PATH names a file)", f.Path, f.Name)
		}
		if p, dup := seen[f.Name]; dup {
			return nil, fmt.Errorf("indexes %s and %s are both named %q; name one with NAME=PATH", p, f.Path, f.Name)
		}
		seen[f.Name] = f.Path
	}
	return out, nil
}

// EmbedsQueries reports whether any of the files holds vectors, whose
// retrievers embed queries (and so use the embedding cache). Files that
// do not open are left to Open to report.
func EmbedsQueries(files []IndexFile) bool {
	for _, f := range files {
		ix, err := index.Open(f.Path)
		if err != nil {
			continue
		}
		dense := ix.Meta().Dense != nil
		ix.Close()
		if dense {
			return true
		}
	}
	return false
}

// DenseSuffix names the dense retriever of a file that holds BM25
// postings too: "NAME:dense".
const DenseSuffix = ":dense"

// corpus is the documents one or more index files were built from.
type corpus struct {
	name   string // the first file's name
	digest string
	task   string // the task the documents came from (index Meta.Source)
	ix     *index.Index
	// lamer is an R2MED BM25 over the corpus, which gives LameR's prompt
	// its passages as run's does; nil when none is loaded.
	lamer *retriever
	// maxID is the longest document id's length (answer estimates).
	maxID int
	// terms is a BM25 part over the corpus with the service's default
	// analyzer, whose postings say which query terms a document holds
	// (matched_terms) when the request's retrievers have none; nil when
	// no file holds one.
	terms *retriever
}

// retriever is one searchable part of an index file.
type retriever struct {
	name     string
	kind     string // "bm25" or "dense"
	file     IndexFile
	ix       *index.Index // the file's
	corpus   *corpus      // set per state: files of one corpus share it
	r        retrieve.Retriever
	settings map[string]any
	// spec is the retriever the part reproduces (BM25's, the dense
	// recipe's), whose rules (name, tie order) the plan follows.
	spec retrieve.Spec
	// hl highlights with the retriever's analyzer (BM25); nil for dense.
	hl       *highlight.Highlighter
	analyzer string // BM25: its analyzer's name
}

// loaded is one index file opened, with the retrievers built on it.
// States (state.go) share it while the file is unchanged; the last to let
// go closes it.
type loaded struct {
	file  IndexFile
	ix    *index.Index
	parts []retriever // corpus unset
	// bad is a section failing its checksum that the retrievers do not
	// need (the documents' texts): the file serves rankings, /healthz
	// reports it.
	bad  error
	refs atomic.Int32
}

func (l *loaded) retain() { l.refs.Add(1) }

func (l *loaded) release() {
	if l.refs.Add(-1) == 0 {
		l.close()
	}
}

func (l *loaded) close() error {
	var errs []error
	for _, r := range l.parts {
		errs = append(errs, retrieve.Close(r.r))
	}
	return errors.Join(append(errs, l.ix.Close())...)
}

// load opens an index file and builds its retrievers: its BM25 postings
// and its vectors, each searched as run searches them. Every section's
// checksum is checked now, so /healthz knows of a damaged one.
func (s *Service) load(ctx context.Context, f IndexFile) (_ *loaded, err error) {
	ix, err := index.Open(f.Path)
	if err != nil {
		return nil, err
	}
	l := &loaded{file: f, ix: ix}
	l.refs.Store(1)
	defer func() {
		if err != nil {
			l.close()
		}
	}()
	m := ix.Meta()
	if m.BM25 != nil {
		r, err := retrieve.IndexBM25(ix, retrieve.Env{})
		if err != nil {
			return nil, err
		}
		an, _ := ix.Analyzer() // checked by IndexBM25
		spec := retrieve.BM25{Analyzer: m.BM25.Analyzer, Params: m.BM25.Params()}
		l.parts = append(l.parts, retriever{name: f.Name, kind: "bm25", file: f, ix: ix, r: r, settings: spec.Describe(), spec: spec, hl: highlight.New(an), analyzer: m.BM25.Analyzer})
	}
	if m.Dense != nil {
		spec, err := retrieve.StoredDense(m.Dense.Recipe)
		if err != nil {
			return nil, fmt.Errorf("index %s: %w", f.Path, err)
		}
		s.opt.Dense.apply(&spec)
		docs, err := ix.Dense(spec.Quantize)
		if err != nil {
			return nil, err
		}
		env := s.opt.Env
		env.Record = s.metrics.embedRecorder() // its own: the counts are its cache's totals
		r, err := spec.Over(ctx, task(ix), docs, env)
		if err != nil {
			return nil, fmt.Errorf("index %s: the dense retriever: %w", f.Path, err)
		}
		name := f.Name
		if m.BM25 != nil {
			name += DenseSuffix
		}
		l.parts = append(l.parts, retriever{name: name, kind: "dense", file: f, ix: ix, r: r, settings: spec.Describe(), spec: spec})
	}
	l.bad = ix.CheckSections()
	return l, nil
}

// task is the task an index's documents came from.
func task(ix *index.Index) string {
	t, _ := ix.Meta().Source["task"].(string)
	return t
}

// doc returns the text of the document with the given id.
func (c *corpus) doc(id string) (string, bool, error) {
	i, ok := c.ix.Lookup(id)
	if !ok {
		return "", false, nil
	}
	d, err := c.ix.Doc(i)
	return d.Text, err == nil, err
}

// DenseOptions complete a stored dense recipe with what recipes never
// record.
type DenseOptions struct {
	// BaseURLs are the embedding servers for HTTP backends (one, or a
	// fleet of servers of the model); empty: the backend's default or
	// environment ($OPENAI_BASE_URL).
	BaseURLs []string
	// ModelDir is a local ONNX model directory; empty: the Hub cache's
	// copy of a registry model.
	ModelDir string
}

func (o DenseOptions) apply(d *retrieve.Dense) {
	if len(o.BaseURLs) > 0 {
		d.BaseURLs = o.BaseURLs
	}
	if o.ModelDir != "" {
		d.ModelDir = o.ModelDir
	}
}
