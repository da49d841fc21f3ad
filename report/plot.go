package report

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/r2med/r2med/internal/fileio"
)

// ChartFormat is a file format of the charts for papers.
type ChartFormat string

// The chart file formats WriteCharts writes.
const (
	PNG ChartFormat = "png" // at PNGDPI
	SVG ChartFormat = "svg" // fonts embedded
)

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
// per task) and scatter (per-query values of two systems), each when the
// report has it. Output is deterministic: the same report gives the same
// bytes. It returns the files written.
func (r *Report) WriteCharts(dir string, f ChartFormat) ([]string, error) {
	if f != PNG && f != SVG {
		return nil, fmt.Errorf("unknown chart format %q; want png or svg", f)
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

// canvas makes a canvas of format f and size w×h; the returned function
// finishes it into something that writes the file.
func canvas(f ChartFormat, w, h vg.Length) (vg.CanvasSizer, func() io.WriterTo) {
	if f == SVG {
		// Fonts are embedded so the file renders the same anywhere.
		c := vgsvg.NewWith(vgsvg.UseWH(w, h), vgsvg.EmbedFonts(true))
		return c, func() io.WriterTo { return c }
	}
	c := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(PNGDPI), vgimg.UseBackgroundColor(color.White))
	return c, func() io.WriterTo { return vgimg.PngCanvas{Canvas: c} }
}

func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.Title.TextStyle.Font.Size = 12
	p.Legend.Top = true
	p.Add(plotter.NewGrid())
	return p
}

func (r *Report) plotBars(f ChartFormat) (io.WriterTo, error) {
	c := r.Bars
	p := newPlot(c.Title, c.XLabel, c.YLabel)
	n := float64(max(len(c.Series), 1))
	w := vg.Length(float64(barsSize[0]) * 0.7 / float64(max(len(c.Categories), 1)) / n)
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
			b.Offset = w * vg.Length(float64(s)-(n-1)/2)
			b.Color = hexColor(seriesColor(Palette, s))
			b.LineStyle.Width = 0
			p.Add(b)
			if first == nil {
				first = b
			}
		}
		if first != nil {
			p.Legend.Add(name, first)
		}
	}
	p.NominalX(c.Categories...)
	p.Y.Min = 0
	p.Legend.Left = false
	// Headroom above the tallest bar for the legend, up to a round tick.
	ticks := niceTicks(p.Y.Max*1.12, 5)
	p.Y.Max = ticks[len(ticks)-1]
	cv, done := canvas(f, barsSize[0], barsSize[1])
	p.Draw(draw.New(cv))
	return done(), nil
}

func (r *Report) plotCurves(f ChartFormat) (io.WriterTo, error) {
	cols := min(len(r.Curves), 3)
	rows := (len(r.Curves) + cols - 1) / cols
	plots := make([][]*plot.Plot, rows)
	for i := range plots {
		plots[i] = make([]*plot.Plot, cols)
	}
	for i, c := range r.Curves {
		p := newPlot(strings.TrimPrefix(c.Title, "Recall@k — "), "k", "Recall@k ×100")
		p.X.Scale = plot.LogScale{}
		var ticks []plot.Tick
		for _, t := range c.XTicks {
			ticks = append(ticks, plot.Tick{Value: t, Label: tickText(t)})
		}
		p.X.Tick.Marker = plot.ConstantTicks(ticks)
		p.Y.Min, p.Y.Max = 0, 100
		for _, l := range c.Series {
			xy := make(plotter.XYs, len(l.X))
			for j := range l.X {
				xy[j] = plotter.XY{X: l.X[j], Y: l.Y[j]}
			}
			line, pts, err := plotter.NewLinePoints(xy)
			if err != nil {
				return nil, err
			}
			line.Color = hexColor(l.Color)
			line.Width = vg.Points(1.5)
			pts.Color = hexColor(l.Color)
			pts.Shape = draw.CircleGlyph{}
			pts.Radius = vg.Points(2.5)
			p.Add(line, pts)
			if i == 0 {
				p.Legend.Add(l.Name, line, pts)
			}
		}
		p.Legend.Left = false
		p.Legend.Top = false
		p.Legend.YOffs = vg.Points(8)
		p.Legend.TextStyle.Font.Size = font.Length(7)
		plots[i/cols][i%cols] = p
	}
	w, h := tileSize[0]*vg.Length(cols), tileSize[1]*vg.Length(rows)
	cv, done := canvas(f, w, h)
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Points(6), PadY: vg.Points(6), PadTop: vg.Points(4), PadBottom: vg.Points(4), PadLeft: vg.Points(4), PadRight: vg.Points(4)}
	canvases := plot.Align(plots, tiles, draw.New(cv))
	for i := range plots {
		for j, p := range plots[i] {
			if p != nil {
				p.Draw(canvases[i][j])
			}
		}
	}
	return done(), nil
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
		s.Shape = draw.CircleGlyph{}
		s.Radius = vg.Points(2.5)
		p.Add(s)
		p.Legend.Add(g.Name, s)
	}
	p.Legend.Left = true
	p.Legend.Top = true
	cv, done := canvas(f, scatterSize[0], scatterSize[1])
	p.Draw(draw.New(cv))
	return done(), nil
}
