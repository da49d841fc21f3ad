package negatives

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/r2med/r2med/audit/trainset"
	"github.com/r2med/r2med/dataset"
	"github.com/r2med/r2med/demo"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/rerank"
	"github.com/r2med/r2med/retrieve"
)

// bm25Searcher is R2MED's BM25 over task's corpus through package
// retrieve, as the CLI ranks.
func bm25Searcher(t *testing.T, task *ir.Task) Searcher {
	t.Helper()
	r, err := retrieve.New(context.Background(), retrieve.DefaultBM25(), task, retrieve.Env{})
	if err != nil {
		t.Fatal(err)
	}
	return SearcherFunc(func(ctx context.Context, qs []ir.Query, k int) (ir.Run, error) {
		return r.Search(ctx, retrieve.Queries(qs), k)
	})
}

// fixed is a Searcher returning a fixed ranking for every query.
func fixed(ids ...string) Searcher {
	return SearcherFunc(func(_ context.Context, qs []ir.Query, k int) (ir.Run, error) {
		run := ir.Run{}
		for _, q := range qs {
			for i, id := range ids[:min(k, len(ids))] {
				run[q.ID] = append(run[q.ID], ir.Hit{DocID: id, Score: float64(100 - i)})
			}
		}
		return run, nil
	})
}

func ids(ns []Negative) []string {
	var out []string
	for _, n := range ns {
		out = append(out, n.ID)
	}
	return out
}

func TestWindowPositivesNearDuplicates(t *testing.T) {
	corpus := []ir.Doc{
		{ID: "p", Text: "aspirin inhibits platelet cyclooxygenase irreversibly for the life of the platelet"},
		{ID: "copy", Text: "Aspirin inhibits platelet cyclooxygenase irreversibly, for the life of the platelet!"},
		{ID: "a", Text: "heparin binds antithrombin"},
		{ID: "b", Text: "warfarin blocks vitamin k epoxide reductase"},
		{ID: "c", Text: "clopidogrel blocks the p2y12 receptor"},
		{ID: "d", Text: "statins inhibit hmg coa reductase"},
		{ID: "e", Text: "metformin lowers hepatic glucose output"},
	}
	qs := []Query{{ID: "q", Text: "how does aspirin work", Positives: []string{"p"}}}
	s := fixed("a", "p", "copy", "b", "c", "d", "e")
	res, st, err := Mine(context.Background(), corpus, qs, s, Options{From: 1, To: 5, Count: 2})
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(res[0].Negatives); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("negatives %v, want [a b]", got)
	}
	if st.Positive != 1 || st.NearDuplicate != 1 || st.Candidates != 5 || st.Short != 0 {
		t.Errorf("stats %+v", st)
	}
	if n := res[0].Negatives[1]; n.Rank != 4 || n.Score != 97 || n.Text != corpus[3].Text {
		t.Errorf("negative %+v", n)
	}
	// The window starts at rank 4: b c (d is rank 6, outside).
	res, st, _ = Mine(context.Background(), corpus, qs, s, Options{From: 4, To: 5, Count: 5})
	if got := ids(res[0].Negatives); !slices.Equal(got, []string{"b", "c"}) || st.Short != 1 {
		t.Errorf("window 4–5: %v %+v", got, st)
	}
	// Positive texts (training data) exclude their copies in the corpus.
	qs2 := []Query{{ID: "q", Text: "how does aspirin work", PositiveTexts: []string{"ASPIRIN inhibits platelet cyclooxygenase irreversibly for the life of the platelet"}}}
	res, _, _ = Mine(context.Background(), corpus, qs2, s, Options{From: 1, To: 7, Count: 10})
	if got := ids(res[0].Negatives); !slices.Equal(got, []string{"a", "b", "c", "d", "e"}) {
		t.Errorf("training positives: %v", got)
	}
	// Sampling is seeded: the same seed repeats, results stay in rank order.
	a, _, _ := Mine(context.Background(), corpus, qs2, s, Options{From: 1, To: 7, Count: 3, Sample: true, Seed: 1})
	b, _, _ := Mine(context.Background(), corpus, qs2, s, Options{From: 1, To: 7, Count: 3, Sample: true, Seed: 1})
	if !slices.Equal(ids(a[0].Negatives), ids(b[0].Negatives)) || len(a[0].Negatives) != 3 || !slices.IsSortedFunc(a[0].Negatives, func(x, y Negative) int { return x.Rank - y.Rank }) {
		t.Errorf("sampling: %v vs %v", ids(a[0].Negatives), ids(b[0].Negatives))
	}
	differs := false
	for seed := uint64(2); seed < 20 && !differs; seed++ {
		c, _, _ := Mine(context.Background(), corpus, qs2, s, Options{From: 1, To: 7, Count: 3, Sample: true, Seed: seed})
		differs = !slices.Equal(ids(a[0].Negatives), ids(c[0].Negatives))
	}
	if !differs {
		t.Error("no seed changes the sample")
	}
	if _, _, err := Mine(context.Background(), corpus, qs, s, Options{From: 5, To: 2}); err == nil {
		t.Error("window 5–2 accepted")
	}
	if _, _, err := Mine(context.Background(), corpus, qs, fixed("zzz"), Options{From: 1, To: 3}); err == nil || !strings.Contains(err.Error(), `"zzz"`) {
		t.Errorf("unknown document: %v", err)
	}
}

