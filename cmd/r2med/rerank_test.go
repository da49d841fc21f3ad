package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/r2med/r2med/dataset"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/measure"
	"github.com/r2med/r2med/pipeline"
	"github.com/r2med/r2med/plan"
	"github.com/r2med/r2med/results"
	"github.com/r2med/r2med/trec"
)

// wordOverlap is the loopback TEI server's relevance: distinct query words
// (lower-cased, longer than 3 letters) found in the text.
func wordOverlap(query, text string) float64 {
	text = strings.ToLower(text)
	seen := map[string]bool{}
	n := 0
	for _, w := range strings.Fields(strings.ToLower(query)) {
		w = strings.Trim(w, ".,;:?!()")
		if len(w) > 3 && !seen[w] && strings.Contains(text, w) {
			seen[w] = true
			n++
		}
	}
	return float64(n)
}

// teiLoopback answers POST /rerank like TEI (best first); fail, if set,
// decides per query to answer 400 instead.
func teiLoopback(t *testing.T, fail func(query string) bool) (*httptest.Server, *atomic.Int32) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		var req struct {
			Query string   `json:"query"`
			Texts []string `json:"texts"`
		}
		if r.URL.Path != "/rerank" || json.NewDecoder(r.Body).Decode(&req) != nil {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		if fail != nil && fail(req.Query) {
			http.Error(w, `{"error":"refused"}`, http.StatusBadRequest)
			return
		}
		type res struct {
			Index int     `json:"index"`
			Score float64 `json:"score"`
		}
		out := make([]res, len(req.Texts))
		for i, tx := range req.Texts {
			out[i] = res{i, wordOverlap(req.Query, tx)}
		}
		slices.SortStableFunc(out, func(a, b res) int { return cmp.Compare(b.Score, a.Score) })
		json.NewEncoder(w).Encode(out)
	}))
	t.Cleanup(srv.Close)
	return srv, &calls
}

