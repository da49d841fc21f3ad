// Package report shows benchmark results to people: a self-contained
// offline HTML report (leaderboard table sortable in the browser, per-task
// bar charts, recall@k curves, a per-query scatter of two systems) with
// charts drawn here as inline SVG, and the same charts as separate PNG or
// SVG files for papers (gonum/plot).
//
// Our runs come with their ranked lists (run.trec), so per-query values
// are computed from them and the task's judgments; published systems have
// only their aggregate result files, so their curves use the recall@k
// values those files hold and they cannot be in the scatter.
package report

import (
	"context"
	"fmt"
	"html/template"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/r2med/r2med/internal/numtext"
	"github.com/r2med/r2med/leaderboard"
	"github.com/r2med/r2med/results"
	"github.com/r2med/r2med/significance"
	"github.com/r2med/r2med/sysname"
)

// Options choose what a report shows. The zero value charts our best
// systems beside R2MED's three best published ones (when the board has
// them; else the later papers' three best) on nDCG@10.
type Options struct {
	Metric leaderboard.Metric // zero: leaderboard.DefaultMetric
	// Systems are the systems charted, by ID or name, at most MaxSeries;
	// the first two with run files are the scatter's. Empty: our best,
	// then the References best published ones, MaxSeries in all.
	Systems []string
	// Title heads the report; "" gives "R2MED results".
	Title string
	// NoScatter skips the per-query scatter, which loads task data and
	// evaluates run files: for pages that show per-query data elsewhere.
	NoScatter bool
	// Baseline, when set, marks the leaderboard's cells that differ
	// significantly from this system of ours (leaderboard.MarkAgainst).
	Baseline string
}

// Report is a built report: everything the HTML page and the chart files
// show.
type Report struct {
	Title   string
	Metric  leaderboard.Metric
	Table   *leaderboard.Table
	Tasks   []string // every task column: Table.Tasks shown, then others
	Charted []*leaderboard.System
	Bars    BarChart
	// Curves holds one recall@k chart per task some charted system has
	// two or more recall cutoffs on.
	Curves []LineChart
	// Scatter is nil when no two charted systems have run files on a
	// common task; ScatterNote then says why. Its points are coloured by
	// task, each task's N in the legend.
	Scatter     *ScatterChart
	ScatterPair [2]*leaderboard.System
	ScatterNote string
	// Tests are the scatter's paired comparisons (B − A), one per task on
	// that task's judged queries (significance.Values: unanswered ones
	// count 0), then, with several tasks, one over all of them labelled
	// pooled.
	Tests []PairTest
	// Cost plots quality against cost per query with the Pareto front,
	// for the charted systems that recorded their usage; nil (CostNote
	// says why) when fewer than two did.
	Cost     *CostChart
	CostNote string
	// Notes are things the reader should know: runs left out, data that
	// could not be loaded.
	Notes []string
	// showR2MED is whether any row has a score on an R2MED task.
	showR2MED bool
	// Sections are extra parts of the page, already rendered and
	// escaped, shown after the charts (the data audits).
	Sections []template.HTML
}

// PairTest is the comparison of the scatter's two systems on one task, or
// pooled over all the scatter's tasks.
type PairTest struct {
	Task   string // the task, or "pooled (K tasks)"
	Pooled bool
	// UnansweredA and UnansweredB count the judged queries each system
	// did not answer; they are in N, as 0.
	UnansweredA, UnansweredB int
	significance.Result
}

