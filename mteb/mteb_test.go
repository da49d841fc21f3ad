package mteb

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const fixture = "testdata/results/example-org__example-model/0123456789abcdef0123456789abcdef01234567"

// TestTaskNames: the names MTEB registers (testdata/FACTS.md), read at the
// registry's revisions.
func TestTaskNames(t *testing.T) {
	want := []string{"R2MEDBiologyRetrieval", "R2MEDBioinformaticsRetrieval", "R2MEDMedicalSciencesRetrieval", "R2MEDMedXpertQAExamRetrieval",
		"R2MEDMedQADiagRetrieval", "R2MEDPMCTreatmentRetrieval", "R2MEDPMCClinicalRetrieval", "R2MEDIIYiClinicalRetrieval"}
	var got []string
	for _, task := range Tasks() {
		got = append(got, task.Name)
		if !strings.HasPrefix(task.Dataset, "R2MED/") || len(task.Revision) != 40 || task.Documents == 0 {
			t.Errorf("%+v", task)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("tasks %v\nwant %v", got, want)
	}
	bio, err := ForR2MED("bioinformatics")
	if err != nil || bio.Name != "R2MEDBioinformaticsRetrieval" || bio.Revision != "6021fce366892cbfd7837fa85a4128ea93315e18" || bio.Documents != 47471 {
		t.Errorf("Bioinformatics: %+v, %v", bio, err)
	}
	if _, ok := Lookup("NFCorpus"); ok {
		t.Error("NFCorpus is not one of R2MED's tasks")
	}
}

// TestValidate checks the fixture written from MTEB's schema and each way
// a file breaks it.
func TestValidate(t *testing.T) {
	good, err := os.ReadFile(filepath.Join(fixture, "R2MEDBiologyRetrieval.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := Validate(good); err != nil {
		t.Fatalf("fixture: %v", err)
	}
	r, err := Parse(good)
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := r.Score("test", "main_score"); !ok || v != 0.3 {
		t.Errorf("main_score %v %v", v, ok)
	}
	if v, ok := r.Score("test", "nauc_ndcg_at_10_max"); !ok || v != -0.05 {
		t.Errorf("a key MTEB writes and R2MED does not: %v %v", v, ok)
	}
	for _, c := range []struct{ name, from, to, want string }{
		{"no revision", `"dataset_revision": "8b9fec2db9eda4b5742d03732213fbaee8169556",`, ``, `no "dataset_revision": MTEB's TaskResult requires it`},
		{"number for a text", `"task_name": "R2MEDBiologyRetrieval"`, `"task_name": 7`, `"task_name" is a number; MTEB's TaskResult wants a string`},
		{"version missing", `"mteb_version": "1.38.20",`, ``, `no "mteb_version"`},
		{"time as text", `"evaluation_time": 12.5`, `"evaluation_time": "12.5"`, `"evaluation_time" is a string; MTEB's TaskResult wants a number or null`},
		{"split not a list", `"test": [`, `"test": {"x": [`, `scores.test is an object; MTEB wants a list`},
		{"no main score", `"main_score": 0.3,`, ``, `scores.test[0] has no main_score`},
		{"subset as number", `"hf_subset": "default"`, `"hf_subset": 0`, `scores.test[0]: hf_subset is a number; MTEB wants a string`},
		{"languages as text", "\"languages\": [\n          \"eng-Latn\"\n        ]", `"languages": "eng-Latn"`, `scores.test[0]: languages is a string; MTEB wants a list`},
		{"co2 as text", `"kg_co2_emissions": null`, `"kg_co2_emissions": "none"`, `"kg_co2_emissions" is a string`},
	} {
		bad := strings.Replace(string(good), c.from, c.to, 1)
		if bad == string(good) {
			t.Fatalf("%s: %q not in the fixture", c.name, c.from)
		}
		if c.name == "split not a list" {
			bad = strings.Replace(bad, "    ]\n  },", "    ]}\n  },", 1)
		}
		err := Validate([]byte(bad))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	old := `{"dataset_revision": "x", "mteb_dataset_name": "R2MEDBiologyRetrieval", "test": {"ndcg_at_10": 0.1}}`
	if err := Validate([]byte(old)); err == nil || !strings.Contains(err.Error(), "before version 1.11") {
		t.Errorf("pre-1.11 layout: %v", err)
	}
}

// TestFromRun converts R2MED's scores and writes them as MTEB's to_disk
// does, then reads them back.
func TestFromRun(t *testing.T) {
	r, notes, err := FromRun(RunScores{
		Task: "MedQA-Diag", Revision: "78b585990279cc01a493f876c1b0cf09557fba57", Depth: 100, Documents: 56250, Seconds: 1.5,
		Scores: map[string]float64{"ndcg_at_10": 0.02551, "ndcg_at_1": 0.01, "recall_at_100": 0.17674, "map_at_100": 0.02, "precision_at_10": 0.00847, "mrr": 0.04551},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := `{
  "dataset_revision": "78b585990279cc01a493f876c1b0cf09557fba57",
  "task_name": "R2MEDMedQADiagRetrieval",
  "mteb_version": null,
  "scores": {
    "test": [
      {
        "ndcg_at_1": 0.01,
        "ndcg_at_10": 0.02551,
        "map_at_100": 0.02,
        "recall_at_100": 0.17674,
        "precision_at_10": 0.00847,
        "mrr_at_100": 0.04551,
        "main_score": 0.02551,
        "hf_subset": "default",
        "languages": [
          "eng-Latn"
        ]
      }
    ]
  },
  "evaluation_time": 1.5,
  "kg_co2_emissions": null
}`
	got := string(r.Marshal())
	if got != want {
		t.Errorf("written:\n%s\nwant:\n%s", got, want)
	}
	// MTEB's mrr_at_1000 reads the model's ranking to 1000, which a run
	// kept 100 deep does not hold: left out, and said.
	if len(notes) != 1 || !strings.Contains(notes[0], "mrr_at_1000 left out: the run ranks at most 100 documents per query") {
		t.Errorf("notes %q", notes)
	}
	// Python's json module reads it as the same document.
	var a, b any
	if json.Unmarshal([]byte(got), &a) != nil || json.Unmarshal([]byte(want), &b) != nil {
		t.Fatal("not JSON")
	}
	back, err := Parse([]byte(got))
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := back.Score("test", "recall_at_100"); v != 0.17674 || back.TaskName != "R2MEDMedQADiagRetrieval" {
		t.Errorf("read back %+v", back)
	}
	if _, _, err := FromRun(RunScores{Task: "Biology", Scores: map[string]float64{"ndcg_at_10": 0.1}}); err == nil || !strings.Contains(err.Error(), "does not record which revision") {
		t.Errorf("no revision: %v", err)
	}
	if _, _, err := FromRun(RunScores{Task: "demo", Revision: "x", Scores: map[string]float64{"ndcg_at_10": 0.1}}); err == nil {
		t.Error("a task MTEB does not have converted")
	}
}

// TestFromRunShallow: MTEB's metric at k reads the model's ranking to k
// (it retrieves 1000 per query); a run kept fewer deep (a reranker that
// keeps its depth) has no such number beyond its depth, so those keys are
// left out and said, and a run shallower than the main score's 10 is not
// exported at all. A run that ranks the whole corpus holds every depth.
func TestFromRunShallow(t *testing.T) {
	scores := map[string]float64{"ndcg_at_1": 0.05, "ndcg_at_10": 0.1, "ndcg_at_100": 0.2, "recall_at_10": 0.3, "recall_at_100": 0.4, "precision_at_25": 0.01, "mrr": 0.2}
	shallow, notes, err := FromRun(RunScores{Task: "Biology", Revision: biology, Depth: 10, Documents: 57359, Scores: scores})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"ndcg_at_1", "ndcg_at_10", "recall_at_10", "mrr_at_10"} {
		if _, ok := shallow.Score("test", k); !ok {
			t.Errorf("a run of 10 documents: no %s", k)
		}
	}
	for _, k := range []string{"ndcg_at_100", "recall_at_100", "precision_at_25", "mrr_at_5", "mrr_at_20", "mrr_at_100", "mrr_at_1000"} {
		if v, ok := shallow.Score("test", k); ok {
			t.Errorf("a run of 10 documents: %s %v written, which MTEB computes from ranks beyond 10", k, v)
		}
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "ndcg_at_100, recall_at_100, precision_at_25, mrr_at_20, mrr_at_100 and mrr_at_1000 left out: the run ranks at most 10 documents per query") {
		t.Errorf("notes %q", notes)
	}
	if _, _, err := FromRun(RunScores{Task: "Biology", Revision: biology, Depth: 5, Documents: 57359, Scores: scores}); err == nil || !strings.Contains(err.Error(), "ranks at most 5 documents per query, fewer than the 10 of MTEB's main score ndcg_at_10") {
		t.Errorf("a run of 5 documents: %v", err)
	}
	whole, notes, err := FromRun(RunScores{Task: "Biology", Revision: biology, Depth: 40, Documents: 40, Scores: scores})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"recall_at_100", "mrr_at_100", "mrr_at_1000"} {
		if _, ok := whole.Score("test", k); !ok || len(notes) != 0 {
			t.Errorf("a run of the whole corpus: no %s (notes %q)", k, notes)
		}
	}
	if _, ok := whole.Score("test", "mrr_at_20"); ok {
		t.Error("mrr_at_20 of a run 40 deep is not its reciprocal rank")
	}
}

// biology is the revision of R2MED/Biology MTEB's task pins.
const biology = "8b9fec2db9eda4b5742d03732213fbaee8169556"

// TestFromRunOtherRevision: a run on another revision of the data than
// MTEB's task pins is exported with the revision it read, and said.
func TestFromRunOtherRevision(t *testing.T) {
	r, notes, err := FromRun(RunScores{Task: "Biology", Revision: "1111111111111111111111111111111111111111", Depth: 100, Documents: 57359, Scores: map[string]float64{"ndcg_at_10": 0.1}})
	if err != nil {
		t.Fatal(err)
	}
	want := "the run read R2MED/Biology at 1111111111111111111111111111111111111111, not the revision MTEB's R2MEDBiologyRetrieval pins (8b9fec2db9eda4b5742d03732213fbaee8169556); the file's dataset_revision says which it read"
	if r.DatasetRevision != "1111111111111111111111111111111111111111" || len(notes) != 1 || notes[0] != want {
		t.Errorf("revision %s, notes %q\nwant %q", r.DatasetRevision, notes, want)
	}
}

// TestFromRunUnanswered: judged queries without results count 0 in the
// means, as R2MED's do; MTEB's runs rank every query: said.
func TestFromRunUnanswered(t *testing.T) {
	_, notes, err := FromRun(RunScores{Task: "Biology", Revision: biology, Depth: 100, Documents: 57359, Unanswered: 2, Judged: 103, Scores: map[string]float64{"ndcg_at_10": 0.1}})
	if want := "2 of 103 judged queries got no results and count 0 in every mean, as in results.json; MTEB's runs rank documents for every query"; err != nil || len(notes) != 1 || notes[0] != want {
		t.Errorf("notes %q (%v)\nwant %q", notes, err, want)
	}
}

// TestFromRunExcluded: a run that excluded documents (--exclude) is not
// MTEB's task, which excludes none.
func TestFromRunExcluded(t *testing.T) {
	_, _, err := FromRun(RunScores{Task: "Biology", Revision: biology, Depth: 100, Documents: 57359, Excluded: 3, Scores: map[string]float64{"ndcg_at_10": 0.1}})
	if err == nil || !strings.Contains(err.Error(), "the run excluded 3 (query, document) pairs; MTEB's R2MEDBiologyRetrieval excludes none") {
		t.Errorf("%v", err)
	}
}

// TestModelMetaKeys: model_meta.json holds every key MTEB's ModelMeta
// requires and none it does not define (it forbids extra keys).
func TestModelMetaKeys(t *testing.T) {
	open := true
	data := ModelMeta{Name: "BAAI/bge-large-en-v1.5", Revision: NoRevision, MaxTokens: 512, OpenWeights: &open, Similarity: "cosine"}.Marshal()
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	required := []string{"loader", "name", "revision", "release_date", "languages", "n_parameters", "memory_usage_mb", "max_tokens", "embed_dim",
		"license", "open_weights", "public_training_code", "public_training_data", "framework", "similarity_fn_name", "use_instructions", "training_datasets"}
	defaults := []string{"loader_kwargs", "n_active_parameters_override", "n_embedding_parameters", "reference", "adapted_from", "superseded_by",
		"modalities", "model_type", "citation", "contacts", "experiment_kwargs", "output_dtypes", "extra_requirements_groups"}
	for _, k := range required {
		if _, ok := m[k]; !ok {
			t.Errorf("no %q", k)
		}
	}
	for k := range m {
		if !slices.Contains(required, k) && !slices.Contains(defaults, k) {
			t.Errorf("%q is no key of MTEB's ModelMeta", k)
		}
	}
	if m["name"] != "BAAI/bge-large-en-v1.5" || m["max_tokens"] != 512.0 || m["open_weights"] != true || m["similarity_fn_name"] != "cosine" {
		t.Errorf("%s", data)
	}
}

func TestWriteAndReadDir(t *testing.T) {
	dir := t.TempDir()
	r, _, err := FromRun(RunScores{Task: "Biology", Revision: "8b9fec2db9eda4b5742d03732213fbaee8169556", Depth: 100, Scores: map[string]float64{"ndcg_at_10": 0.19188, "mrr": 0.27195}})
	if err != nil {
		t.Fatal(err)
	}
	files, err := WriteModel(dir, ModelMeta{Name: "r2med/bm25", Revision: NoRevision}, []*TaskResult{r})
	if err != nil {
		t.Fatal(err)
	}
	wantFiles := []string{
		filepath.Join(dir, "results", "r2med__bm25", NoRevision, "R2MEDBiologyRetrieval.json"),
		filepath.Join(dir, "results", "r2med__bm25", NoRevision, "model_meta.json"),
	}
	if !slices.Equal(files, wantFiles) {
		t.Errorf("wrote %v, want %v", files, wantFiles)
	}
	for _, d := range []string{dir, filepath.Join(dir, "results")} {
		got, err := ReadDir(d)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].Model != "r2med/bm25" || got[0].Revision != NoRevision || got[0].Task.R2MED != "Biology" || got[0].Path != wantFiles[0] {
			t.Errorf("ReadDir(%s) = %+v", d, got)
		}
	}

	got, err := ReadDir("testdata")
	if err != nil {
		t.Fatal(err)
	}
	var summary []string
	for _, g := range got {
		v, _ := g.Score(Split, MainScore)
		summary = append(summary, g.Model+"@"+g.Revision+" "+g.Task.R2MED+" "+strings.TrimPrefix(g.Path, "testdata/results/")[:5]+" "+jsonNum(v))
	}
	want := []string{
		"example-org/example-model@0123456789abcdef0123456789abcdef01234567 Biology examp 0.3",
		"example-org/example-model@0123456789abcdef0123456789abcdef01234567 PMC-Clinical examp 0.41234",
		"other-org/no-meta@no_revision_available Biology other 0.2",
	}
	if !slices.Equal(summary, want) {
		t.Errorf("read %q\nwant %q", summary, want)
	}

	for _, m := range []ModelMeta{{Name: "..", Revision: "r"}, {Name: "a/b", Revision: "../x"}, {Name: `a\b`, Revision: "r"}} {
		if _, err := WriteModel(dir, m, []*TaskResult{r}); err == nil {
			t.Errorf("WriteModel(%+v) wrote outside its folder", m)
		}
	}

	bad := t.TempDir()
	p := filepath.Join(bad, "m", "r", "R2MEDBiologyRetrieval.json")
	os.MkdirAll(filepath.Dir(p), 0o755)
	os.WriteFile(p, []byte(strings.Replace(string(r.Marshal()), `"task_name": "R2MEDBiologyRetrieval"`, `"task_name": "R2MEDIIYiClinicalRetrieval"`, 1)), 0o644)
	if _, err := ReadDir(bad); err == nil || !strings.Contains(err.Error(), p+`: task_name is "R2MEDIIYiClinicalRetrieval"`) {
		t.Errorf("mismatched task name: %v", err)
	}
	os.WriteFile(p, []byte(`{"task_name": "R2MEDBiologyRetrieval"}`), 0o644)
	if _, err := ReadDir(bad); err == nil || !strings.Contains(err.Error(), p+`: no "dataset_revision"`) {
		t.Errorf("broken file: %v", err)
	}
	if _, err := ReadDir(t.TempDir()); err == nil || !strings.Contains(err.Error(), "holds no results of R2MED's tasks") {
		t.Errorf("empty folder: %v", err)
	}
}

func jsonNum(v float64) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestLocalName(t *testing.T) {
	for in, want := range map[string]string{"hyde/gpt4 → bm25": "r2med/hyde-gpt4-bm25", "rrf(bm25,bge)": "r2med/rrf-bm25-bge", "nv → bge-reranker@top10": "r2med/nv-bge-reranker-top10", "bm25": "r2med/bm25"} {
		if got := LocalName(in); got != want {
			t.Errorf("LocalName(%q) = %q, want %q", in, got, want)
		}
	}
	if FolderName("BAAI/bge large") != "BAAI__bge_large" {
		t.Error(FolderName("BAAI/bge large"))
	}
}

// TestLeftOut: a run on data that is not an R2MED task is left out of an
// export with the true reason. MTEB does register BRIGHT's tasks
// (bright_v1_1_retrieval.py: BrightBiologyRetrieval, and
// BrightBiologyLongRetrieval for the long documents), but reads them from
// its own copy, mteb/BRIGHT at c26703e6, since mteb PR 4144
// (testdata/FACTS.md); it registers no NanoR2MED split.
func TestLeftOut(t *testing.T) {
	for _, c := range []struct {
		name string
		want []string
	}{
		{"BRIGHT-biology", []string{"R2MED's eight tasks only", "MTEB's BrightBiologyRetrieval", "mteb/BRIGHT at c26703e6600d", "not xlangai/BRIGHT"}},
		{"BRIGHT-earth_science-long", []string{"MTEB's BrightEarthScienceLongRetrieval", "mteb/BRIGHT"}},
		{"BRIGHT-theoremqa_questions", []string{"MTEB's BrightTheoremQAQuestionsRetrieval"}},
		{"NanoR2MEDBiology", []string{"R2MED's eight tasks only", "MTEB registers no NanoR2MED split"}},
		{"NFCorpus", []string{"R2MED's eight tasks only"}},
		{"demo", []string{"R2MED's eight tasks only"}},
	} {
		got := LeftOut(c.name)
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("LeftOut(%q) = %q, want %q in it", c.name, got, w)
			}
		}
		if strings.Contains(got, "no task") {
			t.Errorf("LeftOut(%q) = %q", c.name, got)
		}
	}
}

