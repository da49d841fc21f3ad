package pipeline

// End-to-end tests of the data path from the Hugging Face Hub: the task
// registry's repositories and pinned revisions, hub's cache, dataset's hub
// readers, GAR generations and published candidate lists, all served by a
// fake Hub (hub/hubtest) holding repositories shaped like R2MED/<Task> and
// hakari-bench/NanoR2MED, built from the demo task. Nothing touches the
// network.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/r2med/r2med/dataset"
	"github.com/r2med/r2med/demo"
	"github.com/r2med/r2med/expand"
	"github.com/r2med/r2med/hub"
	"github.com/r2med/r2med/hub/hubtest"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/nano"
	"github.com/r2med/r2med/nano/nanotest"
	"github.com/r2med/r2med/results"
	"github.com/r2med/r2med/retrieve"
	"github.com/r2med/r2med/tasks"
	"github.com/r2med/r2med/taskstats"
)

// hubFixture is a fake Hub with the benchmark-shaped repositories of
// nanotest: R2MED/Biology at its pinned revision (main has moved on) and
// hakari-bench/NanoR2MED.
type hubFixture struct {
	*nanotest.Repos
	srv *hubtest.Server
}

func newHubFixture(t *testing.T) *hubFixture {
	t.Helper()
	srv := hubtest.NewServer(t)
	return &hubFixture{Repos: nanotest.Serve(t, srv), srv: srv}
}

func mustLookup(t testing.TB, name string) tasks.Task {
	t.Helper()
	task, err := tasks.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return task
}

// client is a hub client on the fixture; cache "" means a new, empty one.
func (f *hubFixture) client(t *testing.T, cache string, offline bool) *hub.Client {
	if cache == "" {
		cache = t.TempDir()
	}
	return &hub.Client{Endpoint: f.srv.URL(), CacheDir: cache, Offline: offline}
}

func loadDemo(t *testing.T) *ir.Task {
	t.Helper()
	task, err := demo.Load()
	if err != nil {
		t.Fatal(err)
	}
	return task
}

// sameTask checks that got holds want's documents, queries and judgments.
func sameTask(t *testing.T, got, want *ir.Task) {
	t.Helper()
	if !slices.Equal(got.Corpus, want.Corpus) {
		t.Errorf("corpus: %d documents, want the demo's %d, in order", len(got.Corpus), len(want.Corpus))
	}
	if len(got.Queries) != len(want.Queries) {
		t.Fatalf("%d queries, want %d", len(got.Queries), len(want.Queries))
	}
	for i, q := range got.Queries {
		if q.ID != want.Queries[i].ID || q.Text != want.Queries[i].Text {
			t.Errorf("query %d: %s, want %s", i, q.ID, want.Queries[i].ID)
		}
	}
	if fmt.Sprint(got.Qrels) != fmt.Sprint(want.Qrels) || got.UnjudgedQueries != want.UnjudgedQueries {
		t.Errorf("qrels: %d judgments (%d unjudged queries), want %d (%d)", got.Qrels.Len(), got.UnjudgedQueries, want.Qrels.Len(), want.UnjudgedQueries)
	}
}

func sameRun(t *testing.T, what string, got, want ir.Run) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d queries, want %d", what, len(got), len(want))
	}
	for qid, hits := range want {
		if !slices.Equal(got[qid], hits) {
			t.Errorf("%s: query %s ranks differently", what, qid)
		}
	}
}

