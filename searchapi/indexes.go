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
}

// retriever is one searchable part of an index file.
type retriever struct {
	name     string
	kind     string // "bm25" or "dense"
	file     IndexFile
	corpus   *corpus
	r        retrieve.Retriever
	settings map[string]any
	// spec is the retriever the part reproduces (BM25's, the dense
	// recipe's), whose rules (name, tie order) the plan follows.
	spec retrieve.Spec
	// hl highlights with the retriever's analyzer (BM25); nil for dense.
	hl *highlight.Highlighter
}

func (s *Service) open(ctx context.Context, f IndexFile) error {
	ix, err := index.Open(f.Path)
	if err != nil {
		return err
	}
	s.files = append(s.files, ix)
	m := ix.Meta()
	c := s.corpusOf(ix, f.Name)
	add := func(r *retriever) error {
		if o, dup := s.byName[r.name]; dup {
			return fmt.Errorf("index %s: retriever name %q is taken by %s; name the file with NAME=PATH", f.Path, r.name, o.file.Path)
		}
		s.byName[r.name] = r
		s.retrievers = append(s.retrievers, r)
		return nil
	}
	if m.BM25 != nil {
		r, err := retrieve.IndexBM25(ix, retrieve.Env{})
		if err != nil {
			return err
		}
		an, _ := ix.Analyzer() // checked by IndexBM25
		spec := retrieve.BM25{Analyzer: m.BM25.Analyzer, Params: m.BM25.Params()}
		rt := &retriever{name: f.Name, kind: "bm25", file: f, corpus: c, r: r, settings: spec.Describe(), spec: spec, hl: highlight.New(an)}
		if err := add(rt); err != nil {
			return err
		}
		if def := retrieve.DefaultBM25(); c.lamer == nil && spec.Analyzer == def.Analyzer && spec.Params == def.Params {
			c.lamer = rt
		}
	}
	if m.Dense != nil {
		spec, err := retrieve.StoredDense(m.Dense.Recipe)
		if err != nil {
			return fmt.Errorf("index %s: %w", f.Path, err)
		}
		s.opt.Dense.apply(&spec)
		docs, err := ix.Dense(spec.Quantize)
		if err != nil {
			return err
		}
		r, err := spec.Over(ctx, c.task, docs, s.opt.Env)
		if err != nil {
			return fmt.Errorf("index %s: the dense retriever: %w", f.Path, err)
		}
		name := f.Name
		if m.BM25 != nil {
			name += DenseSuffix
		}
		if err := add(&retriever{name: name, kind: "dense", file: f, corpus: c, r: r, settings: spec.Describe(), spec: spec}); err != nil {
			retrieve.Close(r)
			return err
		}
	}
	return nil
}

// corpusOf finds the corpus an index was built from among those already
// open, or adds it.
func (s *Service) corpusOf(ix *index.Index, name string) *corpus {
	m := ix.Meta()
	for _, c := range s.corpora {
		if c.digest == m.CorpusSHA256 {
			return c
		}
	}
	task, _ := m.Source["task"].(string)
	c := &corpus{name: name, digest: m.CorpusSHA256, task: task, ix: ix}
	s.corpora = append(s.corpora, c)
	return c
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

// highlighter is the highlighter of the first lexical retriever among rs,
// else the service's default analyzer's.
func (s *Service) highlighter(rs []*retriever) *highlight.Highlighter {
	for _, r := range rs {
		if r.hl != nil {
			return r.hl
		}
	}
	return s.defaultHL
}