func demoTask(t *testing.T) *ir.Task {
	t.Helper()
	task, err := pipeline.LoadTask("demo", "", dataset.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return task
}

// expectRerank is what reranking the top depth of run by wordOverlap must
// give: a stable sort of the top depth by score, input order among ties.
func expectRerank(task *ir.Task, run ir.Run, depth int) map[string][]string {
	qtext := map[string]string{}
	for _, q := range task.Queries {
		qtext[q.ID] = q.Text
	}
	dtext := map[string]string{}
	for _, d := range task.Corpus {
		dtext[d.ID] = d.Text
	}
	out := map[string][]string{}
	for qid, hits := range run {
		top := slices.Clone(hits[:min(depth, len(hits))])
		slices.SortStableFunc(top, func(a, b ir.Hit) int {
			return cmp.Compare(wordOverlap(qtext[qid], dtext[b.DocID]), wordOverlap(qtext[qid], dtext[a.DocID]))
		})
		for _, h := range top {
			out[qid] = append(out[qid], h.DocID)
		}
	}
	return out
}

func runIDs(t *testing.T, path string) map[string][]string {
	t.Helper()
	run, err := trec.ReadRunFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for qid, hits := range run {
		for _, h := range hits {
			out[qid] = append(out[qid], h.DocID)
		}
	}
	return out
}

func TestRerankCLIRun(t *testing.T) {
	dir := t.TempDir()
	mustRun(t, "run", "--task", "demo", "--out", dir, "--quiet")
	input := filepath.Join(dir, pipeline.RunFile)
	srv, _ := teiLoopback(t, nil)
	out := filepath.Join(dir, "tei.trec")
	stdout := mustRun(t, "rerank", "--task", "demo", "--run", input, "--rerank", "tei", "--rerank-url", srv.URL, "--rerank-depth", "10", "--out", out, "--quiet")

	task := demoTask(t)
	in, err := trec.ReadRunFile(input)
	if err != nil {
		t.Fatal(err)
	}
	want := expectRerank(task, in, 10)
	got := runIDs(t, out)
	if len(got) != len(want) {
		t.Fatalf("%d queries, want %d", len(got), len(want))
	}
	for qid := range want {
		if !slices.Equal(got[qid], want[qid]) {
			t.Errorf("%s: %v, want %v", qid, got[qid], want[qid])
		}
	}
	// Only the reranked 10 are kept: recall@100 is recall@10 (R2MED).
	run, _ := trec.ReadRunFile(out)
	ev, err := measure.EvaluateR2MED(task.Qrels, run)
	if err != nil {
		t.Fatal(err)
	}
	if ev.Scores["recall_at_100"] != ev.Scores["recall_at_10"] {
		t.Errorf("recall@100 %v != recall@10 %v", ev.Scores["recall_at_100"], ev.Scores["recall_at_10"])
	}
	if !strings.Contains(stdout, "reranked") || !strings.Contains(stdout, "nDCG@10") || !strings.Contains(stdout, "input") {
		t.Errorf("stdout lacks the summary and before/after table:\n%s", stdout)
	}
	if _, err := os.Stat(out + ".partial"); !os.IsNotExist(err) {
		t.Errorf("checkpoint left behind: %v", err)
	}

	// --keep-tail keeps every input document, reranked head first.
	tail := filepath.Join(dir, "tail.trec")
	mustRun(t, "rerank", "--task", "demo", "--run", input, "--rerank", "tei", "--rerank-url", srv.URL, "--rerank-depth", "10", "--keep-tail", "--out", tail, "--quiet", "--no-eval")
	for qid, ids := range runIDs(t, tail) {
		if len(ids) != len(in[qid]) || !slices.Equal(ids[:len(want[qid])], want[qid]) {
			t.Errorf("%s with --keep-tail: %d docs (input %d), head %v", qid, len(ids), len(in[qid]), ids[:min(10, len(ids))])
		}
	}
}

// A rerank that fails part-way leaves OUT.partial; the rerun scores only
// the queries it lacks and writes the same run as a clean rerank.
func TestRerankCLIResume(t *testing.T) {
	dir := t.TempDir()
	mustRun(t, "run", "--task", "demo", "--out", dir, "--quiet")
	input := filepath.Join(dir, pipeline.RunFile)
	task := demoTask(t)
	sorted := slices.Sorted(func(yield func(string) bool) {
		for _, q := range task.Queries {
			if !yield(q.ID) {
				return
			}
		}
	})
	// Refuse the last query (queries are reranked in id order).
	lastText := ""
	for _, q := range task.Queries {
		if q.ID == sorted[len(sorted)-1] {
			lastText = q.Text
		}
	}
	bad, _ := teiLoopback(t, func(q string) bool { return q == lastText })
	out := filepath.Join(dir, "resumed.trec")
	args := []string{"rerank", "--task", "demo", "--run", input, "--rerank", "tei", "--rerank-depth", "5", "--out", out, "--quiet"}
	_, stderr, code := r2med(t, "", append(args, "--rerank-url", bad.URL)...)
	if code == 0 || !strings.Contains(stderr, "400") {
		t.Fatalf("exit %d, stderr %q; want the server's 400", code, stderr)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatal("a failed rerank wrote its output")
	}
	good, calls := teiLoopback(t, nil)
	_, stderr, code = r2med(t, "", append(args, "--rerank-url", good.URL)...)
	if code != 0 {
		t.Fatal(stderr)
	}
	if !strings.Contains(stderr, "resuming") || calls.Load() != 1 {
		t.Errorf("stderr %q, %d calls; want a resume that asks for the one missing query", stderr, calls.Load())
	}
	clean := filepath.Join(dir, "clean.trec")
	mustRun(t, append(args[:len(args)-3], "--out", clean, "--quiet", "--rerank-url", good.URL)...)
	if a, b := readFileString(t, out), readFileString(t, clean); a != b {
		t.Error("the resumed run differs from a clean one")
	}
}

func TestRerankCLINanoCandidates(t *testing.T) {
	_, repos, _ := fakeHubEnv(t)
	srv, _ := teiLoopback(t, nil)
	out := filepath.Join(t.TempDir(), "nano.trec")
	mustRun(t, "rerank", "--task", "Biology", "--suite", "nano", "--candidates", "bm25", "--rerank", "tei", "--rerank-url", srv.URL, "--rerank-depth", "10", "--out", out, "--quiet")
	got := runIDs(t, out)
	published := repos.Nano.Subset("bm25").Run
	if len(got) != len(published) {
		t.Errorf("%d queries, published %d", len(got), len(published))
	}
	for qid, ids := range got {
		var top []string
		for _, h := range published[qid][:min(10, len(published[qid]))] {
			top = append(top, h.DocID)
		}
		if len(ids) != len(top) || !slices.Equal(slices.Sorted(slices.Values(ids)), slices.Sorted(slices.Values(top))) {
			t.Errorf("%s: reranked %v is not a reordering of the published top 10 %v", qid, ids, top)
		}
	}
	_, stderr, code := r2med(t, "", "rerank", "--task", "Biology", "--suite", "nano", "--candidates", "bm25", "--without-safeguard", "--rerank", "tei", "--rerank-url", srv.URL, "--out", out)
	if code == 0 || !strings.Contains(stderr, "applies to reranking_hybrid lists") {
		t.Errorf("--without-safeguard on bm25: exit %d, %s", code, stderr)
	}
}

func TestRerankCLIErrors(t *testing.T) {
	dir := t.TempDir()
	run := filepath.Join(dir, "run.trec")
	task := demoTask(t)
	os.WriteFile(run, []byte(task.Queries[0].ID+" Q0 "+task.Corpus[0].ID+" 1 1 x\n"), 0o644)
	out := filepath.Join(dir, "out.trec")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--task", "demo", "--run", run, "--rerank", "tei", "--rerank-url", "http://x"}, "--out RUN is required"},
		{[]string{"--task", "demo", "--rerank", "tei", "--out", out}, "--run RUN (a TREC run) or --candidates"},
		{[]string{"--task", "demo", "--run", run, "--candidates", "bm25", "--rerank", "tei", "--out", out}, "not both"},
		{[]string{"--task", "demo", "--run", run, "--rerank", "tei", "--rerank-url", "http://x", "--rerank-depth", "0", "--out", out}, "--rerank-depth must be positive"},
		{[]string{"--task", "demo", "--run", run, "--rerank", "tei", "--rerank-url", "http://x", "--ties", "random", "--out", out}, `unknown --ties "random"`},
		{[]string{"--task", "demo", "--run", run, "--rerank", "colbert", "--out", out}, `unknown reranker "colbert"`},
		{[]string{"--task", "demo", "--run", run, "--rerank", "tei", "--out", out}, "needs the server's base URL"},
		{[]string{"--task", "demo", "--run", run + ".missing", "--rerank", "tei", "--out", out}, ".missing"},
		{[]string{"--task", "demo", "--candidates", "bm25", "--rerank", "tei", "--rerank-url", "http://x", "--out", out}, "candidate lists"},
		{[]string{"--task", "demo", "--run", run, "--rerank", "onnx", "--head", "middle", "--out", out}, `unknown --head "middle"`},
		// --out naming a directory is refused before any reranking, not
		// when the reranked run is renamed onto it.
		{[]string{"--task", "demo", "--run", run, "--rerank", "tei", "--rerank-url", "http://127.0.0.1:1", "--out", dir}, dir + " is a directory"},
	} {
		_, stderr, code := r2med(t, "", append([]string{"rerank"}, c.args...)...)
		if code == 0 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want %q", c.args, code, stderr, c.want)
		}
		// A rerank that never started leaves nothing to resume from.
		if _, err := os.Stat(out + ".partial"); !os.IsNotExist(err) {
			t.Errorf("%v: %s.partial left behind (%v)", c.args, out, err)
		}
	}
}

