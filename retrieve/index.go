package retrieve

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"gopkg.in/yaml.v3"

	"github.com/r2med/r2med/index"
	"github.com/r2med/r2med/internal/yamlx"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/vector"
)

// Index searches one part of an index file (r2med index build): its BM25
// postings, or its document vectors with the recipe that made them. It
// ranks exactly as the in-memory retriever the file was built for — the
// BM25 of the stored analyzer and scheme, the dense retriever of the
// stored recipe — and takes that retriever's name, so a run over the
// index is the run building in memory gives, byte for byte.
//
// In a pipeline file the entry names the file and the part, beside the
// part's own keys:
//
//	retrieve:
//	  - index: {path: indexes/{task}.idx}                 # its BM25 part
//	  - index: {path: demo.idx, part: dense, base_url: http://gpu:8000/v1}
//
// The part's keys that the file records (bm25: scheme, k1, b, analyzer;
// dense: model, backend, prefixes, lengths, dimensions, normalize,
// pooling) may be given, and must then agree with it: the postings'
// weights and the vectors are fixed when the index is built. The dense
// keys a recipe never records (base_url, model_dir, batch_size,
// concurrency) say how queries reach the model; quantize and rescore
// choose how the stored float32 vectors are searched (the stored recipe's
// choice when not given).
//
// On the command line, `--index INDEX` turns the pipeline's bm25 and
// dense retrievers into index entries over INDEX (SearchIndex), and
// --retriever index:PATH names one.
type Index struct {
	// Path is the index file; {task} stands for the task's name.
	Path string
	// Part is what is searched: "bm25" or "dense".
	Part string
	// Settings are the part's keys as given (the part kind's spec: a BM25
	// or a Dense), Keys the keys given.
	Settings Spec
	Keys     []string

	file *indexFile // what the file holds; nil until read
}

// indexFile is what Index read from its file.
type indexFile struct {
	path   string
	digest string // index.Index.Digest
	spec   Spec   // the stored retriever, with the settings given that apply
	// docRevision is the revision of the model that embedded the
	// documents, as the dense recipe records it (model_revision).
	docRevision string
}

// Index parts.
const (
	PartBM25  = "bm25"
	PartDense = "dense"
)

func init() {
	Register(Kind{
		Name:   "index",
		Usage:  "index:PATH",
		Help:   "an index file from r2med index build: its BM25 part, or with --retriever dense --index PATH its vectors",
		Parse:  parseIndex,
		ArgKey: "path",
		// An index entry takes its part's flags (so --base-url reaches an
		// index's dense part).
		FlagsOf: func(value *yaml.Node) string {
			if p := yamlx.Get(value, "part"); p != nil && p.Kind == yaml.ScalarNode {
				return p.Value
			}
			return PartBM25
		},
		Flags: []Flag{{Name: "index", Rewrite: searchIndexes,
			Usage: "search this index file (r2med index build) instead of indexing or embedding the corpus: its BM25 postings for --retriever bm25, its vectors for --retriever dense (queries embedded by its recipe; --base-url and --model-dir say where the model is). Settings the index fixed (--bm25, --k1, --b, --analyzer, --model, --backend, prefixes, lengths) may be given only as it was built"}},
	})
}

// searchIndexes is what --index PATH does to a pipeline's retrieve:
// entries: its bm25 and dense entries search the index file (SearchIndex).
func searchIndexes(entries []*yaml.Node, path string) error {
	if path == "" {
		return errors.New("--index: give the index file (r2med index build --out INDEX writes one)")
	}
	n := 0
	for _, e := range entries {
		if SearchIndex(e, path) {
			n++
		}
	}
	if n == 0 {
		return fmt.Errorf("--index %s searches an index's bm25 or dense part, and the pipeline has neither retriever (--retriever bm25 or dense)", path)
	}
	return nil
}

// denseApplied are the dense keys that an index's recipe does not fix.
var denseApplied = []string{"base_url", "model_dir", "batch_size", "concurrency", "quantize", "rescore"}

