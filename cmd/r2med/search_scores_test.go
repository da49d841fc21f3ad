package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/rivo/uniseg"

	"github.com/r2med/r2med/searchapi"
)

// writeR2MEDTask writes a task named name in R2MED's layout (corpus.jsonl,
// query.jsonl, qrels.jsonl, each given as its lines) and returns its
// directory.
func writeR2MEDTask(t *testing.T, name, corpus, queries, qrels string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	writeTestFile(t, filepath.Join(dir, "corpus.jsonl"), []byte(corpus))
	writeTestFile(t, filepath.Join(dir, "query.jsonl"), []byte(queries))
	writeTestFile(t, filepath.Join(dir, "qrels.jsonl"), []byte(qrels))
	return dir
}

// writeTieTask writes a task in R2MED's layout whose corpus makes BM25
// ties: three copies of one text, a near copy, documents the query shares
// no term with (score 0) and one of stop words only.
func writeTieTask(t *testing.T) string {
	t.Helper()
	return writeR2MEDTask(t, "ties", `{"id":"d3","text":"aspirin for headache pain"}
{"id":"d1","text":"aspirin for headache pain"}
{"id":"d2","text":"aspirin for headache pain"}
{"id":"d10","text":"aspirin headache"}
{"id":"d4","text":"fever in children"}
{"id":"d5","text":"Über café naïve résumé 北京 医院"}
{"id":"d6","text":"the and of"}
{"id":"d7","text":"aspirin aspirin aspirin headache pain relief trial"}
`, `{"id":"q1","text":"aspirin headache"}`+"\n", `{"q_id":"q1","p_id":"d1","score":1}`+"\n")
}

// TestSearchTextScoresAsJSON: `r2med search` prints each hit's score with
// the digits its --json (and the HTTP API) gives, which read back as the
// float32 score `r2med run` writes for the same query: tied documents,
// which the run separates by float32 steps in trec_eval's order, do not
// print as equal numbers in an order the reader cannot check, and a
// document that matches nothing is not "-0.0000".
func TestSearchTextScoresAsJSON(t *testing.T) {
	data := writeTieTask(t)
	idx := filepath.Join(t.TempDir(), "ties.idx")
	if _, stderr, code := r2med(t, "", "index", "build", "--quiet", "--data", data, "--out", idx); code != 0 {
		t.Fatalf("index build: %s", stderr)
	}
	q := "aspirin headache"
	text, stderr, code := r2med(t, "", "search", "--index", idx, "-k", "20", "--snippet", "0", q)
	if code != 0 {
		t.Fatalf("search: %s", stderr)
	}
	js, stderr, code := r2med(t, "", "search", "--index", idx, "-k", "20", "--snippet", "0", "--json", q)
	if code != 0 {
		t.Fatalf("search --json: %s", stderr)
	}
	var res struct {
		Hits []struct {
			ID    string      `json:"id"`
			Score json.Number `json:"score"`
		} `json:"hits"`
	}
	dec := json.NewDecoder(strings.NewReader(js))
	dec.UseNumber()
	if err := dec.Decode(&res); err != nil {
		t.Fatal(err)
	}
	hitRE := regexp.MustCompile(`^\s*(\d+)  (\S+)\s+(\S+)$`)
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(text), "\n")[1:] {
		if m := hitRE.FindStringSubmatch(l); m != nil {
			lines = append(lines, m[2]+" "+m[3])
		}
	}
	if len(res.Hits) != 8 || len(lines) != len(res.Hits) {
		t.Fatalf("%d hits in JSON, %d in text:\n%s", len(res.Hits), len(lines), text)
	}
	for i, h := range res.Hits {
		if want := h.ID + " " + h.Score.String(); lines[i] != want {
			t.Errorf("hit %d: text %q, JSON %q", i+1, lines[i], want)
		}
	}
	if strings.Contains(text, "-0.0000") {
		t.Errorf("a score printed as -0.0000:\n%s", text)
	}
	const none = "no document holds a word of the query: all tie at 0"
	if strings.Contains(text, none) {
		t.Errorf("a query that matches says it matches nothing:\n%s", text)
	}
	// A query of stop words matches nothing: every document ties at 0,
	// and the output says so, and in what order they are.
	stop, stderr, code := r2med(t, "", "search", "--index", idx, "-k", "3", "--snippet", "0", "the and of")
	if code != 0 || !strings.Contains(stop, "\n"+none) || !strings.Contains(stop, "so that every evaluator reads this order\n   1  d7   0\n   2  d6  -1e-45\n") {
		t.Errorf("a query of stop words: exit %d: %s\n%s", code, stderr, stop)
	}

	// The run file r2med run writes for the query holds the same
	// documents in the same order with the same float32 scores.
	out := filepath.Join(t.TempDir(), "run")
	if _, stderr, code := r2med(t, "", "run", "--quiet", "--data", data, "--index", idx, "--top-k", "20", "--out", out); code != 0 {
		t.Fatalf("run: %s", stderr)
	}
	b, err := os.ReadFile(filepath.Join(out, "run.trec"))
	if err != nil {
		t.Fatal(err)
	}
	runLines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(runLines) != len(lines) {
		t.Fatalf("run.trec has %d lines, search %d hits:\n%s", len(runLines), len(lines), b)
	}
	f32 := func(s string) float32 {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatal(err)
		}
		return float32(v)
	}
	for i, l := range runLines {
		f := strings.Fields(l)
		got := strings.Fields(lines[i])
		if f[2] != got[0] || f32(f[4]) != f32(got[1]) {
			t.Errorf("rank %d: run.trec %s %s, search %s %s", i+1, f[2], f[4], got[0], got[1])
		}
	}
	if !bytes.Contains(b, []byte(" d3 3 ")) || !bytes.Contains(b, []byte(" d1 5 ")) {
		t.Errorf("the tied documents are not in trec_eval's order (doc id descending):\n%s", b)
	}
}

