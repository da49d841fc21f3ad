package audit

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/r2med/r2med/audit/minhash"
	"github.com/r2med/r2med/internal/textwrap"
	"github.com/r2med/r2med/ir"
)

// DatasetOptions configure Dataset. The zero value works.
type DatasetOptions struct {
	MinHash minhash.Spec
	// ShortWords: a non-empty text with fewer normalised words is very
	// short; 0 means 3.
	ShortWords int
	// SharedPositives: a document relevant to at least this many queries
	// is listed; 0 means 10.
	SharedPositives int
	Workers         int // 0 means GOMAXPROCS
}

// DatasetReport is what a dataset audit found in one task. Lists are in
// a fixed order, so the same data gives the same report: groups, pairs,
// empty and short texts in the order of the corpus (or queries) file, by
// their first member; relevance splits by query, relevant document and
// copy; id collisions, missing judgments and queries without positives by
// id; shared positives by their number of queries, then id.
type DatasetReport struct {
	Task      string         `json:"task"`
	Layout    string         `json:"layout,omitempty"`
	Split     string         `json:"split,omitempty"`
	Documents int            `json:"documents"`
	Queries   int            `json:"queries"`
	Judgments int            `json:"judgments"`
	Settings  DatasetSetting `json:"settings"`
	Summary   DatasetSummary `json:"summary"`

	// DuplicateDocs are groups of documents equal after normalisation;
	// NearDuplicateDocs pairs at or above the Jaccard threshold that are
	// not exact duplicates.
	DuplicateDocs     []Group `json:"duplicate_documents"`
	NearDuplicateDocs []Pair  `json:"near_duplicate_documents"`
	// RelevanceSplits are duplicate or near-duplicate documents judged
	// differently: one relevant to a query, its copy not (judged
	// non-relevant or not judged).
	RelevanceSplits      []Split  `json:"relevance_splits"`
	DuplicateQueries     []Group  `json:"duplicate_queries"`
	NearDuplicateQueries []Pair   `json:"near_duplicate_queries"`
	EmptyDocs            []string `json:"empty_documents"`
	EmptyQueries         []string `json:"empty_queries"`
	ShortDocs            []Short  `json:"short_documents"`
	ShortQueries         []Short  `json:"short_queries"`
	// IDCollisions are ids used by a query and a document.
	IDCollisions []string `json:"id_collisions"`
	// MissingDocs are judgments of documents the corpus lacks.
	MissingDocs []Judgment `json:"judgments_of_missing_documents"`
	// SharedPositives are documents relevant to many queries.
	SharedPositives []Shared `json:"shared_positives"`
	// NoPositive lists evaluated queries without a relevant document.
	NoPositive []string `json:"queries_without_positives"`
}

// DatasetSetting records the thresholds used.
type DatasetSetting struct {
	Normalization string  `json:"normalization"`
	Threshold     float64 `json:"jaccard_threshold"`
	Shingle       int     `json:"shingle_words"`
	// Bands, Rows and Seed are the MinHash LSH plan that finds the
	// candidate near-duplicate pairs, whose Jaccard is then computed
	// exactly; RecallAtThreshold is the probability that a pair at the
	// threshold is a candidate (pairs above it are likelier). Exact
	// duplicates are found by their normalised text, all of them.
	Bands             int     `json:"lsh_bands"`
	Rows              int     `json:"lsh_rows"`
	Seed              uint64  `json:"seed"`
	RecallAtThreshold float64 `json:"lsh_recall_at_threshold"`
	ShortWords        int     `json:"short_words"`
	SharedPositives   int     `json:"shared_positives"`
}

