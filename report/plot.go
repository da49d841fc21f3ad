package report

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"html"
	"image/color"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/r2med/r2med/internal/fileio"
	"github.com/r2med/r2med/sysname"
)

// ChartFormat is a file format of the charts for papers.
type ChartFormat string

// The chart file formats WriteCharts writes.
const (
	PNG ChartFormat = "png" // at PNGDPI
	SVG ChartFormat = "svg" // text in a system font stack (no embedded font)
	PDF ChartFormat = "pdf" // vector, the glyphs used embedded (a font subset), for LaTeX papers
)

// ParseChartFormat reads a chart file format.
func ParseChartFormat(s string) (ChartFormat, error) {
	switch f := ChartFormat(strings.ToLower(strings.TrimSpace(s))); f {
	case PNG, SVG, PDF:
		return f, nil
	}
	return "", fmt.Errorf("unknown chart format %q; want png, svg or pdf", s)
}

// PNGDPI is the resolution of PNG charts.
const PNGDPI = 150

// Chart sizes, in points (1/72 inch).
var (
	barsSize    = [2]vg.Length{8 * vg.Inch, 4 * vg.Inch}
	tileSize    = [2]vg.Length{3.4 * vg.Inch, 2.9 * vg.Inch}
	scatterSize = [2]vg.Length{5.5 * vg.Inch, 5.5 * vg.Inch}
)

// WriteCharts writes the report's charts into dir as separate files of
// format f: bars (the metric per task), recall (recall@k curves, one panel
// per task), scatter (per-query values of two systems) and cost (quality
// against cost per query, the Pareto front marked), each when the report
// has it. Output is deterministic: the same report gives the same
// bytes. It returns the files written.
func (r *Report) WriteCharts(dir string, f ChartFormat) ([]string, error) {
	if _, err := ParseChartFormat(string(f)); err != nil {
		return nil, err
	}
	type chart struct {
		name string
		draw func(f ChartFormat) (io.WriterTo, error)
	}
	var charts []chart
	if len(r.Bars.Categories) > 0 {
		charts = append(charts, chart{"bars", r.plotBars})
	}
	if len(r.Curves) > 0 {
		charts = append(charts, chart{"recall", r.plotCurves})
	}
	if r.Scatter != nil {
		charts = append(charts, chart{"scatter", r.plotScatter})
	}
	if r.Cost != nil {
		charts = append(charts, chart{"cost", r.plotCost})
	}
	if len(charts) == 0 {
		return nil, fmt.Errorf("no charts to write: no charted system has a value of %s", r.Metric.Label)
	}
	var files []string
	for _, c := range charts {
		wt, err := c.draw(f)
		if err != nil {
			return files, fmt.Errorf("%s chart: %w", c.name, err)
		}
		path := filepath.Join(dir, c.name+"."+string(f))
		if err := fileio.WriteAtomic(path, func(w io.Writer) error { _, err := wt.WriteTo(w); return err }); err != nil {
			return files, err
		}
		files = append(files, path)
	}
	return files, nil
}

func hexColor(s string) color.Color {
	v, _ := strconv.ParseUint(strings.TrimPrefix(s, "#"), 16, 32)
	return color.RGBA{R: uint8(v >> 16), G: uint8(v >> 8), B: uint8(v), A: 255}
}

// svgFonts is the font stack SVG charts name instead of embedding
// Liberation Sans (some 300 kB a file): Arial and Helvetica have its
// metrics, so the layout gonum measured holds.
const svgFonts = `font-family:'Liberation Sans',Arial,Helvetica,sans-serif;`

// canvas makes a canvas of format f and size w×h; the returned function
// finishes it into something that writes the file.
// canvas is a chart file's canvas, desc its description in the file's
// metadata (an SVG's <desc>, a PDF's Subject, a PNG's iTXt Description;
// none when "").
func canvas(f ChartFormat, w, h vg.Length, desc string) (vg.CanvasSizer, func() io.WriterTo) {
	switch f {
	case SVG:
		c := vgsvg.NewWith(vgsvg.UseWH(w, h), vgsvg.EmbedFonts(false))
		return c, func() io.WriterTo { return svgFontStack{c, desc} }
	case PDF:
		c := newPDFCanvas(w, h)
		if desc != "" {
			c.doc.SetSubject(desc, true)
		}
		return c, func() io.WriterTo { return c }
	}
	c := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(PNGDPI), vgimg.UseBackgroundColor(color.White))
	return c, func() io.WriterTo { return pngText{vgimg.PngCanvas{Canvas: c}, desc} }
}

// svgFontStack writes an SVG canvas naming a font stack for its text,
// with desc as its <desc>.
type svgFontStack struct {
	c    *vgsvg.Canvas
	desc string
}

