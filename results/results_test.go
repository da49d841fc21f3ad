package results

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
)

const official = "../../shared/data/r2med-official-results"

// TestOfficialFilesRoundTrip re-renders every published R2MED result file
// and requires the same bytes: key order, float repr and layout all match
// what R2MED's Python wrote.
func TestOfficialFilesRoundTrip(t *testing.T) {
	if _, err := os.Stat(official); err != nil {
		t.Skipf("shared reference data not found at %s: %v", official, err)
	}
	n := 0
	err := filepath.WalkDir(official, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(path) != ".json" {
			return err
		}
		want, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		r, err := ReadR2MED(path)
		if err != nil {
			t.Errorf("%s: %v", path, err)
			return nil
		}
		if got := r.Marshal(); !bytes.Equal(got, want) {
			t.Errorf("%s: re-rendered file differs:\n%s\nwant\n%s", path, got, want)
		}
		n++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n != 568 {
		t.Errorf("checked %d official files, want 568", n)
	}
}

func TestEvaluationTime(t *testing.T) {
	for sec, want := range map[float64]string{12.6: "0.21 minutes", 60: "1.0 minutes", 0.1: "0.0 minutes", 150: "2.5 minutes"} {
		if got := EvaluationTime(sec); got != want {
			t.Errorf("EvaluationTime(%v) = %q, want %q", sec, got, want)
		}
	}
}

func TestWriteFileAndManifest(t *testing.T) {
	dir := t.TempDir()
	r := &R2MED{DatasetName: "demo", EvaluationTime: "0.0 minutes", ModelName: "bm25",
		Test: map[string]float64{"ndcg_at_10": 0.5, "mrr": 1}}
	p := filepath.Join(dir, "results.json")
	if err := r.WriteFile(p); err != nil {
		t.Fatal(err)
	}
	want := "{\n  \"dataset_name\": \"demo\",\n  \"evaluation_time\": \"0.0 minutes\",\n  \"model_name\": \"bm25\",\n  \"test\": {\n    \"mrr\": 1.0,\n    \"ndcg_at_10\": 0.5\n  }\n}"
	if got, _ := os.ReadFile(p); string(got) != want {
		t.Fatalf("wrote\n%s\nwant\n%s", got, want)
	}
	m := NewManifest([]string{"r2med", "run"})
	if err := m.AddInputs(p); err != nil {
		t.Fatal(err)
	}
	mp := filepath.Join(dir, "manifest.json")
	if err := m.WriteFile(mp); err != nil {
		t.Fatal(err)
	}
	back, err := ReadManifest(mp)
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Inputs) != 1 || len(back.Inputs[0].SHA256) != 64 || back.Inputs[0].Bytes != int64(len(want)) {
		t.Fatalf("manifest inputs = %+v", back.Inputs)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Fatalf("leftover temporary files: %v", entries)
	}
}

func TestUpperKeysMatchPublishedGARFiles(t *testing.T) {
	if _, err := os.Stat(official); err != nil {
		t.Skipf("shared reference data not found at %s: %v", official, err)
	}
	upper, err := ReadR2MED(filepath.Join(official, "gar/hyde/gpt4/bm25/Biology.json"))
	if err != nil {
		t.Fatal(err)
	}
	lower := map[string]float64{}
	for _, fam := range []string{"ndcg", "map", "recall", "precision"} {
		for _, k := range Cutoffs {
			lower[fam+"_at_"+strconv.Itoa(k)] = 0
		}
	}
	lower["mrr"] = 0
	got := UpperKeys(lower)
	if len(got) != len(upper.Test) {
		t.Fatalf("%d keys, published file has %d", len(got), len(upper.Test))
	}
	for k := range upper.Test {
		if _, ok := got[k]; !ok {
			t.Errorf("published key %q not produced", k)
		}
	}
	if v, ok := upper.Metric("ndcg_at_10"); !ok || v != 0.57342 {
		t.Errorf("Metric(ndcg_at_10) on an upper-case file = %v, %v", v, ok)
	}
}

