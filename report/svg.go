package report

import (
	"fmt"
	"html"
	"math"
	"strconv"
	"strings"
)

// Palette is the series colours of every chart: Paul Tol's "bright"
// scheme, distinguishable with the common colour-vision deficiencies and
// readable on light and dark backgrounds. A chart shows at most
// len(Palette) systems, so no two share a colour.
var Palette = []string{"#4477AA", "#EE6677", "#228833", "#CCBB44", "#66CCEE", "#AA3377", "#BBBBBB"}

// TaskPalette colours tasks in the per-query scatter: Tol's "muted"
// scheme, nine colours, one per R2MED task and one more.
var TaskPalette = []string{"#CC6677", "#332288", "#DDCC77", "#117733", "#88CCEE", "#882255", "#44AA99", "#999933", "#AA4499"}

// MaxSeries is how many systems one chart can show.
var MaxSeries = len(Palette)

func seriesColor(p []string, i int) string { return p[i%len(p)] }

// BarChart is a grouped bar chart: one group per category (task), one
// bar per series (system). Values are on the plotted scale (×100 for
// R2MED's metrics); NaN is a missing bar.
type BarChart struct {
	ID             string // prefix of the element ids, unique in the page
	Title, Desc    string
	XLabel, YLabel string
	Categories     []string
	Series         []string
	Values         [][]float64 // [series][category]
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
}

