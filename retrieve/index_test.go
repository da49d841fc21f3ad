package retrieve_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/r2med/r2med/bm25"
	"github.com/r2med/r2med/dataset"
	"github.com/r2med/r2med/demo"
	"github.com/r2med/r2med/index"
	"github.com/r2med/r2med/internal/yamlx"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/retrieve"
	"github.com/r2med/r2med/trec"
)

// indexTasks are the demo task and, with the shared data, NFCorpus's test
// split (required under R2MED_CI=1).
func indexTasks(t *testing.T) []*ir.Task {
	t.Helper()
	task, err := demo.Load()
	if err != nil {
		t.Fatal(err)
	}
	ts := []*ir.Task{task}
	if _, err := os.Stat(shared); err != nil {
		if os.Getenv("R2MED_CI") == "1" {
			t.Fatalf("shared reference data not found at %s but R2MED_CI=1: %v", shared, err)
		}
		t.Logf("shared reference data not found at %s: NFCorpus cases skipped", shared)
		return ts
	}
	nf, err := dataset.Load(filepath.Join(shared, "nfcorpus"), dataset.Options{Split: "test"})
	if err != nil {
		t.Fatal(err)
	}
	return append(ts, nf)
}

// writeBM25Index writes task's BM25 index in the scheme as r2med index
// build does.
func writeBM25Index(t *testing.T, path string, task *ir.Task, sc bm25.Scheme) {
	t.Helper()
	ix, err := index.BuildBM25(task.Corpus, "lucene-english", bm25.DefaultParams(sc), bm25.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := index.Contents{Docs: task.Corpus, Source: map[string]any{"task": task.Name}, BM25: ix, Analyzer: "lucene-english"}
	if err := index.Write(path, c); err != nil {
		t.Fatal(err)
	}
}

// writeDenseIndex embeds task's corpus with d's recipe as the dense
// retriever does and writes the vectors with d's description as recipe.
func writeDenseIndex(t *testing.T, path string, task *ir.Task, d retrieve.Dense, quantized ...string) {
	t.Helper()
	flat, err := d.CorpusVectors(context.Background(), task, retrieve.Env{})
	if err != nil {
		t.Fatal(err)
	}
	c := index.Contents{Docs: task.Corpus, Source: map[string]any{"task": task.Name}, Dense: flat, Quantized: quantized, Recipe: d.Describe()}
	if err := index.Write(path, c); err != nil {
		t.Fatal(err)
	}
}

func searchWith(t *testing.T, spec retrieve.Spec, task *ir.Task, k int) ir.Run {
	t.Helper()
	ctx := context.Background()
	r, err := retrieve.New(ctx, spec, task, retrieve.Env{})
	if err != nil {
		t.Fatal(err)
	}
	defer retrieve.Close(r)
	run, err := r.Search(ctx, retrieve.Queries(task.Queries), k)
	if err != nil {
		t.Fatal(err)
	}
	// The serving path ranks as the batch.
	for _, q := range retrieve.Queries(task.Queries)[:min(5, len(task.Queries))] {
		one, err := retrieve.SearchOne(ctx, r, q, k)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(one, run[q.ID]) {
			t.Fatalf("%s query %s: SearchOne differs from Search", spec.Name(), q.ID)
		}
	}
	return run
}

// sameRunFile requires the two runs to write byte-identical TREC files,
// each ranked as listed (the retrievers' own order, ties included).
func sameRunFile(t *testing.T, label string, got, want ir.Run, tag string) {
	t.Helper()
	var g, w bytes.Buffer
	for _, c := range []struct {
		buf *bytes.Buffer
		run ir.Run
	}{{&g, got}, {&w, want}} {
		listed := make(ir.Run, len(c.run))
		for qid, hits := range c.run {
			listed[qid] = slices.Clone(hits)
		}
		listed.Rank(ir.TiesAsListed)
		if err := trec.WriteRun(c.buf, listed, tag); err != nil {
			t.Fatal(err)
		}
	}
	if g.Len() == 0 {
		t.Fatalf("%s: empty run", label)
	}
	if !bytes.Equal(g.Bytes(), w.Bytes()) {
		gl, wl := strings.Split(g.String(), "\n"), strings.Split(w.String(), "\n")
		for i := range min(len(gl), len(wl)) {
			if gl[i] != wl[i] {
				t.Fatalf("%s: line %d differs:\nindex:     %s\nin memory: %s", label, i+1, gl[i], wl[i])
			}
		}
		t.Fatalf("%s: %d lines, in memory %d", label, len(gl), len(wl))
	}
}

func parseIndex(t *testing.T, doc string) (retrieve.Spec, error) {
	t.Helper()
	return parse(t, "index: "+doc)
}

// TestIndexBM25MatchesInMemory: the index kind over a stored BM25 index
// ranks as the in-memory BM25 it was built for (the same run file, byte
// for byte) and takes its name, for the three schemes on the demo task
// and NFCorpus.
func TestIndexBM25MatchesInMemory(t *testing.T) {
	for _, task := range indexTasks(t) {
		for _, sc := range []bm25.Scheme{bm25.R2MED, bm25.Lucene, bm25.Robertson} {
			path := filepath.Join(t.TempDir(), "x.idx")
			writeBM25Index(t, path, task, sc)
			mem := retrieve.BM25{Analyzer: "lucene-english", Params: bm25.DefaultParams(sc)}
			spec, err := parseIndex(t, "{path: "+path+"}")
			if err != nil {
				t.Fatal(err)
			}
			if spec.Name() != mem.Name() {
				t.Errorf("%s: name %q, in memory %q", sc, spec.Name(), mem.Name())
			}
			if !reflect.DeepEqual(retrieve.Underlying(spec), mem) {
				t.Errorf("%s: stored spec %+v, want %+v", sc, retrieve.Underlying(spec), mem)
			}
			want := searchWith(t, mem, task, 100)
			got := searchWith(t, spec, task, 100)
			sameRunFile(t, fmt.Sprintf("%s %s", task.Name, sc), got, want, mem.Name())
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%s %s: runs differ", task.Name, sc)
			}
		}
	}
}

