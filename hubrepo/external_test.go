package hubrepo_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/r2med/r2med/dataset"
	"github.com/r2med/r2med/demo"
	"github.com/r2med/r2med/expand"
	"github.com/r2med/r2med/hubrepo"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/nano"
	"github.com/r2med/r2med/taskstats"
)

// buildNano builds the demo task as a Nano set with every subset: a dense
// run that reverses BM25's, and a hybrid depth of 5, so that some rows end
// in a safeguard.
func buildNano(t *testing.T, split string, queryLimit int) *nano.Set {
	t.Helper()
	task, err := demo.Load()
	if err != nil {
		t.Fatal(err)
	}
	opts := nano.Options{Split: split, QueryLimit: queryLimit, HybridDepth: 5, DenseConfig: "harrier_oss_v1_270m"}
	s, err := nano.Build(task, opts)
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
	return s
}

// TestNanoRoundTrip writes Nano sets with the nano package and reads one
// back: the task must be the set, and its profile and candidate metrics the
// numbers nano's metadata reported for it (which are what a task card says
// of the published set).
func TestNanoRoundTrip(t *testing.T) {
	dir := t.TempDir()
	set := buildNano(t, "NanoDemo", 0)
	if err := nano.WriteHub(set, dir, ""); err != nil {
		t.Fatal(err)
	}
	// A second split, so that the reader has to pick.
	if err := nano.WriteHub(buildNano(t, "NanoDemoSmall", 4), dir, ""); err != nil {
		t.Fatal(err)
	}
	meta, err := set.Metadata()
	if err != nil {
		t.Fatal(err)
	}

	task, err := hubrepo.Load(dir, hubrepo.Spec{Split: "NanoDemo"})
	if err != nil {
		t.Fatal(err)
	}
	if task.Layout != ir.LayoutNanoHub || task.Name != "NanoDemo" || task.EmptyDocs != 0 || task.UnjudgedQueries != 0 {
		t.Errorf("task %q layout %q, %d empty docs, %d unjudged", task.Name, task.Layout, task.EmptyDocs, task.UnjudgedQueries)
	}
	if !reflect.DeepEqual(task.Corpus, set.Corpus) {
		t.Error("corpus differs from the set's")
	}
	if len(task.Queries) != len(set.Queries) {
		t.Fatalf("%d queries, set has %d", len(task.Queries), len(set.Queries))
	}
	for i, q := range task.Queries {
		if q.ID != set.Queries[i].ID || q.Text != set.Queries[i].Text || q.Extra != nil {
			t.Errorf("query %d: %+v, set has %+v", i, q, set.Queries[i])
		}
	}
	// The hub has no grades: every kept positive comes back as 1.
	for qid, judged := range set.Qrels {
		for did := range judged {
			if task.Qrels[qid][did] != 1 {
				t.Errorf("judgment %s/%s: %d", qid, did, task.Qrels[qid][did])
			}
		}
	}
	if task.Qrels.Len() != set.Qrels.Len() {
		t.Errorf("%d judgments, set has %d", task.Qrels.Len(), set.Qrels.Len())
	}
	wantFiles := []string{"README.md"}
	for _, c := range []string{"corpus", "queries", "qrels"} {
		wantFiles = append(wantFiles, nano.DataFile(c, "NanoDemo"))
	}
	for i, f := range wantFiles {
		wantFiles[i] = filepath.Join(dir, filepath.FromSlash(f))
	}
	if !reflect.DeepEqual(task.Files, wantFiles) {
		t.Errorf("files %q, want %q", task.Files, wantFiles)
	}

	p := taskstats.Of(task)
	card := p.CardRounded()
	pp := card.PositivesPerQuery
	mp := meta.PositivesPerQuery
	if card.Counts.Queries != meta.Counts.Queries || card.Counts.Documents != meta.Counts.Documents || card.Counts.PositiveQrels != meta.Counts.PositiveQrels ||
		pp.Average != float64(mp.Average) || pp.Min != mp.Min || pp.Median != float64(mp.Median) || pp.Max != mp.Max ||
		pp.MultiPositiveQueries != mp.MultiPositiveQueries || pp.MultiPositiveQueryPercent != float64(mp.MultiPositivePercent) ||
		card.TextStatsChars.QueryMean != float64(meta.TextStatsChars.QueryMean) || card.TextStatsChars.DocumentMean != float64(meta.TextStatsChars.DocumentMean) {
		t.Errorf("profile %+v\nmetadata %+v %+v %+v", card, meta.Counts, meta.PositivesPerQuery, meta.TextStatsChars)
	}

	// The metadata file as written, to compare field by field.
	data, err := os.ReadFile(filepath.Join(dir, "metadata", "NanoDemo.json"))
	if err != nil {
		t.Fatal(err)
	}
	var written struct {
		CandidateSubsets map[string]map[string]any `json:"candidate_subsets"`
	}
	if err := json.Unmarshal(data, &written); err != nil {
		t.Fatal(err)
	}
	for _, sub := range set.Subsets {
		c, err := hubrepo.LoadCandidates(dir, sub.Config, "NanoDemo")
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range set.Queries {
			want := make([]string, len(sub.Run[q.ID]))
			for i, h := range sub.Run[q.ID] {
				want[i] = h.DocID
			}
			if !reflect.DeepEqual(c.Lists[q.ID], want) {
				t.Errorf("%s %s: %v, set has %v", sub.Config, q.ID, c.Lists[q.ID], want)
			}
		}
		spec := taskstats.CandidateSubset{Name: sub.Name, Config: sub.Config, Label: sub.Label, TopK: sub.TopK, Safeguard: sub.Safeguards != nil}
		if err := p.AddCandidates(task, c, spec); err != nil {
			t.Fatal(err)
		}
		got, err := json.Marshal(p.CandidateSubsets[sub.Name].Rounded())
		if err != nil {
			t.Fatal(err)
		}
		var gotMap map[string]any
		if err := json.Unmarshal(got, &gotMap); err != nil {
			t.Fatal(err)
		}
		if want := written.CandidateSubsets[sub.Name]; !reflect.DeepEqual(gotMap, want) {
			t.Errorf("%s:\n got %v\nwant %v", sub.Name, gotMap, want)
		}
	}
	h := p.CandidateSubsets["reranking_hybrid"]
	if h.SafeguardPositiveRows == nil || *h.SafeguardPositiveRows == 0 {
		t.Error("the fixture should exercise the safeguard")
	}
	// The card's bm25 summary repeats the subset's values unrounded.
	if b := p.CandidateSubsets["bm25"]; b.NDCGAt10 != float64(meta.BM25.NDCGAt10) || b.HitAt10 != float64(meta.BM25.HitAt10) {
		t.Errorf("bm25 %v/%v, metadata %v/%v", b.NDCGAt10, b.HitAt10, meta.BM25.NDCGAt10, meta.BM25.HitAt10)
	}

	// The other split reads as its own task.
	small, err := hubrepo.Load(dir, hubrepo.Spec{Split: "NanoDemoSmall"})
	if err != nil {
		t.Fatal(err)
	}
	if len(small.Queries) != 4 || small.Name != "NanoDemoSmall" {
		t.Errorf("small split: %d queries, name %q", len(small.Queries), small.Name)
	}
}