// Build assembles a report from d.
func Build(ctx context.Context, d *Data, opt Options) (*Report, error) {
	if opt.Metric.Key == "" {
		opt.Metric = leaderboard.DefaultMetric
	}
	if opt.Title == "" {
		opt.Title = "R2MED results"
	}
	t, err := d.Board.Table(leaderboard.Options{Metric: opt.Metric, PinOurs: true})
	if err != nil {
		return nil, err
	}
	r := &Report{Title: opt.Title, Metric: opt.Metric, Table: t}
	if opt.Baseline != "" {
		base, err := d.OursSystem(opt.Baseline)
		if err != nil {
			return nil, fmt.Errorf("baseline: %w", err)
		}
		untested, err := t.MarkAgainst(base, d.PerQueryFunc(ctx, opt.Metric.Key), significance.Options{})
		if err != nil {
			return nil, err
		}
		for _, name := range slices.Sorted(maps.Keys(untested)) {
			r.Notes = append(r.Notes, fmt.Sprintf("%s not tested against %s: %s", name, base.Name, untested[name]))
		}
	}
	for _, row := range t.Rows {
		if row.Have > 0 {
			r.showR2MED = true
		}
	}
	if r.showR2MED {
		r.Tasks = append(r.Tasks, t.Tasks...)
	}
	for _, task := range d.Tasks {
		if !IsR2MEDTask(task) {
			r.Tasks = append(r.Tasks, task)
		}
	}
	if r.Charted, err = chartSystems(d, t, opt.Systems); err != nil {
		return nil, err
	}
	if len(opt.Systems) == 0 {
		charted := 0
		for _, s := range r.Charted {
			if s.IsOurs() {
				charted++
			}
		}
		if n := len(d.Ours()); n > charted {
			r.Notes = append(r.Notes, fmt.Sprintf("%d of our %d systems are charted (the best, beside %d reference systems); choose others with --systems", charted, n, len(r.Charted)-charted))
		}
	}
	r.bars()
	r.curves()
	r.cost()
	r.Notes = append(r.Notes, r.depthNotes()...)
	if !opt.NoScatter {
		if err := r.scatter(ctx, d); err != nil {
			return nil, err
		}
	}
	if l := d.Board.Listing; l != nil && len(l.Unfinished) > 0 {
		r.Notes = append(r.Notes, fmt.Sprintf("%d unfinished run(s) left out (results.json without manifest.json), e.g. %s", len(l.Unfinished), l.Unfinished[0]))
	}
	if s := d.Board.Superseded; len(s) > 0 {
		r.Notes = append(r.Notes, fmt.Sprintf("%d older run(s) of a system and task replaced by newer ones, e.g. %s", len(s), s[0].Dir))
	}
	return r, nil
}

func chartSystems(d *Data, t *leaderboard.Table, names []string) ([]*leaderboard.System, error) {
	if len(names) > 0 {
		if len(names) > MaxSeries {
			return nil, fmt.Errorf("%d systems named; a chart shows at most %d, one colour each", len(names), MaxSeries)
		}
		var out []*leaderboard.System
		for _, n := range names {
			s, err := d.System(strings.TrimSpace(n))
			if err != nil {
				return nil, err
			}
			if slices.Contains(out, s) {
				return nil, fmt.Errorf("system %q named twice", n)
			}
			out = append(out, s)
		}
		return out, nil
	}
	// References: R2MED's three best published systems (complete on
	// the tasks shown), else, without them, the later papers' three best.
	var refs []*leaderboard.System
	for _, origin := range []leaderboard.Origin{leaderboard.OriginPublished, leaderboard.OriginExternal} {
		for _, row := range t.Rows {
			if row.System.Origin() == origin && row.Complete && len(refs) < References {
				refs = append(refs, row.System)
			}
		}
		if len(refs) > 0 {
			break
		}
	}
	// Ours, best first, in the room the references leave: each task's
	// group of bars puts our runs beside them.
	var out []*leaderboard.System
	for _, row := range t.Rows {
		if row.System.IsOurs() && len(out) < MaxSeries-len(refs) {
			out = append(out, row.System)
		}
	}
	return append(out, refs...), nil
}

// References is how many reference systems a report charts beside ours
// by default: R2MED's best published ones.
const References = 3

func (r *Report) chartedFullNames() []string {
	names := make([]string, len(r.Charted))
	for i, s := range r.Charted {
		names[i] = s.FullName()
	}
	return names
}

// chartedNames are the charted systems' legend names: their display
// names (told apart on the board by sysname.ShortAll), with the origin
// added where one of ours and a published system share one ("bm25
// (ours)", "bm25 (published)"), so no two keys read the same; the name is
// cut to leave room for it, so no key is longer than MaxLabel.
func (r *Report) chartedNames() []string {
	names := make([]string, len(r.Charted))
	count := map[string]int{}
	for i, s := range r.Charted {
		names[i] = s.DisplayName()
		count[names[i]]++
	}
	for i, s := range r.Charted {
		if count[s.DisplayName()] > 1 {
			tag := " (" + string(s.Origin()) + ")"
			names[i] = sysname.Short(s.FullName(), MaxLabel-utf8.RuneCountInString(tag)) + tag
		}
	}
	return names
}

