package dataset

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/trec"
)

// sharedData is the path of a folder of the project's read-only test data,
// which lives beside the repository.
func sharedData(t testing.TB, name string) string {
	t.Helper()
	p := filepath.Join("..", "..", "shared", "data", name)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("shared test data %s is not available (%v); these tests need the read-only data folder beside the repository", p, err)
	}
	return p
}

func TestLoadNFCorpus(t *testing.T) {
	dir := sharedData(t, "nfcorpus")
	for _, c := range []struct {
		split                 string
		queries, judgments    int
		firstQuery, lastQuery string
		qrelsFile             string
		wantSplit             string
	}{
		{"", 323, 12334, "PLAIN-2", "PLAIN-3472", "qrels/test.tsv", "test"},
		{"dev", 324, 11385, "PLAIN-1", "PLAIN-3471", "qrels/dev.tsv", "dev"},
	} {
		t.Run(c.wantSplit, func(t *testing.T) {
			task, err := Load(dir, Options{Split: c.split})
			if err != nil {
				t.Fatal(err)
			}
			if task.Name != "nfcorpus" || task.Dir != dir || task.Layout != ir.LayoutBEIR || task.Split != c.wantSplit {
				t.Errorf("Name, Dir, ir.Layout, Split = %q, %q, %q, %q", task.Name, task.Dir, task.Layout, task.Split)
			}
			wantFiles := []string{
				filepath.Join(dir, "corpus.jsonl"),
				filepath.Join(dir, "queries.jsonl"),
				filepath.Join(dir, filepath.FromSlash(c.qrelsFile)),
			}
			if !reflect.DeepEqual(task.Files, wantFiles) {
				t.Errorf("Files = %q, want %q", task.Files, wantFiles)
			}
			if n := len(task.Corpus); n != 3395 {
				t.Fatalf("%d documents, want 3395", n)
			}
			if d := task.Corpus[0]; d.ID != "MED-10" || !strings.HasPrefix(d.Text, "statin breast cancer survival nationwide cohort study finland") {
				t.Errorf("first document = %q %.60q", d.ID, d.Text)
			}
			if id := task.Corpus[3394].ID; id != "MED-5371" {
				t.Errorf("last document id %q, want MED-5371", id)
			}
			if n := len(task.Queries); n != c.queries {
				t.Fatalf("%d queries, want %d", n, c.queries)
			}
			if a, b := task.Queries[0].ID, task.Queries[len(task.Queries)-1].ID; a != c.firstQuery || b != c.lastQuery {
				t.Errorf("queries run %s…%s, want %s…%s", a, b, c.firstQuery, c.lastQuery)
			}
			if task.UnjudgedQueries != 3237-c.queries {
				t.Errorf("UnjudgedQueries = %d, want %d", task.UnjudgedQueries, 3237-c.queries)
			}
			if n := task.Qrels.Len(); n != c.judgments {
				t.Errorf("%d judgments, want %d", n, c.judgments)
			}
			if len(task.Qrels) != len(task.Queries) {
				t.Errorf("qrels judge %d queries, Queries has %d", len(task.Qrels), len(task.Queries))
			}
			for _, q := range task.Queries {
				if task.Qrels[q.ID] == nil {
					t.Fatalf("query %s has no judgments", q.ID)
				}
				if q.Extra != nil {
					t.Fatalf("query %s has Extra %v; nfcorpus queries have only _id and text", q.ID, q.Extra)
				}
			}
		})
	}
}