// Errors found once the job has started (a run from another task, a
// document the corpus lacks) are validation errors too: they leave no
// OUT.partial, while one that holds finished queries is kept and named.
func TestRerankCLIValidationLeavesNoCheckpoint(t *testing.T) {
	dir := t.TempDir()
	srv, calls := teiLoopback(t, nil)
	out := filepath.Join(dir, "out.trec")
	task := demoTask(t)
	q := task.Queries[0].ID
	for name, run := range map[string]string{
		"query not in the task":    "no-such-query Q0 " + task.Corpus[0].ID + " 1 1 x\n",
		"document not in the task": q + " Q0 no-such-doc 1 1 x\n",
	} {
		path := filepath.Join(dir, "run.trec")
		os.WriteFile(path, []byte(run), 0o644)
		_, stderr, code := r2med(t, "", "rerank", "--task", "demo", "--run", path, "--rerank", "tei", "--rerank-url", srv.URL, "--out", out, "--quiet")
		if code != 1 || strings.Contains(stderr, "kept for resuming") {
			t.Errorf("%s: exit %d, stderr %q", name, code, stderr)
		}
		if _, err := os.Stat(out + ".partial"); !os.IsNotExist(err) {
			t.Errorf("%s: %s.partial left behind (%v)", name, out, err)
		}
	}
	if calls.Load() != 0 {
		t.Errorf("%d calls to the reranker for runs that do not fit the task", calls.Load())
	}
}