// TestIndexDenseMatchesInMemory: the index kind over stored vectors
// embeds queries with the stored recipe (through a loopback
// OpenAI-compatible server given only the base URL) and ranks exactly as
// the in-memory dense retriever, float32 and int8 with rescoring; and
// the quantized form may be chosen at search time.
func TestIndexDenseMatchesInMemory(t *testing.T) {
	task, err := demo.Load()
	if err != nil {
		t.Fatal(err)
	}
	srv := newEmbedServer(t)
	url := srv.URL + "/v1"
	for _, c := range []struct {
		build  retrieve.Dense
		stored []string
		keys   string // given beside path, part and base_url
		mem    retrieve.Dense
	}{
		{build: retrieve.Dense{Model: "bge", Backend: "openai"}, mem: retrieve.Dense{Model: "bge", Backend: "openai"}},
		{build: retrieve.Dense{Model: "bge", Backend: "openai", Quantize: "int8", Rescore: true}, stored: []string{"int8"},
			mem: retrieve.Dense{Model: "bge", Backend: "openai", Quantize: "int8", Rescore: true}},
		// int8 chosen when searching float32 vectors; the model restated.
		{build: retrieve.Dense{Model: "bge", Backend: "openai"}, keys: ", model: bge, quantize: int8, rescore: true",
			mem: retrieve.Dense{Model: "bge", Backend: "openai", Quantize: "int8", Rescore: true}},
		{build: retrieve.Dense{Model: "stand-in", Backend: "openai", MaxLength: 128}, stored: []string{"binary"}, keys: ", quantize: binary",
			mem: retrieve.Dense{Model: "stand-in", Backend: "openai", MaxLength: 128, Quantize: "binary"}},
	} {
		b := c.build
		b.BaseURLs = yamlx.Strings{url}
		path := filepath.Join(t.TempDir(), "dense.idx")
		writeDenseIndex(t, path, task, b, c.stored...)
		spec, err := parseIndex(t, "{path: "+path+", part: dense, base_url: "+url+c.keys+"}")
		if err != nil {
			t.Fatal(err)
		}
		mem := c.mem
		mem.BaseURLs = yamlx.Strings{url}
		if spec.Name() != mem.Name() || !retrieve.UsesCache(spec) {
			t.Errorf("name %q, in memory %q", spec.Name(), mem.Name())
		}
		if got := retrieve.Underlying(spec); !reflect.DeepEqual(got, mem) {
			t.Errorf("stored spec %+v, want %+v", got, mem)
		}
		want := searchWith(t, mem, task, 100)
		got := searchWith(t, spec, task, 100)
		sameRunFile(t, fmt.Sprintf("%+v", c.mem), got, want, mem.Name())
	}
}

