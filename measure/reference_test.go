package measure

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/r2med/r2med/trec"
)

// refDir holds trec_eval 9.0.8's own output for the NFCorpus runs.
const refDir = "../../shared/data/eval-reference"

func readRef(t testing.TB, name string) (string, error) {
	b, err := os.ReadFile(refPath(t, name))
	return string(b), err
}

func refPath(t testing.TB, name string) string {
	t.Helper()
	if _, err := os.Stat(refDir); err != nil {
		t.Skipf("reference data %s is absent (%v); the byte-identical trec_eval checks need it", refDir, err)
	}
	return filepath.Join(refDir, name)
}

func refMeasures(t testing.TB) []Measure {
	t.Helper()
	spec, err := os.ReadFile(refPath(t, "measures.txt"))
	if err != nil {
		t.Fatal(err)
	}
	ms, err := Parse(string(spec))
	if err != nil {
		t.Fatal(err)
	}
	return ms
}

func TestTrecEvalReference(t *testing.T) {
	cases := []struct {
		qrels, run, want string
		opt              Options
	}{
		{"nfcorpus.qrels", "nfcorpus.bm25.run", "nfcorpus.bm25.trec_eval", Options{}},
		{"nfcorpus.qrels", "nfcorpus.ties.run", "nfcorpus.ties.trec_eval", Options{}},
		{"nfcorpus.qrels", "nfcorpus.neartie.run", "nfcorpus.neartie.trec_eval", Options{}},
		{"nfcorpus.qrels", "nfcorpus.partial.run", "nfcorpus.partial.trec_eval", Options{}},
		{"nfcorpus.qrels", "nfcorpus.partial.run", "nfcorpus.partial.c.trec_eval", Options{Complete: true}},
		{"nfcorpus.mixed.qrels", "nfcorpus.bm25.run", "nfcorpus.mixed.trec_eval", Options{}},
	}
	ms := refMeasures(t)
	for _, c := range cases {
		t.Run(c.want, func(t *testing.T) {
			if d := trecEvalDiff(t, refPath(t, c.qrels), refPath(t, c.run), refPath(t, c.want), ms, c.opt, true); d != "" {
				t.Errorf("trec_eval -q %s%s %s: %s", optFlags(c.opt), c.qrels, c.run, d)
			}
		})
	}
}

// trecEvalDiff evaluates the run file against the qrels file and
// describes where what WriteTrecEval prints differs from the want file
// ("" where it does not).
func trecEvalDiff(t *testing.T, qrelsPath, runPath, wantPath string, ms []Measure, opt Options, perQuery bool) string {
	t.Helper()
	qrels, err := trec.ReadQrelsFile(qrelsPath)
	if err != nil {
		t.Fatal(err)
	}
	run, err := trec.ReadRunFile(runPath)
	if err != nil {
		t.Fatal(err)
	}
	want, err := readMaybeGzip(wantPath)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(runPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if opt.RunID, err = trec.ReadRunLastTag(f, runPath); err != nil {
		t.Fatal(err)
	}
	res, err := Evaluate(qrels, run, ms, opt)
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	if err := WriteTrecEval(&got, res, perQuery); err != nil {
		t.Fatal(err)
	}
	return firstDiff(got.String(), string(want))
}

// readMaybeGzip reads a file, gunzipping it when its name ends in .gz.
func readMaybeGzip(path string) ([]byte, error) {
	if !strings.HasSuffix(path, ".gz") {
		return os.ReadFile(path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return io.ReadAll(zr)
}

func optFlags(o Options) string {
	if o.Complete {
		return "-c "
	}
	return ""
}

// firstDiff describes the first line where got and want differ, or returns
// "" when they are identical.
func firstDiff(got, want string) string {
	if got == want {
		return ""
	}
	g, w := strings.SplitAfter(got, "\n"), strings.SplitAfter(want, "\n")
	for i := range max(len(g), len(w)) {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return fmt.Sprintf("first difference at line %d:\n got  %q\n want %q", i+1, gl, wl)
		}
	}
	return "outputs differ"
}

// TestCraftedTrecEval compares the evaluator with trec_eval's output for
// hand-written edge cases (testdata/crafted/README.md says what they hold
// and which command printed each file).
func TestCraftedTrecEval(t *testing.T) {
	ms := MustParse("num_ret num_rel num_rel_ret map Rprec bpref recip_rank ndcg P.1,3,5,10,25,50,100,1000 recall.1,3,5,10,25,50,100,1000 " +
		"ndcg_cut.1,3,5,10,25,50,100,1000 map_cut.1,3,5,10,25,50,100,1000 success.1,3,5,10,25,50,100,1000")
	for _, c := range []struct {
		qrels, want string
		opt         Options
		perQuery    bool
	}{
		{"edges.qrels", "edges.trec_eval", Options{}, true},
		{"edges.qrels", "edges.l2.trec_eval", Options{RelevanceLevel: 2}, true},
		{"edges.c.qrels", "edges.c.trec_eval", Options{Complete: true}, false},
		{"edges.c.qrels", "edges.c.l2.trec_eval", Options{Complete: true, RelevanceLevel: 2}, false},
	} {
		t.Run(c.want, func(t *testing.T) {
			dir := filepath.Join("testdata", "crafted")
			if d := trecEvalDiff(t, filepath.Join(dir, c.qrels), filepath.Join(dir, "edges.run"), filepath.Join(dir, c.want), ms, c.opt, c.perQuery); d != "" {
				t.Errorf("%s: %s", c.want, d)
			}
		})
	}
}
