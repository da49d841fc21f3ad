package main

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/r2med/r2med/dataset"
	"github.com/r2med/r2med/demo"
	"github.com/r2med/r2med/embed/embedtest"
	"github.com/r2med/r2med/hub/hubtest"
	"github.com/r2med/r2med/index"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/onnx/onnxtest"
	"github.com/r2med/r2med/trec"
)

// TestIndexBuildMatchesRun builds an index with `r2med index build`,
// searches it, and requires exactly the top-100 run `r2med run` writes
// for the same data and settings (same documents, order and scores to the
// bit: the two run files are byte-identical), for the three BM25 schemes
// on the demo task and NFCorpus.
func TestIndexBuildMatchesRun(t *testing.T) {
	type data struct {
		name  string
		flags []string
		task  func(t *testing.T) *ir.Task
	}
	sets := []data{{"demo", []string{"--task", "demo"}, func(t *testing.T) *ir.Task {
		task, err := demo.Load()
		if err != nil {
			t.Fatal(err)
		}
		return task
	}}}
	if _, err := os.Stat(shared); err == nil {
		nf := filepath.Join(shared, "nfcorpus")
		sets = append(sets, data{"nfcorpus", []string{"--data", nf, "--split", "test"}, func(t *testing.T) *ir.Task {
			task, err := dataset.Load(nf, dataset.Options{Split: "test"})
			if err != nil {
				t.Fatal(err)
			}
			return task
		}})
	} else if os.Getenv("R2MED_CI") == "1" {
		t.Fatalf("shared reference data not found at %s", shared)
	}
	for _, set := range sets {
		task := set.task(t)
		for _, sc := range []string{"r2med", "lucene", "robertson"} {
			dir := t.TempDir()
			idx := filepath.Join(dir, "x.idx")
			args := append([]string{"index", "build", "--quiet", "--bm25", sc, "--out", idx}, set.flags...)
			if _, stderr, code := r2med(t, "", args...); code != 0 {
				t.Fatalf("%s: exit %d: %s", strings.Join(args, " "), code, stderr)
			}
			args = append([]string{"run", "--quiet", "--bm25", sc, "--top-k", "100", "--out", filepath.Join(dir, "run")}, set.flags...)
			if _, stderr, code := r2med(t, "", args...); code != 0 {
				t.Fatalf("%s: exit %d: %s", strings.Join(args, " "), code, stderr)
			}
			runFile, err := os.ReadFile(filepath.Join(dir, "run", "run.trec"))
			if err != nil {
				t.Fatal(err)
			}
			// r2med run --index: the same run file, byte for byte, and the
			// same results (the stored scheme restated for lucene, left
			// to the index for the others).
			args = append([]string{"run", "--quiet", "--index", idx, "--top-k", "100", "--out", filepath.Join(dir, "runidx")}, set.flags...)
			if sc == "lucene" {
				args = append(args, "--bm25", sc)
			}
			if _, stderr, code := r2med(t, "", args...); code != 0 {
				t.Fatalf("%s: exit %d: %s", strings.Join(args, " "), code, stderr)
			}
			sameOutputs(t, set.name+" "+sc, filepath.Join(dir, "runidx"), filepath.Join(dir, "run"))
			first, _, _ := strings.Cut(string(runFile), "\n")
			tag := first[strings.LastIndexByte(first, ' ')+1:]
			ix, err := index.Open(idx)
			if err != nil {
				t.Fatal(err)
			}
			if err := ix.CheckCorpus(task.Corpus); err != nil {
				t.Fatal(err)
			}
			s, err := ix.NewSearcher()
			if err != nil {
				t.Fatal(err)
			}
			got := ir.Run{}
			for _, q := range task.Queries {
				got[q.ID] = s.Search(q.Text, 100)
			}
			got.Rank(ir.TiesByDocID) // as run's retrieval stage ranks it
			var buf bytes.Buffer
			if err := trec.WriteRun(&buf, got, tag); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(buf.Bytes(), runFile) {
				gl, wl := strings.Split(buf.String(), "\n"), strings.Split(string(runFile), "\n")
				for i := range min(len(gl), len(wl)) {
					if gl[i] != wl[i] {
						t.Fatalf("%s %s: line %d of the run differs:\nindex: %s\nrun:   %s", set.name, sc, i+1, gl[i], wl[i])
					}
				}
				t.Fatalf("%s %s: the index's run has %d lines, r2med run's %d", set.name, sc, len(gl), len(wl))
			}
			ix.Close()
		}
	}
}

