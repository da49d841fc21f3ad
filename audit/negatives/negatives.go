// Package negatives mines hard negatives for training retrievers: for
// each query, documents a retriever ranks high that are not its
// positives, nor near-duplicates of them, optionally only those a judge
// (a cross-encoder or LLM reranker) scores inside a band — to drop the
// false negatives that mined lists are full of — and optionally only
// those that share metadata with the query but differ in what matters
// (the same body_system, a different answer: NanoR2MED's hard negatives).
//
// Mining is deterministic: the retriever's ranking (ties in its own
// stable order), then rank order within the window, or a seeded sample
// of it.
package negatives

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/r2med/r2med/audit/minhash"
	"github.com/r2med/r2med/ir"
)

// Searcher ranks corpus documents for queries: at most k hits per query,
// best first. Any retriever or fusion fits through SearcherFunc.
type Searcher interface {
	Search(ctx context.Context, queries []ir.Query, k int) (ir.Run, error)
}

// SearcherFunc adapts a function to Searcher.
type SearcherFunc func(ctx context.Context, queries []ir.Query, k int) (ir.Run, error)

// Search calls f.
func (f SearcherFunc) Search(ctx context.Context, queries []ir.Query, k int) (ir.Run, error) {
	return f(ctx, queries, k)
}

// Judge scores documents for a query, higher meaning more relevant;
// rerank.Scorer (every reranker rerank.New builds) is one.
type Judge interface {
	Score(ctx context.Context, query string, docs []string) ([]float64, error)
}

// Query is a query to mine negatives for.
type Query struct {
	ID   string
	Text string
	// Positives are the ids of its relevant corpus documents (benchmark
	// data); PositiveTexts its relevant texts (training data, whose
	// positives need not be in the corpus). Candidates equal to either,
	// or near-duplicates of them, are never negatives.
	Positives     []string
	PositiveTexts []string
	// Meta holds metadata such as body_system and answer, for Same and
	// Differ.
	Meta map[string]string
}

// Options configure Mine. The zero value takes the 15 best-ranked
// eligible documents between ranks 11 and 210 (FlagEmbedding's hn_mine
// window: its range_for_sampling "10-210" is the Python slice [10:210])
// with no judge and no metadata constraint.
type Options struct {
	// From and To bound the rank window (1-based, inclusive) negatives
	// come from; 0 means 11 and 210. Skipping the top ranks avoids the
	// unjudged relevant documents retrievers put there.
	From, To int
	// Count is the number of negatives per query; 0 means 15.
	Count int
	// Sample picks Count of the eligible documents at random (seeded by
	// Seed and the query id) instead of the best-ranked ones.
	Sample bool
	Seed   uint64
	// NearDup says which candidates are near-duplicates of a positive
	// (the minhash spec; zero: Jaccard ≥ 0.8 over words).
	NearDup minhash.Spec
	// Judge, when set, scores the window's eligible candidates; only
	// those scoring within [JudgeMin, JudgeMax] (nil: unbounded) and
	// below JudgeRelative × the query's lowest positive score (0: off;
	// NV-Retriever's TopK-PercPos uses 0.95) are kept.
	Judge              Judge
	JudgeMin, JudgeMax *float64
	JudgeRelative      float64
	// Same and Differ constrain negatives by metadata: a candidate is
	// kept only when it is a positive of another query whose Same fields
	// equal this query's and whose Differ fields differ from them (e.g.
	// Same body_system, Differ answer). Documents no query claims have
	// no metadata and are then never kept; an empty value is unknown and
	// matches nothing.
	Same, Differ []string
	Workers      int // queries filtered and judged in parallel; 0 means GOMAXPROCS
}

// Negative is one mined negative.
type Negative struct {
	ID    string
	Text  string
	Rank  int     // in the retriever's list, 1-based
	Score float64 // the retriever's
	// Judge is the judge's score, when there is a judge.
	Judge *float64
}

// Result is one query's negatives, best-ranked first.
type Result struct {
	Query     Query
	Negatives []Negative
}

