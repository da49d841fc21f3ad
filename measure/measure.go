// Package measure scores ranked runs against relevance judgments.
//
// Two families of measures live here, and one evaluator computes any set of
// either kind in a single pass per query:
//
//   - trec_eval measures, every one of its all_trec set (runid num_q
//     num_ret num_rel num_rel_ret map gm_map Rprec bpref recip_rank
//     iprec_at_recall P relstring recall infAP gm_bpref Rprec_mult utility
//     11pt_avg binG G ndcg ndcg_rel Rndcg ndcg_cut map_cut relative_P
//     success set_P set_relative_P set_recall set_map set_F
//     num_nonrel_judged_ret), computed exactly as trec_eval 9.0.8 computes
//     them. That is the trec_eval inside pytrec_eval,
//     so these are also the numbers R2MED and BEIR report. WriteTrecEval
//     prints them byte for byte as "trec_eval -q -m ..." does.
//   - HAKARI-Bench measures (hit@k precision@k recall@k mrr@k ndcg@k map@k),
//     computed as hakari_bench/metrics.py computes them: the run's list order
//     is the ranking, the gain is binary and the mean is over every run query,
//     its float additions made in metrics.py's order (Options.QueryOrder).
//     TestHakariReference holds them bit for bit to what metrics.py (commit
//     217c872) printed for crafted rankings (testdata/hakari).
//
// # Names
//
// Parse reads the names people already type:
//
//   - trec_eval's "-m" syntax: "map", "P.5", "ndcg_cut.1,10,100". A family
//     that takes cutoffs and is named without them gets trec_eval's default
//     list (5,10,15,20,30,100,200,500,1000; success: 1,5,10);
//     iprec_at_recall takes recall levels ("iprec_at_recall.0,.5,1", with at
//     most two decimals), by default 0.0 to 1.0 by tenths, and Rprec_mult
//     multiples of R (by default 0.2 to 2.0 by fifths). Families with free
//     parameters keep them as typed, as trec_eval prints them after the
//     name: "utility.2,-1,0,0" (utility_2,-1,0,0), "set_F.0.5",
//     "11pt_avg.0.2,0.5,0.8", "relstring.20", and grade=gain pairs for
//     ndcg, ndcg_rel, Rndcg and G ("ndcg.1=0,2=1"). "official" is
//     trec_eval's default set: runid num_q num_ret num_rel num_rel_ret map
//     gm_map Rprec bpref recip_rank iprec_at_recall P, at their defaults;
//     "set" and "all_trec" are its sets of those names. Its preference and
//     judge-group sets (prefs, all_prefs, qrels_jg) read files r2med does
//     not and are refused, the error listing what is supported.
//   - "family@k" always means the HAKARI-Bench measure, because "@k" is
//     HAKARI's own spelling and its definitions differ from trec_eval's
//     (list order instead of score order, map divided by min(R,k), mrr cut at
//     k). Family names are case-insensitive; acc, accuracy and hit are one
//     family, as in HAKARI.
//   - R2MED's result keys "ndcg_at_k", "map_at_k", "recall_at_k",
//     "precision_at_k" and "mrr" name the trec_eval measures R2MED computes
//     them with (ndcg_cut.k, map_cut.k, recall.k, P.k, recip_rank).
//
// # trec_eval semantics reproduced
//
// Scores are rounded to float32 before ranking, since trec_eval 9.0.8 keeps
// them in a C float; the ranking is score descending with ties broken by
// document id descending in byte order, and the run's own order is ignored.
// Only queries with both results and judgments are evaluated, and means are
// over those queries, or over every judged query with Options.Complete (-c).
// A judged document is relevant when its grade reaches the relevance level;
// negative grades mark a document as judged-but-unjudged (trec_eval's pool
// convention), which bpref skips and nothing counts as relevant, and which
// infAP, relstring ('.') and num_nonrel_judged_ret tell from documents
// outside the qrels ('-'). ndcg and ndcg_cut use the grade itself as the
// gain, whatever the relevance level; ndcg, ndcg_rel, Rndcg and G take
// other gains per grade, sorted as trec_eval sorts them (glibc's merge
// sort on the gains' difference truncated to an int, which takes gains
// less than 1 apart for equal).
//
// runid, num_q, gm_map and gm_bpref are printed in the summary only,
// relstring per query only, as trec_eval prints them
// (Family.NoPerQueryNumber says so to per-query comparisons). Per query, a
// Result holds trec_eval's own per-query values, which pytrec_eval
// returns: 1 for num_q, log(max(AP, 0.00001)) for gm_map (bpref for
// gm_bpref), 0 for runid (its text is Result.RunID) and relstring (its
// text is QueryResult.Text). The geometric means' summary is the exp of
// the mean of those logs, a judged query that -c adds counting
// log(0.00001); pynum's Exp and Log, correctly rounded, stand for glibc's
// (Go's math.Exp is an ulp off where glibc is not, which a mean on a half
// shows in the fourth decimal). iprec_at_recall at level r is the highest precision at or below
// the rank of the (long)(r·R+0.9)-th relevant document retrieved (0 when
// fewer are retrieved), 9.0.8's rule: trec_eval 10.0 rounds r·R instead
// and prints other values.
//
// Two trec_eval rules are not reproduced: a family named twice ("-m P.5 -m
// P.10") is evaluated at the union of its cutoffs, where trec_eval keeps only
// the first list; and a run that lists a document twice for a query, which
// trec_eval rejects, is ranked as if the copies were distinct documents
// (trec.ReadRun already rejects such files).
package measure

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Family is a kind of measure. The trec_eval families are declared in
// trec_eval's own measure-table order, the order it prints them in whatever
// order they were requested, so sorting measures by family then cutoff gives
// trec_eval's output order.
type Family uint8

