package trec

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/r2med/r2med/ir"
)

// sharedData is the path of a folder of the project's read-only test data,
// which lives beside the repository.
func sharedData(t testing.TB, name string) string {
	t.Helper()
	p := filepath.Join("..", "..", "shared", "data", name)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("shared test data %s is not available (%v); these tests need the read-only data folder beside the repository", p, err)
	}
	return p
}

func TestReadQrels(t *testing.T) {
	input := "q1 0 d1 1\n\n  q1\t0\td2\t0  \r\nq2 Q0 d1 -1\nq2 7 d3 +2\n"
	q, err := ReadQrels(strings.NewReader(input), "x.qrels")
	if err != nil {
		t.Fatal(err)
	}
	want := ir.Qrels{"q1": {"d1": 1, "d2": 0}, "q2": {"d1": -1, "d3": 2}}
	if !reflect.DeepEqual(q, want) {
		t.Errorf("got %v, want %v", q, want)
	}
	if q.Len() != 4 {
		t.Errorf("Len = %d, want 4", q.Len())
	}
	if q.Add("q1", "d1", 5) || q["q1"]["d1"] != 1 {
		t.Error("Add replaced an existing judgment")
	}
	if !q.Add("q3", "d1", 1) || q["q3"]["d1"] != 1 {
		t.Error("Add did not record a new judgment")
	}
}

func TestReadQrelsShared(t *testing.T) {
	dir := sharedData(t, "eval-reference")
	q, err := ReadQrelsFile(filepath.Join(dir, "nfcorpus.qrels"))
	if err != nil {
		t.Fatal(err)
	}
	if len(q) != 323 || q.Len() != 12334 || q["PLAIN-2"]["MED-2427"] != 2 {
		t.Errorf("nfcorpus.qrels: %d queries, %d judgments, PLAIN-2/MED-2427 = %d; want 323, 12334, 2", len(q), q.Len(), q["PLAIN-2"]["MED-2427"])
	}
	mixed, err := ReadQrelsFile(filepath.Join(dir, "nfcorpus.mixed.qrels"))
	if err != nil {
		t.Fatal(err)
	}
	grades := map[int]int{}
	for _, m := range mixed {
		for _, g := range m {
			grades[g]++
		}
	}
	if grades[0] == 0 || grades[-1] == 0 || mixed.Len() != q.Len() {
		t.Errorf("nfcorpus.mixed.qrels grades %v over %d judgments; want some 0 and -1 over %d", grades, mixed.Len(), q.Len())
	}
}

func TestReadRun(t *testing.T) {
	// List order is kept as written, not re-sorted; ranks are not checked
	// against it; the Q0 and tag columns are free text.
	input := "q2 Q0 b 5 1.5 sys\nq1 x a 1 -2 sys\n\nq2 Q0 a 9 3.25e1 other\nq2 Q0 c -1 0 sys\n"
	run, err := ReadRun(strings.NewReader(input), "x.run")
	if err != nil {
		t.Fatal(err)
	}
	want := ir.Run{"q1": {{DocID: "a", Score: -2}}, "q2": {{DocID: "b", Score: 1.5}, {DocID: "a", Score: 32.5}, {DocID: "c", Score: 0}}}
	if !reflect.DeepEqual(run, want) {
		t.Errorf("got %v, want %v", run, want)
	}
	if ids := QueryIDs(run); !reflect.DeepEqual(ids, []string{"q1", "q2"}) {
		t.Errorf("QueryIDs = %q", ids)
	}
}

func TestReadRunShared(t *testing.T) {
	dir := sharedData(t, "eval-reference")
	run, err := ReadRunFile(filepath.Join(dir, "nfcorpus.bm25.run"))
	if err != nil {
		t.Fatal(err)
	}
	hits := run["PLAIN-2"]
	if len(run) != 323 || len(hits) != 100 || hits[0] != (ir.Hit{DocID: "MED-4201", Score: 22.584192}) || hits[1] != (ir.Hit{DocID: "MED-10", Score: 21.713257}) {
		t.Errorf("nfcorpus.bm25.run: %d queries, PLAIN-2 has %d hits starting %v", len(run), len(hits), hits[:2])
	}
	// Lines of the neartie run are shuffled, so only a reader that keeps
	// file order puts the file's first line first in its query's list.
	p := filepath.Join(dir, "nfcorpus.neartie.run")
	nt, err := ReadRunFile(p)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	first := strings.Fields(string(b[:bytes.IndexByte(b, '\n')]))
	if hits := nt[first[0]]; len(hits) == 0 || hits[0].DocID != first[2] {
		t.Errorf("nfcorpus.neartie.run: query %s starts with %v, the file with %s", first[0], hits[:1], first[2])
	}
}

