package index

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/r2med/r2med/analysis"
	"github.com/r2med/r2med/bm25"
	"github.com/r2med/r2med/dataset"
	"github.com/r2med/r2med/demo"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/trec"
	"github.com/r2med/r2med/vector"
)

const shared = "../../shared/data"

func needShared(t testing.TB) {
	t.Helper()
	if _, err := os.Stat(shared); err != nil {
		if os.Getenv("R2MED_CI") == "1" {
			t.Fatalf("shared reference data not found at %s: %v", shared, err)
		}
		t.Skipf("shared reference data not found at %s: %v", shared, err)
	}
}

func demoTask(t testing.TB) *ir.Task {
	t.Helper()
	task, err := demo.Load()
	if err != nil {
		t.Fatal(err)
	}
	return task
}

func nfcorpus(t testing.TB) *ir.Task {
	t.Helper()
	needShared(t)
	task, err := dataset.Load(filepath.Join(shared, "nfcorpus"), dataset.Options{Split: "test"})
	if err != nil {
		t.Fatal(err)
	}
	return task
}

// searchAll runs every query through ix, top k, and returns the hits by
// document id, as a run.
func searchAll(t testing.TB, ix *bm25.Index, an analysis.Analyzer, ids []string, queries []ir.Query, k int) ir.Run {
	t.Helper()
	s := ix.NewSearcher()
	run := ir.Run{}
	var toks []string
	for _, q := range queries {
		toks = an.Analyze(toks[:0], q.Text)
		var hits []ir.Hit
		for _, h := range s.Search(toks, k) {
			hits = append(hits, ir.Hit{DocID: ids[h.Doc], Score: float64(h.Score)})
		}
		run[q.ID] = hits
	}
	return run
}

// sameRun requires two runs to be identical: same queries, same documents
// in the same order, scores equal to the bit.
func sameRun(t *testing.T, what string, got, want ir.Run) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d queries, want %d", what, len(got), len(want))
	}
	for qid, w := range want {
		g := got[qid]
		if len(g) != len(w) {
			t.Fatalf("%s: query %s: %d hits, want %d", what, qid, len(g), len(w))
		}
		for i := range w {
			if g[i].DocID != w[i].DocID || math.Float64bits(g[i].Score) != math.Float64bits(w[i].Score) {
				t.Fatalf("%s: query %s rank %d: %s %v, want %s %v", what, qid, i+1, g[i].DocID, g[i].Score, w[i].DocID, w[i].Score)
			}
		}
	}
}

func docIDs(docs []ir.Doc) []string {
	ids := make([]string, len(docs))
	for i, d := range docs {
		ids[i] = d.ID
	}
	return ids
}

func writeBM25(t testing.TB, task *ir.Task, analyzer string, p bm25.Params) (string, *bm25.Index) {
	t.Helper()
	mem, err := BuildBM25(task.Corpus, analyzer, p, bm25.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "bm25.idx")
	if err := Write(path, Contents{Docs: task.Corpus, BM25: mem, Analyzer: analyzer, Source: map[string]any{"task": task.Name}}); err != nil {
		t.Fatal(err)
	}
	return path, mem
}

// TestBM25MatchesInMemory: for each scheme, on the demo task and NFCorpus,
// the opened index (mapped and read into memory) gives exactly the top-100
// run of the in-memory index it was written from.
func TestBM25MatchesInMemory(t *testing.T) {
	tasks := []*ir.Task{demoTask(t)}
	if _, err := os.Stat(shared); err == nil || os.Getenv("R2MED_CI") == "1" {
		tasks = append(tasks, nfcorpus(t))
	}
	an, _ := analysis.Get("")
	for _, task := range tasks {
		for _, sc := range bm25.Schemes() {
			path, mem := writeBM25(t, task, "", bm25.DefaultParams(sc))
			want := searchAll(t, mem, an, docIDs(task.Corpus), task.Queries, 100)
			for _, o := range []Options{{}, {ReadAll: true}} {
				ix, err := OpenWith(path, o)
				if err != nil {
					t.Fatal(err)
				}
				b, err := ix.BM25()
				if err != nil {
					t.Fatal(err)
				}
				if err := ix.CheckBM25("", bm25.DefaultParams(sc)); err != nil {
					t.Fatal(err)
				}
				if err := ix.CheckCorpus(task.Corpus); err != nil {
					t.Fatal(err)
				}
				got := searchAll(t, b, an, ix.IDs(), task.Queries, 100)
				sameRun(t, task.Name+"/"+string(sc), got, want)
				if err := ix.Verify(); err != nil {
					t.Fatal(err)
				}
				ix.Close()
			}
		}
	}
}

