package weaviate

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/weaviate/weaviate-go-client/v5/weaviate/graphql"
	"golang.org/x/sync/errgroup"

	"github.com/r2med/r2med/internal/progress"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/vector"
)

// Mode is how a query searches the collection.
type Mode uint8

const (
	// BM25 ranks by Weaviate's BM25F over the text property. It is the
	// zero value.
	BM25 Mode = iota
	// Vector ranks by similarity to the query vector (nearVector).
	Vector
	// Hybrid fuses BM25 and vector rankings inside Weaviate.
	Hybrid
)

func (m Mode) String() string {
	switch m {
	case BM25:
		return "bm25"
	case Vector:
		return "vector"
	case Hybrid:
		return "hybrid"
	}
	return fmt.Sprintf("Mode(%d)", uint8(m))
}

// ParseMode reads bm25, vector or hybrid.
func ParseMode(s string) (Mode, error) {
	for _, m := range []Mode{BM25, Vector, Hybrid} {
		if s == m.String() {
			return m, nil
		}
	}
	return 0, fmt.Errorf("weaviate search %q: want bm25, vector or hybrid", s)
}

// Fusion is how hybrid search combines its two rankings.
type Fusion string

const (
	// RelativeScoreFusion min-max normalizes each side's scores and adds
	// them weighted by alpha (Weaviate's default since 1.24).
	RelativeScoreFusion Fusion = "relativeScoreFusion"
	// RankedFusion adds alpha-weighted reciprocal ranks, 1/(60 + rank).
	RankedFusion Fusion = "rankedFusion"
)

// ParseFusion reads rankedFusion or relativeScoreFusion; "" is the default.
func ParseFusion(s string) (Fusion, error) {
	switch Fusion(s) {
	case "":
		return RelativeScoreFusion, nil
	case RelativeScoreFusion, RankedFusion:
		return Fusion(s), nil
	}
	return "", fmt.Errorf("hybrid fusion %q: want rankedFusion or relativeScoreFusion", s)
}

// DefaultAlpha is Weaviate's hybrid alpha: the weight of the vector side.
const DefaultAlpha = 0.75

// Query is one query: its id (for SkipSelf and the run), its text (BM25 and
// hybrid) and its vector (vector and hybrid).
type Query struct {
	ID     string
	Text   string
	Vector []float32
}

// SearchOptions say how to search. The zero value is BM25, 100 hits.
type SearchOptions struct {
	Mode Mode
	// K is the number of hits per query; 0: 100.
	K int
	// Alpha weighs the vector side of hybrid search, 0 (BM25 only) to 1
	// (vector only); DefaultAlpha is Weaviate's default.
	Alpha float64
	// Fusion is hybrid's fusion; "": relativeScoreFusion.
	Fusion Fusion
	// Consistency is the read consistency level: ONE, QUORUM or ALL; "":
	// Weaviate's default.
	Consistency string
	// SkipSelf drops a hit whose document id is the query's id (BEIR's
	// rule for corpora that hold their queries).
	SkipSelf bool
	// Workers is the number of queries in flight in SearchAll; 0: 4.
	Workers int
	// Progress draws a bar of queries answered in SearchAll.
	Progress progress.Factory
}

func (o SearchOptions) k() int {
	if o.K > 0 {
		return o.K
	}
	return 100
}

// Validate checks the options on their own.
func (o SearchOptions) Validate() error {
	if o.Mode > Hybrid {
		return fmt.Errorf("unknown search mode %v", o.Mode)
	}
	if o.K < 0 {
		return fmt.Errorf("k %d: want a positive number of hits", o.K)
	}
	if o.Alpha < 0 || o.Alpha > 1 || math.IsNaN(o.Alpha) {
		return fmt.Errorf("hybrid alpha %g: want 0 (BM25 only) to 1 (vector only)", o.Alpha)
	}
	if _, err := ParseFusion(string(o.Fusion)); err != nil {
		return err
	}
	switch o.Consistency {
	case "", "ONE", "QUORUM", "ALL":
	default:
		return fmt.Errorf("consistency level %q: want ONE, QUORUM or ALL", o.Consistency)
	}
	return nil
}

// Search answers one query with up to K hits in Weaviate's rank order.
func (c *Collection) Search(ctx context.Context, q Query, o SearchOptions) ([]ir.Hit, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	meta, err := c.Searchable(ctx)
	if err != nil {
		return nil, err
	}
	return c.search(ctx, meta, q, o)
}