// trec_eval families.
const (
	RunID              Family = iota // runid: the run's tag, printed in the summary only
	NumQ                             // num_q: queries averaged over, printed in the summary only
	NumRet                           // num_ret: documents retrieved
	NumRel                           // num_rel: relevant documents judged
	NumRelRet                        // num_rel_ret: relevant documents retrieved
	MAP                              // map: mean average precision
	GMMAP                            // gm_map: geometric mean of average precision, printed in the summary only
	RPrec                            // Rprec: precision after R documents
	BPref                            // bpref: binary preference
	RecipRank                        // recip_rank: reciprocal rank of the first relevant document
	IPrecAtRecall                    // iprec_at_recall.r: interpolated precision at recall level r
	P                                // P.k: precision at k
	RelString                        // relstring.n: the grades of the first n documents as text, printed per query only
	Recall                           // recall.k: recall at k
	InfAP                            // infAP: inferred AP, skipping documents judged with a negative grade
	GMBPref                          // gm_bpref: geometric mean of bpref, printed in the summary only
	RPrecMult                        // Rprec_mult.m: precision at m·R documents
	Utility                          // utility.a,b,c,d: a·relret + b·nonrelret + c·relmissed + d·nonrelmissed
	PtAvg11                          // 11pt_avg: interpolated precision averaged over recall levels
	BinG                             // binG: binary G
	G                                // G: normalized gain (gains per grade)
	NDCG                             // ndcg: nDCG over the whole ranking (gains per grade)
	NDCGRel                          // ndcg_rel: nDCG averaged over the relevant documents (gains per grade)
	RNDCG                            // Rndcg: nDCG averaged at the R levels of each gain (gains per grade)
	NDCGCut                          // ndcg_cut.k: nDCG at k
	MAPCut                           // map_cut.k: average precision at k, over all R relevant documents
	RelativeP                        // relative_P.k: precision at k over the best possible, R/min(k,R)
	Success                          // success.k: 1 when a relevant document is in the top k
	SetP                             // set_P: precision of the whole ranking
	SetRelativeP                     // set_relative_P: set_P over the best possible
	SetRecall                        // set_recall: recall of the whole ranking
	SetMAP                           // set_map: set_P times set_recall
	SetF                             // set_F.b: F measure of the whole ranking, recall weighted b
	NumNonrelJudgedRet               // num_nonrel_judged_ret: judged non-relevant documents retrieved
	lastTrec           = NumNonrelJudgedRet
)

// HAKARI-Bench families.
const (
	Hit             Family = iota + lastTrec + 1 // hit@k (acc@k): a positive is in the top k
	HakariPrecision                              // precision@k: distinct positives in the top k / k
	HakariRecall                                 // recall@k: distinct positives in the top k / positives
	HakariMRR                                    // mrr@k: reciprocal rank of the first positive, 0 beyond k
	HakariNDCG                                   // ndcg@k: binary gain, ideal of min(R,k) ones
	HakariMAP                                    // map@k: average precision over min(R,k)
	numFamilies
)