func TestWriteRun(t *testing.T) {
	run := ir.Run{
		"q2":  {{DocID: "d9", Score: 0.5}, {DocID: "d1", Score: -1}},
		"q10": {{DocID: "c", Score: 22.584192}, {DocID: "d", Score: 3}, {DocID: "a", Score: float64(float32(0.1))}, {DocID: "b", Score: 0.05}},
	}
	var buf bytes.Buffer
	if err := WriteRun(&buf, run, ""); err != nil {
		t.Fatal(err)
	}
	// Queries in byte order (q10 before q2), ranks from 1 in list order, the
	// float32-exact score written with float32's shortest digits, the
	// default tag.
	want := "q10 Q0 c 1 22.584192 r2med\n" +
		"q10 Q0 d 2 3 r2med\n" +
		"q10 Q0 a 3 0.1 r2med\n" +
		"q10 Q0 b 4 0.05 r2med\n" +
		"q2 Q0 d9 1 0.5 r2med\n" +
		"q2 Q0 d1 2 -1 r2med\n"
	if buf.String() != want {
		t.Errorf("got:\n%swant:\n%s", buf.String(), want)
	}
	buf.Reset()
	if err := WriteRun(&buf, ir.Run{"q": {{DocID: "d", Score: 1}}}, "bm25"); err != nil || buf.String() != "q Q0 d 1 1 bm25\n" {
		t.Errorf("tag: %q, %v", buf.String(), err)
	}
}

// TestWriteRunRefusesTies: a list whose float32 scores do not strictly
// decrease would be evaluated in another order than the one written
// (trec_eval orders equal float32 scores by doc id, and ignores the rank
// column), so WriteRun refuses it, names the query and rank, and writes
// nothing; ranked by ir.Rank, the same list is written.
func TestWriteRunRefusesTies(t *testing.T) {
	negZero := math.Copysign(0, -1)
	for _, c := range []struct {
		name string
		hits []ir.Hit
		rank int
	}{
		{"equal", []ir.Hit{{DocID: "a", Score: 2}, {DocID: "b", Score: 1}, {DocID: "c", Score: 1}}, 3},
		{"equal in float32", []ir.Hit{{DocID: "a", Score: 1}, {DocID: "b", Score: 1 + 1e-9}}, 2},
		{"increasing", []ir.Hit{{DocID: "a", Score: 1}, {DocID: "b", Score: 2}}, 2},
		{"signed zeros", []ir.Hit{{DocID: "a", Score: 0}, {DocID: "b", Score: negZero}}, 2},
	} {
		var buf bytes.Buffer
		err := WriteRun(&buf, ir.Run{"q1": slices.Clone(c.hits), "q0": {{DocID: "x", Score: 1}}}, "t")
		var te *TieError
		if !errors.As(err, &te) || te.Query != "q1" || te.Rank != c.rank || te.Doc != c.hits[c.rank-1].DocID ||
			!strings.Contains(err.Error(), fmt.Sprintf("query \"q1\" rank %d:", c.rank)) || !strings.Contains(err.Error(), "rank the run first (ir.Run.Rank)") {
			t.Errorf("%s: %v, want a TieError at query q1 rank %d", c.name, err, c.rank)
		}
		if buf.Len() != 0 {
			t.Errorf("%s: a refused run wrote %q", c.name, buf.String())
		}
		ranked := slices.Clone(c.hits)
		ir.Rank(ranked, ir.TiesAsListed)
		if err := WriteRun(&buf, ir.Run{"q1": ranked}, "t"); err != nil {
			t.Errorf("%s: the ranked list is refused: %v", c.name, err)
		}
	}
}

