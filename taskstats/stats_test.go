package taskstats

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/r2med/r2med/dataset"
	"github.com/r2med/r2med/hubrepo"
	"github.com/r2med/r2med/internal/pynum"
	"github.com/r2med/r2med/ir"
)

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// Expected values were computed from the shared files with Python (len() of
// the str, statistics.mean/median), the way HAKARI-Bench builds its cards.
func TestStatsNFCorpus(t *testing.T) {
	dir := sharedData(t, "nfcorpus")
	for _, c := range []struct {
		split string
		want  Profile
	}{
		{"test", Profile{
			Name: "nfcorpus", Layout: ir.LayoutBEIR, Split: "test",
			Counts: Counts{Queries: 323, Documents: 3395, PositiveQrels: 12334, QrelsRows: 12334, UnjudgedQueries: 2914},
			PositivesPerQuery: PositivesPerQuery{Average: 38.18575851393189, Min: 1, Median: 16, Max: 475,
				MultiPositiveQueries: 300, MultiPositiveQueryPercent: 92.87925696594428},
			TextStatsChars: TextStats{QueryMean: 21.764705882352942, DocumentMean: 1187.0456553755523},
			Grades:         []GradeCount{{1, 11758}, {2, 576}},
		}},
		// 324 queries: an even count, so the median is a mean of two.
		{"dev", Profile{
			Name: "nfcorpus", Layout: ir.LayoutBEIR, Split: "dev",
			Counts: Counts{Queries: 324, Documents: 3395, PositiveQrels: 11385, QrelsRows: 11385, UnjudgedQueries: 2913},
			PositivesPerQuery: PositivesPerQuery{Average: 35.138888888888886, Min: 1, Median: 18.5, Max: 919,
				MultiPositiveQueries: 305, MultiPositiveQueryPercent: 94.1358024691358},
			TextStatsChars: TextStats{QueryMean: 22.324074074074073, DocumentMean: 1187.0456553755523},
			Grades:         []GradeCount{{1, 10864}, {2, 521}},
		}},
	} {
		t.Run(c.split, func(t *testing.T) {
			task, err := dataset.Load(dir, dataset.Options{Split: c.split})
			if err != nil {
				t.Fatal(err)
			}
			checkProfile(t, Of(task), c.want)
		})
	}
}

func checkProfile(t *testing.T, got, want Profile) {
	t.Helper()
	floats := [][2]float64{
		{got.PositivesPerQuery.Average, want.PositivesPerQuery.Average},
		{got.PositivesPerQuery.Median, want.PositivesPerQuery.Median},
		{got.PositivesPerQuery.MultiPositiveQueryPercent, want.PositivesPerQuery.MultiPositiveQueryPercent},
		{got.TextStatsChars.QueryMean, want.TextStatsChars.QueryMean},
		{got.TextStatsChars.DocumentMean, want.TextStatsChars.DocumentMean},
	}
	for i, f := range floats {
		if !near(f[0], f[1]) {
			t.Errorf("float %d: got %v, want %v", i, f[0], f[1])
		}
	}
	// With the floats checked, compare the rest exactly.
	got.PositivesPerQuery.Average, got.PositivesPerQuery.Median, got.PositivesPerQuery.MultiPositiveQueryPercent = 0, 0, 0
	want.PositivesPerQuery.Average, want.PositivesPerQuery.Median, want.PositivesPerQuery.MultiPositiveQueryPercent = 0, 0, 0
	got.TextStatsChars, want.TextStatsChars = TextStats{}, TextStats{}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("profile\n got: %+v\nwant: %+v", got, want)
	}
}

