package leaderboard

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/r2med/r2med/usage"
)

// Ranking is how rows are ordered.
type Ranking string

const (
	// ByAverage sorts by the task average, as R2MED's tables do; systems
	// without every task come last, by how many tasks they have.
	ByAverage Ranking = "avg"
	// ByBorda ranks as HAKARI-Bench's leaderboard does: on each task the
	// systems complete on every task get competition ranks (ties share the
	// best rank) and 100·(n−rank)/(n−1) points, averaged over the tasks.
	ByBorda Ranking = "borda"
)

// ParseRanking reads a ranking name.
func ParseRanking(s string) (Ranking, error) {
	switch r := Ranking(strings.ToLower(strings.TrimSpace(s))); r {
	case "", "average", ByAverage:
		return ByAverage, nil
	case ByBorda:
		return ByBorda, nil
	}
	return "", &UsageError{fmt.Sprintf("unknown ranking %q; want avg or borda", s)}
}

// Options choose what a leaderboard shows. The zero value is R2MED's table:
// nDCG@10 on all eight tasks, every system, sorted by average.
type Options struct {
	Metric  Metric  // zero: DefaultMetric
	Family  Family  // "": all eight tasks
	Kind    Kind    // "": every kind
	Ranking Ranking // "": ByAverage
	// PinOurs lists our systems first (in rank order), then the others:
	// what the user ran is what they look for. Ranks are unchanged.
	PinOurs bool
	// Tasks, when set, are the task columns instead of Family's: R2MED
	// tasks (names or aliases, shown in R2MED's order, the average over
	// them) and our other data (demo, NFCorpus…) by name. Give Tasks or
	// Family, not both.
	Tasks []string
	// Systems and Top choose the rows (SelectRows): the systems named (ID
	// or name), and the Top best ranked (ties at the cut kept), with ours
	// when PinOurs. Ranks stay those of the whole board.
	Systems []string
	Top     int
}

// Table is a leaderboard: systems by tasks for one metric.
type Table struct {
	Metric  Metric
	Family  Family
	Ranking Ranking
	Tasks   []string // the columns, in R2MED's order
	// OtherTasks are columns after the average: tasks of ours that are
	// none of R2MED's (demo, NFCorpus…), outside the average and ranking.
	OtherTasks []string
	Rows       []Row
	// Baseline is the system the cells' marks compare with (MarkAgainst);
	// "" when unmarked.
	Baseline string
	// Test names the significance test behind the marks.
	Test string
	// Best holds, per task column, the highest value among the rows (NaN
	// for a column fewer than two rows have); OtherBest the same for the
	// OtherTasks columns.
	Best, OtherBest []float64
	// BestAverage is the highest complete average (NaN when none).
	BestAverage float64
	// Costs is set when some row's runs called a model: the table then
	// shows each row's cost per query (Row.Cost), in dollars too when
	// CostUSD (some row was priced).
	Costs, CostUSD bool
	// Subset is set when Tasks chose the columns (not a family, not all
	// eight).
	Subset bool
	// BoardSize is how many rows the whole board has; more than len(Rows)
	// when Systems or Top chose the rows (ranks are the board's).
	BoardSize int

	// apart is what sets each of our systems that shares its name apart
	// (Apart), reckoned over every system the table was built from, so a
	// row shown without its twins still says what its hash stands for.
	apart map[*System]string
}

// Row is one system on the leaderboard.
type Row struct {
	System *System
	// Rank is the position by the table's ranking, 1 first; 0 for a system
	// that cannot be ranked (incomplete under Borda). Ties share a rank.
	Rank int
	// Scores holds the metric per task column; OK false where the system
	// has no result for the task or its file lacks the metric (dense
	// retrievers report no MRR).
	Scores []Score
	// Other holds the metric per OtherTasks column.
	Other []Score
	// AverageOnly marks an external row with a printed average and no
	// per-task values; Average is then the printed one. It is shown in
	// average views only (all tasks, the headline metric).
	AverageOnly bool
	// Have counts the columns with a score.
	Have int
	// Mean is the unweighted mean over the columns (0–1), and Average the
	// figure R2MED reports, Mean×100 with two decimals (see average); both
	// valid only when Complete.
	Mean, Average float64
	Complete      bool
	// Borda is the Borda points (0–100) under ByBorda for complete rows.
	Borda float64
	// Cost is what the system's runs on the table's tasks cost per query
	// (usage.CostOf of their manifests' usage); nil where none recorded it
	// (published and external rows, runs from before usage was kept).
	Cost *usage.Cost
}

