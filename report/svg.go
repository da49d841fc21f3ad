package report

import (
	"fmt"
	"html"
	"math"
	"strconv"
	"strings"

	"github.com/r2med/r2med/sysname"
)

// Palette is the series colours of every chart: Paul Tol's "bright"
// scheme, distinguishable with the common colour-vision deficiencies. A
// chart shows at most len(Palette) systems, so no two share a colour;
// each series also has its own marker and dash (Markers, Dashes), so
// identical curves and grey-scale prints stay apart.
var Palette = []string{"#4477AA", "#EE6677", "#228833", "#CCBB44", "#66CCEE", "#AA3377", "#BBBBBB"}

// DarkPalette is Palette on the dark background: the same hues, lighter
// where Tol's colour falls under 3:1 contrast with it (WCAG's rule for
// graphics). The stylesheet switches to it under prefers-color-scheme:
// dark.
var DarkPalette = []string{"#6699CC", "#EE6677", "#44BB55", "#CCBB44", "#66CCEE", "#DD66AA", "#BBBBBB"}

// TaskPalette colours tasks in the per-query scatter: Tol's "muted"
// scheme, nine colours, one per R2MED task and one more.
var TaskPalette = []string{"#CC6677", "#332288", "#DDCC77", "#117733", "#88CCEE", "#882255", "#44AA99", "#999933", "#AA4499"}

// DarkTaskPalette is TaskPalette on the dark background.
var DarkTaskPalette = []string{"#CC6677", "#8877EE", "#DDCC77", "#33AA55", "#88CCEE", "#DD5599", "#44AA99", "#BBBB44", "#CC66BB"}

// DarkBackground is the dark theme's page colour (style.css's --bg).
const DarkBackground = "#0d1117"

// Markers are the point shapes of series 0, 1, …: circle, square,
// triangle, diamond, triangle down, cross, star.
var Markers = []string{"circle", "square", "triangle", "diamond", "triangle-down", "cross", "star"}

// Dashes are the line dash patterns of series 0, 1, … (SVG
// stroke-dasharray; "" is solid).
var Dashes = []string{"", "7 4", "2 3", "9 3 2 3", "4 4", "12 4", "2 6"}

// MaxSeries is how many systems one chart can show.
var MaxSeries = len(Palette)

func seriesColor(p []string, i int) string { return p[i%len(p)] }

// marker draws shape i centred at (x, y), radius r, with the series'
// colour class.
func marker(b *strings.Builder, i int, x, y, r float64, class, color, extra string) {
	switch Markers[i%len(Markers)] {
	case "square":
		fmt.Fprintf(b, `<rect class="%s" x="%s" y="%s" width="%s" height="%s" fill="%s"%s/>`, class, f1(x-r*0.85), f1(y-r*0.85), f1(r*1.7), f1(r*1.7), color, extra)
	case "triangle":
		fmt.Fprintf(b, `<path class="%s" d="M%s %sL%s %sL%s %sZ" fill="%s"%s/>`, class, f1(x), f1(y-r*1.1), f1(x+r), f1(y+r*0.8), f1(x-r), f1(y+r*0.8), color, extra)
	case "triangle-down":
		fmt.Fprintf(b, `<path class="%s" d="M%s %sL%s %sL%s %sZ" fill="%s"%s/>`, class, f1(x), f1(y+r*1.1), f1(x+r), f1(y-r*0.8), f1(x-r), f1(y-r*0.8), color, extra)
	case "diamond":
		fmt.Fprintf(b, `<path class="%s" d="M%s %sL%s %sL%s %sL%s %sZ" fill="%s"%s/>`, class, f1(x), f1(y-r*1.2), f1(x+r), f1(y), f1(x), f1(y+r*1.2), f1(x-r), f1(y), color, extra)
	case "cross":
		w := r * 0.45
		fmt.Fprintf(b, `<path class="%s" d="M%s %sL%s %sL%s %sL%s %sL%s %sL%s %sL%s %sL%s %sL%s %sL%s %sL%s %sL%s %sZ" fill="%s"%s/>`, class,
			f1(x-w), f1(y-r), f1(x+w), f1(y-r), f1(x+w), f1(y-w), f1(x+r), f1(y-w), f1(x+r), f1(y+w), f1(x+w), f1(y+w),
			f1(x+w), f1(y+r), f1(x-w), f1(y+r), f1(x-w), f1(y+w), f1(x-r), f1(y+w), f1(x-r), f1(y-w), f1(x-w), f1(y-w), color, extra)
	case "star":
		var pts []string
		for k := range 10 {
			rr := r * 1.2
			if k%2 == 1 {
				rr = r * 0.5
			}
			a := math.Pi/2 + float64(k)*math.Pi/5
			pts = append(pts, f1(x+rr*math.Cos(a))+" "+f1(y-rr*math.Sin(a)))
		}
		fmt.Fprintf(b, `<path class="%s" d="M%sZ" fill="%s"%s/>`, class, strings.Join(pts, "L"), color, extra)
	default:
		fmt.Fprintf(b, `<circle class="%s" cx="%s" cy="%s" r="%s" fill="%s"%s/>`, class, f1(x), f1(y), f1(r), color, extra)
	}
}