func TestIndexInfo(t *testing.T) {
	idx := filepath.Join(t.TempDir(), "demo.idx")
	if _, stderr, code := r2med(t, "", "index", "build", "--quiet", "--task", "demo", "--bm25", "lucene", "--out", idx); code != 0 {
		t.Fatalf("build: exit %d: %s", code, stderr)
	}
	out, stderr, code := r2med(t, "", "index", "info", "--verify", idx)
	if code != 0 {
		t.Fatalf("info: exit %d: %s", code, stderr)
	}
	for _, want := range []string{"documents  79", "bm25       scheme lucene k1=0.9 b=0.4, analyzer lucene-english", "bm25.postdoc", "checked on first use", "verified   every checksum"} {
		if !strings.Contains(out, want) {
			t.Errorf("info output lacks %q:\n%s", want, out)
		}
	}
	out, _, code = r2med(t, "", "index", "info", "--json", idx)
	if code != 0 || !strings.Contains(out, `"scheme": "lucene"`) || !strings.Contains(out, `"format_version": 1`) {
		t.Errorf("info --json: exit %d:\n%s", code, out)
	}

	// A flipped byte in the middle of the file (the texts or postings):
	// --verify refuses, naming the section and what to do.
	b, err := os.ReadFile(idx)
	if err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(t.TempDir(), "bad.idx")
	b[len(b)/2] ^= 0x40
	if err := os.WriteFile(bad, b, 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code = r2med(t, "", "index", "info", "--verify", bad)
	if code == 0 || !strings.Contains(stderr, "checksum mismatch") || !strings.Contains(stderr, "rebuild it with `r2med index build`") {
		t.Errorf("info --verify of a corrupt file: exit %d: %s", code, stderr)
	}
}

// TestIndexBuildSweepsStrayTemporaries: a build killed while writing
// leaves ".NAME.tmp-*" beside its output; the next build to that
// directory removes it and says so.
func TestIndexBuildSweepsStrayTemporaries(t *testing.T) {
	dir := t.TempDir()
	stray := filepath.Join(dir, ".Biology.idx.tmp-4242")
	if err := os.WriteFile(stray, []byte("R2MEDIDX half a file"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := r2med(t, "", "index", "build", "--quiet", "--task", "demo", "--out", filepath.Join(dir, "demo.idx"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(stray); !os.IsNotExist(err) {
		t.Errorf("the stray temporary file is still there (%v)", err)
	}
	if !strings.Contains(stderr, "removed 1 temporary file an interrupted build left (.Biology.idx.tmp-4242)") {
		t.Errorf("stderr %q does not say what was removed", stderr)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*")); len(left) > 0 {
		t.Errorf("left %v", left)
	}
}

// TestIndexBuildIntoDirectory: --out naming an existing directory gets
// TASK.idx inside it, as with several tasks, where a build ran to the end
// and then failed to rename its file onto the directory ("file exists").
func TestIndexBuildIntoDirectory(t *testing.T) {
	dir := t.TempDir()
	out, stderr, code := r2med(t, "", "index", "build", "--quiet", "--task", "demo", "--out", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	idx := filepath.Join(dir, "demo.idx")
	if _, err := os.Stat(idx); err != nil || !strings.HasPrefix(out, idx+"\t") {
		t.Errorf("stdout %q, %s: %v", out, idx, err)
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(dir), ".*.tmp-*")); len(left) > 0 {
		t.Errorf("left %v", left)
	}
}

// TestIndexBuildIntoNewDirectory: --out ending in a slash is a directory,
// made if missing, with TASK.idx inside, where it left an empty directory
// and a message about renaming a temporary file onto it.
func TestIndexBuildIntoNewDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "indexes")
	out, stderr, code := r2med(t, "", "index", "build", "--quiet", "--task", "demo", "--out", dir+string(filepath.Separator))
	idx := filepath.Join(dir, "demo.idx")
	if code != 0 || !strings.HasPrefix(out, idx+"\t") {
		t.Fatalf("exit %d: %q %s", code, out, stderr)
	}
	if _, stderr, code := r2med(t, "", "index", "verify", idx); code != 0 {
		t.Error(stderr)
	}
}

func TestIndexBuildRefusesBadFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"index", "build", "--task", "demo"}, "--out INDEX is required"},
		{[]string{"index", "build", "--task", "demo", "--out", "x.idx", "--retriever", "splade"}, `--retriever "splade": want bm25, dense or bm25,dense`},
		{[]string{"index", "build", "--task", "demo", "--out", "x.idx", "--retriever", "dense"}, "--retriever dense: the dense retriever needs a model"},
		{[]string{"index", "build", "--task", "demo", "--out", "x.idx", "--model", "bge"}, "the dense flags (--model, --backend, …) make vectors: add --retriever dense"},
		{[]string{"index", "build", "--task", "demo", "--out", "x.idx", "--retriever", "dense", "--model", "bge", "--bm25", "lucene"}, "--bm25 sets BM25 postings, and --retriever dense builds none"},
		{[]string{"index", "build", "--task", "demo", "--out", "x.idx", "--bm25", "okapi"}, `unknown BM25 scheme "okapi"`},
		{[]string{"index", "info", "nowhere.idx"}, "no such file"},
	} {
		_, stderr, code := r2med(t, "", c.args...)
		if code == 0 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q, want %q", c.args, code, stderr, c.want)
		}
	}
}