// A judge (any rerank.Scorer) drops candidates outside its band.
func TestJudgeBand(t *testing.T) {
	corpus := []ir.Doc{{ID: "p", Text: "the answer"}, {ID: "x", Text: "likely relevant too"}, {ID: "y", Text: "a fine hard negative"}, {ID: "z", Text: "off topic"}}
	scores := map[string]float64{"the answer": 0.9, "likely relevant too": 0.88, "a fine hard negative": 0.5, "off topic": 0.01}
	var judge rerank.Scorer = rerank.ScorerFunc(func(_ context.Context, _ string, docs []string) ([]float64, error) {
		out := make([]float64, len(docs))
		for i, d := range docs {
			out[i] = scores[d]
		}
		return out, nil
	})
	qs := []Query{{ID: "q", Text: "q", Positives: []string{"p"}}}
	s := fixed("p", "x", "y", "z")
	lo, hi := 0.05, 0.8
	res, st, err := Mine(context.Background(), corpus, qs, s, Options{From: 1, To: 4, Judge: judge, JudgeMin: &lo, JudgeMax: &hi})
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(res[0].Negatives); !slices.Equal(got, []string{"y"}) || st.Judged != 2 || *res[0].Negatives[0].Judge != 0.5 {
		t.Errorf("band [0.05, 0.8]: %v, stats %+v", got, st)
	}
	// Relative: below 95% of the positive's 0.9 (0.855) drops x (0.88).
	res, _, err = Mine(context.Background(), corpus, qs, s, Options{From: 1, To: 4, Judge: judge, JudgeRelative: 0.95})
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(res[0].Negatives); !slices.Equal(got, []string{"y", "z"}) {
		t.Errorf("relative 0.95: %v", got)
	}
	if _, _, err := Mine(context.Background(), corpus, qs, s, Options{JudgeMax: &hi}); err == nil {
		t.Error("a band without a judge accepted")
	}
}

