package main

// BRIGHT as a second suite and per-query exclusions, through the CLI: a
// fake Hub serving BRIGHT's layout (hubrepo/brighttest), r2med eval
// --exclude against trec_eval's own output, and a real Weaviate.

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/r2med/r2med/demo"
	"github.com/r2med/r2med/hub/hubtest"
	"github.com/r2med/r2med/hubrepo/brighttest"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/pipeline"
	"github.com/r2med/r2med/results"
	"github.com/r2med/r2med/retrieve"
	"github.com/r2med/r2med/tasks"
	"github.com/r2med/r2med/trec"
	"github.com/r2med/r2med/weaviate/weaviatetest"
)

// fakeBrightEnv serves the brighttest repository and points the
// environment at it, as fakeHubEnv does for R2MED's.
func fakeBrightEnv(t *testing.T) (*hubtest.Server, *brighttest.Repo, string) {
	t.Helper()
	srv := hubtest.NewServer(t)
	repo := brighttest.Serve(t, srv)
	return srv, repo, pointAtHub(t, srv)
}

func TestCLITasksBright(t *testing.T) {
	for _, c := range []struct {
		suite string
		n     int
	}{{"bright", 12}, {"bright-long", 8}} {
		stdout := mustRun(t, "tasks", "--suite", c.suite)
		lines := strings.Split(strings.TrimSpace(stdout), "\n")
		if len(lines) != 1+c.n+1 || !strings.Contains(lines[0], "runs as") {
			t.Fatalf("--suite %s: want a header, %d tasks and the total:\n%s", c.suite, c.n, stdout)
		}
		s, _ := tasks.ParseSuite(c.suite)
		for i, task := range s.Tasks() {
			f := strings.Fields(lines[1+i])
			size := task.SizeIn(s)
			if f[0] != task.Name || !slices.Contains(f, task.NameIn(s)) || f[len(f)-1] != "hf://datasets/xlangai/BRIGHT@"+tasks.BrightRevision ||
				!slices.Contains(f, fmt.Sprint(size.Documents)) {
				t.Errorf("--suite %s line %q does not describe %s", c.suite, lines[1+i], task.Name)
			}
		}
	}
	for _, line := range strings.Split(mustRun(t, "tasks", "--suite", "bright"), "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[0] == "theoremqa_theorems" && f[1] != "Theorem-based" {
			t.Errorf("family of %q", line)
		}
	}
}

// TestCLITasksBrightAllRow: the "all" row of r2med tasks --suite bright
// sums the task rows' queries, and their documents with the corpus that
// aops and theoremqa_questions share (one corpus of 188,177 documents for
// AoPS and TheoremQA in BRIGHT's data card) counted once, saying so; it
// added the shared corpus twice (1,333,166 documents).
func TestCLITasksBrightAllRow(t *testing.T) {
	queries, documents := 0, 0
	var all []string
	for _, line := range strings.Split(strings.TrimSpace(mustRun(t, "tasks", "--suite", "bright")), "\n")[1:] {
		f := strings.Fields(line)
		if f[0] == "all" {
			all = f
			break
		}
		q, _ := strconv.Atoi(f[2])
		d, _ := strconv.Atoi(f[3])
		queries += q
		if f[0] != "theoremqa_questions" { // aops's corpus
			documents += d
		}
	}
	if len(all) < 3 || all[1] != fmt.Sprint(queries) || all[2] != fmt.Sprint(documents) ||
		strings.Join(all[3:], " ") != "documents of 11 corpora: aops and theoremqa_questions search one" {
		t.Errorf("all row %q, want %d queries, %d documents and what they count", all, queries, documents)
	}
}

