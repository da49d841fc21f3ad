package report

import (
	"cmp"
	"fmt"
	"image/color"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/r2med/r2med/leaderboard"
	"github.com/r2med/r2med/usage"
)

// CostChart plots quality against cost per query: one point per system,
// in its series' colour and marker, and the Pareto front — the systems no
// other matches or beats on both, cheaper and better — joined by a line,
// its points ringed. Costs start at 0 (a pipeline that calls no model).
type CostChart struct {
	ID             string
	Title, Desc    string
	XLabel, YLabel string
	Points         []CostPoint
}

// CostPoint is one system of a CostChart.
type CostPoint struct {
	Name string
	Full string // the whole name, for hovers; "" is Name
	// Series is the system's index among the charted ones: its colour and
	// marker.
	Series int
	X, Y   float64 // cost per query, quality
	// Front marks a point on the Pareto front (ParetoFront).
	Front bool
}

// ParetoFront marks the points no other point dominates: none costs as
// little or less and scores as much or more, better on one of the two.
// Equal points are on the front together.
func ParetoFront(ps []CostPoint) {
	for i := range ps {
		ps[i].Front = true
		for j := range ps {
			a, b := ps[j], ps[i]
			if a.X <= b.X && a.Y >= b.Y && (a.X < b.X || a.Y > b.Y) {
				ps[i].Front = false
				break
			}
		}
	}
}

// front is the Pareto front's points by increasing cost.
func (c CostChart) front() []CostPoint {
	var f []CostPoint
	for _, p := range c.Points {
		if p.Front {
			f = append(f, p)
		}
	}
	slices.SortFunc(f, func(a, b CostPoint) int { return cmp.Or(cmp.Compare(a.X, b.X), cmp.Compare(a.Y, b.Y)) })
	return f
}

// cost builds the quality-against-cost chart of the charted systems whose
// runs recorded their usage, on the tasks all of them ran: the metric's
// mean there (×100) against their cost per query there, in dollars when
// every one was priced, else in tokens.
func (r *Report) cost() {
	t := r.Table
	rows := map[string]leaderboard.Row{}
	for _, row := range t.Rows {
		rows[row.System.ID] = row
	}
	var systems []int // indexes into r.Charted
	for i, s := range r.Charted {
		if row, ok := rows[s.ID]; ok && row.Cost != nil {
			systems = append(systems, i)
		}
	}
	if !t.Costs || len(systems) < 2 {
		r.CostNote = "Fewer than two charted systems recorded what their model calls cost (runs made by this version of r2med do; a price table, --prices, puts them in dollars)."
		return
	}
	// The tasks every such system ran, with its usage.
	var common []string
	for _, task := range append(slices.Clone(t.Tasks), t.OtherTasks...) {
		all := true
		for _, i := range systems {
			tr, ok := r.Charted[i].Tasks[task]
			_, scored := tr.Metrics[r.Metric.Key]
			all = all && ok && scored && tr.Usage != nil
		}
		if all {
			common = append(common, task)
		}
	}
	if len(common) == 0 {
		r.CostNote = "The systems that recorded their cost share no task, so their quality and cost cannot be set side by side."
		return
	}
	costs := make([]usage.Cost, len(systems))
	dollars := true
	for k, i := range systems {
		var sums []*usage.Summary
		for _, task := range common {
			sums = append(sums, r.Charted[i].Tasks[task].Usage)
		}
		costs[k], _ = usage.CostOf(sums)
		dollars = dollars && costs[k].USD != nil
	}
	c := CostChart{ID: "cost", YLabel: r.Metric.Label + " ×100"}
	unit := "tokens"
	if dollars {
		unit = "$"
	}
	c.XLabel = map[string]string{"$": "dollars per query", "tokens": "tokens per query (prompt + completion)"}[unit]
	for k, i := range systems {
		s := r.Charted[i]
		y := 0.0
		for _, task := range common {
			y += s.Tasks[task].Metrics[r.Metric.Key]
		}
		x := costs[k].Tokens()
		if dollars {
			x = *costs[k].USD
		}
		c.Points = append(c.Points, CostPoint{Name: s.DisplayName(), Full: s.FullName(), Series: i, X: x, Y: y / float64(len(common)) * 100})
	}
	ParetoFront(c.Points)
	scope := "on " + strings.Join(common, ", ")
	if len(common) > 3 {
		scope = fmt.Sprintf("over the %d tasks all of them ran", len(common))
	}
	c.Title = r.Metric.Label + " against cost per query"
	var front []string
	for _, p := range c.front() {
		front = append(front, p.Name)
	}
	c.Desc = fmt.Sprintf("%s ×100 (mean %s) against what the pipeline's model calls cost per query (%s; embedding the corpus spread over the queries, cached answers at their cost when made). The line joins the Pareto front, the systems no other beats on both: %s.",
		r.Metric.Label, scope, c.XLabel, strings.Join(front, ", "))
	r.Cost = &c
}

// xTicks returns round ticks over [0, hi] for costs that may be far
// below 1 (dollars per query).
func costTicks(hi float64) []float64 {
	if !(hi > 0) {
		return []float64{0, 1}
	}
	return niceTicks(hi, 5)
}