// Ctrl-C during a rerank keeps OUT.partial with the finished queries and
// says so; the same command then resumes from it.
func TestRerankCLIInterruptNamesCheckpoint(t *testing.T) {
	dir := t.TempDir()
	mustRun(t, "run", "--task", "demo", "--out", dir, "--quiet")
	input := filepath.Join(dir, pipeline.RunFile)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	good, _ := teiLoopback(t, nil)
	srv := interrupting(t, good, cancel, 2) // the second query's request
	out := filepath.Join(dir, "tei.trec")
	args := []string{"rerank", "--task", "demo", "--run", input, "--rerank", "tei", "--rerank-depth", "5", "--out", out, "--quiet"}
	var stdout, stderr bytes.Buffer
	code := execute(ctx, append(args, "--rerank-url", srv.URL), strings.NewReader(""), &stdout, &stderr)
	want := "r2med: interrupted; kept for resuming: " + out + ".partial (run the same command again to resume from there)\n"
	if code != 130 || !strings.HasSuffix(stderr.String(), want) {
		t.Fatalf("exit %d, stderr %q; want 130 and %q", code, stderr.String(), want)
	}
	_, errText, code := r2med(t, "", append(args, "--rerank-url", good.URL)...)
	if code != 0 || !strings.Contains(errText, "resuming the rerank: 1 queries already reranked in "+out+".partial") {
		t.Errorf("rerun: exit %d, stderr %q", code, errText)
	}

	// Interrupted before any query finished: nothing is kept, and the
	// message says so.
	ctx2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	first := interrupting(t, good, cancel2, 1)
	stderr.Reset()
	code = execute(ctx2, append(args[:len(args)-3], "--out", filepath.Join(dir, "none.trec"), "--quiet", "--rerank-url", first.URL), strings.NewReader(""), &stdout, &stderr)
	if code != 130 || stderr.String() != "r2med: interrupted; no partial output files were left behind\n" {
		t.Errorf("exit %d, stderr %q", code, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "none.trec.partial")); !os.IsNotExist(err) {
		t.Errorf("an empty checkpoint was kept: %v", err)
	}
}

// rerank takes run's flag names; the old ones still work, with a note,
// and naming one flag twice under both names is an error.
func TestRerankCLIDeprecatedFlags(t *testing.T) {
	dir := t.TempDir()
	mustRun(t, "run", "--task", "demo", "--out", dir, "--quiet")
	input := filepath.Join(dir, pipeline.RunFile)
	srv, _ := teiLoopback(t, nil)
	newOut, oldOut := filepath.Join(dir, "new.trec"), filepath.Join(dir, "old.trec")
	mustRun(t, "rerank", "--task", "demo", "--run", input, "--rerank", "tei", "--rerank-url", srv.URL, "--rerank-depth", "7", "--out", newOut, "--quiet", "--no-eval")
	_, stderr, code := r2med(t, "", "rerank", "--task", "demo", "--run", input, "--reranker", "tei", "--base-url", srv.URL, "--depth", "7", "--out", oldOut, "--quiet", "--no-eval")
	if code != 0 {
		t.Fatalf("old flag names: exit %d, %s", code, stderr)
	}
	for _, note := range []string{"--reranker is deprecated; use --rerank", "--base-url is deprecated; use --rerank-url", "--depth is deprecated; use --rerank-depth"} {
		if !strings.Contains(stderr, "r2med rerank: "+note+"\n") {
			t.Errorf("stderr lacks %q:\n%s", note, stderr)
		}
	}
	if readFileString(t, newOut) != readFileString(t, oldOut) {
		t.Error("the old flag names rerank differently")
	}
	_, stderr, code = r2med(t, "", "rerank", "--task", "demo", "--run", input, "--rerank", "tei", "--rerank-url", srv.URL, "--base-url", "http://elsewhere", "--out", oldOut)
	if code != 1 || !strings.Contains(stderr, "--base-url and --rerank-url are the same flag (--base-url is its deprecated name); give --rerank-url only") {
		t.Errorf("both names: exit %d, %s", code, stderr)
	}
	help, _, _ := r2med(t, "", "rerank", "--help")
	_, help, _ = strings.Cut(help, "Flags:")
	for _, old := range []string{"--reranker", "--base-url", "--model-dir", "--depth ", "--model "} {
		if strings.Contains(help, old) {
			t.Errorf("help still shows %s", old)
		}
	}
	for _, now := range []string{"--rerank string", "--rerank-url", "--rerank-model ", "--rerank-model-dir", "--rerank-depth"} {
		if !strings.Contains(help, now) {
			t.Errorf("help lacks %s", now)
		}
	}
}

