package audit

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/r2med/r2med/audit/minhash"
	"github.com/r2med/r2med/demo"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/synth"
)

// The expected NFCorpus findings come from a separate brute-force pass in
// Python (unicodedata NFKC → casefold → NFKC, letters/marks/numbers kept,
// apostrophes deleted; exact = equal without spaces; Jaccard over word
// sets, every pair of documents compared).
func TestDatasetNFCorpus(t *testing.T) {
	task := loadNFCorpus(t, "test")
	r, err := Dataset(task, DatasetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s := r.Summary
	if s.DuplicateDocGroups != 39 || s.DuplicateDocs != 78 {
		t.Errorf("%d duplicate groups of %d documents; NFCorpus has 39 pairs", s.DuplicateDocGroups, s.DuplicateDocs)
	}
	for _, want := range [][]string{{"MED-118", "MED-2651"}, {"MED-719", "MED-724"}, {"MED-3830", "MED-3834"}, {"MED-4988", "MED-4990"}} {
		if !slices.ContainsFunc(r.DuplicateDocs, func(g Group) bool { return slices.Equal(g.IDs, want) }) {
			t.Errorf("duplicate group %v not reported", want)
		}
	}
	if len(r.NearDuplicateDocs) != 1 || r.NearDuplicateDocs[0].A != "MED-3885" || r.NearDuplicateDocs[0].B != "MED-3886" || fmt.Sprintf("%.4f", r.NearDuplicateDocs[0].Similarity) != "0.9831" {
		t.Errorf("near-duplicate documents %+v, want MED-3885/MED-3886 at 0.9831", r.NearDuplicateDocs)
	}
	// 209 splits over the exact pairs, one over the near pair: PLAIN-2450
	// judges MED-3886 and not MED-3885 (qrels/test.tsv).
	if s.RelevanceSplits != 210 {
		t.Errorf("%d relevance splits, want 210", s.RelevanceSplits)
	}
	if !slices.ContainsFunc(r.RelevanceSplits, func(x Split) bool {
		return x == Split{Query: "PLAIN-2450", Relevant: "MED-3886", Grade: 1, Copy: "MED-3885", Match: MatchNear, Similarity: x.Similarity}
	}) {
		t.Error("the near pair's split for PLAIN-2450 is missing")
	}
	// PLAIN-2630 judges MED-2651 relevant (2) and leaves its copy MED-118
	// unjudged.
	i := slices.IndexFunc(r.RelevanceSplits, func(x Split) bool { return x.Query == "PLAIN-2630" && x.Relevant == "MED-2651" })
	if i < 0 || r.RelevanceSplits[i].Copy != "MED-118" || r.RelevanceSplits[i].Grade != 2 || r.RelevanceSplits[i].CopyGrade != nil || r.RelevanceSplits[i].Match != MatchExact {
		t.Errorf("split of MED-2651/MED-118 for PLAIN-2630 missing or wrong: %+v", r.RelevanceSplits[max(i, 0)])
	}
	if s.DuplicateQueryGroups != 0 || s.NearDuplicateQueries != 0 || s.EmptyDocs != 0 || s.ShortDocs != 0 {
		t.Errorf("summary %+v", s)
	}
	if s.ShortQueries != 167 || s.IDCollisions != 0 || s.MissingDocs != 0 || s.NoPositive != 0 {
		t.Errorf("short queries %d (want 167: half of NFCorpus's test queries are one or two words), collisions %d, missing %d, no positive %d", s.ShortQueries, s.IDCollisions, s.MissingDocs, s.NoPositive)
	}
	if s.SharedPositives != 147 || r.SharedPositives[0].Doc != "MED-5337" || len(r.SharedPositives[0].Queries) != 37 {
		t.Errorf("%d shared positives, first %s for %d queries; want 147, MED-5337 for 37", s.SharedPositives, r.SharedPositives[0].Doc, len(r.SharedPositives[0].Queries))
	}
	if r.Judgments != 12334 || r.Queries != 323 {
		t.Errorf("%d judgments, %d queries", r.Judgments, r.Queries)
	}
}

// The demo task is clean: no duplicates, no short or empty texts.
func TestDatasetDemo(t *testing.T) {
	task, err := demo.Load()
	if err != nil {
		t.Fatal(err)
	}
	r, err := Dataset(task, DatasetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Summary != (DatasetSummary{}) {
		t.Errorf("demo task findings %+v", r.Summary)
	}
	if r.Documents != len(task.Corpus) || r.Queries != 15 {
		t.Errorf("counts %d %d", r.Documents, r.Queries)
	}
}

// A synthetic task with planted problems: every kind is found, and
// nothing else (the generator's own texts have no duplicates).
func TestDatasetSynthetic(t *testing.T) {
	for _, spec := range synth.R2MEDSpecs() {
		task := synth.Generate(spec.Scale(0.02), 3)
		clean, err := Dataset(task, DatasetOptions{SharedPositives: 1000})
		if err != nil {
			t.Fatal(err)
		}
		if clean.Summary != (DatasetSummary{}) {
			t.Errorf("%s: synthetic task findings %+v", spec.Name, clean.Summary)
		}
	}
	task := synth.Generate(synth.R2MEDSpecs()[0].Scale(0.05), 3)
	q0 := task.Queries[0].ID
	var pos, neg string
	for _, d := range task.Corpus {
		if task.Qrels[q0][d.ID] > 0 && pos == "" {
			pos = d.ID
		}
	}
	textOf := map[string]string{}
	for _, d := range task.Corpus {
		textOf[d.ID] = d.Text
	}
	neg = task.Corpus[len(task.Corpus)-1].ID
	words := strings.Fields(textOf[neg])
	words[3] = "planted"
	task.Corpus = append(task.Corpus,
		ir.Doc{ID: "copy-of-" + pos, Text: strings.ToUpper(textOf[pos])}, // exact copy of a positive, unjudged
		ir.Doc{ID: "near-" + neg, Text: strings.Join(words, " ") + " extra"},
		ir.Doc{ID: "empty", Text: "  ..  "},
		ir.Doc{ID: "short", Text: "two words"},
		ir.Doc{ID: q0, Text: "a document that shares its id with a query"},
	)
	task.Queries = append(task.Queries, ir.Query{ID: "dup-q", Text: task.Queries[0].Text + "!"})
	task.Qrels["dup-q"] = map[string]int{"gone": 1}
	r, err := Dataset(task, DatasetOptions{SharedPositives: 1000})
	if err != nil {
		t.Fatal(err)
	}
	check := func(what string, got, want any) {
		t.Helper()
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: %v, want %v", what, got, want)
		}
	}
	check("duplicate documents", r.DuplicateDocs, []Group{{IDs: []string{pos, "copy-of-" + pos}}})
	if len(r.NearDuplicateDocs) != 1 || r.NearDuplicateDocs[0].A != neg || r.NearDuplicateDocs[0].B != "near-"+neg {
		t.Errorf("near duplicates %+v", r.NearDuplicateDocs)
	}
	check("splits", len(r.RelevanceSplits), 1)
	if len(r.RelevanceSplits) == 1 {
		sp := r.RelevanceSplits[0]
		check("split", []any{sp.Query, sp.Relevant, sp.Copy, sp.CopyGrade == nil, sp.Match}, []any{q0, pos, "copy-of-" + pos, true, MatchExact})
	}
	check("duplicate queries", r.DuplicateQueries, []Group{{IDs: []string{q0, "dup-q"}}})
	check("empty", r.EmptyDocs, []string{"empty"})
	check("short", len(r.ShortDocs), 1)
	check("collisions", r.IDCollisions, []string{q0})
	check("missing", r.MissingDocs, []Judgment{{Query: "dup-q", Doc: "gone", Grade: 1}})
	check("no positive", r.NoPositive, []string{})
	shared, _ := Dataset(task, DatasetOptions{SharedPositives: 1})
	if shared.Summary.SharedPositives == 0 || len(shared.SharedPositives[0].Queries) < len(shared.SharedPositives[len(shared.SharedPositives)-1].Queries) {
		t.Errorf("shared positives not listed or not sorted by count: %d", shared.Summary.SharedPositives)
	}
}

// TestAuditsSayTheyAreApproximate: both audits say that near-duplicates
// are LSH candidates (plan, seed, the chance of missing a pair at the
// threshold) verified by an exact Jaccard, and print the threshold as it
// was set. The dataset audit said nothing of LSH (its audit file recorded
// no plan or seed), and both printed --threshold 0.855 as 0.86.
func TestAuditsSayTheyAreApproximate(t *testing.T) {
	task := &ir.Task{Name: "t", Corpus: []ir.Doc{{ID: "d1", Text: "a b c"}}, Queries: []ir.Query{{ID: "q1", Text: "x y z"}}, Qrels: ir.Qrels{"q1": {"d1": 1}}}
	sp := minhash.Spec{Threshold: 0.855, Seed: 3}
	r, err := Dataset(task, DatasetOptions{MinHash: sp})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := minhash.Plan(0.855)
	if st := r.Settings; st.Bands != b || st.Rows == 0 || st.Seed != 3 || st.RecallAtThreshold < minhash.PlanRecall {
		t.Errorf("dataset settings %+v: want the LSH plan, seed and recall at the threshold", st)
	}
	var out strings.Builder
	if err := r.WriteTable(&out, 0); err != nil {
		t.Fatal(err)
	}
	lr := &LeakageReport{Settings: LeakageSettings{Threshold: 0.855, Shingle: 1, Bands: 16, Rows: 8, Seed: 3, RecallAtThreshold: minhash.Recall(0.855, 16, 8), WordEdits: minhash.Edits{Off: true}}}
	if err := lr.WriteTable(&out); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, l := range strings.Split(text, "\n") {
		if n := utf8.RuneCountInString(l); n > 120 {
			t.Errorf("a line of %d columns, want at most 120: %s", n, l)
		}
	}
	text = strings.Join(strings.Fields(text), " ") // lines wrap anywhere
	for _, want := range []string{"Jaccard ≥ 0.855 over", "MinHash LSH, 16 bands × 8 rows, seed 3", "missed with 0.005", "similarities are exact"} {
		if n := strings.Count(text, want); n != 2 {
			t.Errorf("%q in %d of the two tables, want both:\n%s", want, n, text)
		}
	}
	page, err := (&File{Datasets: []*DatasetReport{r}, Leakage: lr}).Section("x")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(page), "missed with 0.005"); n != 2 || !strings.Contains(string(page), "Jaccard ≥ 0.855") {
		t.Errorf("the page says the miss probability %d times (want 2) or misprints the threshold:\n%s", n, page)
	}
}

