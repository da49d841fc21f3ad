// Package taskstats profiles a retrieval task — sizes, judgments per
// query, text lengths, grades — and scores the candidate lists a dataset
// publishes as HAKARI-Bench's task cards do (ScoreCandidates), computed as
// the cards' script computes them.
package taskstats

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/r2med/r2med/dataset"
	"github.com/r2med/r2med/hubrepo"
	"github.com/r2med/r2med/internal/pynum"
	"github.com/r2med/r2med/ir"
)

// Profile summarizes a task the way HAKARI-Bench's NanoR2MED task cards do
// (task_metadata counts / positives_per_query / text_stats_chars), with the
// same JSON names, so a profile can be set beside a card and compared.
type Profile struct {
	Name   string    `json:"name"`
	Layout ir.Layout `json:"layout"`
	Split  string    `json:"split,omitempty"`

	Counts            Counts            `json:"counts"`
	PositivesPerQuery PositivesPerQuery `json:"positives_per_query"`
	TextStatsChars    TextStats         `json:"text_stats_chars"`
	// Grades counts judgments per grade, ascending, non-positive grades
	// included.
	Grades []GradeCount `json:"grades"`
	// CandidateSubsets holds the quality of candidate lists published with
	// the task, as the cards measure it (AddCandidates), keyed by the
	// card's subset names.
	CandidateSubsets map[string]CandidateMetrics `json:"candidate_subsets,omitempty"`
}

// Counts are the sizes of a task.
type Counts struct {
	Queries         int `json:"queries"` // evaluated queries (ir.Task.Queries)
	Documents       int `json:"documents"`
	PositiveQrels   int `json:"positive_qrels"` // judgments with grade > 0
	QrelsRows       int `json:"qrels_rows"`     // all judgments
	UnjudgedQueries int `json:"unjudged_queries"`
	// Rows left out for an empty text (Task.EmptyDocs, Task.EmptyQueries).
	EmptyDocuments int `json:"empty_documents,omitempty"`
	EmptyQueries   int `json:"empty_queries,omitempty"`
	// Documents and evaluated queries kept although their text is empty
	// or only white space, as R2MED's and BEIR's layouts keep them (a
	// Nano set leaves them out instead, counted above): such a document
	// is in the corpus, but no lexical retriever can find it, and such a
	// query finds nothing; both still count in every mean.
	BlankDocuments int `json:"blank_documents,omitempty"`
	BlankQueries   int `json:"blank_queries,omitempty"`
	// Judgments of documents the corpus lacks, accepted for a sampled
	// corpus (dataset.Options.AllowMissingDocs): those with a grade > 0
	// count as relevant documents no system can retrieve.
	MissingDocQrels         int `json:"missing_document_qrels,omitempty"`
	MissingDocPositiveQrels int `json:"missing_document_positive_qrels,omitempty"`
}

// PositivesPerQuery describes how many documents with grade > 0 each
// evaluated query has. Queries with none are included (as 0) and counted in
// QueriesWithoutPositives: every metric scores them 0 or skips them, which a
// profile should show rather than hide.
type PositivesPerQuery struct {
	Average float64 `json:"average"`
	Min     int     `json:"min"`
	// Median of an even count is the mean of the two middle values, as
	// Python's statistics.median computes it.
	Median                    float64 `json:"median"`
	Max                       int     `json:"max"`
	MultiPositiveQueries      int     `json:"multi_positive_queries"`
	MultiPositiveQueryPercent float64 `json:"multi_positive_query_percent"`
	QueriesWithoutPositives   int     `json:"queries_without_positives"`
}

// TextStats are mean text lengths in Unicode code points, the unit of
// Python's len(str), which the task cards use. A BEIR document's length
// includes its title and the joining space, since that is the text retrieved.
type TextStats struct {
	QueryMean    float64 `json:"query_mean"`
	DocumentMean float64 `json:"document_mean"`
}

// GradeCount is the number of judgments with one grade.
type GradeCount struct {
	Grade int `json:"grade"`
	Count int `json:"count"`
}

