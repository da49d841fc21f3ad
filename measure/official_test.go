package measure

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestOfficialTrecEval compares trec_eval's default set ("-m official":
// runid num_q num_ret num_rel num_rel_ret map gm_map Rprec bpref recip_rank
// iprec_at_recall P) with trec_eval 9.0.8's own output, over the NFCorpus
// reference runs and the crafted edge cases (testdata/official/README.md
// and testdata/crafted/README.md give the commands).
func TestOfficialTrecEval(t *testing.T) {
	official := MustParse("official")
	for _, c := range []struct {
		qrels, run, want string
		opt              Options
		perQuery         bool
		ms               []Measure
	}{
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
	} {
		t.Run(c.want, func(t *testing.T) {
			ms := c.ms
			if ms == nil {
				ms = official
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