func (c *Collection) search(ctx context.Context, meta *Meta, q Query, o SearchOptions) ([]ir.Hit, error) {
	k := o.k()
	// One hit beyond k shows whether a tie goes on past the cut (hybrid
	// is taken as answered: see below).
	limit := k + 1
	if o.Mode == Hybrid {
		limit = k
	}
	if o.SkipSelf {
		limit++
	}
	metric := vector.Cosine
	if o.Mode != BM25 {
		if meta.Vectors == nil {
			return nil, fmt.Errorf("collection %s holds no vectors (it was pushed BM25-only); %s search needs them", c.cfg.Collection, o.Mode)
		}
		if len(q.Vector) != meta.Vectors.Dim {
			return nil, fmt.Errorf("query %q: vector of dimension %d, collection %s holds %s vectors of dimension %d", q.ID, len(q.Vector), c.cfg.Collection, meta.Vectors.Model, meta.Vectors.Dim)
		}
		metric, _ = vector.ParseMetric(meta.Vectors.Metric)
	}
	if o.Mode == BM25 && q.Text == "" {
		// No term matches nothing (Weaviate refuses an empty query).
		return []ir.Hit{}, nil
	}
	var tied []ir.Hit // the last answer, whose tie at the cut went on
	for {
		hits, more, err := c.searchOnce(ctx, q, o, metric, limit)
		if err != nil && tied != nil && strings.Contains(err.Error(), "query maximum results exceeded") {
			// A tie longer than the server lists: the answer before
			// keeps those of the tie Weaviate found first.
			hits, more, err = tied, false, nil
		}
		if err != nil {
			return nil, err
		}
		// Hits that tie the k-th may go on past what Weaviate answered,
		// which of them it answered is its own (insertion) order: ask
		// for more until the tie ends inside the answer. Hybrid's fused
		// scores depend on how many candidates it is asked for, so it is
		// taken as answered.
		if more && o.Mode != Hybrid && len(hits) > k && float32(hits[k-1].Score) == float32(hits[len(hits)-1].Score) {
			tied = hits
			limit *= 2
			continue
		}
		// Ties at the cut are kept by document id ascending, as r2med's
		// exact searches keep them (package vector), whatever order the
		// server found them in.
		if o.Mode != Hybrid {
			slices.SortStableFunc(hits, func(a, b ir.Hit) int {
				if sa, sb := float32(a.Score), float32(b.Score); sa != sb {
					return cmp.Compare(sb, sa)
				}
				return strings.Compare(a.DocID, b.DocID)
			})
		}
		return hits[:min(k, len(hits))], nil
	}
}

// searchOnce asks Weaviate for limit hits and returns them in its rank
// order, less the query's own document under SkipSelf; more reports that
// Weaviate answered all limit asked for (more may follow).
func (c *Collection) searchOnce(ctx context.Context, q Query, o SearchOptions, metric vector.Metric, limit int) (hits []ir.Hit, more bool, err error) {
	s := c.client.Experimental().Search().WithCollection(c.cfg.Collection).WithLimit(limit).
		WithProperties(PropDocID).WithConsistencyLevel(o.Consistency)
	switch o.Mode {
	case BM25:
		s = s.WithBM25((&graphql.BM25ArgumentBuilder{}).WithQuery(q.Text).WithProperties(PropText)).
			WithMetadata(&graphql.Metadata{ID: true, Score: true})
	case Vector:
		s = s.WithNearVector((&graphql.NearVectorArgumentBuilder{}).WithVector(q.Vector)).
			WithMetadata(&graphql.Metadata{ID: true, Distance: true})
	case Hybrid:
		fusion, _ := ParseFusion(string(o.Fusion))
		h := (&graphql.HybridArgumentBuilder{}).WithQuery(q.Text).WithVector(q.Vector).
			WithAlpha(float32(o.Alpha)).WithFusionType(graphql.FusionType(fusion)).WithProperties([]string{PropText})
		s = s.WithHybrid(h).WithMetadata(&graphql.Metadata{ID: true, Score: true})
	}
	var res []graphql.SearchResult
	if err := c.retry(ctx, o.Mode.String()+" search of", func(ctx context.Context) error {
		var err error
		res, err = s.Do(ctx)
		return err
	}); err != nil {
		if strings.Contains(err.Error(), "query maximum results exceeded") {
			asked := fmt.Sprintf("%d hits asked for exceed", limit)
			if o.Mode == Hybrid {
				asked = fmt.Sprintf("hybrid search asks each side for %d hits or QUERY_HYBRID_MAXIMUM_RESULTS (default 100), whichever is more, which exceeds", limit)
			}
			err = fmt.Errorf("%w: %s the server's QUERY_MAXIMUM_RESULTS (Weaviate's default is 10000); ask for fewer (--top-k), or start weaviate-server with a larger QUERY_MAXIMUM_RESULTS", err, asked)
		}
		return nil, false, err
	}
	hits = make([]ir.Hit, 0, len(res))
	for _, r := range res {
		id, ok := r.Properties[PropDocID].(string)
		if !ok {
			return nil, false, fmt.Errorf("collection %s: object %s has no %s", c.cfg.Collection, r.ID, PropDocID)
		}
		if o.SkipSelf && id == q.ID {
			continue
		}
		score := float64(r.Metadata.Score)
		if o.Mode == Vector {
			score = similarity(metric, r.Metadata.Distance)
		}
		hits = append(hits, ir.Hit{DocID: id, Score: score})
	}
	return hits, len(res) == limit, nil
}

// similarity turns Weaviate's distance into the score r2med's flat search
// gives: cosine distance is 1 − cos, dot distance is −dot.
func similarity(m vector.Metric, distance float32) float64 {
	if m == vector.Dot {
		return float64(-distance)
	}
	return float64(1 - distance)
}

// SearchAll answers every query, Workers at a time, and returns the run
// (query id → hits).
func (c *Collection) SearchAll(ctx context.Context, qs []Query, o SearchOptions) (ir.Run, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	meta, err := c.Searchable(ctx)
	if err != nil {
		return nil, err
	}
	workers := o.Workers
	if workers <= 0 {
		workers = 4
	}
	lists := make([][]ir.Hit, len(qs))
	bar := o.Progress.New(len(qs), "weaviate:"+o.Mode.String())
	defer bar.Done()
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(workers)
	for i, q := range qs {
		g.Go(func() error {
			hits, err := c.search(gctx, meta, q, o)
			if err != nil {
				return fmt.Errorf("query %q: %w", q.ID, err)
			}
			lists[i] = hits
			bar.Add(1)
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	run := make(ir.Run, len(qs))
	for i, q := range qs {
		if _, dup := run[q.ID]; dup {
			return nil, fmt.Errorf("query id %q appears twice", q.ID)
		}
		run[q.ID] = lists[i]
	}
	return run, nil
}