// Of profiles t. Only the judgments of t.Queries count towards
// positives per query; Counts.QrelsRows and Grades cover all of t.Qrels.
func Of(t *ir.Task) Profile {
	p := Profile{Name: t.Name, Layout: t.Layout, Split: t.Split}
	p.Counts = Counts{
		Queries:         len(t.Queries),
		Documents:       len(t.Corpus),
		QrelsRows:       t.Qrels.Len(),
		UnjudgedQueries: t.UnjudgedQueries,
		EmptyDocuments:  t.EmptyDocs,
		EmptyQueries:    t.EmptyQueries,
	}

	inCorpus := make(map[string]bool, len(t.Corpus))
	for _, d := range t.Corpus {
		inCorpus[d.ID] = true
	}
	grades := make(map[int]int)
	for _, m := range t.Qrels {
		for did, g := range m {
			grades[g]++
			if g > 0 {
				p.Counts.PositiveQrels++
			}
			if !inCorpus[did] {
				p.Counts.MissingDocQrels++
				if g > 0 {
					p.Counts.MissingDocPositiveQrels++
				}
			}
		}
	}
	p.Grades = make([]GradeCount, 0, len(grades))
	for g, n := range grades {
		p.Grades = append(p.Grades, GradeCount{Grade: g, Count: n})
	}
	sort.Slice(p.Grades, func(i, j int) bool { return p.Grades[i].Grade < p.Grades[j].Grade })

	pos := make([]int, len(t.Queries))
	qchars := 0
	for i, q := range t.Queries {
		for _, g := range t.Qrels[q.ID] {
			if g > 0 {
				pos[i]++
			}
		}
		qchars += utf8.RuneCountInString(q.Text)
		if blank(q.Text) {
			p.Counts.BlankQueries++
		}
	}
	p.PositivesPerQuery = positives(pos)
	p.TextStatsChars.QueryMean = mean(qchars, len(t.Queries))
	dchars := 0
	for _, d := range t.Corpus {
		dchars += utf8.RuneCountInString(d.Text)
		if blank(d.Text) {
			p.Counts.BlankDocuments++
		}
	}
	p.TextStatsChars.DocumentMean = mean(dchars, len(t.Corpus))
	return p
}

func positives(pos []int) PositivesPerQuery {
	var s PositivesPerQuery
	if len(pos) == 0 {
		return s
	}
	sorted := append([]int(nil), pos...)
	sort.Ints(sorted)
	n := len(sorted)
	s.Min, s.Max = sorted[0], sorted[n-1]
	if n%2 == 1 {
		s.Median = float64(sorted[n/2])
	} else {
		s.Median = float64(sorted[n/2-1]+sorted[n/2]) / 2
	}
	total := 0
	for _, k := range pos {
		total += k
		if k > 1 {
			s.MultiPositiveQueries++
		}
		if k == 0 {
			s.QueriesWithoutPositives++
		}
	}
	s.Average = mean(total, n)
	s.MultiPositiveQueryPercent = 100 * float64(s.MultiPositiveQueries) / float64(n)
	return s
}

// blank is a text with nothing but white space, which HAKARI-Bench's
// scripts (Python's str.strip) count as empty.
func blank(s string) bool { return strings.TrimSpace(s) == "" }

// mean is 0 for an empty set, so that a profile always encodes as JSON
// (which has no NaN).
func mean(sum, n int) float64 {
	if n == 0 {
		return 0
	}
	return float64(sum) / float64(n)
}

// AddCandidates scores candidate lists against t's judgments as the task
// cards do (ScoreCandidates) and records them under sub.Name.
func (p *Profile) AddCandidates(t *ir.Task, c *hubrepo.Candidates, sub CandidateSubset) error {
	m, err := ScoreCandidates(t.Qrels, c.Lists, sub)
	if err != nil {
		return fmt.Errorf("%s candidates: %w", sub.Name, err)
	}
	if p.CandidateSubsets == nil {
		p.CandidateSubsets = make(map[string]CandidateMetrics)
	}
	p.CandidateSubsets[sub.Name] = m
	return nil
}

// AddHubCandidates adds the subsets the repository in dir publishes, each
// found by its card name (hubrepo.Configs.CandidateConfig), reading t's
// split of each (as LoadHub read t from dir), and skips the others. It returns the files read, for checksums.
func (p *Profile) AddHubCandidates(dir string, t *ir.Task, subsets []CandidateSubset) ([]string, error) {
	hc, err := hubrepo.ReadConfigs(dir)
	if err != nil {
		return nil, err
	}
	var files []string
	for _, sub := range subsets {
		// The card's name for the list finds its config whatever the set
		// named it (a set nano build wrote calls its dense config "dense").
		config, err := hc.CandidateConfig(sub.Name, t.Split)
		if errors.Is(err, hubrepo.ErrNoCandidateList) {
			continue
		} else if err != nil {
			return nil, err
		}
		c, err := hubrepo.LoadCandidates(dir, config, t.Split)
		if err != nil {
			return nil, err
		}
		sub.Config = c.Config
		if err := p.AddCandidates(t, c, sub); err != nil {
			return nil, err
		}
		files = append(files, c.Files...)
	}
	return files, nil
}