// TestReadDirCacheRoot: MTEB's cache folder (~/.cache/mteb) keeps the
// results computed here under results/ and the results repository it
// downloads under remote/results/, and ResultCache.load_results reads both
// (get_cache_paths, include_remote=True; testdata/FACTS.md). Pointed at the
// cache folder, ReadDir reads both too, where it read results/ alone and
// left the repository's results out without a word.
func TestReadDirCacheRoot(t *testing.T) {
	cache := t.TempDir()
	r, _, err := FromRun(RunScores{Task: "Biology", Revision: "8b9fec2db9eda4b5742d03732213fbaee8169556", Depth: 100, Scores: map[string]float64{"ndcg_at_10": 0.19188}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := WriteModel(cache, ModelMeta{Name: "r2med/bm25", Revision: NoRevision}, []*TaskResult{r}); err != nil {
		t.Fatal(err)
	}
	if _, err := WriteModel(filepath.Join(cache, "remote"), ModelMeta{Name: "GritLM/GritLM-7B", Revision: "13f00a0e36500c80ce12870ea513846a066004af"}, []*TaskResult{r}); err != nil {
		t.Fatal(err)
	}
	got, err := ReadDir(cache)
	if err != nil {
		t.Fatal(err)
	}
	var models []string
	for _, g := range got {
		models = append(models, g.Model)
	}
	if want := []string{"GritLM/GritLM-7B", "r2med/bm25"}; !slices.Equal(models, want) { // by path: remote/… before results/…
		t.Errorf("read %v, want %v (results/ and remote/results/)", models, want)
	}
}

// TestParseNewerLayout: MTEB since PR 4401 (2026-05) writes each subset's
// mteb_version inside its score set and the top-level one as the range of
// them ("2.12.0-2.12.19"); to_disk writes date as a timestamp and
// evaluation_phases (testdata/FACTS.md). Such a file loads, its scores
// the same.
func TestParseNewerLayout(t *testing.T) {
	good, err := os.ReadFile(filepath.Join(fixture, "R2MEDBiologyRetrieval.json"))
	if err != nil {
		t.Fatal(err)
	}
	newer := strings.Replace(string(good), `"mteb_version": "1.38.20",`, `"mteb_version": "2.12.0-2.12.19",`, 1)
	newer = strings.Replace(newer, `"hf_subset": "default",`, `"hf_subset": "default", "mteb_version": "2.12.0",`, 1)
	newer = strings.Replace(newer, `"kg_co2_emissions": null`, `"kg_co2_emissions": null, "date": 1760000000.5, "evaluation_phases": [{"name": "encode", "start": 1.0, "end": 2.0}]`, 1)
	if newer == string(good) {
		t.Fatal("fixture changed")
	}
	r, err := Parse([]byte(newer))
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := r.Score(Split, MainScore); !ok || v != 0.3 || *r.MTEBVersion != "2.12.0-2.12.19" {
		t.Errorf("ndcg_at_10 %v %v, version %v", v, ok, *r.MTEBVersion)
	}
}

// TestWriteModelStale: a model folder that holds an R2MED task's file this
// export does not write (an earlier export's) would read in MTEB as part
// of this one: refused, naming it, before anything is written. Files of
// other tasks (MTEB's own results of the model) are left as they are.
func TestWriteModelStale(t *testing.T) {
	dir := t.TempDir()
	meta := ModelMeta{Name: "r2med/bm25", Revision: NoRevision}
	bio, _, _ := FromRun(RunScores{Task: "Biology", Revision: biology, Depth: 100, Scores: map[string]float64{"ndcg_at_10": 0.19188}})
	pmc, _, _ := FromRun(RunScores{Task: "PMC-Clinical", Revision: "812829522f7eaa407ef82b96717be85788a50f7e", Depth: 100, Scores: map[string]float64{"ndcg_at_10": 0.2}})
	if _, err := WriteModel(dir, meta, []*TaskResult{bio, pmc}); err != nil {
		t.Fatal(err)
	}
	folder := filepath.Join(dir, "results", "r2med__bm25", NoRevision)
	os.WriteFile(filepath.Join(folder, "NFCorpus.json"), []byte("{}"), 0o644)
	before, _ := os.ReadFile(filepath.Join(folder, "R2MEDBiologyRetrieval.json"))
	bio2, _, _ := FromRun(RunScores{Task: "Biology", Revision: biology, Depth: 100, Scores: map[string]float64{"ndcg_at_10": 0.3}})
	_, err := WriteModel(dir, meta, []*TaskResult{bio2})
	if err == nil || !strings.Contains(err.Error(), filepath.Join(folder, "R2MEDPMCClinicalRetrieval.json")) || !strings.Contains(err.Error(), "not written by this export") {
		t.Errorf("stale file: %v", err)
	}
	if after, _ := os.ReadFile(filepath.Join(folder, "R2MEDBiologyRetrieval.json")); string(after) != string(before) {
		t.Error("a file was replaced before the export was refused")
	}
	os.Remove(filepath.Join(folder, "R2MEDPMCClinicalRetrieval.json"))
	if _, err := WriteModel(dir, meta, []*TaskResult{bio2}); err != nil {
		t.Errorf("the same tasks again, another task's file beside them: %v", err)
	}
}
