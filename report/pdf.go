package report

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
	"strconv"
	"time"

	"codeberg.org/go-pdf/fpdf"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
)

// pdfCanvas draws a chart into a PDF through fpdf directly rather than
// gonum's vgpdf, for two things vgpdf cannot do: embed only the glyphs a
// chart uses (vgpdf embeds the whole font, some 220 KB a chart) and show
// characters beyond Windows-1252 (vgpdf writes "→", common in system
// names, as three wrong letters). Text goes in as UTF-8 with the font
// embedded as a subset, which fpdf makes when it writes the file.
//
// Coordinates are vg's (points, origin bottom left); the canvas keeps the
// current transform itself and hands fpdf page coordinates.
type pdfCanvas struct {
	doc   *fpdf.Fpdf
	w, h  vg.Length
	state pdfState
	stack []pdfState
	fonts map[string]bool
}

// pdfState is what Push saves and Pop restores.
type pdfState struct {
	m      [6]float64 // x' = m0·x + m2·y + m4, y' = m1·x + m3·y + m5
	color  color.Color
	width  vg.Length
	dashes []vg.Length
	offset vg.Length
}

// pdfDate is the creation date every chart PDF records, so that the same
// report gives the same bytes.
var pdfDate = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

func newPDFCanvas(w, h vg.Length) *pdfCanvas {
	doc := fpdf.NewCustom(&fpdf.InitType{UnitStr: "pt", Size: fpdf.SizeType{Wd: w.Points(), Ht: h.Points()}})
	doc.SetMargins(0, 0, 0)
	doc.SetAutoPageBreak(false, 0)
	doc.SetCreationDate(pdfDate)
	doc.SetModificationDate(pdfDate)
	doc.SetCatalogSort(true)
	doc.SetCompression(true)
	doc.SetProducer("r2med", false)
	doc.AddPage()
	return &pdfCanvas{doc: doc, w: w, h: h, fonts: map[string]bool{},
		state: pdfState{m: [6]float64{1, 0, 0, 1, 0, 0}, color: color.Black, width: 1}}
}

func (c *pdfCanvas) Size() (w, h vg.Length) { return c.w, c.h }

func (c *pdfCanvas) SetLineWidth(w vg.Length) { c.state.width = w }

func (c *pdfCanvas) SetLineDash(pattern []vg.Length, offset vg.Length) {
	c.state.dashes, c.state.offset = append([]vg.Length(nil), pattern...), offset
}

func (c *pdfCanvas) SetColor(clr color.Color) {
	if clr == nil {
		clr = color.Black
	}
	c.state.color = clr
}

// mul applies the transform n after the current one.
func (c *pdfCanvas) mul(n [6]float64) {
	m := c.state.m
	c.state.m = [6]float64{
		m[0]*n[0] + m[2]*n[1], m[1]*n[0] + m[3]*n[1],
		m[0]*n[2] + m[2]*n[3], m[1]*n[2] + m[3]*n[3],
		m[0]*n[4] + m[2]*n[5] + m[4], m[1]*n[4] + m[3]*n[5] + m[5],
	}
}

func (c *pdfCanvas) Rotate(rad float64) {
	s, co := math.Sincos(rad)
	c.mul([6]float64{co, s, -s, co, 0, 0})
}

func (c *pdfCanvas) Translate(pt vg.Point) {
	c.mul([6]float64{1, 0, 0, 1, pt.X.Points(), pt.Y.Points()})
}

func (c *pdfCanvas) Scale(x, y float64) { c.mul([6]float64{x, 0, 0, y, 0, 0}) }

func (c *pdfCanvas) Push() {
	s := c.state
	s.dashes = append([]vg.Length(nil), s.dashes...)
	c.stack = append(c.stack, s)
}

func (c *pdfCanvas) Pop() {
	if n := len(c.stack); n > 0 {
		c.state, c.stack = c.stack[n-1], c.stack[:n-1]
	}
}

// page maps a point in the current coordinates to fpdf's page
// coordinates (points, origin top left).
func (c *pdfCanvas) page(pt vg.Point) (float64, float64) {
	m, x, y := c.state.m, pt.X.Points(), pt.Y.Points()
	return m[0]*x + m[2]*y + m[4], c.h.Points() - (m[1]*x + m[3]*y + m[5])
}

// scale is how much the current transform stretches a length.
func (c *pdfCanvas) scale() float64 {
	m := c.state.m
	return math.Sqrt(math.Abs(m[0]*m[3] - m[1]*m[2]))
}

func rgba8(clr color.Color) (r, g, b int, a float64) {
	cr, cg, cb, ca := clr.RGBA()
	if ca == 0 {
		return 0, 0, 0, 0
	}
	// Straight (not premultiplied) components, as PDF takes them.
	return int(cr * 255 / ca), int(cg * 255 / ca), int(cb * 255 / ca), float64(ca) / 0xffff
}

func (c *pdfCanvas) Stroke(p vg.Path) {
	if c.state.width <= 0 {
		return
	}
	r, g, b, a := rgba8(c.state.color)
	c.doc.SetDrawColor(r, g, b)
	c.doc.SetAlpha(a, "Normal")
	s := c.scale()
	c.doc.SetLineWidth(c.state.width.Points() * s)
	dash := make([]float64, len(c.state.dashes))
	for i, d := range c.state.dashes {
		dash[i] = d.Points() * s
	}
	c.doc.SetDashPattern(dash, c.state.offset.Points()*s)
	c.path(p)
	c.doc.DrawPath("D")
}

