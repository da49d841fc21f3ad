package nano

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"gopkg.in/yaml.v3"

	"github.com/r2med/r2med/demo"
	"github.com/r2med/r2med/ir"
)

// demoSet builds the demo task as split NanoDemo, with a dense run that is
// BM25's ranking reversed, so that some hybrid rows need the safeguard.
func demoSet(t *testing.T, hybridDepth int) *Set {
	t.Helper()
	task, err := demo.Load()
	if err != nil {
		t.Fatal(err)
	}
	plain, err := Build(task, Options{Split: "NanoDemo"})
	if err != nil {
		t.Fatal(err)
	}
	dense := make(ir.Run)
	for q, hits := range plain.Subset("bm25").Run {
		for i := len(hits) - 1; i >= 0; i-- {
			dense[q] = append(dense[q], ir.Hit{DocID: hits[i].DocID, Score: float64(i)})
		}
	}
	s, err := Build(task, Options{Split: "NanoDemo", Dense: dense, HybridDepth: hybridDepth})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestAddDenseEqualsBuildWithDense(t *testing.T) {
	task, err := demo.Load()
	if err != nil {
		t.Fatal(err)
	}
	s, err := Build(task, Options{Split: "NanoDemo", HybridDepth: 5})
	if err != nil {
		t.Fatal(err)
	}
	dense := make(ir.Run)
	for q, hits := range s.Subset("bm25").Run {
		for i := len(hits) - 1; i >= 0; i-- {
			dense[q] = append(dense[q], ir.Hit{DocID: hits[i].DocID, Score: float64(i)})
		}
	}
	if err := s.AddDense(dense); err != nil {
		t.Fatal(err)
	}
	if want := demoSet(t, 5); !reflect.DeepEqual(s, want) {
		t.Error("Build then AddDense differs from Build with Options.Dense")
	}
	if err := s.AddDense(dense); err == nil {
		t.Error("a second dense subset was accepted")
	}
	if err := (&Set{}).AddDense(dense); err == nil {
		t.Error("a set without bm25 accepted a dense subset")
	}
}

// readTree maps each file under dir to its bytes.
func readTree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files := make(map[string][]byte)
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		files[filepath.ToSlash(rel)], err = os.ReadFile(path)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func TestWriteHubDeterministic(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	if err := WriteHub(demoSet(t, 5), a, "NanoDemo"); err != nil {
		t.Fatal(err)
	}
	if err := WriteHub(demoSet(t, 5), b, ""); err != nil {
		t.Fatal(err)
	}
	ta, tb := readTree(t, a), readTree(t, b)
	var names []string
	for name := range ta {
		names = append(names, name)
	}
	want := []string{
		"README.md",
		"bm25/NanoDemo-00000-of-00001.parquet",
		"corpus/NanoDemo-00000-of-00001.parquet",
		"dense/NanoDemo-00000-of-00001.parquet",
		"metadata/NanoDemo.json",
		"qrels/NanoDemo-00000-of-00001.parquet",
		"queries/NanoDemo-00000-of-00001.parquet",
		"reranking_hybrid/NanoDemo-00000-of-00001.parquet",
	}
	if len(ta) != len(want) {
		t.Fatalf("files %v, want %v", names, want)
	}
	for _, name := range want {
		if ta[name] == nil {
			t.Errorf("missing %s", name)
		}
		if !bytes.Equal(ta[name], tb[name]) {
			t.Errorf("%s differs between two builds", name)
		}
	}
	// Writing again over the same directory changes nothing.
	if err := WriteHub(demoSet(t, 5), a, "NanoDemo"); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(readTree(t, a), ta) {
		t.Error("rewriting the split changed the files")
	}
}

func readParquet[T any](t *testing.T, dir, config, split string) []T {
	t.Helper()
	rows, err := parquet.ReadFile[T](filepath.Join(dir, config, split+ShardSuffix))
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

func TestWriteHubReadsBack(t *testing.T) {
	s := demoSet(t, 5)
	dir := t.TempDir()
	if err := WriteHub(s, dir, ""); err != nil {
		t.Fatal(err)
	}
	corpus := readParquet[TextRow](t, dir, "corpus", "NanoDemo")
	if len(corpus) != len(s.Corpus) {
		t.Fatalf("%d corpus rows, want %d", len(corpus), len(s.Corpus))
	}
	for i, d := range s.Corpus {
		if corpus[i] != (TextRow{ID: d.ID, Text: d.Text}) {
			t.Fatalf("corpus row %d = %+v, want %+v", i, corpus[i], d)
		}
	}
	queries := readParquet[TextRow](t, dir, "queries", "NanoDemo")
	for i, q := range s.Queries {
		if queries[i] != (TextRow{ID: q.ID, Text: q.Text}) {
			t.Fatalf("query row %d = %+v", i, queries[i])
		}
	}
	if len(queries) != len(s.Queries) {
		t.Fatalf("%d query rows", len(queries))
	}
	qrels := readParquet[QrelsRow](t, dir, "qrels", "NanoDemo")
	back := make(ir.Qrels)
	for _, r := range qrels {
		back.Add(r.QueryID, r.CorpusID, s.Qrels[r.QueryID][r.CorpusID])
	}
	if !reflect.DeepEqual(back, s.Qrels) || !reflect.DeepEqual(qrels, s.qrelsRows()) {
		t.Errorf("qrels read back differ")
	}
	for _, sub := range s.Subsets {
		rows := readParquet[CandidatesRow](t, dir, sub.Config, "NanoDemo")
		if len(rows) != len(s.Queries) {
			t.Fatalf("%s: %d rows", sub.Config, len(rows))
		}
		for i, q := range s.Queries {
			if rows[i].QueryID != q.ID || !reflect.DeepEqual(rows[i].CorpusIDs, docIDs(sub.Run[q.ID])) {
				t.Errorf("%s row %d = %v, want %s %v", sub.Config, i, rows[i], q.ID, docIDs(sub.Run[q.ID]))
			}
		}
	}

	f, err := os.Open(filepath.Join(dir, "reranking_hybrid", "NanoDemo"+ShardSuffix))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	if got := pf.Metadata().CreatedBy; got != "r2med nano" {
		t.Errorf("created_by %q", got)
	}
	schema := pf.Schema().String()
	for _, want := range []string{"required binary query-id (STRING)", "group corpus-ids (LIST)", "repeated group list", "binary element (STRING)"} {
		if !strings.Contains(schema, want) {
			t.Errorf("schema lacks %q:\n%s", want, schema)
		}
	}
	for _, rg := range pf.Metadata().RowGroups {
		for _, c := range rg.Columns {
			if c.MetaData.Codec.String() != "SNAPPY" {
				t.Errorf("column %v compressed with %v", c.MetaData.PathInSchema, c.MetaData.Codec)
			}
		}
	}
}

type frontMatter struct {
	Configs []struct {
		ConfigName string `yaml:"config_name"`
		Default    bool   `yaml:"default"`
		DataFiles  []struct {
			Split string `yaml:"split"`
			Path  string `yaml:"path"`
		} `yaml:"data_files"`
	} `yaml:"configs"`
}

func readFrontMatter(t *testing.T, dir string) (frontMatter, string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	rest, ok := strings.CutPrefix(text, "---\n")
	head, body, ok2 := strings.Cut(rest, "\n---\n")
	if !ok || !ok2 {
		t.Fatalf("README has no front matter:\n%s", text)
	}
	var fm frontMatter
	if err := yaml.Unmarshal([]byte(head), &fm); err != nil {
		t.Fatal(err)
	}
	return fm, body
}

func TestReadmeListsEverySplit(t *testing.T) {
	dir := t.TempDir()
	if err := WriteHub(demoSet(t, 0), dir, ""); err != nil {
		t.Fatal(err)
	}
	task, err := demo.Load()
	if err != nil {
		t.Fatal(err)
	}
	second, err := Build(task, Options{Split: "NanoAnother", QueryLimit: 3})
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteHub(second, dir, ""); err != nil {
		t.Fatal(err)
	}
	fm, body := readFrontMatter(t, dir)
	got := make(map[string][]string)
	var order []string
	for _, c := range fm.Configs {
		order = append(order, c.ConfigName)
		if c.Default != (c.ConfigName == "queries") {
			t.Errorf("%s: default %v", c.ConfigName, c.Default)
		}
		for _, f := range c.DataFiles {
			got[c.ConfigName] = append(got[c.ConfigName], f.Split+" "+f.Path)
			if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(f.Path))); err != nil {
				t.Errorf("%s lists %s: %v", c.ConfigName, f.Path, err)
			}
		}
	}
	if want := []string{"corpus", "queries", "qrels", "bm25", "dense", "reranking_hybrid"}; !reflect.DeepEqual(order, want) {
		t.Errorf("configs %v, want %v", order, want)
	}
	if want := []string{"NanoAnother bm25/NanoAnother-00000-of-00001.parquet", "NanoDemo bm25/NanoDemo-00000-of-00001.parquet"}; !reflect.DeepEqual(got["bm25"], want) {
		t.Errorf("bm25 data files %v, want %v", got["bm25"], want)
	}
	if want := []string{"NanoDemo reranking_hybrid/NanoDemo-00000-of-00001.parquet"}; !reflect.DeepEqual(got["reranking_hybrid"], want) {
		t.Errorf("reranking_hybrid data files %v, want %v", got["reranking_hybrid"], want)
	}
	for _, want := range []string{"| NanoAnother | 3 | 79 |", "| NanoDemo | 15 | 79 | 32 | `bm25`, `dense`, `reranking_hybrid` |"} {
		if !strings.Contains(body, want) {
			t.Errorf("README table lacks %q:\n%s", want, body)
		}
	}
}

