package rerank

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/measure"
	"github.com/r2med/r2med/measure/measuretest"
)

// listRun is a run whose lists hold the given ids with falling scores.
func listRun(lists map[string][]string) ir.Run {
	run := make(ir.Run)
	for qid, ids := range lists {
		for i, id := range ids {
			run[qid] = append(run[qid], ir.Hit{DocID: id, Score: float64(len(ids) - i)})
		}
	}
	return run
}

func ids(hits []ir.Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.DocID
	}
	return out
}

// numbered returns d1..dn.
func numbered(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = prefix + strconv.Itoa(i+1)
	}
	return out
}

func reversed(s []string) []string {
	s = slices.Clone(s)
	slices.Reverse(s)
	return s
}

// textIsID is a corpus where a document's text is its id.
func textIsID(id string) (string, bool) { return "text of " + id, true }

// tableScorer scores a document by a fixed table keyed by its text, and
// records every call.
type tableScorer struct {
	mu    sync.Mutex
	score map[string]float64
	calls [][]string
}

func (s *tableScorer) Score(_ context.Context, query string, docs []string) ([]float64, error) {
	s.mu.Lock()
	s.calls = append(s.calls, slices.Clone(docs))
	s.mu.Unlock()
	out := make([]float64, len(docs))
	for i, d := range docs {
		out[i] = s.score[d]
	}
	return out, nil
}

// reverseScorer prefers documents with higher numbers: "text of d7" scores 7.
var reverseScorer = ScorerFunc(func(_ context.Context, _ string, docs []string) ([]float64, error) {
	out := make([]float64, len(docs))
	for i, d := range docs {
		n, err := strconv.Atoi(d[strings.LastIndexAny(d, "abcdefghijklmnopqrstuvwxyz")+1:])
		if err != nil {
			return nil, err
		}
		out[i] = float64(n)
	}
	return out, nil
})

func TestDepthKeepsOnlyReranked(t *testing.T) {
	run := listRun(map[string][]string{"q1": numbered("d", 30)})
	qs := map[string]string{"q1": "query one"}
	for _, tc := range []struct {
		depth int
		want  []string
	}{
		{10, []string{"d10", "d9", "d8", "d7", "d6", "d5", "d4", "d3", "d2", "d1"}},
		{3, []string{"d3", "d2", "d1"}},
		{-1, reversed(numbered("d", 30))},
		{0, reversed(numbered("d", 30))}, // default 100 > 30
	} {
		got, err := Rerank(context.Background(), run, qs, textIsID, reverseScorer, Options{Depth: tc.depth})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(ids(got["q1"]), tc.want) {
			t.Errorf("depth %d: got %v, want %v", tc.depth, ids(got["q1"]), tc.want)
		}
		for _, h := range got["q1"] {
			if want, _ := strconv.Atoi(h.DocID[1:]); h.Score != float64(want) {
				t.Errorf("depth %d: %s has score %v, want the reranker's %d", tc.depth, h.DocID, h.Score, want)
			}
		}
	}
}

func TestKeepTail(t *testing.T) {
	run := listRun(map[string][]string{"q1": numbered("d", 6)})
	got, err := Rerank(context.Background(), run, map[string]string{"q1": "q"}, textIsID, reverseScorer, Options{Depth: 3, KeepTail: true})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"d3", "d2", "d1", "d4", "d5", "d6"}
	if !slices.Equal(ids(got["q1"]), want) {
		t.Fatalf("got %v, want %v", ids(got["q1"]), want)
	}
	// The tail sits strictly below the reranked documents, in input order,
	// so trec_eval's score sort keeps the list order.
	for i := 1; i < len(got["q1"]); i++ {
		if !(got["q1"][i].Score < got["q1"][i-1].Score) {
			t.Errorf("score %d (%v) is not below score %d (%v)", i, got["q1"][i].Score, i-1, got["q1"][i-1].Score)
		}
	}
	if below(1e300) >= 1e300 || below(-1e300) >= -1e300 {
		t.Error("below does not go down at large magnitudes")
	}
}