// TestIndexDescribe: the description is the stored retriever's with the
// file's digest, which a rebuild keeps and other contents change; the
// file is the retriever's input.
func TestIndexDescribe(t *testing.T) {
	task, err := demo.Load()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	a, b, c := filepath.Join(dir, "a.idx"), filepath.Join(dir, "b.idx"), filepath.Join(dir, "c.idx")
	writeBM25Index(t, a, task, bm25.Lucene)
	writeBM25Index(t, b, task, bm25.Lucene)
	writeBM25Index(t, c, task, bm25.R2MED)
	describe := func(path string) map[string]any {
		s, err := parseIndex(t, path)
		if err != nil {
			t.Fatal(err)
		}
		return s.Describe()
	}
	da, db, dc := describe(a), describe(b), describe(c)
	if da["index_digest"] == nil || da["index_digest"] != db["index_digest"] || da["index_digest"] == dc["index_digest"] {
		t.Errorf("digests: rebuild %v vs %v, other scheme %v", da["index_digest"], db["index_digest"], dc["index_digest"])
	}
	mem := retrieve.BM25{Analyzer: "lucene-english", Params: bm25.DefaultParams(bm25.Lucene)}.Describe()
	delete(da, "index_digest")
	if !reflect.DeepEqual(da, mem) {
		t.Errorf("describe %v, want the stored BM25's %v", da, mem)
	}
	s, _ := parseIndex(t, a)
	if in, err := s.Inputs(task); err != nil || !reflect.DeepEqual(in, []string{a}) {
		t.Errorf("inputs %v %v", in, err)
	}

	// A path with {task} is read per task: named by the settings given
	// until then, and refused when the file says otherwise.
	tmpl := filepath.Join(dir, "{task}.idx")
	writeBM25Index(t, filepath.Join(dir, task.Name+".idx"), task, bm25.Lucene)
	s, err = parseIndex(t, "{path: '"+tmpl+"', scheme: lucene}")
	if err != nil {
		t.Fatal(err)
	}
	if s.Name() != "bm25-lucene" {
		t.Errorf("templated name %q", s.Name())
	}
	if _, err := retrieve.New(context.Background(), s, task, retrieve.Env{}); err != nil {
		t.Errorf("templated path: %v", err)
	}
	s, _ = parseIndex(t, "{path: '"+tmpl+"'}")
	if _, err := retrieve.Resolve(context.Background(), s, task); err == nil || !strings.Contains(err.Error(), "searches as bm25-lucene") {
		t.Errorf("templated path, unnamed scheme: %v", err)
	}
}

// TestIndexRefuses: an index of another corpus, a part the file lacks,
// settings that contradict the stored ones, bad YAML and a file changed
// under the run are refused with messages that say what to do.
func TestIndexRefuses(t *testing.T) {
	task, err := demo.Load()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	lex := filepath.Join(dir, "lex.idx")
	writeBM25Index(t, lex, task, bm25.R2MED)
	srv := newEmbedServer(t)
	vec := filepath.Join(dir, "vec.idx")
	writeDenseIndex(t, vec, task, retrieve.Dense{Model: "bge", Backend: "openai", BaseURLs: yamlx.Strings{srv.URL + "/v1"}})

	for _, c := range []struct{ doc, want string }{
		{"{path: " + lex + ", part: dense}", "index " + lex + " holds no dense vectors; build with --retriever dense"},
		{"{path: " + vec + "}", "index " + vec + " holds no BM25 postings; build with --retriever bm25"},
		{"{path: " + lex + ", scheme: lucene}", "built with scheme r2med, and --bm25 lucene (scheme: in a pipeline) contradicts it"},
		{"{path: " + lex + ", k1: 1.2}", "built with k1 0.9, and --k1 1.2"},
		{"{path: " + lex + ", analyzer: standard}", "built with analyzer lucene-english, and --analyzer standard"},
		{"{path: " + vec + ", part: dense, model: nv}", "built with model bge, and --model nv (model: in a pipeline) contradicts it"},
		{"{path: " + vec + ", part: dense, backend: tei}", "built with backend openai, and --backend tei"},
		{"{path: " + vec + ", part: dense, query_prefix: 'q: '}", `built with query_prefix none (the model's own), and --query-prefix "q: "`},
		{"{path: " + lex + ", colour: red}", "colour"},
		{"{path: " + lex + ", part: splade}", `index part "splade": want bm25`},
		{"{part: bm25}", "index needs path"},
		{"{path: " + filepath.Join(dir, "none.idx") + "}", "no such file"},
	} {
		_, err := parseIndex(t, c.doc)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.doc, err, c.want)
		}
	}

	// Another corpus: the task without its last document.
	other := *task
	other.Corpus = task.Corpus[:len(task.Corpus)-1]
	spec, err := parseIndex(t, lex)
	if err != nil {
		t.Fatal(err)
	}
	_, err = retrieve.New(context.Background(), spec, &other, retrieve.Env{})
	for _, want := range []string{"index " + lex + " was built from another corpus", "79 documents", "task=demo", "than task demo's (78 documents", "r2med index build --task demo --retriever bm25 --out " + lex} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("another corpus: %v, want %q", err, want)
		}
	}

	// A file rebuilt with other contents after the pipeline read it:
	// refused when opened, and when read again by Resolve, because the
	// run was named for what it held.
	writeBM25Index(t, lex, task, bm25.Lucene)
	if _, err := retrieve.New(context.Background(), spec, task, retrieve.Env{}); err == nil || !strings.Contains(err.Error(), "changed since the run read it") {
		t.Errorf("rebuilt file: %v", err)
	}
	if _, err := retrieve.Resolve(context.Background(), spec, task); err == nil || !strings.Contains(err.Error(), "searches as bm25-lucene") {
		t.Errorf("rebuilt file, read again: %v", err)
	}
}