func TestWriteHubSplitName(t *testing.T) {
	s := demoSet(t, 0)
	if err := WriteHub(s, t.TempDir(), "NanoElse"); err == nil || !strings.Contains(err.Error(), "safeguards are drawn") {
		t.Errorf("renaming a hybrid set: err = %v", err)
	}
	if err := WriteHub(s, t.TempDir(), "bad-name"); err == nil {
		t.Error("a split name with '-' was accepted")
	}
	task, _ := demo.Load()
	plain, err := Build(task, Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := WriteHub(plain, dir, "NanoElse"); err != nil {
		t.Fatal(err)
	}
	m, err := readMetadata(filepath.Join(dir, "metadata", "NanoElse.json"))
	if err != nil || m == nil || m.SplitName != "NanoElse" || m.SourceTask != "demo" {
		t.Errorf("metadata %+v, %v", m, err)
	}
}

func TestMetadataHybrid(t *testing.T) {
	s := hybridSet()
	s.addHybrid()
	m, err := s.Metadata()
	if err != nil {
		t.Fatal(err)
	}
	h := m.CandidateSubsets.Hybrid
	if h == nil {
		t.Fatal("no reranking_hybrid metrics")
	}
	// q1 finds d000 first (nDCG 1, hit), q4 finds d050 at 51, q2 and q3
	// need the safeguard: 2 of 10 positives in the first 100, safeguards
	// left out.
	want := SubsetMetrics{
		Config: HybridConfig, Label: "Reranking hybrid", Source: "dataset_candidate_subset", TopK: 100,
		NDCGAt10: 0.25, HitAt10: 0.25, RecallAt100: 0.2,
		CandidateCountMin: 100, CandidateCountMax: 101, CandidateCountMean: 100.5,
		QueryCount: 4, QueryCoverage: 1, RelevantCoverageAt100: 0.2,
	}
	got := *h
	if *got.SafeguardPositiveRows != 2 || *got.RowsWith101 != 2 {
		t.Errorf("safeguard rows %d, rows with 101 %d; want 2, 2", *got.SafeguardPositiveRows, *got.RowsWith101)
	}
	got.SafeguardPositiveRows, got.RowsWith101, got.ndcg, got.hit = nil, nil, 0, 0
	if got != want {
		t.Errorf("hybrid metrics\n %+v\nwant %+v", got, want)
	}
	d := m.CandidateSubsets.Dense
	// The dense subset has no q4 list: coverage 3/4, and q4 scores 0.
	if d.QueryCoverage != 0.75 || d.CandidateCountMin != 0 || d.SafeguardPositiveRows != nil {
		t.Errorf("dense metrics %+v", d)
	}
	if got := m.Construction.Hybrid.Safeguards; !reflect.DeepEqual(got, []Safeguard{{"q2", "d117", 101}, {"q3", "d102", 101}}) {
		t.Errorf("safeguards %v", got)
	}
	pp := m.PositivesPerQuery
	// Positives per query 1, 3, 5, 1.
	if pp.Average != 2.5 || pp.Min != 1 || pp.Max != 5 || pp.Median != 2 || pp.MultiPositiveQueries != 2 || pp.MultiPositivePercent != 50 {
		t.Errorf("positives per query %+v", pp)
	}
}

func TestMetadataJSON(t *testing.T) {
	dir := t.TempDir()
	s := demoSet(t, 5)
	if err := WriteHub(s, dir, ""); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "metadata", "NanoDemo.json"))
	if err != nil {
		t.Fatal(err)
	}
	// HAKARI's field names, Python's float spelling.
	for _, want := range []string{
		`"counts": {
    "queries": 15,
    "documents": 79,
    "positive_qrels": 32
  }`,
		`"candidate_count_mean": 79.0,`,
		`"rrf_k": 100,`,
		`"random_seed": 20260524,`,
		`"rows_with_101_candidates": `,
		`"query_coverage": 1.0,`,
	} {
		if !bytes.Contains(data, []byte(want)) {
			t.Errorf("metadata lacks %s", want)
		}
	}
	var generic map[string]any
	if err := json.Unmarshal(data, &generic); err != nil {
		t.Fatal(err)
	}
	subsets := generic["candidate_subsets"].(map[string]any)
	for _, name := range []string{"bm25", "dense", "reranking_hybrid"} {
		m, ok := subsets[name].(map[string]any)
		if !ok {
			t.Fatalf("no %s subset", name)
		}
		for _, field := range []string{"config", "label", "source", "top_k", "ndcg_at_10", "hit_at_10", "recall_at_100", "candidate_count_min", "candidate_count_max", "candidate_count_mean", "query_count", "query_coverage", "relevant_coverage_at_100"} {
			if _, ok := m[field]; !ok {
				t.Errorf("%s lacks %s", name, field)
			}
		}
	}
	h := subsets["reranking_hybrid"].(map[string]any)
	if int(h["safeguard_positive_rows"].(float64)) != len(s.Subset("reranking_hybrid").Safeguards) {
		t.Errorf("safeguard rows %v, set has %d", h["safeguard_positive_rows"], len(s.Subset("reranking_hybrid").Safeguards))
	}
	if len(s.Subset("reranking_hybrid").Safeguards) == 0 {
		t.Error("the demo fixture should exercise the safeguard")
	}
}