// With depth 10, recall@100 equals recall@10 (R2MED's published
// behaviour, reference notes §4 row 15), and nDCG@100 can fall below
// nDCG@10.
func TestDepth10RecallEquality(t *testing.T) {
	docs := numbered("d", 100)
	run := listRun(map[string][]string{"q1": docs})
	// Relevant: d5, inside the top 10, and d50 and d90, which depth 10
	// can never bring back.
	qrels := ir.Qrels{"q1": {"d5": 1, "d50": 1, "d90": 1}}
	got, err := Rerank(context.Background(), run, map[string]string{"q1": "q"}, textIsID, reverseScorer, Options{Depth: 10})
	if err != nil {
		t.Fatal(err)
	}
	ms, err := measure.Parse("recall.10,100 ndcg_cut.10,100")
	if err != nil {
		t.Fatal(err)
	}
	res, err := measure.Evaluate(qrels, got, ms, measure.Options{})
	if err != nil {
		t.Fatal(err)
	}
	v := func(s string) float64 {
		m, _ := measure.Parse(s)
		return res.All[res.Index(m[0])]
	}
	// reranked top 10: d10 … d1, so d5 is at rank 6.
	if v("recall.10") != 1.0/3 || v("recall.100") != 1.0/3 {
		t.Errorf("recall@10 %v, recall@100 %v; both should be 1/3", v("recall.10"), v("recall.100"))
	}
	// nDCG@10 = (1/log2(7)) / (1 + 1/log2(3) + 1/log2(4)); nDCG@100 has the
	// same numerator over the same ideal (R=3 < 10), so they are equal here.
	if v("ndcg_cut.10") != v("ndcg_cut.100") {
		t.Errorf("ndcg@10 %v != ndcg@100 %v", v("ndcg_cut.10"), v("ndcg_cut.100"))
	}
}

// The expected orders come from Python:
//
//	sorted(enumerate(c), key=lambda it: (hashlib.sha256(f"hakari-reranker-candidate-order-v1\0{qid}\0{it[1]}".encode()).digest(), it[0]))
func TestHashShuffleMatchesHAKARI(t *testing.T) {
	for _, tc := range []struct {
		qid      string
		in, want []string
	}{
		{"q1", []string{"d1", "d2", "d3", "d4", "d5", "d6"}, []string{"d5", "d4", "d3", "d1", "d6", "d2"}},
		{"PMC-7", []string{"a", "b", "c", "d", "e", "f", "g", "h"}, []string{"d", "a", "h", "f", "g", "e", "b", "c"}},
	} {
		hits := listRun(map[string][]string{tc.qid: tc.in})[tc.qid]
		HashShuffle(tc.qid, hits)
		if !slices.Equal(ids(hits), tc.want) {
			t.Errorf("%s: got %v, want %v", tc.qid, ids(hits), tc.want)
		}
	}
}

func TestTieOrder(t *testing.T) {
	in := []string{"d1", "d2", "d3", "d4", "d5", "d6"}
	run := listRun(map[string][]string{"q1": in})
	// d2 and d6 score 1, the rest tie at 0.
	s := &tableScorer{score: map[string]float64{"text of d2": 1, "text of d6": 1}}
	got, err := Rerank(context.Background(), run, map[string]string{"q1": "q"}, textIsID, s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"d2", "d6", "d1", "d3", "d4", "d5"}; !slices.Equal(ids(got["q1"]), want) {
		t.Errorf("input order: got %v, want %v", ids(got["q1"]), want)
	}
	got, err = Rerank(context.Background(), run, map[string]string{"q1": "q"}, textIsID, s, Options{Order: HashOrder})
	if err != nil {
		t.Fatal(err)
	}
	// Hash order of q1 is d5 d4 d3 d1 d6 d2: the scored pair keeps it
	// (d6 before d2), and so do the zeros.
	if want := []string{"d6", "d2", "d5", "d4", "d3", "d1"}; !slices.Equal(ids(got["q1"]), want) {
		t.Errorf("hash order: got %v, want %v", ids(got["q1"]), want)
	}
	// The scorer saw the shuffled order.
	if want := []string{"text of d5", "text of d4", "text of d3", "text of d1", "text of d6", "text of d2"}; !slices.Equal(s.calls[1], want) {
		t.Errorf("scorer input %v, want %v", s.calls[1], want)
	}
}