// The TREC copy of the nfcorpus test qrels in eval-reference must read the
// same as the BEIR TSV: two independent readers agreeing on 12,334 rows.
func TestBEIRQrelsMatchTRECCopy(t *testing.T) {
	dir := sharedData(t, "nfcorpus")
	ref := sharedData(t, "eval-reference")
	task, err := Load(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want, err := trec.ReadQrelsFile(filepath.Join(ref, "nfcorpus.qrels"))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(task.Qrels, want) {
		t.Errorf("qrels/test.tsv (%d judgments) differs from nfcorpus.qrels (%d)", task.Qrels.Len(), want.Len())
	}
}

func TestLoadR2MEDDemo(t *testing.T) {
	dir := sharedData(t, "r2med-biology-demo")
	// The demo's two documents are not the ones its qrels judge.
	_, err := Load(dir, Options{})
	wantErr := filepath.Join(dir, "qrels.jsonl") + `:1: 2 judged documents are not in ` + filepath.Join(dir, "corpus.jsonl") +
		` (2 judgments, the first on this line): "insects_attracted_to_light/Phototaxis_3.txt", "insects_attracted_to_light/Proximate_and_ultimate_causation_0.txt"; ` +
		`check that the qrels belong to this corpus, or, if the corpus is a deliberate sample, allow missing documents (they then count as relevant but unretrievable)`
	if err == nil || err.Error() != wantErr {
		t.Fatalf("error\n got: %v\nwant: %s", err, wantErr)
	}
	if !errors.Is(err, ErrMissingDocs) {
		t.Errorf("the error is not ErrMissingDocs: %v", err)
	}

	task, err := Load(dir, Options{AllowMissingDocs: true})
	if err != nil {
		t.Fatal(err)
	}
	if task.Name != "r2med-biology-demo" || task.Layout != ir.LayoutR2MED || task.Split != "" {
		t.Errorf("Name, ir.Layout, Split = %q, %q, %q", task.Name, task.Layout, task.Split)
	}
	wantFiles := []string{filepath.Join(dir, "corpus.jsonl"), filepath.Join(dir, "query.jsonl"), filepath.Join(dir, "qrels.jsonl")}
	if !reflect.DeepEqual(task.Files, wantFiles) {
		t.Errorf("Files = %q, want %q", task.Files, wantFiles)
	}
	if len(task.Corpus) != 2 || task.Corpus[0].ID != "neanderthals_vitamin_C_diet/Neanderthal_0_43.txt" ||
		!strings.HasPrefix(task.Corpus[0].Text, " pelvises; and proportionally shorter forearms and forelegs.\nBased on 45") {
		t.Errorf("corpus = %.80q", task.Corpus)
	}
	// No-break spaces arrive as raw UTF-8 in the file and must survive.
	if !strings.Contains(task.Corpus[0].Text, "168\u00a0cm") {
		t.Errorf("first document lost its no-break spaces: %.300q", task.Corpus[0].Text)
	}
	// Query "1" has no judgments, so only "0" is evaluated.
	if len(task.Queries) != 1 || task.UnjudgedQueries != 1 {
		t.Fatalf("%d queries evaluated, %d unjudged; want 1 and 1", len(task.Queries), task.UnjudgedQueries)
	}
	q := task.Queries[0]
	if q.ID != "0" || !strings.HasPrefix(q.Text, "Claim in article about why insects are attracted to light\nIn this article") {
		t.Errorf("query = %q %.60q", q.ID, q.Text)
	}
	var keys []string
	for k := range q.Extra {
		keys = append(keys, k)
	}
	if !sameSet(keys, []string{"answer", "body_system", "doc_id"}) {
		t.Errorf("Extra keys %q, want answer, body_system, doc_id", keys)
	}
	if string(q.Extra["body_system"]) != `""` {
		t.Errorf(`Extra["body_system"] = %s, want ""`, q.Extra["body_system"])
	}
	var gold []string
	if err := json.Unmarshal(q.Extra["doc_id"], &gold); err != nil || len(gold) != 5 || gold[0] != "insects_attracted_to_light/Proximate_and_ultimate_causation_0.txt" {
		t.Errorf("Extra[doc_id] = %s (%v)", q.Extra["doc_id"], err)
	}
	wantQrels := ir.Qrels{"0": {
		"insects_attracted_to_light/Phototaxis_3.txt":                       1,
		"insects_attracted_to_light/Proximate_and_ultimate_causation_0.txt": 1,
	}}
	if !reflect.DeepEqual(task.Qrels, wantQrels) {
		t.Errorf("Qrels = %v", task.Qrels)
	}

	again, err := Load(dir, Options{Split: "test", AllowMissingDocs: true})
	if err != nil || again.Split != "" || !reflect.DeepEqual(again.Qrels, task.Qrels) {
		t.Errorf(`R2MED with split "test": Split %q, %v; want the same task`, again.Split, err)
	}
	_, err = Load(dir, Options{Split: "dev", AllowMissingDocs: true})
	wantErr = dir + `: split "dev" given, but an R2MED task has only test queries (its qrels file holds every judgment); use the split "test" or none`
	if err == nil || err.Error() != wantErr {
		t.Errorf("R2MED with split dev: error %v, want %s", err, wantErr)
	}
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	m := make(map[string]int)
	for _, s := range a {
		m[s]++
	}
	for _, s := range b {
		m[s]--
	}
	for _, n := range m {
		if n != 0 {
			return false
		}
	}
	return true
}

func gz(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func writeFile(t testing.TB, path string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// A gzipped copy of a task loads to the same task; gzip is recognized by its
// bytes, so a compressed file under the plain name reads too.
func TestLoadGzip(t *testing.T) {
	src := sharedData(t, "nfcorpus")
	plain, err := Load(src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "nf")
	for _, f := range []struct{ from, to string }{
		{"corpus.jsonl", "corpus.jsonl.gz"},
		{"queries.jsonl", "queries.jsonl"}, // gzip bytes, plain name
		{"qrels/test.tsv", "qrels/test.tsv.gz"},
	} {
		b, err := os.ReadFile(filepath.Join(src, f.from))
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(dir, f.to), gz(t, b))
	}
	task, err := Load(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(dir, "corpus.jsonl.gz"), filepath.Join(dir, "queries.jsonl"), filepath.Join(dir, "qrels", "test.tsv.gz")}
	if !reflect.DeepEqual(task.Files, want) {
		t.Errorf("Files = %q, want %q", task.Files, want)
	}
	if task.Name != "nf" {
		t.Errorf("Name = %q, want nf", task.Name)
	}
	if !reflect.DeepEqual(task.Corpus, plain.Corpus) || !reflect.DeepEqual(task.Queries, plain.Queries) || !reflect.DeepEqual(task.Qrels, plain.Qrels) {
		t.Error("the gzipped copy loads differently from the plain files")
	}
}

// When both name and name.gz exist the plain file is read, as fileio.Exists
// decides; a stale compressed copy must not shadow an edited file.
// A file present both plain and gzipped is refused: the two may differ,
// and reading one would silently ignore the other. The message says which
// to remove.
func TestLoadRefusesPlainAndGzipped(t *testing.T) {
	dir := t.TempDir()
	plain, gzipped := filepath.Join(dir, "corpus.jsonl"), filepath.Join(dir, "corpus.jsonl.gz")
	writeFile(t, plain, []byte(`{"id": "new", "text": "edited"}`+"\n"))
	writeFile(t, gzipped, gz(t, []byte(`{"id": "old", "text": "stale"}`+"\n")))
	writeFile(t, filepath.Join(dir, "query.jsonl"), []byte(`{"id": "q", "text": "x"}`+"\n"))
	writeFile(t, filepath.Join(dir, "qrels.txt"), []byte("q 0 new 1\n"))
	old := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := os.Chtimes(gzipped, old, old); err != nil {
		t.Fatal(err)
	}
	_, err := Load(dir, Options{Name: "custom"})
	want := "both " + plain + " and " + gzipped + " exist and they differ; reading one would silently ignore the other, so remove the one you do not mean (" + plain + " is the newer)"
	if err == nil || err.Error() != want {
		t.Fatalf("Load error %v\nwant %s", err, want)
	}

	writeFile(t, gzipped, gz(t, []byte(`{"id": "new", "text": "edited"}`+"\n")))
	_, err = Load(dir, Options{Name: "custom"})
	want = "both " + plain + " and " + gzipped + " exist; they hold the same data, so remove one of them (rm " + plain + ")"
	if err == nil || err.Error() != want {
		t.Fatalf("Load error %v\nwant %s", err, want)
	}

	if err := os.Remove(plain); err != nil {
		t.Fatal(err)
	}
	task, err := Load(dir, Options{Name: "custom"})
	if err != nil {
		t.Fatal(err)
	}
	if len(task.Corpus) != 1 || task.Corpus[0] != (ir.Doc{ID: "new", Text: "edited"}) {
		t.Errorf("Corpus = %q, want the gzipped file's document", task.Corpus)
	}
	if task.Name != "custom" {
		t.Errorf("Name = %q, want the Options.Name override", task.Name)
	}
	if task.Files[0] != gzipped || task.Files[2] != filepath.Join(dir, "qrels.txt") {
		t.Errorf("files %q, want corpus.jsonl.gz and qrels.txt", task.Files)
	}
}

func TestLoadFS(t *testing.T) {
	fsys := fstest.MapFS{
		"demo/bio/corpus.jsonl.gz": {Data: gz(t, []byte(
			`{"id": "d1", "text": "Élan vital\nsecond line"}`+"\n"+
				`{"id": 2, "text": ""}`+"\n"))},
		"demo/bio/query.jsonl": {Data: []byte(
			`{"id": "0", "text": "why?", "body_system": "Nervous", "doc_id": ["d1"]}` + "\n" +
				`{"id": "1", "text": "how?", "body_system": ""}` + "\n")},
		"demo/bio/qrels.jsonl": {Data: []byte(
			`{"q_id": "0", "p_id": "d1", "score": 1}` + "\n" +
				`{"q_id": 1, "p_id": 2, "score": 1.0}` + "\n" +
				`{"q_id": "1", "p_id": "d1", "score": -1}` + "\n")},
		"beir/corpus.jsonl": {Data: []byte(
			`{"_id": "a", "title": "Title", "text": "body"}` + "\n" +
				`{"_id": "b", "title": "", "text": "no title"}` + "\n" +
				`{"_id": "c", "title": null, "text": "null title"}` + "\n" +
				`{"_id": "d", "text": "no title key", "metadata": {"url": "x"}}` + "\n")},
		"beir/queries.jsonl": {Data: []byte(
			`{"_id": "q1", "text": "one", "metadata": {}}` + "\n" +
				`{"_id": "q2", "text": "two"}` + "\n" +
				`{"_id": "q3", "text": "three"}` + "\n")},
		"beir/qrels/test.tsv":       {Data: []byte("query-id\tcorpus-id\tscore\r\nq3\ta\t2\r\n\r\nq1\tb\t1\r\n")},
		"beir/qrels/train.tsv":      {Data: []byte("query-id\tcorpus-id\tscore\nq2\tc\t1\n")},
		"broken/corpus.jsonl":       {Data: []byte(`{"id": "d1", "text": "x"}` + "\n")},
		"broken/query.jsonl":        {Data: []byte(`{"id": "0", "text": "x"}` + "\n" + `{"id": "1", "text": 7}` + "\n")},
		"broken/qrels.txt":          {Data: []byte("0 0 d1 1\n")},
		"beir-missing/corpus.jsonl": {Data: []byte("\n")},
	}

	task, err := LoadFS(fsys, "demo/bio", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if task.Name != "bio" || task.Dir != "demo/bio" || task.Layout != ir.LayoutR2MED {
		t.Errorf("Name, Dir, ir.Layout = %q, %q, %q", task.Name, task.Dir, task.Layout)
	}
	if want := []string{"demo/bio/corpus.jsonl.gz", "demo/bio/query.jsonl", "demo/bio/qrels.jsonl"}; !reflect.DeepEqual(task.Files, want) {
		t.Errorf("Files = %q, want %q", task.Files, want)
	}
	if want := []ir.Doc{{ID: "d1", Text: "Élan vital\nsecond line"}, {ID: "2", Text: ""}}; !reflect.DeepEqual(task.Corpus, want) {
		t.Errorf("Corpus = %q, want %q", task.Corpus, want)
	}
	if len(task.Queries) != 2 || string(task.Queries[0].Extra["doc_id"]) != `["d1"]` || string(task.Queries[1].Extra["body_system"]) != `""` {
		t.Errorf("Queries = %v", task.Queries)
	}
	if want := (ir.Qrels{"0": {"d1": 1}, "1": {"2": 1, "d1": -1}}); !reflect.DeepEqual(task.Qrels, want) {
		t.Errorf("Qrels = %v, want %v", task.Qrels, want)
	}

	task, err = LoadFS(fsys, "beir", Options{})
	if err != nil {
		t.Fatal(err)
	}
	wantDocs := []ir.Doc{{ID: "a", Text: "Title body"}, {ID: "b", Text: "no title"}, {ID: "c", Text: "null title"}, {ID: "d", Text: "no title key"}}
	if !reflect.DeepEqual(task.Corpus, wantDocs) {
		t.Errorf("Corpus = %q, want %q", task.Corpus, wantDocs)
	}
	// Evaluated: the test split's queries, in queries.jsonl order.
	if len(task.Queries) != 2 || task.Queries[0].ID != "q1" || task.Queries[1].ID != "q3" || task.UnjudgedQueries != 1 {
		t.Errorf("Queries = %v (unjudged %d), want q1, q3 (1)", task.Queries, task.UnjudgedQueries)
	}
	if string(task.Queries[0].Extra["metadata"]) != `{}` {
		t.Errorf("q1 Extra = %v, want metadata {}", task.Queries[0].Extra)
	}
	if task.Split != "test" || task.Files[2] != "beir/qrels/test.tsv" {
		t.Errorf("Split %q, qrels %q", task.Split, task.Files[2])
	}
	task, err = LoadFS(fsys, "beir", Options{Split: "train"})
	if err != nil {
		t.Fatal(err)
	}
	if len(task.Queries) != 1 || task.Queries[0].ID != "q2" || task.Split != "train" {
		t.Errorf("train split: Queries %v, Split %q", task.Queries, task.Split)
	}

	for _, c := range []struct {
		root string
		opts Options
		want string
	}{
		{"broken", Options{}, `broken/query.jsonl:2: "text" is a number, want a string`},
		{"beir", Options{Split: "dev"}, `beir has no qrels for split "dev" (qrels/dev.tsv does not exist); available splits: test, train`},
		{"beir", Options{Split: "../demo"}, `beir: split "../demo" is not a plain name such as test or dev`},
		{"../x", Options{}, `task directory "../x" is not a valid fs.FS path (slash-separated, unrooted, no . or .. elements)`},
		{"nowhere", Options{}, `task directory nowhere: file does not exist`},
		{"demo/bio/query.jsonl", Options{}, `task directory demo/bio/query.jsonl is not a directory; ` + needFiles},
		{"beir-missing", Options{}, `beir-missing has no query file (query.jsonl or queries.jsonl); ` + needFiles},
	} {
		_, err := LoadFS(fsys, c.root, c.opts)
		if err == nil || err.Error() != c.want {
			t.Errorf("LoadFS(%q, %+v): error\n got: %v\nwant: %s", c.root, c.opts, err, c.want)
		}
	}

	// The root itself may be the task; it then has no name of its own.
	sub, err := fs.Sub(fsys, "demo/bio")
	if err != nil {
		t.Fatal(err)
	}
	task, err = LoadFS(sub, ".", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if task.Name != "" || task.Files[0] != "corpus.jsonl.gz" {
		t.Errorf("root task: Name %q, Files %q", task.Name, task.Files)
	}
}

func TestLoadMissingDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "absent")
	_, err := Load(dir, Options{})
	if want := "task directory " + dir + ": no such file or directory"; err == nil || err.Error() != want {
		t.Errorf("error %v, want %s", err, want)
	}
}

func TestDetectLayout(t *testing.T) {
	for _, c := range []struct {
		dir  string
		want ir.Layout
	}{
		{sharedData(t, "nfcorpus"), ir.LayoutBEIR},
		{sharedData(t, "r2med-biology-demo"), ir.LayoutR2MED},
	} {
		got, err := DetectLayout(c.dir)
		if err != nil || got != c.want {
			t.Errorf("DetectLayout(%s) = %q, %v; want %q", c.dir, got, err, c.want)
		}
	}
	dir := filepath.Join("testdata", "malformed", "tasks", "both-layouts")
	_, err := DetectLayout(dir)
	want := dir + " holds both query.jsonl (R2MED layout) and queries.jsonl (BEIR layout); keep the files of one layout per directory"
	if err == nil || err.Error() != want {
		t.Errorf("DetectLayout(%s): error %v, want %s", dir, err, want)
	}
	fsys := fstest.MapFS{"t/queries.jsonl.gz": {Data: gz(t, nil)}}
	if got, err := DetectLayoutFS(fsys, "t"); err != nil || got != ir.LayoutBEIR {
		t.Errorf("DetectLayoutFS on a gzipped queries file = %q, %v; want beir", got, err)
	}
}

// Gzipped files are read ahead in a goroutine: a truncated stream must still
// fail at the right line, and an error early in a long file must stop the
// reader (the race detector and the leak check below would notice if not).
func TestLoadGzipErrors(t *testing.T) {
	var corpus bytes.Buffer
	for i := range 40000 {
		fmt.Fprintf(&corpus, `{"id": "d%d", "text": "document %d %s"}`+"\n", i, i, strings.Repeat("word ", 20))
	}
	full := gz(t, corpus.Bytes())

	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "query.jsonl"), []byte(`{"id": "q", "text": "x"}`+"\n"))
	writeFile(t, filepath.Join(dir, "qrels.txt"), []byte("q 0 d1 1\n"))
	path := filepath.Join(dir, "corpus.jsonl.gz")

	writeFile(t, path, full)
	task, err := Load(dir, Options{})
	if err != nil || len(task.Corpus) != 40000 || task.Corpus[39999].ID != "d39999" {
		t.Fatalf("full file: %v", err)
	}

	// Cut off the 8-byte gzip trailer: every line is there, the end is not.
	writeFile(t, path, full[:len(full)-8])
	_, err = Load(dir, Options{})
	want := path + ":40001: file ends in the middle of its data (unexpected EOF); it is probably truncated, download or decompress it again"
	if err == nil || err.Error() != want {
		t.Errorf("truncated trailer: error\n got: %v\nwant: %s", err, want)
	}

	before := runtime.NumGoroutine()
	writeFile(t, path, gz(t, append([]byte(`{"id": "d0", "text": "x"}`+"\n"), corpus.Bytes()...)))
	_, err = Load(dir, Options{})
	want = path + `:2: document id "d0" already appeared on line 1; ids must be unique, remove or rename one of the two`
	if err == nil || err.Error() != want {
		t.Errorf("early error: %v", err)
	}
	// The reader stops promptly, but a loaded machine may run it late:
	// wait for it as long as a hung test would be noticed anyway.
	for deadline := time.Now().Add(10 * time.Second); runtime.NumGoroutine() > before && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Errorf("%d goroutines after the failed load, %d before: the read-ahead goroutine leaked", n, before)
	}
}