func parseIndex(value *yaml.Node) (Spec, error) {
	x := Index{Part: PartBM25}
	rest := yamlx.Mapping()
	switch {
	case value == nil || value.Tag == "!!null":
		return nil, yamlx.Errorf(value, "index needs a file: index: {path: INDEX, part: bm25|dense}")
	case value.Kind == yaml.ScalarNode:
		x.Path = value.Value
	case value.Kind == yaml.MappingNode:
		for i := 0; i+1 < len(value.Content); i += 2 {
			k, v := value.Content[i], value.Content[i+1]
			switch k.Value {
			case "path", "part":
				if v.Kind != yaml.ScalarNode || v.Value == "" {
					return nil, yamlx.Errorf(v, "index %s takes a text, not %s", k.Value, yamlx.Describe(v))
				}
				if k.Value == "path" {
					x.Path = v.Value
				} else {
					x.Part = v.Value
				}
			default:
				rest.Content = append(rest.Content, k, v)
				x.Keys = append(x.Keys, k.Value)
			}
		}
	default:
		return nil, yamlx.Errorf(value, "index takes {path: INDEX, part: bm25|dense, …}, not %s", yamlx.Describe(value))
	}
	if x.Path == "" {
		return nil, yamlx.Errorf(value, "index needs path: the index file (r2med index build --out INDEX writes one)")
	}
	if x.Part != PartBM25 && x.Part != PartDense {
		return nil, yamlx.Errorf(yamlx.Get(value, "part"), "index part %q: want bm25 (the postings) or dense (the vectors)", x.Part)
	}
	k, _ := Lookup(x.Part)
	s, err := k.Parse(rest)
	if err != nil {
		return nil, err
	}
	x.Settings = s
	sort.Strings(x.Keys)
	if x.templated() {
		return x, nil // read per task, by Resolve
	}
	y, err := x.load(x.Path)
	if err != nil {
		return nil, yamlx.Errorf(value, "%v", err)
	}
	return y, nil
}

// SearchIndex makes a retrieve: entry search the index file at path: a
// bm25 or dense entry becomes an index entry of that part with the same
// keys, an index entry gets the path; it reports whether the entry is
// now an index entry (other kinds are left alone). This is what
// `--index PATH` does to a pipeline.
func SearchIndex(entry *yaml.Node, path string) bool {
	if entry == nil || entry.Kind != yaml.MappingNode || len(entry.Content) != 2 {
		return false
	}
	kind, value := entry.Content[0].Value, entry.Content[1]
	switch kind {
	case "index":
		if value.Kind != yaml.MappingNode {
			entry.Content[1] = yamlx.Mapping()
		}
		yamlx.Set(entry.Content[1], "path", yamlx.Text(path))
		return true
	case PartBM25, PartDense:
		m := yamlx.Mapping()
		yamlx.Set(m, "path", yamlx.Text(path))
		yamlx.Set(m, "part", yamlx.Text(kind))
		if value != nil && value.Kind == yaml.MappingNode {
			m.Content = append(m.Content, value.Content...)
		}
		entry.Content[0] = yamlx.Text("index")
		entry.Content[1] = m
		return true
	}
	return false
}

func (x Index) templated() bool { return strings.Contains(x.Path, "{task}") }

func (x Index) path(task string) string { return strings.ReplaceAll(x.Path, "{task}", task) }

// load reads the file at path: the stored retriever of x's part, checked
// against the settings given.
func (x Index) load(path string) (Index, error) {
	ix, err := index.Open(path)
	if err != nil {
		return x, err
	}
	defer ix.Close()
	m := ix.Meta()
	f := &indexFile{path: path, digest: ix.Digest()}
	switch x.Part {
	case PartBM25:
		if m.BM25 == nil {
			return x, fmt.Errorf("index %s holds no BM25 postings; build with --retriever bm25 (or search its vectors: --retriever dense, part: dense)", path)
		}
		stored := BM25{Analyzer: m.BM25.Analyzer, Params: m.BM25.Params()}
		if err := x.agree(path, stored); err != nil {
			return x, err
		}
		f.spec = stored
	case PartDense:
		if m.Dense == nil {
			return x, fmt.Errorf("index %s holds no dense vectors; build with --retriever dense", path)
		}
		stored, err := StoredDense(m.Dense.Recipe)
		if err != nil {
			return x, fmt.Errorf("index %s: %w", path, err)
		}
		if err := x.agree(path, stored); err != nil {
			return x, err
		}
		given, _ := x.Settings.(Dense)
		for _, key := range x.Keys {
			if slices.Contains(denseApplied, key) {
				setField(&stored, key, field(given, key))
			}
		}
		if err := stored.Validate(); err != nil {
			return x, fmt.Errorf("index %s: %w", path, err)
		}
		f.spec = stored
		f.docRevision, _ = m.Dense.Recipe[modelRevisionKey].(string)
	}
	x.file = f
	return x, nil
}