// writeHybridNano writes a Nano-layout set with a reranking_hybrid config:
// q1's list is d1…d100 with its positive d1 inside; q2's is d2…d101 plus
// its positive d102 at rank 101, the safeguard, whose text matches q2 best.
func writeHybridNano(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	var corpus, hybrid strings.Builder
	for i := 1; i <= 102; i++ {
		text := "filler passage"
		switch i {
		case 1:
			text = "insulin resistance passage"
		case 102:
			text = "retinal detachment symptoms"
		}
		json.NewEncoder(&corpus).Encode(map[string]string{"_id": "d" + itoa(i), "text": text})
	}
	list := func(from, to int) []string {
		var ids []string
		for i := from; i <= to; i++ {
			ids = append(ids, "d"+itoa(i))
		}
		return ids
	}
	json.NewEncoder(&hybrid).Encode(map[string]any{"query-id": "q1", "corpus-ids": list(1, 100)})
	json.NewEncoder(&hybrid).Encode(map[string]any{"query-id": "q2", "corpus-ids": append(list(2, 101), "d102")})
	files := map[string]string{
		"corpus/S.jsonl":           corpus.String(),
		"queries/S.jsonl":          `{"_id":"q1","text":"insulin resistance"}` + "\n" + `{"_id":"q2","text":"retinal detachment"}` + "\n",
		"qrels/S.jsonl":            `{"query-id":"q1","corpus-id":"d1"}` + "\n" + `{"query-id":"q2","corpus-id":"d102"}` + "\n",
		"reranking_hybrid/S.jsonl": hybrid.String(),
		"README.md": "---\nconfigs:\n" +
			"  - config_name: corpus\n    data_files:\n      - split: S\n        path: corpus/S.jsonl\n" +
			"  - config_name: queries\n    default: true\n    data_files:\n      - split: S\n        path: queries/S.jsonl\n" +
			"  - config_name: qrels\n    data_files:\n      - split: S\n        path: qrels/S.jsonl\n" +
			"  - config_name: reranking_hybrid\n    data_files:\n      - split: S\n        path: reranking_hybrid/S.jsonl\n---\n",
	}
	for name, body := range files {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func itoa(i int) string { return strconv.Itoa(i) }

func TestRerankCLISafeguard(t *testing.T) {
	data := writeHybridNano(t)
	srv, _ := teiLoopback(t, nil)
	out := filepath.Join(t.TempDir(), "r.trec")
	base := []string{"rerank", "--data", data, "--split", "S", "--candidates", "reranking_hybrid", "--rerank", "tei", "--rerank-url", srv.URL, "--out", out, "--quiet", "--no-eval"}

	// Kept (HAKARI's "reranking"): at depth 100 the safeguard is reranked
	// with the rest and rises to the top.
	mustRun(t, base...)
	got := runIDs(t, out)
	if len(got["q2"]) != 101 || got["q2"][0] != "d102" || len(got["q1"]) != 100 || got["q1"][0] != "d1" {
		t.Errorf("kept: q1 %d docs from %s, q2 %d docs from %s", len(got["q1"]), got["q1"][0], len(got["q2"]), got["q2"][0])
	}
	// Dropped ("reranking_without_safeguard").
	mustRun(t, append(base, "--without-safeguard")...)
	got = runIDs(t, out)
	if len(got["q2"]) != 100 || slices.Contains(got["q2"], "d102") {
		t.Errorf("dropped: q2 has %d docs, safeguard present: %v", len(got["q2"]), slices.Contains(got["q2"], "d102"))
	}
	// At depth 10 the safeguard lies beyond the depth either way.
	mustRun(t, append(base, "--rerank-depth", "10")...)
	if got = runIDs(t, out); len(got["q2"]) != 10 || slices.Contains(got["q2"], "d102") {
		t.Errorf("depth 10: q2 %v", got["q2"])
	}
}

// TestRerankSaysWhatDepthLeftOut: a rerank at depth 2 wrote each query's
// top 2 only (R2MED's rule) and said nothing of the documents it left
// out, so recall@100 falling to recall@10 read as the reranker's doing;
// the summary now counts them, and with --keep-tail where they went.
func TestRerankSaysWhatDepthLeftOut(t *testing.T) {
	srv, _ := yesLoopback(t, nil, "")
	dir := t.TempDir()
	mustRun(t, "run", "--task", "demo", "--out", filepath.Join(dir, "bm25"), "--quiet")
	in, err := trec.ReadRunFile(filepath.Join(dir, "bm25", "run.trec"))
	if err != nil {
		t.Fatal(err)
	}
	below := 0
	for _, hits := range in {
		below += max(0, len(hits)-2)
	}
	rerank := func(out string, extra ...string) (string, ir.Run) {
		o := filepath.Join(dir, out)
		stdout := mustRun(t, append([]string{"rerank", "--task", "demo", "--run", filepath.Join(dir, "bm25", "run.trec"), "--rerank", "llm-pointwise", "--rerank-model", "m",
			"--rerank-url", srv.URL + "/v1", "--rerank-depth", "2", "--cache", filepath.Join(dir, "cache"), "--out", o, "--quiet", "--no-eval"}, extra...)...)
		run, err := trec.ReadRunFile(o)
		if err != nil {
			t.Fatal(err)
		}
		return stdout, run
	}
	stdout, run := rerank("top.trec")
	if want := fmt.Sprintf("only each query's reranked top 2 is kept, as in R2MED: %d documents of the input below it left out (--keep-tail keeps them)", below); !strings.Contains(stdout, want) || run.Depth() != 2 {
		t.Errorf("depth %d; the summary lacks %q:\n%s", run.Depth(), want, stdout)
	}
	stdout, run = rerank("tail.trec", "--keep-tail")
	if want := fmt.Sprintf("--keep-tail: %d documents below each query's top 2 follow the reranked ones unreranked, in their input order", below); !strings.Contains(stdout, want) || run.Depth() != in.Depth() {
		t.Errorf("depth %d; the summary lacks %q:\n%s", run.Depth(), want, stdout)
	}
}

// TestRerankNamesServedModel: r2med rerank never said which model the
// server answered with (run's and gar's summaries did), so a gateway
// routing gpt-x elsewhere went unseen; it now says so, from the cache
// too.
func TestRerankNamesServedModel(t *testing.T) {
	srv, _ := yesLoopback(t, nil, "gpt-x-2025-01-31")
	dir := t.TempDir()
	mustRun(t, "run", "--task", "demo", "--out", filepath.Join(dir, "bm25"), "--quiet")
	for _, out := range []string{"a.trec", "b.trec"} {
		stdout := mustRun(t, "rerank", "--task", "demo", "--run", filepath.Join(dir, "bm25", "run.trec"), "--rerank", "llm-pointwise", "--rerank-model", "gpt-x",
			"--rerank-url", srv.URL+"/v1", "--rerank-depth", "2", "--cache", filepath.Join(dir, "cache"), "--out", filepath.Join(dir, out), "--quiet", "--no-eval")
		if !strings.Contains(stdout, "gpt-x was answered by gpt-x-2025-01-31") {
			t.Errorf("%s: the summary does not name the model that answered:\n%s", out, stdout)
		}
	}
}

// TestRerankWritesManifest: r2med rerank wrote the run and nothing on how
// it was made: its settings, its calls, their cost and the answers it
// could not use were printed and lost. OUT.manifest.json now records
// them as a run's manifest does, each count against what the server
// answered and what the file holds.
func TestRerankWritesManifest(t *testing.T) {
	srv, calls := yesLoopback(t, map[string]any{"prompt_tokens": 10, "completion_tokens": 1}, "gpt-x-2025-01-31")
	dir := t.TempDir()
	mustRun(t, "run", "--task", "demo", "--out", filepath.Join(dir, "bm25"), "--quiet")
	prices := filepath.Join(dir, "prices.yaml")
	os.WriteFile(prices, []byte("gpt-x: {input: 1000, output: 2000}\n"), 0o644)
	out := filepath.Join(dir, "pw.trec")
	in := filepath.Join(dir, "bm25", "run.trec")
	mustRun(t, "rerank", "--task", "demo", "--run", in, "--rerank", "llm-pointwise", "--rerank-model", "gpt-x",
		"--rerank-url", srv.URL+"/v1", "--rerank-depth", "3", "--cache", filepath.Join(dir, "cache"), "--prices", prices, "--out", out, "--quiet", "--no-eval")
	m, err := results.ReadManifest(out + ".manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	n := int(calls.Load())
	run, err := trec.ReadRunFile(out)
	if err != nil {
		t.Fatal(err)
	}
	rr, _ := m.Config["rerank"].(map[string]any)
	if rr["kind"] != "llm-pointwise" || rr["model"] != "gpt-x" || rr["depth"] != float64(3) || rr["max_length"] != nil {
		t.Errorf("config.rerank %v: want llm-pointwise, gpt-x, depth 3 and no cross-encoder settings", rr)
	}
	if m.Counts["rerank_llm_calls"] != n || m.Counts["rerank_llm_cached"] != 0 || m.Counts["rerank_no_logprobs"] != n || m.Counts["queries_ranked"] != len(run) || m.Counts["run_depth"] != 3 {
		t.Errorf("counts %v: want %d calls, none cached, all scored from the text, %d queries of 3", m.Counts, n, len(run))
	}
	want := float64(n) * (10*1000 + 2000) / 1e6
	if u := m.Usage; u == nil || u.Calls != int64(n) || u.USD == nil || !near(*u.USD, want) || len(u.Models) != 1 || strings.Join(u.Models[0].Served, ",") != "gpt-x-2025-01-31" {
		t.Errorf("usage %+v: want %d calls costing $%v, answered by gpt-x-2025-01-31", u, n, want)
	}
	d, err := results.Digest(out)
	if err != nil {
		t.Fatal(err)
	}
	if m.OutputSHA256["pw.trec"] != d.SHA256 || len(m.Inputs) != 2 || m.Inputs[1].Path != in || m.Task.Name != "demo" {
		t.Errorf("outputs %v, inputs %+v, task %+v: want the run's checksum, the demo's content and %s", m.OutputSHA256, m.Inputs, m.Task, in)
	}
}

// TestRerankResumedSaysWhatItCounts: a rerank resumed from OUT.partial
// counts the calls of this attempt only (the queries its checkpoint held
// made theirs in the attempt that was interrupted), where run's usage
// counts both; the summary and the manifest now say so.
func TestRerankResumedSaysWhatItCounts(t *testing.T) {
	srv := newChatLoopback(t)
	flaky, fail := refusingLastQuery(t, srv)
	dir := t.TempDir()
	mustRun(t, "run", "--task", "demo", "--out", filepath.Join(dir, "bm25"), "--quiet")
	out := filepath.Join(dir, "rr.trec")
	args := []string{"rerank", "--task", "demo", "--run", filepath.Join(dir, "bm25", "run.trec"), "--rerank", "reasonrank", "--rerank-model", "r1",
		"--rerank-url", flaky.URL + "/v1", "--rerank-depth", "10", "--retries", "0", "--cache", filepath.Join(dir, "cache"), "--out", out, "--quiet", "--no-eval"}
	if _, _, code := r2med(t, "", args...); code == 0 {
		t.Fatal("the first attempt should fail on the last query")
	}
	fail.Store(false)
	stdout := mustRun(t, args...)
	m, err := results.ReadManifest(out + ".manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	n := m.Counts[plan.ResumedQueries]
	want := fmt.Sprintf("%d queries were reranked by an interrupted attempt (kept in %s.partial): the answers, tokens and cost here are this attempt's", n, out)
	if n == 0 || !strings.Contains(stdout, "resumed: "+want) || m.Details["resumed"] != want || m.Counts["rerank_llm_calls"] != len(srv.task.Queries)-n {
		t.Errorf("%d queries resumed, %d calls counted; the summary or the manifest (%v) does not say %q:\n%s", n, m.Counts["rerank_llm_calls"], m.Details, want, stdout)
	}
}