// DatasetSummary counts each finding.
type DatasetSummary struct {
	DuplicateDocGroups   int `json:"duplicate_document_groups"`
	DuplicateDocs        int `json:"documents_in_duplicate_groups"`
	NearDuplicateDocs    int `json:"near_duplicate_document_pairs"`
	RelevanceSplits      int `json:"relevance_splits"`
	DuplicateQueryGroups int `json:"duplicate_query_groups"`
	NearDuplicateQueries int `json:"near_duplicate_query_pairs"`
	EmptyDocs            int `json:"empty_documents"`
	EmptyQueries         int `json:"empty_queries"`
	ShortDocs            int `json:"short_documents"`
	ShortQueries         int `json:"short_queries"`
	IDCollisions         int `json:"id_collisions"`
	MissingDocs          int `json:"judgments_of_missing_documents"`
	SharedPositives      int `json:"shared_positives"`
	NoPositive           int `json:"queries_without_positives"`
	// DroppedEmptyDocs and DroppedEmptyQueries are rows the loader left
	// out for an empty text (Nano repositories, as HAKARI-Bench does).
	DroppedEmptyDocs    int `json:"dropped_empty_documents,omitempty"`
	DroppedEmptyQueries int `json:"dropped_empty_queries,omitempty"`
}

// Group is a set of ids whose texts are equal after normalisation.
type Group struct {
	IDs []string `json:"ids"`
}

// Pair is two near-duplicate texts.
type Pair struct {
	A          string  `json:"a"`
	B          string  `json:"b"`
	Similarity float64 `json:"similarity"`
}

// Split is a query whose judgments disagree on two copies of a document.
type Split struct {
	Query    string `json:"query"`
	Relevant string `json:"relevant"`
	Grade    int    `json:"grade"`
	Copy     string `json:"copy"`
	// CopyGrade is the copy's grade, nil when the copy is not judged.
	CopyGrade  *int    `json:"copy_grade"`
	Match      string  `json:"match"`
	Similarity float64 `json:"similarity"`
}

// Short is a very short text.
type Short struct {
	ID    string `json:"id"`
	Words int    `json:"words"`
	Text  string `json:"text"`
}

// Judgment is one qrels line.
type Judgment struct {
	Query string `json:"query"`
	Doc   string `json:"doc"`
	Grade int    `json:"grade"`
}

// Shared is a document relevant to many queries.
type Shared struct {
	Doc     string   `json:"doc"`
	Queries []string `json:"queries"`
}

