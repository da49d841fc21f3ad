package measure

import (
	"fmt"
	"slices"
	"strings"
)

// Profile is a set of measure definitions: trec_eval's (what R2MED, BEIR
// and pytrec_eval report) or HAKARI-Bench's. Where the spellings of the
// two overlap ("ndcg@10"), the profile, never the spelling, says which
// definition a name means.
type Profile string

// The profiles ParseIn reads names in.
const (
	TrecProfile   Profile = "trec"   // trec_eval 9.0.8: ndcg@10 is ndcg_cut.10
	HakariProfile Profile = "hakari" // HAKARI-Bench's metrics.py: ndcg@10 is its own
)

// ParseProfile reads a profile name; "" is TrecProfile.
func ParseProfile(s string) (Profile, error) {
	switch p := Profile(strings.ToLower(strings.TrimSpace(s))); p {
	case "", TrecProfile, "trec_eval":
		return TrecProfile, nil
	case HakariProfile:
		return HakariProfile, nil
	}
	return "", fmt.Errorf("unknown measure profile %q; want trec (trec_eval's measures, as R2MED reports them) or hakari (HAKARI-Bench's)", s)
}

// trecAt maps the "family@k" spellings to trec_eval families under the
// trec profile.
var trecAt = map[string]Family{
	"ndcg": NDCGCut, "recall": Recall, "map": MAPCut, "p": P, "precision": P,
	"hit": Success, "acc": Success, "accuracy": Success, "success": Success,
}

// ParseIn reads spec as Parse does, every documented spelling of a
// measure naming the profile's definition of it:
//
//   - trec: "ndcg@10", "ndcg_cut.10", "ndcg_cut_10" (trec_eval's output
//     name), "NDCG@10" and "ndcg_at_10" (R2MED's keys) are all
//     ndcg_cut.10; recall@k, map@k, p@k and hit@k are recall.k,
//     map_cut.k, P.k and success.k; mrr is recip_rank. A HAKARI-only
//     measure (mrr@10) is an error saying to use the hakari profile.
//   - hakari: "ndcg@10" and the other "family@k" names are HAKARI-Bench's
//     measures; a trec_eval name is an error saying to use the trec
//     profile.
func ParseIn(spec string, p Profile) ([]Measure, error) {
	return parseSpec(spec, func(tok string) ([]Measure, error) { return parseIn(tok, p) })
}

func parseIn(tok string, p Profile) ([]Measure, error) {
	switch p {
	case HakariProfile:
		ms, err := parseOne(tok)
		if err != nil {
			return nil, err
		}
		for _, m := range ms {
			if !m.Family.Hakari() && len(ms) > 1 && ms[0].Family != ms[len(ms)-1].Family {
				return nil, fmt.Errorf("measure set %q is trec_eval's; the hakari profile computes HAKARI-Bench's measures (ndcg@10, recall@100, mrr@10, hit@10…): use the trec profile for trec_eval's", tok)
			}
			if !m.Family.Hakari() {
				return nil, fmt.Errorf("measure %q is trec_eval's %s; the hakari profile computes HAKARI-Bench's measures (ndcg@10, recall@100, mrr@10, hit@10…): use the trec profile for trec_eval's", tok, m)
			}
		}
		return ms, nil
	case TrecProfile, "":
	default:
		return nil, fmt.Errorf("measure: unknown profile %q", p)
	}
	if name, k, ok := strings.Cut(tok, "@"); ok {
		f, known := trecAt[strings.ToLower(name)]
		if !known {
			if _, hakari := hakariFamily(strings.ToLower(name)); hakari {
				return nil, fmt.Errorf("measure %q is HAKARI-Bench's only (trec_eval has no %s cut at k; recip_rank is its mrr): use the hakari profile", tok, name)
			}
			return nil, unknown(tok)
		}
		c, err := parseCutoff(k)
		if err != nil {
			return nil, fmt.Errorf("measure %q: %v", tok, err)
		}
		return []Measure{{Family: f, Cutoff: c}}, nil
	}
	// trec_eval's output names: ndcg_cut_10, P_5, recall_100, success_10,
	// iprec_at_recall_0.50, Rprec_mult_0.20 (pytrec_eval's result keys too).
	for _, f := range []Family{IPrecAtRecall, RPrecMult} {
		if lvl, ok := strings.CutPrefix(tok, families[f].name+"_"); ok {
			h, err := parseLevel(lvl, families[f].maxLevel)
			if err != nil {
				return nil, fmt.Errorf("measure %q: %v", tok, err)
			}
			return []Measure{{Family: f, Cutoff: h}}, nil
		}
	}
	if i := strings.LastIndexByte(tok, '_'); i > 0 && !strings.Contains(tok, ".") {
		if f, ok := trecFamily(tok[:i]); ok && families[f].cutoffs != nil {
			if c, err := parseCutoff(tok[i+1:]); err == nil {
				return []Measure{{Family: f, Cutoff: c}}, nil
			}
		}
	}
	return parseOne(tok)
}

// NamedTwice lists, in table order, the trec_eval families with cutoffs,
// recall levels or parameters for which spec (white-space separated, read
// under profile p) names parameters that trec_eval would not print.
// trec_eval evaluates such a family at the first list given with
// parameters ("-m P.5 -m P.10" prints P_5 alone, "-m official -m P.10"
// P_10 alone, "-m all_trec -m utility.2,-1,0,0" utility_2,-1,0,0 alone),
// at its defaults only when every mention is bare ("P", "official");
// Evaluate computes the union of all of them, so a tool that prints them
// says so. Specifications that do not parse are skipped: ParseIn reports
// them.
func NamedTwice(spec string, p Profile) []Family {
	if p == HakariProfile {
		return nil
	}
	var first, union [numFamilies][]Measure
	var bare [numFamilies]bool
	for _, tok := range strings.Fields(spec) {
		if tok == "-m" {
			continue
		}
		ms, err := parseIn(tok, p)
		if err != nil {
			continue
		}
		// Each family the token names is bare (a set, "P") when it is at
		// its defaults, else a list given with parameters.
		var named [numFamilies][]Measure
		for _, m := range ms {
			if f := m.Family; f.HasCutoff() || f.HasRecallLevels() || f.HasParams() {
				named[f] = append(named[f], m)
			}
		}
		for f, got := range named {
			if got == nil {
				continue
			}
			for _, m := range got {
				if !slices.Contains(union[f], m) {
					union[f] = append(union[f], m)
				}
			}
			switch {
			case slices.Equal(got, defaults(Family(f))):
				bare[f] = true
			case first[f] == nil:
				first[f] = got
			}
		}
	}
	var out []Family
	for f := range numFamilies {
		want := first[f]
		if want == nil && bare[f] {
			want = defaults(f)
		}
		if len(union[f]) > len(want) {
			out = append(out, f)
		}
	}
	return out
}