type familyInfo struct {
	name     string
	cutoffs  []int // default cutoffs; nil for families that take none
	levels   []int // default recall levels in hundredths (iprec_at_recall)
	integer  bool  // printed with %ld and summed, not averaged
	summary  bool  // printed in the summary row only, never per query
	text     bool  // a text per query (relstring), no summary line
	geo      bool  // summarized by the geometric mean of per-query logs
	params   paramKind
	maxLevel int // the highest recall level or multiple, in hundredths
	hakari   bool
	r2medKey string // R2MED result-key stem, "" if R2MED has none
}

// trecCutoffs is trec_eval's default cutoff list for P, recall, ndcg_cut and
// map_cut.
var trecCutoffs = []int{5, 10, 15, 20, 30, 100, 200, 500, 1000}

// recallLevels are trec_eval's default iprec_at_recall levels, 0.0 to 1.0
// by tenths, in hundredths.
var recallLevels = []int{0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100}

// rprecMultiples are trec_eval's default Rprec_mult multiples of R, 0.2 to
// 2.0 by fifths, in hundredths.
var rprecMultiples = []int{20, 40, 60, 80, 100, 120, 140, 160, 180, 200}

// paramKind is what follows the "." of a family that takes free
// parameters, which trec_eval prints verbatim after the name
// (utility_1,-1,0,0; ndcg_1=0,2=1).
type paramKind uint8

const (
	noParams  paramKind = iota
	floatList           // comma-separated numbers (utility, set_F, 11pt_avg, relstring)
	gainPairs           // comma-separated grade=gain (ndcg, ndcg_rel, Rndcg, G)
)

var families = [numFamilies]familyInfo{
	RunID:              {name: "runid", summary: true},
	NumQ:               {name: "num_q", integer: true, summary: true},
	NumRet:             {name: "num_ret", integer: true},
	NumRel:             {name: "num_rel", integer: true},
	NumRelRet:          {name: "num_rel_ret", integer: true},
	MAP:                {name: "map"},
	GMMAP:              {name: "gm_map", summary: true, geo: true},
	RPrec:              {name: "Rprec"},
	BPref:              {name: "bpref"},
	RecipRank:          {name: "recip_rank", r2medKey: "mrr"},
	IPrecAtRecall:      {name: "iprec_at_recall", levels: recallLevels, maxLevel: 100},
	P:                  {name: "P", cutoffs: trecCutoffs, r2medKey: "precision"},
	RelString:          {name: "relstring", text: true, params: floatList},
	Recall:             {name: "recall", cutoffs: trecCutoffs, r2medKey: "recall"},
	InfAP:              {name: "infAP"},
	GMBPref:            {name: "gm_bpref", summary: true, geo: true},
	RPrecMult:          {name: "Rprec_mult", levels: rprecMultiples, maxLevel: 100000},
	Utility:            {name: "utility", params: floatList},
	PtAvg11:            {name: "11pt_avg", params: floatList},
	BinG:               {name: "binG"},
	G:                  {name: "G", params: gainPairs},
	NDCG:               {name: "ndcg", params: gainPairs},
	NDCGRel:            {name: "ndcg_rel", params: gainPairs},
	RNDCG:              {name: "Rndcg", params: gainPairs},
	NDCGCut:            {name: "ndcg_cut", cutoffs: trecCutoffs, r2medKey: "ndcg"},
	MAPCut:             {name: "map_cut", cutoffs: trecCutoffs, r2medKey: "map"},
	RelativeP:          {name: "relative_P", cutoffs: trecCutoffs},
	Success:            {name: "success", cutoffs: []int{1, 5, 10}},
	SetP:               {name: "set_P"},
	SetRelativeP:       {name: "set_relative_P"},
	SetRecall:          {name: "set_recall"},
	SetMAP:             {name: "set_map"},
	SetF:               {name: "set_F", params: floatList},
	NumNonrelJudgedRet: {name: "num_nonrel_judged_ret", integer: true},
	Hit:                {name: "hit", hakari: true},
	HakariPrecision:    {name: "precision", hakari: true},
	HakariRecall:       {name: "recall", hakari: true},
	HakariMRR:          {name: "mrr", hakari: true},
	HakariNDCG:         {name: "ndcg", hakari: true},
	HakariMAP:          {name: "map", hakari: true},
}