// Dataset audits one task: duplicate and near-duplicate documents and
// queries (and duplicates whose judgments disagree), empty and very short
// texts, ids shared by a query and a document, judgments of missing
// documents, documents relevant to many queries and queries without a
// relevant document. Load the task with AllowMissingDocs so that missing
// documents are reported rather than refused.
func Dataset(t *ir.Task, opts DatasetOptions) (*DatasetReport, error) {
	if opts.ShortWords <= 0 {
		opts.ShortWords = 3
	}
	if opts.SharedPositives <= 0 {
		opts.SharedPositives = 10
	}
	h, err := minhash.New(opts.MinHash)
	if err != nil {
		return nil, err
	}
	sp := h.Spec()
	r := &DatasetReport{Task: t.Name, Layout: string(t.Layout), Split: t.Split, Documents: len(t.Corpus), Queries: len(t.Queries), Judgments: t.Qrels.Len(),
		Settings: DatasetSetting{Normalization: Normalization, Threshold: sp.Threshold, Shingle: sp.Shingle,
			Bands: sp.Bands, Rows: sp.Rows, Seed: sp.Seed, RecallAtThreshold: minhash.Recall(sp.Threshold, sp.Bands, sp.Rows), ShortWords: opts.ShortWords, SharedPositives: opts.SharedPositives}}

	docIDs := make([]string, len(t.Corpus))
	docTexts := make([]string, len(t.Corpus))
	for i, d := range t.Corpus {
		docIDs[i], docTexts[i] = d.ID, d.Text
	}
	qIDs := make([]string, len(t.Queries))
	qTexts := make([]string, len(t.Queries))
	for i, q := range t.Queries {
		qIDs[i], qTexts[i] = q.ID, q.Text
	}

	docGroups, docPairs, docMatches := selfJoin(h, docTexts, opts.Workers)
	r.DuplicateDocs, r.NearDuplicateDocs = named(docGroups, docIDs), namedPairs(docPairs, docIDs)
	qGroups, qPairs, _ := selfJoin(h, qTexts, opts.Workers)
	r.DuplicateQueries, r.NearDuplicateQueries = named(qGroups, qIDs), namedPairs(qPairs, qIDs)

	// Relevance splits over every duplicate or near-duplicate pair.
	judged := map[string][]string{} // doc → queries that judge it
	for _, q := range t.Queries {
		for d := range t.Qrels[q.ID] {
			judged[d] = append(judged[d], q.ID)
		}
	}
	for _, m := range docMatches {
		a, b := docIDs[m.a], docIDs[m.b]
		qs := append(append([]string{}, judged[a]...), judged[b]...)
		slices.Sort(qs)
		for _, q := range slices.Compact(qs) {
			ga, okA := t.Qrels[q][a]
			gb, okB := t.Qrels[q][b]
			rel, cp, g, cg, okC := a, b, ga, gb, okB
			switch {
			case okA && ga > 0 && !(okB && gb > 0):
			case okB && gb > 0 && !(okA && ga > 0):
				rel, cp, g, cg, okC = b, a, gb, ga, okA
			default:
				continue
			}
			s := Split{Query: q, Relevant: rel, Grade: g, Copy: cp, Match: m.kind, Similarity: m.sim}
			if okC {
				s.CopyGrade = &cg
			}
			r.RelevanceSplits = append(r.RelevanceSplits, s)
		}
	}
	slices.SortFunc(r.RelevanceSplits, func(x, y Split) int {
		return cmp.Or(strings.Compare(x.Query, y.Query), strings.Compare(x.Relevant, y.Relevant), strings.Compare(x.Copy, y.Copy))
	})

	short := func(id, text string, empty *[]string, short *[]Short) {
		n := len(strings.Fields(minhash.Normalize(text)))
		switch {
		case n == 0:
			*empty = append(*empty, id)
		case n < opts.ShortWords:
			*short = append(*short, Short{ID: id, Words: n, Text: snippet(text, 120)})
		}
	}
	for _, d := range t.Corpus {
		short(d.ID, d.Text, &r.EmptyDocs, &r.ShortDocs)
	}
	for _, q := range t.Queries {
		short(q.ID, q.Text, &r.EmptyQueries, &r.ShortQueries)
	}

	inCorpus := make(map[string]bool, len(t.Corpus))
	for _, d := range t.Corpus {
		inCorpus[d.ID] = true
	}
	for _, q := range t.Queries {
		if inCorpus[q.ID] {
			r.IDCollisions = append(r.IDCollisions, q.ID)
		}
	}
	slices.Sort(r.IDCollisions)

	relevantTo := map[string][]string{}
	for _, q := range t.Queries {
		rel := false
		for _, d := range sortedKeys(t.Qrels[q.ID]) {
			g := t.Qrels[q.ID][d]
			if !inCorpus[d] {
				r.MissingDocs = append(r.MissingDocs, Judgment{Query: q.ID, Doc: d, Grade: g})
			}
			if g > 0 {
				rel = true
				relevantTo[d] = append(relevantTo[d], q.ID)
			}
		}
		if !rel {
			r.NoPositive = append(r.NoPositive, q.ID)
		}
	}
	slices.SortFunc(r.MissingDocs, func(x, y Judgment) int {
		return cmp.Or(strings.Compare(x.Query, y.Query), strings.Compare(x.Doc, y.Doc))
	})
	slices.Sort(r.NoPositive)
	for d, qs := range relevantTo {
		if len(qs) >= opts.SharedPositives {
			slices.Sort(qs)
			r.SharedPositives = append(r.SharedPositives, Shared{Doc: d, Queries: qs})
		}
	}
	slices.SortFunc(r.SharedPositives, func(x, y Shared) int {
		return cmp.Or(cmp.Compare(len(y.Queries), len(x.Queries)), strings.Compare(x.Doc, y.Doc))
	})

	// Every list is a JSON array, [] when empty: readers of the audit
	// file need not tell null from none.
	r.EmptyDocs, r.EmptyQueries = nonNil(r.EmptyDocs), nonNil(r.EmptyQueries)
	r.ShortDocs, r.ShortQueries = nonNil(r.ShortDocs), nonNil(r.ShortQueries)
	r.IDCollisions, r.MissingDocs = nonNil(r.IDCollisions), nonNil(r.MissingDocs)
	r.SharedPositives, r.NoPositive = nonNil(r.SharedPositives), nonNil(r.NoPositive)
	r.RelevanceSplits = nonNil(r.RelevanceSplits)

	s := &r.Summary
	s.DuplicateDocGroups = len(r.DuplicateDocs)
	for _, g := range r.DuplicateDocs {
		s.DuplicateDocs += len(g.IDs)
	}
	s.NearDuplicateDocs = len(r.NearDuplicateDocs)
	s.RelevanceSplits = len(r.RelevanceSplits)
	s.DuplicateQueryGroups = len(r.DuplicateQueries)
	s.NearDuplicateQueries = len(r.NearDuplicateQueries)
	s.EmptyDocs, s.EmptyQueries = len(r.EmptyDocs), len(r.EmptyQueries)
	s.ShortDocs, s.ShortQueries = len(r.ShortDocs), len(r.ShortQueries)
	s.IDCollisions = len(r.IDCollisions)
	s.MissingDocs = len(r.MissingDocs)
	s.SharedPositives = len(r.SharedPositives)
	s.NoPositive = len(r.NoPositive)
	s.DroppedEmptyDocs, s.DroppedEmptyQueries = t.EmptyDocs, t.EmptyQueries
	return r, nil
}