// TestWriteRunRefusesScoresBeyondFloat32: trec_eval 9.0.8 reads a run's
// scores into a C float, where a double beyond float32's range becomes
// ±Inf, while float64 readers (pytrec_eval's parser, ranx) keep it:
// WriteRun refuses such a score, even a lone one, naming the query and
// document and saying what to do, and writes nothing. A double just above
// float32's largest value that still rounds to it is written.
func TestWriteRunRefusesScoresBeyondFloat32(t *testing.T) {
	mid := math.Ldexp(1, 128) - math.Ldexp(1, 103) // rounds to +Inf (ties to even)
	for _, c := range []struct {
		hits []ir.Hit
		doc  string
	}{
		{[]ir.Hit{{DocID: "top", Score: 1e39}, {DocID: "b", Score: 1}}, "top"},
		{[]ir.Hit{{DocID: "a", Score: 1}, {DocID: "bottom", Score: -1e39}}, "bottom"},
		{[]ir.Hit{{DocID: "mid", Score: mid}, {DocID: "b", Score: 1}}, "mid"},
	} {
		var buf bytes.Buffer
		err := WriteRun(&buf, ir.Run{"q1": c.hits, "q0": {{DocID: "x", Score: 1}}}, "t")
		var re *RangeError
		if !errors.As(err, &re) || re.Query != "q1" || re.Doc != c.doc ||
			!strings.HasPrefix(err.Error(), fmt.Sprintf("query \"q1\": document %q has score ", c.doc)) || !strings.Contains(err.Error(), "scale the scores down") {
			t.Errorf("%v: %v, want a RangeError naming q1 and %s", c.hits, err, c.doc)
		}
		if buf.Len() != 0 {
			t.Errorf("%v: a refused run wrote %q", c.hits, buf.String())
		}
	}
	below := math.Nextafter(mid, 0)
	var buf bytes.Buffer
	if err := WriteRun(&buf, ir.Run{"q1": {{DocID: "a", Score: below}, {DocID: "b", Score: 1}}}, "t"); err != nil {
		t.Fatalf("%v, which reads as float32's largest value: %v", below, err)
	}
	back, err := ReadRun(&buf, "back.run")
	if err != nil || float32(back["q1"][0].Score) != math.MaxFloat32 {
		t.Errorf("read back %v, %v; want a score that is float32's largest", back, err)
	}
}

// TestWriteRunNearTiesMeanTheListOrder: scores that differ as float64 but
// are equal as float32 are a tie to trec_eval 9.0.8, which breaks it by
// doc id (descending), whatever the float64 digits say. WriteRun refuses
// them unranked (TestWriteRunRefusesTies); ranked by ir.Rank they are
// written so that trec_eval's reading of the file (ir.ByScore on the
// scores read back) is the list order, under either tie rule.
func TestWriteRunNearTiesMeanTheListOrder(t *testing.T) {
	near := []ir.Hit{{DocID: "a", Score: 1 + 2e-9}, {DocID: "b", Score: 1 + 1e-9}, {DocID: "c", Score: 1}, {DocID: "d", Score: 1 - 1e-9}, {DocID: "e", Score: 0.5}}
	for _, ties := range []ir.Ties{ir.TiesAsListed, ir.TiesByDocID} {
		hits := slices.Clone(near)
		ir.Rank(hits, ties)
		var buf bytes.Buffer
		if err := WriteRun(&buf, ir.Run{"q": hits}, "t"); err != nil {
			t.Fatalf("%v: %v", ties, err)
		}
		back, err := ReadRun(&buf, "back.run")
		if err != nil {
			t.Fatal(err)
		}
		read := slices.Clone(back["q"])
		slices.SortStableFunc(read, ir.ByScore)
		var listed, evaluated []string
		for i := range hits {
			listed, evaluated = append(listed, hits[i].DocID), append(evaluated, read[i].DocID)
		}
		if !slices.Equal(listed, evaluated) {
			t.Errorf("%v: written in the order %v, trec_eval ranks %v", ties, listed, evaluated)
		}
		if want := []string{"a", "b", "c", "d", "e"}; ties == ir.TiesAsListed && !slices.Equal(listed, want) {
			t.Errorf("as listed: %v, want %v", listed, want)
		}
		if want := []string{"d", "c", "b", "a", "e"}; ties == ir.TiesByDocID && !slices.Equal(listed, want) {
			t.Errorf("by doc id: %v, want trec_eval's %v", listed, want)
		}
	}
}

// scoresMatch is the precision WriteRun promises: float32 scores come back
// equal as float32 (what trec_eval 9.0.8 reads), others exactly.
func scoresMatch(wrote, read float64) bool {
	if float64(float32(wrote)) == wrote {
		return float32(read) == float32(wrote)
	}
	return read == wrote
}

func TestRunRoundTripShared(t *testing.T) {
	dir := sharedData(t, "eval-reference")
	for _, name := range []string{"nfcorpus.bm25.run", "nfcorpus.ties.run", "nfcorpus.neartie.run", "nfcorpus.partial.run"} {
		run, err := ReadRunFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		// Read as trec_eval reads it: ties by doc id.
		run.Rank(ir.TiesByDocID)
		out := filepath.Join(t.TempDir(), name)
		if err := WriteRunFile(out, run, "t"); err != nil {
			t.Fatal(err)
		}
		back, err := ReadRunFile(out)
		if err != nil {
			t.Fatal(err)
		}
		checkRunRoundTrip(t, run, back)
	}
}

