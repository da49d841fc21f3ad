package nano

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/r2med/r2med/fusion"
	"github.com/r2med/r2med/ir"
)

// The expected indices are what CPython 3.11 returns for
// random.Random(seed).choice(list(range(n))), generated once with
// python3 and fixed here so the test needs no Python.
func TestChoiceIndexMatchesCPython(t *testing.T) {
	for _, c := range []struct {
		seed string
		n    int
		want int
	}{
		{"20260524\x00NanoR2MEDBiology\x00q1\x00positive_safeguard", 1, 0},
		{"20260524\x00NanoR2MEDBiology\x00q1\x00positive_safeguard", 2, 1},
		{"20260524\x00NanoR2MEDBiology\x00q1\x00positive_safeguard", 19, 15},
		{"20260524\x00NanoR2MEDMedQADiag\x00573\x00positive_safeguard", 8, 3},
		{"20260524\x00NanoTest\x00q2\x00positive_safeguard", 3, 2},
		{"20260524\x00NanoTest\x00q3\x00positive_safeguard", 5, 2},
		{"17\x00Split\x00ü-query\x00positive_safeguard", 1000, 813},
		{"abc", 17, 14},
		// _randbelow on 1<<31 and 1<<40+3 (two-word getrandbits).
		{"abc", 1 << 31, 1976556168},
		{"abc", 1<<40 + 3, 1011714632754},
		{"", 100, 58},
		{"\x00\x00x", 1000, 60},
	} {
		if got := choiceIndex(c.seed, c.n); got != c.want {
			t.Errorf("choice(%q, n=%d) = %d, want %d", c.seed, c.n, got, c.want)
		}
	}
}

// Random("abc").getrandbits(32), then (7), then (64) in CPython.
func TestGetrandbitsMatchesCPython(t *testing.T) {
	r := newPyRandom("abc")
	got := []uint64{r.getrandbits(32), r.getrandbits(7), r.getrandbits(64)}
	want := []uint64{3315820543, 126, 8489244102664399922}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("getrandbits = %v, want %v", got, want)
	}
}

func TestSafeguardSeed(t *testing.T) {
	if got, want := SafeguardSeed(20260524, "NanoR2MEDBiology", "q1"), "20260524\x00NanoR2MEDBiology\x00q1\x00positive_safeguard"; got != want {
		t.Errorf("seed %q, want %q", got, want)
	}
}

func docID(i int) string { return fmt.Sprintf("d%03d", i) }

func rangeList(from, to, step int) []ir.Hit {
	var hits []ir.Hit
	for i := from; i != to; i += step {
		hits = append(hits, ir.Hit{DocID: docID(i), Score: float64(1000 - len(hits))})
	}
	return hits
}

// hybridSet has 120 documents d000..d119 and four queries:
//
//	q1: bm25 d000→d119, dense reversed; d000 ties d119 at the top (equal
//	    sums, equal best rank) and wins on id. Positive d000.
//	q2: both lists d000→d119, so the top 100 is d000..d099; positives
//	    d105 d110 d117 are outside it.
//	q3: likewise, positives d100..d104.
//	q4: no dense list; positive d050 at rank 51.
func hybridSet() *Set {
	s := &Set{Split: "NanoTest", Qrels: make(ir.Qrels)}
	s.opts = Options{Split: "NanoTest"}.withDefaults(&ir.Task{})
	for i := range 120 {
		s.Corpus = append(s.Corpus, ir.Doc{ID: docID(i), Text: "t"})
	}
	for _, q := range []string{"q1", "q2", "q3", "q4"} {
		s.Queries = append(s.Queries, ir.Query{ID: q, Text: q})
	}
	s.Qrels.Add("q1", "d000", 1)
	for _, d := range []string{"d117", "d105", "d110"} {
		s.Qrels.Add("q2", d, 1)
	}
	for i := 100; i < 105; i++ {
		s.Qrels.Add("q3", docID(i), 1)
	}
	s.Qrels.Add("q4", "d050", 1)
	bm := ir.Run{"q1": rangeList(0, 120, 1), "q2": rangeList(0, 120, 1), "q3": rangeList(0, 120, 1), "q4": rangeList(0, 120, 1)}
	dense := ir.Run{"q1": rangeList(119, -1, -1), "q2": rangeList(0, 120, 1), "q3": rangeList(0, 120, 1)}
	s.Subsets = []Subset{
		{Name: "bm25", Config: BM25Config, Label: "BM25", TopK: 500, Run: bm},
		{Name: "dense", Config: "dense", Label: "Dense", TopK: 500, Run: dense},
	}
	return s
}