func (r *Report) bars() {
	var cats []string
	for _, task := range r.Tasks {
		for _, s := range r.Charted {
			if !math.IsNaN(Value(s, task, r.Metric.Key)) {
				cats = append(cats, task)
				break
			}
		}
	}
	vals := make([][]float64, len(r.Charted))
	for i, s := range r.Charted {
		for _, task := range cats {
			vals[i] = append(vals[i], Value(s, task, r.Metric.Key)*100)
		}
	}
	short := make([]string, len(cats))
	for i, c := range cats {
		short[i] = leaderboard.ShortTaskName(c)
	}
	r.Bars = BarChart{ID: "bars", Title: r.Metric.Label + " per task",
		Desc:   fmt.Sprintf("Grouped bars: %s ×100 of %s on %s (%s).", r.Metric.Label, count(len(r.Charted), "system"), count(len(cats), "task"), strings.Join(cats, ", ")),
		XLabel: "task", YLabel: r.Metric.Label + " ×100", Categories: short, Series: r.chartedNames(), Full: r.chartedFullNames(), Values: vals}
}

// depthNotes say which of the charted values are not the metric the
// charts name, and what they are (LabelNotes), "charts: " before each.
func (r *Report) depthNotes() []string {
	var out []string
	for _, s := range r.Charted {
		for _, n := range LabelNotes(s, r.Metric, r.Tasks) {
			out = append(out, "charts: "+n)
		}
	}
	return out
}

// LabelNotes say where the system's value of m on tasks is not m as
// named (leaderboard.TaskResult.Label), and what it is, a line per
// label (results.MRRLabelNote): "bm25 (bright) #5729's MRR on
// BRIGHT-biology is its MRR@100, MRR over each query's top 100, where
// BRIGHT's run.py reads its top 1000 (r2med run --top-k 1000)". Tasks it
// has no value of m on add nothing.
func LabelNotes(s *leaderboard.System, m leaderboard.Metric, tasks []string) []string {
	on := map[string][]string{}
	var labels, out []string
	for _, task := range tasks {
		tr, ok := s.Tasks[task]
		if _, scored := tr.Metrics[m.Key]; !ok || !scored {
			continue
		}
		if l := tr.Label(m); l != m.Label {
			if on[l] == nil {
				labels = append(labels, l)
			}
			on[l] = append(on[l], task)
		}
	}
	for _, l := range labels {
		out = append(out, results.MRRLabelNote(s.DisplayName(), on[l], l))
	}
	return out
}

// recallCutoffs lists the k of the recall@k values a system has on a task.
func recallCutoffs(s *leaderboard.System, task string) []int {
	var ks []int
	for k := range s.Tasks[task].Metrics {
		if rest, ok := strings.CutPrefix(k, "recall_at_"); ok {
			if n, err := strconv.Atoi(rest); err == nil && n > 0 {
				ks = append(ks, n)
			}
		}
	}
	slices.Sort(ks)
	return ks
}

func (r *Report) curves() {
	for ti, task := range r.Tasks {
		// The y axis is scaled to the data (0 to a round value above the
		// highest recall), not a fixed 0–100 that squashes low curves.
		c := LineChart{ID: "recall-" + strconv.Itoa(ti), Title: "Recall@k — " + task, XLabel: "k (log scale)", YLabel: "Recall@k ×100", LogX: true, SharedLegend: true}
		ticks := map[int]bool{}
		names := r.chartedNames()
		for i, s := range r.Charted {
			ks := recallCutoffs(s, task)
			if len(ks) < 2 {
				continue
			}
			l := Line{Name: names[i], Full: s.FullName(), Series: i}
			for _, k := range ks {
				l.X = append(l.X, float64(k))
				l.Y = append(l.Y, s.Tasks[task].Metrics["recall_at_"+strconv.Itoa(k)]*100)
				ticks[k] = true
			}
			c.Series = append(c.Series, l)
		}
		if len(c.Series) == 0 {
			continue
		}
		for _, k := range slices.Sorted(maps.Keys(ticks)) {
			c.XTicks = append(c.XTicks, float64(k))
		}
		c.Desc = fmt.Sprintf("Recall at cutoffs %s on %s for %s, from the result files.", joinFloats(c.XTicks), task, count(len(c.Series), "system"))
		r.Curves = append(r.Curves, c)
	}
}

func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

func joinFloats(v []float64) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = tickText(x)
	}
	return strings.Join(s, ", ")
}