// agree checks that the settings given that the index records are the
// ones it was built with.
func (x Index) agree(path string, stored Spec) error {
	k, _ := Lookup(x.Part)
	for _, key := range x.Keys {
		if x.Part == PartDense && slices.Contains(denseApplied, key) {
			continue
		}
		want, got := field(x.Settings, key), field(stored, key)
		if reflect.DeepEqual(want, got) {
			continue
		}
		flag := key
		for _, fl := range k.Flags {
			if fl.Key == key {
				flag = fl.Name
			}
		}
		return fmt.Errorf("index %s was built with %s %s, and --%s %s (%s: in a pipeline) contradicts it: the index fixed it when it was built; drop --%s to search the index as built, or rebuild the index with --%s %s",
			path, key, show(got), flag, show(want), key, flag, flag, show(want))
	}
	return nil
}

// field is the setting of a BM25 or Dense spec that key sets.
func field(s Spec, key string) any {
	switch s := s.(type) {
	case BM25:
		switch key {
		case "scheme":
			return string(s.Params.Scheme)
		case "k1":
			return s.Params.K1
		case "b":
			return s.Params.B
		case "analyzer":
			return s.Analyzer
		}
	case Dense:
		if f, ok := denseField(reflect.ValueOf(&s).Elem(), key); ok {
			return f.Interface()
		}
	}
	return nil
}

// setField sets the Dense field whose YAML key is key.
func setField(d *Dense, key string, v any) {
	if f, ok := denseField(reflect.ValueOf(d).Elem(), key); ok && v != nil {
		f.Set(reflect.ValueOf(v))
	}
}

func denseField(v reflect.Value, key string) (reflect.Value, bool) {
	t := v.Type()
	for i := range t.NumField() {
		if name, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ","); name == key {
			return v.Field(i), true
		}
	}
	return reflect.Value{}, false
}

// show writes a setting for a message: pointers followed, nothing as
// "none".
func show(v any) string {
	switch v := v.(type) {
	case *string:
		if v == nil {
			return "none (the model's own)"
		}
		return fmt.Sprintf("%q", *v)
	case string:
		if v == "" {
			return "none"
		}
		return v
	}
	return fmt.Sprint(v)
}

// Kind is "index".
func (x Index) Kind() string { return "index" }

// Name is the stored retriever's name ("bm25", "bm25-lucene", the dense
// model): a run over the index is named as the run it reproduces. Before
// the file is read (a path with {task}), it is the name the settings
// given make.
func (x Index) Name() string {
	if x.file != nil {
		return x.file.spec.Name()
	}
	if x.Settings == nil {
		return x.Part
	}
	return x.Settings.Name()
}

// Validate checks the path and part and, once the file is read, the
// stored retriever's settings.
func (x Index) Validate() error {
	if x.Path == "" {
		return errors.New("the index retriever needs the index file (--index INDEX)")
	}
	if x.Part != PartBM25 && x.Part != PartDense {
		return fmt.Errorf("index part %q: want bm25 or dense", x.Part)
	}
	if x.file != nil {
		return x.file.spec.Validate()
	}
	return nil
}

// Describe is the stored retriever's description with the index file's
// identity (index.Index.Digest, not its path or time): a rebuilt index
// with other contents is another retriever. For the dense part, the
// description's model_revision is the query model's, once resolved, and
// document_model_revision the one the recipe records for the documents'.
func (x Index) Describe() map[string]any {
	if x.file == nil {
		m := map[string]any{"retriever": x.Part, "index": x.Path}
		if x.Settings != nil {
			m = x.Settings.Describe()
			m["index"] = x.Path
		}
		return m
	}
	m := x.file.spec.Describe()
	m["index_digest"] = x.file.digest
	if x.file.docRevision != "" {
		m["document_model_revision"] = x.file.docRevision
	}
	return m
}

// Inputs is the index file, checksummed into manifests.
func (x Index) Inputs(task *ir.Task) ([]string, error) {
	if x.file != nil {
		return []string{x.file.path}, nil
	}
	return []string{x.path(task.Name)}, nil
}

// UsesCache is true for the dense part, whose queries are embedded.
func (x Index) UsesCache() bool { return x.Part == PartDense }

// Stored is the retriever the index reproduces (a BM25 or Dense, with the
// settings given that apply), once the file is read; else nil.
func (x Index) Stored() Spec {
	if x.file == nil {
		return nil
	}
	return x.file.spec
}