// On the demo task, same body_system and a different answer: every
// negative is a positive of another query of the same body system with
// another diagnosis.
func TestMetadataConstraintDemo(t *testing.T) {
	task, err := demo.Load()
	if err != nil {
		t.Fatal(err)
	}
	qs, err := FromTask(task, []string{"body_system", "answer"})
	if err != nil {
		t.Fatal(err)
	}
	if qs[0].Meta["body_system"] != "Endocrine" || qs[0].Meta["answer"] != "Pheochromocytoma" || len(qs[0].Positives) != 3 {
		t.Fatalf("query 1: %+v", qs[0])
	}
	s := bm25Searcher(t, task)
	opts := Options{From: 1, To: 79, Count: 5, Same: []string{"body_system"}, Differ: []string{"answer"}}
	res, st, err := Mine(context.Background(), task.Corpus, qs, s, opts)
	if err != nil {
		t.Fatal(err)
	}
	claims := map[string][]Query{}
	for _, q := range qs {
		for _, p := range q.Positives {
			claims[p] = append(claims[p], q)
		}
	}
	total := 0
	for _, r := range res {
		for _, n := range r.Negatives {
			total++
			ok := false
			for _, o := range claims[n.ID] {
				ok = ok || o.ID != r.Query.ID && o.Meta["body_system"] == r.Query.Meta["body_system"] && o.Meta["answer"] != r.Query.Meta["answer"]
			}
			if !ok {
				t.Errorf("%s (%s, %s): negative %s is not a positive of a same-system, other-answer query", r.Query.ID, r.Query.Meta["body_system"], r.Query.Meta["answer"], n.ID)
			}
		}
	}
	if total == 0 || st.Metadata == 0 {
		t.Errorf("%d negatives, %d dropped by metadata", total, st.Metadata)
	}
	// Without the constraint BM25's distractors (no query claims them)
	// come back.
	free, _, _ := Mine(context.Background(), task.Corpus, qs, s, Options{From: 1, To: 79, Count: 5})
	unclaimed := 0
	for _, r := range free {
		for _, n := range r.Negatives {
			if len(claims[n.ID]) == 0 {
				unclaimed++
			}
		}
	}
	if unclaimed == 0 {
		t.Error("without the constraint no unclaimed document was mined; the constraint test proves nothing")
	}
	// Deterministic: a second run gives the same output.
	again, _, _ := Mine(context.Background(), task.Corpus, qs, s, opts)
	var b1, b2 bytes.Buffer
	Write(&b1, "bge", res, task.Corpus)
	Write(&b2, "bge", again, task.Corpus)
	if b1.String() != b2.String() || b1.Len() == 0 {
		t.Error("two runs differ")
	}
}

// NFCorpus has exact duplicate documents judged differently: PLAIN-2630
// judges MED-2651 relevant and leaves its copy MED-118 unjudged. BM25
// ranks the copy near the top, and mining must not return it.
func TestNFCorpusDuplicateIsNotANegative(t *testing.T) {
	dir := "../../../shared/data/nfcorpus"
	if _, err := os.Stat(dir); err != nil {
		if os.Getenv("R2MED_CI") == "1" {
			t.Fatalf("shared data missing under R2MED_CI=1: %v", err)
		}
		t.Skip("shared data not found")
	}
	task, err := dataset.Load(dir, dataset.Options{Split: "test"})
	if err != nil {
		t.Fatal(err)
	}
	qs, _ := FromTask(task, nil)
	s := bm25Searcher(t, task)
	run, _ := s.Search(context.Background(), []ir.Query{{ID: "PLAIN-2630", Text: textOf(qs, "PLAIN-2630")}}, 30)
	if !slices.ContainsFunc(run["PLAIN-2630"], func(h ir.Hit) bool { return h.DocID == "MED-118" }) {
		t.Fatal("BM25 does not rank MED-118 in PLAIN-2630's top 30; the test needs another pair")
	}
	res, st, err := Mine(context.Background(), task.Corpus, qs, s, Options{From: 1, To: 30, Count: 30})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Query.ID == "PLAIN-2630" && slices.Contains(ids(r.Negatives), "MED-118") {
			t.Error("MED-118, a copy of PLAIN-2630's positive MED-2651, was mined as a negative")
		}
	}
	if st.NearDuplicate == 0 {
		t.Errorf("no near-duplicates excluded: %+v", st)
	}
	t.Logf("NFCorpus test: %+v", st)
}

func textOf(qs []Query, id string) string {
	for _, q := range qs {
		if q.ID == id {
			return q.Text
		}
	}
	return ""
}

