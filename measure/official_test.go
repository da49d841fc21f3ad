package measure

import (
	"path/filepath"
	"strings"
	"testing"
)

// trecEvalRef is one trec_eval 9.0.8 output and what printed it: the qrels
// and run ("ref:" names a file of ../shared/data/eval-reference, others
// are under testdata), its options and measures (a test's set where nil).
type trecEvalRef struct {
	qrels, run, want string
	opt              Options
	perQuery         bool
	ms               []Measure
}

// checkTrecEvalRefs compares what WriteTrecEval prints with each file.
func checkTrecEvalRefs(t *testing.T, set []Measure, refs []trecEvalRef) {
	t.Helper()
	for _, c := range refs {
		t.Run(c.want, func(t *testing.T) {
			ms := c.ms
			if ms == nil {
				ms = set
			}
			path := func(name string) string {
				if ref, ok := strings.CutPrefix(name, "ref:"); ok {
					return refPath(t, ref)
				}
				return filepath.Join("testdata", name)
			}
			if d := trecEvalDiff(t, path(c.qrels), path(c.run), path(c.want), ms, c.opt, c.perQuery); d != "" {
				t.Errorf("%s: %s", c.want, d)
			}
		})
	}
}

// TestOfficialTrecEval compares trec_eval's default set ("-m official":
// runid num_q num_ret num_rel num_rel_ret map gm_map Rprec bpref recip_rank
// iprec_at_recall P) with trec_eval 9.0.8's own output, over the NFCorpus
// reference runs and the crafted edge cases (testdata/official/README.md
// and testdata/crafted/README.md give the commands).
func TestOfficialTrecEval(t *testing.T) {
	checkTrecEvalRefs(t, MustParse("official"), []trecEvalRef{
		{qrels: "ref:nfcorpus.qrels", run: "ref:nfcorpus.bm25.run", want: "official/bm25.q.trec_eval.gz", perQuery: true},
		{qrels: "ref:nfcorpus.qrels", run: "ref:nfcorpus.ties.run", want: "official/ties.q.trec_eval.gz", perQuery: true},
		{qrels: "ref:nfcorpus.qrels", run: "ref:nfcorpus.neartie.run", want: "official/neartie.trec_eval"},
		{qrels: "ref:nfcorpus.qrels", run: "ref:nfcorpus.partial.run", want: "official/partial.q.trec_eval.gz", perQuery: true},
		{qrels: "ref:nfcorpus.qrels", run: "ref:nfcorpus.partial.run", want: "official/partial.c.trec_eval", opt: Options{Complete: true}},
		{qrels: "ref:nfcorpus.mixed.qrels", run: "ref:nfcorpus.bm25.run", want: "official/mixed.l2.q.trec_eval.gz", opt: Options{RelevanceLevel: 2}, perQuery: true},
		{qrels: "ref:nfcorpus.mixed.qrels", run: "ref:nfcorpus.partial.run", want: "official/mixed.partial.c.l2.trec_eval", opt: Options{Complete: true, RelevanceLevel: 2}},
		{qrels: "crafted/edges.qrels", run: "crafted/edges.run", want: "crafted/edges.official.trec_eval", perQuery: true},
		{qrels: "crafted/edges.qrels", run: "crafted/edges.run", want: "crafted/edges.official.l2.trec_eval", opt: Options{RelevanceLevel: 2}, perQuery: true},
		{qrels: "crafted/edges.c.qrels", run: "crafted/edges.run", want: "crafted/edges.c.official.trec_eval", opt: Options{Complete: true}},
		{qrels: "crafted/edges.qrels", run: "crafted/edges.run", want: "crafted/edges.levels.trec_eval", perQuery: true,
			ms: MustParse("-m runid -m num_q -m gm_map -m iprec_at_recall.0,.05,.25,.33,0.5,.67,0.99,1")},
		{qrels: "crafted/tags.qrels", run: "crafted/tags.run", want: "crafted/tags.official.trec_eval"},
	})
}

// allTrecParams are the parameters the params fixtures were printed with
// (testdata/alltrec/README.md): a fraction of a gain below 1 apart, which
// trec_eval's sort of gains compares as equal (G.1=0.5,2=1.2 leaves grade
// 1 out of G's ideal ranking), levels out of order (11pt_avg).
const allTrecParams = "-m relstring.20 -m utility.2,-1,-0.5,0.25 -m 11pt_avg.0.8,0.2,0.5 -m set_F.0.5 -m ndcg.1=0,2=1 -m ndcg_rel.0=0.5,2=3 -m Rndcg.1=2.5,2=1 -m G.1=0.5,2=1.2 -m Rprec_mult.0.5,1,3 -m relative_P.1,3,7"

