package dataset

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/r2med/r2med/internal/errtext"
	"github.com/r2med/r2med/internal/fileio"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/trec"
)

// Options tunes Load.
type Options struct {
	// Split picks the BEIR qrels file qrels/<Split>.tsv; empty means "test".
	// R2MED tasks are test-only: Split must be empty or "test" for them.
	Split string
	// Name overrides Task.Name, which is otherwise the directory's base name.
	Name string
	// AllowMissingDocs accepts judgments of documents the corpus lacks, as in
	// a deliberately sampled corpus such as R2MED's demo files. They stay in
	// Task.Qrels, so they count as relevant documents no system can retrieve,
	// which is what trec_eval does with the full qrels. Without it such
	// judgments are an error, since they usually mean mismatched files.
	// Exclusions of such documents are accepted alike.
	AllowMissingDocs bool
	// Exclude names an exclusions file (see ExclusionsFile) whose pairs
	// are added to the task's own: its queries' excluded_ids fields and
	// the ExclusionsFile of its directory.
	Exclude string
}

// DefaultSplit is the BEIR split evaluated when Options.Split is empty.
const DefaultSplit = "test"

const needFiles = "an R2MED task needs corpus.jsonl, query.jsonl and qrels.jsonl (or TREC qrels.txt); " +
	"a BEIR task needs corpus.jsonl, queries.jsonl and qrels/<split>.tsv; any of them may be gzipped with .gz added"

// source is a task directory seen through an fs.FS, with the names errors
// and Task.Files should show for its files.
type source struct {
	fsys fs.FS
	root string              // path inside fsys
	show func(string) string // root-relative slash path → displayed path
}

func (s source) full(rel string) string { return path.Join(s.root, rel) }

// find returns the name under which rel exists, plain or gzipped; both at
// once is an error (fileio.FindFS), since they may differ.
func (s source) find(rel string) (string, bool, error) {
	sub, err := fs.Sub(s.fsys, s.root)
	if err != nil {
		return "", false, err
	}
	return fileio.FindFS(sub, rel, s.show)
}

// open opens rel, decompressing it when it is gzip; like fileio.Open, it
// goes by the magic bytes, not the name.
func (s source) open(rel string) (io.ReadCloser, error) {
	f, err := s.fsys.Open(s.full(rel))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.show(rel), unwrapPath(err))
	}
	br := bufio.NewReaderSize(f, 1<<16)
	if magic, _ := br.Peek(2); bytes.Equal(magic, []byte{0x1f, 0x8b}) {
		zr, err := gzip.NewReader(br)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("%s: not a readable gzip file: %v", s.show(rel), err)
		}
		ra := newReadahead(zr)
		return struct {
			io.Reader
			io.Closer
		}{ra, closers{ra, zr, f}}, nil
	}
	return struct {
		io.Reader
		io.Closer
	}{br, f}, nil
}

type closers []io.Closer

func (cs closers) Close() error {
	var first error
	for _, c := range cs {
		if err := c.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// unwrapPath drops the fs-relative path a PathError carries, since the
// message names the real path already.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func dirSource(dir string) (source, error) {
	return osDirSource(dir, "task directory", "; "+needFiles)
}

func fsSource(fsys fs.FS, root string) (source, error) {
	return subFSSource(fsys, root, "task directory", "; "+needFiles)
}

// osDirSource and subFSSource open a task directory or a dataset
// repository alike; what names it in errors and notDir is appended to the
// one for a path that is not a directory.
func osDirSource(dir, what, notDir string) (source, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return source{}, fmt.Errorf("%s %s: %w", what, dir, unwrapPath(err))
	}
	if !st.IsDir() {
		return source{}, fmt.Errorf("%s %s is not a directory%s", what, dir, notDir)
	}
	return source{
		fsys: os.DirFS(dir),
		root: ".",
		show: func(rel string) string { return filepath.Join(dir, filepath.FromSlash(rel)) },
	}, nil
}