// TestNFCorpusIndexMatchesR2MED checks the opened index against the run
// R2MED's own Python BM25 produced on NFCorpus (the reference the
// in-memory engine is held to): same documents in the same order.
func TestNFCorpusIndexMatchesR2MED(t *testing.T) {
	task := nfcorpus(t)
	path, _ := writeBM25(t, task, "", bm25.DefaultParams(bm25.R2MED))
	ix, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	b, err := ix.BM25()
	if err != nil {
		t.Fatal(err)
	}
	an, err := ix.Analyzer()
	if err != nil {
		t.Fatal(err)
	}
	got := searchAll(t, b, an, ix.IDs(), task.Queries, 100)
	want, err := trec.ReadRunFile(filepath.Join(shared, "eval-reference/nfcorpus.bm25.run"))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d queries, reference %d", len(got), len(want))
	}
	for qid, ref := range want {
		g := got[qid]
		if len(g) != len(ref) {
			t.Fatalf("query %s: %d hits, reference %d", qid, len(g), len(ref))
		}
		for i := range ref {
			if g[i].DocID != ref[i].DocID || math.Abs(g[i].Score-ref[i].Score) > 1e-4*math.Abs(ref[i].Score)+1e-6 {
				t.Fatalf("query %s rank %d: %s %.7f, reference %s %.7f", qid, i+1, g[i].DocID, g[i].Score, ref[i].DocID, ref[i].Score)
			}
		}
	}
}