// smallTask has one query without positives and texts whose length in code
// points differs from their length in bytes and in UTF-16 units.
func smallTask() *ir.Task {
	return &ir.Task{
		Name: "small", Layout: ir.LayoutR2MED,
		Corpus: []ir.Doc{{ID: "a", Text: "café"}, {ID: "b", Text: "😀😀"}, {ID: "c", Text: ""}, {ID: "d", Text: "plain text"}},
		Queries: []ir.Query{
			{ID: "q1", Text: "naïve?"},
			{ID: "q2", Text: "x"},
			{ID: "q3", Text: "why"},
			{ID: "q4", Text: "🙂"},
		},
		Qrels: ir.Qrels{
			"q1": {"a": 1, "b": 2, "c": 0},
			"q2": {"a": 0, "d": -1},
			"q3": {"d": 1},
			"q4": {"a": 1, "b": 1, "c": 1, "d": 1},
		},
		UnjudgedQueries: 2,
	}
}

func TestStatsSmall(t *testing.T) {
	got := Of(smallTask())
	want := Profile{
		Name: "small", Layout: ir.LayoutR2MED,
		Counts: Counts{Queries: 4, Documents: 4, PositiveQrels: 7, QrelsRows: 10, UnjudgedQueries: 2, BlankDocuments: 1},
		// Positives per query 2, 0, 1, 4 → sorted 0 1 2 4, median (1+2)/2.
		PositivesPerQuery: PositivesPerQuery{Average: 1.75, Min: 0, Median: 1.5, Max: 4,
			MultiPositiveQueries: 2, MultiPositiveQueryPercent: 50, QueriesWithoutPositives: 1},
		// Queries 6+1+3+1 code points, documents 4+2+0+10.
		TextStatsChars: TextStats{QueryMean: 11.0 / 4, DocumentMean: 16.0 / 4},
		Grades:         []GradeCount{{-1, 1}, {0, 2}, {1, 6}, {2, 1}},
	}
	checkProfile(t, got, want)

	var buf bytes.Buffer
	if err := got.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	wantText := `task                       small (R2MED)
queries                    4 evaluated, 2 without judgments
documents                  4 (1 with an empty text, kept)
judgments                  10 (7 positive)
grades                     -1: 1, 0: 2, 1: 6, 2: 1
positives per query        mean 1.75, min 0, median 1.5, max 4
multi-positive queries     2 (50.00%)
queries without positives  1
mean query length          2.8 chars
mean document length       4.0 chars
`
	if buf.String() != wantText {
		t.Errorf("WriteText:\n%s\nwant:\n%s", buf.String(), wantText)
	}

	js, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	wantJSON := `{"name":"small","layout":"r2med",` +
		`"counts":{"queries":4,"documents":4,"positive_qrels":7,"qrels_rows":10,"unjudged_queries":2,"blank_documents":1},` +
		`"positives_per_query":{"average":1.75,"min":0,"median":1.5,"max":4,"multi_positive_queries":2,"multi_positive_query_percent":50,"queries_without_positives":1},` +
		`"text_stats_chars":{"query_mean":2.75,"document_mean":4},` +
		`"grades":[{"grade":-1,"count":1},{"grade":0,"count":2},{"grade":1,"count":6},{"grade":2,"count":1}]}`
	if string(js) != wantJSON {
		t.Errorf("JSON:\n%s\nwant:\n%s", js, wantJSON)
	}
}