// CardRounded rounds the profile's numbers as HAKARI-Bench's task cards
// print them: positives per query and mean lengths to 6 decimals,
// candidate metrics as CandidateMetrics.Rounded, each as Python's round.
func (p Profile) CardRounded() Profile {
	r := p
	pp := &r.PositivesPerQuery
	for _, f := range []*float64{&pp.Average, &pp.Median, &pp.MultiPositiveQueryPercent, &r.TextStatsChars.QueryMean, &r.TextStatsChars.DocumentMean} {
		*f = pynum.Round(*f, 6)
	}
	if p.CandidateSubsets != nil {
		r.CandidateSubsets = make(map[string]CandidateMetrics, len(p.CandidateSubsets))
		for k, m := range p.CandidateSubsets {
			r.CandidateSubsets[k] = m.Rounded()
		}
	}
	return r
}

// WriteText writes the profile as aligned "label  value" lines.
func (p Profile) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	row := func(label, format string, args ...any) {
		fmt.Fprintf(tw, "%s\t"+format+"\n", append([]any{label}, args...)...)
	}
	layout := dataset.LayoutName(p.Layout)
	if p.Split != "" {
		layout += ", split " + p.Split
	}
	row("task", "%s (%s)", p.Name, layout)
	row("queries", "%d evaluated, %d without judgments", p.Counts.Queries, p.Counts.UnjudgedQueries)
	var docNotes []string
	if p.Counts.BlankDocuments > 0 {
		docNotes = append(docNotes, fmt.Sprintf("%d with an empty text, kept", p.Counts.BlankDocuments))
	}
	if p.Counts.EmptyDocuments > 0 {
		docNotes = append(docNotes, fmt.Sprintf("%d with an empty text left out", p.Counts.EmptyDocuments))
	}
	if len(docNotes) > 0 {
		row("documents", "%d (%s)", p.Counts.Documents, strings.Join(docNotes, "; "))
	} else {
		row("documents", "%d", p.Counts.Documents)
	}
	if p.Counts.EmptyDocuments > 0 || p.Counts.EmptyQueries > 0 {
		row("empty queries left out", "%d", p.Counts.EmptyQueries)
	}
	if p.Counts.BlankQueries > 0 {
		row("empty queries kept", "%d (evaluated, and counted in every mean)", p.Counts.BlankQueries)
	}
	row("judgments", "%d (%d positive)", p.Counts.QrelsRows, p.Counts.PositiveQrels)
	if p.Counts.MissingDocQrels > 0 {
		row("judged, not in the corpus", "%d (%d positive: relevant, but no system can retrieve them)", p.Counts.MissingDocQrels, p.Counts.MissingDocPositiveQrels)
	}
	gs := make([]string, len(p.Grades))
	for i, g := range p.Grades {
		gs[i] = fmt.Sprintf("%d: %d", g.Grade, g.Count)
	}
	row("grades", "%s", strings.Join(gs, ", "))
	pp := p.PositivesPerQuery
	row("positives per query", "mean %.2f, min %d, median %g, max %d", pp.Average, pp.Min, pp.Median, pp.Max)
	row("multi-positive queries", "%d (%.2f%%)", pp.MultiPositiveQueries, pp.MultiPositiveQueryPercent)
	row("queries without positives", "%d", pp.QueriesWithoutPositives)
	row("mean query length", "%.1f chars", p.TextStatsChars.QueryMean)
	row("mean document length", "%.1f chars", p.TextStatsChars.DocumentMean)
	for _, name := range subsetOrder(p.CandidateSubsets) {
		m := p.CandidateSubsets[name]
		row("candidates", "%s (config %s, top %d): nDCG@10 %.4f, hit@10 %.4f, recall@100 %.4f",
			name, m.Config, m.TopK, m.NDCGAt10, m.HitAt10, m.RecallAt100)
		extra := ""
		if m.SafeguardPositiveRows != nil {
			extra = fmt.Sprintf("; %d safeguard rows, %d rows of %d", *m.SafeguardPositiveRows, *m.RowsWith101, m.TopK+1)
		}
		row("", "%d-%d per query (mean %.3f), %.1f%% of %d queries have some%s",
			m.CandidateCountMin, m.CandidateCountMax, m.CandidateCountMean, 100*m.QueryCoverage, m.QueryCount, extra)
	}
	return tw.Flush()
}

// subsetOrder lists candidate subsets in the cards' order, others after by
// name.
func subsetOrder(m map[string]CandidateMetrics) []string {
	names := make([]string, 0, len(m))
	for name := range m {
		names = append(names, name)
	}
	rank := func(name string) int {
		for i, c := range NanoR2MEDCandidates {
			if c.Name == name {
				return i
			}
		}
		return len(NanoR2MEDCandidates)
	}
	sort.Slice(names, func(i, j int) bool {
		ri, rj := rank(names[i]), rank(names[j])
		if ri != rj {
			return ri < rj
		}
		return names[i] < names[j]
	})
	return names
}