// BarChart is a grouped bar chart: one group per category (task), one
// bar per series (system). Values are on the plotted scale (×100 for
// R2MED's metrics); NaN is a missing bar.
type BarChart struct {
	ID             string // prefix of the element ids, unique in the page
	Title, Desc    string
	XLabel, YLabel string
	Categories     []string
	Series         []string
	// Full are the series' whole names, for hovers (FullName); "" or
	// missing: the series name.
	Full   []string
	Values [][]float64 // [series][category]
}

// LineChart draws series of (x, y) points joined by lines, x on a log
// scale when LogX (recall@k over k).
type LineChart struct {
	ID             string
	Title, Desc    string
	XLabel, YLabel string
	LogX           bool
	XTicks         []float64 // where the x axis is labelled
	YMax           float64   // 0: from the data
	Series         []Line
	// SharedLegend leaves the legend out: the page shows one legend for
	// a group of charts (Legend), outside the plots.
	SharedLegend bool
}

// Line is one series of a LineChart.
type Line struct {
	Name string
	Full string // the whole name, for hovers; "" is Name
	// Series is the system's index among the charted ones: its colour,
	// marker and dash.
	Series int
	X, Y   []float64
}

// ScatterChart plots points of several groups on equal axes from 0 to Max
// with the diagonal y = x drawn: per-query values of system A (x) against
// system B (y).
type ScatterChart struct {
	ID             string
	Title, Desc    string
	XLabel, YLabel string
	Max            float64
	Groups         []PointGroup
}

// PointGroup is one colour of a ScatterChart (a task).
type PointGroup struct {
	Name   string
	Points []Point
}

// Point is one scatter point; Label is its tooltip.
type Point struct {
	X, Y  float64
	Label string
}

const (
	chartW     = 760.0
	smallW     = 560.0  // a chart in a two-column grid, drawn at its size at 1400 px
	barsW      = 1100.0 // the grouped bars, across the page
	plotTop    = 44.0
	plotLeft   = 62.0
	plotRight  = 16.0
	legendRowH = 20.0
	fontW      = 6.6 // estimated width of a 12px glyph, for layout only
)