// Training files: queries and positive texts from a BGE file, the pool
// of its texts as the corpus, output in both formats.
func TestTrainingFileAndFormats(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "train.jsonl")
	var b strings.Builder
	for i := range 6 {
		fmt.Fprintf(&b, `{"query":"question %d about drug %d","pos":["drug %d answer text %d"],"neg":["drug %d unrelated filler"]}`+"\n", i, i, i, i, (i+1)%6)
	}
	os.WriteFile(path, []byte(b.String()), 0o644)
	qs, pool, err := Training(context.Background(), path, trainset.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(qs) != 6 || len(pool) != 12 || qs[2].ID != path+":3" || qs[2].PositiveTexts[0] != "drug 2 answer text 2" {
		t.Fatalf("queries %+v pool %d", qs[2], len(pool))
	}
	s := bm25Searcher(t, &ir.Task{Corpus: pool})
	res, _, err := Mine(context.Background(), pool, qs, s, Options{From: 1, To: 12, Count: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		for _, n := range r.Negatives {
			if slices.Contains(r.Query.PositiveTexts, n.Text) {
				t.Errorf("%s: its positive mined as a negative", r.Query.ID)
			}
		}
	}
	var bge, tri bytes.Buffer
	if err := Write(&bge, "bge", res, pool); err != nil {
		t.Fatal(err)
	}
	if err := Write(&tri, "triplet", res, pool); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(bge.String()), "\n")
	var first struct {
		Query string   `json:"query"`
		Pos   []string `json:"pos"`
		Neg   []string `json:"neg"`
	}
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil || first.Query != "question 0 about drug 0" || len(first.Pos) != 1 || len(first.Neg) != 2 {
		t.Errorf("bge line %q (%v)", lines[0], err)
	}
	if n := strings.Count(tri.String(), "\n"); n != 12 || !strings.Contains(tri.String(), `{"anchor":"question 0 about drug 0","positive":"drug 0 answer text 0","negative":`) {
		t.Errorf("%d triplet lines:\n%s", n, tri.String())
	}
	// The mined file reads back as a BGE training set.
	out := filepath.Join(dir, "mined.jsonl")
	os.WriteFile(out, bge.Bytes(), 0o644)
	f, err := trainset.Open(out, trainset.Options{})
	if err != nil || f.Layout.Name != "BGE {query, pos, neg}" {
		t.Errorf("mined file: %v %v", f, err)
	}
	if err := Write(&bge, "xml", res, pool); err == nil {
		t.Error("unknown format accepted")
	}
}

// TestCopiesWithoutWordsAreNotNegatives: a positive with no letters or
// digits (symbols, emoji) has no word shingles, so the Jaccard test never
// fired and its exact copy, under another id or as the training file's
// own positive text in the pool, was exported as a negative of the very
// query it answers. Copies are equal texts once normalised (the audit's
// exact match), words or not.
func TestCopiesWithoutWordsAreNotNegatives(t *testing.T) {
	corpus := []ir.Doc{
		{ID: "p", Text: "★ → ★"},
		{ID: "copy", Text: "★→★"},
		{ID: "a", Text: "heparin binds antithrombin"},
		{ID: "b", Text: "☆ ← ☆"},
	}
	s := fixed("copy", "a", "p", "b")
	qs := []Query{{ID: "q", Text: "stars", Positives: []string{"p"}}}
	res, st, err := Mine(context.Background(), corpus, qs, s, Options{From: 1, To: 4, Count: 5})
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(res[0].Negatives); !slices.Equal(got, []string{"a", "b"}) || st.NearDuplicate != 1 {
		t.Errorf("benchmark positive: negatives %v (stats %+v), want [a b] and copy a near-duplicate", got, st)
	}
	qs = []Query{{ID: "q", Text: "stars", PositiveTexts: []string{"★ → ★"}}}
	res, _, err = Mine(context.Background(), corpus, qs, s, Options{From: 1, To: 4, Count: 5})
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(res[0].Negatives); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("training positive: negatives %v, want [a b]", got)
	}
}

// TestDefaultWindowIsHnMine: FlagEmbedding's hn_mine (FlagOpen/
// FlagEmbedding scripts/hn_mine.py at 6fee11be) takes
// all_inxs[i][10:210] for its default range_for_sampling "10-210": a
// Python slice, the 200 documents at ranks 11 to 210. It also drops a
// candidate equal to the query text (corpus[inx] != query).
func TestDefaultWindowIsHnMine(t *testing.T) {
	var corpus []ir.Doc
	var ranking []string
	for i := 1; i <= 300; i++ {
		id := fmt.Sprintf("d%03d", i)
		corpus = append(corpus, ir.Doc{ID: id, Text: fmt.Sprintf("document number %d about topic %d", i, i*7)})
		ranking = append(ranking, id)
	}
	corpus[29].Text = "What causes scurvy?" // rank 30: the query's own text
	qs := []Query{{ID: "q", Text: "what causes SCURVY", Positives: []string{"d050"}}}
	res, st, err := Mine(context.Background(), corpus, qs, fixed(ranking...), Options{Count: 300})
	if err != nil {
		t.Fatal(err)
	}
	negs := res[0].Negatives
	if st.Candidates != 200 || negs[0].Rank != 11 || negs[len(negs)-1].Rank != 210 {
		t.Errorf("window: %d candidates, ranks %d–%d; want 200, 11–210", st.Candidates, negs[0].Rank, negs[len(negs)-1].Rank)
	}
	for _, n := range negs {
		if n.ID == "d030" {
			t.Error("the query's own text is a negative")
		}
	}
	if len(negs) != 198 || st.Positive != 1 || st.QueryCopy != 1 {
		t.Errorf("%d negatives, stats %+v; want 198, one positive and one copy of the query excluded", len(negs), st)
	}
}

