package main

// The CLI on Hub-backed tasks, end to end and in process: flags → registry
// → hub.FromEnv (HF_ENDPOINT, HF_HOME, HF_HUB_OFFLINE) → cache → readers →
// pipeline → files, against a fake Hub serving benchmark-shaped
// repositories built from the demo task (nano/nanotest).

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/r2med/r2med/hub/hubtest"
	"github.com/r2med/r2med/nano/nanotest"
	"github.com/r2med/r2med/pipeline"
	"github.com/r2med/r2med/results"
	"github.com/r2med/r2med/tasks"
	"github.com/r2med/r2med/trec"
)

// fakeHubEnv serves the nanotest repositories and points the environment
// at them, with an empty HF_HOME; every other variable huggingface_hub
// reads is cleared so the machine's own settings cannot leak in.
func fakeHubEnv(t *testing.T) (*hubtest.Server, *nanotest.Repos, string) {
	t.Helper()
	srv := hubtest.NewServer(t)
	repos := nanotest.Serve(t, srv)
	return srv, repos, pointAtHub(t, srv)
}

// pointAtHub points huggingface_hub's environment at srv with an empty
// HF_HOME, which it returns; every other variable it reads is cleared so
// the machine's own settings cannot leak in.
func pointAtHub(t *testing.T, srv *hubtest.Server) string {
	t.Helper()
	home := t.TempDir()
	for _, k := range []string{"HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_TOKEN_PATH", "HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "XDG_CACHE_HOME"} {
		t.Setenv(k, "")
	}
	t.Setenv("HF_ENDPOINT", srv.URL())
	t.Setenv("HF_HOME", home)
	return home
}

func mustRun(t *testing.T, args ...string) string {
	t.Helper()
	stdout, stderr, code := r2med(t, "", args...)
	if code != 0 {
		t.Fatalf("r2med %s: exit %d\n%s", strings.Join(args, " "), code, stderr)
	}
	return stdout
}

