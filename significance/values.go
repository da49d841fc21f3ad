package significance

import (
	"fmt"
	"maps"
	"slices"

	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/measure"
)

// Values are one run's per-query values of a measure on one task, by the
// rule every per-query view shares (compare, the report's scatter, the
// viewer, the leaderboard's marks): every judged query of the task
// counts; a judged query the run did not answer scores 0 and is listed in
// Unanswered. Tasks are never pooled here: a comparison over several
// tasks pairs each task's Values and says it pooled them.
type Values struct {
	// ByQuery has one value per query of the qrels.
	ByQuery map[string]float64
	// Unanswered are the judged queries the run returned no document for,
	// sorted; they score 0 in ByQuery.
	Unanswered []string
	// Unjudged are the run's queries the qrels do not judge, sorted;
	// they do not count (trec_eval's rule), and reports say so.
	Unjudged []string
}

// N is the number of queries counted.
func (v Values) N() int { return len(v.ByQuery) }

// Evaluate computes m per query of run against qrels by the rule of
// Values (trec_eval's -c: queries of the qrels the run lacks count 0).
func Evaluate(qrels ir.Qrels, run ir.Run, m measure.Measure) (Values, error) {
	if len(qrels) == 0 {
		return Values{}, fmt.Errorf("no judgments: a per-query comparison needs the task's qrels")
	}
	if why := m.Family.NoPerQueryNumber(); why != "" {
		return Values{}, fmt.Errorf("%s is %s, with no per-query number to compare: compare a per-query measure such as map", m.Name(), why)
	}
	res, err := measure.Evaluate(qrels, run, []measure.Measure{m}, measure.Options{Complete: true})
	if err != nil {
		return Values{}, err
	}
	v := Values{ByQuery: make(map[string]float64, len(qrels))}
	for _, q := range res.Queries {
		if _, judged := qrels[q.ID]; judged {
			v.ByQuery[q.ID] = q.Values[0]
		}
	}
	for _, q := range slices.Sorted(maps.Keys(qrels)) {
		if _, ok := v.ByQuery[q]; !ok {
			v.ByQuery[q] = 0
		}
		if len(run[q]) == 0 {
			v.Unanswered = append(v.Unanswered, q)
		}
	}
	for _, q := range slices.Sorted(maps.Keys(run)) {
		if _, judged := qrels[q]; !judged {
			v.Unjudged = append(v.Unjudged, q)
		}
	}
	return v, nil
}