// Score is one cell.
type Score struct {
	Value float64
	OK    bool
	// Printed is the value's text where its source printed it with fewer
	// than two decimals (TaskResult.AsPrinted), else "".
	Printed string
	// Mark is "†" or "‡" where the cell differs from the baseline's
	// significantly (see MarkAgainst), else "".
	Mark string
	// P is the Holm-adjusted p-value of the comparison with the
	// baseline; NaN when the cell was not tested.
	P float64
	// Label names the value where it is not the column's metric:
	// "MRR@100" in an MRR column for a BRIGHT run kept 100 deep
	// (TaskResult.Label); "" otherwise. The cell shows its results.MRRMark and
	// the legend says what it means (results.MRRMarkNotes).
	Label string
}

// Build lays systems out as a leaderboard. Systems of another kind than
// opt.Kind are left out; every other system gets a row, complete or not.
func Build(systems []System, opt Options) (*Table, error) {
	if opt.Metric.Key == "" {
		opt.Metric = DefaultMetric
	}
	if opt.Ranking == "" {
		opt.Ranking = ByAverage
	}
	if opt.Ranking != ByAverage && opt.Ranking != ByBorda {
		return nil, fmt.Errorf("leaderboard: unknown ranking %q", opt.Ranking)
	}
	t := &Table{Metric: opt.Metric, Family: opt.Family, Ranking: opt.Ranking, Tasks: TaskNames(opt.Family), OtherTasks: OtherTasks(systems)}
	all := make([]*System, len(systems))
	for i := range systems {
		all[i] = &systems[i]
	}
	t.apart = map[*System]string{}
	for i, a := range Apart(all) {
		t.apart[all[i]] = a
	}
	if len(opt.Tasks) > 0 {
		if opt.Family != "" {
			return nil, &UsageError{"give a family or a list of tasks, not both"}
		}
		var err error
		if t.Tasks, t.OtherTasks, err = chooseTasks(opt.Tasks, t.OtherTasks); err != nil {
			return nil, err
		}
		t.Subset = len(t.Tasks) < len(TaskNames(""))
	}
	if len(t.Tasks) == 0 {
		return nil, fmt.Errorf("leaderboard: family %q has no tasks", opt.Family)
	}
	// Average-only rows (a paper's printed average, no per-task values)
	// belong to R2MED's own view: all eight tasks, the headline metric,
	// ranked by average. Borda ranks per task, which they have none of.
	averageView := opt.Family == "" && !t.Subset && opt.Metric.Key == DefaultMetric.Key && opt.Ranking == ByAverage
	for i := range systems {
		s := &systems[i]
		if opt.Kind != "" && s.Kind != opt.Kind {
			continue
		}
		r := Row{System: s, Scores: make([]Score, len(t.Tasks)), Other: make([]Score, len(t.OtherTasks))}
		vals := make([]float64, 0, len(t.Tasks))
		for j, task := range t.Tasks {
			if r.Scores[j] = scoreOf(s.Tasks[task], opt.Metric); r.Scores[j].OK {
				vals = append(vals, r.Scores[j].Value)
			}
		}
		for j, task := range t.OtherTasks {
			r.Other[j] = scoreOf(s.Tasks[task], opt.Metric)
		}
		r.Have = len(vals)
		r.Cost = costOf(s, t.Tasks, t.OtherTasks)
		if r.Complete = r.Have == len(t.Tasks); r.Complete {
			r.Mean, r.Average = average(vals)
			// A paper's printed average that agrees with its printed
			// values (PrintedAgrees) is its figure from the unrounded ones:
			// shown and ranked as printed, where the mean of the rounded
			// values may round the other way (35.215 printed 35.21).
			if e := s.External; e != nil && !e.AverageOnly && !e.AverageComputed && opt.Family == "" && !t.Subset && opt.Metric.Key == DefaultMetric.Key && PrintedAgrees(s) {
				r.Average, r.Mean = e.PrintedAverage, e.PrintedAverage/100
			}
		}
		if e := s.External; e != nil {
			switch {
			case e.AverageOnly && averageView:
				r.AverageOnly, r.Average, r.Mean = true, e.PrintedAverage, e.PrintedAverage/100
			case r.Have == 0:
				continue // a paper's figures hold no value of this metric
			}
		}
		t.Rows = append(t.Rows, r)
	}
	if opt.Ranking == ByBorda {
		borda(t)
	}
	slices.SortStableFunc(t.Rows, func(a, b Row) int { return compareRows(opt.Ranking, a, b) })
	rank(t)
	t.BoardSize = len(t.Rows)
	if err := t.SelectRows(opt.Systems, opt.Top, opt.PinOurs); err != nil {
		return nil, err
	}
	t.best()
	for _, r := range t.Rows {
		if c := r.Cost; c != nil && (c.Tokens() > 0 || c.Seconds > 0) {
			t.Costs = true
		}
	}
	for _, r := range t.Rows {
		t.CostUSD = t.CostUSD || t.Costs && r.Cost != nil && r.Cost.USD != nil
	}
	if opt.PinOurs {
		slices.SortStableFunc(t.Rows, func(a, b Row) int {
			return cmp.Compare(b2i(!a.System.IsOurs()), b2i(!b.System.IsOurs()))
		})
	}
	return t, nil
}