func (c *pdfCanvas) Fill(p vg.Path) {
	r, g, b, a := rgba8(c.state.color)
	c.doc.SetFillColor(r, g, b)
	c.doc.SetAlpha(a, "Normal")
	c.path(p)
	c.doc.DrawPath("F")
}

// path adds p to the page as the current path: arcs as cubic Bézier
// curves of at most a quarter turn, quadratic curves raised to cubic.
func (c *pdfCanvas) path(p vg.Path) {
	var cur vg.Point
	to := func(pt vg.Point, first bool) {
		x, y := c.page(pt)
		if first {
			c.doc.MoveTo(x, y)
		} else {
			c.doc.LineTo(x, y)
		}
		cur = pt
	}
	cubic := func(c0, c1, pt vg.Point) {
		x0, y0 := c.page(c0)
		x1, y1 := c.page(c1)
		x, y := c.page(pt)
		c.doc.CurveBezierCubicTo(x0, y0, x1, y1, x, y)
		cur = pt
	}
	for i, comp := range p {
		switch comp.Type {
		case vg.MoveComp:
			to(comp.Pos, true)
		case vg.LineComp:
			to(comp.Pos, false)
		case vg.ArcComp:
			r := comp.Radius
			at := func(a float64) vg.Point {
				s, co := math.Sincos(a)
				return vg.Point{X: comp.Pos.X + r*vg.Length(co), Y: comp.Pos.Y + r*vg.Length(s)}
			}
			to(at(comp.Start), i == 0)
			n := int(math.Ceil(math.Abs(comp.Angle) / (math.Pi / 2)))
			step := comp.Angle / float64(max(n, 1))
			k := 4.0 / 3 * math.Tan(step/4) // control distance of a circular arc of angle step
			for j := range n {
				a0, a1 := comp.Start+float64(j)*step, comp.Start+float64(j+1)*step
				p0, p1 := at(a0), at(a1)
				s0, c0 := math.Sincos(a0)
				s1, c1 := math.Sincos(a1)
				cubic(vg.Point{X: p0.X - r*vg.Length(k*s0), Y: p0.Y + r*vg.Length(k*c0)},
					vg.Point{X: p1.X + r*vg.Length(k*s1), Y: p1.Y - r*vg.Length(k*c1)}, p1)
			}
		case vg.CurveComp:
			switch len(comp.Control) {
			case 1:
				q := comp.Control[0]
				cubic(vg.Point{X: cur.X + 2*(q.X-cur.X)/3, Y: cur.Y + 2*(q.Y-cur.Y)/3},
					vg.Point{X: comp.Pos.X + 2*(q.X-comp.Pos.X)/3, Y: comp.Pos.Y + 2*(q.Y-comp.Pos.Y)/3}, comp.Pos)
			case 2:
				cubic(comp.Control[0], comp.Control[1], comp.Pos)
			default:
				to(comp.Pos, false)
			}
		case vg.CloseComp:
			c.doc.ClosePath()
		}
	}
}

func (c *pdfCanvas) FillString(fnt font.Face, pt vg.Point, str string) {
	if fnt.Font.Size == 0 || str == "" {
		return
	}
	name := fnt.Name()
	if !c.fonts[name] {
		var src bytes.Buffer
		if _, err := fnt.Face.WriteSourceTo(nil, &src); err != nil {
			c.doc.SetErrorf("report: font %s: %v", name, err)
			return
		}
		c.doc.AddUTF8FontFromBytes(name, "", src.Bytes())
		c.fonts[name] = true
	}
	c.doc.SetFont(name, "", fnt.Font.Size.Points()*c.scale())
	r, g, b, a := rgba8(c.state.color)
	c.doc.SetTextColor(r, g, b)
	c.doc.SetAlpha(a, "Normal")
	x, y := c.page(pt)
	m := c.state.m
	if angle := math.Atan2(m[1], m[0]) * 180 / math.Pi; math.Abs(angle) > 1e-9 {
		c.doc.TransformBegin()
		c.doc.TransformRotate(angle, x, y)
		c.doc.Text(x, y, str)
		c.doc.TransformEnd()
		return
	}
	c.doc.Text(x, y, str)
}

func (c *pdfCanvas) DrawImage(rect vg.Rectangle, img image.Image) {
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		c.doc.SetErrorf("report: image: %v", err)
		return
	}
	name := "img" + strconv.Itoa(len(c.fonts)) + strconv.Itoa(buf.Len())
	opts := fpdf.ImageOptions{ImageType: "PNG"}
	c.doc.RegisterImageOptionsReader(name, opts, &buf)
	x0, y0 := c.page(rect.Min)
	x1, y1 := c.page(rect.Max)
	c.doc.ImageOptions(name, min(x0, x1), min(y0, y1), math.Abs(x1-x0), math.Abs(y1-y0), false, opts, 0, "")
}

// WriteTo writes the PDF.
func (c *pdfCanvas) WriteTo(w io.Writer) (int64, error) {
	cw := &countWriter{w: w}
	err := c.doc.Output(cw)
	return cw.n, err
}

type countWriter struct {
	w io.Writer
	n int64
}

func (w *countWriter) Write(p []byte) (int, error) {
	n, err := w.w.Write(p)
	w.n += int64(n)
	return n, err
}
