package main

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/r2med/r2med/hubrepo/brighttest"
	"github.com/r2med/r2med/measure"
	"github.com/r2med/r2med/mteb"
	"github.com/r2med/r2med/pipeline"
	"github.com/r2med/r2med/results"
)

// TestResultsExportMTEB runs BM25 and HyDE on R2MED/Biology from the
// loopback Hub, exports the runs in MTEB's layout, checks every file as
// MTEB's TaskResult schema does, and reads the folder back into the
// leaderboard as external rows with the same nDCG@10 and their files as
// sources.
func TestResultsExportMTEB(t *testing.T) {
	srv, repos, _ := fakeHubEnv(t)
	brighttest.Serve(t, srv)
	res := t.TempDir()
	mustRun(t, "run", "--task", "Biology", "--out", filepath.Join(res, "bm25", "Biology"), "--quiet")
	mustRun(t, "run", "--task", "Biology", "--gar", "hyde", "--gar-llm", "gpt4", "--out", filepath.Join(res, "hyde", "Biology"), "--quiet")
	mustRun(t, "run", "--task", "demo", "--out", filepath.Join(res, "bm25", "demo"), "--quiet")
	// A run that excluded a document MTEB's task does not exclude.
	first := strings.Fields(readFileString(t, filepath.Join(res, "bm25", "Biology", pipeline.RunFile)))
	exclude := filepath.Join(t.TempDir(), "exclude.tsv")
	os.WriteFile(exclude, []byte(first[0]+"\t"+first[2]+"\n"), 0o644)
	mustRun(t, "run", "--task", "Biology", "--exclude", exclude, "--name", "bm25-excluding", "--out", filepath.Join(res, "excluding", "Biology"), "--quiet")
	ours, err := results.ReadR2MED(filepath.Join(res, "bm25", "Biology", pipeline.ResultsFile))
	if err != nil {
		t.Fatal(err)
	}

	out := t.TempDir()
	stdout, stderr, code := r2med(t, "", "results", "export", "--format", "mteb", "--results", res, "--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	bm25 := filepath.Join(out, "results", "r2med__bm25", mteb.NoRevision)
	for _, f := range []string{filepath.Join(bm25, "R2MEDBiologyRetrieval.json"), filepath.Join(bm25, "model_meta.json"),
		filepath.Join(out, "results", "r2med__hyde-gpt4-bm25", mteb.NoRevision, "R2MEDBiologyRetrieval.json")} {
		if !strings.Contains(stdout, f+"\n") {
			t.Errorf("%s not written:\n%s", f, stdout)
		}
	}
	if !strings.Contains(stderr, "note: bm25 on demo left out: r2med writes MTEB's results for R2MED's eight tasks only\n") {
		t.Errorf("the demo run is not said to be left out:\n%s", stderr)
	}
	if !strings.Contains(stderr, "the run excluded 1 (query, document) pair; MTEB's R2MEDBiologyRetrieval excludes none") || strings.Contains(stdout, "bm25-excluding") {
		t.Errorf("the run with exclusions is not left out:\n%s\n%s", stdout, stderr)
	}
	if !strings.Contains(stderr, "note: hyde/gpt4 → bm25 is exported as MTEB's model r2med/hyde-gpt4-bm25: its scores are a retriever's on queries an LLM expanded, not one model's ranking\n") {
		t.Errorf("the GAR system is not said to be more than a model:\n%s", stderr)
	}
	// A BRIGHT run is left out with the true reason: MTEB has BRIGHT's
	// tasks, but evaluates its own copy of the data.
	bres := t.TempDir()
	mustRun(t, "run", "--suite", "bright", "--task", "biology", "--out", filepath.Join(bres, "bm25", "bright-biology"), "--quiet")
	_, stderr, code = r2med(t, "", "results", "export", "--format", "mteb", "--results", bres, "--out", t.TempDir())
	if want := "note: bm25 (bright) on BRIGHT-biology left out: r2med writes MTEB's results for R2MED's eight tasks only; MTEB's BrightBiologyRetrieval evaluates mteb/BRIGHT at c26703e6600d"; code != 1 ||
		!strings.Contains(stderr, want) || strings.Contains(stderr, "MTEB has no task") {
		t.Errorf("BRIGHT run: exit %d, stderr\n%s\nwant %q", code, stderr, want)
	}
	data, err := os.ReadFile(filepath.Join(bm25, "R2MEDBiologyRetrieval.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := mteb.Validate(data); err != nil {
		t.Fatalf("MTEB's schema refuses the export: %v", err)
	}
	var file struct {
		DatasetRevision string `json:"dataset_revision"`
		TaskName        string `json:"task_name"`
		Scores          map[string][]map[string]any
	}
	json.Unmarshal(data, &file)
	set := file.Scores["test"][0]
	ndcg, _ := ours.Metric("ndcg_at_10")
	// The run file evaluated as MTEB does: its MRR over a run no deeper
	// than 100 is trec_eval's reciprocal rank, written to six decimals
	// (results.json holds five), and MTEB's other cutoffs are there.
	l, err := results.Scan(filepath.Join(res, "bm25", "Biology"))
	if err != nil || len(l.Runs) != 1 {
		t.Fatal(err)
	}
	task, err := pipeline.LoadRunTask(context.Background(), l.Runs[0])
	if err != nil {
		t.Fatal(err)
	}
	ev, err := measure.Evaluate(task.Qrels, readRun(t, filepath.Join(res, "bm25", "Biology", pipeline.RunFile)), measure.MustParse("recip_rank"), measure.Options{Complete: true})
	if err != nil {
		t.Fatal(err)
	}
	mrr := math.Round(ev.All[0]*1e6) / 1e6
	if file.DatasetRevision != repos.BiologyCommit || file.TaskName != "R2MEDBiologyRetrieval" || set["main_score"] != ndcg || set["ndcg_at_10"] != ndcg ||
		set["mrr_at_100"] != mrr || set["hf_subset"] != "default" || set["ndcg_at_5"] == nil || set["mrr_at_1"] == nil {
		t.Errorf("exported %s\nrun's nDCG@10 %v, MRR %v", data, ndcg, mrr)
	}

	// --model and --revision name one system as MTEB names models.
	named := t.TempDir()
	mustRun(t, "results", "export", "--format", "mteb", "--results", res, "--system", "bm25", "--model", "BAAI/bm25-test", "--revision", "abc123", "--out", named)
	if _, err := os.Stat(filepath.Join(named, "results", "BAAI__bm25-test", "abc123", "R2MEDBiologyRetrieval.json")); err != nil {
		t.Error(err)
	}
	if _, stderr, code := r2med(t, "", "results", "export", "--format", "mteb", "--results", res, "--model", "x/y", "--out", named); code != 2 || !strings.Contains(stderr, "--model and --revision name one system, and 3 are exported") {
		t.Errorf("--model with two systems: exit %d %s", code, stderr)
	}

	// The folder read back into the leaderboard.
	stdout = mustRun(t, "leaderboard", "--mteb", out, "--no-published", "--no-external", "--results", t.TempDir(), "--format", "json")
	var board struct {
		Rows []struct {
			ID      string             `json:"id"`
			Origin  string             `json:"source"`
			Scores  map[string]float64 `json:"scores"`
			Sources map[string]string  `json:"sources"`
		} `json:"rows"`
	}
	if err := json.Unmarshal([]byte(stdout), &board); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	found := false
	for _, r := range board.Rows {
		if r.ID == "mteb/r2med/bm25@"+mteb.NoRevision {
			found = true
			if r.Origin != "external" || r.Scores["Biology"] != ndcg || r.Sources["Biology"] != filepath.Join(bm25, "R2MEDBiologyRetrieval.json") {
				t.Errorf("row %+v; want origin external, nDCG@10 %v, source the exported file", r, ndcg)
			}
		}
	}
	if !found {
		t.Errorf("no MTEB row in\n%s", stdout)
	}

	// Without the data the run read, the run file cannot be evaluated as
	// MTEB does: said, and results.json's numbers written as they are.
	if err := os.Rename(task.Dir, task.Dir+".away"); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HF_HUB_OFFLINE", "1")
	bare := t.TempDir()
	_, stderr, code = r2med(t, "", "results", "export", "--format", "mteb", "--results", res, "--system", "bm25", "--out", bare)
	if code != 0 || !strings.Contains(stderr, "note: bm25 on Biology: its data is not at hand to evaluate run.trec as MTEB does") {
		t.Fatalf("exit %d, stderr\n%s", code, stderr)
	}
	data, _ = os.ReadFile(filepath.Join(bare, "results", "r2med__bm25", mteb.NoRevision, "R2MEDBiologyRetrieval.json"))
	json.Unmarshal(data, &file)
	if five, _ := ours.Metric("mrr"); file.Scores["test"][0]["mrr_at_100"] != five || file.Scores["test"][0]["ndcg_at_5"] != nil {
		t.Errorf("without the data:\n%s", data)
	}
}

// TestLeaderboardSaysWhyEmpty: a board with systems that the options
// leave no row of says which option did it, not that there were no runs:
// the fixture's MTEB rows have no MRR (no mrr_at_100, which is R2MED's
// MRR; mrr_at_10 is not), R2MED's published systems hold no fusion.
func TestLeaderboardSaysWhyEmpty(t *testing.T) {
	empty := t.TempDir()
	mtebDir := filepath.Join("..", "..", "mteb", "testdata")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--mteb", mtebDir, "--no-published", "--no-external", "--metric", "mrr"}, "no systems to show: none of the 2 systems on the board has a value of MRR"},
		{[]string{"--kind", "fusion", "--no-external"}, "no systems to show: none of the 71 systems on the board is of kind fusion"},
		{[]string{"--no-published", "--no-external"}, "no systems to show: no runs under " + empty + ", and --no-published and --no-external given"},
	} {
		_, stderr, code := r2med(t, "", append([]string{"leaderboard", "--results", empty}, c.args...)...)
		if code != 1 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, %q\nwant %q", c.args, code, stderr, c.want)
		}
	}
}

// TestResultsExportMTEBNameClash: two systems whose names make the same
// MTEB model name ("a/b" and "a b" are both r2med/a-b) would write one
// folder, the second's files over the first's: refused before anything
// is written, naming both.
func TestResultsExportMTEBNameClash(t *testing.T) {
	fakeHubEnv(t)
	res := t.TempDir()
	mustRun(t, "run", "--task", "Biology", "--name", "a/b", "--out", filepath.Join(res, "one"), "--quiet")
	mustRun(t, "run", "--task", "Biology", "--name", "a b", "--k1", "1.2", "--out", filepath.Join(res, "two"), "--quiet")
	out := t.TempDir()
	_, stderr, code := r2med(t, "", "results", "export", "--format", "mteb", "--results", res, "--out", out)
	if code != 2 || !strings.Contains(stderr, `systems "a b" and "a/b" would both be MTEB's model r2med/a-b`) {
		t.Errorf("exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(out, "results")); err == nil {
		t.Error("files written before the clash was refused")
	}
}