// sameOutputs requires two run directories to hold byte-identical
// run.trec files and the same results.json but for the evaluation time.
func sameOutputs(t *testing.T, label, got, want string) {
	t.Helper()
	read := func(dir, name string) string {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	g, w := read(got, "run.trec"), read(want, "run.trec")
	if g == "" || g != w {
		gl, wl := strings.Split(g, "\n"), strings.Split(w, "\n")
		for i := range min(len(gl), len(wl)) {
			if gl[i] != wl[i] {
				t.Fatalf("%s: line %d of run.trec differs:\n--index: %s\nrun:     %s", label, i+1, gl[i], wl[i])
			}
		}
		t.Fatalf("%s: run.trec has %d lines with --index, %d without", label, len(gl), len(wl))
	}
	drop := regexp.MustCompile(`(?m)^.*"evaluation_time".*$`)
	if g, w := drop.ReplaceAllString(read(got, "results.json"), ""), drop.ReplaceAllString(read(want, "results.json"), ""); g != w {
		t.Fatalf("%s: results.json differs:\n--index: %s\nrun:     %s", label, g, w)
	}
}

// TestRunIndexDense builds dense indexes with r2med index build through a
// loopback OpenAI-compatible server and requires r2med run --index to
// write the run r2med run --retriever dense writes (float32, and int8
// with rescoring), with queries embedded by the stored recipe and only
// --base-url given; --retriever bm25,dense builds both parts into one
// file, which a fused run searches.
func TestRunIndexDense(t *testing.T) {
	srv := embedtest.NewServer(t, embedtest.Options{Dim: 16})
	dir := t.TempDir()
	cacheDir := filepath.Join(dir, "cache")
	dense := []string{"--model", "stand-in", "--backend", "openai", "--base-url", srv.URL}
	for _, c := range []struct {
		name  string
		build []string // besides the dense flags
		run   []string // r2med run's retriever flags besides the dense flags
		index []string // r2med run --index's flags
	}{
		{"float32", []string{"--retriever", "dense"}, []string{"--retriever", "dense"}, []string{"--retriever", "dense", "--base-url", srv.URL}},
		{"int8", []string{"--retriever", "dense", "--quantize", "int8", "--rescore"}, []string{"--retriever", "dense", "--quantize", "int8", "--rescore"},
			[]string{"--retriever", "dense", "--base-url", srv.URL}},
		{"both", []string{"--retriever", "bm25,dense", "--bm25", "lucene"}, []string{"--retriever", "bm25,dense", "--bm25", "lucene"},
			[]string{"--retriever", "bm25,dense", "--base-url", srv.URL, "--model", "stand-in"}},
	} {
		idx := filepath.Join(dir, c.name+".idx")
		args := append(append([]string{"index", "build", "--quiet", "--task", "demo", "--cache", cacheDir, "--out", idx}, c.build...), dense...)
		if out, stderr, code := r2med(t, "", args...); code != 0 || !strings.Contains(out, "79 vectors of 16 dimensions") {
			t.Fatalf("%s: exit %d: %s%s", strings.Join(args, " "), code, out, stderr)
		}
		first, err := os.ReadFile(idx)
		if err != nil {
			t.Fatal(err)
		}
		// A rebuild (from the cache) gives the same bytes.
		if _, stderr, code := r2med(t, "", args...); code != 0 {
			t.Fatalf("rebuild: %s", stderr)
		}
		if again, _ := os.ReadFile(idx); !bytes.Equal(first, again) {
			t.Errorf("%s: rebuilding changed the index's bytes", c.name)
		}
		mem := filepath.Join(dir, c.name, "run")
		args = append(append([]string{"run", "--quiet", "--task", "demo", "--cache", cacheDir, "--out", mem}, c.run...), dense...)
		if _, stderr, code := r2med(t, "", args...); code != 0 {
			t.Fatalf("%s: exit %d: %s", strings.Join(args, " "), code, stderr)
		}
		got := filepath.Join(dir, c.name, "index")
		args = append([]string{"run", "--quiet", "--task", "demo", "--cache", cacheDir, "--index", idx, "--out", got}, c.index...)
		if _, stderr, code := r2med(t, "", args...); code != 0 {
			t.Fatalf("%s: exit %d: %s", strings.Join(args, " "), code, stderr)
		}
		sameOutputs(t, c.name, got, mem)
	}
	// The dense part needs a --base-url only because the recipe never
	// records one; a contradicting model is refused.
	_, stderr, code := r2med(t, "", "run", "--quiet", "--task", "demo", "--no-cache", "--index", filepath.Join(dir, "float32.idx"),
		"--retriever", "dense", "--base-url", srv.URL, "--model", "bge", "--out", filepath.Join(dir, "x"))
	if code == 0 || !strings.Contains(stderr, "built with model stand-in, and --model bge (model: in a pipeline) contradicts it") {
		t.Errorf("contradicting --model: exit %d: %s", code, stderr)
	}
}

// TestRunIndexRefuses: r2med run --index refuses an index of another
// corpus, a part the file lacks and a flag the index contradicts, saying
// what to do.
func TestRunIndexRefuses(t *testing.T) {
	dir := t.TempDir()
	idx := filepath.Join(dir, "demo.idx")
	if _, stderr, code := r2med(t, "", "index", "build", "--quiet", "--task", "demo", "--out", idx); code != 0 {
		t.Fatal(stderr)
	}
	// Another corpus: the demo task's files with one document changed.
	task, err := demo.Load()
	if err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "other")
	docs := slices.Clone(task.Corpus)
	docs[0].Text += " (revised)"
	writeBEIR(t, other, docs, task)
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"--data", other}, []string{"index " + idx + " was built from another corpus (79 documents", "than task other's (79 documents", "r2med index build --data " + other}},
		{[]string{"--task", "demo", "--retriever", "dense", "--base-url", "http://127.0.0.1:1/v1"}, []string{"holds no dense vectors; build with --retriever dense"}},
		{[]string{"--task", "demo", "--bm25", "lucene"}, []string{"built with scheme r2med, and --bm25 lucene", "rebuild the index with --bm25 lucene"}},
		{[]string{"--task", "demo", "--retriever", "candidates:x"}, []string{"the pipeline has neither retriever"}},
	} {
		args := append([]string{"run", "--quiet", "--no-cache", "--index", idx, "--out", filepath.Join(dir, "out")}, c.args...)
		_, stderr, code := r2med(t, "", args...)
		for _, want := range c.want {
			if code == 0 || !strings.Contains(stderr, want) {
				t.Errorf("%v: exit %d: %s, want %q", c.args, code, stderr, want)
			}
		}
	}
}