// TestStatsBlankTexts: R2MED's and BEIR's layouts keep a document or a
// query whose text is empty or only white space; the profile counts them
// where a user reads it, since they are in every mean and no lexical
// retriever can match them.
func TestStatsBlankTexts(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"corpus.jsonl": `{"id": "d1", "text": "alpha"}` + "\n" + `{"id": "d2", "text": ""}` + "\n" + `{"id": "d3", "text": " \t\n"}` + "\n",
		"query.jsonl":  `{"id": "q1", "text": "alpha?"}` + "\n" + `{"id": "q2", "text": "   "}` + "\n" + `{"id": "q3", "text": ""}` + "\n",
		"qrels.jsonl":  `{"q_id": "q1", "p_id": "d1", "score": 1}` + "\n" + `{"q_id": "q2", "p_id": "d2", "score": 1}` + "\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	task, err := dataset.Load(dir, dataset.Options{Name: "blank"})
	if err != nil {
		t.Fatal(err)
	}
	p := Of(task)
	// q3 has no judgments: it is not evaluated, so not counted as blank.
	if p.Counts.BlankDocuments != 2 || p.Counts.BlankQueries != 1 || p.Counts.Documents != 3 || p.Counts.Queries != 2 {
		t.Errorf("counts %+v, want 3 documents (2 blank), 2 queries (1 blank)", p.Counts)
	}
	var buf bytes.Buffer
	if err := p.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"documents                  3 (2 with an empty text, kept)\n",
		"empty queries kept         1 (evaluated, and counted in every mean)\n",
	} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("WriteText lacks %q:\n%s", want, buf.String())
		}
	}
	js, _ := json.Marshal(p.Counts)
	if !strings.Contains(string(js), `"blank_documents":2,"blank_queries":1`) {
		t.Errorf("JSON counts %s", js)
	}
}

// An empty task must still profile to valid JSON: no NaN from 0/0.
func TestStatsEmpty(t *testing.T) {
	p := Of(&ir.Task{Name: "empty", Layout: ir.LayoutBEIR, Split: "test"})
	js, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"name":"empty","layout":"beir","split":"test",` +
		`"counts":{"queries":0,"documents":0,"positive_qrels":0,"qrels_rows":0,"unjudged_queries":0},` +
		`"positives_per_query":{"average":0,"min":0,"median":0,"max":0,"multi_positive_queries":0,"multi_positive_query_percent":0,"queries_without_positives":0},` +
		`"text_stats_chars":{"query_mean":0,"document_mean":0},"grades":[]}`
	if string(js) != want {
		t.Errorf("JSON:\n%s\nwant:\n%s", js, want)
	}
	var buf bytes.Buffer
	if err := p.WriteText(&buf); err != nil || !bytes.HasPrefix(buf.Bytes(), []byte("task                       empty (BEIR, split test)\n")) {
		t.Errorf("WriteText: %v\n%s", err, buf.String())
	}
}

func sharedData(t testing.TB, name string) string {
	t.Helper()
	p := filepath.Join("..", "..", "shared", "data", name)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("shared test data %s is not available (%v); these tests need the read-only data folder beside the repository", p, err)
	}
	return p
}

// TestNanoCandidateMetrics scores the candidate lists of a Nano set
// written by DuckDB (hubrepo's fixture) as the task cards do.
func TestNanoCandidateMetrics(t *testing.T) {
	const nanoMini = "../hubrepo/testdata/nano-mini"
	task, err := hubrepo.Load(nanoMini, hubrepo.Spec{})
	if err != nil {
		t.Fatal(err)
	}
	p := Of(task)
	bm25, err := hubrepo.LoadCandidates(nanoMini, "bm25", "NanoMini")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(bm25.Queries, " ") != "q1 q2 q4" || bm25.Lists["q4"] == nil && len(bm25.Lists["q4"]) != 0 || len(bm25.Lists["q2"]) != 3 {
		t.Errorf("bm25 %+v", bm25)
	}
	hybrid, err := hubrepo.LoadCandidates(nanoMini, "reranking_hybrid", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := p.AddCandidates(task, bm25, CandidateSubset{Name: "bm25", Config: "bm25", Label: "BM25", TopK: 3}); err != nil {
		t.Fatal(err)
	}
	if err := p.AddCandidates(task, hybrid, CandidateSubset{Name: "reranking_hybrid", Config: "reranking_hybrid", Label: "Reranking hybrid", TopK: 2, Safeguard: true}); err != nil {
		t.Fatal(err)
	}
	b := p.CandidateSubsets["bm25"]
	// q1 finds d1 first, q2 none of d2, d3: one of three positives.
	if b.NDCGAt10 != 0.5 || b.HitAt10 != 0.5 || b.RecallAt100 != 1.0/3 || b.CandidateCountMean != 3 || b.QueryCount != 2 || b.QueryCoverage != 1 {
		t.Errorf("bm25 metrics %+v", b)
	}
	h := p.CandidateSubsets["reranking_hybrid"]
	// q2's d3 at rank 3 is its safeguard: it counts in nDCG@10 and hit@10,
	// not in recall.
	var s pynum.Sum
	s.Add(1)
	s.Add(0.5 / (1 + 1/1.584962500721156))
	if h.NDCGAt10 != s.Value()/2 || h.HitAt10 != 1 || h.RecallAt100 != 1.0/3 || h.CandidateCountMin != 2 || h.CandidateCountMax != 3 ||
		*h.SafeguardPositiveRows != 1 || *h.RowsWith101 != 1 {
		t.Errorf("hybrid metrics %+v", h)
	}
	var out bytes.Buffer
	if err := p.WriteText(&out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"task                       NanoMini (Nano hub, split NanoMini)\n",
		"documents                  4 (2 with an empty text left out)\n",
		"empty queries left out     1\n",
		"candidates                 bm25 (config bm25, top 3): nDCG@10 0.5000, hit@10 0.5000, recall@100 0.3333\n",
		"candidates                 reranking_hybrid (config reranking_hybrid, top 2): nDCG@10 0.6533, hit@10 1.0000, recall@100 0.3333\n",
		"                           2-3 per query (mean 2.500), 100.0% of 2 queries have some; 1 safeguard rows, 1 rows of 3\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, out.String())
		}
	}
	// With the NanoR2MED subsets: the dense config is not there.
	q := Of(task)
	files, err := q.AddHubCandidates(nanoMini, task, NanoR2MEDCandidates)
	if err != nil {
		t.Fatal(err)
	}
	if len(q.CandidateSubsets) != 2 || len(files) != 2 || q.CandidateSubsets["bm25"].NDCGAt10 != 0.5 || q.CandidateSubsets["bm25"].TopK != 500 ||
		q.CandidateSubsets["reranking_hybrid"].TopK != 100 || *q.CandidateSubsets["reranking_hybrid"].RowsWith101 != 0 {
		t.Errorf("AddHubCandidates: %+v, files %q", q.CandidateSubsets, files)
	}
	js, err := json.Marshal(p.CardRounded())
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"empty_documents":2`, `"reranking_hybrid":{"config":"reranking_hybrid"`, `"ndcg_at_10":0.6532867982`, `"rows_with_101_candidates":1`} {
		if !bytes.Contains(js, []byte(want)) {
			t.Errorf("JSON lacks %s:\n%s", want, js)
		}
	}
}