func TestRewriteRemovesStaleCandidates(t *testing.T) {
	dir := t.TempDir()
	if err := WriteHub(demoSet(t, 5), dir, ""); err != nil {
		t.Fatal(err)
	}
	task, _ := demo.Load()
	plain, err := Build(task, Options{Split: "NanoDemo"})
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteHub(plain, dir, ""); err != nil {
		t.Fatal(err)
	}
	for _, gone := range []string{"dense", "reranking_hybrid"} {
		if _, err := os.Stat(filepath.Join(dir, gone)); !os.IsNotExist(err) {
			t.Errorf("%s still there after rewriting the split without it: %v", gone, err)
		}
	}
	fm, _ := readFrontMatter(t, dir)
	if len(fm.Configs) != 4 {
		t.Errorf("README lists %d configs, want corpus queries qrels bm25", len(fm.Configs))
	}
}

// NanoR2MED metadata that is not UTF-8 is refused, naming file, line and
// byte offset, not read with U+FFFD in its names.
func TestMetadataInvalidUTF8(t *testing.T) {
	p := filepath.Join(t.TempDir(), "NanoElse.json")
	os.WriteFile(p, []byte("{\n  \"split_name\": \"Nano\xe9lse\"\n}\n"), 0o644)
	_, err := readMetadata(p)
	if err == nil || !strings.Contains(err.Error(), p+":2: invalid UTF-8 (byte 0xe9) at byte offset 21 of the line") {
		t.Errorf("err = %v", err)
	}
}