// TestWriteTevatron: Tevatron's training set (texttron/tevatron
// src/tevatron/retriever/dataset.py at 9ea49370) reads each line's
// group['query'], group['positive_passages'] and
// group['negative_passages'], each passage as psg['title'] and psg['text']
// (both required: format_passage(psg['text'], psg['title'])); its encoder
// names queries by 'query_id' and passages by 'docid'.
func TestWriteTevatron(t *testing.T) {
	corpus := []ir.Doc{{ID: "p", Text: "aspirin blocks cyclooxygenase"}, {ID: "a", Text: "heparin binds antithrombin"}, {ID: "b", Text: "warfarin blocks vkorc1"}}
	res := []Result{
		{Query: Query{ID: "q1", Text: "how does aspirin work", Positives: []string{"p"}, PositiveTexts: []string{"aspirin is an nsaid"}},
			Negatives: []Negative{{ID: "a", Text: corpus[1].Text}, {ID: "b", Text: corpus[2].Text}}},
		{Query: Query{ID: "q2", Text: "no negatives", Positives: []string{"p"}}},
	}
	var buf bytes.Buffer
	if err := Write(&buf, "tevatron", res, corpus); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 1 {
		t.Fatalf("%d lines: %s", len(lines), buf.String())
	}
	type passage struct {
		DocID *string `json:"docid"`
		Title *string `json:"title"`
		Text  *string `json:"text"`
	}
	var g struct {
		QueryID string    `json:"query_id"`
		Query   string    `json:"query"`
		Pos     []passage `json:"positive_passages"`
		Neg     []passage `json:"negative_passages"`
	}
	if err := json.Unmarshal([]byte(lines[0]), &g); err != nil {
		t.Fatal(err)
	}
	if g.QueryID != "q1" || g.Query != "how does aspirin work" || len(g.Pos) != 2 || len(g.Neg) != 2 {
		t.Fatalf("line %s", lines[0])
	}
	for _, p := range append(g.Pos, g.Neg...) {
		if p.DocID == nil || p.Title == nil || p.Text == nil || *p.Title != "" {
			t.Errorf("passage without docid, title or text: %s", lines[0])
		}
	}
	if *g.Pos[0].Text != "aspirin is an nsaid" || *g.Pos[1].DocID != "p" || *g.Neg[1].DocID != "b" || *g.Neg[1].Text != "warfarin blocks vkorc1" {
		t.Errorf("line %s", lines[0])
	}
}

// TestQueriesWithoutPositivesCounted: a query with no positive in the
// corpus (judged only non-relevant, or its relevant documents missing
// from a sampled corpus) gets no line, as a training line needs a
// positive; Stats counts it, where such queries vanished from the output
// while the summary said none was left out.
func TestQueriesWithoutPositivesCounted(t *testing.T) {
	corpus := []ir.Doc{{ID: "p", Text: "aspirin blocks cyclooxygenase"}, {ID: "a", Text: "heparin binds antithrombin"}, {ID: "b", Text: "warfarin blocks vkorc1"}}
	qs := []Query{
		{ID: "ok", Text: "aspirin", Positives: []string{"p"}},
		{ID: "none", Text: "nothing relevant"},
		{ID: "missing", Text: "sampled away", Positives: []string{"gone"}},
		{ID: "text", Text: "training", PositiveTexts: []string{"a positive text"}},
	}
	res, st, err := Mine(context.Background(), corpus, qs, fixed("a", "b", "p"), Options{From: 1, To: 3, Count: 2})
	if err != nil {
		t.Fatal(err)
	}
	if st.NoPositive != 2 || st.None != 0 {
		t.Errorf("stats %+v; want 2 queries without a positive", st)
	}
	var buf bytes.Buffer
	if err := Write(&buf, "bge", res, corpus); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(buf.String(), "\n"); n != st.Queries-st.None-st.NoPositive {
		t.Errorf("%d lines for %d queries, %d without negatives and %d without positives", n, st.Queries, st.None, st.NoPositive)
	}
}