func TestSafeguard(t *testing.T) {
	list := numbered("c", 101) // c101 is the safeguard
	short := numbered("s", 100)
	run := listRun(map[string][]string{"q1": list, "q2": short})
	qs := map[string]string{"q1": "a", "q2": "b"}
	// The safeguard scores highest; everything else by its number.
	s := ScorerFunc(func(ctx context.Context, q string, docs []string) ([]float64, error) {
		out, err := reverseScorer(ctx, q, docs)
		for i, d := range docs {
			if d == "text of c101" {
				out[i] = 1000
			}
		}
		return out, err
	})
	cases := []struct {
		name    string
		opts    Options
		q1Len   int
		q1First string
		q2Len   int
	}{
		{"plain depth 100 cuts it", Options{}, 100, "c100", 100},
		{"keep reranks it", Options{Safeguard: KeepSafeguard}, 101, "c101", 100},
		{"keep at depth 10 leaves it out", Options{Safeguard: KeepSafeguard, Depth: 10}, 10, "c10", 10},
		{"drop removes it", Options{Safeguard: DropSafeguard, Depth: -1}, 100, "c100", 100},
		{"plain, all", Options{Depth: -1}, 101, "c101", 100},
	}
	for _, tc := range cases {
		got, err := Rerank(context.Background(), run, qs, textIsID, s, tc.opts)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if len(got["q1"]) != tc.q1Len || got["q1"][0].DocID != tc.q1First || len(got["q2"]) != tc.q2Len {
			t.Errorf("%s: q1 has %d docs starting %s, q2 %d; want %d starting %s, %d", tc.name,
				len(got["q1"]), got["q1"][0].DocID, len(got["q2"]), tc.q1Len, tc.q1First, tc.q2Len)
		}
		if tc.opts.Safeguard == DropSafeguard && slices.Contains(ids(got["q1"]), "c101") {
			t.Errorf("%s: the safeguard is still there", tc.name)
		}
	}
	long := listRun(map[string][]string{"q1": numbered("c", 102)})
	_, err := Rerank(context.Background(), long, qs, textIsID, s, Options{Safeguard: DropSafeguard})
	if err == nil || !strings.Contains(err.Error(), "102 candidates") {
		t.Errorf("a 102-long list in safeguard mode: got %v", err)
	}
}

func TestBatchingAndWorkers(t *testing.T) {
	lists := map[string][]string{}
	qs := map[string]string{}
	for q := range 7 {
		qid := fmt.Sprintf("q%d", q)
		lists[qid] = numbered(fmt.Sprintf("x%dx", q), 25)
		qs[qid] = "query " + qid
	}
	run := listRun(lists)
	want, err := Rerank(context.Background(), run, qs, textIsID, reverseScorer, Options{Depth: 20})
	if err != nil {
		t.Fatal(err)
	}
	var calls, maxDocs int
	var mu sync.Mutex
	counting := ScorerFunc(func(ctx context.Context, q string, docs []string) ([]float64, error) {
		mu.Lock()
		calls++
		maxDocs = max(maxDocs, len(docs))
		mu.Unlock()
		return reverseScorer(ctx, q, docs)
	})
	var progress []int
	got, err := Rerank(context.Background(), run, qs, textIsID, counting, Options{Depth: 20, BatchSize: 6, Workers: 4,
		Progress: func(done, total int) {
			if total != 7 {
				t.Errorf("total %d", total)
			}
			progress = append(progress, done)
		}})
	if err != nil {
		t.Fatal(err)
	}
	if calls != 7*4 || maxDocs != 6 {
		t.Errorf("%d calls of at most %d docs; want 28 of at most 6 (20 docs in batches of 6)", calls, maxDocs)
	}
	if !slices.Equal(progress, []int{1, 2, 3, 4, 5, 6, 7}) {
		t.Errorf("progress %v", progress)
	}
	for qid := range want {
		if !slices.Equal(got[qid], want[qid]) {
			t.Errorf("%s: batched and concurrent result differs", qid)
		}
	}
}