// randomFlat returns unit-free random vectors for docs, in corpus order.
func randomFlat(t testing.TB, docs []ir.Doc, dim int, m vector.Metric) *vector.Flat {
	t.Helper()
	r := rand.New(rand.NewPCG(3, uint64(dim)))
	f := vector.NewFlat(dim, m)
	v := make([]float32, dim)
	for _, d := range docs {
		for j := range v {
			v[j] = float32(r.NormFloat64())
		}
		if err := f.Add(d.ID, v); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

func denseRun(t testing.TB, idx vector.Index, qs [][]float32, qids []string, k int, rescore bool) [][]vector.Hit {
	t.Helper()
	hits, err := idx.Search(qs, k, vector.SearchOptions{SkipSelf: true, QueryIDs: qids, Rescore: rescore})
	if err != nil {
		t.Fatal(err)
	}
	return hits
}

// TestDenseMatchesInMemory: float32, int8 and binary, with and without
// rescoring, stored or quantized at open, give exactly the in-memory
// hits (top 100, BEIR's self-skip on, as R2MED's dense runs search).
func TestDenseMatchesInMemory(t *testing.T) {
	tasks := []*ir.Task{demoTask(t)}
	if _, err := os.Stat(shared); err == nil || os.Getenv("R2MED_CI") == "1" {
		tasks = append(tasks, nfcorpus(t))
	}
	for _, task := range tasks {
		const dim = 96
		f := randomFlat(t, task.Corpus, dim, vector.Cosine)
		qs := make([][]float32, len(task.Queries))
		qids := make([]string, len(task.Queries))
		r := rand.New(rand.NewPCG(5, 5))
		for i, q := range task.Queries {
			qids[i] = q.ID
			qs[i] = make([]float32, dim)
			for j := range qs[i] {
				qs[i][j] = float32(r.NormFloat64())
			}
		}
		for _, stored := range [][]string{{"int8", "binary"}, nil} {
			path := filepath.Join(t.TempDir(), "dense.idx")
			recipe := map[string]any{"model": "test-embedder", "pooling": "mean", "normalize": true}
			if err := Write(path, Contents{Docs: task.Corpus, Dense: f, Quantized: stored, Recipe: recipe}); err != nil {
				t.Fatal(err)
			}
			ix, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			if m := ix.Meta().Dense; m.Dim != dim || m.Recipe["model"] != "test-embedder" || len(m.Stored) != 1+len(stored) {
				t.Fatalf("dense metadata %+v", m)
			}
			for _, c := range []struct {
				quant   string
				mem     vector.Index
				rescore bool
			}{
				{"float32", f, false},
				{"int8", vector.NewInt8(f), false},
				{"int8", vector.NewInt8(f), true},
				{"binary", vector.NewBinary(f), false},
				{"binary", vector.NewBinary(f), true},
			} {
				want := denseRun(t, c.mem, qs, qids, 100, c.rescore)
				got, err := ix.Dense(c.quant)
				if err != nil {
					t.Fatal(err)
				}
				if g := denseRun(t, got, qs, qids, 100, c.rescore); !slices.EqualFunc(g, want, func(a, b []vector.Hit) bool { return slices.Equal(a, b) }) {
					t.Fatalf("%s %s rescore=%v stored=%v: hits differ from the in-memory search", task.Name, c.quant, c.rescore, stored)
				}
			}
			if err := ix.Verify(); err != nil {
				t.Fatal(err)
			}
			ix.Close()
		}
	}
}

// TestDocsAndIDs: the document table returns every id and text as
// written, and they outlive Close.
func TestDocsAndIDs(t *testing.T) {
	task := demoTask(t)
	path, _ := writeBM25(t, task, "", bm25.DefaultParams(bm25.R2MED))
	ix, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	docs, err := ix.Docs()
	if err != nil {
		t.Fatal(err)
	}
	i, ok := ix.Lookup(task.Corpus[7].ID)
	ix.Close()
	if !slices.Equal(docs, task.Corpus) {
		t.Fatal("documents read back differ from those written")
	}
	if !ok || i != 7 {
		t.Fatalf("Lookup(%q) = %d, %v", task.Corpus[7].ID, i, ok)
	}
	if m := ix.Meta(); m.Docs != len(task.Corpus) || m.Source["task"] != task.Name || m.BM25.Analyzer != analysis.DefaultName {
		t.Fatalf("metadata %+v", m)
	}
}

// TestWriteIsDeterministic: the same contents give the same bytes,
// whatever the number of indexing workers.
func TestWriteIsDeterministic(t *testing.T) {
	task := demoTask(t)
	var files [][]byte
	for _, workers := range []int{1, 3} {
		mem, err := BuildBM25(task.Corpus, "", bm25.DefaultParams(bm25.Lucene), bm25.BuildOptions{Workers: workers})
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "x.idx")
		f := randomFlat(t, task.Corpus, 40, vector.Cosine)
		if err := Write(path, Contents{Docs: task.Corpus, BM25: mem, Dense: f, Quantized: []string{"int8", "binary"}, Recipe: map[string]any{"b": 1, "a": []any{"x", 2.5}}}); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, b)
	}
	if !bytes.Equal(files[0], files[1]) {
		t.Fatal("two writes of the same contents differ")
	}
}

