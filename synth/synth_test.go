package synth

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/r2med/r2med/ir"
)

func TestR2MEDSpecs(t *testing.T) {
	specs := R2MEDSpecs()
	want := []string{"Biology", "Bioinformatics", "Medical-Sciences", "MedXpertQA-Exam", "MedQA-Diag", "PMC-Treatment", "PMC-Clinical", "IIYi-Clinical"}
	if len(specs) != len(want) {
		t.Fatalf("%d specs, want %d", len(specs), len(want))
	}
	docs, queries := 0, 0
	for i, s := range specs {
		if s.Name != want[i] {
			t.Errorf("spec %d is %q, want %q", i, s.Name, want[i])
		}
		if s.QueryChars <= 0 || s.DocChars <= 0 || s.PositivesPerQuery < 1 {
			t.Errorf("%s: implausible spec %+v", s.Name, s)
		}
		docs += s.Docs
		queries += s.Queries
	}
	if docs != 357080 || queries != 876 {
		t.Errorf("totals %d docs / %d queries, want 357080 / 876 (R2MED README)", docs, queries)
	}
}

// The lengths are copied from the NanoR2MED task cards; this keeps the copy
// honest. NanoR2MED keeps every query, so query counts must agree too.
func TestSpecsMatchTaskCards(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "shared", "data", "nanor2med-metadata")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("task cards not available (%v); they live in the shared data folder", err)
	}
	for _, s := range R2MEDSpecs() {
		b, err := os.ReadFile(filepath.Join(dir, "NanoR2MED"+strings.ReplaceAll(s.Name, "-", "")+".json"))
		if err != nil {
			t.Fatal(err)
		}
		var card struct {
			TaskMetadata struct {
				Counts    struct{ Queries int }
				Positives struct {
					Average float64
				} `json:"positives_per_query"`
				Text struct {
					QueryMean    float64 `json:"query_mean"`
					DocumentMean float64 `json:"document_mean"`
				} `json:"text_stats_chars"`
			} `json:"task_metadata"`
		}
		if err := json.Unmarshal(b, &card); err != nil {
			t.Fatal(err)
		}
		m := card.TaskMetadata
		if s.Queries != m.Counts.Queries {
			t.Errorf("%s: %d queries, card says %d", s.Name, s.Queries, m.Counts.Queries)
		}
		if s.QueryChars != int(math.Round(m.Text.QueryMean)) || s.DocChars != int(math.Round(m.Text.DocumentMean)) {
			t.Errorf("%s: lengths %d/%d, card says %.1f/%.1f", s.Name, s.QueryChars, s.DocChars, m.Text.QueryMean, m.Text.DocumentMean)
		}
		if math.Abs(s.PositivesPerQuery-m.Positives.Average) > 1e-6 {
			t.Errorf("%s: %.6f positives per query, card says %.6f", s.Name, s.PositivesPerQuery, m.Positives.Average)
		}
	}
}

func TestScale(t *testing.T) {
	bio := R2MEDSpecs()[0]
	s := bio.Scale(0.1)
	if s.Docs != 5736 || s.Queries != 10 {
		t.Errorf("Scale(0.1) = %d docs / %d queries, want 5736 / 10", s.Docs, s.Queries)
	}
	if s.Name != bio.Name || s.DocChars != bio.DocChars || s.QueryChars != bio.QueryChars || s.PositivesPerQuery != bio.PositivesPerQuery {
		t.Errorf("Scale changed more than the counts: %+v", s)
	}
	if z := bio.Scale(0); z.Docs != 1 || z.Queries != 1 {
		t.Errorf("Scale(0) = %d/%d, want 1/1", z.Docs, z.Queries)
	}
}

// checkTask verifies the invariants every generated task must satisfy.
func checkTask(t *testing.T, spec TaskSpec, task *ir.Task) {
	t.Helper()
	if task.Name != spec.Name || task.Layout != ir.LayoutR2MED {
		t.Errorf("name/layout %q/%q", task.Name, task.Layout)
	}
	if len(task.Corpus) != spec.Docs || len(task.Queries) != spec.Queries {
		t.Fatalf("%d docs / %d queries, want %d / %d", len(task.Corpus), len(task.Queries), spec.Docs, spec.Queries)
	}
	docs := make(map[string]bool, len(task.Corpus))
	for _, d := range task.Corpus {
		if docs[d.ID] {
			t.Fatalf("duplicate doc id %q", d.ID)
		}
		docs[d.ID] = true
		checkText(t, d.ID, d.Text)
	}
	queries := make(map[string]bool, len(task.Queries))
	for _, q := range task.Queries {
		if queries[q.ID] {
			t.Fatalf("duplicate query id %q", q.ID)
		}
		queries[q.ID] = true
		checkText(t, q.ID, q.Text)
		if spec.Docs >= spec.Queries && len(task.Qrels[q.ID]) == 0 {
			t.Errorf("query %s has no relevant document", q.ID)
		}
	}
	for qid, m := range task.Qrels {
		if !queries[qid] {
			t.Errorf("qrels name unknown query %q", qid)
		}
		for did, g := range m {
			if !docs[did] {
				t.Errorf("qrels %s name unknown doc %q", qid, did)
			}
			if g != 1 {
				t.Errorf("qrels %s %s grade %d, want 1", qid, did, g)
			}
		}
	}
}