func f1(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

func esc(s string) string { return html.EscapeString(s) }

// svgOpen starts an accessible SVG: role img, labelled by its title and
// described by its description.
func svgOpen(b *strings.Builder, id string, w, h float64, title, desc string) {
	fmt.Fprintf(b, `<svg xmlns="http://www.w3.org/2000/svg" class="chart" id="%s" viewBox="0 0 %s %s" width="%s" height="%s" role="img" aria-labelledby="%s-title %s-desc">`,
		esc(id), f1(w), f1(h), f1(w), f1(h), esc(id), esc(id))
	fmt.Fprintf(b, `<title id="%s-title">%s</title><desc id="%s-desc">%s</desc>`, esc(id), esc(title), esc(id), esc(desc))
	fmt.Fprintf(b, `<text class="chart-title" x="%s" y="22">%s</text>`, f1(plotLeft), esc(title))
}

// legendKey is one entry of a legend: a series' name, colour class and
// marker (and dash for lines).
type legendKey struct {
	name   string
	full   string // the name whole, for the key's hover; "" is name
	series int    // data-series, the colour class, marker and dash index
	color  string // fill
	class  string // colour class: "c0", "t3"
	line   bool   // draw a dashed line through the marker
	bar    bool   // a square swatch, as the bars are drawn
}

// legend lays out keys left to right, wrapping at width, and returns the
// height used.
func legend(b *strings.Builder, keys []legendKey, y, width float64) float64 {
	if len(keys) == 0 {
		return 0
	}
	b.WriteString(`<g class="legend">`)
	x, row := plotLeft, 0
	for _, k := range keys {
		w := keyWidth(k.name)
		if x+w > width-plotRight && x > plotLeft {
			x, row = plotLeft, row+1
		}
		yy := y + float64(row)*legendRowH
		fmt.Fprintf(b, `<g class="key" data-series="%d" tabindex="0">`, k.series)
		if k.line {
			fmt.Fprintf(b, `<line class="s%d" x1="%s" x2="%s" y1="%s" y2="%s" stroke="%s" stroke-width="2.5"%s/>`, k.series%len(Palette), f1(x-4), f1(x+18), f1(yy-4), f1(yy-4), k.color, dashAttr(k.series))
		}
		if k.bar {
			fmt.Fprintf(b, `<rect class="%s" x="%s" y="%s" width="12" height="12" rx="2" fill="%s"/>`, k.class, f1(x+1), f1(yy-10), k.color)
		} else {
			marker(b, k.series, x+7, yy-4, 5, k.class, k.color, "")
		}
		full := k.full
		if full == "" {
			full = k.name
		}
		fmt.Fprintf(b, `<text x="%s" y="%s">%s<title>%s</title></text></g>`, f1(x+24), f1(yy), esc(k.name), esc(full))
		x += w
	}
	b.WriteString(`</g>`)
	return float64(row+1) * legendRowH
}

func keyWidth(name string) float64 { return 28 + float64(len([]rune(name)))*fontW + 18 }

// MaxLabel is the longest series name a legend prints: a system's
// DisplayName, cut by sysname's one rule and given whole on hover.
const MaxLabel = sysname.Width

func dashAttr(i int) string {
	if d := Dashes[i%len(Dashes)]; d != "" {
		return ` stroke-dasharray="` + d + `"`
	}
	return ""
}

func legendHeight(keys []legendKey, width float64) float64 {
	if len(keys) == 0 {
		return 0
	}
	_, row := legendFlow(keys, width)
	return float64(row+1) * legendRowH
}

// legendFlow lays keys out as legend does and returns where the last one
// ends: its x and row.
func legendFlow(keys []legendKey, width float64) (x float64, row int) {
	x = plotLeft
	for _, k := range keys {
		w := keyWidth(k.name)
		if x+w > width-plotRight && x > plotLeft {
			x, row = plotLeft, row+1
		}
		x += w
	}
	return x, row
}

func seriesKeys(names []string, line bool) []legendKey {
	keys := make([]legendKey, len(names))
	for i, n := range names {
		keys[i] = legendKey{name: n, series: i, color: seriesColor(Palette, i), class: "c" + strconv.Itoa(i%len(Palette)), line: line}
	}
	return keys
}

// Legend is a legend on its own, for a group of charts that share it
// (the recall@k curves): one key per series (names[i] is series
// series[i], full[i] its whole name for the hover, "" or missing: the
// name) with its colour, marker and dash. id is the element id; the
// charts name it in data-legend.
func Legend(id string, names, full []string, series []int) string {
	var b strings.Builder
	keys := make([]legendKey, len(names))
	for i, n := range names {
		s := series[i]
		keys[i] = legendKey{name: n, series: s, color: seriesColor(Palette, s), class: "c" + strconv.Itoa(s%len(Palette)), line: true}
		if i < len(full) {
			keys[i].full = full[i]
		}
	}
	h := legendHeight(keys, chartW) + 8
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" class="chart legend-only" id="%s" viewBox="0 0 %s %s" width="%s" height="%s" role="img" aria-label="Legend: %s">`,
		esc(id), f1(chartW), f1(h), f1(chartW), f1(h), esc(strings.Join(names, ", ")))
	legend(&b, keys, 18, chartW)
	b.WriteString(`</svg>`)
	return b.String()
}