func costTickText(v float64) string {
	if v == 0 {
		return "0"
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

// SVG renders the chart: a legend of the systems and the front, the
// points, the front's line.
func (c CostChart) SVG() string {
	var b strings.Builder
	var keys []legendKey
	xhi, yhi := 0.0, 0.0
	for _, p := range c.Points {
		keys = append(keys, legendKey{name: p.Name, full: p.Full, series: p.Series, color: seriesColor(Palette, p.Series), class: "c" + strconv.Itoa(p.Series%len(Palette))})
		xhi, yhi = max(xhi, p.X), max(yhi, p.Y)
	}
	w := chartW
	lh := legendHeight(append(keys, legendKey{name: "Pareto front"}), w)
	top := plotTop + lh + 8
	bottom := top + 300
	x0, x1 := plotLeft+8, w-plotRight-12
	xt, yt := costTicks(xhi*1.05), niceTicks(yhi, 5)
	px := func(v float64) float64 { return x0 + (x1-x0)*v/xt[len(xt)-1] }
	py := func(v float64) float64 { return bottom - (bottom-top)*v/yt[len(yt)-1] }
	svgOpen(&b, c.ID, w, bottom+56, c.Title, c.Desc)
	legend(&b, keys, plotTop, w)
	// The front's key, after the systems', drawn as the front is.
	lx, ly := legendEnd(keys, w)
	fmt.Fprintf(&b, `<g class="legend"><g class="key" data-series="front" tabindex="0"><line class="front" x1="%s" x2="%s" y1="%s" y2="%s"/><circle class="front-ring" cx="%s" cy="%s" r="7"/><text x="%s" y="%s">Pareto front</text></g></g>`,
		f1(lx-4), f1(lx+18), f1(ly-4), f1(ly-4), f1(lx+7), f1(ly-4), f1(lx+24), f1(ly))
	yAxis(&b, yt, top, bottom, x0-8, x1+12, c.YLabel)
	b.WriteString(`<g class="axis x">`)
	fmt.Fprintf(&b, `<line class="baseline" x1="%s" x2="%s" y1="%s" y2="%s"/>`, f1(x0-8), f1(x1+12), f1(bottom), f1(bottom))
	for _, t := range xt {
		fmt.Fprintf(&b, `<text class="tick" x="%s" y="%s" text-anchor="middle">%s</text>`, f1(px(t)), f1(bottom+18), costTickText(t))
	}
	fmt.Fprintf(&b, `<text class="label" x="%s" y="%s" text-anchor="middle">%s</text>`, f1((x0+x1)/2), f1(bottom+44), esc(c.XLabel))
	b.WriteString(`</g>`)
	if f := c.front(); len(f) > 0 {
		var pts []string
		for _, p := range f {
			pts = append(pts, f1(px(p.X))+","+f1(py(p.Y)))
		}
		fmt.Fprintf(&b, `<g class="series" data-series="front"><polyline class="front" points="%s"/>`, strings.Join(pts, " "))
		for _, p := range f {
			fmt.Fprintf(&b, `<circle class="front-ring" cx="%s" cy="%s" r="9"/>`, f1(px(p.X)), f1(py(p.Y)))
		}
		b.WriteString(`</g>`)
	}
	for _, p := range c.Points {
		i := p.Series
		fmt.Fprintf(&b, `<g class="series" data-series="%d">`, i)
		tip := fmt.Sprintf("%s — %s: %s, %s: %.2f", p.Name, c.XLabel, costTickText(p.X), c.YLabel, p.Y)
		if p.Front {
			tip += " (on the Pareto front)"
		}
		marker(&b, i, px(p.X), py(p.Y), 5.5, "pt c"+strconv.Itoa(i%len(Palette)), seriesColor(Palette, i), fmt.Sprintf(` data-tip="%s"`, esc(tip)))
		b.WriteString(`</g>`)
	}
	b.WriteString(`</svg>`)
	return b.String()
}

// legendEnd is where legend(keys) leaves off: the position of one more
// key, the front's (wrapped to a new row when it does not fit).
func legendEnd(keys []legendKey, width float64) (x, y float64) {
	x, row := legendFlow(keys, width)
	if x+keyWidth("Pareto front") > width-plotRight && x > plotLeft {
		x, row = plotLeft, row+1
	}
	return x, plotTop + float64(row)*legendRowH
}

// plotCost draws the chart for a file.
func (r *Report) plotCost(f ChartFormat) (io.WriterTo, error) {
	c := r.Cost
	p := newPlot(c.Title, c.XLabel, c.YLabel)
	p.X.Min, p.Y.Min = 0, 0
	front := c.front()
	var legend []legendEntry
	if len(front) > 0 {
		xy := make(plotter.XYs, len(front))
		for i, pt := range front {
			xy[i] = plotter.XY{X: pt.X, Y: pt.Y}
		}
		line, rings, err := plotter.NewLinePoints(xy)
		if err != nil {
			return nil, err
		}
		line.Color, line.Width = color.Gray{Y: 60}, vg.Points(1.2)
		rings.Shape, rings.Radius, rings.Color = draw.RingGlyph{}, vg.Points(5.5), color.Gray{Y: 60}
		p.Add(line, rings)
		legend = append(legend, legendEntry{"Pareto front", "", []plot.Thumbnailer{line, rings}})
	}
	for _, pt := range c.Points {
		s, err := plotter.NewScatter(plotter.XYs{{X: pt.X, Y: pt.Y}})
		if err != nil {
			return nil, err
		}
		s.Color, s.Shape, s.Radius = hexColor(seriesColor(Palette, pt.Series)), glyph(pt.Series), vg.Points(3.5)
		p.Add(s)
		legend = append(legend, legendEntry{pt.Name, pt.Full, []plot.Thumbnailer{s}})
	}
	xt := costTicks(p.X.Max * 1.05)
	yt := niceTicks(p.Y.Max*1.05, 5)
	p.X.Max, p.Y.Max = xt[len(xt)-1], yt[len(yt)-1]
	p.X.Min = -p.X.Max * 0.03 // a free pipeline's point off the axis line
	if math.IsNaN(p.X.Max) {
		p.X.Max = 1
	}
	return withLegend(f, scatterSize[0], scatterSize[1]*0.8, legend, p, func(dc draw.Canvas) { p.Draw(dc) }), nil
}