func checkRunRoundTrip(t *testing.T, run, back ir.Run) {
	t.Helper()
	if len(back) != len(run) {
		t.Fatalf("%d queries written, %d read back", len(run), len(back))
	}
	for qid, hits := range run {
		got := back[qid]
		if len(got) != len(hits) {
			t.Fatalf("query %q: %d hits written, %d read back", qid, len(hits), len(got))
		}
		for i, h := range hits {
			if got[i].DocID != h.DocID || !scoresMatch(h.Score, got[i].Score) {
				t.Fatalf("query %q hit %d: wrote %v, read back %v", qid, i, h, got[i])
			}
		}
	}
}

// The float32 branch of AppendScore relies on float32(ParseFloat(s, 64))
// giving back the float32 whose shortest digits s are; a double rounding
// could break that. Checked here on random bit patterns and on the
// boundaries where it is likeliest.
func TestAppendScoreFloat32(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	n := 1_000_000
	if testing.Short() {
		n = 50_000
	}
	check := func(x float32) {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return
		}
		s := string(AppendScore(nil, float64(x)))
		y, err := strconv.ParseFloat(s, 64)
		if err != nil || float32(y) != x {
			t.Fatalf("float32 %v (bits %08x) written as %s reads back as %v", x, math.Float32bits(x), s, float32(y))
		}
	}
	for range n {
		check(math.Float32frombits(rng.Uint32()))
	}
	for _, x := range []float32{0, float32(math.Copysign(0, -1)), math.SmallestNonzeroFloat32, math.MaxFloat32, -math.MaxFloat32, 1, 0.1, 16777216, 16777217} {
		check(x)
	}
}

func TestAppendScore(t *testing.T) {
	for _, c := range []struct {
		in   float64
		want string
	}{
		{0, "0"},
		{-1.5, "-1.5"},
		{float64(float32(0.1)), "0.1"},
		{0.1, "0.1"},
		{0.1000000001, "0.1000000001"},
		{22.584192, "22.584192"},
		{1e-7, "0.0000001"},
		{123456789, "123456789"},
	} {
		if got := string(AppendScore(nil, c.in)); got != c.want {
			t.Errorf("AppendScore(%v) = %s, want %s", c.in, got, c.want)
		}
	}
}