// niceTicks returns round tick values covering [0, hi].
func niceTicks(hi float64, n int) []float64 {
	if !(hi > 0) {
		hi = 1
	}
	raw := hi / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	var ticks []float64
	for v := 0.0; v <= hi+step*1e-9; v += step {
		ticks = append(ticks, math.Round(v/step)*step)
	}
	if ticks[len(ticks)-1] < hi {
		ticks = append(ticks, ticks[len(ticks)-1]+step)
	}
	return ticks
}

func tickText(v float64) string {
	if v == math.Trunc(v) {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

// yAxis draws horizontal grid lines and labels for ticks over [y0, y1]
// (bottom, top in pixels) and the rotated y label.
func yAxis(b *strings.Builder, ticks []float64, top, bottom, x0, x1 float64, label string) {
	hi := ticks[len(ticks)-1]
	b.WriteString(`<g class="axis y">`)
	for _, t := range ticks {
		y := bottom - (bottom-top)*t/hi
		fmt.Fprintf(b, `<line class="grid" x1="%s" x2="%s" y1="%s" y2="%s"/>`, f1(x0), f1(x1), f1(y), f1(y))
		fmt.Fprintf(b, `<text class="tick" x="%s" y="%s" text-anchor="end">%s</text>`, f1(x0-6), f1(y+4), tickText(t))
	}
	fmt.Fprintf(b, `<text class="label" transform="translate(16 %s) rotate(-90)" text-anchor="middle">%s</text>`, f1((top+bottom)/2), esc(label))
	b.WriteString(`</g>`)
}

// slots places the bars: slot[s][j] is series s's position among the
// bars of category j, present[j] how many bars it has (the series with a
// value there), so each group is centred with no empty slot.
func (c BarChart) slots() (slot [][]int, present []int) {
	present = make([]int, len(c.Categories))
	slot = make([][]int, len(c.Series))
	for s := range c.Series {
		slot[s] = make([]int, len(c.Categories))
		for j := range c.Categories {
			if !math.IsNaN(c.Values[s][j]) {
				slot[s][j] = present[j]
				present[j]++
			}
		}
	}
	return slot, present
}

// SVG renders the chart. Each group's bars are the series that have a
// value there, centred on the group's tick: a missing value leaves no
// empty slot.
func (c BarChart) SVG() string {
	var b strings.Builder
	hi := 0.0
	for _, vs := range c.Values {
		for _, v := range vs {
			if !math.IsNaN(v) {
				hi = max(hi, v)
			}
		}
	}
	ticks := niceTicks(hi, 5)
	keys := seriesKeys(c.Series, false)
	for i := range keys {
		keys[i].bar = true
		if i < len(c.Full) {
			keys[i].full = c.Full[i]
		}
	}
	lh := legendHeight(keys, barsW)
	plotH := 280.0
	top := plotTop + lh + 8
	bottom := top + plotH
	x0, x1 := plotLeft, barsW-plotRight
	h := bottom + 64
	svgOpen(&b, c.ID, barsW, h, c.Title, c.Desc)
	legend(&b, keys, plotTop, barsW)
	yAxis(&b, ticks, top, bottom, x0, x1, c.YLabel)
	nc := max(len(c.Categories), 1)
	groupW := (x1 - x0) / float64(nc)
	barW := min(groupW*0.8/float64(max(len(c.Series), 1)), 44)
	slot, present := c.slots()
	for s, name := range c.Series {
		fmt.Fprintf(&b, `<g class="series" data-series="%d">`, s)
		for j, cat := range c.Categories {
			v := c.Values[s][j]
			if math.IsNaN(v) {
				continue
			}
			bh := (bottom - top) * v / ticks[len(ticks)-1]
			x := x0 + groupW*(float64(j)+0.5) - barW*float64(present[j])/2 + barW*float64(slot[s][j])
			tip := fmt.Sprintf("%s — %s: %.2f", name, cat, v)
			fmt.Fprintf(&b, `<rect class="c%d" x="%s" y="%s" width="%s" height="%s" fill="%s" data-tip="%s"><title>%s</title></rect>`,
				s%len(Palette), f1(x), f1(bottom-bh), f1(max(barW-1, 1)), f1(bh), seriesColor(Palette, s), esc(tip), esc(tip))
		}
		b.WriteString(`</g>`)
	}
	b.WriteString(`<g class="axis x">`)
	fmt.Fprintf(&b, `<line class="baseline" x1="%s" x2="%s" y1="%s" y2="%s"/>`, f1(x0), f1(x1), f1(bottom), f1(bottom))
	for j, cat := range c.Categories {
		x := x0 + groupW*(float64(j)+0.5)
		fmt.Fprintf(&b, `<text class="tick" x="%s" y="%s" text-anchor="middle">%s</text>`, f1(x), f1(bottom+18), esc(cat))
	}
	fmt.Fprintf(&b, `<text class="label" x="%s" y="%s" text-anchor="middle">%s</text>`, f1((x0+x1)/2), f1(bottom+48), esc(c.XLabel))
	b.WriteString(`</g></svg>`)
	return b.String()
}

// SVG renders the chart; with SharedLegend it has no legend of its own.
func (c LineChart) SVG() string {
	var b strings.Builder
	var keys []legendKey
	xlo, xhi, yhi := math.Inf(1), math.Inf(-1), c.YMax
	for _, s := range c.Series {
		keys = append(keys, legendKey{name: s.Name, full: s.Full, series: s.Series, color: seriesColor(Palette, s.Series), class: "c" + strconv.Itoa(s.Series%len(Palette)), line: true})
		for j := range s.X {
			xlo, xhi = min(xlo, s.X[j]), max(xhi, s.X[j])
			if c.YMax == 0 {
				yhi = max(yhi, s.Y[j])
			}
		}
	}
	if c.SharedLegend {
		keys = nil
	}
	for _, t := range c.XTicks {
		xlo, xhi = min(xlo, t), max(xhi, t)
	}
	if math.IsInf(xlo, 0) {
		xlo, xhi = 1, 100
	}
	tx := func(v float64) float64 { return v }
	if c.LogX {
		tx = func(v float64) float64 { return math.Log10(max(v, 1e-9)) }
	}
	w := smallW
	ticks := niceTicks(yhi, 5)
	lh := legendHeight(keys, w)
	top := plotTop + lh + 8
	plotH := 240.0
	bottom := top + plotH
	x0, x1 := plotLeft+8, w-plotRight-12
	px := func(v float64) float64 {
		if tx(xhi) == tx(xlo) {
			return (x0 + x1) / 2
		}
		return x0 + (x1-x0)*(tx(v)-tx(xlo))/(tx(xhi)-tx(xlo))
	}
	py := func(v float64) float64 { return bottom - (bottom-top)*v/ticks[len(ticks)-1] }
	svgOpen(&b, c.ID, w, bottom+56, c.Title, c.Desc)
	if c.SharedLegend {
		b.Reset()
		svgOpenLegend(&b, c.ID, w, bottom+56, c.Title, c.Desc, "curves-legend")
	}
	legend(&b, keys, plotTop, w)
	yAxis(&b, ticks, top, bottom, x0-8, x1+12, c.YLabel)
	b.WriteString(`<g class="axis x">`)
	fmt.Fprintf(&b, `<line class="baseline" x1="%s" x2="%s" y1="%s" y2="%s"/>`, f1(x0-8), f1(x1+12), f1(bottom), f1(bottom))
	for _, t := range c.XTicks {
		fmt.Fprintf(&b, `<text class="tick" x="%s" y="%s" text-anchor="middle">%s</text>`, f1(px(t)), f1(bottom+18), tickText(t))
	}
	fmt.Fprintf(&b, `<text class="label" x="%s" y="%s" text-anchor="middle">%s</text>`, f1((x0+x1)/2), f1(bottom+44), esc(c.XLabel))
	b.WriteString(`</g>`)
	for _, s := range c.Series {
		i := s.Series
		color := seriesColor(Palette, i)
		fmt.Fprintf(&b, `<g class="series" data-series="%d">`, i)
		var pts []string
		for j := range s.X {
			pts = append(pts, f1(px(s.X[j]))+","+f1(py(s.Y[j])))
		}
		fmt.Fprintf(&b, `<polyline class="s%d" fill="none" stroke="%s" stroke-width="2.5"%s points="%s"/>`, i%len(Palette), color, dashAttr(i), strings.Join(pts, " "))
		for j := range s.X {
			tip := fmt.Sprintf("%s — k=%s: %.2f", s.Name, tickText(s.X[j]), s.Y[j])
			marker(&b, i, px(s.X[j]), py(s.Y[j]), 4.5, "c"+strconv.Itoa(i%len(Palette)), color, fmt.Sprintf(` data-tip="%s"`, esc(tip)))
		}
		b.WriteString(`</g>`)
	}
	b.WriteString(`</svg>`)
	return b.String()
}

// svgOpenLegend is svgOpen for a chart whose legend is the element
// legendID.
func svgOpenLegend(b *strings.Builder, id string, w, h float64, title, desc, legendID string) {
	svgOpen(b, id, w, h, title, desc)
	s := b.String()
	b.Reset()
	b.WriteString(strings.Replace(s, `role="img"`, `role="img" data-legend="`+esc(legendID)+`"`, 1))
}

// SVG renders the chart.
func (c ScatterChart) SVG() string {
	var b strings.Builder
	keys := make([]legendKey, len(c.Groups))
	for i, g := range c.Groups {
		keys[i] = legendKey{name: g.Name, series: i, color: seriesColor(TaskPalette, i), class: "t" + strconv.Itoa(i%len(TaskPalette))}
	}
	hi := c.Max
	if hi == 0 {
		hi = 1
	}
	ticks := niceTicks(hi, 5)
	hi = ticks[len(ticks)-1]
	lh := legendHeight(keys, chartW)
	top := plotTop + lh + 8
	side := 420.0
	bottom := top + side
	x0 := plotLeft + (chartW-plotLeft-plotRight-side)/2
	x1 := x0 + side
	px := func(v float64) float64 { return x0 + side*v/hi }
	py := func(v float64) float64 { return bottom - side*v/hi }
	svgOpen(&b, c.ID, chartW, bottom+56, c.Title, c.Desc)
	legend(&b, keys, plotTop, chartW)
	b.WriteString(`<g class="axis">`)
	for _, t := range ticks {
		fmt.Fprintf(&b, `<line class="grid" x1="%s" x2="%s" y1="%s" y2="%s"/>`, f1(x0), f1(x1), f1(py(t)), f1(py(t)))
		fmt.Fprintf(&b, `<line class="grid" x1="%s" x2="%s" y1="%s" y2="%s"/>`, f1(px(t)), f1(px(t)), f1(top), f1(bottom))
		fmt.Fprintf(&b, `<text class="tick" x="%s" y="%s" text-anchor="end">%s</text>`, f1(x0-6), f1(py(t)+4), tickText(t))
		fmt.Fprintf(&b, `<text class="tick" x="%s" y="%s" text-anchor="middle">%s</text>`, f1(px(t)), f1(bottom+18), tickText(t))
	}
	fmt.Fprintf(&b, `<line class="diagonal" x1="%s" y1="%s" x2="%s" y2="%s"/>`, f1(x0), f1(bottom), f1(x1), f1(top))
	fmt.Fprintf(&b, `<text class="label" x="%s" y="%s" text-anchor="middle">%s</text>`, f1((x0+x1)/2), f1(bottom+44), esc(c.XLabel))
	fmt.Fprintf(&b, `<text class="label" transform="translate(%s %s) rotate(-90)" text-anchor="middle">%s</text>`, f1(x0-40), f1((top+bottom)/2), esc(c.YLabel))
	b.WriteString(`</g>`)
	for i, g := range c.Groups {
		fmt.Fprintf(&b, `<g class="series" data-series="%d">`, i)
		for _, p := range g.Points {
			marker(&b, i, px(p.X), py(p.Y), 4, "pt t"+strconv.Itoa(i%len(TaskPalette)), keys[i].color, fmt.Sprintf(` data-tip="%s"`, esc(p.Label)))
		}
		b.WriteString(`</g>`)
	}
	b.WriteString(`</svg>`)
	return b.String()
}