// TestMeanOver: our files say which queries their means are over in a
// top-level key of their own, which reads back into MeanOver (not Extra);
// R2MED's files, which lack it, read with MeanOver empty and re-render
// byte for byte (TestOfficialFilesRoundTrip). MeanNote puts it in words
// with the manifest's counts.
func TestMeanOver(t *testing.T) {
	r := &R2MED{DatasetName: "nfcorpus", EvaluationTime: "0.0 minutes", ModelName: "bm25-lucene", MeanOver: "all judged queries",
		Test: map[string]float64{"ndcg_at_10": 0.25}}
	want := "{\n  \"dataset_name\": \"nfcorpus\",\n  \"evaluation_time\": \"0.0 minutes\",\n  \"mean_over\": \"all judged queries\",\n  \"model_name\": \"bm25-lucene\",\n  \"test\": {\n    \"ndcg_at_10\": 0.25\n  }\n}"
	if got := string(r.Marshal()); got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	p := filepath.Join(t.TempDir(), "results.json")
	if err := r.WriteFile(p); err != nil {
		t.Fatal(err)
	}
	back, err := ReadR2MED(p)
	if err != nil {
		t.Fatal(err)
	}
	if back.MeanOver != r.MeanOver || len(back.Extra) != 0 {
		t.Errorf("read back MeanOver %q, Extra %v", back.MeanOver, back.Extra)
	}
	m := &Manifest{Counts: map[string]int{QueriesEvaluated: 323, QueriesRanked: 308, QueriesWithoutResults: 15}}
	for _, c := range []struct {
		res  *R2MED
		m    *Manifest
		want string
	}{
		{r, m, "means over all judged queries (323; 15 without results count 0)"},
		{r, &Manifest{Counts: map[string]int{QueriesEvaluated: 15, QueriesWithoutResults: 0}}, "means over all judged queries (15)"},
		{r, &Manifest{Counts: map[string]int{}}, "means over all judged queries"},
		{r, nil, "means over all judged queries"},
		{&R2MED{}, m, ""},
	} {
		if got := MeanNote(c.res, c.m); got != c.want {
			t.Errorf("MeanNote = %q, want %q", got, c.want)
		}
	}
}

// TestMRRLabel: BRIGHT's MRR reads each query's top 1000 (retrievers.py
// keeps 1000, run.py's calculate_retrieval_metrics takes pytrec_eval's
// recip_rank), so a BRIGHT run kept shallower than that and than its
// corpus names its depth; one as deep, or holding the whole corpus, is
// BRIGHT's MRR; R2MED's and other data's MRR is the run's own.
func TestMRRLabel(t *testing.T) {
	for _, c := range []struct {
		task             string
		depth, documents int
		want             string
	}{
		{"BRIGHT-biology", 100, 57359, "MRR@100"},
		{"BRIGHT-biology", 10, 79, "MRR@10"},
		{"BRIGHT-biology-long", 100, 524, "MRR@100"},
		{"BRIGHT-biology", 1000, 57359, "MRR"},
		{"BRIGHT-biology", 2000, 57359, "MRR"},
		{"BRIGHT-pony-long", 600, 577, "MRR"},
		{"BRIGHT-biology", 0, 57359, "MRR"},
		{"BRIGHT-biology", 100, 0, "MRR"},
		{"Biology", 100, 57359, "MRR"},
		{"demo", 10, 79, "MRR"},
	} {
		if got := MRRLabel(c.task, c.depth, c.documents); got != c.want {
			t.Errorf("MRRLabel(%s, %d, %d) = %s, want %s", c.task, c.depth, c.documents, got, c.want)
		}
	}
	m := &Manifest{Task: TaskInfo{Name: "BRIGHT-biology"}, Config: map[string]any{"top_k": float64(100)}, Counts: map[string]int{"documents": 57359}}
	if got := m.MRRLabel(); got != "MRR@100" {
		t.Errorf("a manifest read back: %s", got)
	}
	m.Config["top_k"] = 1000
	if got := m.MRRLabel(); got != "MRR" {
		t.Errorf("a manifest 1000 deep: %s", got)
	}
	if got := (*Manifest)(nil).MRRLabel(); got != "MRR" {
		t.Errorf("no manifest: %s", got)
	}
}

// TestMRRMarkNotes: the mark a view puts beside an MRR named by its depth,
// and the one line per depth that explains it, shallowest first; plain
// MRR (and other metrics' labels) get neither.
func TestMRRMarkNotes(t *testing.T) {
	for label, want := range map[string]string{"MRR@100": "@100", "MRR@10": "@10", "MRR": "", "": "", "nDCG@10": ""} {
		if got := MRRMark(label); got != want {
			t.Errorf("MRRMark(%q) = %q, want %q", label, got, want)
		}
	}
	got := MRRMarkNotes([]string{"MRR@100", "MRR", "", "MRR@10", "MRR@100", "nDCG@10"})
	want := []string{
		"@10: MRR over each query's top 10, where BRIGHT's run.py reads its top 1000 (r2med run --top-k 1000)",
		"@100: MRR over each query's top 100, where BRIGHT's run.py reads its top 1000 (r2med run --top-k 1000)",
	}
	if !slices.Equal(got, want) {
		t.Errorf("MRRMarkNotes: %q, want %q", got, want)
	}
	if n := MRRLabelNote("bm25 #5729", []string{"BRIGHT-biology", "BRIGHT-leetcode"}, "MRR@100"); n != "bm25 #5729's MRR on BRIGHT-biology, BRIGHT-leetcode is its MRR@100, "+want[1][len("@100: "):] {
		t.Errorf("MRRLabelNote: %q", n)
	}
	if n := MRRLabelNote("bm25", []string{"Biology"}, "MRR"); n != "" {
		t.Errorf("MRRLabelNote of plain MRR: %q", n)
	}
}