func readFileString(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestCLIRunHubTask(t *testing.T) {
	_, repos, home := fakeHubEnv(t)
	out, ref := t.TempDir(), t.TempDir()
	stdout := mustRun(t, "run", "--task", "Biology", "--out", out, "--quiet")
	if !strings.HasPrefix(stdout, "Biology  bm25\n") || !strings.Contains(stdout, "nDCG@10") {
		t.Errorf("summary:\n%s", stdout)
	}
	mustRun(t, "run", "--task", "demo", "--out", ref, "--quiet")

	// The Hub copy of the demo task gives the demo's run, byte for byte.
	if readFileString(t, filepath.Join(out, pipeline.RunFile)) != readFileString(t, filepath.Join(ref, pipeline.RunFile)) {
		t.Error("run.trec differs from the demo task's")
	}
	got, err := results.ReadR2MED(filepath.Join(out, pipeline.ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	want, err := results.ReadR2MED(filepath.Join(ref, pipeline.ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	if got.DatasetName != "Biology" || fmt.Sprint(got.Test) != fmt.Sprint(want.Test) {
		t.Errorf("results %s %v, demo %v", got.DatasetName, got.Test, want.Test)
	}
	m, err := results.ReadManifest(filepath.Join(out, pipeline.ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	snap := filepath.Join(home, "hub", "datasets--R2MED--Biology", "snapshots", repos.BiologyCommit)
	if m.Task.Source != snap || len(m.Inputs) != 4 {
		t.Errorf("manifest source %s with %d inputs, want the pinned snapshot %s and its 4 task files", m.Task.Source, len(m.Inputs), snap)
	}

	// The same command again finds its outputs up to date: the snapshot's
	// files have the checksums the manifest recorded.
	if stdout := mustRun(t, "run", "--task", "Biology", "--out", out, "--quiet"); !strings.Contains(stdout, "(unchanged, reused)") {
		t.Errorf("second run not reused:\n%s", stdout)
	}

	// GAR with the repository's generations.
	gar := t.TempDir()
	stdout = mustRun(t, "run", "--task", "Biology", "--gar", "hyde", "--gar-llm", "gpt4", "--out", gar, "--quiet")
	if !strings.HasPrefix(stdout, "Biology  hyde/gpt4 → bm25\n") {
		t.Errorf("GAR summary:\n%s", stdout)
	}
	hyde, err := results.ReadR2MED(filepath.Join(gar, pipeline.ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	if h, _ := hyde.Metric("ndcg_at_10"); !(h > want.Test["ndcg_at_10"]) {
		t.Errorf("HyDE nDCG@10 %v, not above BM25's %v", h, want.Test["ndcg_at_10"])
	}
}

// runLists reads a run file's documents per query, best first.
func runLists(t *testing.T, path string) map[string][]string {
	t.Helper()
	run, err := trec.ReadRunFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lists := map[string][]string{}
	for qid, hits := range run {
		for _, h := range hits {
			lists[qid] = append(lists[qid], h.DocID)
		}
	}
	return lists
}

func TestCLINanoCandidates(t *testing.T) {
	srv, repos, _ := fakeHubEnv(t)
	out := t.TempDir()
	mustRun(t, "run", "--task", "Biology", "--suite", "nano", "--retriever", "candidates:bm25", "--out", out, "--quiet")

	lists := runLists(t, filepath.Join(out, pipeline.RunFile))
	published := repos.Nano.Subset("bm25").Run
	if len(lists) != len(published) {
		t.Errorf("%d queries, published %d", len(lists), len(published))
	}
	for qid, hits := range published {
		var want []string
		for _, h := range hits[:min(len(hits), 100)] {
			want = append(want, h.DocID)
		}
		if !slices.Equal(lists[qid], want) {
			t.Errorf("query %s: %v, published %v", qid, lists[qid], want)
		}
	}
	res, err := results.ReadR2MED(filepath.Join(out, pipeline.ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	// Results files carry R2MED's 5 rounded digits; the metadata the
	// unrounded HAKARI value (binary gains, so the two agree).
	got, _ := res.Metric("ndcg_at_10")
	if want := float64(repos.NanoMetadata.BM25.NDCGAt10); math.Abs(got-want) > 5e-6 || res.DatasetName != repos.Biology.NanoSplit {
		t.Errorf("%s nDCG@10 %v, metadata %v", res.DatasetName, got, want)
	}
	// Only Biology's split was fetched.
	for _, r := range srv.Records() {
		if strings.Contains(r.Path, "Bioinformatics") {
			t.Errorf("fetched another split: %+v", r)
		}
	}

	// Two tasks: a directory each and the averages.
	both := t.TempDir()
	stdout := mustRun(t, "run", "--task", "Biology,Bioinformatics", "--suite", "nano", "--retriever", "candidates:bm25", "--out", both, "--quiet")
	for _, split := range []string{"NanoR2MEDBiology", "NanoR2MEDBioinformatics"} {
		if _, err := os.Stat(filepath.Join(both, split, pipeline.ResultsFile)); err != nil {
			t.Error(err)
		}
	}
	if !strings.Contains(stdout, "average (2)") {
		t.Errorf("no averages:\n%s", stdout)
	}
}

func TestCLIPullThenOffline(t *testing.T) {
	srv, repos, home := fakeHubEnv(t)
	stdout := mustRun(t, "pull", "--quiet", "Biology")
	snap := filepath.Join(home, "hub", "datasets--R2MED--Biology", "snapshots", repos.BiologyCommit)
	if want := fmt.Sprintf("Biology\t%s\t%d files\t%s\n", repos.BiologyCommit[:12], len(repos.R2MEDFiles), snap); stdout != want {
		t.Errorf("pull printed %q, want %q", stdout, want)
	}
	stdout = mustRun(t, "pull", "--quiet", "--suite", "nano", "biology")
	if !strings.HasPrefix(stdout, "Biology\t"+repos.NanoCommit[:12]+"\t5 files\t") {
		t.Errorf("nano pull printed %q", stdout)
	}

	t.Setenv("HF_HUB_OFFLINE", "1")
	srv.Reset()
	mustRun(t, "run", "--task", "Biology", "--out", t.TempDir(), "--quiet")
	mustRun(t, "run", "--task", "Biology", "--gar", "hyde", "--gar-llm", "gpt4", "--out", t.TempDir(), "--quiet")
	mustRun(t, "run", "--task", "Biology", "--suite", "nano", "--retriever", "candidates:bm25", "--out", t.TempDir(), "--quiet")
	if n := srv.Requests(); n != 0 {
		t.Errorf("%d requests with HF_HUB_OFFLINE=1: %+v", n, srv.Records())
	}

	// A task that was not pulled: the error says why.
	_, stderr, code := r2med(t, "", "run", "--task", "Bioinformatics", "--out", t.TempDir(), "--quiet")
	if code != 1 || !strings.Contains(stderr, "HF_HUB_OFFLINE") || !strings.Contains(stderr, "R2MED/Bioinformatics") {
		t.Errorf("not pulled, offline: exit %d, %s", code, stderr)
	}
}

func TestCLITasks(t *testing.T) {
	stdout := mustRun(t, "tasks")
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if len(lines) != 1+8+1 {
		t.Fatalf("want a header, 8 tasks and the total:\n%s", stdout)
	}
	for i, task := range tasks.All() {
		line := lines[1+i]
		if !strings.HasPrefix(line, task.Name+" ") || !strings.Contains(line, task.HubURI(tasks.R2MED)) || !strings.Contains(line, task.NanoSplit) {
			t.Errorf("line %d %q does not describe %s", i+1, line, task.Name)
		}
	}
	if !strings.HasPrefix(lines[9], "all ") || !strings.Contains(lines[9], "hf://datasets/"+tasks.NanoRepo) {
		t.Errorf("total line %q", lines[9])
	}
}

func TestCLIHubErrors(t *testing.T) {
	srv, _, _ := fakeHubEnv(t)
	for _, tc := range []struct {
		args  []string
		parts []string
	}{
		{[]string{"run", "--task", "Biologie"}, []string{`unknown R2MED task "Biologie"`, "MedQA-Diag"}},
		{[]string{"run", "--task", "Biology", "--suite", "mini"}, []string{`unknown suite "mini"`}},
		{[]string{"pull", "Biologie"}, []string{`unknown R2MED task "Biologie"`}},
		{[]string{"run", "--data", "hf://datasets/R2MED/Nope"}, []string{"datasets/R2MED/Nope", "not found"}},
		// Medical-Sciences is not on this Hub: the message names the task.
		{[]string{"pull", "Medical-Sciences"}, []string{"Medical-Sciences", "datasets/R2MED/Medical-Sciences", "not found"}},
	} {
		args := append(tc.args, "--out", t.TempDir(), "--quiet")
		if tc.args[0] == "pull" {
			args = append(tc.args, "--quiet")
		}
		_, stderr, code := r2med(t, "", args...)
		want := 1 // what the Hub answered
		if strings.HasPrefix(tc.parts[0], "unknown") {
			want = 2 // a name none has: a usage error
		}
		if code != want {
			t.Errorf("%v: exit %d, want %d", tc.args, code, want)
		}
		for _, p := range tc.parts {
			if !strings.Contains(stderr, p) {
				t.Errorf("%v: stderr %q does not mention %q", tc.args, stderr, p)
			}
		}
	}
	if n := srv.Count(hubtest.CDN, "GET", ""); n != 0 {
		t.Errorf("%d downloads for failing commands", n)
	}
}
