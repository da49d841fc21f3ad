package weaviate

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/weaviate/weaviate-go-client/v5/weaviate/graphql"

	"github.com/r2med/r2med/internal/errtext"
	"github.com/r2med/r2med/internal/progress"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/vector"
)

// Recall is how much of the exact top k an approximate search found.
type Recall struct {
	K int `json:"k"`
	// Recall is the mean over queries of the share of the exact top k
	// (min(k, hits) documents) found in the approximate top k; a document
	// the exact search scores as high as its k-th (within float32
	// rounding, 1e-6) counts as found: ties may fall either way.
	Recall float64 `json:"recall"`
	// Complete counts the queries whose approximate top k is the exact one
	// in that sense.
	Complete int `json:"complete"`
	Queries  int `json:"queries"`
}

func (r Recall) String() string {
	return fmt.Sprintf("recall@%d %.4f (%d of %d queries complete)", r.K, r.Recall, r.Complete, r.Queries)
}

// tieTolerance is how close to the k-th exact score a document's exact
// score must be to stand in for it.
const tieTolerance = 1e-6

// ExactRun searches the vectors the collection holds exactly, with r2med's
// flat search (package vector) and the collection's metric, skipping a
// query's own id as Search with SkipSelf does: the run an exact index
// would answer. Every object's vector is read back (cursor API) and
// checked against its content hash with the corpus's text (docs), so the
// exact search is over the very vectors pushed; an object docs lack, or a
// document without an object, is an error.
func (c *Collection) ExactRun(ctx context.Context, docs []ir.Doc, qs []Query, k int) (ir.Run, error) {
	flat, err := c.exactIndex(ctx, docs)
	if err != nil {
		return nil, err
	}
	return exactSearch(flat, qs, k)
}

// exactIndex reads the collection's vectors into a flat index.
func (c *Collection) exactIndex(ctx context.Context, docs []ir.Doc) (*vector.Flat, error) {
	meta, err := c.Searchable(ctx)
	if err != nil {
		return nil, err
	}
	if meta.Vectors == nil {
		return nil, fmt.Errorf("collection %s holds no vectors (pushed BM25-only)", c.cfg.Collection)
	}
	metric, err := vector.ParseMetric(meta.Vectors.Metric)
	if err != nil {
		return nil, err
	}
	text := make(map[string]string, len(docs))
	for _, d := range docs {
		text[d.ID] = d.Text
	}
	flat := vector.NewFlat(meta.Vectors.Dim, metric)
	flat.Grow(len(docs))
	var bad []string
	var addErr error
	err = c.scan(ctx, "", meta.Vectors.Dim, func(r graphql.SearchResult) {
		id, _ := r.Properties[PropDocID].(string)
		hash, _ := r.Properties[PropHash].(string)
		t, ok := text[id]
		if !ok || ContentHash(id, t, r.Vector) != hash {
			bad = append(bad, id)
			return
		}
		if err := flat.Add(id, r.Vector); err != nil && addErr == nil {
			addErr = fmt.Errorf("object of %q: %w", id, err)
		}
	})
	if err != nil {
		return nil, err
	}
	if addErr != nil {
		return nil, addErr
	}
	if len(bad) > 0 {
		return nil, fmt.Errorf("collection %s: %d %s a vector or text other than the corpus's (%s): push the corpus again", c.cfg.Collection, len(bad), errtext.Plural(len(bad), "object holds", "objects hold"), errtext.QuoteList(bad, 3))
	}
	if flat.Len() != len(docs) {
		return nil, fmt.Errorf("collection %s answered %d objects of the corpus's %d: push it again", c.cfg.Collection, flat.Len(), len(docs))
	}
	return flat, nil
}

func exactSearch(flat *vector.Flat, qs []Query, k int) (ir.Run, error) {
	qvecs := make([][]float32, len(qs))
	qids := make([]string, len(qs))
	for i, q := range qs {
		qvecs[i], qids[i] = q.Vector, q.ID
	}
	hits, err := flat.Search(qvecs, k, vector.SearchOptions{SkipSelf: true, QueryIDs: qids})
	if err != nil {
		return nil, err
	}
	run := make(ir.Run, len(qs))
	for i, q := range qs {
		list := make([]ir.Hit, len(hits[i]))
		for j, h := range hits[i] {
			list[j] = ir.Hit{DocID: h.ID, Score: float64(h.Score)}
		}
		run[q.ID] = list
	}
	return run, nil
}