func (s svgFontStack) WriteTo(w io.Writer) (int64, error) {
	var b bytes.Buffer
	if _, err := s.c.WriteTo(&b); err != nil {
		return 0, err
	}
	out := strings.ReplaceAll(b.String(), "font-family:Liberation Sans;", svgFonts)
	if i := strings.Index(out, "<svg"); s.desc != "" && i >= 0 {
		if j := strings.IndexByte(out[i:], '>'); j >= 0 {
			out = out[:i+j+1] + "\n<desc>" + html.EscapeString(s.desc) + "</desc>" + out[i+j+1:]
		}
	}
	n, err := io.WriteString(w, out)
	return int64(n), err
}

// pngText writes a PNG with desc as an iTXt chunk keyed Description
// (UTF-8, uncompressed), right after the header chunk.
type pngText struct {
	png  vgimg.PngCanvas
	desc string
}

func (p pngText) WriteTo(w io.Writer) (int64, error) {
	var b bytes.Buffer
	if _, err := p.png.WriteTo(&b); err != nil {
		return 0, err
	}
	data := b.Bytes()
	const afterIHDR = 8 + 4 + 4 + 13 + 4 // signature, then IHDR's length, type, data and CRC
	if p.desc != "" && len(data) > afterIHDR {
		body := append([]byte("Description\x00\x00\x00\x00\x00"), p.desc...) // keyword, no compression, no language, no translated keyword
		chunk := binary.BigEndian.AppendUint32(nil, uint32(len(body)))
		chunk = append(chunk, "iTXt"...)
		chunk = append(chunk, body...)
		chunk = binary.BigEndian.AppendUint32(chunk, crc32.ChecksumIEEE(chunk[4:]))
		data = append(append(append([]byte(nil), data[:afterIHDR]...), chunk...), data[afterIHDR:]...)
	}
	n, err := w.Write(data)
	return int64(n), err
}

// chartFont is the plots' typeface: sans serif, like the HTML charts.
var chartFont = font.Font{Typeface: "Liberation", Variant: "Sans"}

func sans(st *text.Style, size font.Length) {
	st.Font = font.From(chartFont, size)
}

func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = x
	p.Y.Label.Text = y
	sans(&p.Title.TextStyle, 12)
	sans(&p.X.Label.TextStyle, 11)
	sans(&p.Y.Label.TextStyle, 11)
	sans(&p.X.Tick.Label, 11)
	sans(&p.Y.Tick.Label, 11)
	sans(&p.Legend.TextStyle, 11)
	p.Legend.Top = true
	p.Add(plotter.NewGrid())
	return p
}

// glyph is series i's marker in gonum's shapes, matching Markers.
func glyph(i int) draw.GlyphDrawer {
	switch Markers[i%len(Markers)] {
	case "square":
		return draw.BoxGlyph{}
	case "triangle":
		return draw.TriangleGlyph{}
	case "triangle-down":
		return invertedTriangle{}
	case "diamond":
		return diamondGlyph{}
	case "cross":
		return draw.PlusGlyph{}
	case "star":
		return draw.PyramidGlyph{}
	}
	return draw.CircleGlyph{}
}

type invertedTriangle struct{}

func (invertedTriangle) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	r := sty.Radius
	var p vg.Path
	p.Move(vg.Point{X: pt.X, Y: pt.Y - r})
	p.Line(vg.Point{X: pt.X + r, Y: pt.Y + r*0.8})
	p.Line(vg.Point{X: pt.X - r, Y: pt.Y + r*0.8})
	p.Close()
	c.SetColor(sty.Color)
	c.Fill(p)
}

type diamondGlyph struct{}

func (diamondGlyph) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	r := sty.Radius * 1.2
	var p vg.Path
	p.Move(vg.Point{X: pt.X, Y: pt.Y + r})
	p.Line(vg.Point{X: pt.X + r, Y: pt.Y})
	p.Line(vg.Point{X: pt.X, Y: pt.Y - r})
	p.Line(vg.Point{X: pt.X - r, Y: pt.Y})
	p.Close()
	c.SetColor(sty.Color)
	c.Fill(p)
}

// dashes is series i's dash pattern, matching Dashes.
func dashes(i int) []vg.Length {
	var out []vg.Length
	for _, f := range strings.Fields(Dashes[i%len(Dashes)]) {
		v, _ := strconv.ParseFloat(f, 64)
		out = append(out, vg.Points(v*0.6))
	}
	return out
}