// Stats counts what mining dropped and why.
type Stats struct {
	Queries int
	// Short counts queries that got fewer than Count negatives; None
	// those that got none. NoPositive counts those that got negatives but
	// have no positive to pair them with (no positive text, no positive
	// document in the corpus): Write gives them no line either.
	Short, None, NoPositive int
	// Candidates in the window, and those excluded as positives, as
	// near-duplicates of a positive, as copies of the query (as hn_mine
	// drops them), by metadata, as copies of a better-ranked negative of
	// the same query (equal once normalised: a corpus's duplicate
	// documents would be one negative twice) and by the judge.
	Candidates, Positive, NearDuplicate, QueryCopy, Metadata, NegativeCopy, Judged int
}

func (o *Options) defaults() error {
	if o.From == 0 && o.To == 0 {
		o.From, o.To = 11, 210
	}
	if o.From < 1 || o.To < o.From {
		return fmt.Errorf("negatives: rank window %d–%d; want 1 ≤ from ≤ to", o.From, o.To)
	}
	if o.Count == 0 {
		o.Count = 15
	}
	if o.Count < 0 {
		return fmt.Errorf("negatives: count %d; want at least 1", o.Count)
	}
	if o.JudgeRelative < 0 || o.JudgeRelative > 1 {
		return fmt.Errorf("negatives: relative judge bound %v; want a fraction in (0, 1], or 0 for none", o.JudgeRelative)
	}
	if o.Judge == nil && (o.JudgeMin != nil || o.JudgeMax != nil || o.JudgeRelative != 0) {
		return errors.New("negatives: a judge score band needs a judge")
	}
	if o.Workers <= 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	return nil
}

// Mine finds negatives for every query among corpus through s.
func Mine(ctx context.Context, corpus []ir.Doc, queries []Query, s Searcher, opts Options) ([]Result, Stats, error) {
	var st Stats
	if err := opts.defaults(); err != nil {
		return nil, st, err
	}
	h, err := minhash.New(opts.NearDup)
	if err != nil {
		return nil, st, err
	}
	texts := make([]string, len(corpus))
	index := make(map[string]int, len(corpus))
	for i, d := range corpus {
		texts[i] = d.Text
		if _, dup := index[d.ID]; dup {
			return nil, st, fmt.Errorf("negatives: document id %q appears twice in the corpus", d.ID)
		}
		index[d.ID] = i
	}
	coll := minhash.NewCollection(h, texts, opts.Workers)
	seen := map[string]bool{}
	irq := make([]ir.Query, len(queries))
	for i, q := range queries {
		if seen[q.ID] {
			return nil, st, fmt.Errorf("negatives: query id %q appears twice", q.ID)
		}
		seen[q.ID] = true
		irq[i] = ir.Query{ID: q.ID, Text: q.Text}
	}
	run, err := s.Search(ctx, irq, opts.To)
	if err != nil {
		return nil, st, err
	}
	meta := docMeta(queries, index, opts)

	results := make([]Result, len(queries))
	stats := make([]Stats, len(queries))
	errs := make([]error, len(queries))
	var wg sync.WaitGroup
	next := make(chan int)
	for range min(opts.Workers, max(len(queries), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				results[i], stats[i], errs[i] = mineOne(ctx, h, coll, corpus, index, meta, queries[i], run[queries[i].ID], opts)
			}
		}()
	}
	for i := range queries {
		if ctx.Err() != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, st, err
	}
	for i := range queries {
		if errs[i] != nil {
			return nil, st, errs[i]
		}
		s := stats[i]
		st.Queries++
		st.Candidates += s.Candidates
		st.Positive += s.Positive
		st.NearDuplicate += s.NearDuplicate
		st.QueryCopy += s.QueryCopy
		st.Metadata += s.Metadata
		st.NegativeCopy += s.NegativeCopy
		st.Judged += s.Judged
		if len(results[i].Negatives) > 0 && !hasPositive(queries[i], index) {
			st.NoPositive++
		}
		switch n := len(results[i].Negatives); {
		case n == 0:
			st.None++
			st.Short++
		case n < opts.Count:
			st.Short++
		}
	}
	return results, st, nil
}

