package trec

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"unicode/utf8"

	"github.com/r2med/r2med/internal/fileio"
	"github.com/r2med/r2med/ir"
)

func addSeeds(f *testing.F, folder string) {
	files, err := filepath.Glob(filepath.Join("testdata", "malformed", folder, "*"))
	if err != nil {
		f.Fatal(err)
	}
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}

func checkLineError(t *testing.T, err error, name string, data []byte) {
	t.Helper()
	var le *fileio.LineError
	if !errors.As(err, &le) {
		t.Fatalf("error %v is a %T, not a *fileio.LineError", err, err)
	}
	lines := bytes.Count(data, []byte("\n")) + 1
	if le.File != name || le.Line < 1 || le.Line > lines+1 {
		t.Fatalf("error %v names %s line %d; the input is %s with %d lines", err, le.File, le.Line, name, lines)
	}
}

// checkText insists that an id read is UTF-8: bad bytes are errors.
func checkText(t *testing.T, id string) {
	t.Helper()
	if !utf8.ValidString(id) {
		t.Fatalf("read id %q, which is not UTF-8", id)
	}
}

func FuzzReadQrels(f *testing.F) {
	addSeeds(f, "qrels")
	f.Add([]byte("q1 0 d1 1\nq1 0 d2 0\n\nq2 0 d1 -3\n"))

	f.Fuzz(func(t *testing.T, data []byte) {
		q, err := ReadQrels(bytes.NewReader(data), "x.qrels")
		if err != nil {
			checkLineError(t, err, "x.qrels", data)
			return
		}
		var buf bytes.Buffer
		for _, qid := range QueryIDs(q) {
			checkText(t, qid)
			for _, did := range QueryIDs(q[qid]) {
				checkText(t, did)
				fmt.Fprintf(&buf, "%s 0 %s %d\n", qid, did, q[qid][did])
			}
		}
		back, err := ReadQrels(&buf, "again.qrels")
		if err != nil {
			t.Fatalf("re-reading what was accepted: %v", err)
		}
		if !reflect.DeepEqual(q, back) {
			t.Fatalf("round trip changed the qrels: %v → %v", q, back)
		}
	})
}

func FuzzReadRun(f *testing.F) {
	addSeeds(f, "run")
	f.Add([]byte("q1 Q0 d1 1 12.5 bm25\nq1 Q0 d2 2 0.1 bm25\nq2 Q0 d1 1 -3e-5 bm25\n"))
	f.Add([]byte("q1 Q0 d1 1 3.4028235e38 t\nq1 Q0 d2 2 1e-45 t\nq1 Q0 d3 3 0x1p-3 t\nq1 Q0 d4 4 1_000 t\n"))
	f.Add([]byte("q1 Q0 d1 1 1e39 t\nq1 Q0 d2 2 1 t\n"))

	f.Fuzz(func(t *testing.T, data []byte) {
		run, err := ReadRun(bytes.NewReader(data), "x.run")
		if err != nil {
			checkLineError(t, err, "x.run", data)
			return
		}
		for qid, hits := range run {
			checkText(t, qid)
			seen := make(map[string]bool)
			for _, h := range hits {
				checkText(t, h.DocID)
				if math.IsNaN(h.Score) || math.IsInf(h.Score, 0) || seen[h.DocID] {
					t.Fatalf("query %q: accepted hit %v (non-finite or repeated)", qid, h)
				}
				seen[h.DocID] = true
			}
		}
		var buf bytes.Buffer
		if err := WriteRun(&buf, run, "t"); err != nil {
			// ReadRun takes what trec_eval takes, a score beyond
			// float32's range among it (read as ±Inf); WriteRun refuses
			// to write one.
			var re *RangeError
			if errors.As(err, &re) {
				if h := re.Doc; Writable(re.Score) || !slices.ContainsFunc(run[re.Query], func(x ir.Hit) bool { return x.DocID == h && x.Score == re.Score }) {
					t.Fatal(err)
				}
				return
			}
			var te *TieError
			if !errors.As(err, &te) || ir.TieAt(run[te.Query]) != te.Rank-1 {
				t.Fatal(err)
			}
			// Ranked as trec_eval reads it, the run is written.
			run.Rank(ir.TiesByDocID)
			if err := WriteRun(&buf, run, "t"); err != nil {
				t.Fatal(err)
			}
		}
		back, err := ReadRun(&buf, "again.run")
		if err != nil {
			t.Fatalf("re-reading what was accepted: %v", err)
		}
		checkRunRoundTrip(t, run, back)
	})
}