// TestHubSnapshotOfR2MEDDemo lays R2MED's own demo files out as a Hugging
// Face cache snapshot (symbolic links, with R2MED's card configs) and reads
// them as Load and expand do.
func TestHubSnapshotOfR2MEDDemo(t *testing.T) {
	src := filepath.Join("..", "..", "shared", "data", "r2med-biology-demo")
	if _, err := os.Stat(src); err != nil {
		t.Skipf("shared test data %s is not available (%v)", src, err)
	}
	src, _ = filepath.Abs(src)
	snap := filepath.Join(t.TempDir(), "datasets--R2MED--Biology", "snapshots", "8b9fec2db9eda4b5742d03732213fbaee8169556")
	for _, f := range []string{"corpus.jsonl", "query.jsonl", "qrels.jsonl", "hyde/qwen-7b/query_with_hydoc.jsonl"} {
		dst := filepath.Join(snap, f)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join(src, f), dst); err != nil {
			t.Skipf("no symbolic links here: %v", err)
		}
	}
	readme := `---
configs:
  - config_name: qrels
    data_files:
      - split: qrels
        path: qrels.jsonl
  - config_name: corpus
    data_files:
      - split: corpus
        path: corpus.jsonl
  - config_name: query
    data_files:
      - split: query
        path: query.jsonl
  - config_name: hyde
    data_files:
      - split: qwen_7b
        path: hyde/qwen-7b/query_with_hydoc.jsonl
---
`
	if err := os.WriteFile(filepath.Join(snap, "README.md"), []byte(readme), 0o644); err != nil {
		t.Fatal(err)
	}
	task, err := hubrepo.Load(snap, hubrepo.Spec{AllowMissingDocs: true})
	if err != nil {
		t.Fatal(err)
	}
	ref, err := dataset.Load(src, dataset.Options{AllowMissingDocs: true})
	if err != nil {
		t.Fatal(err)
	}
	if task.Name != "Biology" || !reflect.DeepEqual(task.Corpus, ref.Corpus) || !reflect.DeepEqual(task.Queries, ref.Queries) || !reflect.DeepEqual(task.Qrels, ref.Qrels) {
		t.Errorf("snapshot task %q differs from Load's", task.Name)
	}
	gens, err := hubrepo.ReadGenerations(snap, expand.HyDE, "qwen-7b")
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(src, "hyde", "qwen-7b", "query_with_hydoc.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want, err := expand.ReadGenerations(f, "query_with_hydoc.jsonl", expand.HyDE, "qwen-7b")
	if err != nil {
		t.Fatal(err)
	}
	if len(gens.Rows) != len(want) || len(want) == 0 {
		t.Fatalf("%d generations, expand reads %d", len(gens.Rows), len(want))
	}
	for i, g := range gens.Rows {
		if g.ID != want[i].ID || g.Text != want[i].Text || g.HyDoc != want[i].HyDoc {
			t.Errorf("generation %d differs from expand's", i)
		}
	}
}
