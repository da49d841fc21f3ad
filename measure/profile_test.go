package measure

import (
	"fmt"
	"strings"
	"testing"
)

// TestParseInProfiles: under the trec profile every documented spelling
// of a measure is trec_eval's; under hakari, "@k" names are HAKARI's and
// trec_eval's names are refused, saying which profile has them.
func TestParseInProfiles(t *testing.T) {
	for in, want := range map[string]string{
		"ndcg@10": "ndcg_cut.10", "NDCG@10": "ndcg_cut.10", "ndcg_cut.10": "ndcg_cut.10", "ndcg_cut_10": "ndcg_cut.10", "ndcg_at_10": "ndcg_cut.10",
		"recall@100": "recall.100", "recall_100": "recall.100", "map@100": "map_cut.100", "p@10": "P.10", "P@10": "P.10", "P_10": "P.10",
		"precision@5": "P.5", "hit@10": "success.10", "mrr": "recip_rank", "MRR": "recip_rank", "recip_rank": "recip_rank", "map": "map",
	} {
		ms, err := ParseIn(in, TrecProfile)
		if err != nil || len(ms) != 1 || ms[0].String() != want {
			t.Errorf("trec %q = %v, %v; want %s", in, ms, err, want)
		}
	}
	for in, want := range map[string]string{"ndcg@10": "ndcg@10", "mrr@10": "mrr@10", "hit@1": "hit@1", "acc@5": "hit@5"} {
		ms, err := ParseIn(in, HakariProfile)
		if err != nil || len(ms) != 1 || ms[0].String() != want || !ms[0].Family.Hakari() {
			t.Errorf("hakari %q = %v, %v; want %s", in, ms, err, want)
		}
	}
	for _, c := range []struct {
		in   string
		p    Profile
		want string
	}{{"mrr@10", TrecProfile, "hakari profile"}, {"ndcg_cut.10", HakariProfile, "trec profile"}, {"ndcg_at_10", HakariProfile, "trec profile"}, {"foo@10", TrecProfile, "unknown measure"}, {"ndcg@0", TrecProfile, "cutoff"}} {
		if _, err := ParseIn(c.in, c.p); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %q: %v; want an error saying %q", c.p, c.in, err, c.want)
		}
	}
	if ms, err := ParseIn("ndcg@10 recall.10,100", TrecProfile); err != nil || len(ms) != 3 {
		t.Errorf("a list: %v %v", ms, err)
	}
	if _, err := ParseProfile("trec_eval"); err != nil {
		t.Error(err)
	}
	if _, err := ParseProfile("bm25"); err == nil {
		t.Error("ParseProfile(bm25) accepted")
	}
}

func TestNamedTwice(t *testing.T) {
	for spec, want := range map[string]string{
		"P.5 P.10":                     "[P]",
		"-m P.5,10 -m map":             "[]",
		"ndcg_cut.10 ndcg@100 P.1 p@3": "[P ndcg_cut]",
		"map map":                      "[]",
		"recall.5 bogus recall.10":     "[recall]",
		"P.1 P.1":                      "[]", // the same list: trec_eval prints the same
		"P.5,10 -m P.10":               "[]",
		"P.10 -m P.5,10":               "[P]",
	} {
		if got := fmt.Sprint(NamedTwice(spec, TrecProfile)); got != want {
			t.Errorf("NamedTwice(%q) = %s, want %s", spec, got, want)
		}
	}
	if got := NamedTwice("ndcg@10 ndcg@100", HakariProfile); got != nil {
		t.Errorf("hakari profile: %v, want none (HAKARI's names are one measure each)", got)
	}
}