// TestCLIRunBright: r2med run --suite bright --task biology end to end over
// the loopback Hub, with the task's exclusions honoured; the long-document
// setting; the published reasoning as --gar reasoning; pull, then offline.
func TestCLIRunBright(t *testing.T) {
	srv, repo, home := fakeBrightEnv(t)
	out := t.TempDir()
	stdout := mustRun(t, "run", "--suite", "bright", "--task", "biology", "--top-k", "10", "--out", out, "--quiet")
	if !strings.HasPrefix(stdout, "BRIGHT-biology  bm25\n") || !strings.Contains(stdout, fmt.Sprintf("excluded: %d documents for 8 queries;", repo.Biology.Excluded.Len())) {
		t.Errorf("summary:\n%s", stdout)
	}
	run := readRun(t, filepath.Join(out, pipeline.RunFile))
	for qid, hits := range run {
		if len(hits) != 10 {
			t.Errorf("query %s: %d hits, want 10", qid, len(hits))
		}
		for _, h := range hits {
			if repo.Biology.Excluded.Excluded(qid, h.DocID) {
				t.Errorf("query %s: excluded %s retrieved", qid, h.DocID)
			}
		}
	}
	m, err := results.ReadManifest(filepath.Join(out, pipeline.ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	snap := filepath.Join(home, "hub", "datasets--xlangai--BRIGHT", "snapshots", tasks.BrightRevision)
	if m.Task.Name != "BRIGHT-biology" || m.Task.Source != snap || m.Counts["excluded_pairs"] != repo.Biology.Excluded.Len() || m.Counts[retrieve.HitsExcluded] == 0 {
		t.Errorf("manifest task %+v, counts %v", m.Task, m.Counts)
	}
	// Only biology's files were fetched: the card, its queries, documents
	// and reasoning, never leetcode's or the long documents.
	for _, r := range srv.Records() {
		if strings.Contains(r.Path, "leetcode") || strings.Contains(r.Path, "long_documents") {
			t.Errorf("fetched %s", r.Path)
		}
	}
	res, err := results.ReadR2MED(filepath.Join(out, pipeline.ResultsFile))
	if err != nil || res.DatasetName != "BRIGHT-biology" {
		t.Errorf("results %+v %v", res, err)
	}
	if stdout := mustRun(t, "stats", "--suite", "bright", "--task", "biology"); !strings.Contains(stdout, "BRIGHT-biology") || !strings.Contains(stdout, "79") {
		t.Errorf("stats:\n%s", stdout)
	}

	gar := t.TempDir()
	stdout = mustRun(t, "run", "--suite", "bright", "--task", "biology", "--gar", "reasoning", "--gar-llm", "gpt4", "--out", gar, "--quiet")
	if !strings.HasPrefix(stdout, "BRIGHT-biology  reasoning/gpt4 → bm25\n") {
		t.Errorf("reasoning summary:\n%s", stdout)
	}

	// Pulled, a task runs offline, its reasoning included; a setting not
	// pulled says so.
	stdout = mustRun(t, "pull", "--quiet", "--suite", "bright", "leetcode")
	if !strings.HasPrefix(stdout, "leetcode\t"+tasks.BrightRevision[:12]+"\t4 files\t") {
		t.Errorf("pull printed %q", stdout)
	}
	t.Setenv("HF_HUB_OFFLINE", "1")
	srv.Reset()
	mustRun(t, "run", "--suite", "bright", "--task", "leetcode", "--gar", "reasoning-append", "--gar-llm", "gpt4", "--out", t.TempDir(), "--quiet")
	if n := srv.Requests(); n != 0 {
		t.Errorf("%d requests offline", n)
	}
	_, stderr, code := r2med(t, "", "run", "--suite", "bright-long", "--task", "biology", "--out", t.TempDir(), "--quiet")
	if code != 1 || !strings.Contains(stderr, "BRIGHT-biology-long") || !strings.Contains(stderr, "HF_HUB_OFFLINE") {
		t.Errorf("long documents not pulled, offline: exit %d, %s", code, stderr)
	}
	t.Setenv("HF_HUB_OFFLINE", "")

	long := t.TempDir()
	stdout = mustRun(t, "run", "--suite", "bright-long", "--task", "biology", "--out", long, "--quiet")
	if !strings.HasPrefix(stdout, "BRIGHT-biology-long  bm25\n") {
		t.Errorf("long summary:\n%s", stdout)
	}
	if lr := readRun(t, filepath.Join(long, pipeline.RunFile)); len(lr["q1"]) != len(repo.Biology.LongDocs) || !strings.HasPrefix(lr["q1"][0].DocID, "endo-") {
		t.Errorf("long run q1: %v", lr["q1"])
	}
	// BRIGHT reports the long-document setting by Recall@1 (the main score
	// of MTEB's Bright*LongRetrieval tasks, bright_v1_1_retrieval.py; the
	// number xlang-ai/BRIGHT issue 22 discusses): the summary shows it.
	lres, err := results.ReadR2MED(filepath.Join(long, pipeline.ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	r1, ok := lres.Metric("recall_at_1")
	if want := fmt.Sprintf("Recall@1 %.4f (BRIGHT's long-document measure)", r1); !ok || !strings.Contains(stdout, want) {
		t.Errorf("long summary lacks %q:\n%s", want, stdout)
	}
	if strings.Contains(mustRun(t, "run", "--suite", "bright", "--task", "biology", "--out", t.TempDir(), "--quiet"), "Recall@1 ") {
		t.Error("a short-document run's summary shows Recall@1")
	}

	for _, c := range []struct{ args, want []string }{
		{[]string{"run", "--suite", "bright", "--task", "Biologie"}, []string{`unknown BRIGHT task "Biologie"`, "theoremqa_theorems"}},
		{[]string{"run", "--suite", "bright-long", "--task", "aops"}, []string{"BRIGHT's aops has no long documents"}},
		{[]string{"run", "--suite", "bright", "--task", "demo"}, []string{"--suite bright picks the registry's tasks"}},
	} {
		_, stderr, code := r2med(t, "", append(c.args, "--out", t.TempDir(), "--quiet")...)
		for _, w := range c.want {
			if code != 2 || !strings.Contains(stderr, w) { // usage errors exit 2
				t.Errorf("%v: exit %d, %q, want %q", c.args, code, stderr, w)
			}
		}
	}
}

// TestEvalExcludeMatchesTrecEval: trec_eval's own output for a run is the
// output of r2med eval --exclude for a longer run that the exclusions cut
// down to it. The reference's partial run is its bm25 run with 32 queries
// dropped and one cut to its first document (plus three unjudged queries,
// which trec_eval ignores); excluding every document of those 32 queries
// and all but the first of that one reproduces trec_eval's output for the
// partial run byte for byte. (With -c the numbers differ by design: the
// judgments of excluded pairs are removed too, so the dropped queries count
// fewer relevant documents than trec_eval -c counts for them.)
func TestEvalExcludeMatchesTrecEval(t *testing.T) {
	needShared(t)
	ref := filepath.Join(shared, "eval-reference")
	full, err := trec.ReadRunFile(filepath.Join(ref, "nfcorpus.bm25.run"))
	if err != nil {
		t.Fatal(err)
	}
	partial, err := trec.ReadRunFile(filepath.Join(ref, "nfcorpus.partial.run"))
	if err != nil {
		t.Fatal(err)
	}
	var lines strings.Builder
	ex := ir.Exclusions{}
	for _, qid := range trec.QueryIDs(full) {
		kept := map[string]bool{}
		for _, h := range partial[qid] {
			kept[h.DocID] = true
		}
		for _, h := range full[qid] {
			if !kept[h.DocID] {
				ex.Add(qid, h.DocID)
				fmt.Fprintf(&lines, "%s %s\n", qid, h.DocID)
			}
		}
	}
	if len(ex) != 33 {
		t.Fatalf("the partial run should drop 32 queries and cut one: %d queries differ", len(ex))
	}
	exFile := filepath.Join(t.TempDir(), "excluded.tsv")
	os.WriteFile(exFile, []byte(lines.String()), 0o644)
	flags, err := os.ReadFile(filepath.Join(ref, "measures.txt"))
	if err != nil {
		t.Fatal(err)
	}
	args := append(append([]string{"eval", "-q", "--exclude", exFile}, strings.Fields(string(flags))...),
		filepath.Join(ref, "nfcorpus.qrels"), filepath.Join(ref, "nfcorpus.bm25.run"))
	got, stderr, code := r2med(t, "", args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	// The excluded pairs the qrels judge are removed from them too: they
	// belong to the 32 queries left without a hit, which are not evaluated.
	// Then trec_eval's rule for the mean, said because -c would change it.
	if want := fmt.Sprintf("%s: %d excluded hits removed from the run, 365 from the qrels\n", exFile, ex.Len()); !strings.HasPrefix(stderr, want) ||
		!strings.Contains(stderr, "means are over the 291 queries evaluated") {
		t.Errorf("stderr %q, want %q and the note on means", stderr, want)
	}
	want, err := os.ReadFile(filepath.Join(ref, "nfcorpus.partial.trec_eval"))
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
		for i := range min(len(gl), len(wl)) {
			if gl[i] != wl[i] {
				t.Fatalf("line %d differs:\n got %q\nwant %q", i+1, gl[i], wl[i])
			}
		}
		t.Fatalf("output has %d lines, trec_eval %d", len(gl), len(wl))
	}
}

// TestRunExcludeWeaviate: a Weaviate collection honours --exclude like
// every retriever: the run at k is the exclusion-free run at k + the
// longest exclusion list, the excluded documents removed, cut to k.
func TestRunExcludeWeaviate(t *testing.T) {
	node := weaviatetest.Start(t, weaviatetest.Options{})
	u, _ := url.Parse(node.URL())
	tmp := t.TempDir()
	if out, errOut, code := r2med(t, "", "index", "push", "--task", "demo", "--quiet", "--to", "weaviate://"+u.Host+"/DemoText", "--weaviate-grpc", node.GRPCAddr()); code != 0 {
		t.Fatalf("push: exit %d\n%s%s", code, out, errOut)
	}
	where := []string{"--retriever", "weaviate:bm25", "--collection", "DemoText", "--weaviate-url", node.URL(), "--weaviate-grpc", node.GRPCAddr(), "--task", "demo", "--quiet"}
	const k, extra = 5, 3
	mustRun(t, append([]string{"run", "--top-k", fmt.Sprint(k + extra), "--out", filepath.Join(tmp, "deep")}, where...)...)
	deep := readRun(t, filepath.Join(tmp, "deep", pipeline.RunFile))
	// Exclude up to three unjudged documents of the top five of every
	// other query.
	task, err := demo.Load()
	if err != nil {
		t.Fatal(err)
	}
	ex := ir.Exclusions{}
	var lines strings.Builder
	qids := trec.QueryIDs(deep)
	for i, qid := range qids {
		for _, h := range deep[qid][:5] {
			if _, judged := task.Qrels[qid][h.DocID]; i%2 == 0 && !judged && len(ex[qid]) < extra {
				ex.Add(qid, h.DocID)
				fmt.Fprintf(&lines, "%s\t%s\n", qid, h.DocID)
			}
		}
	}
	exFile := filepath.Join(tmp, "excluded.tsv")
	os.WriteFile(exFile, []byte(lines.String()), 0o644)
	stdout := mustRun(t, append([]string{"run", "--top-k", fmt.Sprint(k), "--exclude", exFile, "--out", filepath.Join(tmp, "excluded")}, where...)...)
	if !strings.Contains(stdout, fmt.Sprintf("excluded: %d documents for %d queries; %d hits removed before the cut", ex.Len(), len(ex), ex.Len())) {
		t.Errorf("summary:\n%s", stdout)
	}
	got := readRun(t, filepath.Join(tmp, "excluded", pipeline.RunFile))
	for _, qid := range qids {
		want, _ := ex.Filter(qid, deep[qid])
		want = want[:k]
		var g, w []string
		for i := range want {
			w = append(w, want[i].DocID)
		}
		for _, h := range got[qid] {
			g = append(g, h.DocID)
		}
		if !reflect.DeepEqual(g, w) {
			t.Errorf("query %s: %v, want %v", qid, g, w)
		}
	}
}

// TestRerankExcludes: r2med rerank drops a task's excluded documents from
// its input run before reranking, as every retriever does, and says so.
func TestRerankExcludes(t *testing.T) {
	dir := t.TempDir()
	mustRun(t, "run", "--task", "demo", "--out", dir, "--quiet")
	input := filepath.Join(dir, pipeline.RunFile)
	in := readRun(t, input)
	task := demoTask(t)
	ex := ir.Exclusions{}
	var lines strings.Builder
	for _, qid := range trec.QueryIDs(in) {
		for _, h := range in[qid][:10] {
			if _, judged := task.Qrels[qid][h.DocID]; !judged && len(ex[qid]) < 2 {
				ex.Add(qid, h.DocID)
				fmt.Fprintf(&lines, "%s %s\n", qid, h.DocID)
			}
		}
	}
	exFile := filepath.Join(dir, "excluded.tsv")
	os.WriteFile(exFile, []byte(lines.String()), 0o644)
	srv, _ := teiLoopback(t, nil)
	out := filepath.Join(dir, "tei.trec")
	_, stderr, code := r2med(t, "", "rerank", "--task", "demo", "--exclude", exFile, "--run", input, "--rerank", "tei", "--rerank-url", srv.URL, "--rerank-depth", "10", "--out", out, "--quiet")
	if code != 0 || !strings.Contains(stderr, fmt.Sprintf("demo: %d excluded hits removed before reranking", ex.Len())) {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	filtered, _ := ex.FilterRun(in)
	want := expectRerank(task, filtered, 10)
	for qid, ids := range runIDs(t, out) {
		if !slices.Equal(ids, want[qid]) {
			t.Errorf("%s: %v, want %v", qid, ids, want[qid])
		}
	}
}

// TestCLIBrightMRRDepth: BRIGHT's MRR reads each query's top 1000, so the
// summary of a BRIGHT run kept 10 deep names its MRR MRR@10 and says why,
// in the per-task table and r2med rerank's too, where it printed "MRR" for
// a number BRIGHT's run.py would not give; kept as deep as BRIGHT's (or holding the whole
// corpus) its MRR is BRIGHT's and plain "MRR", as an R2MED task's is.
func TestCLIBrightMRRDepth(t *testing.T) {
	fakeBrightEnv(t)
	dir := t.TempDir()
	shallow := mustRun(t, "run", "--suite", "bright", "--task", "biology,leetcode", "--top-k", "10", "--out", filepath.Join(dir, "10"), "--quiet")
	lines := strings.Split(shallow, "\n")
	if !strings.Contains(shallow, "  MRR@10 0.") || strings.Contains(shallow, "  MRR 0.") ||
		!strings.Contains(shallow, "MRR@10: MRR over each query's top 10, where BRIGHT's run.py reads its top 1000 (r2med run --top-k 1000)") ||
		!slices.ContainsFunc(lines, func(l string) bool { f := strings.Fields(l); return len(f) == 4 && f[0] == "task" && f[3] == "MRR@10" }) {
		t.Errorf("10 deep:\n%s", shallow)
	}
	deep := mustRun(t, "run", "--suite", "bright", "--task", "biology", "--top-k", "1000", "--out", filepath.Join(dir, "1000"), "--quiet")
	if !strings.Contains(deep, "  MRR 0.") || strings.Contains(deep, "MRR@") {
		t.Errorf("1000 deep:\n%s", deep)
	}
	// r2med rerank's table names the MRR of its input and its output.
	srv, _ := teiLoopback(t, nil)
	reranked := mustRun(t, "rerank", "--suite", "bright", "--task", "biology", "--run", filepath.Join(dir, "10", "BRIGHT-biology", pipeline.RunFile),
		"--rerank", "tei", "--rerank-url", srv.URL, "--out", filepath.Join(dir, "tei.trec"), "--quiet")
	if !strings.Contains(reranked, "Recall@100     MRR@10\n") {
		t.Errorf("rerank of the 10-deep run:\n%s", reranked)
	}
	// A run 1000 deep whose rerank keeps only its top 10 is 10 deep: its
	// MRR is named by the run file's depth, not by --top-k.
	cut := mustRun(t, "run", "--suite", "bright", "--task", "biology", "--top-k", "1000", "--rerank", "tei", "--rerank-url", srv.URL, "--rerank-depth", "10",
		"--out", filepath.Join(dir, "cut"), "--quiet")
	if !strings.Contains(cut, "  MRR@10 0.") || !strings.Contains(mustRun(t, "results", "--results", filepath.Join(dir, "cut")), " @10 ") {
		t.Errorf("1000 deep, reranked to 10:\n%s", cut)
	}
	r2med := mustRun(t, "run", "--task", "demo", "--top-k", "10", "--out", filepath.Join(dir, "demo"), "--quiet")
	if !strings.Contains(r2med, "  MRR 0.") || strings.Contains(r2med, "MRR@") {
		t.Errorf("the demo task:\n%s", r2med)
	}
}

// TestCLIBrightMRRLabels: r2med results, r2med leaderboard --metric mrr
// (recip_rank too) and r2med compare --metric mrr name the MRR of a
// BRIGHT run kept 10 deep by its depth, where they printed it as plain
// MRR beside BRIGHT's: its cell reads "… @10", a line under the table
// says what that is and how to get BRIGHT's, CSV and JSON carry the
// label; a run as deep as BRIGHT's (here: holding the whole corpus) is
// unmarked.
func TestCLIBrightMRRLabels(t *testing.T) {
	fakeBrightEnv(t)
	dir := t.TempDir()
	shallow, deep := filepath.Join(dir, "10"), filepath.Join(dir, "1000")
	mustRun(t, "run", "--suite", "bright", "--task", "biology", "--top-k", "10", "--out", shallow, "--quiet")
	mustRun(t, "run", "--suite", "bright", "--task", "biology", "--top-k", "1000", "--out", deep, "--quiet")
	const note = "@10: MRR over each query's top 10, where BRIGHT's run.py reads its top 1000 (r2med run --top-k 1000)"
	marked := regexp.MustCompile(`\d\.\d{2,4} @10\b`)
	// One marked cell, and the line that says what it is.
	once := func(what, out string) {
		t.Helper()
		if n := len(marked.FindAllString(out, -1)); n != 1 || !strings.Contains(strings.Join(strings.Fields(out), " "), note) {
			t.Errorf("%s: %d cells marked @10, want 1 and the note:\n%s", what, n, out)
		}
	}
	for _, f := range []string{"table", "markdown"} {
		out := mustRun(t, "results", "--results", dir, "--format", f)
		once("results --format "+f, out)
		for _, l := range strings.Split(out, "\n") {
			if marked.MatchString(l) {
				if !strings.HasSuffix(strings.TrimRight(l, " |"), " 10") {
					t.Errorf("results --format %s: the mark is not on the 10-deep run's row: %q", f, l)
				}
			}
		}
		// The two runs' names, and the line saying what their hashes
		// stand for, as the list shows them (the suite has its column).
		if !regexp.MustCompile(`bm25 #[0-9a-f]{4}: top_k=10; bm25 #[0-9a-f]{4}: top_k=1000`).MatchString(out) {
			t.Errorf("results --format %s: no line saying what the hashes stand for, named as listed:\n%s", f, out)
		}
	}
	rows, err := csv.NewReader(strings.NewReader(mustRun(t, "results", "--results", dir, "--format", "csv"))).ReadAll()
	if err != nil || len(rows) != 3 {
		t.Fatalf("results csv: %v %q", err, rows)
	}
	col, dirCol := slices.Index(rows[0], "mrr_label"), slices.Index(rows[0], "dir")
	for _, r := range rows[1:] {
		want := map[string]string{shallow: "MRR@10", deep: "MRR"}[r[dirCol]]
		if col < 0 || dirCol < 0 || r[col] != want {
			t.Errorf("results csv: mrr_label of %s is not %s: %q", r[dirCol], want, rows)
		}
	}
	var listed struct {
		Runs []struct {
			Dir      string `json:"dir"`
			MRRLabel string `json:"mrr_label"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, "results", "--results", dir, "--format", "json")), &listed); err != nil || len(listed.Runs) != 2 {
		t.Fatalf("results json: %v %+v", err, listed)
	}
	for _, r := range listed.Runs {
		if want := map[string]string{shallow: "MRR@10", deep: "MRR"}[r.Dir]; r.MRRLabel != want {
			t.Errorf("results json: mrr_label of %s is %q, want %q", r.Dir, r.MRRLabel, want)
		}
	}

	board := []string{"leaderboard", "--results", dir, "--no-published", "--no-external"}
	for _, metric := range []string{"mrr", "recip_rank"} {
		once("leaderboard --metric "+metric, mustRun(t, append(board, "--metric", metric)...))
	}
	once("leaderboard --format markdown", mustRun(t, append(board, "--metric", "mrr", "--format", "markdown")...))
	if tex := mustRun(t, append(board, "--metric", "mrr", "--format", "latex")...); strings.Count(tex, `\textsuperscript{@10}`) != 1 || !strings.Contains(tex, "@10: MRR over each query's top 10") {
		t.Errorf("leaderboard --format latex:\n%s", tex)
	}
	if nd := mustRun(t, append(board, "--metric", "ndcg@10")...); strings.Contains(nd, "@10: MRR") || strings.Contains(nd, " @10") {
		t.Errorf("an nDCG@10 board marks MRR's depth:\n%s", nd)
	}
	rows, err = csv.NewReader(strings.NewReader(mustRun(t, append(board, "--metric", "recip_rank", "--format", "csv")...))).ReadAll()
	if err != nil || len(rows) != 3 {
		t.Fatalf("leaderboard csv: %v %q", err, rows)
	}
	col, settings := slices.Index(rows[0], "mrr_labels"), slices.Index(rows[0], "settings")
	for _, r := range rows[1:] {
		want := ""
		if strings.HasSuffix(r[settings], "top_k=10") {
			want = "BRIGHT-biology=MRR@10"
		}
		if col < 0 || r[col] != want {
			t.Errorf("leaderboard csv: mrr_labels of %s is not %q: %q", r[settings], want, rows)
		}
	}
	var table struct {
		Rows []struct {
			Sources   map[string]string `json:"sources"`
			MRRLabels map[string]string `json:"mrr_labels"`
		} `json:"rows"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, append(board, "--metric", "mrr", "--format", "json")...)), &table); err != nil || len(table.Rows) != 2 {
		t.Fatalf("leaderboard json: %v %+v", err, table)
	}
	for _, r := range table.Rows {
		if got, want := r.MRRLabels["BRIGHT-biology"], map[string]string{shallow: "MRR@10", deep: ""}[r.Sources["BRIGHT-biology"]]; got != want {
			t.Errorf("leaderboard json: mrr_labels of %s: %q, want %q", r.Sources["BRIGHT-biology"], got, want)
		}
	}

	for _, f := range []string{"table", "markdown"} {
		out := mustRun(t, "compare", deep, shallow, "--metric", "mrr", "--format", f)
		once("compare --format "+f, out)
		if !strings.Contains(strings.Join(strings.Fields(out), " "), "'s MRR on BRIGHT-biology is its MRR@10, MRR over each query's top 10") {
			t.Errorf("compare --format %s: no note under the comparison with the baseline:\n%s", f, out)
		}
	}
	var reps []struct {
		MRRLabels map[string]map[string]string `json:"mrr_labels"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, "compare", deep, shallow, "--metric", "recip_rank", "--metric", "ndcg@10", "--format", "json")), &reps); err != nil || len(reps) != 2 {
		t.Fatalf("compare json: %v", err)
	}
	if len(reps[0].MRRLabels) != 1 || reps[1].MRRLabels != nil {
		t.Errorf("compare json: mrr_labels %v (MRR), %v (nDCG@10)", reps[0].MRRLabels, reps[1].MRRLabels)
	}
	for _, l := range reps[0].MRRLabels {
		if l["BRIGHT-biology"] != "MRR@10" {
			t.Errorf("compare json: mrr_labels %v", reps[0].MRRLabels)
		}
	}
}

// TestStatsJSONSeveralTasks: r2med stats --json over several tasks prints
// one JSON document, an array of the profiles in the order the tasks were
// named, as jq '.[]' and pandas.json_normalize read it; one task keeps its
// single object (TestStats).
func TestStatsJSONSeveralTasks(t *testing.T) {
	fakeBrightEnv(t)
	stdout := mustRun(t, "stats", "--suite", "bright", "--task", "biology,leetcode", "--json")
	var profiles []map[string]any
	if err := json.Unmarshal([]byte(stdout), &profiles); err != nil {
		t.Fatalf("not one JSON document: %v\n%s", err, stdout)
	}
	if len(profiles) != 2 || profiles[0]["name"] != "BRIGHT-biology" || profiles[1]["name"] != "BRIGHT-leetcode" {
		t.Fatalf("want the profiles of biology and leetcode in order, got:\n%s", stdout)
	}
	var one map[string]any
	if err := json.Unmarshal([]byte(mustRun(t, "stats", "--suite", "bright", "--task", "biology", "--json")), &one); err != nil || one["name"] != "BRIGHT-biology" {
		t.Fatalf("one task: want its profile as one object (%v): %v", err, one)
	}
}