// writeBEIR writes docs with task's queries and judgments in BEIR's
// layout (corpus.jsonl, queries.jsonl, qrels/test.tsv).
func writeBEIR(t *testing.T, dir string, docs []ir.Doc, task *ir.Task) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, "qrels"), 0o755); err != nil {
		t.Fatal(err)
	}
	var corpus, queries, qrels bytes.Buffer
	enc := json.NewEncoder(&corpus)
	for _, d := range docs {
		enc.Encode(map[string]string{"_id": d.ID, "title": "", "text": d.Text})
	}
	enc = json.NewEncoder(&queries)
	for _, q := range task.Queries {
		enc.Encode(map[string]string{"_id": q.ID, "text": q.Text})
	}
	qrels.WriteString("query-id\tcorpus-id\tscore\n")
	for _, qid := range slices.Sorted(maps.Keys(task.Qrels)) {
		for _, did := range slices.Sorted(maps.Keys(task.Qrels[qid])) {
			fmt.Fprintf(&qrels, "%s\t%s\t%d\n", qid, did, task.Qrels[qid][did])
		}
	}
	for name, b := range map[string][]byte{"corpus.jsonl": corpus.Bytes(), "queries.jsonl": queries.Bytes(), "qrels/test.tsv": qrels.Bytes()} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestRunIndexQueryModel: a dense index file's queries are embedded by a
