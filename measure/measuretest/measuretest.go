// Package measuretest checks, for tests, that a written run means the
// ranking it lists: that trec_eval, pytrec_eval, ranx and r2med's measure
// — which all ignore the rank column and order equal float32 scores by doc
// id — evaluate it exactly as its list order scores.
package measuretest

import (
	"bufio"
	"bytes"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/measure"
	"github.com/r2med/r2med/trec"
)

// Measures are what CheckFile compares: every cutoff where an order
// change shows, and the order-free counts.
var Measures = []measure.Measure{
	{Family: measure.RecipRank}, {Family: measure.MAP}, {Family: measure.NDCG},
	{Family: measure.NDCGCut, Cutoff: 1}, {Family: measure.NDCGCut, Cutoff: 3}, {Family: measure.NDCGCut, Cutoff: 10},
	{Family: measure.P, Cutoff: 1}, {Family: measure.P, Cutoff: 5}, {Family: measure.NumRelRet},
}

// CheckFile reads the TREC run file at path and checks that it means its
// list order: per query, the rank column counts 1, 2, 3… down the lines;
// the lines are in trec_eval's order (float32 score descending, then doc
// id descending); and measure, with trec_eval's semantics, scores the file
// exactly as it scores the same documents ranked as listed. It returns
// each query's documents as listed.
func CheckFile(t testing.TB, path string, qrels ir.Qrels) map[string][]string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string][]string{}
	hits := ir.Run{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<26)
	for line := 1; sc.Scan(); line++ {
		f := strings.Fields(sc.Text())
		if len(f) != 6 {
			t.Fatalf("%s:%d: %d fields", path, line, len(f))
		}
		qid, doc := f[0], f[2]
		rank, err1 := strconv.Atoi(f[3])
		score, err2 := strconv.ParseFloat(f[4], 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("%s:%d: rank %q score %q", path, line, f[3], f[4])
		}
		if want := len(listed[qid]) + 1; rank != want {
			t.Fatalf("%s:%d: query %s has rank %d on its line %d", path, line, qid, rank, want)
		}
		listed[qid] = append(listed[qid], doc)
		hits[qid] = append(hits[qid], ir.Hit{DocID: doc, Score: score})
	}
	for qid, hs := range hits {
		sorted := slices.Clone(hs)
		slices.SortStableFunc(sorted, ir.ByScore)
		for i := range hs {
			if sorted[i].DocID != hs[i].DocID {
				t.Fatalf("%s: query %s: rank %d lists %s (score %v), trec_eval ranks %s (score %v) there: the file is not evaluated in the order it is written",
					path, qid, i+1, hs[i].DocID, float32(hs[i].Score), sorted[i].DocID, float32(sorted[i].Score))
			}
		}
	}
	run, err := trec.ReadRunFile(path)
	if err != nil {
		t.Fatal(err)
	}
	CheckEvaluated(t, run, listed, qrels)
	return listed
}

// CheckRun writes run as trec.WriteRun writes it (which must accept it)
// and checks the file with CheckFile. It returns each query's documents
// as listed.
func CheckRun(t testing.TB, run ir.Run, qrels ir.Qrels) map[string][]string {
	t.Helper()
	path := t.TempDir() + "/run.trec"
	if err := trec.WriteRunFile(path, run, "t"); err != nil {
		t.Fatalf("writing the run: %v", err)
	}
	return CheckFile(t, path, qrels)
}

// CheckEvaluated checks that measure scores run (with trec_eval's
// semantics: its scores, not its order) exactly as it scores the ranking
// listed, query by query.
func CheckEvaluated(t testing.TB, run ir.Run, listed map[string][]string, qrels ir.Qrels) {
	t.Helper()
	got, err := measure.Evaluate(qrels, run, Measures, measure.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want, err := measure.Evaluate(qrels, AsListed(listed), Measures, measure.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i, q := range want.Queries {
		for j, m := range want.Measures {
			if g := got.Queries[i].Values[j]; g != q.Values[j] {
				t.Errorf("query %s: %s of the run %v, of its listed order %v", q.ID, m.Name(), g, q.Values[j])
			}
		}
	}
}

// AsListed is the run that ranks each query's documents in the order
// given, by scores n, n−1, … 1 that no evaluator can read otherwise.
func AsListed(listed map[string][]string) ir.Run {
	run := make(ir.Run, len(listed))
	for qid, docs := range listed {
		hits := make([]ir.Hit, len(docs))
		for i, d := range docs {
			hits[i] = ir.Hit{DocID: d, Score: float64(len(docs) - i)}
		}
		run[qid] = hits
	}
	return run
}

// IDs lists each query's documents in run's list order.
func IDs(run ir.Run) map[string][]string {
	out := make(map[string][]string, len(run))
	for qid, hits := range run {
		ids := make([]string, len(hits))
		for i, h := range hits {
			ids[i] = h.DocID
		}
		out[qid] = ids
	}
	return out
}