// TestOfficialNames: trec_eval's and pytrec_eval's names for the official
// set's measures parse under the trec profile (pytrec_eval's result key
// iprec_at_recall_0.10 included), recall levels keep to two decimals, and
// trec_eval's sets r2med cannot compute are refused with what it can.
func TestOfficialNames(t *testing.T) {
	for in, want := range map[string]string{
		"runid": "runid", "num_q": "num_q", "gm_map": "gm_map",
		"iprec_at_recall.0.1": "iprec_at_recall.0.10", "iprec_at_recall.1": "iprec_at_recall.1.00", "iprec_at_recall..05": "iprec_at_recall.0.05", "iprec_at_recall.x": "",
		"iprec_at_recall_0.10": "iprec_at_recall.0.10", "iprec_at_recall.0": "iprec_at_recall.0.00",
	} {
		ms, err := ParseIn(in, TrecProfile)
		if want == "" {
			if err == nil {
				t.Errorf("%q parsed as %v; want an error", in, ms)
			}
			continue
		}
		if err != nil || len(ms) != 1 || ms[0].String() != want {
			t.Errorf("trec %q = %v, %v; want %s", in, ms, err, want)
		}
	}
	ms, err := ParseIn("iprec_at_recall", TrecProfile)
	if err != nil || len(ms) != 11 || ms[0].Name() != "iprec_at_recall_0.00" || ms[10].Name() != "iprec_at_recall_1.00" || ms[5].RecallLevel() != 0.5 {
		t.Errorf("iprec_at_recall = %v, %v; want the 11 levels 0.00 to 1.00", ms, err)
	}
	ms, err = Parse("official")
	var names []string
	for _, m := range ms {
		names = append(names, m.Name())
	}
	if want := "runid num_q num_ret num_rel num_rel_ret map gm_map Rprec bpref recip_rank iprec_at_recall_0.00"; err != nil || !strings.HasPrefix(strings.Join(names, " "), want) || len(ms) != 10+11+9 || names[len(names)-1] != "P_1000" {
		t.Errorf("official = %v, %v; want %s … the 11 levels, P_5 … P_1000", names, err, want)
	}
	for _, in := range []string{"iprec_at_recall.0.125", "iprec_at_recall.1.5", "iprec_at_recall.-1", "iprec_at_recall.0.5,.50", "iprec_at_recall_0.125"} {
		if ms, err := ParseIn(in, TrecProfile); err == nil {
			t.Errorf("%q parsed as %v; want an error", in, ms)
		}
	}
	_, err = ParseIn("prefs", TrecProfile)
	if err == nil || !strings.Contains(err.Error(), "official, set and all_trec (runid num_q num_ret num_rel num_rel_ret map gm_map Rprec bpref recip_rank iprec_at_recall P relstring recall") || !strings.Contains(err.Error(), "ndcg_cut[.k,...]") || !strings.Contains(err.Error(), "preference files") {
		t.Errorf("prefs: %v; want an error saying why and naming the supported sets and measures", err)
	}
	// Free parameters are kept as typed, as trec_eval prints them.
	for in, want := range map[string]string{
		"utility.2,-1,-0.5,0.25": "utility_2,-1,-0.5,0.25",
		"ndcg.1=0,2=1":           "ndcg_1=0,2=1",
		"relstring.20":           "relstring_20",
		"set_F.0.5":              "set_F_0.5",
		"11pt_avg.0.8,0.2":       "11pt_avg_0.8,0.2",
		"Rprec_mult_0.20":        "Rprec_mult_0.20",
		"Rprec_mult.2.5":         "Rprec_mult_2.50",
		"relative_P_7":           "relative_P_7",
	} {
		ms, err := ParseIn(in, TrecProfile)
		if err != nil || len(ms) != 1 || ms[0].Name() != want {
			t.Errorf("%q = %v, %v; want %s", in, ms, err, want)
		}
	}
	for in, want := range map[string]string{
		"utility.1,-1":       "four coefficients",
		"ndcg.10":            "ndcg_cut.k",
		"G.1=x":              "finite number",
		"ndcg_rel.a=1":       "integer",
		"set_F.abc":          "finite number",
		"Rprec_mult.0.125":   "two decimals",
		"binG.1":             "takes no cutoffs",
		"11pt_avg.0.5,,0.25": "finite number",
	} {
		if ms, err := ParseIn(in, TrecProfile); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q = %v, %v; want an error saying %q", in, ms, err, want)
		}
	}
	if _, err := ParseIn("gm_map", HakariProfile); err == nil {
		t.Error("gm_map accepted under the hakari profile")
	}
	if _, err := ParseIn("official", HakariProfile); err == nil || !strings.Contains(err.Error(), `set "official" is trec_eval's`) {
		t.Errorf("official under the hakari profile: %v; want an error calling it trec_eval's set", err)
	}
	for spec, want := range map[string]string{
		"official -m P.10":                       "[P]", // trec_eval: P_10 alone
		"P -m P.10":                              "[P]",
		"official":                               "[]",
		"official P":                             "[]",
		"iprec_at_recall.0.5 -m iprec_at_recall": "[iprec_at_recall]",
		"official -m iprec_at_recall.0,.5":       "[iprec_at_recall]",
		"all_trec -m utility.2,-1,0,0":           "[utility]", // trec_eval: utility_2,-1,0,0 alone
		"all_trec -m ndcg.1=0 -m P.5":            "[P ndcg]",
		"set all_trec 11pt_avg":                  "[]",
		"11pt_avg.0.5 -m 11pt_avg.0.2":           "[11pt_avg]",
	} {
		if got := fmt.Sprint(NamedTwice(spec, TrecProfile)); got != want {
			t.Errorf("NamedTwice(%q) = %s, want %s", spec, got, want)
		}
	}
}
