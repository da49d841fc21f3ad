package leaderboard

import (
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/r2med/r2med/significance"
)

// PerQuery returns a system's per-query values of the table's metric on a
// task, over every judged query of the task (significance.Values), or an
// error when it has none (published and external systems have only
// aggregates).
type PerQuery func(systemID, task string) (significance.Values, error)

// The marks MarkAgainst puts on cells, as ranx prints them.
const (
	Mark05 = "†" // Holm-adjusted p < 0.05
	Mark01 = "‡" // Holm-adjusted p < 0.01
)

// MarkTest describes MarkAgainst's test for captions and footers.
const MarkTest = "two-sided paired randomization test per task, Holm–Bonferroni over each system's tasks; † p < 0.05, ‡ p < 0.01"

// MarkAgainst compares every row's per-task values with the baseline's
// on the same queries (paired randomization test, two-sided) and marks
// the cells (R2MED's tasks and the other data's) that differ
// significantly after Holm–Bonferroni over that row's tested tasks: † at 0.05, ‡ at 0.01. Rows without per-query
// values (published and external systems, ours without run files) stay
// unmarked; so does the baseline. It returns the systems that could not
// be tested, with why.
func (t *Table) MarkAgainst(baseline *System, values PerQuery, opt significance.Options) (untested map[string]string, err error) {
	if baseline == nil {
		return nil, fmt.Errorf("leaderboard: no baseline")
	}
	all := append(append([]string{}, t.Tasks...), t.OtherTasks...)
	base := map[string]significance.Values{}
	for _, task := range all {
		if v, err := values(baseline.ID, task); err == nil {
			base[task] = v
		}
	}
	if len(base) == 0 {
		return nil, fmt.Errorf("baseline %s has no per-query values on any task: it needs runs of ours with run files (published and external systems have only aggregates)", baseline.Name)
	}
	t.Baseline, t.Test = baseline.Name, MarkTest
	untested = map[string]string{}
	for i := range t.Rows {
		r := &t.Rows[i]
		if r.System.ID == baseline.ID || !r.System.IsOurs() {
			continue
		}
		var cols []*Score
		var ps []float64
		cells := append(append([]Score{}, r.Scores...), r.Other...)
		for j, task := range all {
			b, ok := base[task]
			if !ok || !cells[j].OK {
				continue
			}
			v, err := values(r.System.ID, task)
			if err != nil {
				untested[r.System.Name] = err.Error()
				continue
			}
			x, y, err := pair(b, v)
			if err != nil {
				return nil, fmt.Errorf("%s vs %s on %s: %w", r.System.Name, baseline.Name, task, err)
			}
			res, err := significance.Paired(x, y, opt)
			if err != nil {
				return nil, fmt.Errorf("%s vs %s on %s: %w", r.System.Name, baseline.Name, task, err)
			}
			c := &r.Scores[0]
			if j < len(r.Scores) {
				c = &r.Scores[j]
			} else {
				c = &r.Other[j-len(r.Scores)]
			}
			cols, ps = append(cols, c), append(ps, res.RandP)
		}
		for k, p := range significance.Holm(ps) {
			c := cols[k]
			c.P = p
			switch {
			case p < 0.01:
				c.Mark = Mark01
			case p < 0.05:
				c.Mark = Mark05
			}
		}
	}
	return untested, nil
}

// pair lines two systems' values up by query. Both cover every judged
// query of the task, so their queries must be the same.
func pair(a, b significance.Values) (x, y []float64, err error) {
	if len(a.ByQuery) != len(b.ByQuery) {
		return nil, nil, fmt.Errorf("%d judged queries against %d: the runs were judged on different data", len(a.ByQuery), len(b.ByQuery))
	}
	for _, q := range slices.Sorted(maps.Keys(a.ByQuery)) {
		v, ok := b.ByQuery[q]
		if !ok {
			return nil, nil, fmt.Errorf("query %q is judged for one run only: the runs were judged on different data", q)
		}
		x, y = append(x, a.ByQuery[q]), append(y, v)
	}
	return x, y, nil
}

// Marked reports whether any cell carries a mark or was tested.
func (t *Table) Marked() bool { return t.Baseline != "" }

func tested(s Score) bool { return !math.IsNaN(s.P) }