// model resolved and recorded as the documents' was. Built from a
// registry model of the Hub cache, the index records the commit its
// documents were embedded with (model_revision in its recipe), and after
// a newer main is pulled its queries are still embedded at that commit:
// the run is the in-memory run made at that commit, byte for byte, with
// the commit recorded for both sides, where the queries were embedded by
// the newer main's model. Built with --model-dir and searched with it,
// the model replaced in its directory makes a run with other settings
// (refused, naming the model's revision), where the run was reused as
// unchanged; the same files in another directory are the same model. The encoders are encoder-reference's tiny
// ones (random weights: bge-tiny, then contriever-tiny's weights).
func TestRunIndexQueryModel(t *testing.T) {
	onnxtest.Require(t)
	needShared(t)
	ref := filepath.Join(shared, "encoder-reference")
	dir := t.TempDir()
	bgeAt := bgeHubCache(t, filepath.Join(dir, "hf"))
	bgeAt(oldCommit, "bge-tiny")
	old := oldCommit
	dense := []string{"--retriever", "dense", "--model", "bge", "--backend", "onnx"}
	run := func(out string, args ...string) (string, int) {
		t.Helper()
		_, stderr, code := r2med(t, "", append(append([]string{"run", "--quiet", "--task", "demo", "--no-cache", "--out", out}, dense...), args...)...)
		return stderr, code
	}
	mem := filepath.Join(dir, "memory")
	if stderr, code := run(mem); code != 0 {
		t.Fatal(stderr)
	}
	idx := filepath.Join(dir, "hub.idx")
	if _, stderr, code := r2med(t, "", append([]string{"index", "build", "--quiet", "--task", "demo", "--no-cache", "--out", idx}, dense...)...); code != 0 {
		t.Fatal(stderr)
	}
	bgeAt(newerCommit, "contriever-tiny")
	got := filepath.Join(dir, "index")
	if stderr, code := run(got, "--index", idx); code != 0 {
		t.Fatal(stderr)
	}
	sameOutputs(t, "hub model, main moved", got, mem)
	var m struct{ Config map[string]any }
	b, err := os.ReadFile(filepath.Join(got, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if m.Config["model_revision"] != old || m.Config["document_model_revision"] != old {
		t.Errorf("manifest: model_revision %v, document_model_revision %v; want the index's commit %s for both", m.Config["model_revision"], m.Config["document_model_revision"], old)
	}

	model := filepath.Join(dir, "model")
	put := func(from string) { onnxtest.WriteModel(t, filepath.Join(ref, from), model) }
	put("bge-tiny")
	local := filepath.Join(dir, "local.idx")
	if _, stderr, code := r2med(t, "", append([]string{"index", "build", "--quiet", "--task", "demo", "--no-cache", "--out", local, "--model-dir", model}, dense...)...); code != 0 {
		t.Fatal(stderr)
	}
	out := filepath.Join(dir, "local")
	if stderr, code := run(out, "--index", local, "--model-dir", model); code != 0 {
		t.Fatal(stderr)
	}
	other := filepath.Join(dir, "other")
	if err := os.CopyFS(other, os.DirFS(model)); err != nil {
		t.Fatal(err)
	}
	// The model is its files' content (models.LocalRevision): the same
	// files in another directory are the same model, whose run stands;
	// other weights in its directory are another.
	if stderr, code := run(out, "--index", local, "--model-dir", other); code != 0 {
		t.Errorf("the same model in another directory: exit %d: %s", code, stderr)
	}
	put("contriever-tiny")
	stderr, code := run(out, "--index", local, "--model-dir", model)
	if code == 0 || !strings.Contains(stderr, "other settings (model_revision") {
		t.Errorf("replaced: exit %d: %s", code, stderr)
	}
}

// The Hub cache commits a test moves main between.
const oldCommit, newerCommit = "1111111111111111111111111111111111111111", "2222222222222222222222222222222222222222"

// bgeHubCache makes a Hub cache at dir, in use for the test, and returns
// a function that puts the reference encoder from (under
// encoder-reference) into it as bge's checkpoint at commit, refs/main then
// naming that commit.
func bgeHubCache(t *testing.T, dir string) func(commit, from string) {
	hf := hubtest.NewCache(t, dir)
	hf.Use("")
	return func(commit, from string) {
		t.Helper()
		hf.Put("models/BAAI/bge-large-en-v1.5", commit, onnxtest.Files(t, filepath.Join(shared, "encoder-reference", from)))
	}
}

// TestIndexBuildReplacesOnlyIndexes: --out naming a file that is not an
// index (the corpus itself, a run file) is refused before anything is
// built, and the file is left as it was; an index file there, or an empty
// file, is replaced.
func TestIndexBuildReplacesOnlyIndexes(t *testing.T) {
	dir := t.TempDir()
	corpus := filepath.Join(dir, "corpus.jsonl")
	text := `{"id":"d1","text":"aspirin"}` + "\n"
	if err := os.WriteFile(corpus, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := r2med(t, "", "index", "build", "--quiet", "--task", "demo", "--out", corpus)
	if code == 0 || !strings.Contains(stderr, corpus+": the file there is not an r2med index") || !strings.Contains(stderr, "remove it or write the index elsewhere") {
		t.Errorf("--out over a corpus: exit %d: %s", code, stderr)
	}
	if b, err := os.ReadFile(corpus); err != nil || string(b) != text {
		t.Errorf("the corpus became %.40q (%v)", b, err)
	}
	idx := filepath.Join(dir, "demo.idx")
	for _, before := range []string{"", "index"} {
		if before == "" {
			if err := os.WriteFile(idx, nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if _, stderr, code := r2med(t, "", "index", "build", "--quiet", "--task", "demo", "--out", idx); code != 0 {
			t.Fatalf("build over an %s file: exit %d: %s", cmp.Or(before, "empty"), code, stderr)
		}
	}
	if _, stderr, code := r2med(t, "", "index", "info", "--verify", idx); code != 0 {
		t.Errorf("the replaced index: %s", stderr)
	}
}

// TestIndexVerifyAndInfoNumbers: `r2med index verify` checks every file it
// is given and says which fail, going on past a bad one; `index info`
// gives the file's size in bytes and each section's CRC-32, the checksum
// verify compares, in text and JSON, and its sections with the header
// add up to the file.
func TestIndexVerifyAndInfoNumbers(t *testing.T) {
	dir := t.TempDir()
	idx := filepath.Join(dir, "demo.idx")
	if _, stderr, code := r2med(t, "", "index", "build", "--quiet", "--task", "demo", "--out", idx); code != 0 {
		t.Fatalf("build: %s", stderr)
	}
	b, err := os.ReadFile(idx)
	if err != nil {
		t.Fatal(err)
	}
	out, stderr, code := r2med(t, "", "index", "verify", idx)
	if code != 0 || out != idx+"\tverified: every checksum, the postings and the analyzer\n" {
		t.Errorf("verify: exit %d: %q %s", code, out, stderr)
	}
	bad := filepath.Join(dir, "bad.idx")
	flipped := bytes.Clone(b)
	flipped[len(flipped)/2] ^= 0x40
	if err := os.WriteFile(bad, flipped, 0o644); err != nil {
		t.Fatal(err)
	}
	out, stderr, code = r2med(t, "", "index", "verify", bad, idx)
	if code == 0 || !strings.Contains(stderr, "index "+bad+": section") || !strings.Contains(stderr, "checksum mismatch") ||
		!strings.Contains(stderr, "1 of 2 index files failed verification") || !strings.Contains(out, idx+"\tverified") {
		t.Errorf("verify of a bad and a good file: exit %d:\n%s\n%s", code, out, stderr)
	}

	js, stderr, code := r2med(t, "", "index", "info", "--json", idx)
	if code != 0 {
		t.Fatalf("info --json: %s", stderr)
	}
	var info struct {
		Bytes    *int64 `json:"bytes"`
		Sections []struct {
			Name  string `json:"name"`
			Bytes int64  `json:"bytes"`
			CRC   string `json:"crc32"`
		} `json:"sections"`
	}
	if err := json.Unmarshal([]byte(js), &info); err != nil {
		t.Fatal(err)
	}
	if info.Bytes == nil || *info.Bytes != int64(len(b)) {
		t.Errorf("info --json bytes %v, the file has %d", info.Bytes, len(b))
	}
	text, _, _ := r2med(t, "", "index", "info", idx)
	var sum int64
	for _, s := range info.Sections {
		sum += s.Bytes
		if !regexp.MustCompile(`^[0-9a-f]{8}$`).MatchString(s.CRC) {
			t.Errorf("section %s: crc32 %q", s.Name, s.CRC)
		}
		if !regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(s.Name) + ` .* crc32 ` + s.CRC + `  `).MatchString(text) {
			t.Errorf("info lacks section %s's crc32 %s:\n%s", s.Name, s.CRC, text)
		}
	}
	// The header is 24 bytes, 48 per section and a 4-byte checksum, and
	// each section starts on a 64-byte boundary: what is not a section is
	// less than 64 bytes before each of them, and the header.
	header := int64(24 + 48*len(info.Sections) + 4)
	if pad := int64(len(b)) - sum - header; pad < 0 || pad >= 64*int64(len(info.Sections)) {
		t.Errorf("sections %d bytes and header %d of a %d-byte file", sum, header, len(b))
	}
	if !strings.Contains(text, fmt.Sprintf("(format version 1, %d bytes, ", len(b))) {
		t.Errorf("info does not give the file's bytes:\n%s", text)
	}
}

// TestIndexCountsAgree: the counts build and info print are the corpus's
// (one document of one word: 1 document, 1 term, 1 posting, 1 token) and
// in the singular where they are one.
func TestIndexCountsAgree(t *testing.T) {
	dir := writeR2MEDTask(t, "one", `{"id":"d1","text":"the aspirin"}`+"\n", `{"id":"q1","text":"aspirin"}`+"\n", `{"q_id":"q1","p_id":"d1","score":1}`+"\n")
	idx := filepath.Join(t.TempDir(), "one.idx")
	out, stderr, code := r2med(t, "", "index", "build", "--quiet", "--data", dir, "--out", idx)
	if code != 0 || !strings.HasPrefix(out, idx+"\tone\t1 document\t1 term\t1 posting\t") {
		t.Errorf("build: exit %d: %q %s", code, out, stderr)
	}
	info, _, _ := r2med(t, "", "index", "info", idx)
	if !strings.Contains(info, "documents  1 (corpus sha256") || !strings.Contains(info, ", 1 term, 1 posting, 1 token\n") {
		t.Errorf("info:\n%s", info)
	}
}

// TestHumanBytesRoundsIntoTheNextUnit: a size that rounds to 1024 of a
// unit is 1.0 of the next (1048575 bytes is 1.0 MiB, not "1024.0 KiB"),
// as index build, index info and cache stats print sizes.
func TestHumanBytesRoundsIntoTheNextUnit(t *testing.T) {
	for n, want := range map[int64]string{
		0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 1536: "1.5 KiB",
		1048524: "1023.9 KiB", 1048525: "1.0 MiB", 1048575: "1.0 MiB", 1048576: "1.0 MiB",
		9371700: "8.9 MiB", 1<<30 - 1: "1.0 GiB", 1 << 60: "1.0 EiB",
	} {
		if got := humanBytes(n); got != want {
			t.Errorf("humanBytes(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestIndexBuildLogIsPlain: with stderr not a terminal (a CI log), index
// build writes no bars and no control characters there, only one line per
// file with the time each stage took and its pace; --quiet leaves it out.
func TestIndexBuildLogIsPlain(t *testing.T) {
	idx := filepath.Join(t.TempDir(), "demo.idx")
	_, stderr, code := r2med(t, "", "index", "build", "--task", "demo", "--out", idx)
	if code != 0 {
		t.Fatalf("build: %s", stderr)
	}
	if !regexp.MustCompile(`^demo: built in [0-9.]+m?s: postings [0-9.]+m?s \(\d+ documents/s\), written [0-9.]+m?s \(\d+ documents/s\)\n$`).MatchString(stderr) {
		t.Errorf("stderr %q", stderr)
	}
	if strings.ContainsAny(stderr, "\r\x1b\b") {
		t.Errorf("control characters in the log: %q", stderr)
	}
	if _, stderr, _ := r2med(t, "", "index", "build", "--quiet", "--task", "demo", "--out", idx); stderr != "" {
		t.Errorf("--quiet: stderr %q", stderr)
	}
}