func gzipFile(t *testing.T, path string, data string) {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write([]byte(data))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestReadGzip(t *testing.T) {
	dir := t.TempDir()
	// The name need not say gzip; the bytes do.
	gzipFile(t, filepath.Join(dir, "run.txt"), "q1 Q0 d1 1 2.5 x\nq1 Q0 d2 2 1 x\n")
	gzipFile(t, filepath.Join(dir, "qrels.gz"), "q1 0 d1 1\n")
	run, err := ReadRunFile(filepath.Join(dir, "run.txt"))
	if err != nil || !reflect.DeepEqual(run, ir.Run{"q1": {{DocID: "d1", Score: 2.5}, {DocID: "d2", Score: 1}}}) {
		t.Errorf("gzipped run: %v, %v", run, err)
	}
	q, err := ReadQrelsFile(filepath.Join(dir, "qrels.gz"))
	if err != nil || !reflect.DeepEqual(q, ir.Qrels{"q1": {"d1": 1}}) {
		t.Errorf("gzipped qrels: %v, %v", q, err)
	}
	// A file with the gzip magic but no valid header is reported as such.
	bad := filepath.Join(dir, "bad.gz")
	os.WriteFile(bad, []byte{0x1f, 0x8b, 0, 0}, 0o644)
	if _, err := ReadRunFile(bad); err == nil || !strings.HasPrefix(err.Error(), bad+": not a readable gzip file: ") {
		t.Errorf("bad gzip header: %v", err)
	}
}

// TestMalformed reads every file under testdata/malformed and checks the
// exact error: file, line and message.
func TestMalformed(t *testing.T) {
	t.Chdir("testdata/malformed")
	cases := []struct{ path, want string }{
		{"qrels/beir-tsv.txt",
			`qrels/beir-tsv.txt:1: qrels line has 3 fields, want 4 (query-id iteration doc-id grade)`},
		{"qrels/duplicate.txt",
			`qrels/duplicate.txt:3: document "d1" is judged twice for query "q1"; keep one judgment per pair`},
		{"qrels/joined-bom.txt",
			`qrels/joined-bom.txt:2: line starts with a byte-order mark (U+FEFF, bytes EF BB BF), as where files with one were joined; remove it (sed -i '2,$ s/^\xEF\xBB\xBF//' FILE)`},
		{"qrels/nbsp-docid.txt",
			`qrels/nbsp-docid.txt:2: document id "d\u00a02" contains U+00A0, which Python's str.split() takes for whitespace, at byte 1; pytrec_eval (and scripts that split TREC lines in Python) would cut the id there, so rename it`},
		{"qrels/five-fields.txt",
			`qrels/five-fields.txt:3: qrels line has 5 fields, want 4 (query-id iteration doc-id grade)`},
		{"qrels/float-grade.txt",
			`qrels/float-grade.txt:2: grade "1.0" is not an integer; TREC qrels grades are whole numbers (0 not relevant, 1 and up relevant)`},
		{"qrels/latin1-docid.txt",
			`qrels/latin1-docid.txt:2: invalid UTF-8 (byte 0xe9) at byte offset 8 of the line; the file must be UTF-8 text: convert it from its real encoding (iconv -f WINDOWS-1252 -t UTF-8 for text from Windows tools, say), or drop the bad bytes with iconv -c -f UTF-8 -t UTF-8`},
		{"qrels/three-fields.txt",
			`qrels/three-fields.txt:2: qrels line has 3 fields, want 4 (query-id iteration doc-id grade)`},
		{"qrels/word-grade.txt",
			`qrels/word-grade.txt:2: grade "x" is not an integer; TREC qrels grades are whole numbers (0 not relevant, 1 and up relevant)`},
		{"run/duplicate.run",
			`run/duplicate.run:4: document "d1" appears twice for query "q1" (first on line 1); a run ranks each document once`},
		{"run/emspace-qid.run",
			`run/emspace-qid.run:2: query id "q\u20032" contains U+2003, which Python's str.split() takes for whitespace, at byte 1; pytrec_eval (and scripts that split TREC lines in Python) would cut the id there, so rename it`},
		{"run/joined-bom.run",
			`run/joined-bom.run:2: line starts with a byte-order mark (U+FEFF, bytes EF BB BF), as where files with one were joined; remove it (sed -i '2,$ s/^\xEF\xBB\xBF//' FILE)`},
		{"run/nbsp-tag.run",
			`run/nbsp-tag.run:1: run tag "my\u00a0run" contains U+00A0, which Python's str.split() takes for whitespace, at byte 2; pytrec_eval would split the line there and refuse it, so rename the run tag`},
		{"run/separator-docid.run",
			`run/separator-docid.run:2: document id "d\x1c2" contains U+001C, which Python's str.split() takes for whitespace, at byte 1; pytrec_eval (and scripts that split TREC lines in Python) would cut the id there, so rename it`},
		{"run/five-fields.run",
			`run/five-fields.run:2: run line has 5 fields, want 6 (query-id Q0 doc-id rank score tag)`},
		{"run/float-rank.run",
			`run/float-rank.run:2: rank "2.0" is not an integer; the fourth column is the rank, a whole number (trec_eval ignores its value)`},
		{"run/hex-score.run",
			`run/hex-score.run:2: score "0x1p3" is not a decimal number (digits, an optional '.' and exponent): it is hexadecimal, which Python's float() (pytrec_eval, ranx) refuses; write the score in decimal`},
		{"run/inf-score.run",
			`run/inf-score.run:2: score "-Inf" is not finite; a run needs real-valued scores: give the document a finite score or leave it out`},
		{"run/invalid-utf8-qid.run",
			`run/invalid-utf8-qid.run:2: invalid UTF-8 (byte 0xff) at byte offset 1 of the line; the file must be UTF-8 text: convert it from its real encoding (iconv -f WINDOWS-1252 -t UTF-8 for text from Windows tools, say), or drop the bad bytes with iconv -c -f UTF-8 -t UTF-8`},
		{"run/nan-score.run",
			`run/nan-score.run:2: score "NaN" is not finite; a run needs real-valued scores: give the document a finite score or leave it out`},
		{"run/no-gzip-trailer.run.gz",
			`run/no-gzip-trailer.run.gz:301: file ends in the middle of its data (unexpected EOF); it is probably truncated, download or decompress it again`},
		{"run/overflow-score.run",
			`run/overflow-score.run:2: score "1e400" is out of range for a float64; scale the run's scores down`},
		{"run/seven-fields.run",
			`run/seven-fields.run:2: run line has 7 fields, want 6 (query-id Q0 doc-id rank score tag)`},
		{"run/underscore-score.run",
			`run/underscore-score.run:2: score "1_000" is not a decimal number (digits, an optional '.' and exponent): trec_eval reads only what comes before the '_' but Python's float() skips it; write the score without '_'`},
		{"run/word-score.run",
			`run/word-score.run:2: score "high" is not a number; the fifth column is the score, a decimal number such as 12.5`},
	}
	files, err := filepath.Glob("*/*")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != len(cases) {
		t.Errorf("%d files under testdata/malformed, %d cases; give every file a case", len(files), len(cases))
	}
	for _, c := range cases {
		t.Run(c.path, func(t *testing.T) {
			var err error
			if path.Dir(c.path) == "qrels" {
				_, err = ReadQrelsFile(c.path)
			} else {
				_, err = ReadRunFile(c.path)
			}
			if err == nil || err.Error() != c.want {
				t.Errorf("error\n got: %v\nwant: %s", err, c.want)
			}
		})
	}
}

// A byte-order mark (Windows tools write one) is not part of the first
// query id: before it was skipped, the first judgment and hit went to a
// query "\ufeffq1" that no run or qrels shares, and were lost.
func TestReadSkipsByteOrderMark(t *testing.T) {
	q, err := ReadQrels(strings.NewReader("\xef\xbb\xbfq1 0 d1 1\nq1 0 d2 2\n"), "bom.qrels")
	if err != nil || !reflect.DeepEqual(q, ir.Qrels{"q1": {"d1": 1, "d2": 2}}) {
		t.Errorf("ReadQrels with a BOM = %v, %v", q, err)
	}
	run, err := ReadRun(strings.NewReader("\xef\xbb\xbfq1 Q0 d1 1 2 t\nq1 Q0 d2 2 1 t\n"), "bom.run")
	if err != nil || !reflect.DeepEqual(run, ir.Run{"q1": {{DocID: "d1", Score: 2}, {DocID: "d2", Score: 1}}}) {
		t.Errorf("ReadRun with a BOM = %v, %v", run, err)
	}
	// Only at the start of the file: one inside is where files were
	// joined (cat a b), refused in TestMalformed (joined-bom), as dataset
	// refuses it, rather than read into a query "\ufeffq1".
	if _, err := ReadQrels(strings.NewReader("q1 0 d1 1\n\xef\xbb\xbfq1 0 d2 1\n"), "mid.qrels"); err == nil {
		t.Fatal("a byte-order mark inside the file was read as part of a query id")
	}
}

func TestReadRunRankLimits(t *testing.T) {
	for rank, ok := range map[string]bool{"9223372036854775807": true, "9223372036854775808": false, "-12": true, "+3": true, "1e3": false, "": false, "-9223372036854775808": true, "+-1234567890123456789": false} {
		_, err := ReadRun(strings.NewReader("q Q0 d "+rank+" 1.5 t\n"), "r")
		if (err == nil) != ok {
			t.Errorf("rank %q: err = %v, want ok=%v", rank, err, ok)
		}
	}
}

func TestReadRunInterleavedQueries(t *testing.T) {
	run, err := ReadRun(strings.NewReader("a Q0 d1 1 3 t\nb Q0 d1 1 3 t\na Q0 d2 2 2 t\nb Q0 d2 2 2 t\na Q0 d1 3 1 t\n"), "r")
	if err == nil || err.Error() != `r:5: document "d1" appears twice for query "a" (first on line 1); a run ranks each document once` {
		t.Fatalf("interleaved duplicate: %v (run %v)", err, run)
	}
	run, err = ReadRun(strings.NewReader("a Q0 d1 1 3 t\nb Q0 d1 1 3 t\na Q0 d2 2 2 t\n"), "r")
	if err != nil || len(run["a"]) != 2 || run["a"][1].DocID != "d2" || len(run["b"]) != 1 {
		t.Fatalf("interleaved run = %v, %v", run, err)
	}
}

func TestWriteRunRefusesUnreadableRuns(t *testing.T) {
	for name, c := range map[string]struct {
		run ir.Run
		tag string
	}{
		"nan":       {ir.Run{"q": {{DocID: "d", Score: math.NaN()}}}, "t"},
		"inf":       {ir.Run{"q": {{DocID: "d", Score: math.Inf(1)}}}, "t"},
		"empty id":  {ir.Run{"q": {{DocID: "", Score: 1}}}, "t"},
		"space id":  {ir.Run{"q": {{DocID: "a b", Score: 1}}}, "t"},
		"space qid": {ir.Run{"q 1": {{DocID: "d", Score: 1}}}, "t"},
		"space tag": {ir.Run{"q": {{DocID: "d", Score: 1}}}, "my tag"},
		// What Python's str.split() cuts at, which ReadRun refuses.
		"nbsp id":      {ir.Run{"q": {{DocID: "a\u00a0b", Score: 1}}}, "t"},
		"em space qid": {ir.Run{"q\u20031": {{DocID: "d", Score: 1}}}, "t"},
		"sep tag":      {ir.Run{"q": {{DocID: "d", Score: 1}}}, "my\x1ftag"},
	} {
		if err := WriteRun(io.Discard, c.run, c.tag); err == nil {
			t.Errorf("%s: WriteRun accepted an unreadable run", name)
		}
	}
}

func TestAppendScoreSurvivesDoubleRounding(t *testing.T) {
	// The two float32 values whose shortest float32 digits, read as a
	// float64 and narrowed, land on a neighbour (found by checking all 2^32).
	for _, bits := range []uint32{0x15ae43fd, 0x95ae43fd, 0x3dcccccd} {
		f := math.Float32frombits(bits)
		s := string(AppendScore(nil, float64(f)))
		back, err := strconv.ParseFloat(s, 64)
		if err != nil || float32(back) != f {
			t.Errorf("%08x: wrote %s, reads back as %v, want %v", bits, s, float32(back), f)
		}
	}
	if s := string(AppendScore(nil, float64(float32(0.1)))); s != "0.1" {
		t.Errorf("float32(0.1) written as %s, want the short 0.1", s)
	}
}

func TestTruncatedGzipIsReportedAsTruncated(t *testing.T) {
	var full bytes.Buffer
	zw := gzip.NewWriter(&full)
	for i := range 2000 {
		fmt.Fprintf(zw, "q%d Q0 d%d 1 %d.5 tag\n", i%7, i, i)
	}
	zw.Close()
	cut := full.Bytes()[:full.Len()/2]
	_, err := ReadRun(bytesReader(t, cut), "cut.run.gz")
	if err == nil || !strings.Contains(err.Error(), "truncated") {
		t.Fatalf("truncated gzip run: %v", err)
	}
}

func bytesReader(t *testing.T, gz []byte) io.Reader {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		t.Fatal(err)
	}
	return zr
}