// nonNil is s, or an empty slice for nil.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// docMatch is a duplicate or near-duplicate pair of members (a < b).
type docMatch struct {
	a, b int
	kind string
	sim  float64
}

// selfJoin finds the duplicate groups, near-duplicate pairs (not exact)
// and every matching pair among texts.
func selfJoin(h *minhash.Hasher, texts []string, workers int) (groups [][]int, near []docMatch, all []docMatch) {
	c := minhash.NewCollection(h, texts, workers)
	s := c.NewSearcher()
	parent := make([]int, len(texts))
	for i := range parent {
		parent[i] = i
	}
	var find func(int) int
	find = func(x int) int {
		for parent[x] != x {
			parent[x] = parent[parent[x]]
			x = parent[x]
		}
		return x
	}
	for i, text := range texts {
		for _, m := range s.Search(text) {
			if m.Member <= i {
				continue
			}
			kind := MatchNear
			if m.Exact {
				kind = MatchExact
				if a, b := find(i), find(m.Member); a != b {
					parent[max(a, b)] = min(a, b)
				}
			}
			dm := docMatch{a: i, b: m.Member, kind: kind, sim: m.Similarity}
			all = append(all, dm)
			if !m.Exact {
				near = append(near, dm)
			}
		}
	}
	// A group's root is its first member (unions keep the smaller root),
	// so groups come out in the order of their first members.
	size := make([]int32, len(texts))
	for i := range texts {
		size[find(i)]++
	}
	at := map[int]int{} // root → position in groups
	for i := range texts {
		r := find(i)
		if size[r] < 2 {
			continue
		}
		if r == i {
			at[r] = len(groups)
			groups = append(groups, make([]int, 0, size[r]))
		}
		groups[at[r]] = append(groups[at[r]], i)
	}
	return groups, near, all
}

func named(groups [][]int, ids []string) []Group {
	out := make([]Group, 0, len(groups))
	for _, g := range groups {
		names := make([]string, len(g))
		for i, m := range g {
			names[i] = ids[m]
		}
		out = append(out, Group{IDs: names})
	}
	return out
}

func namedPairs(pairs []docMatch, ids []string) []Pair {
	out := make([]Pair, 0, len(pairs))
	for _, p := range pairs {
		out = append(out, Pair{A: ids[p.a], B: ids[p.b], Similarity: p.sim})
	}
	return out
}