// TestRewriteIsWholeOrNothing: a split rewritten with a failure partway
// (here its dense file cannot be written) keeps every file it had, never
// a new corpus beside the old judgments and candidate lists, and leaves
// no temporary files.
func TestRewriteIsWholeOrNothing(t *testing.T) {
	dir := t.TempDir()
	task, err := demo.Load()
	if err != nil {
		t.Fatal(err)
	}
	old, err := Build(task, Options{Split: "NanoDemo", DocLimit: 40})
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteHub(old, dir, ""); err != nil {
		t.Fatal(err)
	}
	before := map[string][]byte{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			before[p], _ = os.ReadFile(p)
		}
		return err
	})

	// The new set has more documents and a dense list, whose file's place
	// is taken by a directory.
	s := demoSet(t, 5)
	blocked := filepath.Join(dir, filepath.FromSlash(DataFile("dense", "NanoDemo")))
	if err := os.MkdirAll(blocked, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := WriteHub(s, dir, ""); err == nil {
		t.Fatal("no error writing over a directory")
	}
	after := 0
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		after++
		b, _ := os.ReadFile(p)
		if want, ok := before[p]; !ok {
			t.Errorf("%s left behind", p)
		} else if !bytes.Equal(b, want) {
			t.Errorf("%s was replaced by a write that failed", p)
		}
		return nil
	})
	if after != len(before) {
		t.Errorf("%d files after, %d before", after, len(before))
	}
}