func (r *Report) plotBars(f ChartFormat) (io.WriterTo, error) {
	c := r.Bars
	p := newPlot(c.Title, c.XLabel, c.YLabel)
	n := float64(max(len(c.Series), 1))
	w := vg.Length(float64(barsSize[0]) * 0.7 / float64(max(len(c.Categories), 1)) / n)
	// Each group's bars are the series present there, centred on its tick.
	slot, present := c.slots()
	var legend []legendEntry
	for s, name := range c.Series {
		var first *plotter.BarChart
		for j := range c.Categories {
			v := c.Values[s][j]
			if math.IsNaN(v) {
				continue // missing: no bar, rather than a bar of 0
			}
			b, err := plotter.NewBarChart(plotter.Values{v}, w)
			if err != nil {
				return nil, err
			}
			b.XMin = float64(j)
			b.Offset = w * vg.Length(float64(slot[s][j])-float64(present[j]-1)/2)
			b.Color = hexColor(seriesColor(Palette, s))
			b.LineStyle.Width = 0
			p.Add(b)
			if first == nil {
				first = b
			}
		}
		if first != nil {
			full := ""
			if s < len(c.Full) {
				full = c.Full[s]
			}
			legend = append(legend, legendEntry{name, full, []plot.Thumbnailer{first}})
		}
	}
	p.NominalX(c.Categories...)
	// Half a group of room either side, so the first and last groups are
	// centred on their ticks like the others rather than cut at the axes.
	p.X.Min, p.X.Max = -0.5, float64(len(c.Categories))-0.5
	p.Y.Min = 0
	ticks := niceTicks(p.Y.Max, 5) // up to a round tick
	p.Y.Max = ticks[len(ticks)-1]
	p.Y.Tick.Marker = labelled(ticks)
	return withLegend(f, barsSize[0], barsSize[1], legend, p, func(dc draw.Canvas) { p.Draw(dc) }), nil
}

// legendEntry is one key of a chart's legend: a series' name (a display
// name, cut), its whole name ("": the name) and what draws its sample.
type legendEntry struct {
	name, full string
	thumb      []plot.Thumbnailer
}