// scoreOf is the cell of metric m for a task result: its value, and its
// Label where that is not m's.
func scoreOf(tr TaskResult, m Metric) Score {
	c := Score{P: math.NaN()}
	c.Value, c.OK = tr.Metrics[m.Key]
	if l := tr.Label(m); c.OK && l != m.Label {
		c.Label = l
	}
	if c.OK && m.Key == DefaultMetric.Key {
		c.Printed = tr.AsPrinted
	}
	return c
}

// costOf is the system's cost per query over the tasks shown.
func costOf(s *System, cols ...[]string) *usage.Cost {
	var sums []*usage.Summary
	for _, tasks := range cols {
		for _, task := range tasks {
			if tr, ok := s.Tasks[task]; ok && tr.Usage != nil {
				sums = append(sums, tr.Usage)
			}
		}
	}
	if c, ok := usage.CostOf(sums); ok {
		return &c
	}
	return nil
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// ranked reports whether a row takes part in the ranking: complete rows,
// and under ByAverage the average-only ones.
func (r Row) ranked(by Ranking) bool {
	return r.Complete || (r.AverageOnly && by == ByAverage)
}

func compareRows(by Ranking, a, b Row) int {
	if ra, rb := a.ranked(by), b.ranked(by); ra != rb {
		if ra {
			return -1
		}
		return 1
	}
	if a.ranked(by) {
		if by == ByBorda && a.Borda != b.Borda {
			return cmp.Compare(b.Borda, a.Borda)
		}
		if a.Mean != b.Mean {
			return cmp.Compare(b.Mean, a.Mean)
		}
	} else if a.Have != b.Have {
		return b.Have - a.Have
	}
	if oa, ob := originOrder(a.System), originOrder(b.System); oa != ob {
		return oa - ob // ours first among equals: they are what the user is looking at
	}
	return strings.Compare(a.System.Name, b.System.Name)
}

// average is R2MED's task average: a plain left-to-right float sum in
// R2MED's task order (not a compensated one), divided by the count, ×100,
// printed with two decimals. That order and rounding reproduce all 213
// averages of R2MED's published summary (nDCG@10, Recall@100, MRR) to the
// last digit, including hyde/qwen-72b → bge's 26.89, where a compensated
// sum gives 26.88.
func average(vals []float64) (mean, avg float64) {
	var sum float64
	for _, v := range vals {
		sum += v
	}
	mean = sum / float64(len(vals))
	avg, _ = strconv.ParseFloat(strconv.FormatFloat(mean*100, 'f', 2, 64), 64)
	return mean, avg
}

// borda gives complete rows HAKARI-Bench's Borda points.
func borda(t *Table) {
	var idx []int
	for i, r := range t.Rows {
		if r.Complete {
			idx = append(idx, i)
		}
	}
	n := len(idx)
	if n == 0 {
		return
	}
	// Points are counted as integers (n−rank per task) and divided once,
	// so equal counts are equal Borda: a float sum of 100·(n−rank)/(n−1)
	// terms depends on their order and split ties (51.07 ranked 33 and 34).
	points := make([]int, n)
	for j := range t.Tasks {
		for a, ia := range idx {
			better := 0
			for _, ib := range idx {
				if t.Rows[ib].Scores[j].Value > t.Rows[ia].Scores[j].Value {
					better++
				}
			}
			rank := better + 1 // competition rank: ties share the best
			points[a] += n - rank
		}
	}
	for a, ia := range idx {
		if n == 1 {
			t.Rows[ia].Borda = 100
			continue
		}
		t.Rows[ia].Borda = 100 * float64(points[a]) / float64((n-1)*len(t.Tasks))
	}
}

func originOrder(s *System) int {
	switch s.Origin() {
	case OriginOurs:
		return 0
	case OriginPublished:
		return 1
	}
	return 2
}

// rank numbers the sorted rows that take part in the ranking; rows equal
// on the ranking key share a rank. A system missing tasks gets no rank
// (0): an average over fewer tasks is no average to rank by.
func rank(t *Table) {
	for i := range t.Rows {
		r := &t.Rows[i]
		if !r.ranked(t.Ranking) {
			continue
		}
		r.Rank = i + 1
		if i > 0 {
			p := t.Rows[i-1]
			if p.Rank > 0 && ((t.Ranking == ByBorda && p.Borda == r.Borda) || (t.Ranking == ByAverage && p.Mean == r.Mean)) {
				r.Rank = p.Rank
			}
		}
	}
}

// best finds each column's highest value (Best, OtherBest,
// BestAverage): what the formats single out. A column with a value in
// fewer than two rows has no best (NaN): there is nothing to compare.
func (t *Table) best() {
	colBest := func(cell func(Row) (float64, bool)) float64 {
		b, n := math.NaN(), 0
		for _, r := range t.Rows {
			if v, ok := cell(r); ok {
				n++
				if math.IsNaN(b) || v > b {
					b = v
				}
			}
		}
		if n < 2 {
			return math.NaN()
		}
		return b
	}
	t.Best = make([]float64, len(t.Tasks))
	for j := range t.Tasks {
		t.Best[j] = colBest(func(r Row) (float64, bool) { return r.Scores[j].Value, r.Scores[j].OK })
	}
	t.OtherBest = make([]float64, len(t.OtherTasks))
	for j := range t.OtherTasks {
		t.OtherBest[j] = colBest(func(r Row) (float64, bool) { return r.Other[j].Value, r.Other[j].OK })
	}
	t.BestAverage = colBest(func(r Row) (float64, bool) { return r.Mean, r.ranked(ByAverage) })
}

// Number is the cell's value as the formats print it: ×100 with two
// decimals (Pct), or as its source printed it with fewer (7.8, not 7.80).
func (s Score) Number() string {
	if s.Printed != "" {
		return s.Printed
	}
	return Pct(s.Value)
}

// AverageNumber is the row's average as the formats print it: two
// decimals, or the source's own digits where the row shows a printed
// average printed with fewer (InsertRank's 51.1, not 51.10).
func (r Row) AverageNumber() string {
	if e := r.System.External; e != nil && e.AverageAsPrinted != "" && r.Average == e.PrintedAverage {
		return e.AverageAsPrinted
	}
	return strconv.FormatFloat(r.Average, 'f', 2, 64)
}

// IsBest reports whether a row's average is the best of the table's, as
// printed (AtBest).
func (t *Table) IsBest(r Row) bool { return r.ranked(ByAverage) && AtBest(r.Mean, t.BestAverage) }

// AtBest reports whether the value v is its column's best as the tables
// print them (×100, two decimals: Pct), best being the column's highest
// value (NaN where the column has none). Values that print alike are
// marked alike: a 12.35 is not bold beside an unmarked 12.35 because
// their unrounded values differ, which a reader cannot see.
func AtBest(v, best float64) bool { return !math.IsNaN(best) && Pct(v) == Pct(best) }

// WhyEmpty says why a table built from systems with opt has no row,
// given that there are systems: none of the kind asked for, or none with
// a value of the metric (external rows without one are left out: MTEB's
// results have no R2MED MRR, papers print nDCG@10 only).
func WhyEmpty(systems []System, opt Options) string {
	n, kind := len(systems), ""
	if opt.Kind != "" {
		n = 0
		for _, s := range systems {
			if s.Kind == opt.Kind {
				n++
			}
		}
		if n == 0 && len(systems) == 1 {
			return fmt.Sprintf("the one system on the board is not of kind %s", opt.Kind)
		}
		if n == 0 {
			return fmt.Sprintf("none of the %d systems on the board is of kind %s", len(systems), opt.Kind)
		}
		kind = " of kind " + string(opt.Kind)
	}
	label := opt.Metric.Label
	if label == "" {
		label = DefaultMetric.Label
	}
	s := fmt.Sprintf("none of the %d systems%s on the board has a value of %s", n, kind, label)
	if n == 1 {
		s = fmt.Sprintf("the one system%s on the board has no value of %s", kind, label)
	}
	if opt.Family != "" || len(opt.Tasks) > 0 {
		s += " on the tasks chosen"
	}
	return s
}