// WriteTable writes the findings as text: the counts, then the first
// limit entries of each list (0 means 10).
func (r *DatasetReport) WriteTable(w io.Writer, limit int) error {
	if limit <= 0 {
		limit = 10
	}
	st := r.Settings
	fmt.Fprintf(w, "Dataset audit of %s: %d documents, %d queries, %d judgments\n", r.Task, r.Documents, r.Queries, r.Judgments)
	lsh := lshLines(st.Bands, st.Rows, st.Seed, st.RecallAtThreshold)
	settings := fmt.Sprintf("(near-duplicates: Jaccard ≥ %s over %d-word shingles, %s %s; short: under %d words; shared: relevant to ≥ %d queries)",
		settingText(st.Threshold), st.Shingle, lsh[0], lsh[1], st.ShortWords, st.SharedPositives)
	fmt.Fprintf(w, "%s\n\n", strings.Join(textwrap.Lines(settings, 120), "\n"))
	s := r.Summary
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	rows := []struct {
		what string
		n    int
	}{
		{"duplicate document groups", s.DuplicateDocGroups},
		{"  documents in them", s.DuplicateDocs},
		{"near-duplicate document pairs", s.NearDuplicateDocs},
		{"relevance splits (a copy judged differently)", s.RelevanceSplits},
		{"duplicate query groups", s.DuplicateQueryGroups},
		{"near-duplicate query pairs", s.NearDuplicateQueries},
		{"empty documents", s.EmptyDocs},
		{"empty queries", s.EmptyQueries},
		{"short documents", s.ShortDocs},
		{"short queries", s.ShortQueries},
		{"ids used by a query and a document", s.IDCollisions},
		{"judgments of missing documents", s.MissingDocs},
		{"shared positives", s.SharedPositives},
		{"queries without a relevant document", s.NoPositive},
	}
	if s.DroppedEmptyDocs+s.DroppedEmptyQueries > 0 {
		rows = append(rows, struct {
			what string
			n    int
		}{"rows left out by the loader for an empty text", s.DroppedEmptyDocs + s.DroppedEmptyQueries})
	}
	for _, row := range rows {
		fmt.Fprintf(tw, "%s\t%d\n", row.what, row.n)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	list := func(title string, n int, item func(i int) string) {
		if n == 0 {
			return
		}
		fmt.Fprintf(w, "\n%s:\n", title)
		for i := range min(n, limit) {
			fmt.Fprintf(w, "  %s\n", item(i))
		}
		if n > limit {
			fmt.Fprintf(w, "  … and %d more\n", n-limit)
		}
	}
	list("duplicate documents", len(r.DuplicateDocs), func(i int) string { return strings.Join(r.DuplicateDocs[i].IDs, " = ") })
	list("near-duplicate documents", len(r.NearDuplicateDocs), func(i int) string {
		p := r.NearDuplicateDocs[i]
		return fmt.Sprintf("%s ≈ %s (%.3f)", p.A, p.B, p.Similarity)
	})
	list("relevance splits", len(r.RelevanceSplits), func(i int) string {
		sp := r.RelevanceSplits[i]
		g := "unjudged"
		if sp.CopyGrade != nil {
			g = fmt.Sprintf("grade %d", *sp.CopyGrade)
		}
		return fmt.Sprintf("%s: %s (grade %d) but its %s copy %s %s", sp.Query, sp.Relevant, sp.Grade, sp.Match, sp.Copy, g)
	})
	list("duplicate queries", len(r.DuplicateQueries), func(i int) string { return strings.Join(r.DuplicateQueries[i].IDs, " = ") })
	list("near-duplicate queries", len(r.NearDuplicateQueries), func(i int) string {
		p := r.NearDuplicateQueries[i]
		return fmt.Sprintf("%s ≈ %s (%.3f)", p.A, p.B, p.Similarity)
	})
	list("empty documents", len(r.EmptyDocs), func(i int) string { return r.EmptyDocs[i] })
	list("empty queries", len(r.EmptyQueries), func(i int) string { return r.EmptyQueries[i] })
	list("short documents", len(r.ShortDocs), func(i int) string { return fmt.Sprintf("%s %q", r.ShortDocs[i].ID, r.ShortDocs[i].Text) })
	list("short queries", len(r.ShortQueries), func(i int) string { return fmt.Sprintf("%s %q", r.ShortQueries[i].ID, r.ShortQueries[i].Text) })
	list("ids used by a query and a document", len(r.IDCollisions), func(i int) string { return r.IDCollisions[i] })
	list("judgments of missing documents", len(r.MissingDocs), func(i int) string {
		j := r.MissingDocs[i]
		return fmt.Sprintf("%s → %s (grade %d)", j.Query, j.Doc, j.Grade)
	})
	list("shared positives", len(r.SharedPositives), func(i int) string {
		sh := r.SharedPositives[i]
		return fmt.Sprintf("%s: relevant to %d queries", sh.Doc, len(sh.Queries))
	})
	list("queries without a relevant document", len(r.NoPositive), func(i int) string { return r.NoPositive[i] })
	return nil
}