// TestRankIsWhatTheFileHolds: a run ranked by Rank reads back from its
// file bit for bit, whatever its scores' precision, so a stage handing it
// on in memory hands on what a resumed stage reads back.
func TestRankIsWhatTheFileHolds(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	run := ir.Run{}
	for q := range 50 {
		qid := "q" + strconv.Itoa(q)
		for d := range 40 {
			s := float64(rng.IntN(8)) / 3 // ties, float64 values
			switch rng.IntN(3) {
			case 0:
				s = float64(float32(s)) // a float32 scorer's
			case 1:
				s = float64(float32(rng.NormFloat64() * 10))
			}
			run[qid] = append(run[qid], ir.Hit{DocID: "d" + strconv.Itoa(d), Score: s})
		}
	}
	for _, ties := range []ir.Ties{ir.TiesByDocID, ir.TiesAsListed} {
		r := make(ir.Run, len(run))
		for qid, hits := range run {
			r[qid] = slices.Clone(hits)
		}
		Rank(r, ties)
		var buf bytes.Buffer
		if err := WriteRun(&buf, r, "t"); err != nil {
			t.Fatalf("%v: %v", ties, err)
		}
		back, err := ReadRun(&buf, "back")
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(back, r) {
			t.Fatalf("%v: the run read back differs from the ranked run", ties)
		}
		for _, s := range []float64{0.1, float64(float32(0.1)), 6.168403, float64(float32(6.168403)), 1e-45, 0} {
			if a := AsWritten(s); AsWritten(a) != a || float32(a) != float32(s) {
				t.Errorf("AsWritten(%v) = %v", s, a)
			}
		}
	}
}