func (f Family) valid() bool { return f < numFamilies }

// HasCutoff reports whether measures of this family take a rank cutoff.
func (f Family) HasCutoff() bool {
	return f.valid() && (families[f].cutoffs != nil || families[f].hakari)
}

// HasRecallLevels reports whether measures of this family take a recall
// level (iprec_at_recall) or a multiple of R (Rprec_mult), printed with
// two decimals, rather than a rank cutoff.
func (f Family) HasRecallLevels() bool { return f.valid() && families[f].levels != nil }

// HasParams reports whether measures of this family take free parameters
// (Measure.Params): utility's coefficients, set_F's weight, 11pt_avg's
// recall levels, relstring's length, the gains of ndcg, ndcg_rel, Rndcg and G.
func (f Family) HasParams() bool { return f.valid() && families[f].params != noParams }

// SummaryOnly reports whether trec_eval prints measures of this family in
// its summary row only, never per query (runid, num_q, gm_map, gm_bpref).
func (f Family) SummaryOnly() bool { return f.valid() && families[f].summary }

// Text reports whether trec_eval prints measures of this family as a text
// per query and not at all in its summary (relstring).
func (f Family) Text() bool { return f.valid() && families[f].text }

// NoPerQueryNumber says why measures of this family have no per-query
// numbers to compare between runs, "" when they have: runid, num_q, gm_map
// and gm_bpref are "a summary of the whole run" (trec_eval prints them in
// its summary alone), relstring "a text of grades, not a number" (trec_eval
// prints it per query only). This is the one place that decides which
// measures a per-query comparison (r2med compare, a significance test)
// can take.
func (f Family) NoPerQueryNumber() string {
	switch {
	case f.SummaryOnly():
		return "a summary of the whole run"
	case f.Text():
		return "a text of grades, not a number"
	}
	return ""
}

// Hakari reports whether f is a HAKARI-Bench family.
func (f Family) Hakari() bool { return f.valid() && families[f].hakari }

// String is the family's name as Parse reads it: trec_eval's for trec_eval
// families ("ndcg_cut"), HAKARI's before the "@" otherwise ("ndcg").
func (f Family) String() string {
	if !f.valid() {
		return fmt.Sprintf("Family(%d)", uint8(f))
	}
	return families[f].name
}

// MaxCutoff bounds cutoffs so that rank arithmetic cannot overflow.
const MaxCutoff = 1 << 30

// Measure is one number per query: a family and, for families that take
// one, a rank cutoff, a recall level or free parameters.
type Measure struct {
	Family Family
	// Cutoff is the rank cutoff, > 0 exactly when Family.HasCutoff(); for
	// a family with recall levels (iprec_at_recall, Rprec_mult) it is the
	// level in hundredths, 0 to 100 for iprec_at_recall (trec_eval names
	// the level with two decimals).
	Cutoff int
	// Params is the parameter text of a family that takes free parameters
	// (Family.HasParams), as given after the "." ("1,-1,0,0" for utility,
	// "1=0,2=1" for ndcg), which trec_eval prints after the name
	// (utility_1,-1,0,0); "" for the family's defaults.
	Params string
}

// RecallLevel is the recall level of an iprec_at_recall measure (0.5 for
// iprec_at_recall_0.50), as trec_eval reads it from "0.5"; 0 for others.
func (m Measure) RecallLevel() float64 {
	if !m.Family.HasRecallLevels() {
		return 0
	}
	return float64(m.Cutoff) / 100
}

// Param is the measure's cutoff, recall level or parameters as trec_eval
// prints them after the family name ("10" for P_10, "0.50" for
// iprec_at_recall_0.50, "1=0,2=1" for ndcg_1=0,2=1), "" for a measure
// that takes none or is at its defaults.
func (m Measure) Param() string {
	switch {
	case m.Family.HasParams():
		return m.Params
	case m.Family.HasRecallLevels():
		return fmt.Sprintf("%d.%02d", m.Cutoff/100, m.Cutoff%100)
	case m.Family.HasCutoff():
		return strconv.Itoa(m.Cutoff)
	}
	return ""
}