func TestWriteRefusesBadContents(t *testing.T) {
	task := demoTask(t)
	mem, err := BuildBM25(task.Corpus, "", bm25.DefaultParams(bm25.R2MED), bm25.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dup := slices.Clone(task.Corpus)
	dup[5].ID = dup[2].ID
	shuffled := slices.Clone(task.Corpus)
	shuffled[0], shuffled[1] = shuffled[1], shuffled[0]
	lucene, err := bm25.Build(len(task.Corpus), func(i int, dst []string) []string { return append(dst, "x") }, bm25.DefaultParams(bm25.Lucene), bm25.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		c    Contents
		want string
	}{
		{"empty", Contents{BM25: mem}, "no documents"},
		{"nothing", Contents{Docs: task.Corpus}, "nothing to search by"},
		{"dup", Contents{Docs: dup, BM25: mem}, "documents 3 and 6 share the id"},
		{"count", Contents{Docs: task.Corpus[1:], BM25: mem}, "BM25 index has"},
		{"analyzer", Contents{Docs: task.Corpus, BM25: mem, Analyzer: "klingon"}, `unknown analyzer "klingon"`},
		{"order", Contents{Docs: shuffled, Dense: randomFlat(t, task.Corpus, 8, vector.Dot)}, "vectors must follow the corpus order"},
		{"quant", Contents{Docs: task.Corpus, Dense: randomFlat(t, task.Corpus, 8, vector.Dot), Quantized: []string{"int4"}}, `unknown quantization "int4"`},
		{"ties", Contents{Docs: task.Corpus, BM25: lucene}, "not built with the documents' ids"},
	} {
		path := filepath.Join(t.TempDir(), "x.idx")
		err := Write(path, c.c)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
		if _, serr := os.Stat(path); serr == nil {
			t.Errorf("%s: a file was left behind", c.name)
		}
	}
}

// TestWriteReplacesOnlyIndexes: Write replaces an index file or an empty
// file at its path, and refuses any other file (a corpus, a directory),
// leaving it as it was.
func TestWriteReplacesOnlyIndexes(t *testing.T) {
	task := demoTask(t)
	mem, err := BuildBM25(task.Corpus, "", bm25.DefaultParams(bm25.R2MED), bm25.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := Contents{Docs: task.Corpus, BM25: mem}
	dir := t.TempDir()
	corpus := filepath.Join(dir, "corpus.jsonl")
	text := []byte(`{"id":"d1","text":"aspirin"}` + "\n")
	if err := os.WriteFile(corpus, text, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Write(corpus, c); err == nil || !strings.Contains(err.Error(), `not an r2med index (it starts with "{\"id\":\"d")`) {
		t.Errorf("over a corpus: %v", err)
	}
	if b, _ := os.ReadFile(corpus); !bytes.Equal(b, text) {
		t.Errorf("the corpus became %.40q", b)
	}
	if err := Write(dir, c); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("over a directory: %v", err)
	}
	path := filepath.Join(dir, "x.idx")
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, what := range []string{"an empty file", "an index"} {
		if err := Write(path, c); err != nil {
			t.Fatalf("over %s: %v", what, err)
		}
	}
	if err := use(path); err != nil {
		t.Error(err)
	}
}

// TestWriteProgress: WriteWith reports every document once as it
// prepares it, in steps a bar can show (the build's second half, which
// went unreported), and an index of vectors alone reports them all.
func TestWriteProgress(t *testing.T) {
	const n = 1000
	docs := make([]ir.Doc, n)
	for i := range docs {
		docs[i] = ir.Doc{ID: fmt.Sprint("d", i), Text: fmt.Sprintf("aspirin trial %d", i%37)}
	}
	mem, err := BuildBM25(docs, "", bm25.DefaultParams(bm25.R2MED), bm25.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name     string
		c        Contents
		minCalls int
		step     int // the most documents reported at once
	}{
		{"bm25", Contents{Docs: docs, BM25: mem}, n / bm25.ProgressStep, bm25.ProgressStep},
		{"dense", Contents{Docs: docs, Dense: randomFlat(t, docs, 4, vector.Dot)}, 1, n},
	} {
		var calls, total int
		err := WriteWith(filepath.Join(t.TempDir(), "x.idx"), c.c, WriteOptions{Progress: func(d int) {
			calls++
			total += d
			if d > c.step {
				t.Errorf("%s: %d documents reported at once", c.name, d)
			}
		}})
		if err != nil {
			t.Fatal(err)
		}
		if total != n || calls < c.minCalls {
			t.Errorf("%s: %d calls reported %d documents of %d", c.name, calls, total, n)
		}
	}
}

// rewrite applies edit to the file's bytes, then, when fix is set,
// recomputes every checksum so that only the edit's meaning is tested.
func rewrite(t *testing.T, path string, fix bool, edit func(b []byte, secs map[string]section) []byte) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	secs, err := decodeHeader(b, uint64(len(b)), path)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]section{}
	for _, s := range secs {
		byName[s.name] = s
	}
	b = edit(b, byName)
	if fix {
		for i, s := range secs {
			s.crc = crc32.ChecksumIEEE(b[s.off : s.off+s.len])
			secs[i] = s
		}
		copy(b, encodeHeader(secs, uint64(len(b))))
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func copyFile(t *testing.T, src string) string {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "copy.idx")
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dst
}

// use opens path and touches everything: the error of the first step that
// fails.
func use(path string) error {
	ix, err := Open(path)
	if err != nil {
		return err
	}
	defer ix.Close()
	if _, err := ix.BM25(); ix.Meta().BM25 != nil && err != nil {
		return err
	}
	if _, err := ix.Doc(0); err != nil {
		return err
	}
	if _, _, _, err := ix.HeadTokens(nil, 0); err != nil {
		return err
	}
	if _, _, err := ix.DocTerms(0); err != nil {
		return err
	}
	for _, q := range []string{"float32", "int8", "binary"} {
		if _, err := ix.Dense(q); ix.Meta().Dense != nil && err != nil {
			return err
		}
	}
	return ix.Verify()
}

// TestRefusesCorruptFiles flips one byte in every section (and the
// header) and requires each flip to be caught, by Open for small sections
// and by first use for bulk ones, with a message naming the section.
func TestRefusesCorruptFiles(t *testing.T) {
	task := demoTask(t)
	mem, err := BuildBM25(task.Corpus, "", bm25.DefaultParams(bm25.Lucene), bm25.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	good := filepath.Join(t.TempDir(), "good.idx")
	f := randomFlat(t, task.Corpus, 70, vector.Cosine)
	if err := Write(good, Contents{Docs: task.Corpus, BM25: mem, Dense: f, Quantized: []string{"int8", "binary"}}); err != nil {
		t.Fatal(err)
	}
	if err := use(good); err != nil {
		t.Fatal(err)
	}
	ix, err := Open(good)
	if err != nil {
		t.Fatal(err)
	}
	secs := ix.secs
	ix.Close()
	if len(secs) != 26 {
		t.Errorf("%d sections; the test expects all 26 kinds present", len(secs))
	}
	for _, s := range secs {
		if s.len == 0 {
			continue
		}
		for _, at := range []uint64{0, s.len / 2, s.len - 1} {
			path := copyFile(t, good)
			rewrite(t, path, false, func(b []byte, _ map[string]section) []byte { b[s.off+at] ^= 0x10; return b })
			_, openErr := Open(path)
			err := use(path)
			want := "section " + s.name + ": checksum mismatch"
			if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "rebuild it with `r2med index build`") {
				t.Fatalf("byte %d of %s flipped: error %v, want %q", at, s.name, err, want)
			}
			if lazy := bulk[s.name]; lazy != (openErr == nil) {
				t.Errorf("byte %d of %s flipped: Open error %v (section checked lazily: %v)", at, s.name, openErr, lazy)
			}
		}
	}
	// The header.
	for _, at := range []int{17, 30, 100} {
		path := copyFile(t, good)
		rewrite(t, path, false, func(b []byte, _ map[string]section) []byte { b[at] ^= 1; return b })
		if _, err := Open(path); err == nil || !strings.Contains(err.Error(), "header checksum mismatch") && !strings.Contains(err.Error(), "the header says") {
			t.Errorf("header byte %d flipped: %v", at, err)
		}
	}
}

func TestRefusesTruncatedAndForeignFiles(t *testing.T) {
	task := demoTask(t)
	good, _ := writeBM25(t, task, "", bm25.DefaultParams(bm25.R2MED))
	full, _ := os.ReadFile(good)
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, n := range []int{0, 5, 23, 40, 500, len(full) / 2, len(full) - 1} {
		_, err := Open(write("cut.idx", full[:n]))
		want := "truncated"
		if n == 0 {
			want = "not an r2med index"
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("cut to %d bytes: %v, want %q", n, err, want)
		}
	}
	if _, err := Open(write("long.idx", append(slices.Clone(full), 0))); err == nil || !strings.Contains(err.Error(), "data was appended") {
		t.Errorf("one byte appended: %v", err)
	}
	if _, err := Open(write("foreign.idx", []byte("R2MEDVEC\x01\x00\x00\x00 some other file of ours"))); err == nil || !strings.Contains(err.Error(), `not an r2med index (starts with "R2MEDVEC"`) {
		t.Errorf("vector file: %v", err)
	}
	if _, err := Open(dir); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("directory: %v", err)
	}
	if _, err := Open(filepath.Join(dir, "missing.idx")); err == nil || !os.IsNotExist(errorsUnwrapAll(err)) {
		t.Errorf("missing file: %v", err)
	}
	// Another format version, checksums made consistent: refused for the
	// version, with what to do.
	path := copyFile(t, good)
	rewrite(t, path, false, func(b []byte, _ map[string]section) []byte {
		binary.LittleEndian.PutUint32(b[8:], Version+1)
		return b
	})
	if _, err := Open(path); err == nil || !strings.Contains(err.Error(), "format version 2; this build reads version 1: rebuild it with `r2med index build`") {
		t.Errorf("version 2: %v", err)
	}
}

