package results

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/r2med/r2med/internal/reuse"
	"github.com/r2med/r2med/tasks"
)

// writeRun writes a finished run directory the way pipeline.Run does.
func writeRun(t *testing.T, dir, task string, started time.Time, res *R2MED) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := res.WriteFile(filepath.Join(dir, ResultsFile)); err != nil {
		t.Fatal(err)
	}
	m := NewManifest(nil)
	m.Started = started
	m.Task = TaskInfo{Name: task}
	m.Config = map[string]any{"retriever": "bm25"}
	m.Stages = []Stage{{Name: "index", Seconds: 1.5}, {Name: "search", Seconds: 2}}
	if err := m.WriteFile(filepath.Join(dir, ManifestFile)); err != nil {
		t.Fatal(err)
	}
}

func TestScan(t *testing.T) {
	root := t.TempDir()
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	bm := &R2MED{DatasetName: "Biology", EvaluationTime: "0.1 minutes", ModelName: "bm25", Test: map[string]float64{"ndcg_at_10": 0.5}}
	writeRun(t, filepath.Join(root, "sweep", "bm25", "Biology"), "Biology", now, bm)
	gar := &R2MED{DatasetName: "NanoR2MEDMedQADiag", Test: map[string]float64{"NDCG@10": 0.25},
		Extra: map[string]any{"gar_method": "hyde", "gar_llm": "gpt4", "retriever_name": "bm25"}}
	writeRun(t, filepath.Join(root, "nano"), "NanoR2MEDMedQADiag", now, gar)
	writeRun(t, filepath.Join(root, "demo"), "demo", now, &R2MED{DatasetName: "demo", ModelName: "bm25", Test: map[string]float64{}})
	writeRun(t, filepath.Join(root, "bright", "bm25", "BRIGHT-biology-long"), "BRIGHT-biology-long", now, &R2MED{DatasetName: "BRIGHT-biology-long", ModelName: "bm25", Test: map[string]float64{}})
	// A run still going: results written, manifest not yet.
	if err := os.MkdirAll(filepath.Join(root, "half"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := bm.WriteFile(filepath.Join(root, "half", ResultsFile)); err != nil {
		t.Fatal(err)
	}

	l, err := Scan(root)
	if err != nil {
		t.Fatal(err)
	}
	var rels []string
	for _, r := range l.Runs {
		rels = append(rels, r.Rel)
	}
	if got, want := strings.Join(rels, " "), "bright/bm25/BRIGHT-biology-long demo nano sweep/bm25/Biology"; got != want {
		t.Fatalf("runs %q, want %q", got, want)
	}
	if len(l.Unfinished) != 1 || filepath.Base(l.Unfinished[0]) != "half" {
		t.Errorf("unfinished %q, want the half directory", l.Unfinished)
	}
	bright, demo, nano, bio := l.Runs[0], l.Runs[1], l.Runs[2], l.Runs[3]
	// A BRIGHT run is no R2MED task's, whatever its name's resemblance.
	if task, ok := bright.Task(); task != "BRIGHT-biology-long" || ok || bright.Suite() != tasks.BrightLong {
		t.Errorf("BRIGHT run: task %q %v suite %s", task, ok, bright.Suite())
	}
	if task, ok := bio.Task(); task != "Biology" || !ok || bio.Suite() != tasks.R2MED {
		t.Errorf("Biology run: task %q %v suite %s", task, ok, bio.Suite())
	}
	if task, ok := nano.Task(); task != "MedQA-Diag" || !ok || nano.Suite() != tasks.Nano {
		t.Errorf("Nano run: task %q %v suite %s", task, ok, nano.Suite())
	}
	if task, ok := demo.Task(); task != "demo" || ok {
		t.Errorf("demo run: task %q %v, want demo false", task, ok)
	}
	if got := nano.Describe(); got != "hyde/gpt4 → bm25" {
		t.Errorf("GAR run described as %q", got)
	}
	if got := bio.Seconds(); got != 3.5 {
		t.Errorf("seconds %v, want 3.5", got)
	}
	if bio.RunPath() != "" {
		t.Errorf("RunPath %q for a directory without run.trec", bio.RunPath())
	}
}

func TestScanErrors(t *testing.T) {
	l, err := Scan(filepath.Join(t.TempDir(), "none"))
	if err != nil || len(l.Runs) != 0 {
		t.Fatalf("missing root: %v, %d runs; want an empty listing", err, len(l.Runs))
	}
	root := t.TempDir()
	writeRun(t, filepath.Join(root, "a"), "Biology", time.Now(), &R2MED{DatasetName: "Biology", ModelName: "bm25", Test: map[string]float64{}})
	bad := filepath.Join(root, "a", ResultsFile)
	if err := os.WriteFile(bad, []byte(`{"dataset_name": "Biology"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Scan(root)
	if err == nil || !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), "no \"test\" metrics") {
		t.Fatalf("malformed results file: got %v, want an error naming %s", err, bad)
	}
}

func TestSystemName(t *testing.T) {
	for _, c := range []struct {
		res  R2MED
		want string
	}{
		{R2MED{ModelName: "nv"}, "nv"},
		{R2MED{Extra: map[string]any{"gar_method": "lamer", "gar_llm": "qwen-7b", "retriever_name": "bge"}}, "lamer/qwen-7b → bge"},
		// R2MED's reranker files name the model, ours kind:model; the depth
		// is written as sysname writes it (R2MED's tables: "@top10").
		{R2MED{Extra: map[string]any{"reranker_name": "rankllama", "retriever_name": "nv", "topk": 10}}, "nv → rankllama@10"},
		{R2MED{Extra: map[string]any{"reranker_name": "insertrank:r1", "retriever_name": "rrf(bm25,run:bm25)", "topk": 20.0}}, "rrf(bm25,run:bm25) → insertrank:r1@20"},
		// A GAR run reranked keeps its expansion in the name.
		{R2MED{Extra: map[string]any{"gar_method": "hyde", "gar_llm": "gpt4", "retriever_name": "bm25", "reranker_name": "tei", "topk": 10}}, "hyde/gpt4 → bm25 → tei@10"},
		{R2MED{ModelName: "rrf(bm25,bge)"}, "rrf(bm25,bge)"},
	} {
		if got := SystemName(&c.res); got != c.want {
			t.Errorf("SystemName = %q, want %q", got, c.want)
		}
	}
}

// TestCheckRunFile: the run file is checked against the checksum its
// manifest recorded; without one (an older manifest), without a
// manifest, or gzipped since, there is nothing to check it against.
func TestCheckRunFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, RunFile)
	os.WriteFile(p, []byte("q1 Q0 d1 1 2 t\nq1 Q0 d2 2 1 t\n"), 0o644)
	sum := "02d5d2b0a5a2f4f5c8ff7e2b8e0c2e5b0f0b6a3a1b1c7f1e6c1b5b8e1b7c1d2e"
	for _, c := range []struct {
		m    *Manifest
		fail bool
	}{
		{nil, false},
		{&Manifest{}, false},
		{&Manifest{OutputSHA256: map[string]string{RunFile: sum}}, true},
	} {
		err := Run{Dir: dir, Manifest: c.m}.CheckRunFile()
		if c.fail != (err != nil) || c.fail && !strings.Contains(err.Error(), p+" changed since the run wrote it") {
			t.Errorf("manifest %+v: %v", c.m, err)
		}
	}
	os.Rename(p, p+".gz")
	if err := (Run{Dir: dir, Manifest: &Manifest{OutputSHA256: map[string]string{RunFile: sum}}}).CheckRunFile(); err != nil {
		t.Errorf("gzipped since: %v", err)
	}
}

// TestScanVerifiesResults: a result file that is not the one its manifest
// vouches for (edited, or overwritten by another tool's evaluation) is an
// error naming it, where listings showed its numbers as the run's.
func TestScanVerifiesResults(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "bm25", "demo")
	writeRun(t, dir, "demo", time.Now(), &R2MED{DatasetName: "demo", ModelName: "bm25", Test: map[string]float64{"ndcg_at_10": 0.5}})
	m, err := ReadManifest(filepath.Join(dir, ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	m.OutputSHA256 = map[string]string{}
	if m.OutputSHA256[ResultsFile], err = reuse.Sum(filepath.Join(dir, ResultsFile)); err != nil {
		t.Fatal(err)
	}
	if err := m.WriteFile(filepath.Join(dir, ManifestFile)); err != nil {
		t.Fatal(err)
	}
	if _, err := Scan(root); err != nil {
		t.Fatalf("the file the manifest vouches for: %v", err)
	}
	edited := &R2MED{DatasetName: "demo", ModelName: "bm25", Test: map[string]float64{"ndcg_at_10": 0.9}}
	if err := edited.WriteFile(filepath.Join(dir, ResultsFile)); err != nil {
		t.Fatal(err)
	}
	if _, err := Scan(root); err == nil || !strings.Contains(err.Error(), filepath.Join(dir, ResultsFile)+" changed since the run wrote it") {
		t.Errorf("an edited result file: %v, want it named as changed", err)
	}
}

// TestScanRootLink: a results directory given as a symbolic link (a
// scratch disk linked into the project) lists its runs, named under the
// link as the user gave it; a file given as the directory is an error
// saying so, not an empty listing.
func TestScanRootLink(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	writeRun(t, filepath.Join(out, "bm25", "Biology"), "Biology", time.Now(), &R2MED{DatasetName: "Biology", ModelName: "bm25", Test: map[string]float64{"ndcg_at_10": 0.5}})
	link := filepath.Join(dir, "outlink")
	if err := os.Symlink(out, link); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	l, err := Scan(link)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Runs) != 1 || l.Runs[0].Rel != filepath.Join("bm25", "Biology") || l.Runs[0].Dir != filepath.Join(link, "bm25", "Biology") {
		t.Fatalf("through the link: %+v, want the one run at outlink/bm25/Biology", l.Runs)
	}
	file := filepath.Join(out, "bm25", "Biology", ResultsFile)
	if _, err := Scan(file); err == nil || !strings.Contains(err.Error(), file) || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("a file as the results directory: %v, want an error naming it", err)
	}
}
