package nano

import (
	"reflect"
	"strings"
	"testing"

	"github.com/r2med/r2med/ir"
)

// taskOf builds a task from "id|text" queries and documents and
// "qid doc grade" judgments.
func taskOf(queries, docs, qrels []string) *ir.Task {
	t := &ir.Task{Name: "Toy", Qrels: make(ir.Qrels)}
	for _, q := range queries {
		id, text, _ := strings.Cut(q, "|")
		t.Queries = append(t.Queries, ir.Query{ID: id, Text: text})
	}
	for _, d := range docs {
		id, text, _ := strings.Cut(d, "|")
		t.Corpus = append(t.Corpus, ir.Doc{ID: id, Text: text})
	}
	for _, j := range qrels {
		f := strings.Fields(j)
		grade := 0
		switch f[2] {
		case "1":
			grade = 1
		case "2":
			grade = 2
		case "-1":
			grade = -1
		}
		t.Qrels.Add(f[0], f[1], grade)
	}
	return t
}

// docsOf makes documents with distinct texts ("text of ID").
func docsOf(ids ...string) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = id + "|text of " + id
	}
	return out
}

func queryIDs(qs []ir.Query) []string {
	out := make([]string, len(qs))
	for i, q := range qs {
		out[i] = q.ID
	}
	return out
}

func corpusIDs(ds []ir.Doc) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.ID
	}
	return out
}

