package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/r2med/r2med/dataset"
	"github.com/r2med/r2med/pipeline"
	"github.com/r2med/r2med/trec"
)

const shared = "../../../shared/data"

func needShared(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(shared); err != nil {
		t.Skipf("shared reference data not found at %s: %v", shared, err)
	}
}

func r2med(t *testing.T, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	code = execute(context.Background(), args, strings.NewReader(stdin), &out, &errb)
	return out.String(), errb.String(), code
}

// TestEvalMatchesTrecEval runs `r2med eval` as a user would and compares
// its output with trec_eval 9.0.8's, byte for byte, for every reference case.
func TestEvalMatchesTrecEval(t *testing.T) {
	needShared(t)
	ref := filepath.Join(shared, "eval-reference")
	flags, err := os.ReadFile(filepath.Join(ref, "measures.txt"))
	if err != nil {
		t.Fatal(err)
	}
	measures := strings.Fields(string(flags))
	for _, c := range []struct {
		want, qrels, run string
		complete         bool
	}{
		{"nfcorpus.bm25.trec_eval", "nfcorpus.qrels", "nfcorpus.bm25.run", false},
		{"nfcorpus.ties.trec_eval", "nfcorpus.qrels", "nfcorpus.ties.run", false},
		{"nfcorpus.neartie.trec_eval", "nfcorpus.qrels", "nfcorpus.neartie.run", false},
		{"nfcorpus.partial.trec_eval", "nfcorpus.qrels", "nfcorpus.partial.run", false},
		{"nfcorpus.partial.c.trec_eval", "nfcorpus.qrels", "nfcorpus.partial.run", true},
		{"nfcorpus.mixed.trec_eval", "nfcorpus.mixed.qrels", "nfcorpus.bm25.run", false},
	} {
		t.Run(c.want, func(t *testing.T) {
			args := []string{"eval", "-q"}
			if c.complete {
				args = append(args, "-c")
			}
			args = append(args, measures...)
			args = append(args, filepath.Join(ref, c.qrels), filepath.Join(ref, c.run))
			got, stderr, code := r2med(t, "", args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			want, err := os.ReadFile(filepath.Join(ref, c.want))
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
		})
	}
}

// evalFiles writes a qrels file and a run file for eval and returns
// their paths.
func evalFiles(t *testing.T, qrelsText, runText string) (qrels, run string) {
	t.Helper()
	dir := t.TempDir()
	qrels, run = filepath.Join(dir, "q.txt"), filepath.Join(dir, "r.trec")
	if err := os.WriteFile(qrels, []byte(qrelsText), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(run, []byte(runText), 0o644); err != nil {
		t.Fatal(err)
	}
	return qrels, run
}

func TestEvalErrors(t *testing.T) {
	qrels, run := evalFiles(t, "1 0 d1 1\n1 0 d2 x\n", "1 Q0 d1 1 2.0 t\n")
	_, stderr, code := r2med(t, "", "eval", qrels, run)
	if code != 1 || !strings.Contains(stderr, qrels+`:2: grade "x" is not an integer`) {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	_, stderr, code = r2med(t, "", "eval", "-m", "mrr@10", qrels, run)
	if code != 2 || !strings.Contains(stderr, "hakari profile") {
		t.Fatalf("a HAKARI-only measure under trec: exit %d, stderr %q", code, stderr)
	}
	if _, stderr, code = r2med(t, "", "eval", qrels); code != 2 || !strings.Contains(stderr, "QRELS then RUN") {
		t.Fatalf("one argument: exit %d, stderr %q", code, stderr)
	}
}

// TestEvalNoCommonQueries: a run none of whose queries is judged (another
// task's run, or ids written differently), an empty run and empty qrels are
// refused naming both files, what is wrong (the ids on each side, or which
// file is empty) and what to check, where the error said only "no query has
// both results and relevance judgments".
func TestEvalNoCommonQueries(t *testing.T) {
	qrels, run := evalFiles(t, "q1 0 d1 1\nq2 0 d2 1\n", "Q1 Q0 d1 1 2 t\nQ2 Q0 d1 1 2 t\n")
	for _, c := range []struct{ qrels, run, want string }{
		{"q1 0 d1 1\nq2 0 d2 1\n", "Q1 Q0 d1 1 2 t\nQ2 Q0 d1 1 2 t\n",
			`the run's 2 queries ("Q1", "Q2") are none of the qrels' 2 ("q1", "q2"); check that the run and the qrels come from the same task`},
		{"q1 0 d1 1\n", "", "the run is empty"},
		{"", "q1 Q0 d1 1 2 t\n", "the qrels hold no judgments"},
	} {
		os.WriteFile(qrels, []byte(c.qrels), 0o644)
		os.WriteFile(run, []byte(c.run), 0o644)
		for _, complete := range []bool{false, true} {
			args := []string{"eval", "-m", "ndcg_cut.10", qrels, run}
			if complete {
				args = append(args[:1], append([]string{"-c"}, args[1:]...)...)
			}
			_, stderr, code := r2med(t, "", args...)
			if code != 1 || !strings.Contains(stderr, run) || !strings.Contains(stderr, qrels) || !strings.Contains(stderr, c.want) {
				t.Errorf("qrels %q, run %q, -c %v: exit %d, stderr %q; want both files named and %q", c.qrels, c.run, complete, code, stderr, c.want)
			}
		}
	}
}

// TestEvalSaysWhichMean: eval keeps trec_eval's default, the mean over
// the queries of the run, and says so on stderr when -c would average
// over more (judged queries the run has no results for), with both
// counts; with -c, or when the run answers every judged query, it says
// nothing.
func TestEvalSaysWhichMean(t *testing.T) {
	qrels, run := evalFiles(t, "1 0 d1 1\n2 0 d2 1\n3 0 d3 1\n", "1 Q0 d1 1 2 t\n2 Q0 d1 1 2 t\n")
	out, stderr, code := r2med(t, "", "eval", "-m", "recip_rank", qrels, run)
	if code != 0 || out != "recip_rank            \tall\t0.5000\n" {
		t.Fatalf("exit %d, stdout %q: %s", code, out, stderr)
	}
	want := "r2med eval: note: means are over the 2 queries evaluated, the run's (trec_eval's default); 1 more judged query has no results: -c averages over all 3, it counting 0, as R2MED's result files and r2med run do\n"
	if stderr != want {
		t.Errorf("stderr %q, want %q", stderr, want)
	}
	out, stderr, code = r2med(t, "", "eval", "-c", "-m", "recip_rank", qrels, run)
	if code != 0 || out != "recip_rank            \tall\t0.3333\n" || stderr != "" {
		t.Errorf("-c: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	os.WriteFile(qrels, []byte("1 0 d1 1\n2 0 d2 1\n"), 0o644)
	if _, stderr, code = r2med(t, "", "eval", "-m", "recip_rank", qrels, run); code != 0 || stderr != "" {
		t.Errorf("every judged query answered: exit %d, stderr %q", code, stderr)
	}
}

// TestEvalSaysWhichRunQueriesAreUnjudged: run queries without judgments
// are left out of the means, as trec_eval leaves them out, and eval says
// how many and which, where they were dropped without a word (a run whose
// ids were half rewritten showed a mean over the other half).
func TestEvalSaysWhichRunQueriesAreUnjudged(t *testing.T) {
	qrels, run := evalFiles(t, "1 0 d1 1\n2 0 d2 1\n", "1 Q0 d1 1 2 t\n2 Q0 d2 1 2 t\nx9 Q0 d1 1 2 t\nx8 Q0 d1 1 2 t\n")
	for _, complete := range []bool{false, true} {
		args := []string{"eval", "-m", "recip_rank", qrels, run}
		if complete {
			args = append([]string{"eval", "-c"}, args[1:]...)
		}
		out, stderr, code := r2med(t, "", args...)
		if code != 0 || out != "recip_rank            \tall\t1.0000\n" {
			t.Fatalf("-c %v: exit %d, stdout %q: %s", complete, code, out, stderr)
		}
		want := `r2med eval: note: 2 queries of the run ("x8", "x9") have no judgments in the qrels and are not evaluated (trec_eval's rule); check the query ids if they should be` + "\n"
		if stderr != want {
			t.Errorf("-c %v: stderr %q, want %q", complete, stderr, want)
		}
	}
	// HAKARI-Bench counts every query of the run: said so.
	out, stderr, code := r2med(t, "", "eval", "--profile", "hakari", "-m", "mrr@10", qrels, run)
	want := `r2med eval: note: 2 queries of the run ("x8", "x9") have no judgments in the qrels and score 0 in the means (HAKARI-Bench's rule: every query of the run counts)` + "\n"
	if code != 0 || out != "mrr@10                \tall\t0.5000\n" || stderr != want {
		t.Errorf("hakari: exit %d, stdout %q, stderr %q, want %q", code, out, stderr, want)
	}
}

// TestEvalSaysFamilyNamedTwice: "-m P.5 -m P.10" prints P_5 and P_10,
// where trec_eval keeps the first list and prints P_5 alone; the help
// promises trec_eval's output, so eval says on stderr where it differs.
func TestEvalSaysFamilyNamedTwice(t *testing.T) {
	qrels, run := evalFiles(t, "1 0 d1 1\n", "1 Q0 d1 1 2 t\n")
	out, stderr, code := r2med(t, "", "eval", "-m", "P.10", "-m", "map", "-m", "P.5", qrels, run)
	if code != 0 || out != "map                   \tall\t1.0000\nP_5                   \tall\t0.2000\nP_10                  \tall\t0.1000\n" {
		t.Fatalf("exit %d, stdout %q: %s", code, out, stderr)
	}
	want := "r2med eval: note: P is named by more than one -m; trec_eval keeps the first list given only (its defaults where no -m gives one), r2med evaluates every cutoff named (give them in one -m, P.5,10, for output trec_eval prints too)\n"
	if stderr != want {
		t.Errorf("stderr %q, want %q", stderr, want)
	}
	if _, stderr, _ = r2med(t, "", "eval", "-m", "P.5,10", "-m", "map", qrels, run); stderr != "" {
		t.Errorf("one -m per family: stderr %q, want none", stderr)
	}
}

// TestEvalRefusesLevelBelowOne: -l 0 made grade-0 (judged non-relevant)
// documents relevant in trec_eval but was read by eval as "the default,
// 1", so a user asking for it got level-1 numbers without a word; levels
// below 1 are now refused.
func TestEvalRefusesLevelBelowOne(t *testing.T) {
	qrels, run := evalFiles(t, "1 0 d1 0\n1 0 d2 1\n", "1 Q0 d1 1 2 t\n1 Q0 d2 2 1 t\n")
	for _, l := range []string{"0", "-1"} {
		out, stderr, code := r2med(t, "", "eval", "-l", l, "-m", "P.1", qrels, run)
		if code != 2 || out != "" || !strings.Contains(stderr, "-l "+l+": the relevance level must be 1 or more") {
			t.Errorf("-l %s: exit %d, stdout %q, stderr %q", l, code, out, stderr)
		}
	}
	if out, _, code := r2med(t, "", "eval", "-l", "2", "-m", "num_rel", qrels, run); code != 0 || out != "num_rel               \tall\t0\n" {
		t.Errorf("-l 2: exit %d, stdout %q", code, out)
	}
}

func TestEvalHakariProfile(t *testing.T) {
	// List order is authoritative for HAKARI: d2 is second whatever its score.
	qrels, run := evalFiles(t, "1 0 d2 1\n2 0 d9 1\n", "1 Q0 d1 1 1.0 t\n1 Q0 d2 2 5.0 t\n2 Q0 d3 1 1.0 t\n")
	got, stderr, code := r2med(t, "", "eval", "--profile", "hakari", "-m", "mrr@10", "-m", "hit@1", qrels, run)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	want := "hit@1                 \tall\t0.0000\nmrr@10                \tall\t0.2500\n"
	if got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}

func TestAnalyze(t *testing.T) {
	in := `{"id":"a","text":"The patient's HbA1c was 9.8%; e.g. IL-6 rose."}` + "\n"
	got, stderr, code := r2med(t, in, "analyze")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	want := `{"id":"a","tokens":["patient","hba1c","9.8","e.g","il","6","rose"]}` + "\n"
	if got != want {
		t.Fatalf("got %s want %s", got, want)
	}
	_, stderr, code = r2med(t, "{\"id\":\"a\"}\n", "analyze")
	if code != 1 || !strings.Contains(stderr, "stdin:1:") {
		t.Fatalf("missing text: exit %d, stderr %q", code, stderr)
	}
	if _, stderr, code = r2med(t, "", "analyze", "--analyzer", "nope"); code != 1 || !strings.Contains(stderr, "lucene-english") {
		t.Fatalf("unknown analyzer: exit %d, stderr %q", code, stderr)
	}
}

func TestRunDemoEndToEnd(t *testing.T) {
	out := filepath.Join(t.TempDir(), "demo")
	stdout, stderr, code := r2med(t, "", "run", "--task", "demo", "--out", out, "--quiet")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "nDCG@10") || stderr != "" {
		t.Fatalf("stdout %q stderr %q", stdout, stderr)
	}
	// The summary says which queries the means are over.
	if !strings.Contains(stdout, "\n  means over all judged queries (15)\n") {
		t.Errorf("the summary does not state the mean's rule:\n%s", stdout)
	}
	var res map[string]any
	data, err := os.ReadFile(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &res); err != nil {
		t.Fatal(err)
	}
	if res["dataset_name"] != "demo" || res["model_name"] != "bm25" {
		t.Fatalf("results.json: %s", data)
	}
	// The run file evaluates to the same nDCG@10 through `r2med eval`.
	run := filepath.Join(out, "run.trec")
	qrels := filepath.Join(t.TempDir(), "qrels.txt")
	if _, stderr, code := r2med(t, "", "run", "--task", "demo", "--out", out, "--quiet"); code != 0 {
		t.Fatalf("rerun: exit %d: %s", code, stderr)
	}
	writeDemoQrels(t, qrels)
	evalOut, stderr, code := r2med(t, "", "eval", "-m", "ndcg_cut.10", qrels, run)
	if code != 0 {
		t.Fatalf("eval: exit %d: %s", code, stderr)
	}
	test := res["test"].(map[string]any)
	f := strings.Fields(evalOut)
	if len(f) != 3 {
		t.Fatalf("eval printed %q", evalOut)
	}
	// results.json rounds to 5 decimals, trec_eval prints 4: they agree to
	// within half a unit of the 4th decimal plus the 5th-decimal rounding.
	if v, err := strconv.ParseFloat(f[2], 64); err != nil || math.Abs(v-test["ndcg_at_10"].(float64)) > 0.000051 {
		t.Fatalf("eval says %q, results.json ndcg_at_10 = %v", evalOut, test["ndcg_at_10"])
	}
}

func TestRunDefaultsToResultsDir(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("R2MED_RESULTS", dir)
	stdout, stderr, code := r2med(t, "", "run", "--task", "demo", "--quiet")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	want := filepath.Join(dir, "bm25", "demo", "results.json")
	if _, err := os.Stat(want); err != nil || !strings.Contains(stdout, want) {
		t.Fatalf("without --out the run should land in %s (stdout %q): %v", want, stdout, err)
	}
}

func TestRunErrors(t *testing.T) {
	if _, stderr, code := r2med(t, "", "run", "--task", "demo", "--pipeline", "missing.yaml", "--k1", "1"); code != 1 || !strings.Contains(stderr, "missing.yaml") {
		t.Fatalf("--pipeline with a missing file: exit %d, stderr %q", code, stderr)
	}
	if _, stderr, code := r2med(t, "", "run", "--task", "demo", "--retriever", "dense", "--out", t.TempDir()); code != 1 || !strings.Contains(stderr, "needs a model") {
		t.Fatalf("dense without a model: exit %d, stderr %q", code, stderr)
	}
	if _, stderr, code := r2med(t, "", "run", "--task", "demo", "--out", t.TempDir(), "--bm25", "okapi"); code != 1 || !strings.Contains(stderr, "r2med, lucene, robertson") {
		t.Fatalf("bad scheme: exit %d, stderr %q", code, stderr)
	}
	if _, stderr, code := r2med(t, "", "run", "--data", filepath.Join(t.TempDir(), "missing"), "--out", t.TempDir()); code != 1 || stderr == "" {
		t.Fatalf("missing data dir: exit %d, stderr %q", code, stderr)
	}
}

func TestStats(t *testing.T) {
	stdout, stderr, code := r2med(t, "", "stats", "--task", "demo", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var p map[string]any
	if err := json.Unmarshal([]byte(stdout), &p); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, stdout)
	}
	text, _, code := r2med(t, "", "stats", "--task", "demo")
	if code != 0 || !strings.Contains(strings.ToLower(text), "queries") {
		t.Fatalf("text stats: exit %d\n%s", code, text)
	}
}

func writeDemoQrels(t *testing.T, path string) {
	t.Helper()
	task, err := pipeline.LoadTask("demo", "", dataset.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := trec.WriteQrels(f, task.Qrels); err != nil {
		t.Fatal(err)
	}
}

func TestRunGAR(t *testing.T) {
	needShared(t)
	out := filepath.Join(t.TempDir(), "gar")
	data := filepath.Join(shared, "r2med-biology-demo")
	if _, stderr, code := r2med(t, "", "run", "--data", data, "--gar", "hyde", "--out", out); code != 1 || !strings.Contains(stderr, "--gar and --gar-llm go together") {
		t.Fatalf("--gar alone: exit %d, stderr %q", code, stderr)
	}
	stdout, stderr, code := r2med(t, "", "run", "--data", data, "--allow-missing-docs", "--gar", "hyde", "--gar-llm", "qwen-7b", "--out", out, "--quiet")
	if code != 0 || !strings.Contains(stdout, "hyde/qwen-7b → bm25") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	data2, err := os.ReadFile(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"gar_llm": "qwen-7b"`, `"gar_method": "hyde"`, `"retriever_name": "bm25"`, `"NDCG@10": `, `"MRR": `} {
		if !strings.Contains(string(data2), want) {
			t.Errorf("results.json lacks %s:\n%s", want, data2)
		}
	}
}

func TestNanoBuild(t *testing.T) {
	a, b := filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")
	for _, dir := range []string{a, b} {
		stdout, stderr, code := r2med(t, "", "nano", "build", "--task", "demo", "--name", "NanoDemo", "--max-docs", "40", "--out", dir)
		if code != 0 || !strings.Contains(stdout, "NanoDemo: 15 queries, 40 documents") {
			t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
		}
	}
	for _, f := range []string{"README.md", "corpus/NanoDemo-00000-of-00001.parquet", "queries/NanoDemo-00000-of-00001.parquet",
		"qrels/NanoDemo-00000-of-00001.parquet", "bm25/NanoDemo-00000-of-00001.parquet", "metadata/NanoDemo.json"} {
		x, err1 := os.ReadFile(filepath.Join(a, f))
		y, err2 := os.ReadFile(filepath.Join(b, f))
		if err1 != nil || err2 != nil || !bytes.Equal(x, y) {
			t.Errorf("%s: not written identically twice (%v, %v)", f, err1, err2)
		}
	}
	if _, stderr, code := r2med(t, "", "nano", "build", "--task", "demo"); code != 1 || !strings.Contains(stderr, "--out") {
		t.Fatalf("no --out: exit %d, stderr %q", code, stderr)
	}
}

func TestTaskAndSuiteErrors(t *testing.T) {
	if _, stderr, code := r2med(t, "", "run", "--task", "demo", "--suite", "nano", "--out", t.TempDir()); code != 2 || !strings.Contains(stderr, "does not apply to --task demo") {
		t.Fatalf("--suite nano with demo: exit %d, stderr %q", code, stderr)
	}
	if _, stderr, code := r2med(t, "", "run", "--task", "Biologie", "--out", t.TempDir()); code != 2 || !strings.Contains(stderr, `the built-in task is "demo"`) || !strings.Contains(stderr, "MedQA-Diag") || !strings.Contains(stderr, `did you mean "Biology"?`) {
		t.Fatalf("misspelt task: exit %d, stderr %q", code, stderr)
	}
}

// A task whose qrels judge a document its corpus lacks is refused with the
// flag that accepts it, on the commands that have that flag; with the flag
// it runs.
func TestMissingDocsNamesTheFlag(t *testing.T) {
	data := t.TempDir()
	files := map[string]string{
		"corpus.jsonl": `{"id":"d1","text":"insulin lowers blood glucose"}` + "\n" + `{"id":"d2","text":"statins lower cholesterol"}` + "\n",
		"query.jsonl":  `{"id":"q1","text":"what lowers glucose"}` + "\n",
		"qrels.jsonl":  `{"q_id":"q1","p_id":"d1","score":1}` + "\n" + `{"q_id":"q1","p_id":"d9","score":1}` + "\n",
	}
	for name, text := range files {
		writeTestFile(t, filepath.Join(data, name), []byte(text))
	}
	const hint = "r2med: if the corpus is a deliberate sample, run again with --allow-missing-docs\n"
	out := filepath.Join(t.TempDir(), "res")
	for _, args := range [][]string{{"run", "--data", data, "--out", out, "--quiet"}, {"stats", "--data", data}} {
		_, stderr, code := r2med(t, "", args...)
		if code == 0 || !strings.Contains(stderr, `judged document is not in`) || !strings.Contains(stderr, `"d9"`) || !strings.HasSuffix(stderr, hint) {
			t.Errorf("%s: exit %d, stderr %q; want the missing document named and, last, %q", args[0], code, stderr, hint)
		}
	}
	if stdout, stderr, code := r2med(t, "", "run", "--data", data, "--out", out, "--quiet", "--allow-missing-docs"); code != 0 {
		t.Fatalf("with --allow-missing-docs: exit %d\n%s%s", code, stdout, stderr)
	}
}

// eval reads a task's own judgments, R2MED's qrels.jsonl (plain or gzip)
// and BEIR's qrels TSV, as the TREC qrels they hold: trec_eval's output
// on the TREC file, byte for byte.
func TestEvalReadsTaskQrels(t *testing.T) {
	needShared(t)
	ref := filepath.Join(shared, "eval-reference")
	flags, err := os.ReadFile(filepath.Join(ref, "measures.txt"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join(ref, "nfcorpus.mixed.trec_eval"))
	if err != nil {
		t.Fatal(err)
	}
	qrels, err := trec.ReadQrelsFile(filepath.Join(ref, "nfcorpus.mixed.qrels"))
	if err != nil {
		t.Fatal(err)
	}
	var jsonl, tsv bytes.Buffer
	tsv.WriteString("query-id\tcorpus-id\tscore\n")
	for _, qid := range slices.Sorted(maps.Keys(qrels)) {
		for _, did := range slices.Sorted(maps.Keys(qrels[qid])) {
			fmt.Fprintf(&jsonl, `{"q_id":%q,"p_id":%q,"score":%d}`+"\n", qid, did, qrels[qid][did])
			fmt.Fprintf(&tsv, "%s\t%s\t%d\n", qid, did, qrels[qid][did])
		}
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(jsonl.Bytes())
	zw.Close()
	dir := t.TempDir()
	for name, data := range map[string][]byte{"qrels.jsonl": jsonl.Bytes(), "qrels.jsonl.gz": gz.Bytes(), "test.tsv": tsv.Bytes()} {
		path := filepath.Join(dir, name)
		writeTestFile(t, path, data)
		args := append(append([]string{"eval", "-q"}, strings.Fields(string(flags))...), path, filepath.Join(ref, "nfcorpus.bm25.run"))
		got, stderr, code := r2med(t, "", args...)
		if code != 0 || got != string(want) {
			t.Errorf("%s: exit %d, %s; output equal to trec_eval's: %v", name, code, stderr, got == string(want))
		}
	}
	// Each format's reader says what is wrong, where.
	for _, c := range []struct{ name, text, want string }{
		{"bad.jsonl", `{"q_id":"q1","p_id":"d1","score":1}` + "\n" + `{"q_id":"q1","p_id":"d2","score":"high"}` + "\n", `bad.jsonl:2: "score" is a string, want an integer grade`},
		{"noheader.tsv", "q1\td1\t1\n", "noheader.tsv:1: first line is a judgment, not the header"},
		{"bad.txt", "q1 0 d1\tx 1\n", "bad.txt:1: qrels line has 5 fields, want 4"},
	} {
		path := filepath.Join(dir, c.name)
		writeTestFile(t, path, []byte(c.text))
		_, stderr, code := r2med(t, "", "eval", path, filepath.Join(ref, "nfcorpus.bm25.run"))
		if code == 0 || !strings.Contains(stderr, c.want) {
			t.Errorf("%s: exit %d, stderr %q; want %q", c.name, code, stderr, c.want)
		}
	}
}

// The reference tables fit $COLUMNS for people (more lines than rows),
// each long identifier (a task's repository at its revision, a model's
// checkpoint) whole on a line of its own under its row; piped without
// $COLUMNS, a row is a line.
func TestReferenceTablesFitColumns(t *testing.T) {
	for _, c := range []struct {
		args []string
		long string // a cell that must stay whole
	}{
		{[]string{"tasks"}, "hf://datasets/R2MED/Biology@8b9fec2db9eda4b5742d03732213fbaee8169556"},
		{[]string{"tasks", "--suite", "bright"}, "hf://datasets/xlangai/BRIGHT@"},
		{[]string{"models"}, "ncbi/MedCPT-Query-Encoder + ncbi/MedCPT-Article-Encoder"},
		{[]string{"reproduce", "--list"}, ""},
	} {
		t.Setenv("COLUMNS", "")
		os.Unsetenv("COLUMNS")
		piped, _, code := r2med(t, "", c.args...)
		if code != 0 {
			t.Fatalf("%v: exit %d", c.args, code)
		}
		rows := strings.Split(strings.TrimSuffix(piped, "\n"), "\n")
		t.Setenv("COLUMNS", "120")
		fitted, _, code := r2med(t, "", c.args...)
		if code != 0 {
			t.Fatalf("%v: exit %d", c.args, code)
		}
		lines := strings.Split(strings.TrimSuffix(fitted, "\n"), "\n")
		whole := false
		for _, l := range lines {
			if n := utf8.RuneCountInString(l); n > 120 {
				t.Errorf("%v at 120 columns: a line of %d: %q", c.args, n, l)
			}
			whole = whole || strings.HasPrefix(l, "  "+c.long)
		}
		if !whole && c.long != "" {
			t.Errorf("%v at 120 columns: %q not whole on a line of its own:\n%s", c.args, c.long, fitted)
		}
		if !strings.Contains(piped, c.long) || len(lines) <= len(rows) {
			t.Errorf("%v piped: %d lines, fitted %d; want a row a line and the long cell in it:\n%s", c.args, len(rows), len(lines), piped)
		}
	}
}

// A run made over NFCorpus's whole query file (Pyserini's way) ranks the
// dev split's queries too: run:FILE on the test split leaves them out,
// says so, and scores the test queries as trec_eval does.
func TestRunFileOverEverySplit(t *testing.T) {
	needShared(t)
	ref := filepath.Join(shared, "eval-reference")
	test, err := os.ReadFile(filepath.Join(ref, "nfcorpus.bm25.run"))
	if err != nil {
		t.Fatal(err)
	}
	dev := "PLAIN-1 Q0 MED-2421 1 9.5 other-split\nPLAIN-1 Q0 MED-10 2 8.5 other-split\n"
	path := filepath.Join(t.TempDir(), "all-splits.trec")
	writeTestFile(t, path, append([]byte(dev), test...))
	out := filepath.Join(t.TempDir(), "out")
	stdout, stderr, code := r2med(t, "", "run", "--data", filepath.Join(shared, "nfcorpus"), "--split", "test", "--retriever", "run:"+path, "--out", out)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	if want := `1 ranked query is in nfcorpus's query file but not judged in its test qrels ("PLAIN-1"): left out`; !strings.Contains(stderr, want) {
		t.Errorf("stderr %q; want %q", stderr, want)
	}
	if !strings.Contains(stdout, "nDCG@10 0.3190") {
		t.Errorf("stdout %q; want trec_eval's nDCG@10 0.3190 on the test queries", stdout)
	}
}
