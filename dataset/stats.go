package dataset

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"unicode/utf8"
)

// Profile summarizes a task the way HAKARI-Bench's NanoR2MED task cards do
// (task_metadata counts / positives_per_query / text_stats_chars), with the
// same JSON names, so a profile can be set beside a card and compared.
type Profile struct {
	Name   string `json:"name"`
	Layout Layout `json:"layout"`
	Split  string `json:"split,omitempty"`

	Counts            Counts            `json:"counts"`
	PositivesPerQuery PositivesPerQuery `json:"positives_per_query"`
	TextStatsChars    TextStats         `json:"text_stats_chars"`
	// Grades counts judgments per grade, ascending, non-positive grades
	// included.
	Grades []GradeCount `json:"grades"`
}

// Counts are the sizes of a task.
type Counts struct {
	Queries         int `json:"queries"` // evaluated queries (Task.Queries)
	Documents       int `json:"documents"`
	PositiveQrels   int `json:"positive_qrels"` // judgments with grade > 0
	QrelsRows       int `json:"qrels_rows"`     // all judgments
	UnjudgedQueries int `json:"unjudged_queries"`
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

// Stats profiles t. Only the judgments of t.Queries count towards
// positives per query; Counts.QrelsRows and Grades cover all of t.Qrels.
func Stats(t *Task) Profile {
	p := Profile{Name: t.Name, Layout: t.Layout, Split: t.Split}
	p.Counts = Counts{
		Queries:         len(t.Queries),
		Documents:       len(t.Corpus),
		QrelsRows:       t.Qrels.Len(),
		UnjudgedQueries: t.UnjudgedQueries,
	}

	grades := make(map[int]int)
	for _, m := range t.Qrels {
		for _, g := range m {
			grades[g]++
			if g > 0 {
				p.Counts.PositiveQrels++
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
	}
	p.PositivesPerQuery = positives(pos)
	p.TextStatsChars.QueryMean = mean(qchars, len(t.Queries))
	dchars := 0
	for _, d := range t.Corpus {
		dchars += utf8.RuneCountInString(d.Text)
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

// mean is 0 for an empty set, so that a profile always encodes as JSON
// (which has no NaN).
func mean(sum, n int) float64 {
	if n == 0 {
		return 0
	}
	return float64(sum) / float64(n)
}

// WriteText writes the profile as aligned "label  value" lines.
func (p Profile) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	row := func(label, format string, args ...any) {
		fmt.Fprintf(tw, "%s\t"+format+"\n", append([]any{label}, args...)...)
	}
	layout := layoutName(p.Layout)
	if p.Split != "" {
		layout += ", split " + p.Split
	}
	row("task", "%s (%s)", p.Name, layout)
	row("queries", "%d evaluated, %d without judgments", p.Counts.Queries, p.Counts.UnjudgedQueries)
	row("documents", "%d", p.Counts.Documents)
	row("judgments", "%d (%d positive)", p.Counts.QrelsRows, p.Counts.PositiveQrels)
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
	return tw.Flush()
}
