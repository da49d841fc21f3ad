package measure

import (
	"os"
	"slices"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	cases := []struct {
		spec string
		want []Measure
	}{
		{"map", []Measure{{Family: MAP}}},
		{"ndcg_cut.10", []Measure{{Family: NDCGCut, Cutoff: 10}}},
		{"P.5,1,3", []Measure{{Family: P, Cutoff: 1}, {Family: P, Cutoff: 3}, {Family: P, Cutoff: 5}}},
		{"success", []Measure{{Family: Success, Cutoff: 1}, {Family: Success, Cutoff: 5}, {Family: Success, Cutoff: 10}}},
		{"-m map -m Rprec  bpref\n", []Measure{{Family: MAP}, {Family: RPrec}, {Family: BPref}}},
		{"ndcg@10", []Measure{{Family: HakariNDCG, Cutoff: 10}}},
		{"NDCG@10", []Measure{{Family: HakariNDCG, Cutoff: 10}}},
		{"hit@5 acc@5 Accuracy@5", []Measure{{Family: Hit, Cutoff: 5}, {Family: Hit, Cutoff: 5}, {Family: Hit, Cutoff: 5}}},
		{"recall@100 mrr@10 map@100 precision@1", []Measure{{Family: HakariRecall, Cutoff: 100}, {Family: HakariMRR, Cutoff: 10}, {Family: HakariMAP, Cutoff: 100}, {Family: HakariPrecision, Cutoff: 1}}},
		{"ndcg_at_10 map_at_1 recall_at_100 precision_at_25 mrr MRR", []Measure{{Family: NDCGCut, Cutoff: 10}, {Family: MAPCut, Cutoff: 1}, {Family: Recall, Cutoff: 100}, {Family: P, Cutoff: 25}, {Family: RecipRank}, {Family: RecipRank}}},
	}
	for _, c := range cases {
		got, err := Parse(c.spec)
		if err != nil {
			t.Errorf("Parse(%q): %v", c.spec, err)
			continue
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("Parse(%q) = %v, want %v", c.spec, got, c.want)
		}
	}

	ms, err := Parse("P recall ndcg_cut map_cut")
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 4*9 || ms[0] != (Measure{Family: P, Cutoff: 5}) || ms[8] != (Measure{Family: P, Cutoff: 1000}) {
		t.Errorf("default cutoffs: %v", ms)
	}
}

func TestParseErrors(t *testing.T) {
	for _, spec := range []string{
		"", "-m", "foo", "map.5", "ndcg.10", "P.0", "P.-1", "P.5,5", "P.", "P.5,", "P.a", "P.1e3",
		"P.99999999999999999999", "ndcg@0", "ndcg@", "bogus@5", "ndcg@10x", "ndcg_cut_10", "success_at_5",
		"Map", "p.5",
	} {
		if ms, err := Parse(spec); err == nil {
			t.Errorf("Parse(%q) = %v, want an error", spec, ms)
		}
	}
	_, err := Parse("ndcg_cut10")
	if err == nil || !strings.Contains(err.Error(), "ndcg_cut[.k,...]") || !strings.Contains(err.Error(), "mrr@k") {
		t.Errorf("unknown-name error should list the known names: %v", err)
	}
}

func TestMeasureNames(t *testing.T) {
	cases := []struct {
		m            Measure
		name, spec   string
		integer, cut bool
	}{
		{Measure{Family: NumRet}, "num_ret", "num_ret", true, false},
		{Measure{Family: MAP}, "map", "map", false, false},
		{Measure{Family: P, Cutoff: 5}, "P_5", "P.5", false, true},
		{Measure{Family: NDCGCut, Cutoff: 10}, "ndcg_cut_10", "ndcg_cut.10", false, true},
		{Measure{Family: Hit, Cutoff: 10}, "hit@10", "hit@10", false, true},
		{Measure{Family: HakariMAP, Cutoff: 100}, "map@100", "map@100", false, true},
	}
	for _, c := range cases {
		if c.m.Name() != c.name || c.m.String() != c.spec || c.m.Integer() != c.integer || c.m.Family.HasCutoff() != c.cut {
			t.Errorf("%#v: Name %q String %q Integer %v HasCutoff %v; want %q %q %v %v",
				c.m, c.m.Name(), c.m.String(), c.m.Integer(), c.m.Family.HasCutoff(), c.name, c.spec, c.integer, c.cut)
		}
		if back, err := Parse(c.m.String()); err != nil || len(back) != 1 || back[0] != c.m {
			t.Errorf("Parse(%q) = %v, %v; want %v back", c.m.String(), back, err, c.m)
		}
	}
}

func TestRefMeasureList(t *testing.T) {
	spec, err := os.ReadFile(refPath(t, "measures.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(MustParse(string(spec)), MustParse(refMeasureList)) {
		t.Errorf("refMeasureList has drifted from measures.txt:\n%s", spec)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"map", "P.1,3,5", "ndcg_cut.10", "ndcg@10", "-m P.5 -m recall", "mrr", "ndcg_at_10", "P.5,5", "hit@0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		ms, err := Parse(spec)
		if err != nil {
			if ms != nil {
				t.Fatalf("Parse(%q) returned measures with an error", spec)
			}
			return
		}
		if len(ms) == 0 {
			t.Fatalf("Parse(%q) returned nothing and no error", spec)
		}
		for _, m := range ms {
			if err := m.validate(); err != nil {
				t.Fatalf("Parse(%q) produced an invalid measure: %v", spec, err)
			}
			back, err := Parse(m.String())
			if err != nil || len(back) != 1 || back[0] != m {
				t.Fatalf("Parse(%q) gave %v, whose String %q parses as %v, %v", spec, m, m.String(), back, err)
			}
		}
	})
}