// Name is the measure's name in evaluation output: trec_eval's ("P_5",
// "ndcg_cut_10", "map") or HAKARI's ("ndcg@10").
func (m Measure) Name() string {
	switch {
	case !m.Family.valid():
		return m.Family.String()
	case families[m.Family].hakari:
		return families[m.Family].name + "@" + m.Param()
	case m.Param() != "":
		return families[m.Family].name + "_" + m.Param()
	}
	return families[m.Family].name
}

// String is the measure in the syntax Parse reads back: "P.5", "map",
// "ndcg@10", "iprec_at_recall.0.50".
func (m Measure) String() string {
	if m.Family.valid() && !families[m.Family].hakari && m.Param() != "" {
		return families[m.Family].name + "." + m.Param()
	}
	return m.Name()
}

// Integer reports whether the measure is a count, which trec_eval prints as
// an integer and sums rather than averages in its "all" row.
func (m Measure) Integer() bool { return m.Family.valid() && families[m.Family].integer }

func (m Measure) validate() error {
	switch {
	case !m.Family.valid():
		return fmt.Errorf("measure: unknown family %d", uint8(m.Family))
	case m.Params != "" && !m.Family.HasParams():
		return fmt.Errorf("measure: %s takes no parameters, got %q", m.Family, m.Params)
	case m.Family.HasParams():
		if m.Cutoff != 0 {
			return fmt.Errorf("measure: %s takes no cutoff, got %d", m.Family, m.Cutoff)
		}
		if _, err := m.params(); err != nil {
			return fmt.Errorf("measure %s: %v", m, err)
		}
	case m.Family.HasRecallLevels():
		if top := families[m.Family].maxLevel; m.Cutoff < 0 || m.Cutoff > top {
			return fmt.Errorf("measure: %s needs a level between 0 and %d.%02d (0 to %d hundredths), got %d hundredths", m.Family, top/100, top%100, top, m.Cutoff)
		}
	case m.Family.HasCutoff() && (m.Cutoff <= 0 || m.Cutoff > MaxCutoff):
		return fmt.Errorf("measure: %s needs a cutoff between 1 and %d, got %d", m.Family, MaxCutoff, m.Cutoff)
	case !m.Family.HasCutoff() && m.Cutoff != 0:
		return fmt.Errorf("measure: %s takes no cutoff, got %d", m.Family, m.Cutoff)
	}
	return nil
}

// compare orders measures as trec_eval prints them: by family in its table
// order, then by ascending cutoff.
func compare(a, b Measure) int {
	if a.Family != b.Family {
		return int(a.Family) - int(b.Family)
	}
	if a.Cutoff != b.Cutoff {
		return a.Cutoff - b.Cutoff
	}
	return strings.Compare(a.Params, b.Params)
}

// Parse reads one or more measure specifications separated by white space,
// in any of the spellings described in the package documentation. Bare "-m"
// tokens are skipped, so the text of a trec_eval command line's measure
// flags parses as is. A specification with several cutoffs yields one
// Measure per cutoff, in ascending order.
func Parse(spec string) ([]Measure, error) { return parseSpec(spec, parseOne) }

// parseSpec reads the white-space separated tokens of spec with one,
// skipping bare "-m" tokens.
func parseSpec(spec string, one func(tok string) ([]Measure, error)) ([]Measure, error) {
	var out []Measure
	for _, tok := range strings.Fields(spec) {
		if tok == "-m" {
			continue
		}
		ms, err := one(tok)
		if err != nil {
			return nil, err
		}
		out = append(out, ms...)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("measure: no measure named in %q; known: %s", spec, knownNames())
	}
	return out, nil
}

// MustParse is Parse for specifications fixed in source code; it panics on
// error.
func MustParse(spec string) []Measure {
	ms, err := Parse(spec)
	if err != nil {
		panic(err)
	}
	return ms
}

