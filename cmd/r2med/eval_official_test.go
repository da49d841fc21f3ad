package main

import (
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// officialRef is where measure keeps trec_eval 9.0.8's output for its
// default set (testdata/official/README.md gives the commands).
const officialRef = "../../measure/testdata"

func readOfficialRef(t *testing.T, name string) string {
	t.Helper()
	f, err := os.Open(filepath.Join(officialRef, name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(name, ".gz") {
		if r, err = gzip.NewReader(f); err != nil {
			t.Fatal(err)
		}
	}
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// evalRef is one trec_eval 9.0.8 output under officialRef and the eval
// flags and files that must print it.
type evalRef struct {
	want, qrels, run string
	flags            []string
}

// checkEvalRefs runs r2med eval for each case and compares its output
// with trec_eval's, byte for byte.
func checkEvalRefs(t *testing.T, refs []evalRef) {
	t.Helper()
	for _, c := range refs {
		t.Run(c.want, func(t *testing.T) {
			args := append(append([]string{"eval"}, c.flags...), c.qrels, c.run)
			got, stderr, code := r2med(t, "", args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			want := readOfficialRef(t, c.want)
			if got != want {
				gl, wl := strings.Split(got, "\n"), strings.Split(want, "\n")
				for i := range min(len(gl), len(wl)) {
					if gl[i] != wl[i] {
						t.Fatalf("line %d differs:\n got %q\nwant %q", i+1, gl[i], wl[i])
					}
				}
				t.Fatalf("output has %d lines, trec_eval %d", len(gl), len(wl))
			}
		})
	}
}

// TestEvalOfficialMatchesTrecEval: `r2med eval -m official` (and the
// pytrec_eval names of its measures) prints what trec_eval 9.0.8 prints
// without -m, byte for byte, where eval refused official, runid, num_q,
// gm_map and iprec_at_recall.
func TestEvalOfficialMatchesTrecEval(t *testing.T) {
	needShared(t)
	ref := filepath.Join(shared, "eval-reference")
	checkEvalRefs(t, []evalRef{
		{"official/bm25.q.trec_eval.gz", filepath.Join(ref, "nfcorpus.qrels"), filepath.Join(ref, "nfcorpus.bm25.run"), []string{"-q", "-m", "official"}},
		{"official/partial.c.trec_eval", filepath.Join(ref, "nfcorpus.qrels"), filepath.Join(ref, "nfcorpus.partial.run"), []string{"-c", "-m", "official"}},
		{"official/mixed.l2.q.trec_eval.gz", filepath.Join(ref, "nfcorpus.mixed.qrels"), filepath.Join(ref, "nfcorpus.bm25.run"), []string{"-q", "-l", "2", "-m", "official"}},
		// pytrec_eval's names, in another order: trec_eval's order is printed.
		{"official/ties.q.trec_eval.gz", filepath.Join(ref, "nfcorpus.qrels"), filepath.Join(ref, "nfcorpus.ties.run"),
			[]string{"-q", "-m", "P", "-m", "iprec_at_recall", "-m", "gm_map", "-m", "num_q", "-m", "runid", "-m", "num_ret", "-m", "num_rel", "-m", "num_rel_ret", "-m", "map", "-m", "Rprec", "-m", "bpref", "-m", "recip_rank"}},
		{"crafted/tags.official.trec_eval", filepath.Join(officialRef, "crafted/tags.qrels"), filepath.Join(officialRef, "crafted/tags.run"), []string{"-m", "official"}},
	})
}

// TestEvalAllTrecMatchesTrecEval: `r2med eval -m all_trec`, and the
// all_trec measures' parameters as trec_eval's -m reads them, print what
// trec_eval 9.0.8 prints, byte for byte, with -q, -c and -l 2, where eval
// refused all_trec and its measures beyond the official set.
func TestEvalAllTrecMatchesTrecEval(t *testing.T) {
	needShared(t)
	ref := filepath.Join(shared, "eval-reference")
	crafted := filepath.Join(officialRef, "crafted")
	params := strings.Fields("-q -m relstring.20 -m utility.2,-1,-0.5,0.25 -m 11pt_avg.0.8,0.2,0.5 -m set_F.0.5 -m ndcg.1=0,2=1 -m ndcg_rel.0=0.5,2=3 -m Rndcg.1=2.5,2=1 -m G.1=0.5,2=1.2 -m Rprec_mult.0.5,1,3 -m relative_P.1,3,7")
	checkEvalRefs(t, []evalRef{
		{"alltrec/bm25.q.trec_eval.gz", filepath.Join(ref, "nfcorpus.qrels"), filepath.Join(ref, "nfcorpus.bm25.run"), []string{"-q", "-m", "all_trec"}},
		{"alltrec/mixed.partial.c.l2.trec_eval", filepath.Join(ref, "nfcorpus.mixed.qrels"), filepath.Join(ref, "nfcorpus.partial.run"), []string{"-c", "-l", "2", "-m", "all_trec"}},
		{"alltrec/mixed.params.q.trec_eval.gz", filepath.Join(ref, "nfcorpus.mixed.qrels"), filepath.Join(ref, "nfcorpus.bm25.run"), params},
		{"crafted/edges.c.all_trec.trec_eval", filepath.Join(crafted, "edges.c.qrels"), filepath.Join(crafted, "edges.run"), []string{"-q", "-c", "-m", "all_trec"}},
		{"crafted/edges.set.trec_eval", filepath.Join(crafted, "edges.qrels"), filepath.Join(crafted, "edges.run"), []string{"-q", "-m", "set"}},
	})
}

// TestEvalOfficialSetsAndNotes: trec_eval's sets r2med cannot compute
// (preferences, judge groups) are refused saying why and which sets and
// measures it has; official with a P list says that trec_eval would print
// that list alone, all_trec with utility's coefficients that trec_eval
// would print that utility alone; malformed parameters are refused naming
// the measure.
func TestEvalOfficialSetsAndNotes(t *testing.T) {
	qrels, run := evalFiles(t, "1 0 d1 1\n", "1 Q0 d1 1 2 t\n")
	out, stderr, code := r2med(t, "", "eval", "-m", "prefs", qrels, run)
	if code != 2 || out != "" || !strings.Contains(stderr, `trec_eval's set "prefs" is not supported`) ||
		!strings.Contains(stderr, "official, set and all_trec (runid num_q num_ret num_rel num_rel_ret map gm_map Rprec bpref recip_rank iprec_at_recall P relstring") ||
		!strings.Contains(stderr, "iprec_at_recall[.r,...]") || !strings.Contains(stderr, "ndcg[.grade=gain,...]") {
		t.Errorf("prefs: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	out, stderr, code = r2med(t, "", "eval", "-m", "all_trec", "-m", "utility.2,-1,0,0", qrels, run)
	if code != 0 || !strings.Contains(out, "utility               \tall\t1.0000\nutility_2,-1,0,0      \tall\t2.0000\n") ||
		!strings.Contains(stderr, "note: utility is named by more than one -m; trec_eval computes the first parameters given only") ||
		!strings.Contains(stderr, "r2med prints each (utility, utility_2,-1,0,0)") {
		t.Errorf("all_trec and utility.2,-1,0,0: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	out, stderr, code = r2med(t, "", "eval", "-J", "-m", "all_trec", qrels, run)
	if code != 2 || out != "" || !strings.Contains(stderr, "-J (trec_eval's judged documents only") {
		t.Errorf("-J: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	for spec, want := range map[string]string{
		"utility.1,2": "utility takes four coefficients",
		"ndcg.10":     "for nDCG at a cutoff use ndcg_cut.k",
		"set_F.x":     "a parameter must be a finite number",
		"relstring.a": "a parameter must be a finite number",
	} {
		out, stderr, code = r2med(t, "", "eval", "-m", spec, qrels, run)
		if code != 2 || out != "" || !strings.Contains(stderr, want) {
			t.Errorf("-m %s: exit %d, stdout %q, stderr %q; want %q", spec, code, out, stderr, want)
		}
	}
	out, stderr, code = r2med(t, "", "eval", "-m", "official", "-m", "P.10", qrels, run)
	if code != 0 || !strings.HasPrefix(out, "runid                 \tall\tt\nnum_q                 \tall\t1\n") ||
		!strings.Contains(stderr, "note: P is named by more than one -m") || !strings.Contains(stderr, "P.5,10,15,20,30,100,200,500,1000") {
		t.Errorf("official and P.10: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	out, _, code = r2med(t, "", "eval", "-q", "-m", "iprec_at_recall.0.5", "-m", "gm_map", qrels, run)
	if want := "iprec_at_recall_0.50  \t1\t1.0000\ngm_map                \tall\t1.0000\niprec_at_recall_0.50  \tall\t1.0000\n"; code != 0 || out != want {
		t.Errorf("iprec_at_recall.0.5 and gm_map: exit %d, stdout %q, want %q", code, out, want)
	}
}
