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

// TestEvalOfficialMatchesTrecEval: `r2med eval -m official` (and the
// pytrec_eval names of its measures) prints what trec_eval 9.0.8 prints
// without -m, byte for byte, where eval refused official, runid, num_q,
// gm_map and iprec_at_recall.
func TestEvalOfficialMatchesTrecEval(t *testing.T) {
	needShared(t)
	ref := filepath.Join(shared, "eval-reference")
	for _, c := range []struct {
		want, qrels, run string
		flags            []string
	}{
		{"official/bm25.q.trec_eval.gz", filepath.Join(ref, "nfcorpus.qrels"), filepath.Join(ref, "nfcorpus.bm25.run"), []string{"-q", "-m", "official"}},
		{"official/partial.c.trec_eval", filepath.Join(ref, "nfcorpus.qrels"), filepath.Join(ref, "nfcorpus.partial.run"), []string{"-c", "-m", "official"}},
		{"official/mixed.l2.q.trec_eval.gz", filepath.Join(ref, "nfcorpus.mixed.qrels"), filepath.Join(ref, "nfcorpus.bm25.run"), []string{"-q", "-l", "2", "-m", "official"}},
		// pytrec_eval's names, in another order: trec_eval's order is printed.
		{"official/ties.q.trec_eval.gz", filepath.Join(ref, "nfcorpus.qrels"), filepath.Join(ref, "nfcorpus.ties.run"),
			[]string{"-q", "-m", "P", "-m", "iprec_at_recall", "-m", "gm_map", "-m", "num_q", "-m", "runid", "-m", "num_ret", "-m", "num_rel", "-m", "num_rel_ret", "-m", "map", "-m", "Rprec", "-m", "bpref", "-m", "recip_rank"}},
		{"crafted/tags.official.trec_eval", filepath.Join(officialRef, "crafted/tags.qrels"), filepath.Join(officialRef, "crafted/tags.run"), []string{"-m", "official"}},
	} {
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

// TestEvalOfficialSetsAndNotes: trec_eval's sets r2med cannot compute
// are refused saying which set and measures it has; official with a P
// list says that trec_eval would print that list alone.
func TestEvalOfficialSetsAndNotes(t *testing.T) {
	qrels, run := evalFiles(t, "1 0 d1 1\n", "1 Q0 d1 1 2 t\n")
	out, stderr, code := r2med(t, "", "eval", "-m", "all_trec", qrels, run)
	if code != 2 || out != "" || !strings.Contains(stderr, `trec_eval's set "all_trec" is not supported`) ||
		!strings.Contains(stderr, "official (runid num_q num_ret num_rel num_rel_ret map gm_map Rprec bpref recip_rank iprec_at_recall P)") ||
		!strings.Contains(stderr, "iprec_at_recall[.r,...]") {
		t.Errorf("all_trec: exit %d, stdout %q, stderr %q", code, out, stderr)
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