func errorsUnwrapAll(err error) error {
	for {
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return err
		}
		err = u.Unwrap()
	}
}

// TestRefusesAnotherAnalyzer: an index built with one analyzer is refused
// for a search that asks for another, and an index whose recorded
// analyzer behaviour differs from this build's analyzer of the same name
// is refused outright.
func TestRefusesAnotherAnalyzer(t *testing.T) {
	task := demoTask(t)
	path, _ := writeBM25(t, task, "whitespace", bm25.DefaultParams(bm25.R2MED))
	ix, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	err = ix.CheckBM25("lucene-english", bm25.DefaultParams(bm25.R2MED))
	if err == nil || !strings.Contains(err.Error(), `was built with analyzer "whitespace", this search asks for "lucene-english": rebuild the index with --analyzer lucene-english`) {
		t.Errorf("other analyzer: %v", err)
	}
	err = ix.CheckBM25("whitespace", bm25.DefaultParams(bm25.Lucene))
	if err == nil || !strings.Contains(err.Error(), "was built with BM25 r2med (k1=0.9, b=0.4), this search asks for lucene") {
		t.Errorf("other scheme: %v", err)
	}
	if err := ix.CheckBM25("whitespace", bm25.DefaultParams(bm25.R2MED)); err != nil {
		t.Errorf("same settings refused: %v", err)
	}
	ix.Close()

	// The same name, analyzing differently (as after a change to the
	// analyzer): the recorded digest no longer matches.
	rewrite(t, path, true, func(b []byte, secs map[string]section) []byte {
		m := secs[secMeta]
		js := b[m.off : m.off+m.len]
		i := bytes.Index(js, []byte(`"analyzer_digest": "`)) + len(`"analyzer_digest": "`)
		copy(js[i:], strings.Repeat("0", 64))
		return b
	})
	ix, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if _, err := ix.Analyzer(); err == nil || !strings.Contains(err.Error(), `was built with a version of analyzer "whitespace" that analyzes text differently`) {
		t.Errorf("changed analyzer: %v", err)
	}
	if err := ix.CheckBM25("whitespace", bm25.DefaultParams(bm25.R2MED)); err == nil {
		t.Error("CheckBM25 accepted a changed analyzer")
	}

	// An analyzer this build does not know.
	rewrite(t, path, true, func(b []byte, secs map[string]section) []byte {
		m := secs[secMeta]
		js := b[m.off : m.off+m.len]
		i := bytes.Index(js, []byte(`"analyzer": "whitespace"`))
		copy(js[i:], `"analyzer": "whitesmoke"`)
		return b
	})
	ix2, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ix2.Close()
	if _, err := ix2.Analyzer(); err == nil || !strings.Contains(err.Error(), `was built with analyzer "whitesmoke", which this build does not know`) {
		t.Errorf("unknown analyzer: %v", err)
	}
}