func TestHubRegistryTaskLoadsPinnedRevision(t *testing.T) {
	f := newHubFixture(t)
	ctx := context.Background()
	want := loadDemo(t)
	c := f.client(t, "", false)

	task, err := Source{Task: "Biology", Hub: c}.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sameTask(t, task, want)
	if task.Name != "Biology" || task.Layout != ir.LayoutR2MEDHub {
		t.Errorf("task %q, layout %q", task.Name, task.Layout)
	}
	if filepath.Base(task.Dir) != f.BiologyCommit {
		t.Errorf("read from %s, want the snapshot of the pinned commit %s (main is %s)", task.Dir, f.BiologyCommit, f.BiologyMain)
	}
	if f.srv.Count(hubtest.Hub, "GET", "/revision/"+f.BiologyCommit) != 1 || f.srv.Count(hubtest.Hub, "GET", "/revision/main") != 0 {
		t.Errorf("the pinned revision was not the one asked for: %+v", f.srv.Records())
	}

	// The same numbers as the built-in demo, and the run's inputs are the
	// snapshot's files.
	out, err := Run(ctx, task, DefaultConfig(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	ref, err := Run(ctx, want, DefaultConfig(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	sameRun(t, "hub task vs demo", out.Run, ref.Run)
	if fmt.Sprint(out.Result.Test) != fmt.Sprint(ref.Result.Test) {
		t.Errorf("scores %v, demo %v", out.Result.Test, ref.Result.Test)
	}
	var inputs []string
	for _, in := range out.Manifest.Inputs {
		rel, err := filepath.Rel(task.Dir, in.Path)
		if err != nil || in.SHA256 != hubtest.SHA256(f.R2MEDFiles[filepath.ToSlash(rel)]) {
			t.Errorf("input %+v is not a snapshot file with its content's checksum", in)
		}
		inputs = append(inputs, filepath.ToSlash(rel))
	}
	if want := []string{"README.md", "corpus.jsonl", "query.jsonl", "qrels.jsonl"}; !slices.Equal(inputs, want) {
		t.Errorf("inputs %v, want %v", inputs, want)
	}
	if want := tasks.All()[0].Revision; out.Manifest.Task.Revision != want {
		t.Errorf("manifest revision %q, want the pinned %q", out.Manifest.Task.Revision, want)
	}
	if out.Manifest.Task.Source != task.Dir {
		t.Errorf("manifest source %q, want %q", out.Manifest.Task.Source, task.Dir)
	}

	// A second load on the same cache, offline and from a fresh client,
	// asks the Hub nothing.
	f.srv.Reset()
	again, err := Source{Task: "biology", Hub: f.client(t, c.CacheDir, true)}.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sameTask(t, again, want)
	// Online with a complete cache of a pinned commit: nothing either.
	if _, err := (Source{Task: "Stack-Biology", Hub: f.client(t, c.CacheDir, false)}).Load(ctx); err != nil {
		t.Fatal(err)
	}
	if n := f.srv.Requests(); n != 0 {
		t.Errorf("%d requests with a complete cache: %+v", n, f.srv.Records())
	}
}

func TestHubPullThenOffline(t *testing.T) {
	f := newHubFixture(t)
	ctx := context.Background()
	cache := t.TempDir()
	ts := []tasks.Task{f.Biology}

	snaps, err := Pull(ctx, f.client(t, cache, false), tasks.R2MED, ts)
	if err != nil {
		t.Fatal(err)
	}
	if len(snaps) != 1 || snaps[0].Commit != f.BiologyCommit || len(snaps[0].Files) != len(f.R2MEDFiles) {
		t.Fatalf("pulled %+v, want all %d files of %s", snaps, len(f.R2MEDFiles), f.BiologyCommit)
	}
	nanoSnaps, err := Pull(ctx, f.client(t, cache, false), tasks.Nano, ts)
	if err != nil {
		t.Fatal(err)
	}
	var nanoFiles []string
	for _, file := range nanoSnaps[0].Files {
		nanoFiles = append(nanoFiles, file.Path)
	}
	// README.md plus Biology's corpus, queries, qrels and bm25; none of
	// the other split's files, and no metadata.
	wantNano := []string{"README.md"}
	for _, config := range []string{"bm25", "corpus", "qrels", "queries"} {
		wantNano = append(wantNano, nano.DataFile(config, f.Biology.NanoSplit))
	}
	if !slices.Equal(nanoFiles, wantNano) {
		t.Errorf("nano pull fetched %v, want %v", nanoFiles, wantNano)
	}
	for _, r := range f.srv.Records() {
		if strings.Contains(r.Path, "Bioinformatics") {
			t.Errorf("fetched another split's file: %+v", r)
		}
	}

	// The Hub is gone; the cache is enough.
	f.srv.Close()
	f.srv.Reset()
	out := t.TempDir()
	for _, suite := range []tasks.Suite{tasks.R2MED, tasks.Nano} {
		task, err := Source{Task: "Biology", Suite: suite, Hub: f.client(t, cache, true)}.Load(ctx)
		if err != nil {
			t.Fatalf("%s offline: %v", suite, err)
		}
		o, err := Run(ctx, task, DefaultConfig(), Options{Out: filepath.Join(out, string(suite))})
		if err != nil || o.Eval.NumQueries != len(task.Queries) {
			t.Fatalf("%s offline run: %v", suite, err)
		}
		if _, err := os.Stat(filepath.Join(out, string(suite), ManifestFile)); err != nil {
			t.Errorf("%s: %v", suite, err)
		}
	}
	if n := f.srv.Requests(); n != 0 {
		t.Errorf("%d requests offline", n)
	}

	// An offline cache without the task says what to do, whether it has
	// nothing of the repository or another task's split of it (whose
	// README and file list it holds).
	_, err = Source{Task: "Biology", Hub: f.client(t, "", true)}.Load(ctx)
	if !errors.Is(err, hub.ErrOffline) || !strings.Contains(err.Error(), "HF_HUB_OFFLINE") {
		t.Errorf("empty offline cache: %v", err)
	}
	_, err = Source{Task: "Bioinformatics", Suite: tasks.Nano, Hub: f.client(t, cache, true)}.Load(ctx)
	if !errors.Is(err, hub.ErrOffline) || !strings.Contains(err.Error(), "NanoR2MEDBioinformatics") {
		t.Errorf("split not pulled, offline: %v", err)
	}
}

func TestHubNanoCandidatesMatchPublishedLists(t *testing.T) {
	f := newHubFixture(t)
	ctx := context.Background()
	set := f.Nano

	task, err := Source{Task: "Biology", Suite: tasks.Nano, Hub: f.client(t, "", false)}.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if task.Name != f.Biology.NanoSplit || task.Split != f.Biology.NanoSplit || task.Layout != ir.LayoutNanoHub {
		t.Errorf("task %q split %q layout %q", task.Name, task.Split, task.Layout)
	}
	if len(task.Corpus) != len(set.Corpus) || len(task.Queries) != len(set.Queries) || task.Qrels.Len() != set.Qrels.Len() {
		t.Fatalf("%d docs, %d queries, %d qrels; the set has %d, %d, %d",
			len(task.Corpus), len(task.Queries), task.Qrels.Len(), len(set.Corpus), len(set.Queries), set.Qrels.Len())
	}
	if len(set.Corpus) != nanotest.NanoDocLimit {
		t.Fatalf("the fixture's set has %d documents, want %d", len(set.Corpus), nanotest.NanoDocLimit)
	}

	published := set.Subset("bm25").Run
	for _, topK := range []int{100, 10} {
		out, err := Run(ctx, task, Config{Retrievers: []retrieve.Spec{retrieve.Candidates{Config: "bm25"}}, TopK: topK}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		lists := map[string][]string{}
		for qid, hits := range published {
			var want []string
			for _, h := range hits[:min(len(hits), topK)] {
				want = append(want, h.DocID)
			}
			var got []string
			for _, h := range out.Run[qid] {
				got = append(got, h.DocID)
			}
			if !slices.Equal(got, want) {
				t.Errorf("top %d, query %s: %v, published %v", topK, qid, got, want)
			}
			lists[qid] = got
		}
		if len(out.Run) != len(published) {
			t.Errorf("top %d: %d queries, published %d", topK, len(out.Run), len(published))
		}
		if topK < 10 {
			continue
		}
		// nDCG@10 as HAKARI-Bench's cards compute it, on the run, is the
		// one the set's metadata reports; and R2MED's evaluation of the
		// same run agrees to its 5 printed digits (binary gains).
		m, err := taskstats.ScoreCandidates(task.Qrels, lists, taskstats.CandidateSubset{Name: "bm25", Config: "bm25", TopK: nano.DefaultCandidateDepth})
		if err != nil {
			t.Fatal(err)
		}
		if want := float64(f.NanoMetadata.BM25.NDCGAt10); m.NDCGAt10 != want || want == 0 {
			t.Errorf("top %d: HAKARI nDCG@10 %v, metadata says %v", topK, m.NDCGAt10, want)
		}
		if got := out.Eval.Scores["ndcg_at_10"]; math.Abs(got-m.NDCGAt10) > 1e-5 {
			t.Errorf("top %d: R2MED ndcg_at_10 %v, HAKARI %v", topK, got, m.NDCGAt10)
		}
	}

	// The same split through a URI and --split reads the same task.
	viaURI, err := Source{Data: "hf://datasets/" + tasks.NanoRepo, Options: dataset.Options{Split: f.Biology.NanoSplit}, Hub: f.client(t, "", false)}.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if viaURI.Name != task.Name || !slices.Equal(viaURI.Corpus, task.Corpus) || fmt.Sprint(viaURI.Qrels) != fmt.Sprint(task.Qrels) {
		t.Errorf("via the URI: %q, %d docs, %d qrels", viaURI.Name, len(viaURI.Corpus), viaURI.Qrels.Len())
	}

	// The published lists are inputs of the run.
	out, err := Run(ctx, task, Config{Retrievers: []retrieve.Spec{retrieve.Candidates{Config: "bm25"}}, TopK: 100}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var bm25Input bool
	for _, in := range out.Manifest.Inputs {
		bm25Input = bm25Input || strings.HasSuffix(filepath.ToSlash(in.Path), nano.DataFile("bm25", f.Biology.NanoSplit))
	}
	if !bm25Input {
		t.Errorf("the candidate file is not among the inputs: %+v", out.Manifest.Inputs)
	}
}

func TestHubURIAndGAR(t *testing.T) {
	f := newHubFixture(t)
	ctx := context.Background()
	want := loadDemo(t)
	c := f.client(t, "", false)

	pinned, err := Source{Data: "hf://datasets/" + f.Biology.Repo + "@" + f.BiologyCommit, Hub: c}.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sameTask(t, pinned, want)
	if pinned.Name != "Biology" {
		t.Errorf("named %q, want the repository's name", pinned.Name)
	}
	// Unpinned means main, which has moved.
	head, err := Source{Data: "hf://datasets/" + f.Biology.Repo, Hub: c}.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(head.Dir) != f.BiologyMain || head.Qrels.Len() != nanotest.MainQrels {
		t.Errorf("main: %s with %d judgments, want %s with %d", head.Dir, head.Qrels.Len(), f.BiologyMain, nanotest.MainQrels)
	}

	// GAR reads the generations from the snapshot (through the hyde
	// config's gpt4 split) and gives the same run as the same files in a
	// task directory (read by their R2MED path).
	cfg := DefaultConfig()
	cfg.GAR = expand.Source{Method: "hyde", LLM: "gpt4"}
	gar, err := Run(ctx, pinned, cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	nanotest.WriteDir(t, dir, f.R2MEDFiles)
	local, err := dataset.Load(dir, dataset.Options{})
	if err != nil {
		t.Fatal(err)
	}
	localGAR, err := Run(ctx, local, cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	sameRun(t, "GAR from the hub vs from a directory", gar.Run, localGAR.Run)
	plain, err := Run(ctx, pinned, DefaultConfig(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if g, p := gar.Eval.Scores["ndcg_at_10"], plain.Eval.Scores["ndcg_at_10"]; !(g > p) {
		t.Errorf("HyDE with relevant passages as generations: nDCG@10 %v, not above the query alone's %v", g, p)
	}
	genFile := filepath.Join(pinned.Dir, "hyde", "gpt4", expand.FileName)
	if !slices.ContainsFunc(gar.Manifest.Inputs, func(d results.FileDigest) bool { return d.Path == genFile }) {
		t.Errorf("generations %s not among the inputs %+v", genFile, gar.Manifest.Inputs)
	}
	if gar.Result.Extra["gar_method"] != "hyde" || gar.Result.Extra["gar_llm"] != "gpt4" {
		t.Errorf("result extra %v", gar.Result.Extra)
	}

	// Generations the repository does not have: the message lists the ones
	// it has.
	cfg.GAR.LLM = "qwen-7b"
	_, err = Run(ctx, pinned, cfg, Options{})
	if err == nil || !strings.Contains(err.Error(), `"qwen-7b"`) || !strings.Contains(err.Error(), "gpt4") {
		t.Errorf("missing generations: %v", err)
	}
}

func TestHubErrors(t *testing.T) {
	f := newHubFixture(t)
	ctx := context.Background()
	c := f.client(t, "", false)

	// Unknown repository: without a token the Hub cannot tell it from a
	// private one (401); with one it says 404. Both are "not found".
	_, err := Source{Data: "hf://datasets/R2MED/Nope", Hub: c}.Load(ctx)
	if !errors.Is(err, hub.ErrRepoNotFound) || !strings.Contains(err.Error(), "datasets/R2MED/Nope") {
		t.Errorf("unknown repository: %v", err)
	}
	withToken := f.client(t, "", false)
	withToken.Token = "hf_SomeoneElsesToken000000"
	_, err = Source{Data: "hf://datasets/R2MED/Nope", Hub: withToken}.Load(ctx)
	if !errors.Is(err, hub.ErrRepoNotFound) || !strings.Contains(err.Error(), "datasets/R2MED/Nope") || !strings.Contains(err.Error(), "not found") {
		t.Errorf("unknown repository, with a token: %v", err)
	}
	if strings.Contains(fmt.Sprint(err), withToken.Token) {
		t.Errorf("token in the message: %v", err)
	}

	// A registry task whose repository lacks the pinned revision.
	bioinf := mustLookup(t, "Bioinformatics")
	f.srv.AddRepo(bioinf.Repo, f.R2MEDFiles)
	_, err = Source{Task: "Bioinformatics", Hub: c}.Load(ctx)
	if !errors.Is(err, hub.ErrRevisionNotFound) || !strings.Contains(err.Error(), bioinf.Revision) {
		t.Errorf("missing pinned revision: %v", err)
	}

	// Names that are no task, and forms that are no URI: nothing is asked.
	f.srv.Reset()
	for _, tc := range []struct {
		src   Source
		parts []string
	}{
		{Source{Task: "Biologie"}, []string{`unknown R2MED task "Biologie"`, "Biology", "MedQA-Diag", `"demo"`}},
		{Source{Task: "Biology", Data: "hf://datasets/R2MED/Biology"}, []string{"either --task or --data"}},
		{Source{Data: "hf://datasets/Biology"}, []string{"OWNER/NAME"}},
		{Source{}, []string{"no data"}},
	} {
		tc.src.Hub = c
		_, err := tc.src.Load(ctx)
		for _, p := range tc.parts {
			if err == nil || !strings.Contains(err.Error(), p) {
				t.Errorf("%+v: error %v, want it to mention %q", tc.src, err, p)
			}
		}
	}
	if n := f.srv.Requests(); n != 0 {
		t.Errorf("%d requests for sources that name nothing on the Hub", n)
	}
}