// TestDatasetListsAreArrays: every list of the audit file is a JSON
// array, [] when nothing was found; a clean task wrote null for seven of
// them and [] for the others.
func TestDatasetListsAreArrays(t *testing.T) {
	task := &ir.Task{Name: "t", Corpus: []ir.Doc{{ID: "d1", Text: "alpha beta gamma"}}, Queries: []ir.Query{{ID: "q1", Text: "x y z"}}, Qrels: ir.Qrels{"q1": {"d1": 1}}}
	r, err := Dataset(task, DatasetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	json.Unmarshal(b, &m)
	for k, v := range m {
		if string(v) == "null" {
			t.Errorf("%s: null, want []", k)
		}
	}
}

// TestDatasetPageHasTheTableNumbers: the page gives the numbers the table
// gives: judgments, the documents in duplicate groups and the rows the
// loader left out, which only the table showed.
func TestDatasetPageHasTheTableNumbers(t *testing.T) {
	task := &ir.Task{Name: "t", EmptyDocs: 2, EmptyQueries: 1,
		Corpus:  []ir.Doc{{ID: "d1", Text: "alpha beta"}, {ID: "d2", Text: "Alpha, beta!"}, {ID: "d3", Text: "ALPHA BETA"}},
		Queries: []ir.Query{{ID: "q1", Text: "x y z"}}, Qrels: ir.Qrels{"q1": {"d1": 1, "d2": 0}}}
	r, err := Dataset(task, DatasetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var table strings.Builder
	r.WriteTable(&table, 0)
	page, err := (&File{Datasets: []*DatasetReport{r}}).Section("x")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ table, page string }{
		{"2 judgments", `<td class="num">2</td><td class="num">1 (3)</td>`},
		{"documents in them 3", `<td class="num">1 (3)</td>`},
		{"rows left out by the loader for an empty text 3", "Rows left out by the loader for an empty text: documents 2, queries 1."},
	} {
		if !strings.Contains(strings.Join(strings.Fields(table.String()), " "), c.table) || !strings.Contains(string(page), c.page) {
			t.Errorf("want %q in the table and %q on the page:\n%s\n%s", c.table, c.page, table.String(), page)
		}
	}
}