// MeasureRecall compares approx's top k with exact's for every query of
// exact (an exact run at depth k or more). score, when given, is the exact
// score of any document for a query: an approximate hit beyond exact's
// list that ties the k-th is then counted as found too.
func MeasureRecall(approx, exact ir.Run, k int, score func(qid, docID string) (float64, bool)) Recall {
	r := Recall{K: k, Queries: len(exact)}
	if len(exact) == 0 {
		return r
	}
	var sum float64
	for qid, want := range exact {
		n := min(k, len(want))
		if n == 0 {
			sum++
			r.Complete++
			continue
		}
		kth := want[n-1].Score
		top := make(map[string]float64, len(want))
		for _, h := range want {
			top[h.DocID] = h.Score
		}
		found := 0
		got := approx[qid]
		for _, h := range got[:min(n, len(got))] {
			s, ok := top[h.DocID]
			if !ok && score != nil {
				s, ok = score(qid, h.DocID)
			}
			if ok && s >= kth-tieTolerance {
				found++
			}
		}
		sum += float64(found) / float64(n)
		if found == n {
			r.Complete++
		}
	}
	r.Recall = sum / float64(len(exact))
	if math.Abs(r.Recall-1) < 1e-12 {
		r.Recall = 1
	}
	return r
}

// CheckExact measures how much of the exact top k the approximate vector
// search of the collection finds for qs: at 10 and at K (o.K). run is
// what SearchAll answered with o; for hybrid search the vector side
// alone is searched again (hybrid fuses it with BM25, so only that side
// has an exact counterpart). The exact run is ExactRun's.
func (c *Collection) CheckExact(ctx context.Context, docs []ir.Doc, qs []Query, run ir.Run, o SearchOptions) ([]Recall, error) {
	if o.Mode == BM25 {
		return nil, fmt.Errorf("BM25 search is not approximate: nothing to check against exact vector search")
	}
	k := o.k()
	approx := run
	if o.Mode != Vector {
		vo := o
		vo.Mode, vo.Progress = Vector, progress.Factory{}
		var err error
		if approx, err = c.SearchAll(ctx, qs, vo); err != nil {
			return nil, err
		}
	}
	flat, err := c.exactIndex(ctx, docs)
	if err != nil {
		return nil, err
	}
	exact, err := exactSearch(flat, qs, k)
	if err != nil {
		return nil, err
	}
	vecs := make(map[string][]float32, len(qs))
	for _, q := range qs {
		vecs[q.ID] = q.Vector
	}
	score := func(qid, docID string) (float64, bool) {
		i, ok := flat.Lookup(docID)
		if !ok {
			return 0, false
		}
		s, err := flat.Score(vecs[qid], i)
		return float64(s), err == nil
	}
	var out []Recall
	for _, at := range []int{min(10, k), k} {
		if len(out) == 0 || out[len(out)-1].K != at {
			out = append(out, MeasureRecall(approx, exact, at, score))
		}
	}
	return out, nil
}

// ExactComparison says, for a manifest, what CheckExact compares for a
// search mode.
func ExactComparison(m Mode) string {
	if m == Hybrid {
		return "the vector side of Weaviate's hybrid search, against r2med's exact flat search over the collection's vectors"
	}
	return "Weaviate's vector search, against r2med's exact flat search over the collection's vectors"
}

// ApproximateNote is the line a run's summary carries when a vector
// search answered it: the index, and the recall measured (CheckExact),
// if any: "weaviate:vector+bge: approximate vector index (HNSW, ef 64);
// recall@10 0.9969, recall@100 0.9912 against exact search (310 of 323
// queries complete at 10)".
func ApproximateNote(name string, index VectorIndex, recalls []Recall) string {
	kind := "approximate"
	if index.Exact {
		kind = "exact"
	}
	line := fmt.Sprintf("%s: %s vector index (%s)", name, kind, index.brief())
	if len(recalls) == 0 {
		return line + "; recall not measured (--check-exact)"
	}
	var parts []string
	for _, r := range recalls {
		parts = append(parts, fmt.Sprintf("recall@%d %.4f", r.K, r.Recall))
	}
	return fmt.Sprintf("%s; %s against exact search (%d of %d queries complete at %d)", line, strings.Join(parts, ", "),
		recalls[0].Complete, recalls[0].Queries, recalls[0].K)
}