func checkText(t *testing.T, id, s string) {
	t.Helper()
	if s == "" || strings.TrimSpace(s) != s || !strings.HasSuffix(s, ".") || strings.Contains(s, "  ") {
		t.Fatalf("%s: malformed text %.80q…", id, s)
	}
	if c := s[0]; !('A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
		t.Fatalf("%s: text does not start a sentence: %.40q", id, s)
	}
}

func TestGenerateShapes(t *testing.T) {
	for _, spec := range R2MEDSpecs() {
		spec := spec.Scale(0.02)
		t.Run(spec.Name, func(t *testing.T) {
			checkTask(t, spec, Generate(spec, 7))
		})
	}
}

func TestGenerateLengths(t *testing.T) {
	for _, spec := range R2MEDSpecs() {
		spec.Docs, spec.Queries = 2000, 400
		t.Run(spec.Name, func(t *testing.T) {
			task := Generate(spec, 3)
			var dl, ql []float64
			for _, d := range task.Corpus {
				dl = append(dl, float64(len(d.Text)))
			}
			for _, q := range task.Queries {
				ql = append(ql, float64(len(q.Text)))
			}
			checkLengths(t, "documents", dl, float64(spec.DocChars), 0.04)
			checkLengths(t, "queries", ql, float64(spec.QueryChars), 0.08)
		})
	}
}

// checkLengths wants the mean near target and a real spread: a log-normal
// with σ 0.4–0.5 has a coefficient of variation of about 0.4–0.55.
func checkLengths(t *testing.T, what string, xs []float64, target, tol float64) {
	t.Helper()
	var sum, sq float64
	for _, x := range xs {
		sum += x
		sq += x * x
	}
	mean := sum / float64(len(xs))
	cv := math.Sqrt(sq/float64(len(xs))-mean*mean) / mean
	if math.Abs(mean/target-1) > tol {
		t.Errorf("%s: mean length %.1f, target %.0f", what, mean, target)
	}
	if cv < 0.3 || cv > 0.7 {
		t.Errorf("%s: coefficient of variation %.2f, want a log-normal spread", what, cv)
	}
}

func TestPositivesPerQuery(t *testing.T) {
	spec := TaskSpec{Name: "ppq", Docs: 40000, Queries: 2000, QueryChars: 60, DocChars: 40, PositivesPerQuery: 3.63}
	task := Generate(spec, 1)
	checkTask(t, spec, task)
	got := float64(task.Qrels.Len()) / float64(spec.Queries)
	if math.Abs(got/spec.PositivesPerQuery-1) > 0.05 {
		t.Errorf("%.3f positives per query, want %.2f", got, spec.PositivesPerQuery)
	}
}

func TestSmallCorpora(t *testing.T) {
	spec := TaskSpec{Name: "tiny", Docs: 3, Queries: 5, QueryChars: 100, DocChars: 100, PositivesPerQuery: 2}
	task := Generate(spec, 1)
	checkTask(t, spec, task)
	if n := task.Qrels.Len(); n != 3 {
		t.Errorf("%d judgments for 3 documents, want each document used once", n)
	}
	for _, q := range []string{"q1", "q2", "q3"} {
		if len(task.Qrels[q]) != 1 {
			t.Errorf("%s: %d relevant, want 1 (first positives go to queries in order)", q, len(task.Qrels[q]))
		}
	}
	empty := Generate(TaskSpec{Name: "empty", Queries: 2, QueryChars: 50}, 1)
	if len(empty.Corpus) != 0 || len(empty.Queries) != 2 || empty.Qrels.Len() != 0 {
		t.Errorf("empty corpus: %d docs, %d queries, %d judgments", len(empty.Corpus), len(empty.Queries), empty.Qrels.Len())
	}
}