// TestSearchQueryFile: --queries FILE searches a task's query file (R2MED
// or BEIR keys; - is standard input), each query under its id, in
// batches the service's limits take: 150 queries at -k 1000 need two.
// The judged query's hits are run's. A query file with a bad line is
// refused naming the file and line; queries as arguments and --queries
// together are refused.
func TestSearchQueryFile(t *testing.T) {
	data := writeTieTask(t)
	idx := filepath.Join(t.TempDir(), "ties.idx")
	if _, stderr, code := r2med(t, "", "index", "build", "--quiet", "--data", data, "--out", idx); code != 0 {
		t.Fatalf("index build: %s", stderr)
	}
	var beir strings.Builder
	for i := range 150 {
		fmt.Fprintf(&beir, "{\"_id\": \"x%d\", \"text\": \"aspirin headache %d\"}\n", i, i)
	}
	out, stderr, code := r2med(t, beir.String(), "search", "--index", idx, "-k", "1000", "--snippet", "0", "--json", "--queries", "-")
	if code != 0 {
		t.Fatalf("--queries -: exit %d: %s", code, stderr)
	}
	var batch struct {
		Results []struct {
			ID   string `json:"id"`
			Hits []struct {
				ID string `json:"id"`
			} `json:"hits"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(out), &batch); err != nil {
		t.Fatal(err)
	}
	if len(batch.Results) != 150 || batch.Results[149].ID != "x149" || len(batch.Results[149].Hits) != 8 {
		t.Errorf("%d results, the last %+v", len(batch.Results), batch.Results[len(batch.Results)-1])
	}

	text, stderr, code := r2med(t, "", "search", "--index", idx, "-k", "3", "--snippet", "0", "--queries", filepath.Join(data, "query.jsonl"))
	if code != 0 {
		t.Fatalf("--queries: %s", stderr)
	}
	// A service that takes fewer queries at once: --batch sends fewer.
	base, _ := serveSearch(t, "--index", idx, "--max-batch", "40")
	_, stderr, code = r2med(t, beir.String(), "search", "--server", base, "-k", "2", "--snippet", "0", "--queries", "-")
	if code == 0 || !strings.Contains(stderr, "standard input: queries 1 to 150: ") || !strings.Contains(stderr, "at most 40") || !strings.Contains(stderr, "--batch sets how many") {
		t.Errorf("--queries to a service with --max-batch 40: exit %d: %s", code, stderr)
	}
	out, stderr, code = r2med(t, beir.String(), "search", "--server", base, "-k", "2", "--snippet", "0", "--batch", "40", "--queries", "-")
	if code != 0 || strings.Count(out, " · 2 hits · ") != 150 {
		t.Errorf("--batch 40: exit %d: %s\n%.300s", code, stderr, out)
	}

	want := "q1 · ties · 3 hits · \"aspirin headache\"\n   1  d7   0.15931213\n   2  d10  0.1591676\n   3  d3   0.15031129\n"
	if text != want {
		t.Errorf("--queries printed\n%s\nwant\n%s", text, want)
	}

	bad := filepath.Join(t.TempDir(), "queries.jsonl")
	if err := os.WriteFile(bad, []byte("{\"id\": \"q1\", \"text\": \"aspirin\"}\n{\"id\": \"q2\"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	badBEIR := filepath.Join(t.TempDir(), "queries.jsonl")
	if err := os.WriteFile(badBEIR, []byte("{\"_id\": \"q1\", \"text\": \"aspirin\"}\n{\"_id\": \"q2\"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--queries", bad}, bad + ":2: missing \"text\""},
		{[]string{"--queries", badBEIR}, badBEIR + ":2: missing \"text\""},
		{[]string{"--queries", bad, "fever"}, "give the queries as arguments"},
		{[]string{}, "give the queries as arguments"},
		{[]string{"--queries", bad, "--id", "q9"}, "--id names one query"},
	} {
		_, stderr, code := r2med(t, "", append([]string{"search", "--index", idx}, c.args...)...)
		if code == 0 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d: %s, want %q", c.args, code, stderr, c.want)
		}
	}
}

// TestSearchAlignsByDisplayWidth: ids and scores line up in display
// columns, whatever bytes an id takes (é is two, 医 two bytes more and
// two columns wide).
func TestSearchAlignsByDisplayWidth(t *testing.T) {
	r := &searchapi.Result{Query: "q", System: "s", Hits: []searchapi.Hit{
		{Rank: 1, ID: "résumé-1", Score: 12.5}, {Rank: 2, ID: "医院-2", Score: 3.25}, {Rank: 3, ID: "d3", Score: 0},
	}}
	var b bytes.Buffer
	printResult(&b, r, false, 80)
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")[1:]
	col := -1
	for _, l := range lines {
		point := strings.IndexAny(l, ".") // the score's point, or its end
		if point < 0 {
			point = len(l)
		}
		if c := uniseg.StringWidth(l[:point]); col < 0 {
			col = c
		} else if c != col {
			t.Errorf("the scores' points are not in one column:\n%s", b.String())
			break
		}
	}
}

// TestIndexBuildSampledCorpus: an index holds the corpus only, so
// `index build` takes a sampled corpus (R2MED's demo files) without
// --allow-missing-docs, where it refused it for judgments it never uses;
// a run over that index still checks them.
func TestIndexBuildSampledCorpus(t *testing.T) {
	dir := writeR2MEDTask(t, "sampled", `{"id":"d1","text":"aspirin for headache pain"}
{"id":"d2","text":"fever in children"}
`, `{"id":"q1","text":"aspirin headache"}`+"\n", `{"q_id":"q1","p_id":"d1","score":1}
{"q_id":"q1","p_id":"d9","score":1}
`)
	idx := filepath.Join(t.TempDir(), "sampled.idx")
	if _, stderr, code := r2med(t, "", "index", "build", "--data", dir, "--out", idx, "--quiet"); code != 0 {
		t.Fatalf("index build of a sampled corpus: exit %d: %s", code, stderr)
	}
	_, stderr, code := r2med(t, "", "run", "--index", idx, "--data", dir, "--out", filepath.Join(t.TempDir(), "run"), "--quiet")
	if code == 0 || !strings.Contains(stderr, "--allow-missing-docs") {
		t.Errorf("run over the index of a sampled corpus without --allow-missing-docs: exit %d, stderr %q", code, stderr)
	}
}