func TestResumeFromDone(t *testing.T) {
	run := listRun(map[string][]string{"q1": numbered("d", 5), "q2": numbered("d", 5)})
	qs := map[string]string{"q1": "a", "q2": "b"}
	done := ir.Run{"q1": {{DocID: "d4", Score: 9}}}
	s := &tableScorer{score: map[string]float64{}}
	var heard []string
	got, err := Rerank(context.Background(), run, qs, textIsID, s, Options{Done: done, OnQuery: func(qid string, _ []ir.Hit) error {
		heard = append(heard, qid)
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.calls) != 1 || !slices.Equal(heard, []string{"q2"}) {
		t.Errorf("%d scorer calls, OnQuery heard %v; want 1 and [q2]", len(s.calls), heard)
	}
	if !slices.Equal(got["q1"], done["q1"]) || len(got["q2"]) != 5 {
		t.Errorf("got %v", got)
	}
	stop := errors.New("disk full")
	_, err = Rerank(context.Background(), run, qs, textIsID, s, Options{OnQuery: func(string, []ir.Hit) error { return stop }})
	if !errors.Is(err, stop) {
		t.Errorf("OnQuery error not returned: %v", err)
	}
}

func TestRerankErrors(t *testing.T) {
	run := listRun(map[string][]string{"q1": {"d1", "d2"}})
	qs := map[string]string{"q1": "a"}
	bad := func(scores ...float64) Scorer {
		return ScorerFunc(func(context.Context, string, []string) ([]float64, error) { return scores, nil })
	}
	nan := 0.0
	nan = nan / nan
	for _, tc := range []struct {
		name string
		run  ir.Run
		qs   map[string]string
		docs func(string) (string, bool)
		s    Scorer
		opts Options
		want string
	}{
		{"no query text", run, map[string]string{}, textIsID, bad(1, 2), Options{}, `query "q1" of the run has no text`},
		{"missing doc", run, qs, func(id string) (string, bool) { return "", id != "d2" }, bad(1, 2), Options{}, `document "d2" is not in the corpus`},
		{"short answer", run, qs, textIsID, bad(1), Options{}, "returned 1 scores for 2 documents"},
		{"NaN", run, qs, textIsID, bad(1, nan), Options{}, `scored document "d2" NaN`},
		{"scorer error", run, qs, textIsID, ScorerFunc(func(context.Context, string, []string) ([]float64, error) { return nil, errors.New("boom") }), Options{}, `query "q1": boom`},
		{"listwise batch", run, qs, textIsID, listwiseStub{}, Options{BatchSize: 5}, "use batch size 0"},
	} {
		_, err := Rerank(context.Background(), tc.run, tc.qs, tc.docs, tc.s, tc.opts)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error containing %q", tc.name, err, tc.want)
		}
	}
}

type listwiseStub struct{}

func (listwiseStub) Listwise() bool { return true }
func (listwiseStub) Score(_ context.Context, _ string, docs []string) ([]float64, error) {
	return make([]float64, len(docs)), nil
}

// TestAllTiesAreWrittenAsReranked: a scorer that scores every document
// the same leaves the order it scored them in — the input order, or
// HAKARI's hash order — with KeepTail's unscored rest and the safeguard
// kept or dropped, and the written run means that order to every
// evaluator: trec_eval would otherwise rank the ties by doc id.
func TestAllTiesAreWrittenAsReranked(t *testing.T) {
	// Numbered upwards, so that trec_eval's doc-id order among ties is
	// the input order reversed; c101 a safeguard.
	run := listRun(map[string][]string{"q1": numbered("c", 101), "q2": numbered("s", 30)})
	qs := map[string]string{"q1": "a", "q2": "b"}
	qrels := ir.Qrels{"q1": {"c1": 1, "c3": 2, "c101": 1}, "q2": {"s2": 1, "s29": 1}}
	same := ScorerFunc(func(_ context.Context, _ string, docs []string) ([]float64, error) {
		out := make([]float64, len(docs))
		for i := range out {
			out[i] = 0.25
		}
		return out, nil
	})
	for _, tc := range []struct {
		name string
		opts Options
		// want builds the expected order of a query's input list.
		want func(qid string, in []ir.Hit) []string
	}{
		{"input order", Options{}, func(_ string, in []ir.Hit) []string { return ids(in[:min(100, len(in))]) }},
		{"depth 10, tail kept", Options{Depth: 10, KeepTail: true}, func(_ string, in []ir.Hit) []string { return ids(in) }},
		{"safeguard kept", Options{Safeguard: KeepSafeguard}, func(_ string, in []ir.Hit) []string { return ids(in) }},
		{"safeguard dropped", Options{Safeguard: DropSafeguard}, func(_ string, in []ir.Hit) []string { return ids(in[:min(100, len(in))]) }},
		{"hash order", Options{Order: HashOrder, Safeguard: KeepSafeguard}, func(qid string, in []ir.Hit) []string {
			in = slices.Clone(in)
			HashShuffle(qid, in)
			return ids(in)
		}},
	} {
		got, err := Rerank(context.Background(), run, qs, textIsID, same, tc.opts)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		for qid, hits := range got {
			if want := tc.want(qid, run[qid]); !slices.Equal(ids(hits), want) {
				t.Errorf("%s: %s reranked to %v, want %v", tc.name, qid, ids(hits), want)
			}
		}
		listed := measuretest.CheckRun(t, got, qrels)
		for qid, hits := range got {
			if !slices.Equal(listed[qid], ids(hits)) {
				t.Errorf("%s: %s is written in another order than reranked", tc.name, qid)
			}
		}
	}
}