func TestCheckCorpus(t *testing.T) {
	task := demoTask(t)
	path, _ := writeBM25(t, task, "", bm25.DefaultParams(bm25.R2MED))
	ix, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	other := slices.Clone(task.Corpus)
	other[3].Text += " edited"
	if err := ix.CheckCorpus(other); err == nil || !strings.Contains(err.Error(), "was built from another corpus") {
		t.Errorf("edited corpus: %v", err)
	}
	if err := ix.CheckCorpus(task.Corpus); err != nil {
		t.Error(err)
	}
	if _, err := ix.Flat(); err == nil || !strings.Contains(err.Error(), "has no vectors (built with --retriever bm25)") {
		t.Errorf("dense part of a BM25 index: %v", err)
	}
}

func TestVerifyChecksPadding(t *testing.T) {
	path, _ := writeBM25(t, demoTask(t), "", bm25.DefaultParams(bm25.R2MED))
	rewrite(t, path, false, func(b []byte, secs map[string]section) []byte {
		s := secs[secIDOff] // meta is followed by padding up to the next multiple of 64
		b[s.off-1] = 7
		return b
	})
	ix, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if err := ix.Verify(); err == nil || !strings.Contains(err.Error(), "non-zero padding before section docs.ids.off") {
		t.Errorf("padding: %v", err)
	}
}