// fullNames is what a chart file's metadata says of its legend: each
// key whose name is cut, in full ("" when none is), as the HTML charts
// give it on hover.
func fullNames(entries []legendEntry) string {
	var parts []string
	for _, e := range entries {
		if e.full != "" && e.full != e.name {
			parts = append(parts, e.name+" is "+e.full)
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "Legend names in full: " + strings.Join(parts, "; ")
}

// withLegend draws a chart's panels below its one legend, outside every
// plotting area, as the HTML report's shared legends are: no key covers a
// bar or a point. The canvas is w wide and h plus the legend's rows tall;
// panels draws into what is left below the legend.
//
// A chart of one plot passes it as p: its title goes above the legend
// (title, legend, plot, top to bottom).
func withLegend(f ChartFormat, w, h vg.Length, entries []legendEntry, p *plot.Plot, panels func(draw.Canvas)) io.WriterTo {
	var sty text.Style
	sans(&sty, 10)
	sty.Color = color.Black
	sty.Handler = plot.DefaultTextHandler
	sty.YAlign = draw.YCenter
	keys := layoutLegend(entries, w, sty)
	rows := 0
	for _, k := range keys {
		rows = max(rows, k.row+1)
	}
	legendH := vg.Points(16)*vg.Length(rows) + vg.Points(6)
	if len(entries) == 0 {
		legendH = 0
	}
	var title text.Style
	titleH := vg.Length(0)
	if p != nil && p.Title.Text != "" {
		title = p.Title.TextStyle
		titleH = title.Height(p.Title.Text) + vg.Points(6)
	}
	cv, done := canvas(f, w, h+legendH+titleH, fullNames(entries))
	dc := draw.New(cv)
	top := h + legendH + titleH
	if titleH > 0 {
		title.XAlign, title.YAlign = draw.XCenter, draw.YTop
		dc.FillText(title, vg.Point{X: w / 2, Y: top - vg.Points(3)}, p.Title.Text)
		p.Title.Text = ""
		top -= titleH
	}
	for _, k := range keys {
		y := top - vg.Points(11) - vg.Points(16)*vg.Length(k.row)
		thumb := draw.Crop(dc, k.x, k.x+vg.Points(22)-dc.Max.X, y-vg.Points(5), y+vg.Points(5)-dc.Max.Y)
		for _, t := range k.thumb {
			t.Thumbnail(&thumb)
		}
		dc.FillText(sty, vg.Point{X: k.x + vg.Points(26), Y: y}, k.text)
	}
	panels(draw.Crop(dc, 0, 0, 0, -legendH-titleH))
	return done()
}

// placedKey is a legend entry where withLegend draws it: its row, the x
// of its sample, and its name, cut further (by sysname.Short) only when
// it is wider than the chart.
type placedKey struct {
	legendEntry
	text string
	x    vg.Length
	row  int
}

// layoutLegend flows the entries left to right in rows across a chart w
// wide, each as wide as its sample and name measured in sty: no key
// overlaps another or runs off the chart.
func layoutLegend(entries []legendEntry, w vg.Length, sty text.Style) []placedKey {
	const gap, sample = 14, 26 // points between keys; a key's sample and its space
	left, right := vg.Points(8), w-vg.Points(8)
	var out []placedKey
	x, row := left, 0
	for _, e := range entries {
		name := e.name
		for n, room := utf8.RuneCountInString(name)-1, right-left-vg.Points(sample); sty.Width(name) > room && n > 1; n-- {
			name = sysname.Short(e.name, n) // sysname's one rule: the end that tells systems apart stays
		}
		kw := vg.Points(sample) + sty.Width(name)
		if x > left && x+kw > right {
			x, row = left, row+1
		}
		out = append(out, placedKey{legendEntry: e, text: name, x: x, row: row})
		x += kw + vg.Points(gap)
	}
	return out
}

func (r *Report) plotCurves(f ChartFormat) (io.WriterTo, error) {
	cols := min(len(r.Curves), 3)
	rows := (len(r.Curves) + cols - 1) / cols
	plots := make([][]*plot.Plot, rows)
	for i := range plots {
		plots[i] = make([]*plot.Plot, cols)
	}
	var legendEntries []legendEntry
	inLegend := map[int]bool{}
	for i, c := range r.Curves {
		p := newPlot(strings.TrimPrefix(c.Title, "Recall@k — "), "k", "Recall@k ×100")
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = labelled(c.XTicks)
		hi := 0.0
		for _, l := range c.Series {
			for _, y := range l.Y {
				hi = max(hi, y)
			}
		}
		yt := niceTicks(hi, 5) // scaled to the data, not a fixed 0–100
		p.Y.Min, p.Y.Max = 0, yt[len(yt)-1]
		p.Y.Tick.Marker = labelled(yt)
		for _, l := range c.Series {
			xy := make(plotter.XYs, len(l.X))
			for j := range l.X {
				xy[j] = plotter.XY{X: l.X[j], Y: l.Y[j]}
			}
			line, pts, err := plotter.NewLinePoints(xy)
			if err != nil {
				return nil, err
			}
			col := hexColor(seriesColor(Palette, l.Series))
			line.Color, line.Width, line.Dashes = col, vg.Points(1.5), dashes(l.Series)
			pts.Color, pts.Shape, pts.Radius = col, glyph(l.Series), vg.Points(2.5)
			p.Add(line, pts)
			if !inLegend[l.Series] {
				inLegend[l.Series] = true
				legendEntries = append(legendEntries, legendEntry{l.Name, l.Full, []plot.Thumbnailer{line, pts}})
			}
		}
		plots[i/cols][i%cols] = p
	}
	// One legend for every panel, above them.
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Points(6), PadY: vg.Points(6), PadTop: vg.Points(4), PadBottom: vg.Points(4), PadLeft: vg.Points(4), PadRight: vg.Points(4)}
	return withLegend(f, tileSize[0]*vg.Length(cols), tileSize[1]*vg.Length(rows), legendEntries, nil, func(dc draw.Canvas) {
		canvases := plot.Align(plots, tiles, dc)
		for i := range plots {
			for j, p := range plots[i] {
				if p != nil {
					p.Draw(canvases[i][j])
				}
			}
		}
	}), nil
}

func (r *Report) plotScatter(f ChartFormat) (io.WriterTo, error) {
	c := r.Scatter
	p := newPlot(c.Title, c.XLabel, c.YLabel)
	p.Title.TextStyle.Font.Size = 10
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 0, c.Max, 0, c.Max
	diag, err := plotter.NewLine(plotter.XYs{{X: 0, Y: 0}, {X: c.Max, Y: c.Max}})
	if err != nil {
		return nil, err
	}
	diag.Color = color.Gray{Y: 140}
	diag.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	p.Add(diag)
	var legend []legendEntry
	for i, g := range c.Groups {
		xy := make(plotter.XYs, len(g.Points))
		for j, pt := range g.Points {
			xy[j] = plotter.XY{X: pt.X, Y: pt.Y}
		}
		s, err := plotter.NewScatter(xy)
		if err != nil {
			return nil, err
		}
		s.Color = hexColor(seriesColor(TaskPalette, i))
		s.Shape = glyph(i)
		s.Radius = vg.Points(2.5)
		p.Add(s)
		legend = append(legend, legendEntry{g.Name, "", []plot.Thumbnailer{s}})
	}
	return withLegend(f, scatterSize[0], scatterSize[1], legend, p, func(dc draw.Canvas) { p.Draw(dc) }), nil
}

// labelled marks an axis at ticks, labelled as the SVG charts label them
// (tickText: 25, not 25.00), so every panel of a figure reads alike.
func labelled(ticks []float64) plot.ConstantTicks {
	out := make(plot.ConstantTicks, len(ticks))
	for i, t := range ticks {
		out[i] = plot.Tick{Value: t, Label: tickText(t)}
	}
	return out
}