// TestWrongKindOfFile: a run given where qrels are wanted, qrels where a
// run is, or a JSON-lines file where either is, is named as such with
// what to check, where the error gave only a count of fields.
func TestWrongKindOfFile(t *testing.T) {
	for _, c := range []struct {
		qrels bool
		text  string
		want  string
	}{
		{true, "q1 Q0 d1 1 2.5 bm25\n", `x:1: qrels line has 6 fields, want 4 (query-id iteration doc-id grade); the line looks like a run's (query-id Q0 doc-id rank score tag): is the file a run, given where the qrels go?`},
		{false, "q1 0 d1 1\n", `x:1: run line has 4 fields, want 6 (query-id Q0 doc-id rank score tag); the line looks like a qrels line (query-id iteration doc-id grade): is the file the qrels, given where a run goes?`},
		{false, `{"q_id": "q1", "p_id": "d1", "score": 1}` + "\n", `x:1: the line is JSON, not a run line (query-id Q0 doc-id rank score tag): a TREC file is whitespace-separated columns, not JSON lines`},
		{true, `{"q_id": "q1", "p_id": "d1", "score": 1}` + "\n", `x:1: the line is JSON, not a qrels line (query-id iteration doc-id grade): a TREC file is whitespace-separated columns, not JSON lines`},
	} {
		var err error
		if c.qrels {
			_, err = ReadQrels(strings.NewReader(c.text), "x")
		} else {
			_, err = ReadRun(strings.NewReader(c.text), "x")
		}
		if err == nil || err.Error() != c.want {
			t.Errorf("%q: %v\nwant %s", c.text, err, c.want)
		}
	}
}