func mustSelect(t *testing.T, task *ir.Task, o Options) *Set {
	t.Helper()
	o = o.withDefaults(task)
	if err := o.validate(); err != nil {
		t.Fatal(err)
	}
	s, err := selectSet(task, o)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestQuerySelectionSkips(t *testing.T) {
	task := taskOf(
		[]string{
			"q1| alpha ",   // kept, stripped
			"q2| \t\n ",    // no text
			"q3|beta",      // no judgment
			"q4|gamma",     // only a non-positive judgment
			"q1|delta",     // repeated id
			"q5|alpha\x1c", // same text as q1 once stripped (U+001C is white space to Python)
			"q6|epsilon",   // kept
			"q7|zeta",      // beyond the limit
		},
		docsOf("a", "b", "c", "d"),
		[]string{"q1 a 1", "q2 b 1", "q4 c 0", "q5 b 2", "q6 c 1", "q7 d 1"},
	)
	s := mustSelect(t, task, Options{QueryLimit: 2})
	if got, want := queryIDs(s.Queries), []string{"q1", "q6"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("queries %v, want %v", got, want)
	}
	if s.Queries[0].Text != "alpha" {
		t.Errorf("query text %q, want it stripped", s.Queries[0].Text)
	}
	want := Selection{
		SourceQueries: 8, SkippedEmptyQueries: 1, SkippedWithoutPositives: 2,
		SkippedDuplicateQueryIDs: 1, SkippedDuplicateQueries: 1,
	}
	got := s.Selection
	got.SourceDocs, got.FillScanLimit, got.PositiveDocs = 0, 0, 0
	got.SourcePositiveQrels, got.SourceNonPositiveQrels = 0, 0
	if got != want {
		t.Errorf("selection %+v\nwant %+v", got, want)
	}
	if s.Selection.SourcePositiveQrels != 5 || s.Selection.SourceNonPositiveQrels != 1 {
		t.Errorf("source qrels %d positive, %d not; want 5 and 1", s.Selection.SourcePositiveQrels, s.Selection.SourceNonPositiveQrels)
	}
	if got, want := s.Qrels, (ir.Qrels{"q1": {"a": 1}, "q6": {"c": 1}}); !reflect.DeepEqual(got, want) {
		t.Errorf("qrels %v, want %v", got, want)
	}

	s = mustSelect(t, task, Options{QueryLimit: 5, KeepDuplicateTexts: true})
	if got, want := queryIDs(s.Queries), []string{"q1", "q5", "q6", "q7"}; !reflect.DeepEqual(got, want) {
		t.Errorf("keeping duplicate texts: queries %v, want %v", got, want)
	}
}

// orderTask: qB precedes qA in the query file; qB's positives are d9 and
// d3, qA's d5; negatives qB: n2 (0) n1 (−1), qA: n5 n3 n4.
func orderTask() *ir.Task {
	return taskOf(
		[]string{"qB|second query", "qA|first query"},
		docsOf("f1", "d9", "n1", "f2", "d3", "n2", "n3", "d5", "n4", "n5", "f3", "f4", "f5"),
		[]string{"qB d9 1", "qB d3 2", "qB n2 0", "qB n1 -1", "qA d5 1", "qA n5 0", "qA n3 0", "qA n4 0"},
	)
}

func TestDocumentSelectionOrder(t *testing.T) {
	s := mustSelect(t, orderTask(), Options{DocLimit: 10})
	// Positives in qrels order (queries as in the query file, documents by
	// id); negatives round-robin over queries by id (qA: n3 n4 n5, qB: n1
	// n2); then the corpus head.
	want := []string{"d3", "d9", "d5", "n3", "n1", "n4", "n2", "n5", "f1", "f2"}
	if got := corpusIDs(s.Corpus); !reflect.DeepEqual(got, want) {
		t.Fatalf("corpus %v\nwant   %v", got, want)
	}
	if s.Selection.KeptHardNegatives != 5 || s.Selection.HardNegativeCandidates != 5 || s.Selection.PositiveDocs != 3 {
		t.Errorf("selection %+v", s.Selection)
	}
	if got, want := s.Qrels, (ir.Qrels{"qB": {"d3": 2, "d9": 1}, "qA": {"d5": 1}}); !reflect.DeepEqual(got, want) {
		t.Errorf("qrels %v, want %v (negatives are not qrels)", got, want)
	}
	if got, want := s.qrelsRows(), []QrelsRow{{"qB", "d3"}, {"qB", "d9"}, {"qA", "d5"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("qrels rows %v, want %v", got, want)
	}
	if s.Corpus[0].Text != "text of d3" {
		t.Errorf("document text %q", s.Corpus[0].Text)
	}
}

func TestDocLimit(t *testing.T) {
	s := mustSelect(t, orderTask(), Options{DocLimit: 4})
	if got, want := corpusIDs(s.Corpus), []string{"d3", "d9", "d5", "n3"}; !reflect.DeepEqual(got, want) {
		t.Errorf("corpus %v, want %v", got, want)
	}
	if s.Selection.KeptHardNegatives != 1 {
		t.Errorf("kept hard negatives %d, want 1", s.Selection.KeptHardNegatives)
	}

	// The limit cuts qA's only positive: qA loses its judgment, then itself.
	s = mustSelect(t, orderTask(), Options{DocLimit: 2})
	if got, want := corpusIDs(s.Corpus), []string{"d3", "d9"}; !reflect.DeepEqual(got, want) {
		t.Errorf("corpus %v, want %v", got, want)
	}
	if got, want := queryIDs(s.Queries), []string{"qB"}; !reflect.DeepEqual(got, want) {
		t.Errorf("queries %v, want %v", got, want)
	}
	if s.Selection.RemovedQueriesNoQrels != 1 || len(s.Qrels) != 1 {
		t.Errorf("removed %d queries, qrels %v", s.Selection.RemovedQueriesNoQrels, s.Qrels)
	}
}

func TestFillScansOnlyTheCorpusHead(t *testing.T) {
	// DocLimit 3, one wanted document: the fill looks at the first
	// max(9, 4) = 9 non-empty documents. p and seven copies of its text use
	// eight of them, u1 is the ninth; the empty e1 does not count, so u1 is
	// in and u2 out although the limit is not reached.
	docs := []string{"p|same text", "e1|   "}
	for _, id := range []string{"x1", "x2", "x3", "x4", "x5", "x6", "x7"} {
		docs = append(docs, id+"| same text\n")
	}
	docs = append(docs, "u1|unique one", "u2|unique two")
	s := mustSelect(t, taskOf([]string{"q|query"}, docs, []string{"q p 1"}), Options{DocLimit: 3})
	if got, want := corpusIDs(s.Corpus), []string{"p", "u1"}; !reflect.DeepEqual(got, want) {
		t.Errorf("corpus %v, want %v", got, want)
	}
	sel := s.Selection
	if sel.FillScanLimit != 9 || sel.SkippedEmptyDocs != 1 || sel.DuplicateDocTexts != 7 {
		t.Errorf("fill limit %d, empty %d, duplicate texts %d; want 9, 1, 7", sel.FillScanLimit, sel.SkippedEmptyDocs, sel.DuplicateDocTexts)
	}
}

func TestDuplicateAndEmptyDocuments(t *testing.T) {
	task := taskOf(
		[]string{"q1|one", "q2|two", "q3|three"},
		[]string{
			"a|  ",          // empty: the later non-empty copy of a is used
			"a|alpha",       //
			"b|\talpha\n",   // q2's positive repeats a's text: dropped, and q2 with it
			"c|gamma",       //
			"c|gamma again", // repeated id: the first copy is kept
			"e|gamma",       // repeats c's text
			"f|phi",         //
			"m|   \u3000",   // empty (ideographic space)
		},
		[]string{"q1 a 1", "q2 b 1", "q3 c 1", "q3 zz 1"},
	)
	s := mustSelect(t, task, Options{})
	if got, want := corpusIDs(s.Corpus), []string{"a", "c", "f"}; !reflect.DeepEqual(got, want) {
		t.Errorf("corpus %v, want %v", got, want)
	}
	if s.Corpus[0].Text != "alpha" || s.Corpus[1].Text != "gamma" {
		t.Errorf("texts %q %q", s.Corpus[0].Text, s.Corpus[1].Text)
	}
	if got, want := queryIDs(s.Queries), []string{"q1", "q3"}; !reflect.DeepEqual(got, want) {
		t.Errorf("queries %v, want %v", got, want)
	}
	// zz is judged but not in the corpus; its judgment is dropped.
	if got, want := s.Qrels, (ir.Qrels{"q1": {"a": 1}, "q3": {"c": 1}}); !reflect.DeepEqual(got, want) {
		t.Errorf("qrels %v, want %v", got, want)
	}
	sel := s.Selection
	// Duplicate texts: b's (in the positive pass and again in the fill) and
	// e's; c's second copy goes by id, which is not counted.
	if sel.DuplicateDocTexts != 3 || sel.MissingPositiveDocs != 1 || sel.SkippedEmptyDocs != 2 || sel.RemovedQueriesNoQrels != 1 {
		t.Errorf("selection %+v", sel)
	}
}

func TestPositivesCappedPerQuery(t *testing.T) {
	task := taskOf([]string{"q|query"}, docsOf("a", "b", "c", "d"), []string{"q c 1", "q a 1", "q b 1"})
	s := mustSelect(t, task, Options{CandidateDepth: 2})
	// The first two in qrels order (by id) are kept; c stays in the corpus.
	if got, want := s.Qrels, (ir.Qrels{"q": {"a": 1, "b": 1}}); !reflect.DeepEqual(got, want) {
		t.Errorf("qrels %v, want %v", got, want)
	}
	if s.Selection.RemovedQrelsOverCap != 1 || len(s.Corpus) != 4 {
		t.Errorf("removed %d, corpus %v", s.Selection.RemovedQrelsOverCap, corpusIDs(s.Corpus))
	}
}

func TestNothingSelectable(t *testing.T) {
	task := taskOf([]string{"q|query"}, docsOf("a"), []string{"q a 0"})
	if _, err := Build(task, Options{}); err == nil || !strings.Contains(err.Error(), "no query") {
		t.Errorf("err = %v", err)
	}
}

func TestOptionsValidation(t *testing.T) {
	task := taskOf([]string{"q|query"}, docsOf("a"), []string{"q a 1"})
	for _, o := range []Options{
		{Split: "Nano-Toy"},
		{Split: "a..b"},
		{DenseConfig: "corpus"},
		{DenseConfig: "bm25"},
		{DenseConfig: "a/b"},
		{DocLimit: -1},
		{RRFK: -1},
	} {
		if _, err := Build(task, o); err == nil {
			t.Errorf("%+v: no error", o)
		}
	}
	if _, err := Build(task, Options{Split: "Nano.Toy_2"}); err != nil {
		t.Errorf("valid split: %v", err)
	}
}

func TestPyStrip(t *testing.T) {
	for in, want := range map[string]string{
		" a b ":             "a b",
		"\x1c\x1d\x1e\x1fa": "a",
		"\u00a0a\u2029":     "a",
		"\u200ba":           "\u200ba", // zero-width space is not white space to Python
		"":                  "",
	} {
		if got := pyStrip(in); got != want {
			t.Errorf("pyStrip(%q) = %q, want %q", in, got, want)
		}
	}
}