// FuzzOpen: whatever the bytes — even with every checksum made to match —
// opening, using and verifying a file returns an error or works; it never
// panics, and a file that passes Verify searches without panicking.
func FuzzOpen(f *testing.F) {
	task := demoTask(f)
	task.Corpus = task.Corpus[:12]
	mem, err := BuildBM25(task.Corpus, "", bm25.DefaultParams(bm25.Lucene), bm25.BuildOptions{})
	if err != nil {
		f.Fatal(err)
	}
	good := filepath.Join(f.TempDir(), "good.idx")
	if err := Write(good, Contents{Docs: task.Corpus, BM25: mem, Dense: randomFlat(f, task.Corpus, 5, vector.Cosine), Quantized: []string{"int8", "binary"}}); err != nil {
		f.Fatal(err)
	}
	b, err := os.ReadFile(good)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b, 0, byte(0), false)
	f.Add(b, 700, byte(1), true)
	f.Add(b, 1500, byte(0x80), true)
	f.Add(b, 30, byte(0xff), true)
	f.Fuzz(func(t *testing.T, data []byte, at int, x byte, fix bool) {
		data = slices.Clone(data)
		if len(data) > 0 {
			data[(at%len(data)+len(data))%len(data)] ^= x
		}
		if secs, err := decodeHeader(data, uint64(len(data)), "f"); fix && err == nil {
			for i, s := range secs {
				secs[i].crc = crc32.ChecksumIEEE(data[s.off : s.off+s.len])
			}
			copy(data, encodeHeader(secs, uint64(len(data))))
		}
		path := filepath.Join(t.TempDir(), "f.idx")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if use(path) != nil {
			return
		}
		ix, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer ix.Close()
		if s, err := ix.NewSearcher(); err == nil {
			s.Search("fever with a rash", 5)
		}
	})
}