// Underlying is the spec whose ranking spec's retriever gives: an index's
// stored retriever, else spec itself.
func Underlying(spec Spec) Spec {
	if x, ok := spec.(Index); ok && x.file != nil {
		return x.file.spec
	}
	return spec
}

// Resolve reads the task's index file (the path with {task} replaced),
// which must still give the retriever the name announced before, and
// resolves the dense part's query model as the dense retriever resolves
// its model (Dense.Resolve: a --model-dir's version, a registry model's
// commits, those the recipe pinned), so that the description carries the
// model that embeds the queries beside the one that embedded the
// documents: another query model, or one changed, is another run.
func (x Index) Resolve(ctx context.Context, task *ir.Task) (Spec, error) {
	y, err := x.load(x.path(task.Name))
	if err != nil {
		return nil, err
	}
	if y.Name() != x.Name() {
		return nil, fmt.Errorf("index %s searches as %s, and the pipeline named its retriever %s before reading it: give the index's settings in the pipeline (e.g. --bm25, --model) so the run is named for what it searches",
			y.file.path, y.Name(), x.Name())
	}
	if d, ok := y.file.spec.(Dense); ok {
		if y.file.spec, err = d.Resolve(ctx, task); err != nil {
			return nil, fmt.Errorf("index %s: the model that embeds its queries: %w", y.file.path, err)
		}
	}
	return y, nil
}

// New opens the file and searches its part. It refuses a file built from
// another corpus than task's (index.CorpusDigest, what the writer
// records) or changed since it was read.
func (x Index) New(ctx context.Context, task *ir.Task, env Env) (Retriever, error) {
	if x.file == nil || x.file.path != x.path(task.Name) {
		s, err := x.Resolve(ctx, task)
		if err != nil {
			return nil, err
		}
		x = s.(Index)
	}
	var ix *index.Index
	var r Retriever
	err := env.Time("open index", func() error {
		var err error
		if ix, err = index.Open(x.file.path); err != nil {
			return err
		}
		if d := ix.Digest(); d != x.file.digest {
			return fmt.Errorf("index %s changed since the run read it (digest %.12s…, now %.12s…); run again", x.file.path, x.file.digest, d)
		}
		if err := CheckIndexCorpus(ix, task, x.Part); err != nil {
			return err
		}
		switch spec := x.file.spec.(type) {
		case BM25:
			if err := ix.CheckBM25(spec.Analyzer, spec.Params); err != nil {
				return err
			}
			r, err = IndexBM25(ix, env)
		case Dense:
			var docs vector.Index
			if docs, err = ix.Dense(spec.Quantize); err == nil {
				r, err = spec.Over(ctx, task.Name, docs, env)
			}
		}
		return err
	})
	if err != nil {
		if ix != nil {
			ix.Close()
		}
		return nil, err
	}
	return &indexRetriever{r: r, ix: ix}, nil
}

// CheckIndexCorpus refuses an index built from another corpus than
// task's, naming both and the command that rebuilds it.
func CheckIndexCorpus(ix *index.Index, task *ir.Task, part string) error {
	m := ix.Meta()
	d := index.CorpusDigest(task.Corpus)
	if d == m.CorpusSHA256 && ix.Len() == len(task.Corpus) {
		return nil
	}
	var src []string
	for _, k := range slices.Sorted(maps.Keys(m.Source)) {
		src = append(src, fmt.Sprintf("%s=%v", k, m.Source[k]))
	}
	from := "--task " + task.Name
	if task.Dir != "" {
		from = "--data " + task.Dir
		if task.Split != "" {
			from += " --split " + task.Split
		}
	}
	return fmt.Errorf("index %s was built from another corpus (%d documents, sha256 %.12s…, from %s) than task %s's (%d documents, sha256 %.12s…); rebuild it from this task: r2med index build %s --retriever %s --out %s",
		ix.Path(), ix.Len(), m.CorpusSHA256, strings.Join(src, " "), task.Name, len(task.Corpus), d, from, part, ix.Path())
}

// indexRetriever is a retriever over an open index file, which Close
// closes after it.
type indexRetriever struct {
	r  Retriever
	ix *index.Index
}

func (r *indexRetriever) Search(ctx context.Context, qs []Query, k int) (ir.Run, error) {
	return r.r.Search(ctx, qs, k)
}

func (r *indexRetriever) SearchOne(ctx context.Context, q Query, k int) ([]ir.Hit, error) {
	return SearchOne(ctx, r.r, q, k)
}

