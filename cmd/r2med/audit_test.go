package main

import (
	"bufio"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/r2med/r2med/audit"
	"github.com/r2med/r2med/demo"
	"github.com/r2med/r2med/results"
)

// TestAuditLeakageCLI audits a training file made of demo queries and
// documents: the JSON-lines output has the fields, the report
// file reads back, the state is gone afterwards, and r2med report shows
// the audit found in the results directory.
func TestAuditLeakageCLI(t *testing.T) {
	task, err := demo.Load()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	train := filepath.Join(dir, "train.jsonl")
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.Encode(map[string]string{"anchor": task.Queries[0].Text, "positive": "unrelated positive", "negative": "unrelated negative"})
	enc.Encode(map[string]string{"anchor": "what is the first drug for type 2 diabetes", "positive": strings.ToUpper(task.Corpus[0].Text), "negative": "x"})
	enc.Encode(map[string]string{"anchor": "<script>alert(1)</script>", "positive": "y", "negative": "z"})
	os.WriteFile(train, []byte(b.String()), 0o644)
	state := filepath.Join(dir, "state")

	matches := filepath.Join(dir, "matches.jsonl")
	_, stderr, code := r2med(t, "", "audit", "leakage", "--train", train, "--against", "demo", "--documents", "all", "--format", "jsonl", "--out", matches, "--state", state, "--quiet")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	f, err := os.Open(matches)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []map[string]any
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, m)
	}
	if len(lines) != 2 {
		t.Fatalf("%d matches, want 2: %v", len(lines), lines)
	}
	want := []map[string]any{
		{"benchmark_kind": "query", "benchmark_id": task.Queries[0].ID, "train_file": train, "train_line": 1.0, "match": "exact", "measure": "exact", "similarity": 1.0},
		{"benchmark_kind": "document", "benchmark_id": task.Corpus[0].ID, "train_file": train, "train_line": 2.0, "match": "exact", "measure": "exact", "similarity": 1.0},
	}
	for i, w := range want {
		for k, v := range w {
			if lines[i][k] != v {
				t.Errorf("match %d: %s = %v, want %v", i+1, k, lines[i][k], v)
			}
		}
	}
	if left, _ := filepath.Glob(filepath.Join(state, "*")); len(left) != 0 {
		t.Errorf("state left behind: %q", left)
	}

	// The audit file in a results directory appears in the report.
	out := filepath.Join(dir, "out")
	if _, stderr, code := r2med(t, "", "run", "--task", "demo", "--quiet", "--out", filepath.Join(out, "bm25")); code != 0 {
		t.Fatal(stderr)
	}
	auditFile := filepath.Join(out, "audit.json")
	if _, stderr, code := r2med(t, "", "audit", "leakage", "--train", train, "--against", "demo", "--format", "json", "--out", auditFile, "--state", state, "--quiet"); code != 0 {
		t.Fatal(stderr)
	}
	af, err := audit.ReadFile(auditFile)
	if err != nil {
		t.Fatal(err)
	}
	if tl := af.Leakage.Tasks[0]; tl.Task != "demo" || tl.Queries.Contaminated != 1 || tl.Queries.Exact != 1 || tl.Documents.Contaminated != 1 {
		t.Errorf("audit file: %+v", tl)
	}
	if af.Version != results.Version() || af.Version == "" {
		t.Errorf("audit file version %q, want %q", af.Version, results.Version())
	}
	if _, stderr, code := r2med(t, "", "audit", "dataset", "--task", "demo", "--format", "json", "--out", filepath.Join(out, "demo.audit.json")); code != 0 {
		t.Fatal(stderr)
	}
	page := filepath.Join(dir, "report.html")
	if _, stderr, code := r2med(t, "", "report", "--results", out, "--out", page); code != 0 {
		t.Fatal(stderr)
	}
	html, _ := os.ReadFile(page)
	for _, want := range []string{"Leakage audit", "Dataset audit", "demo: examples", `id="audit-audit.json"`, `id="audit-demo.audit.json"`} {
		if !strings.Contains(string(html), want) {
			t.Errorf("report lacks %q", want)
		}
	}

	// Bad input names the file and line.
	bad := filepath.Join(dir, "bad.jsonl")
	os.WriteFile(bad, []byte(`{"query":"q","pos":["p"]}`+"\n"+`{"query":"q","pos":"p","neg":["n",1]}`+"\n"), 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--train", bad, "--against", "demo"}, bad + `:2: field "neg": element 1 is a number; want a list of strings`},
		{[]string{"--against", "demo"}, "no training files"},
		{[]string{"--train", train}, "no benchmark"},
		{[]string{"--train", train, "--against", "demo", "--format", "xml"}, `unknown --format "xml"`},
		{[]string{"--train", train, "--against", "demo", "--documents", "some"}, "unknown document scope"},
		{[]string{"--train", train, "--against", "demo", "--base-url", "http://x"}, "add --dense-model"},
		{[]string{"--train", train, "--against", "nosuchtask"}, "nosuchtask"},
		{[]string{"--train", train, "--against", "demo,demo"}, "twice"},
	} {
		_, stderr, code := r2med(t, "", append([]string{"audit", "leakage", "--quiet", "--state", state}, c.args...)...)
		if code == 0 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, %q; want %q", c.args, code, stderr, c.want)
		}
	}
}