// hasPositive reports whether q has a positive text or a positive
// document in the corpus.
func hasPositive(q Query, index map[string]int) bool {
	if len(q.PositiveTexts) > 0 {
		return true
	}
	for _, p := range q.Positives {
		if _, ok := index[p]; ok {
			return true
		}
	}
	return false
}

// claim is a query's metadata on a document it judges relevant.
type claim struct {
	query string
	meta  map[string]string
}

// docMeta maps corpus positions to the queries that claim them, when a
// metadata constraint is asked for.
func docMeta(queries []Query, index map[string]int, opts Options) map[int][]claim {
	if len(opts.Same) == 0 && len(opts.Differ) == 0 {
		return nil
	}
	m := map[int][]claim{}
	for _, q := range queries {
		for _, p := range q.Positives {
			if i, ok := index[p]; ok {
				m[i] = append(m[i], claim{q.ID, q.Meta})
			}
		}
	}
	return m
}

// metaOK reports whether some other query claiming the document has the
// same Same fields as q and different Differ fields. A field empty or
// white space only is unknown (R2MED's body_system may be empty): it is
// neither the same as nor different from anything.
func metaOK(q Query, claims []claim, opts Options) bool {
	known := func(m map[string]string, f string) (string, bool) {
		v := m[f]
		return v, strings.TrimSpace(v) != ""
	}
	for _, c := range claims {
		if c.query == q.ID {
			continue
		}
		ok := true
		for _, f := range opts.Same {
			v, has := known(q.Meta, f)
			if w, has2 := known(c.meta, f); !has || !has2 || v != w {
				ok = false
			}
		}
		for _, f := range opts.Differ {
			v, has := known(q.Meta, f)
			if w, has2 := known(c.meta, f); !has || !has2 || v == w {
				ok = false
			}
		}
		if ok {
			return true
		}
	}
	return false
}

func mineOne(ctx context.Context, h *minhash.Hasher, coll *minhash.Collection, corpus []ir.Doc, index map[string]int, meta map[int][]claim, q Query, hits []ir.Hit, opts Options) (Result, Stats, error) {
	res := Result{Query: q}
	var st Stats
	pos := map[string]bool{}
	for _, p := range q.Positives {
		pos[p] = true
	}
	var posSh [][]uint64
	for _, p := range q.Positives {
		if i, ok := index[p]; ok {
			posSh = append(posSh, coll.Shingles(i))
		}
	}
	for _, t := range q.PositiveTexts {
		posSh = append(posSh, h.Shingles(nil, minhash.Normalize(t)))
	}
	// Copies by the audit's exact rule: a text without words has no
	// shingles for the Jaccard test to see.
	posKeys := map[string]bool{}
	for _, p := range q.Positives {
		if i, ok := index[p]; ok {
			posKeys[copyKey(corpus[i].Text)] = true
		}
	}
	for _, t := range q.PositiveTexts {
		posKeys[copyKey(t)] = true
	}
	queryKey := copyKey(q.Text)
	threshold := h.Spec().Threshold
	var cands []Negative
	negKeys := map[string]bool{}
	for r, hit := range hits {
		rank := r + 1
		if rank < opts.From || rank > opts.To {
			continue
		}
		st.Candidates++
		i, ok := index[hit.DocID]
		if !ok {
			return res, st, fmt.Errorf("negatives: the retriever returned document %q for query %q, which the corpus lacks", hit.DocID, q.ID)
		}
		if pos[hit.DocID] {
			st.Positive++
			continue
		}
		key := copyKey(corpus[i].Text)
		if key == queryKey {
			st.QueryCopy++
			continue
		}
		sh := coll.Shingles(i)
		near := posKeys[key]
		for _, p := range posSh {
			if len(sh) > 0 && minhash.Jaccard(sh, p) >= threshold {
				near = true
				break
			}
		}
		if near {
			st.NearDuplicate++
			continue
		}
		if meta != nil && !metaOK(q, meta[i], opts) {
			st.Metadata++
			continue
		}
		if negKeys[key] {
			st.NegativeCopy++
			continue
		}
		negKeys[key] = true
		cands = append(cands, Negative{ID: hit.DocID, Text: corpus[i].Text, Rank: rank, Score: hit.Score})
	}
	if opts.Judge != nil && len(cands) > 0 {
		kept, dropped, err := judge(ctx, q, cands, corpus, index, opts)
		if err != nil {
			return res, st, err
		}
		cands = kept
		st.Judged += dropped
	}
	if opts.Sample && len(cands) > opts.Count {
		cands = sample(cands, opts.Count, opts.Seed, q.ID)
	}
	res.Negatives = cands[:min(len(cands), opts.Count)]
	return res, st, nil
}