// Exhaustive is the wrapped retriever's.
func (r *indexRetriever) Exhaustive() bool { return exhaustive(r.r) }

// Close releases the retriever, then the file.
func (r *indexRetriever) Close() error {
	return errors.Join(Close(r.r), r.ix.Close())
}

// IndexBM25 is the retriever over an index file's BM25 part
// (index.Searcher: exactly the in-memory BM25's ranking). It keeps one
// searcher per worker (Env.Workers) and a single-query search waits for
// a free one: searching is CPU-bound, so more at once would only add
// memory and cache misses, and searchers kept for good are never rebuilt
// (a sync.Pool loses them to every other garbage collection, and a
// searcher's arrays are sized by the vocabulary). Search spreads a batch
// over them (stage "search"). The index must stay open while it is used.
func IndexBM25(ix *index.Index, env Env) (Retriever, error) {
	n := env.NumWorkers()
	b := &indexBM25{free: make(chan *index.Searcher, n), env: env, name: ix.Path()}
	for range n {
		s, err := ix.NewSearcher() // the first checks the postings and the analyzer
		if err != nil {
			return nil, err
		}
		b.free <- s
	}
	return b, nil
}

type indexBM25 struct {
	free chan *index.Searcher
	env  Env
	name string
}

// Exhaustive: BM25 scores every document (see Exhaustive).
func (b *indexBM25) Exhaustive() bool { return true }

// SearchOne ranks the corpus for q.Text.
func (b *indexBM25) SearchOne(ctx context.Context, q Query, k int) ([]ir.Hit, error) {
	var s *index.Searcher
	select {
	case s = <-b.free:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { b.free <- s }()
	return s.Search(q.Text, k), nil
}

// Search ranks the corpus for every query on the searchers at once.
func (b *indexBM25) Search(ctx context.Context, qs []Query, k int) (ir.Run, error) {
	hits := make([][]ir.Hit, len(qs))
	err := b.env.Time("search", func() error {
		bar := b.env.Progress.New(len(qs), "searching "+b.name)
		defer bar.Done()
		var next atomic.Int64
		var wg sync.WaitGroup
		for range min(cap(b.free), max(1, len(qs))) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s := <-b.free
				defer func() { b.free <- s }()
				for {
					i := int(next.Add(1) - 1)
					if i >= len(qs) || ctx.Err() != nil {
						return
					}
					hits[i] = s.Search(qs[i].Text, k)
					bar.Add(1)
				}
			}()
		}
		wg.Wait()
		return ctx.Err()
	})
	if err != nil {
		return nil, err
	}
	run := make(ir.Run, len(qs))
	for i, q := range qs {
		run[q.ID] = hits[i]
	}
	return run, nil
}

// StoredDense reads the dense retriever's settings from the recipe an
// index file records for its vectors: what Dense.Describe lists (model,
// backend, prefixes, lengths, dimensions, pooling, quantization), which
// is what run's manifest records for the retriever that made them, read
// by the dense kind's own parser, so an unknown setting is an error
// rather than ignored. Queries are embedded with them, so they match the
// stored documents' vectors: the model's revision the recipe records
// (model_revision, Dense.Resolve's), when it is the commits of a registry
// model of the Hub cache, pins the query model to those commits, whatever
// main names now.
func StoredDense(recipe map[string]any) (Dense, error) {
	if recipe == nil {
		return Dense{}, errors.New("its vectors carry no recipe, so there is no knowing how to embed queries for them; rebuild it recording the dense retriever's settings (r2med index build --retriever dense)")
	}
	m := maps.Clone(recipe)
	delete(m, "retriever") // Describe's kind marker
	revision, _ := m[modelRevisionKey].(string)
	delete(m, modelRevisionKey) // read, not set
	b, err := yaml.Marshal(m)
	if err != nil {
		return Dense{}, err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return Dense{}, err
	}
	kind, _ := Lookup(PartDense)
	spec, err := kind.Parse(doc.Content[0])
	if err != nil {
		return Dense{}, fmt.Errorf("its dense recipe: %w", err)
	}
	d, ok := spec.(Dense)
	if !ok {
		return Dense{}, fmt.Errorf("its dense recipe reads as a %s retriever", spec.Kind())
	}
	if err := d.Validate(); err != nil {
		return d, fmt.Errorf("its dense recipe: %w", err)
	}
	d.pin(revision)
	return d, nil
}