func subFSSource(fsys fs.FS, root, what, notDir string) (source, error) {
	if !fs.ValidPath(root) {
		return source{}, fmt.Errorf("%s %q is not a valid fs.FS path (slash-separated, unrooted, no . or .. elements)", what, root)
	}
	st, err := fs.Stat(fsys, root)
	if err != nil {
		return source{}, fmt.Errorf("%s %s: %w", what, root, unwrapPath(err))
	}
	if !st.IsDir() {
		return source{}, fmt.Errorf("%s %s is not a directory%s", what, root, notDir)
	}
	return source{fsys: fsys, root: root, show: func(rel string) string { return path.Join(root, rel) }}, nil
}

// DetectLayout tells which layout the task directory dir uses, from the
// query file it holds: query.jsonl for R2MED, queries.jsonl for BEIR.
func DetectLayout(dir string) (ir.Layout, error) {
	src, err := dirSource(dir)
	if err != nil {
		return "", err
	}
	return src.detect(dir)
}

// DetectLayoutFS is DetectLayout for the directory root of fsys.
func DetectLayoutFS(fsys fs.FS, root string) (ir.Layout, error) {
	src, err := fsSource(fsys, root)
	if err != nil {
		return "", err
	}
	return src.detect(root)
}

func (s source) detect(dir string) (ir.Layout, error) {
	_, r2med, err := s.find("query.jsonl")
	if err != nil {
		return "", err
	}
	_, beir, err := s.find("queries.jsonl")
	if err != nil {
		return "", err
	}
	switch {
	case r2med && beir:
		return "", fmt.Errorf("%s holds both query.jsonl (R2MED layout) and queries.jsonl (BEIR layout); keep the files of one layout per directory", dir)
	case r2med:
		return ir.LayoutR2MED, nil
	case beir:
		return ir.LayoutBEIR, nil
	}
	return "", fmt.Errorf("%s has no query file (query.jsonl or queries.jsonl); %s%s", dir, needFiles, s.tableHint())
}

// tableHint says what to do with a directory of parquet files (or JSON
// lines under config folders) that names no layout's files: it is a Hub
// repository's export, which its dataset card (README.md) describes.
func (s source) tableHint() string {
	found := ""
	_ = fs.WalkDir(s.fsys, s.root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || found != "" {
			return fs.SkipAll
		}
		if d.IsDir() && strings.Count(s.rel(p), "/") >= 2 {
			return fs.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(d.Name(), ".parquet") {
			found = s.rel(p)
		}
		return nil
	})
	if found == "" {
		return ""
	}
	return fmt.Sprintf("; it holds parquet files (%s), as a Hugging Face dataset repository does: copy the repository's README.md (its dataset card, whose configs say which files hold what) beside them, or give hf://datasets/OWNER/NAME", found)
}

// Load reads the task in directory dir, detecting its layout. Files may be
// gzip-compressed (corpus.jsonl.gz etc.). Task.Queries holds the queries
// that have judgments, in query-file order: for BEIR those of the chosen
// split, and for R2MED those pytrec_eval would score. Every judgment must
// name a known query and (unless Options.AllowMissingDocs) a known document.
func Load(dir string, opts Options) (*ir.Task, error) {
	src, err := dirSource(dir)
	if err != nil {
		return nil, err
	}
	if opts.Name == "" {
		abs, err := filepath.Abs(dir)
		if err != nil {
			abs = dir
		}
		opts.Name = filepath.Base(abs)
	}
	return src.load(dir, opts)
}

// LoadFS is Load over the directory root of fsys (an embedded demo task,
// say). File names in errors and Task.Files are root-joined fsys paths.
// Task.Name defaults to root's base name, or "" when root is ".".
func LoadFS(fsys fs.FS, root string, opts Options) (*ir.Task, error) {
	src, err := fsSource(fsys, root)
	if err != nil {
		return nil, err
	}
	if opts.Name == "" && root != "." {
		opts.Name = path.Base(root)
	}
	return src.load(root, opts)
}

// files are the root-relative names of a task's three inputs.
type files struct {
	corpus, queries, qrels string
	qrelsFormat            string // "jsonl", "trec" or "beir"
}