// CompareWritten is cmp.Compare over AsWritten for every kind of pair:
// float32 neighbours, float64 values, a float32 against the float64 its
// digits name (0.1 and float32(0.1) are equal as written), infinities and
// NaN.
func TestCompareWritten(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	var vals []float64
	for range 2000 {
		f := float32(rng.NormFloat64() * math.Pow(10, float64(rng.IntN(12)-6)))
		vals = append(vals, float64(f), float64(math.Nextafter32(f, float32(math.Inf(1)))),
			rng.NormFloat64()*math.Pow(10, float64(rng.IntN(12)-6)))
	}
	for _, d := range []float64{0.1, 0.2, 0.3, 1.1, 12.34, 1e-7, 3.4028235e38} {
		vals = append(vals, d, float64(float32(d)), AsWritten(float64(float32(d))))
	}
	vals = append(vals, 0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.NaN())
	mixedEqual := 0
	for i, a := range vals {
		for _, b := range []float64{vals[(i+1)%len(vals)], vals[(i+2)%len(vals)], vals[(i*7+3)%len(vals)], a} {
			want := cmp.Compare(AsWritten(a), AsWritten(b))
			if got := CompareWritten(a, b); got != want {
				t.Fatalf("CompareWritten(%v, %v) = %d, AsWritten gives %d", a, b, got, want)
			}
			if want == 0 && a != b && !math.IsNaN(a) {
				mixedEqual++
			}
		}
	}
	if mixedEqual == 0 {
		t.Error("no pair of different values equal as written was compared")
	}
}

// TestLineTooLong: a line over the readers' limit (a binary file, or one
// whose line breaks were lost) is an error naming the file, the line and
// what to check, not bufio.Scanner's "token too long".
func TestLineTooLong(t *testing.T) {
	defer func(n int) { maxLine = n }(maxLine)
	maxLine = 1 << 20
	long := strings.Repeat("x", maxLine)
	for _, c := range []struct {
		name, text string
		read       func(io.Reader, string) error
		want       string
	}{
		{"q.qrels", "q1 0 d1 1\nq1 0 " + long + " 1\n",
			func(r io.Reader, name string) error { _, err := ReadQrels(r, name); return err },
			"q.qrels:2: line is longer than 1 MiB, the most the readers accept; a TREC qrels file holds one record per line, so check that this is one (a binary file, or one whose line breaks were lost, reads as one long line)"},
		{"r.run", "q1 Q0 d1 1 2 t\nq1 Q0 " + long + " 2 1 t\n",
			func(r io.Reader, name string) error { _, err := ReadRun(r, name); return err },
			"r.run:2: line is longer than 1 MiB, the most the readers accept; a TREC run file holds one record per line, so check that this is one (a binary file, or one whose line breaks were lost, reads as one long line)"},
		// Fusing and reranking read a run's tag first (retrieve.RunSystem).
		{"r.run", "q1 Q0 d1 1 2 t\nq1 Q0 " + long + " 2 1 t\n",
			func(r io.Reader, name string) error { _, err := ReadRunTag(r, name); return err },
			"r.run:2: line is longer than 1 MiB, the most the readers accept; a TREC run file holds one record per line, so check that this is one (a binary file, or one whose line breaks were lost, reads as one long line)"},
	} {
		if err := c.read(strings.NewReader(c.text), c.name); err == nil || err.Error() != c.want {
			t.Errorf("%s:\n got: %v\nwant: %s", c.name, err, c.want)
		}
	}
	// A line just under the limit reads.
	if _, err := ReadRun(strings.NewReader("q1 Q0 "+long[:maxLine-32]+" 1 1 t\n"), "ok.run"); err != nil {
		t.Errorf("a line under the limit: %v", err)
	}
}

// TREC files separate fields by any run of white space, as trec_eval
// 9.0.8 reads them: tabs, several spaces, CRLF line ends and a last line
// without newline read as the plain file does.
func TestReadRunSeparators(t *testing.T) {
	plain := "q1 Q0 d1 1 2.5 t\nq1 Q0 d2 2 1 t\nq2 Q0 d3 1 0.5 t\n"
	want, err := ReadRun(strings.NewReader(plain), "plain.run")
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range []string{
		strings.ReplaceAll(plain, " ", "\t"),
		"q1\t Q0  d1 1\t2.5 t \nq1 Q0 d2 2 1 t\n\t\nq2 Q0 d3 1 0.5 t",
		strings.ReplaceAll(plain, "\n", "\r\n"),
		"\xef\xbb\xbf" + strings.TrimSuffix(plain, "\n"),
	} {
		got, err := ReadRun(strings.NewReader(in), "x.run")
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%q: %v, %v; want %v", in, got, err, want)
		}
	}
}