// TestAllTrecEval compares trec_eval's all_trec set (every measure of its
// table but the preference and judge-group ones: relstring infAP gm_bpref
// Rprec_mult utility 11pt_avg binG G ndcg ndcg_rel Rndcg relative_P set_P
// set_relative_P set_recall set_map set_F num_nonrel_judged_ret beside
// the official ones) and those measures' parameters with trec_eval 9.0.8's
// own output (testdata/alltrec/README.md gives the commands): with -q,
// -c and -l 2, over the NFCorpus reference runs and the crafted edges
// (grades below 0 and above 9, a query judged only 0, ties).
func TestAllTrecEval(t *testing.T) {
	checkTrecEvalRefs(t, MustParse("all_trec"), []trecEvalRef{
		{qrels: "ref:nfcorpus.qrels", run: "ref:nfcorpus.bm25.run", want: "alltrec/bm25.q.trec_eval.gz", perQuery: true},
		{qrels: "ref:nfcorpus.qrels", run: "ref:nfcorpus.ties.run", want: "alltrec/ties.q.trec_eval.gz", perQuery: true},
		{qrels: "ref:nfcorpus.qrels", run: "ref:nfcorpus.neartie.run", want: "alltrec/neartie.trec_eval"},
		{qrels: "ref:nfcorpus.qrels", run: "ref:nfcorpus.partial.run", want: "alltrec/partial.trec_eval"},
		{qrels: "ref:nfcorpus.qrels", run: "ref:nfcorpus.partial.run", want: "alltrec/partial.c.trec_eval", opt: Options{Complete: true}},
		{qrels: "ref:nfcorpus.mixed.qrels", run: "ref:nfcorpus.bm25.run", want: "alltrec/mixed.l2.q.trec_eval.gz", opt: Options{RelevanceLevel: 2}, perQuery: true},
		{qrels: "ref:nfcorpus.mixed.qrels", run: "ref:nfcorpus.partial.run", want: "alltrec/mixed.partial.c.l2.trec_eval", opt: Options{Complete: true, RelevanceLevel: 2}},
		{qrels: "ref:nfcorpus.mixed.qrels", run: "ref:nfcorpus.bm25.run", want: "alltrec/mixed.params.q.trec_eval.gz", perQuery: true, ms: MustParse(allTrecParams)},
		{qrels: "crafted/edges.qrels", run: "crafted/edges.run", want: "crafted/edges.all_trec.trec_eval", perQuery: true},
		{qrels: "crafted/edges.qrels", run: "crafted/edges.run", want: "crafted/edges.all_trec.l2.trec_eval", opt: Options{RelevanceLevel: 2}, perQuery: true},
		{qrels: "crafted/edges.c.qrels", run: "crafted/edges.run", want: "crafted/edges.c.all_trec.trec_eval", opt: Options{Complete: true}, perQuery: true},
		{qrels: "crafted/edges.c.qrels", run: "crafted/edges.run", want: "crafted/edges.c.all_trec.l2.trec_eval", opt: Options{Complete: true, RelevanceLevel: 2}, perQuery: true},
		{qrels: "crafted/edges.qrels", run: "crafted/edges.run", want: "crafted/edges.params.trec_eval", perQuery: true, ms: MustParse(allTrecParams)},
		{qrels: "crafted/edges.qrels", run: "crafted/edges.run", want: "crafted/edges.params.l2.trec_eval", opt: Options{RelevanceLevel: 2}, perQuery: true, ms: MustParse(allTrecParams)},
		{qrels: "crafted/edges.qrels", run: "crafted/edges.run", want: "crafted/edges.set.trec_eval", perQuery: true, ms: MustParse("set")},
		// bpref 0.21875: gm_bpref is exp(log(0.21875)), an ulp below in
		// glibc, so trec_eval prints 0.2187 beside bpref's 0.2188.
		{qrels: "crafted/half.qrels", run: "crafted/half.run", want: "crafted/half.trec_eval", perQuery: true, ms: MustParse("bpref gm_bpref gm_map")},
		{qrels: "crafted/tags.qrels", run: "crafted/tags.run", want: "crafted/tags.all_trec.trec_eval"},
	})
}