func TestHybridSafeguard(t *testing.T) {
	s := hybridSet()
	s.addHybrid()
	h := s.Subset("reranking_hybrid")
	if h == nil || h.TopK != 100 || h.Config != HybridConfig {
		t.Fatalf("subset %+v", h)
	}
	fused := fusion.RRF([]ir.Run{s.Subset("bm25").Run, s.Subset("dense").Run}, 100, 100)
	for _, q := range []string{"q1", "q4"} {
		if got := h.Run[q]; !reflect.DeepEqual(got, fused[q]) {
			t.Errorf("%s: the RRF top 100 holds a positive, so the row is that list unchanged", q)
		}
	}
	if h.Run["q1"][0].DocID != "d000" || h.Run["q1"][1].DocID != "d119" {
		t.Errorf("q1 starts %v, want d000 then d119", h.Run["q1"][:2])
	}
	// Sorted positives d105 d110 d117; CPython's choice on q2's seed picks
	// index 2; q3's picks index 2 of d100..d104.
	wantSafeguards := map[string]string{"q2": "d117", "q3": "d102"}
	if !reflect.DeepEqual(h.Safeguards, wantSafeguards) {
		t.Errorf("safeguards %v, want %v", h.Safeguards, wantSafeguards)
	}
	for q, doc := range wantSafeguards {
		list := h.Run[q]
		if len(list) != 101 {
			t.Fatalf("%s: %d candidates, want 101", q, len(list))
		}
		if !reflect.DeepEqual(list[:100], fused[q]) {
			t.Errorf("%s: the first 100 candidates are not the RRF top 100", q)
		}
		if list[100].DocID != doc {
			t.Errorf("%s: candidate 101 is %s, want %s", q, list[100].DocID, doc)
		}
	}
	// The safeguard keeps its fused score (rank 118 in both lists).
	k := 100.0
	if got, want := h.Run["q2"][100].Score, 0.0+1/(k+118)+1/(k+118); got != want {
		t.Errorf("safeguard score %v, want %v", got, want)
	}
	// Rebuilding draws the same documents.
	s2 := hybridSet()
	s2.addHybrid()
	if !reflect.DeepEqual(s2.Subset("reranking_hybrid"), h) {
		t.Error("a second build differs")
	}
	// The split name is part of the seed: under NanoR2MEDBiology CPython
	// picks d105 for q2.
	s3 := hybridSet()
	s3.Split = "NanoR2MEDBiology"
	s3.addHybrid()
	if got := s3.Subset("reranking_hybrid").Safeguards["q2"]; got != "d105" {
		t.Errorf("split NanoR2MEDBiology: safeguard %s, want d105", got)
	}
}