// Line is one series of a LineChart.
type Line struct {
	Name  string
	Color string // "": the palette's colour for its position
	X, Y  []float64
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

// legend lays out swatches left to right, wrapping at the chart width,
// and returns the height used.
func legend(b *strings.Builder, names, colors []string, y float64, marker string) float64 {
	if len(names) == 0 {
		return 0
	}
	b.WriteString(`<g class="legend">`)
	x, row := plotLeft, 0
	for i, n := range names {
		w := 22 + float64(len([]rune(n)))*fontW + 18
		if x+w > chartW-plotRight && x > plotLeft {
			x, row = plotLeft, row+1
		}
		yy := y + float64(row)*legendRowH
		fmt.Fprintf(b, `<g class="key" data-series="%d" tabindex="0">`, i)
		if marker == "circle" {
			fmt.Fprintf(b, `<circle cx="%s" cy="%s" r="5" fill="%s"/>`, f1(x+6), f1(yy-4), colors[i])
		} else {
			fmt.Fprintf(b, `<rect x="%s" y="%s" width="12" height="12" rx="2" fill="%s"/>`, f1(x), f1(yy-10), colors[i])
		}
		fmt.Fprintf(b, `<text x="%s" y="%s">%s</text></g>`, f1(x+18), f1(yy), esc(n))
		x += w
	}
	b.WriteString(`</g>`)
	return float64(row+1) * legendRowH
}

func legendHeight(names []string) float64 {
	if len(names) == 0 {
		return 0
	}
	x, rows := plotLeft, 1
	for _, n := range names {
		w := 22 + float64(len([]rune(n)))*fontW + 18
		if x+w > chartW-plotRight && x > plotLeft {
			x, rows = plotLeft, rows+1
		}
		x += w
	}
	return float64(rows) * legendRowH
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

// SVG renders the chart.
func (c BarChart) SVG() string {
	var b strings.Builder
	colors := make([]string, len(c.Series))
	for i := range colors {
		colors[i] = seriesColor(Palette, i)
	}
	hi := 0.0
	for _, vs := range c.Values {
		for _, v := range vs {
			if !math.IsNaN(v) {
				hi = max(hi, v)
			}
		}
	}
	ticks := niceTicks(hi, 5)
	lh := legendHeight(c.Series)
	plotH := 260.0
	top := plotTop + lh + 8
	bottom := top + plotH
	x0, x1 := plotLeft, chartW-plotRight
	h := bottom + 64
	svgOpen(&b, c.ID, chartW, h, c.Title, c.Desc)
	legend(&b, c.Series, colors, plotTop, "rect")
	yAxis(&b, ticks, top, bottom, x0, x1, c.YLabel)
	nc := max(len(c.Categories), 1)
	groupW := (x1 - x0) / float64(nc)
	barW := min(groupW*0.8/float64(max(len(c.Series), 1)), 44)
	pad := (groupW - barW*float64(len(c.Series))) / 2
	for s, name := range c.Series {
		fmt.Fprintf(&b, `<g class="series" data-series="%d">`, s)
		for j, cat := range c.Categories {
			v := c.Values[s][j]
			if math.IsNaN(v) {
				continue
			}
			bh := (bottom - top) * v / ticks[len(ticks)-1]
			x := x0 + groupW*float64(j) + pad + barW*float64(s)
			tip := fmt.Sprintf("%s — %s: %.2f", name, cat, v)
			fmt.Fprintf(&b, `<rect x="%s" y="%s" width="%s" height="%s" fill="%s" data-tip="%s"><title>%s</title></rect>`,
				f1(x), f1(bottom-bh), f1(max(barW-1, 1)), f1(bh), colors[s], esc(tip), esc(tip))
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

// SVG renders the chart.
func (c LineChart) SVG() string {
	var b strings.Builder
	names := make([]string, len(c.Series))
	colors := make([]string, len(c.Series))
	xlo, xhi, yhi := math.Inf(1), math.Inf(-1), c.YMax
	for i, s := range c.Series {
		names[i], colors[i] = s.Name, s.Color
		if colors[i] == "" {
			colors[i] = seriesColor(Palette, i)
		}
		for j := range s.X {
			xlo, xhi = min(xlo, s.X[j]), max(xhi, s.X[j])
			if c.YMax == 0 {
				yhi = max(yhi, s.Y[j])
			}
		}
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
	ticks := niceTicks(yhi, 5)
	lh := legendHeight(names)
	top := plotTop + lh + 8
	plotH := 240.0
	bottom := top + plotH
	x0, x1 := plotLeft+8, chartW-plotRight-12
	px := func(v float64) float64 {
		if tx(xhi) == tx(xlo) {
			return (x0 + x1) / 2
		}
		return x0 + (x1-x0)*(tx(v)-tx(xlo))/(tx(xhi)-tx(xlo))
	}
	py := func(v float64) float64 { return bottom - (bottom-top)*v/ticks[len(ticks)-1] }
	svgOpen(&b, c.ID, chartW, bottom+56, c.Title, c.Desc)
	legend(&b, names, colors, plotTop, "circle")
	yAxis(&b, ticks, top, bottom, x0-8, x1+12, c.YLabel)
	b.WriteString(`<g class="axis x">`)
	fmt.Fprintf(&b, `<line class="baseline" x1="%s" x2="%s" y1="%s" y2="%s"/>`, f1(x0-8), f1(x1+12), f1(bottom), f1(bottom))
	for _, t := range c.XTicks {
		fmt.Fprintf(&b, `<text class="tick" x="%s" y="%s" text-anchor="middle">%s</text>`, f1(px(t)), f1(bottom+18), tickText(t))
	}
	fmt.Fprintf(&b, `<text class="label" x="%s" y="%s" text-anchor="middle">%s</text>`, f1((x0+x1)/2), f1(bottom+44), esc(c.XLabel))
	b.WriteString(`</g>`)
	for i, s := range c.Series {
		fmt.Fprintf(&b, `<g class="series" data-series="%d">`, i)
		var pts []string
		for j := range s.X {
			pts = append(pts, f1(px(s.X[j]))+","+f1(py(s.Y[j])))
		}
		fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="2.5" points="%s"/>`, colors[i], strings.Join(pts, " "))
		for j := range s.X {
			tip := fmt.Sprintf("%s — k=%s: %.2f", s.Name, tickText(s.X[j]), s.Y[j])
			fmt.Fprintf(&b, `<circle cx="%s" cy="%s" r="4.5" fill="%s" data-tip="%s"><title>%s</title></circle>`,
				f1(px(s.X[j])), f1(py(s.Y[j])), colors[i], esc(tip), esc(tip))
		}
		b.WriteString(`</g>`)
	}
	b.WriteString(`</svg>`)
	return b.String()
}

// SVG renders the chart.
func (c ScatterChart) SVG() string {
	var b strings.Builder
	names := make([]string, len(c.Groups))
	colors := make([]string, len(c.Groups))
	for i, g := range c.Groups {
		names[i], colors[i] = g.Name, seriesColor(TaskPalette, i)
	}
	hi := c.Max
	if hi == 0 {
		hi = 1
	}
	ticks := niceTicks(hi, 5)
	hi = ticks[len(ticks)-1]
	lh := legendHeight(names)
	top := plotTop + lh + 8
	side := 420.0
	bottom := top + side
	x0 := plotLeft + (chartW-plotLeft-plotRight-side)/2
	x1 := x0 + side
	px := func(v float64) float64 { return x0 + side*v/hi }
	py := func(v float64) float64 { return bottom - side*v/hi }
	svgOpen(&b, c.ID, chartW, bottom+56, c.Title, c.Desc)
	legend(&b, names, colors, plotTop, "circle")
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
			fmt.Fprintf(&b, `<circle class="pt" cx="%s" cy="%s" r="4" fill="%s" data-tip="%s"><title>%s</title></circle>`,
				f1(px(p.X)), f1(py(p.Y)), colors[i], esc(p.Label), esc(p.Label))
		}
		b.WriteString(`</g>`)
	}
	b.WriteString(`</svg>`)
	return b.String()
}
