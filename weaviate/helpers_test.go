package weaviate_test

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/r2med/r2med/analysis"
	"github.com/r2med/r2med/bm25"
	"github.com/r2med/r2med/dataset"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/measure"
	"github.com/r2med/r2med/vector"
	"github.com/r2med/r2med/weaviate"
	"github.com/r2med/r2med/weaviate/weaviatetest"
)

// embedDim is the stand-in embedder's dimension.
const embedDim = 128

// fixture is NFCorpus (test split) with deterministic stand-in vectors.
type fixture struct {
	task  *ir.Task
	vecs  [][]float32 // per document
	qvecs [][]float32 // per query
	emb   *weaviatetest.Embedder
}

var (
	fixOnce sync.Once
	fix     *fixture
	fixErr  error
)

// nfcorpus loads ../shared/data/nfcorpus once per test binary.
func nfcorpus(t testing.TB) *fixture {
	t.Helper()
	dir := filepath.Join("..", "..", "shared", "data", "nfcorpus")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("NFCorpus not found at %s (the shared test data beside the repository); skipping", dir)
	}
	fixOnce.Do(func() {
		task, err := dataset.Load(dir, dataset.Options{Split: "test"})
		if err != nil {
			fixErr = err
			return
		}
		texts := make([]string, len(task.Corpus))
		for i, d := range task.Corpus {
			texts[i] = d.Text
		}
		emb := weaviatetest.NewEmbedder(embedDim, texts)
		qtexts := make([]string, len(task.Queries))
		for i, q := range task.Queries {
			qtexts[i] = q.Text
		}
		fix = &fixture{task: task, vecs: emb.EmbedAll(texts), qvecs: emb.EmbedAll(qtexts), emb: emb}
	})
	if fixErr != nil {
		t.Fatal(fixErr)
	}
	return fix
}

func (f *fixture) queries() []weaviate.Query {
	qs := make([]weaviate.Query, len(f.task.Queries))
	for i, q := range f.task.Queries {
		qs[i] = weaviate.Query{ID: q.ID, Text: q.Text, Vector: f.qvecs[i]}
	}
	return qs
}

func (f *fixture) vectors() *weaviate.Vectors {
	return &weaviate.Vectors{Model: "test-hash-tfidf-128", Dim: embedDim, Metric: "cosine"}
}

// luceneRun is r2med's `--bm25 lucene` run (Lucene's EnglishAnalyzer,
// Lucene's BM25 with k1, b), built as the pipeline builds it.
func luceneRun(t testing.TB, task *ir.Task, k int, k1, b float64) ir.Run {
	t.Helper()
	an := analysis.LuceneEnglish()
	ids := make([]string, len(task.Corpus))
	for i, d := range task.Corpus {
		ids[i] = d.ID
	}
	p := bm25.DefaultParams(bm25.Lucene)
	p.K1, p.B = k1, b
	ix, err := bm25.Build(len(task.Corpus), func(i int, dst []string) []string { return an.Analyze(dst, task.Corpus[i].Text) },
		p, bm25.BuildOptions{IDs: ids})
	if err != nil {
		t.Fatal(err)
	}
	s := ix.NewSearcher()
	run := ir.Run{}
	for _, q := range task.Queries {
		var hits []ir.Hit
		for _, h := range s.Search(an.Analyze(nil, q.Text), k) {
			hits = append(hits, ir.Hit{DocID: ids[h.Doc], Score: float64(h.Score)})
		}
		run[q.ID] = hits
	}
	return run
}

// flatRun is r2med's exact cosine search (package vector) over the same
// vectors, skipping a query's own id as the dense retriever does.
func flatRun(t testing.TB, f *fixture, k int) ir.Run {
	t.Helper()
	flat := vector.NewFlat(embedDim, vector.Cosine)
	for i, d := range f.task.Corpus {
		if err := flat.Add(d.ID, f.vecs[i]); err != nil {
			t.Fatal(err)
		}
	}
	qids := make([]string, len(f.task.Queries))
	for i, q := range f.task.Queries {
		qids[i] = q.ID
	}
	hits, err := flat.Search(f.qvecs, k, vector.SearchOptions{SkipSelf: true, QueryIDs: qids})
	if err != nil {
		t.Fatal(err)
	}
	run := ir.Run{}
	for i, q := range f.task.Queries {
		list := make([]ir.Hit, len(hits[i]))
		for j, h := range hits[i] {
			list[j] = ir.Hit{DocID: h.ID, Score: float64(h.Score)}
		}
		run[q.ID] = list
	}
	return run
}

func ndcg10(t testing.TB, qrels ir.Qrels, run ir.Run) float64 {
	t.Helper()
	res, err := measure.Evaluate(qrels, run, measure.MustParse("ndcg_cut.10"), measure.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return res.All[0]
}

// overlap is the mean fraction of a's top-k found in b's top-k.
func overlap(a, b ir.Run, k int) float64 {
	var sum float64
	for qid, ha := range a {
		top := map[string]bool{}
		for _, h := range b[qid][:min(k, len(b[qid]))] {
			top[h.DocID] = true
		}
		n := 0
		for _, h := range ha[:min(k, len(ha))] {
			if top[h.DocID] {
				n++
			}
		}
		sum += float64(n) / float64(min(k, max(1, len(ha))))
	}
	return sum / float64(len(a))
}

// sameTop reports whether got's top k is exact's top k as a set, where a
// document may stand in for another only when exact scores both within
// tol of the k-th score (a tie within float32 rounding).
func sameTop(exact, got []ir.Hit, k int, tol float64) bool {
	k = min(k, len(exact))
	if len(got) < k {
		return false
	}
	if k == 0 {
		return true
	}
	kth := exact[k-1].Score
	want := map[string]bool{}
	for _, h := range exact[:k] {
		want[h.DocID] = true
	}
	scoreOf := map[string]float64{}
	for _, h := range exact {
		scoreOf[h.DocID] = h.Score
	}
	for _, h := range got[:k] {
		if want[h.DocID] {
			continue
		}
		s, ok := scoreOf[h.DocID]
		if !ok || math.Abs(s-kth) > tol {
			return false
		}
	}
	return true
}

func ids(hits []ir.Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.DocID
	}
	return out
}

func sameIDs(a, b []ir.Hit) bool { return slices.Equal(ids(a), ids(b)) }