// TestEmptyMetadataIsUnknown: R2MED's body_system may be empty (the
// reference notes on query.jsonl: "body_system (str, may be empty)"). An
// empty value says nothing, so two queries with empty body systems do not
// share one, where --same body_system paired them as the same system.
func TestEmptyMetadataIsUnknown(t *testing.T) {
	raw := func(s string) json.RawMessage { b, _ := json.Marshal(s); return b }
	task := &ir.Task{
		Corpus: []ir.Doc{{ID: "p1", Text: "pheochromocytoma secretes catecholamines"}, {ID: "p2", Text: "graves disease stimulates the tsh receptor"}},
		Queries: []ir.Query{
			{ID: "q1", Text: "episodic headache and sweating", Extra: map[string]json.RawMessage{"body_system": raw(""), "answer": raw("Pheochromocytoma")}},
			{ID: "q2", Text: "weight loss and proptosis", Extra: map[string]json.RawMessage{"body_system": raw(""), "answer": raw("Graves disease")}},
		},
		Qrels: ir.Qrels{},
	}
	task.Qrels.Add("q1", "p1", 1)
	task.Qrels.Add("q2", "p2", 1)
	qs, err := FromTask(task, []string{"body_system", "answer"})
	if err != nil {
		t.Fatal(err)
	}
	res, st, err := Mine(context.Background(), task.Corpus, qs, fixed("p1", "p2"), Options{From: 1, To: 2, Same: []string{"body_system"}, Differ: []string{"answer"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if len(r.Negatives) > 0 {
			t.Errorf("%s: negatives %v from a query whose body system is as unknown as its own", r.Query.ID, ids(r.Negatives))
		}
	}
	if st.Metadata != 2 {
		t.Errorf("stats %+v; want both candidates dropped by metadata", st)
	}
}

// TestNegativeCopiesOnce: documents equal once normalised (a corpus's
// duplicates, as NFCorpus's 39 pairs) give one negative, the better
// ranked, and the others are counted; a query's negatives held the same
// text two and three times.
func TestNegativeCopiesOnce(t *testing.T) {
	corpus := []ir.Doc{{ID: "p", Text: "the positive text"}, {ID: "a", Text: "Alpha beta gamma."}, {ID: "b", Text: "one two three"},
		{ID: "a2", Text: "alpha  BETA gamma"}, {ID: "a3", Text: "alpha beta gamma"}, {ID: "c", Text: "four five six"}}
	qs := []Query{{ID: "q", Text: "question", Positives: []string{"p"}}}
	res, st, err := Mine(context.Background(), corpus, qs, fixed("p", "a", "b", "a2", "a3", "c"), Options{From: 1, To: 6, Count: 10})
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(res[0].Negatives); !slices.Equal(got, []string{"a", "b", "c"}) || st.NegativeCopy != 2 || st.Candidates != 6 || st.Positive != 1 {
		t.Errorf("negatives %v, stats %+v; want a, b, c, 2 copies of a better-ranked negative out of 6 candidates", got, st)
	}
}

// TestTrainingJSONArrayOnOneLine: a JSON array training file written on
// one line names its records by element; every record was "FILE:1" and
// the file was refused for repeating an id.
func TestTrainingJSONArrayOnOneLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "train.json")
	os.WriteFile(path, []byte(`[{"query":"first question","pos":["a"]},{"query":"second question","pos":["b"]}]`), 0o644)
	qs, _, err := Training(context.Background(), path, trainset.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(qs) != 2 || qs[0].ID != path+"#1" || qs[1].ID != path+"#2" {
		t.Errorf("queries %+v, want two named %s#1 and #2", qs, path)
	}
	corpus := filepath.Join(t.TempDir(), "corpus.json")
	os.WriteFile(corpus, []byte(`[{"text":"one"},{"text":"two"}]`), 0o644)
	docs, err := Corpus(context.Background(), corpus, trainset.Options{})
	if err != nil || len(docs) != 2 || docs[1].ID != "element 2" {
		t.Errorf("corpus %+v, %v; want two documents, the second named element 2", docs, err)
	}
}