// TestSearchIndexEntry: --index turns bm25 and dense entries into index
// entries with their keys, sets an index entry's path, leaves other
// kinds alone; an index entry's flags are its part's.
func TestSearchIndexEntry(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"bm25: {scheme: lucene}", "index: {path: x.idx, part: bm25, scheme: lucene}"},
		{"bm25: null", "index: {path: x.idx, part: bm25}"},
		{"dense: {base_url: http://a/v1}", "index: {path: x.idx, part: dense, base_url: http://a/v1}"},
		{"index: {path: y.idx, part: dense}", "index: {path: x.idx, part: dense}"},
		{"run: runs/x.trec", "run: runs/x.trec"},
	} {
		n, err := yamlx.Parse([]byte(c.in))
		if err != nil {
			t.Fatal(err)
		}
		w, _ := yamlx.Parse([]byte(c.want))
		converted := retrieve.SearchIndex(n, "x.idx")
		var got, want any
		if err := n.Decode(&got); err != nil {
			t.Fatal(err)
		}
		w.Decode(&want)
		if converted != strings.HasPrefix(c.want, "index") || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: converted %v to %v, want %v", c.in, converted, got, want)
		}
	}
	for in, want := range map[string]string{"index: {path: x}": "bm25", "index: {path: x, part: dense}": "dense", "dense: {}": "dense", "run: x": "run"} {
		n, _ := yamlx.Parse([]byte(in))
		if got := retrieve.FlagKind(n); got != want {
			t.Errorf("FlagKind(%s) = %q, want %q", in, got, want)
		}
	}
}

// TestStoredDense: a dense retriever's description reads back as the same
// settings; an unknown setting or no recipe is an error.
func TestStoredDense(t *testing.T) {
	qp, dp := "query: ", ""
	for _, d := range []retrieve.Dense{
		{Model: "bge"},
		{Model: "stand-in", Backend: "openai", QueryPrefix: &qp, DocPrefix: &dp, MaxLength: 512, Dimensions: 256, Normalize: true, Quantize: "int8", Rescore: true},
		{Model: "local", Backend: "onnx", Pooling: "mean", Quantize: "binary"},
	} {
		got, err := retrieve.StoredDense(d.Describe())
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got.Describe()) != fmt.Sprint(d.Describe()) {
			t.Errorf("%v read back as %v", d.Describe(), got.Describe())
		}
	}
	if _, err := retrieve.StoredDense(map[string]any{"model": "bge", "pooling_mode": "cls"}); err == nil || !strings.Contains(err.Error(), "pooling_mode") {
		t.Errorf("an unknown setting: %v", err)
	}
	if _, err := retrieve.StoredDense(nil); err == nil || !strings.Contains(err.Error(), "no recipe") {
		t.Errorf("no recipe: %v", err)
	}
}