func (s source) locate(dir string, layout ir.Layout, split string) (files, error) {
	var f files
	var missing []string
	var ok bool
	var err error
	if f.corpus, ok, err = s.find("corpus.jsonl"); err != nil {
		return f, err
	} else if !ok {
		missing = append(missing, "corpus.jsonl")
	}
	switch layout {
	case ir.LayoutR2MED:
		// Every R2MED query is a test query, so "test" names the whole task
		// (and is what a split flag defaults to); any other split is a
		// mistake worth reporting rather than ignoring.
		if split != "" && split != DefaultSplit {
			return f, fmt.Errorf("%s: split %q given, but an R2MED task has only test queries (its qrels file holds every judgment); use the split %q or none", dir, split, DefaultSplit)
		}
		if f.queries, _, err = s.find("query.jsonl"); err != nil {
			return f, err
		}
		js, hasJS, err := s.find("qrels.jsonl")
		if err != nil {
			return f, err
		}
		txt, hasTxt, err := s.find("qrels.txt")
		if err != nil {
			return f, err
		}
		switch {
		case hasJS && hasTxt:
			// They may disagree, and picking one silently would hide that.
			return f, fmt.Errorf("%s holds both %s and %s; R2MED's code reads qrels.jsonl, so move qrels.txt away unless it is the one you mean", dir, js, txt)
		case hasJS:
			f.qrels, f.qrelsFormat = js, "jsonl"
		case hasTxt:
			f.qrels, f.qrelsFormat = txt, "trec"
		default:
			missing = append(missing, "qrels.jsonl (or qrels.txt)")
		}
	case ir.LayoutBEIR:
		if split == "" {
			split = DefaultSplit
		}
		if strings.ContainsAny(split, `/\`) || split == "." || split == ".." {
			return f, fmt.Errorf("%s: split %q is not a plain name such as test or dev", dir, split)
		}
		if f.queries, _, err = s.find("queries.jsonl"); err != nil {
			return f, err
		}
		rel := "qrels/" + split + ".tsv"
		if f.qrels, ok, err = s.find(rel); err != nil {
			return f, err
		} else if ok {
			f.qrelsFormat = "beir"
		} else {
			avail := s.splits()
			if len(missing) == 0 && len(avail) > 0 {
				return f, fmt.Errorf("%s has no qrels for split %q (%s does not exist); available splits: %s", dir, split, rel, strings.Join(avail, ", "))
			}
			missing = append(missing, rel)
		}
	}
	if len(missing) > 0 {
		return f, fmt.Errorf("%s (%s layout) is missing %s; %s", dir, layoutName(layout), strings.Join(missing, " and "), needFiles)
	}
	return f, nil
}

// splits lists the BEIR splits that have qrels files, for error messages.
func (s source) splits() []string {
	ents, err := fs.ReadDir(s.fsys, s.full("qrels"))
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		n := strings.TrimSuffix(e.Name(), ".gz")
		if strings.HasSuffix(n, ".tsv") && !e.IsDir() {
			out = append(out, strings.TrimSuffix(n, ".tsv"))
		}
	}
	return out
}

func (s source) load(dir string, opts Options) (*ir.Task, error) {
	layout, err := s.detect(dir)
	if err != nil {
		return nil, err
	}
	f, err := s.locate(dir, layout, opts.Split)
	if err != nil {
		return nil, err
	}
	t := &ir.Task{Name: opts.Name, Dir: dir, Layout: layout}
	if layout == ir.LayoutBEIR {
		t.Split = opts.Split
		if t.Split == "" {
			t.Split = DefaultSplit
		}
	}

	var docIDs map[string]int
	err = s.read(t, f.corpus, func(r io.Reader, name string) error {
		docIDs, err = readCorpus(r, name, layout, func(d ir.Doc) error {
			t.Corpus = append(t.Corpus, d)
			return nil
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	if len(t.Corpus) == 0 {
		return nil, fmt.Errorf("%s: no documents; the corpus file is empty", s.show(f.corpus))
	}

	var queries []ir.Query
	err = s.read(t, f.queries, func(r io.Reader, name string) error {
		queries, err = ReadQueries(r, name, layout)
		return err
	})
	if err != nil {
		return nil, err
	}

	err = s.read(t, f.qrels, func(r io.Reader, name string) error {
		switch f.qrelsFormat {
		case "jsonl":
			t.Qrels, err = ReadQrelsJSONL(r, name)
		case "trec":
			t.Qrels, err = trec.ReadQrels(r, name)
		default:
			t.Qrels, err = ReadBEIRQrels(r, name)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	qrelsName := s.show(f.qrels)
	if len(t.Qrels) == 0 {
		return nil, fmt.Errorf("%s: no judgments; a task needs at least one to be evaluated", qrelsName)
	}

	queryIDs := make(map[string]bool, len(queries))
	for _, q := range queries {
		queryIDs[q.ID] = true
	}
	locate := func(bad func(qid, did string) bool) (string, int, int) {
		return s.show(f.qrels), s.firstJudgment(f, bad), 0
	}
	if err := checkKnown(t.Qrels, queryIDs, nil, qrelsName, s.show(f.queries), locate); err != nil {
		return nil, err
	}
	if !opts.AllowMissingDocs {
		if err := checkKnown(t.Qrels, nil, docIDs, qrelsName, s.show(f.corpus), locate); err != nil {
			return nil, err
		}
	}
	ex, err := TakeExcluded(queries, s.show(f.queries))
	if err != nil {
		return nil, err
	}
	if rel, ok, err := s.find(ExclusionsFile); err != nil {
		return nil, err
	} else if ok {
		err := s.read(t, rel, func(r io.Reader, name string) error {
			more, err := ReadExclusions(r, name)
			ex = append(ex, more...)
			return err
		})
		if err != nil {
			return nil, err
		}
	}
	if opts.Exclude != "" {
		more, err := ReadExclusionsFile(opts.Exclude)
		if err != nil {
			return nil, err
		}
		ex = append(ex, more...)
		t.Files = append(t.Files, opts.Exclude)
	}
	if err := Exclude(t, ex, func(id string) bool { return queryIDs[id] }); err != nil {
		return nil, err
	}
	keepJudged(t, queries)
	return t, nil
}

// read opens rel, records it in t.Files and hands it to fn under its shown
// name.
func (s source) read(t *ir.Task, rel string, fn func(io.Reader, string) error) error {
	rc, err := s.open(rel)
	if err != nil {
		return err
	}
	defer rc.Close()
	name := s.show(rel)
	t.Files = append(t.Files, name)
	return fn(rc, name)
}

// maxListed is how many unknown ids an error quotes; the count says the rest.
const maxListed = 5

// checkKnown reports judgments whose query (queries != nil) or document
// (docs != nil) is unknown, quoting the first few ids in byte order so the
// message is the same on every run. locate, when not nil, finds the
// first judgment that bad says is such a one: its file and line, or its
// row in a table file (line and row 0 when it cannot), which the error
// then names.
func checkKnown(q ir.Qrels, queries map[string]bool, docs map[string]int, qrelsName, otherName string, locate Locate) error {
	unknown := make(map[string]bool)
	rows := 0
	for qid, m := range q {
		if queries != nil {
			if !queries[qid] {
				unknown[qid] = true
				rows += len(m)
			}
			continue
		}
		for did := range m {
			if _, ok := docs[did]; !ok {
				unknown[did] = true
				rows++
			}
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	ids := make([]string, 0, len(unknown))
	for id := range unknown {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	list := errtext.QuoteList(ids, maxListed)
	file, line, row := qrelsName, 0, 0
	if locate != nil {
		if f, l, r := locate(func(qid, did string) bool {
			if queries != nil {
				return !queries[qid]
			}
			_, ok := docs[did]
			return !ok
		}); l > 0 || r > 0 {
			file, line, row = f, l, r
		}
	}
	judgments := fmt.Sprintf("%d %s", rows, errtext.Plural(rows, "judgment", "judgments"))
	prefix := ""
	switch {
	case line > 0 && rows > 1:
		judgments += ", the first on this line"
	case row > 0:
		prefix = fmt.Sprintf("row %d: ", row)
		if rows > 1 {
			judgments += ", the first in this row"
		}
	}
	twin := floatTwin(ids, func(id string) bool {
		if queries != nil {
			return queries[id]
		}
		_, ok := docs[id]
		return ok
	}, otherName)
	if queries != nil {
		return fileio.Errorf(file, line, "%s%d judged %s not in %s (%s): %s; %sthe qrels must come from the same task as the queries",
			prefix, len(ids), errtext.Plural(len(ids), "query is", "queries are"), otherName, judgments, list, twin)
	}
	e := fileio.Errorf(file, line, "%s%d judged %s not in %s (%s): %s; %scheck that the qrels belong to this corpus, or, if the corpus is a deliberate sample, allow missing documents (they then count as relevant but unretrievable)",
		prefix, len(ids), errtext.Plural(len(ids), "document is", "documents are"), otherName, judgments, list, twin)
	e.Err = ErrMissingDocs
	return e
}

// floatTwin explains an unknown id whose other file has it written as a
// float ("1" and "1.0", either way round): ids are read by their text, and
// pandas writes an integer column that has a missing value as floats.
// It returns "" when no unknown id has such a twin.
func floatTwin(unknown []string, known func(string) bool, otherName string) string {
	for _, id := range unknown {
		other := id + ".0"
		if base, ok := strings.CutSuffix(id, ".0"); ok {
			other = base
		}
		if known(other) {
			return fmt.Sprintf("%s has %q where the qrels have %q: ids are compared as text, and pandas writes an integer column with a missing value as floats (1.0), so write the ids as strings in both files; ", otherName, other, id)
		}
	}
	return ""
}

// Locate finds the first judgment that bad says is wrong: the file it is
// in, and its line, or its row in a table file (parquet); line and row
// are 0 when it finds none.
type Locate func(bad func(qid, did string) bool) (file string, line, row int)

// firstJudgment reads the task's qrels file again, which has been read
// whole once, and returns the line of its first judgment that bad says
// is wrong, or 0 when none is (or the file cannot be read again). Only an
// error message needs it, so the readers keep no line numbers.
func (s source) firstJudgment(f files, bad func(qid, did string) bool) int {
	rc, err := s.open(f.qrels)
	if err != nil {
		return 0
	}
	defer rc.Close()
	lr := newLineReader(rc, s.show(f.qrels))
	qk, pk := keys{id: "q_id"}, keys{id: "p_id"}
	header := f.qrelsFormat == "beir"
	var fields []string
	for {
		line, ok := lr.Next()
		if !ok {
			return 0
		}
		var qid, did string
		switch f.qrelsFormat {
		case "jsonl":
			m, err := errtext.DecodeObject(line)
			if err != nil {
				return 0
			}
			if qid, err = idField(m, qk, "judgment"); err != nil {
				return 0
			}
			if did, err = idField(m, pk, "judgment"); err != nil {
				return 0
			}
		default: // BEIR's TSV (after its header) or TREC qrels
			fields = fileio.Fields(fields, string(line))
			if header {
				header = false
				continue
			}
			switch {
			case f.qrelsFormat == "beir" && len(fields) == 3:
				qid, did = fields[0], fields[1]
			case f.qrelsFormat == "trec" && len(fields) == 4:
				qid, did = fields[0], fields[2]
			default:
				return 0
			}
		}
		if bad(qid, did) {
			return lr.Line()
		}
	}
}

// ErrMissingDocs is the error (errors.Is) of qrels that judge documents
// the corpus lacks, when Options.AllowMissingDocs is not set.
var ErrMissingDocs = errors.New("judged documents missing from the corpus")

// keepJudged appends the queries with judgments to t.Queries, in file
// order, and counts the others: both layouts evaluate only judged queries.
// The exclusions of the others go with them.
func keepJudged(t *ir.Task, queries []ir.Query) {
	for _, q := range queries {
		if _, judged := t.Qrels[q.ID]; judged {
			t.Queries = append(t.Queries, q)
		} else {
			t.UnjudgedQueries++
			t.Unjudged = append(t.Unjudged, q.ID)
			delete(t.Excluded, q.ID)
		}
	}
}