// scatter plots per-query values of the first two charted systems that
// have run files on a common task, one colour per task with its N, and
// tests them per task and, with several tasks, pooled.
func (r *Report) scatter(ctx context.Context, d *Data) error {
	var pair []*leaderboard.System
	for _, s := range r.Charted {
		for _, task := range r.Tasks {
			if d.HasRunFile(s.ID, task) {
				pair = append(pair, s)
				break
			}
		}
		if len(pair) == 2 {
			break
		}
	}
	if len(pair) < 2 {
		r.ScatterNote = "The per-query scatter needs two charted systems of ours with run files (run.trec); published and external systems have only aggregate results."
		return nil
	}
	a, b := pair[0], pair[1]
	r.ScatterPair = [2]*leaderboard.System{a, b}
	c := &ScatterChart{ID: "scatter", Title: fmt.Sprintf("Per-query %s: %s vs %s", r.Metric.Label, a.DisplayName(), b.DisplayName()),
		XLabel: fmt.Sprintf("%s — %s", r.Metric.Label, a.DisplayName()), YLabel: fmt.Sprintf("%s — %s", r.Metric.Label, b.DisplayName()), Max: 1}
	var xs, ys []float64
	for _, task := range r.Tasks {
		if !d.HasRunFile(a.ID, task) || !d.HasRunFile(b.ID, task) {
			continue
		}
		g, test, err := scatterGroup(ctx, d, a, b, task, r.Metric.Key)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			r.Notes = append(r.Notes, fmt.Sprintf("per-query values on %s left out of the scatter: %v", task, err))
			continue
		}
		for _, p := range g.Points {
			xs, ys = append(xs, p.X), append(ys, p.Y)
		}
		c.Groups = append(c.Groups, g)
		r.Tests = append(r.Tests, test)
	}
	if len(c.Groups) == 0 {
		r.ScatterNote = fmt.Sprintf("%s and %s have no task with per-query values in common.", a.Name, b.Name)
		return nil
	}
	if len(r.Tests) > 1 {
		res, err := significance.Paired(xs, ys, significance.Options{})
		if err != nil {
			return fmt.Errorf("comparing %s with %s per query: %w", b.Name, a.Name, err)
		}
		pooled := PairTest{Task: fmt.Sprintf("pooled (%d tasks)", len(r.Tests)), Pooled: true, Result: res}
		for _, t := range r.Tests {
			pooled.UnansweredA += t.UnansweredA
			pooled.UnansweredB += t.UnansweredB
		}
		r.Tests = append(r.Tests, pooled)
	}
	var parts []string
	for _, t := range r.Tests {
		parts = append(parts, fmt.Sprintf("%s: N = %d, %s better on %d, %s on %d, equal on %d; mean %s − %s %s, randomization p = %s",
			t.Task, t.N, b.DisplayName(), t.Wins, a.DisplayName(), t.Losses, t.Ties, b.DisplayName(), a.DisplayName(), numtext.Signed(t.Diff, 4), numtext.P(t.RandP)))
	}
	c.Desc = fmt.Sprintf("Every judged query of each task counts (a query a system did not answer scores 0). Points above the diagonal favour %s. %s.", b.DisplayName(), strings.Join(parts, "; "))
	r.Scatter = c
	return nil
}

// N is the number of queries in the scatter (every task's judged
// queries).
func (r *Report) N() int {
	n := 0
	for _, t := range r.Tests {
		if !t.Pooled {
			n += t.N
		}
	}
	return n
}

// scatterGroup is the points of one task, every judged query's values of
// a and b, and their paired test.
func scatterGroup(ctx context.Context, d *Data, a, b *leaderboard.System, task, metric string) (PointGroup, PairTest, error) {
	va, err := d.PerQuery(ctx, a.ID, task, metric)
	if err != nil {
		return PointGroup{}, PairTest{}, err
	}
	vb, err := d.PerQuery(ctx, b.ID, task, metric)
	if err != nil {
		return PointGroup{}, PairTest{}, err
	}
	if va.N() != vb.N() {
		return PointGroup{}, PairTest{}, fmt.Errorf("%s has %d judged queries in %s's data but %d in %s's: the runs were judged on different data", task, va.N(), a.Name, vb.N(), b.Name)
	}
	g := PointGroup{Name: fmt.Sprintf("%s (N=%d)", task, va.N())}
	var xs, ys []float64
	for _, q := range slices.Sorted(maps.Keys(va.ByQuery)) {
		y, ok := vb.ByQuery[q]
		if !ok {
			return g, PairTest{}, fmt.Errorf("query %s of %s is judged in %s's data only", q, task, a.Name)
		}
		x := va.ByQuery[q]
		xs, ys = append(xs, x), append(ys, y)
		g.Points = append(g.Points, Point{X: x, Y: y, Label: fmt.Sprintf("%s · %s: %s vs %s", task, q, numtext.Query(x), numtext.Query(y))})
	}
	res, err := significance.Paired(xs, ys, significance.Options{})
	if err != nil {
		return g, PairTest{}, err
	}
	return g, PairTest{Task: task, UnansweredA: len(va.Unanswered), UnansweredB: len(vb.Unanswered), Result: res}, nil
}