// TestAuditDatasetCLI reports NFCorpus's duplicate documents.
func TestAuditDatasetCLI(t *testing.T) {
	needShared(t)
	stdout, stderr, code := r2med(t, "", "audit", "dataset", "--data", filepath.Join(shared, "nfcorpus"), "--split", "test", "--limit", "2")
	if code != 0 {
		t.Fatal(stderr)
	}
	for _, want := range []string{"duplicate document groups                     39", "MED-118 = MED-2651", "MED-3885 ≈ MED-3886 (0.983)", "… and 37 more"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
}

// TestNegativesMineCLI mines the demo task with BM25 and a loopback TEI
// judge that scores documents mentioning the query's diagnosis high: the
// judge band drops them.
func TestNegativesMineCLI(t *testing.T) {
	task, err := demo.Load()
	if err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		var req struct {
			Query string   `json:"query"`
			Texts []string `json:"texts"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		type is struct {
			Index int     `json:"index"`
			Score float64 `json:"score"`
		}
		var out []is
		for i, txt := range req.Texts {
			s := 0.1
			if strings.Contains(strings.ToLower(txt), "pheochromocytoma") {
				s = 0.99
			}
			out = append(out, is{i, s})
		}
		json.NewEncoder(w).Encode(out)
	}))
	defer srv.Close()
	dir := t.TempDir()
	out := filepath.Join(dir, "negs.jsonl")
	_, stderr, code := r2med(t, "", "negatives", "mine", "--task", "demo", "--from", "1", "--to", "40", "--count", "4", "--judge", "tei", "--judge-url", srv.URL, "--judge-max", "0.5", "--out", out)
	if code != 0 {
		t.Fatal(stderr)
	}
	if calls.Load() == 0 || !strings.Contains(stderr, "by the judge") {
		t.Fatalf("judge calls %d; %s", calls.Load(), stderr)
	}
	b, _ := os.ReadFile(out)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != len(task.Queries) {
		t.Fatalf("%d lines for %d queries", len(lines), len(task.Queries))
	}
	for i, l := range lines {
		var rec struct {
			Query string   `json:"query"`
			Pos   []string `json:"pos"`
			Neg   []string `json:"neg"`
		}
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Fatal(err)
		}
		if rec.Query != task.Queries[i].Text || len(rec.Neg) != 4 || len(rec.Pos) == 0 {
			t.Errorf("line %d: %d pos, %d neg", i+1, len(rec.Pos), len(rec.Neg))
		}
		for _, n := range rec.Neg {
			if strings.Contains(strings.ToLower(n), "pheochromocytoma") || slices.Contains(rec.Pos, n) {
				t.Errorf("line %d: a judged-relevant document or a positive among the negatives", i+1)
			}
		}
	}
	// Triplets from a training file, its own texts as the corpus.
	train := filepath.Join(dir, "pairs.jsonl")
	var sb strings.Builder
	for i, q := range task.Queries {
		json.NewEncoder(&sb).Encode(map[string]string{"query": q.Text, "positive": task.Corpus[i].Text})
	}
	os.WriteFile(train, []byte(sb.String()), 0o644)
	trip := filepath.Join(dir, "triplets.jsonl")
	if _, stderr, code := r2med(t, "", "negatives", "mine", "--train", train, "--from", "1", "--to", "10", "--count", "2", "--format", "triplet", "--out", trip); code != 0 {
		t.Fatal(stderr)
	}
	b, _ = os.ReadFile(trip)
	if n := strings.Count(string(b), "\n"); n != 2*len(task.Queries) || !strings.HasPrefix(string(b), `{"anchor":`) {
		t.Errorf("%d triplet lines", n)
	}
	// Any retriever or fusion: two BM25 schemes fused by RRF from a
	// pipeline file.
	pipe := filepath.Join(dir, "fused.yaml")
	os.WriteFile(pipe, []byte("retrieve:\n  - bm25: {scheme: r2med}\n  - bm25: {scheme: lucene}\nfuse: {method: rrf, k: 60}\n"), 0o644)
	fusedOut := filepath.Join(dir, "fused.jsonl")
	if _, stderr, code := r2med(t, "", "negatives", "mine", "--task", "demo", "--pipeline", pipe, "--from", "1", "--to", "30", "--count", "3", "--out", fusedOut); code != 0 {
		t.Fatal(stderr)
	}
	if b, _ := os.ReadFile(fusedOut); strings.Count(string(b), "\n") != len(task.Queries) {
		t.Errorf("fused mining: %d lines", strings.Count(string(b), "\n"))
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--task", "demo"}, "--out FILE is required"},
		{[]string{"--task", "demo", "--out", out, "--format", "csv"}, `unknown --format "csv"`},
		{[]string{"--task", "demo", "--out", out, "--judge-max", "0.5"}, "needs a judge"},
		{[]string{"--task", "demo", "--out", out, "--corpus", train}, "--corpus goes with --train"},
		{[]string{"--train", train, "--task", "demo", "--out", out}, "not both"},
		{[]string{"--task", "demo", "--out", out, "--from", "20", "--to", "5"}, "rank window"},
		{[]string{"--task", "demo", "--out", out, "--rerank", "tei"}, "--rerank sets a stage mining does not run"},
		{[]string{"--task", "demo", "--out", out, "--retriever", "nosuch"}, "nosuch"},
	} {
		_, stderr, code := r2med(t, "", append([]string{"negatives", "mine"}, c.args...)...)
		if code == 0 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, %q; want %q", c.args, code, stderr, c.want)
		}
	}
}

// A short query with one content word replaced is found by word edits (in
// seven words), with its measure; --word-edits off and bad values.
func TestAuditLeakageWordEditsCLI(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "task")
	os.MkdirAll(filepath.Join(data, "qrels"), 0o755)
	os.WriteFile(filepath.Join(data, "corpus.jsonl"), []byte(`{"_id":"d1","text":"Green tea and blood pressure: a trial."}`+"\n"), 0o644)
	os.WriteFile(filepath.Join(data, "queries.jsonl"), []byte(`{"_id":"q1","text":"Does green tea lower blood pressure quickly?"}`+"\n"), 0o644)
	os.WriteFile(filepath.Join(data, "qrels", "test.tsv"), []byte("query-id\tcorpus-id\tscore\nq1\td1\t1\n"), 0o644)
	train := filepath.Join(dir, "train.txt")
	os.WriteFile(train, []byte("an unrelated line\nDoes BLACK tea lower blood pressure quickly\n"), 0o644)
	run := func(extra ...string) (string, string, int) {
		return r2med(t, "", append([]string{"audit", "leakage", "--train", train, "--against", data, "--format", "jsonl", "--state", filepath.Join(dir, "state"), "--quiet"}, extra...)...)
	}
	stdout, stderr, code := run()
	if code != 0 {
		t.Fatal(stderr)
	}
	var m audit.Match
	words := 7.0 // the similarity as computed, not as a constant expression
	if err := json.Unmarshal([]byte(stdout), &m); err != nil {
		t.Fatalf("%v: %q", err, stdout)
	}
	if m.BenchmarkID != "q1" || m.TrainLine != 2 || m.Match != "near" || m.Measure != "word_edits" || m.Similarity != 1-1/words {
		t.Errorf("match %+v", m)
	}
	if stdout, stderr, code := run("--word-edits", "off"); code != 0 || stdout != "" {
		t.Errorf("--word-edits off: exit %d, %q %s", code, stdout, stderr)
	}
	if stdout, _, _ := run("--word-edits", "5,8,32"); stdout != "" {
		t.Errorf("--word-edits 5,8,32 (a content word replaced counts from 8 words): %q", stdout)
	}
	if _, stderr, code := run("--word-edits", "5,7"); code == 0 || !strings.Contains(stderr, "--word-edits") || !strings.Contains(stderr, "MIN,CONTENT,MAX") {
		t.Errorf("--word-edits 5,7: exit %d, %s", code, stderr)
	}
	stdout, _, _ = run("--format", "table")
	if !strings.Contains(stdout, "or a text of 5–32 words with one word replaced, dropped or added") || !strings.Contains(stdout, "near word_edits 0.857") {
		t.Errorf("table:\n%s", stdout)
	}
}

// TestAuditRefusesZeroSettings: a setting given as 0 (or less), which the
// packages' zero values read as "the default", is refused naming the flag,
// where --threshold 0 ran at 0.8, --shingle 0 over single words, --examples
// 0 showed 5 examples, --dense-threshold 0 matched at 0.95, --short-words 0 counted texts under 3 words and
// negatives mine --count 0 kept 15, --from 0 --to 0 the window 11–210;
// and a similarity above 1.
func TestAuditRefusesZeroSettings(t *testing.T) {
	needShared(t)
	dir := t.TempDir()
	train := filepath.Join(dir, "train.txt")
	os.WriteFile(train, []byte("a training text\n"), 0o644)
	data := filepath.Join(shared, "nfcorpus")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"audit", "leakage", "--state", dir, "--train", train, "--against", data, "--threshold", "0"}, "--threshold 0"},
		{[]string{"audit", "leakage", "--state", dir, "--train", train, "--against", data, "--shingle", "0"}, "--shingle 0"},
		{[]string{"audit", "leakage", "--state", dir, "--train", train, "--against", data, "--examples", "0"}, "--examples 0"},
		{[]string{"audit", "leakage", "--state", dir, "--train", train, "--against", data, "--dense-model", "m", "--dense-threshold", "0"}, "--dense-threshold 0"},
		{[]string{"audit", "dataset", "--data", data, "--threshold", "0"}, "--threshold 0"},
		{[]string{"audit", "dataset", "--data", data, "--short-words", "0"}, "--short-words 0"},
		{[]string{"audit", "dataset", "--data", data, "--shared-positives", "-1"}, "--shared-positives -1"},
		{[]string{"negatives", "mine", "--data", data, "--out", filepath.Join(dir, "n.jsonl"), "--threshold", "0"}, "--threshold 0"},
		{[]string{"negatives", "mine", "--data", data, "--out", filepath.Join(dir, "n.jsonl"), "--count", "0"}, "--count 0"},
		{[]string{"negatives", "mine", "--data", data, "--out", filepath.Join(dir, "n.jsonl"), "--from", "0", "--to", "0"}, "--from 0"},
		// A similarity above 1 was refused by the package without the
		// flag's name (minhash: Jaccard threshold 1.5 is outside (0, 1]),
		// and --dense-threshold 1.5 ran, matching nothing.
		{[]string{"audit", "leakage", "--state", dir, "--train", train, "--against", data, "--threshold", "1.5"}, "--threshold 1.5: want a similarity in (0, 1]"},
		{[]string{"audit", "leakage", "--state", dir, "--train", train, "--against", data, "--dense-model", "m", "--dense-threshold", "1.5"}, "--dense-threshold 1.5"},
		{[]string{"audit", "dataset", "--data", data, "--threshold", "1.2"}, "--threshold 1.2"},
	} {
		_, stderr, code := r2med(t, "", c.args...)
		if code == 0 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, %q; want an error naming %q", c.args, code, stderr, c.want)
		}
	}
}
