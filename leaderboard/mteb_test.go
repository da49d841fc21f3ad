package leaderboard

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadMTEB reads the MTEB results fixture (mteb/testdata, written from
// MTEB's layout): one external row per model and revision, each cell's
// source its file, no printed average, MTEB's mrr left out.
func TestReadMTEB(t *testing.T) {
	dir := filepath.Join("..", "mteb", "testdata")
	ss, err := ReadMTEB(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ss) != 2 {
		t.Fatalf("%d systems", len(ss))
	}
	ex := ss[0]
	if ex.ID != "mteb/example-org/example-model@0123456789abcdef0123456789abcdef01234567" || ex.Name != "example-org/example-model" || ex.Origin() != OriginExternal ||
		!ex.External.AverageComputed {
		t.Errorf("%+v %+v", ex, ex.External)
	}
	// MTEB evaluated the model: the source names the model and revision
	// as the results, MTEB (with its version) as who evaluated them.
	if got, want := ex.External.Source(), "MTEB results in "+dir+": example-org/example-model at revision 0123456789abcdef0123456789abcdef01234567; evaluated by MTEB 1.38.20"; got != want {
		t.Errorf("source %q\nwant   %q", got, want)
	}
	bio := ex.Tasks["Biology"]
	if bio.Metrics["ndcg_at_10"] != 0.3 || bio.Metrics["recall_at_100"] != 0.6 || bio.Style != StyleMTEB ||
		bio.Source != filepath.Join(dir, "results", "example-org__example-model", "0123456789abcdef0123456789abcdef01234567", "R2MEDBiologyRetrieval.json") {
		t.Errorf("Biology %+v", bio)
	}
	if _, ok := bio.Metrics["mrr"]; ok {
		t.Error("MTEB's mrr_at_10 taken as R2MED's MRR")
	}
	if _, ok := bio.Metrics["nauc_ndcg_at_10_max"]; ok {
		t.Error("a metric R2MED has no counterpart for")
	}
	// Without model_meta.json the row is named by its folders, and says
	// that MTEB's loader leaves such results out by default.
	if got, want := ss[1].External.Source(), "MTEB results in "+dir+": other-org/no-meta at revision no_revision_available; evaluated by an unknown tool (mteb_version null: not computed by MTEB); "+
		"no model_meta.json: named by its folders, where MTEB's load_results leaves such results out unless require_model_meta=False"; ss[1].Name != "other-org/no-meta" || got != want {
		t.Errorf("%s: source %q\nwant %q", ss[1].Name, got, want)
	}

	// Another revision of the same model, on another revision of the data.
	tmp := t.TempDir()
	copyTree(t, filepath.Join(dir, "results"), filepath.Join(tmp, "results"))
	second := filepath.Join(tmp, "results", "example-org__example-model", "fedcba")
	os.MkdirAll(second, 0o755)
	data, _ := os.ReadFile(filepath.Join(dir, "results", "example-org__example-model", "0123456789abcdef0123456789abcdef01234567", "R2MEDBiologyRetrieval.json"))
	os.WriteFile(filepath.Join(second, "R2MEDBiologyRetrieval.json"), bytes.Replace(data, []byte("8b9fec2db9eda4b5742d03732213fbaee8169556"), []byte("1111111111111111111111111111111111111111"), 1), 0o644)
	ss, err = ReadMTEB(tmp)
	if err != nil {
		t.Fatal(err)
	}
	if len(ss) != 3 || ss[1].Name != "example-org/example-model@fedcba" || !strings.Contains(ss[1].External.Note, "Biology read R2MED/Biology at 1111111111111111111111111111111111111111, not the revision MTEB pins") {
		t.Errorf("two revisions: %+v / %+v", ss[1], ss[1].External)
	}

	// On the board: no "printed" average beside the row's own.
	b, err := Load("", Sources{MTEB: dir})
	if err != nil {
		t.Fatal(err)
	}
	tab, err := b.Table(Options{})
	if err != nil {
		t.Fatal(err)
	}
	var csv bytes.Buffer
	if err := tab.Write(&csv, CSV); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(csv.String(), ",30.00,,,,,,41.23,,,2,,MTEB results in ") {
		t.Errorf("csv:\n%s", csv.String())
	}
}

func copyTree(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestReadMTEBSameResultTwice: MTEB's cache can hold a model's result of a
// task twice, computed here (results/) and downloaded (remote/results/);
// MTEB keeps both, a board can show one: the error names both files.
func TestReadMTEBSameResultTwice(t *testing.T) {
	cache := t.TempDir()
	from := filepath.Join("..", "mteb", "testdata", "results")
	copyTree(t, from, filepath.Join(cache, "results"))
	copyTree(t, from, filepath.Join(cache, "remote", "results"))
	_, err := ReadMTEB(cache)
	file := filepath.Join("example-org__example-model", "0123456789abcdef0123456789abcdef01234567", "R2MEDBiologyRetrieval.json")
	if err == nil || !strings.Contains(err.Error(), filepath.Join(cache, "results", file)) || !strings.Contains(err.Error(), filepath.Join(cache, "remote", "results", file)) {
		t.Errorf("got %v, want an error naming both copies of %s", err, file)
	}
}

// TestReadMTEBScoreScale: MTEB's files hold fractions (0 to 1); a file
// with percentages (a score of 30 for 0.30, as MTEB's leaderboard prints
// them) would show 3000.00 on the board: it is refused, naming the file
// and the key. A file with main_score and no ndcg_at_10 (R2MED's main
// score in MTEB) shows its main score as nDCG@10; one where the two
// differ says two things and is refused.
func TestReadMTEBScoreScale(t *testing.T) {
	for _, c := range []struct {
		name, scores, want string
		ndcg               float64
	}{
		{"percent", `{"ndcg_at_10": 30.0, "main_score": 30.0, "hf_subset": "default", "languages": ["eng-Latn"]}`, "ndcg_at_10 is 30, outside 0 to 1: MTEB's files hold fractions (0.3 for 30%)", 0},
		{"negative", `{"ndcg_at_10": 0.2, "recall_at_100": -0.1, "main_score": 0.2, "hf_subset": "default", "languages": ["eng-Latn"]}`, "recall_at_100 is -0.1, outside 0 to 1", 0},
		{"main only", `{"main_score": 0.25, "hf_subset": "default", "languages": ["eng-Latn"]}`, "", 0.25},
		{"disagree", `{"ndcg_at_10": 0.2, "main_score": 0.25, "hf_subset": "default", "languages": ["eng-Latn"]}`, "main_score 0.25 is not its ndcg_at_10 0.2, which MTEB's R2MED tasks take as their main score", 0},
	} {
		dir := t.TempDir()
		folder := filepath.Join(dir, "results", "x__y", "r1")
		os.MkdirAll(folder, 0o755)
		path := filepath.Join(folder, "R2MEDBiologyRetrieval.json")
		os.WriteFile(path, []byte(`{"dataset_revision": "8b9fec2db9eda4b5742d03732213fbaee8169556", "task_name": "R2MEDBiologyRetrieval", "mteb_version": "1.38.20",
  "scores": {"test": [`+c.scores+`]}, "evaluation_time": 1.0}`), 0o644)
		ss, err := ReadMTEB(dir)
		if c.want == "" {
			if err != nil || len(ss) != 1 || ss[0].Tasks["Biology"].Metrics["ndcg_at_10"] != c.ndcg {
				t.Errorf("%s: %v %+v", c.name, err, ss)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v\nwant an error naming %s: %q", c.name, err, path, c.want)
		}
	}
}

// TestReadMTEBMRR: MTEB's mrr_at_100 is MRR over the top 100 of a ranking
// 1000 deep, which is R2MED's MRR (over a run's top 100): it shows as the
// row's MRR; mrr_at_10 (a shallower cut) does not.
func TestReadMTEBMRR(t *testing.T) {
	dir := t.TempDir()
	folder := filepath.Join(dir, "results", "x__y", "r1")
	os.MkdirAll(folder, 0o755)
	os.WriteFile(filepath.Join(folder, "R2MEDBiologyRetrieval.json"), []byte(`{"dataset_revision": "8b9fec2db9eda4b5742d03732213fbaee8169556", "task_name": "R2MEDBiologyRetrieval", "mteb_version": "2.18.20",
  "scores": {"test": [{"ndcg_at_10": 0.2, "mrr_at_10": 0.3, "mrr_at_100": 0.312345, "mrr_at_1000": 0.3125, "main_score": 0.2, "hf_subset": "default", "languages": ["eng-Latn"]}]}, "evaluation_time": 1.0}`), 0o644)
	ss, err := ReadMTEB(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := ss[0].Tasks["Biology"].Metrics["mrr"]; got != 0.312345 {
		t.Errorf("MRR %v, want mrr_at_100's 0.312345", got)
	}
}