// TestStatsMissingDocs: R2MED's demo files judge two documents their
// corpus sample lacks; loaded with AllowMissingDocs, the profile counts
// those judgments where a user reads it, since they are relevant
// documents no system can retrieve (checked by hand: both of query 0's
// judgments name documents absent from corpus.jsonl).
func TestStatsMissingDocs(t *testing.T) {
	dir := sharedData(t, "r2med-biology-demo")
	task, err := dataset.Load(dir, dataset.Options{AllowMissingDocs: true})
	if err != nil {
		t.Fatal(err)
	}
	p := Of(task)
	if p.Counts.MissingDocQrels != 2 || p.Counts.MissingDocPositiveQrels != 2 || p.Counts.QrelsRows != 2 {
		t.Errorf("counts %+v, want 2 judgments (2 positive) of missing documents", p.Counts)
	}
	var buf bytes.Buffer
	if err := p.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	if want := "judged, not in the corpus  2 (2 positive: relevant, but no system can retrieve them)\n"; !strings.Contains(buf.String(), want) {
		t.Errorf("WriteText lacks %q:\n%s", want, buf.String())
	}
	if p := Of(smallTask()); p.Counts.MissingDocQrels != 0 {
		t.Errorf("a task whose judgments are all in its corpus: %+v", p.Counts)
	}
}