// Sets are trec_eval's measure sets that Parse expands, in its order.
var sets = map[string][]Measure{
	// trec_eval's default set ("-m official"): measures.c's off_names,
	// P and iprec_at_recall at their default cutoffs and levels.
	"official": setOf(RunID, NumQ, NumRet, NumRel, NumRelRet, MAP, GMMAP, RPrec, BPref, RecipRank, IPrecAtRecall, P),
	// "-m all_trec": measures.c's trec_names, every measure of the
	// measure table but the preference and qrels_jg ones, at defaults.
	"all_trec": setOf(RunID, NumQ, NumRet, NumRel, NumRelRet, MAP, GMMAP, RPrec, BPref, RecipRank, IPrecAtRecall, P,
		RelString, Recall, InfAP, GMBPref, Utility, PtAvg11, NDCG, RelativeP, RPrecMult, Success, MAPCut, NDCGCut,
		NDCGRel, RNDCG, BinG, G, SetP, SetRecall, SetRelativeP, SetMAP, SetF, NumNonrelJudgedRet),
	// "-m set": measures.c's set_names, the measures of an unranked set.
	"set": setOf(RunID, NumQ, NumRet, NumRel, NumRelRet, Utility, SetP, SetRecall, SetRelativeP, SetMAP, SetF),
}

// setOf is the families' measures at their defaults.
func setOf(fs ...Family) []Measure {
	var ms []Measure
	for _, f := range fs {
		ms = append(ms, defaults(f)...)
	}
	return ms
}

// defaults is f named without parameters: one measure, or one per default
// cutoff or recall level.
func defaults(f Family) []Measure {
	params := families[f].cutoffs
	if params == nil {
		params = families[f].levels
	}
	if params == nil {
		return []Measure{{Family: f}}
	}
	ms := make([]Measure, len(params))
	for i, c := range params {
		ms[i] = Measure{Family: f, Cutoff: c}
	}
	return ms
}

// trecSets are trec_eval's other measure sets, which r2med does not
// compute: they hold preference measures, which read a preferences file
// instead of qrels, and qrels_jg's, which read qrels of several judges.
var trecSets = []string{"all_prefs", "prefs", "qrels_jg"}

func parseOne(tok string) ([]Measure, error) {
	if ms, ok := sets[tok]; ok {
		return slices.Clone(ms), nil
	}
	if slices.Contains(trecSets, tok) {
		return nil, fmt.Errorf("measure: trec_eval's set %q is not supported: its measures read preference files or several judges' qrels (trec_eval's -R prefs, qrels_jg), which r2med does not; the supported sets are official, set and all_trec (%s), and the measures: %s", tok, setNames("all_trec"), knownNames())
	}
	if name, k, ok := strings.Cut(tok, "@"); ok {
		f, ok := hakariFamily(strings.ToLower(name))
		if !ok {
			return nil, unknown(tok)
		}
		c, err := parseCutoff(k)
		if err != nil {
			return nil, fmt.Errorf("measure %q: %v", tok, err)
		}
		return []Measure{{Family: f, Cutoff: c}}, nil
	}
	if ms, ok, err := parseR2MEDKey(tok); ok {
		return ms, err
	}
	name, params, hasParams := strings.Cut(tok, ".")
	f, ok := trecFamily(name)
	if !ok {
		return nil, unknown(tok)
	}
	info := families[f]
	if !hasParams {
		return defaults(f), nil
	}
	if info.params != noParams {
		m := Measure{Family: f, Params: params}
		if _, err := m.params(); err != nil {
			return nil, fmt.Errorf("measure %q: %v", tok, err)
		}
		return []Measure{m}, nil
	}
	if info.cutoffs == nil && info.levels == nil {
		return nil, fmt.Errorf("measure %q: %s takes no cutoffs", tok, name)
	}
	parse := parseCutoffList
	if info.levels != nil {
		parse = func(s string) ([]int, error) {
			return parseList(s, func(s string) (int, error) { return parseLevel(s, info.maxLevel) }, "level")
		}
	}
	cuts, err := parse(params)
	if err != nil {
		return nil, fmt.Errorf("measure %q: %v", tok, err)
	}
	ms := make([]Measure, len(cuts))
	for i, c := range cuts {
		ms[i] = Measure{Family: f, Cutoff: c}
	}
	return ms, nil
}

// parseR2MEDKey reads R2MED's result keys. ok is false when tok is not one.
func parseR2MEDKey(tok string) (ms []Measure, ok bool, err error) {
	low := strings.ToLower(tok)
	if low == "mrr" {
		return []Measure{{Family: RecipRank}}, true, nil
	}
	stem, k, found := strings.Cut(low, "_at_")
	if !found {
		return nil, false, nil
	}
	for f := RunID; f <= lastTrec; f++ {
		if families[f].r2medKey == stem && families[f].cutoffs != nil {
			c, err := parseCutoff(k)
			if err != nil {
				return nil, true, fmt.Errorf("measure %q: %v", tok, err)
			}
			return []Measure{{Family: f, Cutoff: c}}, true, nil
		}
	}
	return nil, false, nil
}

