package main

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/measure/measuretest"
	"github.com/r2med/r2med/trec"
)

// Two small runs for the hand-computed cases below.
//
//	run A, q1: a 3, b 2, c 1, d 0.5
//	run B, q1: c 0.9, d 0.8, a 0.1      q2: x 1, y 0.5
const (
	fuseRunA = `q1 Q0 a 1 3 A
q1 Q0 b 2 2 A
q1 Q0 c 3 1 A
q1 Q0 d 4 0.5 A
`
	fuseRunB = `q1 Q0 c 1 0.9 B
q1 Q0 d 2 0.8 B
q1 Q0 a 3 0.1 B
q2 Q0 x 1 1 B
q2 Q0 y 2 0.5 B
`
)

func writeRuns(t *testing.T, runs ...string) []string {
	t.Helper()
	dir := t.TempDir()
	paths := make([]string, len(runs))
	for i, r := range runs {
		paths[i] = filepath.Join(dir, string(rune('A'+i))+".trec")
		if err := os.WriteFile(paths[i], []byte(r), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return paths
}

type fusedWant struct {
	doc   string
	score float64
}

func checkFused(t *testing.T, path string, expect map[string][]fusedWant) {
	t.Helper()
	run, err := trec.ReadRunFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(run) != len(expect) {
		t.Errorf("%d queries, want %d", len(run), len(expect))
	}
	for qid, ws := range expect {
		hits := run[qid]
		if len(hits) != len(ws) {
			t.Errorf("%s: %d hits %v, want %d", qid, len(hits), hits, len(ws))
			continue
		}
		for i, w := range ws {
			// A float32 score is written with float32's shortest digits.
			exact32 := float64(float32(w.score)) == w.score && float32(hits[i].Score) == float32(w.score)
			if hits[i].DocID != w.doc || math.Abs(hits[i].Score-w.score) > 1e-12 && !exact32 {
				t.Errorf("%s rank %d: %s %.15g, want %s %.15g", qid, i+1, hits[i].DocID, hits[i].Score, w.doc, w.score)
			}
		}
	}
}

func TestFuseRRF(t *testing.T) {
	runs := writeRuns(t, fuseRunA, fuseRunB)
	out := filepath.Join(t.TempDir(), "fused.trec")

	// k = 60. q1 ranks: a (1, 3), b (2, –), c (3, 1), d (4, 2).
	//   a = 1/61 + 1/63 = 0.0163934 + 0.0158730 = 0.0322665
	//   c = 1/63 + 1/61 = the same sum; both have best rank 1, so doc id: a, c
	//       (c written one float32 step below a, so that every evaluator
	//       ranks them so)
	//   d = 1/64 + 1/62 = 0.0156250 + 0.0161290 = 0.0317540
	//   b = 1/62        = 0.0161290
	// q2 (run B only): x = 1/61, y = 1/62.
	if _, stderr, code := r2med(t, "", append([]string{"fuse", "--method", "rrf", "--out", out}, runs...)...); code != 0 {
		t.Fatal(stderr)
	}
	checkFused(t, out, map[string][]fusedWant{
		"q1": {{"a", 1.0/61 + 1.0/63}, {"c", below(1.0/61 + 1.0/63)}, {"d", 1.0/64 + 1.0/62}, {"b", 1.0 / 62}},
		"q2": {{"x", 1.0 / 61}, {"y", 1.0 / 62}},
	})

	// k = 100 (HAKARI-Bench), depth 3:
	//   a = c = 1/101 + 1/103 = 0.0099010 + 0.0097087 = 0.0196097
	//   d = 1/104 + 1/102 = 0.0096154 + 0.0098039 = 0.0194193
	//   b = 1/102 = 0.0098039, cut by --depth 3.
	if _, stderr, code := r2med(t, "", append([]string{"fuse", "--rrf-k", "100", "--depth", "3", "--out", out}, runs...)...); code != 0 {
		t.Fatal(stderr)
	}
	checkFused(t, out, map[string][]fusedWant{
		"q1": {{"a", 1.0/101 + 1.0/103}, {"c", below(1.0/101 + 1.0/103)}, {"d", 1.0/104 + 1.0/102}},
		"q2": {{"x", 1.0 / 101}, {"y", 1.0 / 102}},
	})
	// The default tag is the fused system's name, each input named by
	// the tag its lines carry (A and B).
	if got := readFuseOut(t, out); !strings.Contains(got, " rrf(A,B)\n") {
		t.Errorf("tag: %q", got)
	}
}

func TestFuseCombSUM(t *testing.T) {
	runs := writeRuns(t, fuseRunA, fuseRunB)
	out := filepath.Join(t.TempDir(), "fused.trec")

	// min-max, weights 0.7 (A) and 0.3 (B).
	//   A, q1: min 0.5, max 3, range 2.5 → a 1, b 0.6, c 0.2, d 0
	//   B, q1: min 0.1, max 0.9, range 0.8 → c 1, d 0.875, a 0
	//   a = 0.7·1            = 0.7
	//   c = 0.7·0.2 + 0.3·1  = 0.44
	//   b = 0.7·0.6          = 0.42
	//   d = 0.7·0 + 0.3·0.875 = 0.2625
	//   q2 (B only): x = 0.3·1 = 0.3, y = 0.3·0 = 0
	if _, stderr, code := r2med(t, "", append([]string{"fuse", "--method", "combsum", "--weights", "0.7,0.3", "--out", out}, runs...)...); code != 0 {
		t.Fatal(stderr)
	}
	checkFused(t, out, map[string][]fusedWant{
		"q1": {{"a", 0.7}, {"c", 0.44}, {"b", 0.42}, {"d", 0.2625}},
		"q2": {{"x", 0.3}, {"y", 0}},
	})

	// z-score, equal weights (population σ).
	//   A, q1: mean 6.5/4 = 1.625; deviations 1.375, 0.375, −0.625, −1.125;
	//          variance 3.6875/4 = 0.921875, σ = 0.9601432
	//          → a 1.4320780, b 0.3905667, c −0.6509446, d −1.1717002
	//   B, q1: mean 1.8/3 = 0.6; deviations 0.3, 0.2, −0.5 (c, d, a);
	//          variance 0.38/3, σ = 0.3559026
	//          → c 0.8429272, d 0.5619515, a −1.4048787
	//   b =  0.3905667
	//   c = −0.6509446 + 0.8429272 =  0.1919827
	//   a =  1.4320780 − 1.4048787 =  0.0271993
	//   d = −1.1717002 + 0.5619515 = −0.6097487
	//   q2: mean 0.75, σ 0.25 → x 1, y −1
	if _, stderr, code := r2med(t, "", append([]string{"fuse", "--method", "combsum", "--norm", "zscore", "--out", out}, runs...)...); code != 0 {
		t.Fatal(stderr)
	}
	za, zb := 1.375/math.Sqrt(0.921875), 0.375/math.Sqrt(0.921875)
	zc, zd := -0.625/math.Sqrt(0.921875), -1.125/math.Sqrt(0.921875)
	sb := math.Sqrt(0.38 / 3)
	checkFused(t, out, map[string][]fusedWant{
		"q1": {{"b", zb}, {"c", zc + 0.3/sb}, {"a", za - 0.5/sb}, {"d", zd + 0.2/sb}},
		"q2": {{"x", 1}, {"y", -1}},
	})
	// The literal values of the comment, to 7 digits.
	for _, c := range []struct{ got, want float64 }{{zb, 0.3905667}, {zc + 0.3/sb, 0.1919827}, {za - 0.5/sb, 0.0271993}, {zd + 0.2/sb, -0.6097487}} {
		if math.Abs(c.got-c.want) > 1e-7 {
			t.Errorf("hand value %.7f, formula %.7f", c.want, c.got)
		}
	}
}

// Equal scores: best-rank puts the document ranked higher in some run
// first; docid orders them by id. The second of two equal sums is written
// one float32 step below the first, so that trec_eval (which orders equal
// scores by doc id, descending) and every other evaluator rank the file
// as fused.
//
//	A: x 5, b 1      B: z 1      (--norm none, so b and z both sum to 1;
//	b's best rank is 2, z's is 1)
func TestFuseTies(t *testing.T) {
	runs := writeRuns(t, "q Q0 x 1 5 A\nq Q0 b 2 1 A\n", "q Q0 z 1 1 B\n")
	out := filepath.Join(t.TempDir(), "fused.trec")
	qrels := ir.Qrels{"q": {"b": 1}}
	for ties, order := range map[string][]fusedWant{
		"best-rank": {{"x", 5}, {"z", 1}, {"b", below(1)}},
		"docid":     {{"x", 5}, {"b", 1}, {"z", below(1)}},
	} {
		if _, stderr, code := r2med(t, "", append([]string{"fuse", "--method", "combsum", "--norm", "none", "--ties", ties, "--out", out}, runs...)...); code != 0 {
			t.Fatal(stderr)
		}
		checkFused(t, out, map[string][]fusedWant{"q": order})
		measuretest.CheckFile(t, out, qrels)
	}

	// The runs fused are ranked as trec_eval reads them: A lists a
	// before b at equal scores, which trec_eval ranks b (doc id
	// descending) first, so RRF takes b at rank 1 and a at rank 2; b
	// and c (first in B) then tie, best rank 1 both, doc id ascending.
	runs = writeRuns(t, "q Q0 a 1 1 A\nq Q0 b 2 1 A\n", "q Q0 c 1 1 B\n")
	if _, stderr, code := r2med(t, "", append([]string{"fuse", "--out", out}, runs...)...); code != 0 {
		t.Fatal(stderr)
	}
	checkFused(t, out, map[string][]fusedWant{"q": {{"b", 1.0 / 61}, {"c", below(1.0 / 61)}, {"a", 1.0 / 62}}})
	measuretest.CheckFile(t, out, qrels)
}

// below is the float32 one step under x, where a tie after x is written.
func below(x float64) float64 { return float64(math.Nextafter32(float32(x), float32(math.Inf(-1)))) }

func TestFuseErrors(t *testing.T) {
	runs := writeRuns(t, fuseRunA, fuseRunB, "q1 Q0 a 1 3\n", "")
	out := filepath.Join(t.TempDir(), "fused.trec")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{runs[0]}, "at least two runs"},
		{[]string{runs[0], runs[1]}, "--out RUN is required"},
		{[]string{"--method", "combsum", "--weights", "1,2,3", runs[0], runs[1], "--out", out}, "3 values for 2 runs"},
		{[]string{"--method", "combsum", "--weights", "1,x", runs[0], runs[1], "--out", out}, `"x" is not a finite number`},
		{[]string{"--weights", "1,1", runs[0], runs[1], "--out", out}, "--weights applies to --method combsum"},
		{[]string{"--norm", "zscore", runs[0], runs[1], "--out", out}, "--norm applies to --method combsum"},
		{[]string{"--method", "combsum", "--rrf-k", "10", runs[0], runs[1], "--out", out}, "--rrf-k applies to --method rrf"},
		{[]string{"--method", "borda", runs[0], runs[1], "--out", out}, `unknown --method "borda"`},
		{[]string{"--method", "combsum", "--norm", "l2", runs[0], runs[1], "--out", out}, `unknown --norm "l2"`},
		{[]string{"--ties", "random", runs[0], runs[1], "--out", out}, `unknown --ties`},
		{[]string{"--rrf-k", "-1", runs[0], runs[1], "--out", out}, "--rrf-k must be"},
		// A tag with a space would split the file's last column: said
		// before the runs are read, naming the flag, where the write
		// failed with "run tag ... contains white space".
		{[]string{"--tag", "my run", runs[0], runs[1], "--out", out}, `--tag "my run" contains white space; a run's tag is one column: join its words with _ or -`},
		{[]string{"--tag", "my\x1frun", runs[0], runs[1], "--out", out}, `--tag "my\x1frun" contains white space`}, // Python's split() cuts there
		{[]string{runs[0], runs[2], "--out", out}, runs[2] + ":1:"},
		{[]string{runs[0], runs[1] + ".missing", "--out", out}, ".missing"},
		// An empty run (a run that failed before its first line) would
		// pass the other run's ranking off as the fusion.
		{[]string{runs[0], runs[3], "--out", out}, runs[3] + ": the run is empty"},
		// --out naming a directory: said so, where the rename onto it
		// failed with "file exists" naming the temporary file.
		{[]string{runs[0], runs[1], "--out", filepath.Dir(runs[0])}, filepath.Dir(runs[0]) + " is a directory"},
	} {
		_, stderr, code := r2med(t, "", append([]string{"fuse"}, c.args...)...)
		if code == 0 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want an error containing %q", c.args, code, stderr, c.want)
		}
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a failed fuse left %s behind (%v)", out, err)
	}
}

func readFuseOut(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A run that ranks fewer queries than the others is named, with the
// queries it lacks: they are fused from the other runs alone.
func TestFuseSaysWhatARunLacks(t *testing.T) {
	paths := writeRuns(t, fuseRunA, fuseRunB)
	out := filepath.Join(t.TempDir(), "fused.trec")
	_, stderr, code := r2med(t, "", "fuse", "--out", out, paths[0], paths[1])
	want := paths[0] + ` ranks nothing for 1 of the 2 queries the runs rank ("q2")`
	if code != 0 || !strings.Contains(stderr, want) || strings.Contains(stderr, paths[1]) {
		t.Errorf("exit %d, stderr %q; want only %q", code, stderr, want)
	}
}
