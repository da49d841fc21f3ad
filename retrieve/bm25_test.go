package retrieve_test

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/r2med/r2med/bm25"
	"github.com/r2med/r2med/dataset"
	"github.com/r2med/r2med/demo"
	"github.com/r2med/r2med/internal/yamlx"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/retrieve"
	"github.com/r2med/r2med/trec"
)

const shared = "../../shared/data"

func needShared(t testing.TB) {
	t.Helper()
	if _, err := os.Stat(shared); err != nil {
		if os.Getenv("R2MED_CI") == "1" {
			t.Fatalf("shared reference data not found at %s but R2MED_CI=1: %v", shared, err)
		}
		t.Skipf("shared reference data not found at %s: %v", shared, err)
	}
}

// TestBM25MatchesR2MEDReference ranks NFCorpus test with R2MED's BM25
// through the retriever alone and compares with the run R2MED's Python
// pipeline produced: same documents, same order, scores within 1e-4
// relative; and the single-query path gives the batch's lists exactly.
func TestBM25MatchesR2MEDReference(t *testing.T) {
	needShared(t)
	task, err := dataset.Load(filepath.Join(shared, "nfcorpus"), dataset.Options{Split: "test"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	r, err := retrieve.New(ctx, retrieve.DefaultBM25(), task, retrieve.Env{})
	if err != nil {
		t.Fatal(err)
	}
	qs := retrieve.Queries(task.Queries)
	run, err := r.Search(ctx, qs, 100)
	if err != nil {
		t.Fatal(err)
	}
	want, err := trec.ReadRunFile(filepath.Join(shared, "eval-reference/nfcorpus.bm25.run"))
	if err != nil {
		t.Fatal(err)
	}
	if len(run) != len(want) {
		t.Fatalf("%d queries ranked, reference %d", len(run), len(want))
	}
	for qid, ref := range want {
		got := run[qid]
		if len(got) != len(ref) {
			t.Fatalf("query %s: %d hits, reference %d", qid, len(got), len(ref))
		}
		for i := range ref {
			if got[i].DocID != ref[i].DocID || math.Abs(got[i].Score-ref[i].Score) > 1e-4*math.Abs(ref[i].Score)+1e-6 {
				t.Fatalf("query %s rank %d: %s %.6f, reference %s %.6f", qid, i+1, got[i].DocID, got[i].Score, ref[i].DocID, ref[i].Score)
			}
		}
	}
	for _, q := range qs {
		one, err := retrieve.SearchOne(ctx, r, q, 100)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(one, run[q.ID]) {
			t.Fatalf("query %s: SearchOne differs from Search", q.ID)
		}
	}
}

// TestBM25Schemes checks each scheme's name, description and that the
// retriever ranks as package bm25 does by hand.
func TestBM25Schemes(t *testing.T) {
	task, err := demo.Load()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, sc := range bm25.Schemes() {
		spec := retrieve.DefaultBM25()
		spec.Params = bm25.DefaultParams(sc)
		want := "bm25"
		if sc != bm25.R2MED {
			want += "-" + string(sc)
		}
		if spec.Name() != want || spec.Kind() != "bm25" {
			t.Errorf("%s: name %q kind %q", sc, spec.Name(), spec.Kind())
		}
		if d := spec.Describe(); d["bm25_scheme"] != string(sc) || d["k1"] != spec.Params.K1 || d["analyzer"] != "lucene-english" {
			t.Errorf("%s: describe %v", sc, d)
		}
		rec := &recorder{}
		r, err := retrieve.New(ctx, spec, task, retrieve.Env{Workers: 3, Record: rec})
		if err != nil {
			t.Fatal(err)
		}
		run, err := r.Search(ctx, retrieve.Queries(task.Queries), 5)
		if err != nil {
			t.Fatal(err)
		}
		if rec.counts["terms"] == 0 || rec.counts["postings"] == 0 || !reflect.DeepEqual(rec.stages, []string{"index", "search"}) {
			t.Errorf("%s: recorded %v %v", sc, rec.counts, rec.stages)
		}
		byHand := bm25Run(t, task, spec, 5)
		if !reflect.DeepEqual(run, byHand) {
			t.Errorf("%s: retriever run differs from package bm25's ranking", sc)
		}
	}
}

func bm25Run(t *testing.T, task *ir.Task, spec retrieve.BM25, k int) ir.Run {
	t.Helper()
	an := analyzer(t, spec.Analyzer)
	ix, err := bm25.Build(len(task.Corpus), func(i int, dst []string) []string { return an(dst, task.Corpus[i].Text) }, spec.Params, bm25.BuildOptions{IDs: ids(task)})
	if err != nil {
		t.Fatal(err)
	}
	s := ix.NewSearcher()
	run := ir.Run{}
	for _, q := range task.Queries {
		for _, h := range s.Search(an(nil, q.Text), k) {
			run[q.ID] = append(run[q.ID], ir.Hit{DocID: task.Corpus[h.Doc].ID, Score: float64(h.Score)})
		}
	}
	return run
}

func TestParseBM25(t *testing.T) {
	for _, c := range []struct {
		yaml string
		want retrieve.BM25
	}{
		{"bm25:", retrieve.DefaultBM25()},
		{"bm25: {}", retrieve.DefaultBM25()},
		{"bm25: {scheme: Lucene, k1: 1.2}", retrieve.BM25{Analyzer: "lucene-english", Params: bm25.Params{Scheme: bm25.Lucene, K1: 1.2, B: 0.4}}},
		{"bm25: {scheme: robertson, b: 1, analyzer: whitespace}", retrieve.BM25{Analyzer: "whitespace", Params: bm25.Params{Scheme: bm25.Robertson, K1: 1.5, B: 1}}},
	} {
		s, err := parse(t, c.yaml)
		if err != nil {
			t.Errorf("%s: %v", c.yaml, err)
			continue
		}
		if !reflect.DeepEqual(s, c.want) {
			t.Errorf("%s: %+v, want %+v", c.yaml, s, c.want)
		}
	}
	for _, c := range []struct{ yaml, want string }{
		{"bm25:\n  schem: lucene", `line 2: unknown key "schem" in bm25 (did you mean "scheme"?)`},
		{"bm25:\n  k1: high", `line 2: k1 in bm25 must be a number, not "high"`},
		{"bm25:\n  scheme: okapi", `line 2: unknown BM25 scheme "okapi"`},
		{"bm25: lucene", `line 1: bm25 takes its settings as a mapping`},
		{"bm25: {analyzer: klingon}", `line 1: `},
		{"bm52: {}", `line 1: unknown retriever "bm52" (did you mean "bm25"?)`},
	} {
		_, err := parse(t, c.yaml)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.yaml, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), "retrieve.") {
			t.Errorf("%q: error %v names a Go type", c.yaml, err)
		}
	}
}

func parse(t *testing.T, doc string) (retrieve.Spec, error) {
	t.Helper()
	n, err := yamlx.Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return retrieve.ParseSpec(n)
}

type recorder struct {
	stages []string
	counts map[string]int
	notes  map[string]any
}

func (r *recorder) Time(stage string, fn func() error) error {
	r.stages = append(r.stages, stage)
	return fn()
}

func (r *recorder) Count(name string, n int) {
	if r.counts == nil {
		r.counts = map[string]int{}
	}
	r.counts[name] = n
}

func (r *recorder) Note(key string, v any) {
	if r.notes == nil {
		r.notes = map[string]any{}
	}
	r.notes[key] = v
}

func ids(task *ir.Task) []string {
	out := make([]string, len(task.Corpus))
	for i, d := range task.Corpus {
		out[i] = d.ID
	}
	return out
}