func trecFamily(name string) (Family, bool) {
	for f := RunID; f <= lastTrec; f++ {
		if families[f].name == name {
			return f, true
		}
	}
	return 0, false
}

func hakariFamily(name string) (Family, bool) {
	if name == "acc" || name == "accuracy" {
		return Hit, true
	}
	for f := Hit; f < numFamilies; f++ {
		if families[f].name == name {
			return f, true
		}
	}
	return 0, false
}

func parseCutoffList(s string) ([]int, error) { return parseList(s, parseCutoff, "cutoff") }

func parseList(s string, one func(string) (int, error), what string) ([]int, error) {
	var cuts []int
	for part := range strings.SplitSeq(s, ",") {
		c, err := one(part)
		if err != nil {
			return nil, err
		}
		cuts = append(cuts, c)
	}
	slices.Sort(cuts)
	for i := 1; i < len(cuts); i++ {
		if cuts[i] == cuts[i-1] {
			return nil, fmt.Errorf("a %s is listed twice in %q", what, s)
		}
	}
	return cuts, nil
}

// parseLevel reads a recall level (iprec_at_recall: 0 to 1) or a multiple
// of R (Rprec_mult) with at most two decimals ("0", ".5", "0.25", "1.0")
// into hundredths, at most top. trec_eval reads any number and names the
// measure with two decimals; r2med keeps to levels that name exactly, so
// the name says what was computed.
func parseLevel(s string, top int) (int, error) {
	whole, frac, _ := strings.Cut(s, ".")
	digits := whole + frac
	if digits == "" || strings.TrimLeft(digits, "0123456789") != "" || len(frac) > 2 || len(whole) > 4 {
		return 0, fmt.Errorf("a level must be a number from 0 to %d.%02d with at most two decimals (0.25), got %q", top/100, top%100, s)
	}
	h := 0
	for _, d := range whole {
		h = h*10 + int(d-'0')
	}
	h *= 100
	for i, d := range frac {
		if i == 0 {
			h += 10 * int(d-'0')
		} else {
			h += int(d - '0')
		}
	}
	if h > top {
		return 0, fmt.Errorf("a level must be a number from 0 to %d.%02d, got %q", top/100, top%100, s)
	}
	return h, nil
}

var errCutoff = errors.New("a cutoff must be a positive integer")

func parseCutoff(s string) (int, error) {
	if s == "" || strings.TrimLeft(s, "0123456789") != "" {
		return 0, fmt.Errorf("%w, got %q", errCutoff, s)
	}
	c, err := strconv.Atoi(s)
	if err != nil || c <= 0 || c > MaxCutoff {
		return 0, fmt.Errorf("%w up to %d, got %q", errCutoff, MaxCutoff, s)
	}
	return c, nil
}

func unknown(tok string) error {
	return fmt.Errorf("measure: unknown measure %q; known: %s", tok, knownNames())
}

// setNames lists the measure names of a set, parameters left out.
func setNames(set string) string {
	var names []string
	for _, m := range sets[set] {
		if n := m.Family.String(); !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	return strings.Join(names, " ")
}

func knownNames() string {
	var b strings.Builder
	b.WriteString("trec_eval ")
	for f := RunID; f <= lastTrec; f++ {
		b.WriteString(families[f].name)
		switch {
		case families[f].cutoffs != nil:
			b.WriteString("[.k,...]")
		case families[f].levels != nil:
			b.WriteString("[.r,...]")
		case families[f].params == gainPairs:
			b.WriteString("[.grade=gain,...]")
		case f == Utility:
			b.WriteString("[.a,b,c,d]")
		case families[f].params == floatList:
			b.WriteString("[.x]")
		}
		b.WriteByte(' ')
	}
	b.WriteString("and the sets official, set and all_trec ")
	b.WriteString("| HAKARI-Bench ")
	for f := Hit; f < numFamilies; f++ {
		b.WriteString(families[f].name)
		if f == Hit {
			b.WriteString("|acc")
		}
		b.WriteString("@k ")
	}
	b.WriteString("| R2MED keys ndcg_at_k map_at_k recall_at_k precision_at_k mrr")
	return b.String()
}