// copyKey is a text's identity for copies: its normalised form with the
// spaces dropped (the audit's exact match), or, for a text with no
// letters or digits (which normalises to nothing), the text itself
// without its white space.
func copyKey(text string) string {
	k := strings.ReplaceAll(minhash.Normalize(text), " ", "")
	if k == "" {
		return "\x00" + strings.Join(strings.Fields(text), "")
	}
	return k
}

// judge scores the candidates (and, for a relative bound, the positives)
// and keeps those inside the band.
func judge(ctx context.Context, q Query, cands []Negative, corpus []ir.Doc, index map[string]int, opts Options) ([]Negative, int, error) {
	docs := make([]string, len(cands))
	for i, c := range cands {
		docs[i] = c.Text
	}
	var posTexts []string
	if opts.JudgeRelative > 0 {
		for _, p := range q.Positives {
			if i, ok := index[p]; ok {
				posTexts = append(posTexts, corpus[i].Text)
			}
		}
		posTexts = append(posTexts, q.PositiveTexts...)
		docs = append(docs, posTexts...)
	}
	scores, err := opts.Judge.Score(ctx, q.Text, docs)
	if err != nil {
		return nil, 0, fmt.Errorf("negatives: judging query %q: %w", q.ID, err)
	}
	if len(scores) != len(docs) {
		return nil, 0, fmt.Errorf("negatives: the judge returned %d scores for %d documents of query %q", len(scores), len(docs), q.ID)
	}
	limit := math.Inf(1)
	if opts.JudgeRelative > 0 && len(posTexts) > 0 {
		minPos := slices.Min(scores[len(cands):])
		if !(minPos > 0) {
			return nil, 0, fmt.Errorf("negatives: query %q's lowest positive score is %v; a relative bound needs positive scores (probabilities), use an absolute one (JudgeMax) with this judge", q.ID, minPos)
		}
		limit = opts.JudgeRelative * minPos
	}
	var kept []Negative
	for i, c := range cands {
		s := scores[i]
		switch {
		case math.IsNaN(s):
			return nil, 0, fmt.Errorf("negatives: the judge scored document %q of query %q NaN", c.ID, q.ID)
		case opts.JudgeMin != nil && s < *opts.JudgeMin, opts.JudgeMax != nil && s > *opts.JudgeMax, s >= limit:
			continue
		}
		c.Judge = &s
		kept = append(kept, c)
	}
	return kept, len(cands) - len(kept), nil
}

// sample picks n candidates by a seeded shuffle keyed on the query, and
// returns them in rank order.
func sample(cands []Negative, n int, seed uint64, qid string) []Negative {
	type keyed struct {
		k uint64
		c Negative
	}
	ks := make([]keyed, len(cands))
	for i, c := range cands {
		f := fnv.New64a()
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], seed)
		f.Write(b[:])
		f.Write([]byte(qid))
		f.Write([]byte{0})
		f.Write([]byte(c.ID))
		ks[i] = keyed{f.Sum64(), c}
	}
	slices.SortFunc(ks, func(a, b keyed) int {
		if a.k < b.k {
			return -1
		} else if a.k > b.k {
			return 1
		}
		return 0
	})
	out := make([]Negative, n)
	for i := range out {
		out[i] = ks[i].c
	}
	slices.SortFunc(out, func(a, b Negative) int { return a.Rank - b.Rank })
	return out
}