func writeHash(t *testing.T, task *ir.Task) string {
	t.Helper()
	dir := t.TempDir()
	if err := WriteR2MED(task, dir); err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	for _, f := range []string{"corpus.jsonl", "query.jsonl", "qrels.jsonl"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func TestDeterministic(t *testing.T) {
	spec := R2MEDSpecs()[6].Scale(0.01) // PMC-Clinical: long docs, several chunks
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	one := writeHash(t, Generate(spec, 42))
	runtime.GOMAXPROCS(8)
	eight := writeHash(t, Generate(spec, 42))
	if one != eight {
		t.Fatalf("output depends on GOMAXPROCS: %s vs %s", one, eight)
	}
	if other := writeHash(t, Generate(spec, 43)); other == one {
		t.Error("seeds 42 and 43 gave the same output")
	}
	renamed := spec
	renamed.Name = "Other"
	a, b := Generate(spec, 42), Generate(renamed, 42)
	if a.Corpus[0].Text == b.Corpus[0].Text {
		t.Error("two tasks with the same seed share their text")
	}
}

// TestGolden pins the bytes of a small task so that a change to the
// generator, or a platform that computes differently, is noticed: benchmark
// numbers are only comparable across versions when the corpus is the same.
// Update the hash only for an intended change to the output.
func TestGolden(t *testing.T) {
	spec := TaskSpec{Name: "golden", Docs: 600, Queries: 20, QueryChars: 300, DocChars: 500, PositivesPerQuery: 2.5}
	const want = "259558c985e10763c69acfd31b652401d6c056ec7d0d6240ca2d10de2580ae8b"
	if got := writeHash(t, Generate(spec, 1)); got != want {
		t.Errorf("output hash %s, want %s", got, want)
	}
}

func TestVocabulary(t *testing.T) {
	v := getVocab()
	if v.size() != vocabSize {
		t.Fatalf("%d words, want %d", v.size(), vocabSize)
	}
	seen := make(map[string]bool, v.size())
	var hyphen, dotted, upper int
	for i := 0; i < v.size(); i++ {
		w := string(v.word(int32(i)))
		if w == "" || strings.ContainsAny(w, " \t\n\"\\") || seen[w] {
			t.Fatalf("word %d %q is empty, has blanks or repeats", i, w)
		}
		seen[w] = true
		switch {
		case strings.Contains(w, "-"):
			hyphen++
		case strings.Contains(w, "."):
			dotted++
		case strings.ToUpper(w) == w:
			upper++
		}
	}
	if hyphen < 1000 || dotted < 10 || upper < 500 {
		t.Errorf("%d hyphenated, %d dotted, %d all-caps forms: too few to exercise an analyzer", hyphen, dotted, upper)
	}
}

// TestZipf checks the sampler against its law: rank r is drawn with
// probability 1/((r+1)·H), H the harmonic number of the vocabulary size.
func TestZipf(t *testing.T) {
	v := getVocab()
	r := derive(9, 9)
	const n = 2_000_000
	counts := make([]int, v.size())
	for i := 0; i < n; i++ {
		counts[v.sample(&r)]++
	}
	var h float64
	for i := 1; i <= v.size(); i++ {
		h += 1 / float64(i)
	}
	for _, rank := range []int{0, 1, 9, 99, 999} {
		want := n / (float64(rank+1) * h)
		if got := float64(counts[rank]); math.Abs(got-want) > 5*math.Sqrt(want) {
			t.Errorf("rank %d drawn %v times, want %.0f", rank, got, want)
		}
	}
	tail := 0
	for _, c := range counts[headRanks:] {
		tail += c
	}
	var wantTail float64
	for i := headRanks + 1; i <= v.size(); i++ {
		wantTail += n / (float64(i) * h)
	}
	if math.Abs(float64(tail)-wantTail) > 5*math.Sqrt(wantTail) {
		t.Errorf("tail drawn %d times, want %.0f", tail, wantTail)
	}
}

// TestTokenVariety looks for the token shapes the generator promises to
// give analyzers, and for a realistic number of distinct forms.
func TestTokenVariety(t *testing.T) {
	task := Generate(R2MEDSpecs()[0].Scale(0.3), 5)
	var all strings.Builder
	forms := map[string]bool{}
	for _, d := range task.Corpus {
		all.WriteString(d.Text)
		all.WriteByte('\n')
		for _, w := range strings.Fields(d.Text) {
			forms[strings.ToLower(strings.TrimRight(w, ",."))] = true
		}
	}
	text := all.String()
	for name, re := range map[string]string{
		"acronym with number": `\b[A-Z]{2,4}-\d+\b`,
		"prefixed compound":   `\b(anti|non|post|pre|hyper|hypo)-[a-z]+`,
		"dotted abbreviation": `\b[a-z]\.[a-z]\.`,
		"decimal":             `\b\d+\.\d\b`,
		"percentage":          `\b\d+%`,
		"dose":                `\b\d+ (mg|mL|mmol/L)\b`,
		"comma":               `[a-z],`,
		"sentence break":      `[a-z0-9]\. [A-Z0-9]`,
	} {
		if !regexp.MustCompile(re).MatchString(text) {
			t.Errorf("no %s (%s) in the corpus", name, re)
		}
	}
	if len(forms) < 50_000 || len(forms) > 200_000 {
		t.Errorf("%d distinct word forms, want 50k–200k", len(forms))
	}
}

// TestLexicalDifficulty runs BM25 over a mid-sized task: relevance must be
// visible to lexical matching, but only in part, as on R2MED.
func TestLexicalDifficulty(t *testing.T) {
	spec := R2MEDSpecs()[0]
	spec.Docs, spec.Queries = 3000, 80
	ndcg := bm25NDCG10(Generate(spec, 11))
	if ndcg < 0.1 || ndcg > 0.6 {
		t.Errorf("BM25 nDCG@10 = %.3f, want 0.1–0.6", ndcg)
	}
	t.Logf("BM25 nDCG@10 = %.3f", ndcg)
}

func TestWriteR2MED(t *testing.T) {
	task := &ir.Task{
		Corpus: []ir.Doc{
			{ID: "a/1", Text: "quote \" backslash \\ tab\t newline\n nul\x00 <b>&amp;</b>"},
			{ID: "é", Text: "naïve café – 10 µg ✓ \u2028 line sep"},
			{ID: "bad", Text: "invalid \xff byte"},
		},
		Queries: []ir.Query{
			{ID: "q2", Text: "second", Extra: map[string]json.RawMessage{
				"answer": json.RawMessage(`"x"`), "doc_id": json.RawMessage(`["a/1","é"]`), "id": json.RawMessage(`"shadow"`),
			}},
			{ID: "q1", Text: "first"},
		},
		Qrels: ir.Qrels{},
	}
	task.Qrels.Add("q2", "é", 2)
	task.Qrels.Add("q2", "a/1", 1)
	task.Qrels.Add("q1", "bad", 0)
	task.Qrels.Add("q9", "a/1", 1) // judged but not listed: written last
	dir := t.TempDir()
	if err := WriteR2MED(task, dir); err != nil {
		t.Fatal(err)
	}

	lines := func(name string) []map[string]any {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		var out []map[string]any
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				t.Fatalf("%s: %v in %q", name, err, sc.Text())
			}
			out = append(out, m)
		}
		return out
	}
	corpus := lines("corpus.jsonl")
	for i, d := range task.Corpus {
		want := d.Text
		if d.ID == "bad" {
			want = "invalid \ufffd byte"
		}
		if corpus[i]["id"] != d.ID || corpus[i]["text"] != want {
			t.Errorf("corpus line %d = %v, want %q %q", i, corpus[i], d.ID, want)
		}
	}
	queries := lines("query.jsonl")
	if len(queries) != 2 || queries[0]["id"] != "q2" || queries[0]["text"] != "second" || queries[0]["answer"] != "x" || queries[1]["id"] != "q1" {
		t.Errorf("queries = %v", queries)
	}
	if ids, _ := queries[0]["doc_id"].([]any); len(ids) != 2 {
		t.Errorf("extra field doc_id not kept: %v", queries[0]["doc_id"])
	}
	b, _ := os.ReadFile(filepath.Join(dir, "query.jsonl"))
	if bytes.Contains(b, []byte("shadow")) {
		t.Error("an Extra field named id was written over the real id")
	}
	var got []string
	for _, m := range lines("qrels.jsonl") {
		got = append(got, m["q_id"].(string)+" "+m["p_id"].(string)+" "+string(appendInt(nil, int(m["score"].(float64)))))
	}
	want := []string{"q2 a/1 1", "q2 é 2", "q1 bad 0", "q9 a/1 1"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("qrels order/content %q, want %q", got, want)
	}

	task.Queries[1].Extra = map[string]json.RawMessage{"broken": json.RawMessage(`{`)}
	if err := WriteR2MED(task, t.TempDir()); err == nil {
		t.Error("invalid Extra JSON was written")
	}
}
