package taskstats

import (
	"encoding/json"
	"os"
	"reflect"
	"testing"

	"github.com/r2med/r2med/internal/pynum"
	"github.com/r2med/r2med/ir"
)

func intp(n int) *int { return &n }

// TestScoreCandidatesPythonExact compares with values computed in Python by
// testdata/gen-cardmetrics.py, bit for bit; the data are chosen so that
// Go's math.Log2 or an uncompensated sum would change every nDCG@10.
func TestScoreCandidatesPythonExact(t *testing.T) {
	data, err := os.ReadFile("testdata/cardmetrics.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		Name      string              `json:"name"`
		TopK      int                 `json:"top_k"`
		Safeguard bool                `json:"safeguard"`
		Qrels     map[string][]string `json:"qrels"`
		Lists     map[string][]string `json:"lists"`
		Want      CandidateMetrics    `json:"want"`
	}
	if err := json.Unmarshal(data, &cases); err != nil {
		t.Fatal(err)
	}
	if len(cases) != 3 {
		t.Fatalf("%d cases, want 3", len(cases))
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			q := make(ir.Qrels)
			for qid, docs := range c.Qrels {
				for _, d := range docs {
					q.Add(qid, d, 1)
				}
			}
			got, err := ScoreCandidates(q, c.Lists, CandidateSubset{Name: c.Name, Config: c.Name, Label: "L", TopK: c.TopK, Safeguard: c.Safeguard})
			if err != nil {
				t.Fatal(err)
			}
			want := c.Want
			want.Config, want.Label, want.Source, want.TopK = c.Name, "L", CandidateSource, c.TopK
			if !reflect.DeepEqual(got, want) {
				t.Errorf("got  %+v\nwant %+v", got, want)
			}
			if got.NDCGAt10 != want.NDCGAt10 {
				t.Errorf("nDCG@10 %v, want %v exactly", got.NDCGAt10, want.NDCGAt10)
			}
		})
	}
}

// TestScoreCandidatesByHand checks each rule of the card's definition on
// lists small enough to work out.
func TestScoreCandidatesByHand(t *testing.T) {
	q := ir.Qrels{
		"a": {"p1": 1, "n1": 0},
		"b": {"p2": 2, "p3": 1},
		"c": {"p4": 1},
		"z": {"n2": 0}, // no positive: not a card query
	}
	lists := map[string][]string{
		"a": {"p1", "x", "p1"},             // repeated positive gains twice
		"b": {"x", "y", "p3"},              // TopK+1 row ending in a positive: a safeguard
		"c": {"x", "p4", "y"},              // TopK+1 row whose positive is inside: no safeguard
		"z": {"n2"},                        // ignored
		"q": {"p1"},                        // not judged: ignored
		"":  {"p1", "p2", "p3", "p4", "x"}, // ignored
	}
	got, err := ScoreCandidates(q, lists, CandidateSubset{Name: "h", Config: "hyb", Label: "Hybrid", TopK: 2, Safeguard: true})
	if err != nil {
		t.Fatal(err)
	}
	// a: DCG 1 + 1/log2(4) = 1.5 over an ideal of 1 (one positive).
	// b: p3 at rank 3 (inside the top 10) gives 1/2 over 1 + 1/log2(3).
	// c: p4 at rank 2, 1/log2(3) over 1.
	ndcgB := 0.5 / (1 + 1/1.584962500721156)
	ndcgC := 1 / 1.584962500721156
	var s pynum.Sum
	for _, v := range []float64{1.5, ndcgB, ndcgC} {
		s.Add(v)
	}
	want := CandidateMetrics{
		Config: "hyb", Label: "Hybrid", Source: CandidateSource, TopK: 2,
		NDCGAt10: s.Value() / 3, HitAt10: 1,
		// Recall over the first TopK of TopK+1 rows: a covers p1 (once),
		// b's p3 is its safeguard, c covers p4: 2 of 4 positives.
		RecallAt100: 0.5, RelevantCoverageAt100: 0.5,
		CandidateCountMin: 3, CandidateCountMax: 3, CandidateCountMean: 3,
		QueryCount: 3, QueryCoverage: 1,
		SafeguardPositiveRows: intp(1), RowsWith101: intp(3),
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}

	// Without the safeguard flag, nothing is left out of recall and no
	// rows are counted.
	got, err = ScoreCandidates(q, lists, CandidateSubset{Name: "b", Config: "bm25", Label: "BM25", TopK: 2})
	if err != nil {
		t.Fatal(err)
	}
	if got.RecallAt100 != 0.75 || got.SafeguardPositiveRows != nil || got.RowsWith101 != nil {
		t.Errorf("recall %v, safeguard rows %v, rows of 3 %v; want 0.75, nil, nil", got.RecallAt100, got.SafeguardPositiveRows, got.RowsWith101)
	}

	// Missing and empty lists count as empty and lower the coverage.
	got, err = ScoreCandidates(q, map[string][]string{"a": {"p1"}, "b": {}}, CandidateSubset{TopK: 100})
	if err != nil {
		t.Fatal(err)
	}
	if got.QueryCoverage != 1.0/3 || got.CandidateCountMin != 0 || got.CandidateCountMax != 1 || got.HitAt10 != 1.0/3 || got.RecallAt100 != 0.25 {
		t.Errorf("sparse lists: %+v", got)
	}

	// The 101st candidate never counts towards recall@100, and the first
	// 100 of a longer list do.
	long := make([]string, 0, 101)
	for i := range 100 {
		long = append(long, "x"+string(rune('a'+i%26))+string(rune('a'+i/26)))
	}
	long = append(long[:99], "p4", "p2")
	got, err = ScoreCandidates(ir.Qrels{"c": {"p4": 1, "p2": 1}}, map[string][]string{"c": long}, CandidateSubset{TopK: 500})
	if err != nil {
		t.Fatal(err)
	}
	if got.RecallAt100 != 0.5 || got.NDCGAt10 != 0 || got.HitAt10 != 0 {
		t.Errorf("long list: recall %v nDCG %v hit %v, want 0.5 0 0", got.RecallAt100, got.NDCGAt10, got.HitAt10)
	}

	if _, err := ScoreCandidates(ir.Qrels{"z": {"n": 0}}, lists, CandidateSubset{}); err == nil {
		t.Error("qrels without positives were scored")
	}
}

func TestRounded(t *testing.T) {
	m := CandidateMetrics{
		NDCGAt10: 0.3454997187149365, HitAt10: 0.5922330097087378, RecallAt100: 0.68181818181818182,
		CandidateCountMean: 100.02912621359224, QueryCoverage: 2.0 / 3, RelevantCoverageAt100: 0.68181818181818182,
	}
	r := m.Rounded()
	// The Biology card's values.
	if r.NDCGAt10 != 0.3454997187 || r.HitAt10 != 0.5922330097 || r.RecallAt100 != 0.6818181818 ||
		r.CandidateCountMean != 100.029126 || r.QueryCoverage != 0.6666666667 {
		t.Errorf("rounded %+v", r)
	}
	if m.NDCGAt10 != 0.3454997187149365 {
		t.Error("Rounded changed its receiver")
	}
}