func TestHybridSmallCorpus(t *testing.T) {
	// Five documents, short lists: the fused list (3 documents) is shorter
	// than min(100, |corpus|), and the safeguard follows it at rank 4.
	s := &Set{Split: "NanoTest", Qrels: ir.Qrels{"q3": {"e": 1}}}
	s.opts = Options{Split: "NanoTest"}.withDefaults(&ir.Task{})
	for _, id := range []string{"a", "b", "c", "d", "e"} {
		s.Corpus = append(s.Corpus, ir.Doc{ID: id, Text: id})
	}
	s.Queries = []ir.Query{{ID: "q3", Text: "x"}}
	s.Subsets = []Subset{
		{Name: "bm25", Config: BM25Config, TopK: 500, Run: ir.Run{"q3": {{DocID: "a", Score: 2}, {DocID: "b", Score: 1}}}},
		{Name: "dense", Config: "dense", TopK: 500, Run: ir.Run{"q3": {{DocID: "c", Score: 2}, {DocID: "a", Score: 1}}}},
	}
	s.addHybrid()
	h := s.Subset("reranking_hybrid")
	if got, want := docIDs(h.Run["q3"]), []string{"a", "c", "b", "e"}; !reflect.DeepEqual(got, want) {
		t.Errorf("candidates %v, want %v", got, want)
	}
	if h.Run["q3"][3].Score != 0 {
		t.Errorf("a safeguard outside both lists scores 0, got %v", h.Run["q3"][3].Score)
	}
}

func TestBuildCandidates(t *testing.T) {
	task := taskOf(
		[]string{"q1|kidney stones and renal colic", "q2|migraine with aura"},
		[]string{
			"k|Renal colic from kidney stones causes flank pain.",
			"m|Migraine aura precedes the headache.",
			"h|Hypertension is often silent.",
			"x|Stones in the kidney: nephrolithiasis.",
		},
		[]string{"q1 k 1", "q2 m 1"},
	)
	s, err := Build(task, Options{Split: "NanoToy"})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Subsets) != 1 || s.Subsets[0].Name != "bm25" {
		t.Fatalf("without a dense run only bm25 is built, got %d subsets", len(s.Subsets))
	}
	bm := s.Subset("bm25").Run
	// Robertson ranks the whole corpus, zero scores last in corpus order.
	if len(bm["q1"]) != 4 || bm["q1"][0].DocID != "k" || bm["q2"][0].DocID != "m" {
		t.Errorf("bm25 %v", bm)
	}
	if got := docIDs(bm["q2"])[1:]; !reflect.DeepEqual(got, []string{"k", "h", "x"}) || bm["q2"][1].Score != 0 {
		t.Errorf("q2 zero-score fill %v", bm["q2"])
	}

	dense := ir.Run{
		"q1": {{DocID: "x", Score: 0.9}, {DocID: "k", Score: 0.8}, {DocID: "h", Score: 0.1}},
		"q9": {{DocID: "not-in-corpus", Score: 1}}, // not a Nano query: ignored
	}
	s, err = Build(task, Options{Split: "NanoToy", Dense: dense, DenseConfig: "harrier_oss_v1_270m", CandidateDepth: 2})
	if err != nil {
		t.Fatal(err)
	}
	d := s.Subset("dense")
	if d.Config != "harrier_oss_v1_270m" || !reflect.DeepEqual(docIDs(d.Run["q1"]), []string{"x", "k"}) || len(d.Run["q2"]) != 0 {
		t.Errorf("dense subset %+v", d)
	}
	h := s.Subset("reranking_hybrid")
	if h == nil || len(h.Run["q1"]) == 0 || len(h.Run["q2"]) == 0 {
		t.Fatalf("hybrid %+v", h)
	}
	// q2 has only its bm25 list, cut to 2: m then k.
	if got := docIDs(h.Run["q2"]); !reflect.DeepEqual(got, []string{"m", "k"}) {
		t.Errorf("q2 hybrid %v", got)
	}

	for _, bad := range []ir.Run{
		{"q1": {{DocID: "zz", Score: 1}}},
		{"q1": {{DocID: "k", Score: 1}, {DocID: "k", Score: 0.5}}},
	} {
		if _, err := Build(task, Options{Split: "NanoToy", Dense: bad}); err == nil || !strings.Contains(err.Error(), "dense run ranks document") {
			t.Errorf("dense %v: err = %v", bad, err)
		}
	}
}
