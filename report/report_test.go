package report

import (
	"bytes"
	"context"
	"fmt"
	"html"
	"image"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/r2med/r2med/demo"
	"github.com/r2med/r2med/internal/reuse"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/leaderboard"
	"github.com/r2med/r2med/report/reporttest"
	"github.com/r2med/r2med/results"
	"github.com/r2med/r2med/usage"
)

// fixture writes two systems of ours on two tasks (Biology, an R2MED
// task, and demo, other data), both on the demo task's data: "perfect"
// ranks every relevant document first; "buried" ranks them last on the
// queries at odd positions. It returns the root and the number of buried
// queries per task.
func fixture(t *testing.T) (string, int) {
	t.Helper()
	task, err := demo.Load()
	if err != nil {
		t.Fatal(err)
	}
	bury := map[string]bool{}
	for i, q := range task.Queries {
		if i%2 == 1 {
			bury[q.ID] = true
		}
	}
	root := t.TempDir()
	for _, name := range []string{"Biology", "demo"} {
		for _, r := range []reporttest.Run{
			{Dir: filepath.Join(root, "perfect", name), Task: name, System: "perfect", Ranked: reporttest.Perfect(task)},
			{Dir: filepath.Join(root, "buried", name), Task: name, System: "buried", Ranked: reporttest.Buried(task, func(q string) bool { return bury[q] })},
		} {
			if err := reporttest.Write(r); err != nil {
				t.Fatal(err)
			}
		}
	}
	return root, len(bury)
}

func build(t *testing.T, root string, published bool, opt Options) (*Data, *Report) {
	t.Helper()
	d, err := Load(root, leaderboard.Sources{Published: published}, reporttest.Loader)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Build(context.Background(), d, opt)
	if err != nil {
		t.Fatal(err)
	}
	return d, r
}

func TestBuild(t *testing.T) {
	root, buried := fixture(t)
	task, _ := demo.Load()
	d, r := build(t, root, false, Options{Systems: []string{"perfect", "buried"}})
	if got := strings.Join(d.Tasks, ","); got != "Biology,demo" {
		t.Fatalf("tasks %s, want Biology,demo (R2MED's first, then other data)", got)
	}
	var ids []string
	for _, s := range d.Board.Systems {
		ids = append(ids, s.ID)
		if len(s.Tasks) != 2 {
			t.Errorf("%s has %d tasks, want 2: the demo run joins the system with the same settings", s.ID, len(s.Tasks))
		}
	}
	if got := strings.Join(ids, ","); got != "ours/buried,ours/perfect" {
		t.Fatalf("systems %s", got)
	}
	// Bars are the result files' values ×100.
	for s, sys := range r.Charted {
		for j, task := range []string{"Biology", "demo"} {
			res, err := results.ReadR2MED(filepath.Join(root, sys.Name, task, results.ResultsFile))
			if err != nil {
				t.Fatal(err)
			}
			if got, want := r.Bars.Values[s][j], res.Test["ndcg_at_10"]*100; got != want {
				t.Errorf("%s %s bar %v, want %v", sys.Name, task, got, want)
			}
		}
	}
	// The scatter: perfect (x) scores 1 everywhere; buried (y) 0 on the
	// buried queries and 1 elsewhere, on both tasks.
	if r.Scatter == nil {
		t.Fatalf("no scatter: %s", r.ScatterNote)
	}
	n := len(task.Queries)
	// One test per task on its n judged queries, then one labelled pooled.
	if len(r.Tests) != 3 || r.Tests[0].Task != "Biology" || r.Tests[1].Task != "demo" || !r.Tests[2].Pooled || r.Tests[2].Task != "pooled (2 tasks)" {
		t.Fatalf("tests %+v", r.Tests)
	}
	for _, pt := range r.Tests[:2] {
		if pt.N != n || pt.Wins != 0 || pt.Losses != buried || pt.Ties != n-buried || pt.Diff != -float64(buried)/float64(n) {
			t.Errorf("%s test %+v", pt.Task, pt.Result)
		}
	}
	if p := r.Tests[2]; p.N != 2*n || p.Losses != 2*buried || r.N() != 2*n {
		t.Errorf("pooled test %+v, N %d", p.Result, r.N())
	}
	if g := r.Scatter.Groups[0].Name; g != fmt.Sprintf("Biology (N=%d)", n) {
		t.Errorf("scatter group %q: each task's N in the legend", g)
	}
	if !strings.Contains(r.Scatter.Desc, "pooled (2 tasks): N = ") {
		t.Errorf("scatter caption %q", r.Scatter.Desc)
	}
	for _, g := range r.Scatter.Groups {
		for _, p := range g.Points {
			if p.X != 1 || (p.Y != 0 && p.Y != 1) {
				t.Errorf("%s: point (%v, %v)", p.Label, p.X, p.Y)
			}
		}
	}
	// Curves: one per task, both systems, R2MED's cutoffs.
	if len(r.Curves) != 2 || len(r.Curves[0].Series) != 2 || joinFloats(r.Curves[0].XTicks) != "1, 10, 25, 50, 100" {
		t.Errorf("curves %+v", r.Curves)
	}
	if got := r.Curves[0].Series[0].Y[len(r.Curves[0].Series[0].Y)-1]; got != 100 {
		t.Errorf("perfect recall@100 %v, want 100", got)
	}
}

func TestDefaultsAndPublished(t *testing.T) {
	root, _ := fixture(t)
	_, r := build(t, root, true, Options{})
	// Ours first, then the three best published systems.
	var names []string
	for _, s := range r.Charted {
		names = append(names, s.ID)
	}
	if got := strings.Join(names, ","); got != "ours/buried,ours/perfect,gar/query2doc/gpt4/nv,gar/hyde/huatuo-o1-70b/nv,gar/hyde/gpt4/nv" {
		t.Errorf("charted %s", got)
	}
	if len(r.Tasks) != 9 || r.Tasks[8] != "demo" {
		t.Errorf("tasks %v: want R2MED's eight then demo", r.Tasks)
	}
	// Published dense retrievers' files hold recall at BEIR's cutoffs.
	_, r = build(t, root, true, Options{Systems: []string{"nv"}})
	if len(r.Curves) != 8 || joinFloats(r.Curves[0].XTicks) != "1, 3, 5, 10, 100, 1000" {
		t.Errorf("nv curves: %d, ticks %v", len(r.Curves), r.Curves[0].XTicks)
	}
	if r.Scatter != nil || !strings.Contains(r.ScatterNote, "run files") {
		t.Errorf("a published system has no per-query values: %q", r.ScatterNote)
	}
}

func TestSystemsErrors(t *testing.T) {
	root, _ := fixture(t)
	d, err := Load(root, leaderboard.Sources{Published: true}, reporttest.Loader)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		systems []string
		want    string
	}{
		{[]string{"perfect", "nosuch"}, `no system "nosuch"`},
		{[]string{"perfect", "perfect"}, "named twice"},
		{[]string{"nv", "grit", "sfr", "bm25", "bmr-7b", "openai", "voyage", "medcpt"}, "at most 7"},
	} {
		_, err := Build(context.Background(), d, Options{Systems: c.systems})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.systems, err, c.want)
		}
	}
}

// TestLoaderFailure: data that cannot be loaded is said, not dropped.
func TestLoaderFailure(t *testing.T) {
	root, _ := fixture(t)
	d, err := Load(root, leaderboard.Sources{}, func(context.Context, results.Run) (*ir.Task, error) { return nil, os.ErrNotExist })
	if err != nil {
		t.Fatal(err)
	}
	r, err := Build(context.Background(), d, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Scatter != nil || len(r.Notes) != 2 || !strings.Contains(r.Notes[0], "loading the data of") {
		t.Errorf("notes %q", r.Notes)
	}
}

var (
	externalRef = regexp.MustCompile(`(?i)(src|href|xlink:href|action)\s*=\s*["']?\s*(https?:)?//`)
	paperLink   = regexp.MustCompile(`<a href="https://arxiv\.org/abs/[0-9.]+">`)
)

// checkSelfContained fails when page could reach the network: external
// src/href (other than links to papers), script or stylesheet files, CSS
// imports or url()s, or script calls that fetch.
func checkSelfContained(t *testing.T, page string) {
	t.Helper()
	stripped := paperLink.ReplaceAllString(page, "<a>")
	if m := externalRef.FindString(stripped); m != "" {
		t.Errorf("external reference %q", m)
	}
	for _, bad := range []string{"<script src", "<link", "@import", "url(", "fetch(", "XMLHttpRequest", "WebSocket", "EventSource", "sendBeacon", "<iframe", "<img"} {
		if strings.Contains(strings.ToLower(stripped), strings.ToLower(bad)) {
			t.Errorf("page contains %q", bad)
		}
	}
}

var idAttr = regexp.MustCompile(`\sid="([^"]+)"`)

// checkUniqueIDs fails when two elements of the page share an id (a
// section heading and the table or chart in it did: #leaderboard,
// #scatter, #cost).
func checkUniqueIDs(t *testing.T, page string) {
	t.Helper()
	seen := map[string]bool{}
	for _, m := range idAttr.FindAllStringSubmatch(page, -1) {
		if seen[m[1]] {
			t.Errorf("id %q is used twice", m[1])
		}
		seen[m[1]] = true
	}
}

func TestHTMLSelfContained(t *testing.T) {
	root, _ := fixture(t)
	_, r := build(t, root, true, Options{})
	var b bytes.Buffer
	if err := r.WriteHTML(&b); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	checkSelfContained(t, page)
	if !paperLink.MatchString(page) {
		t.Error("no link to the R2MED paper")
	}
	for _, want := range []string{
		`<table class="sortable board" id="leaderboard"`, `<svg xmlns="http://www.w3.org/2000/svg" class="chart" id="bars"`,
		`id="scatter"`, `id="recall-0"`, `aria-labelledby="bars-title bars-desc"`, `<style>`, `prefers-color-scheme: dark`,
		`data-ready`, Palette[0], `<span class="sw c0"></span>`, `id="curves-legend"`, `id="pair-tests"`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	checkUniqueIDs(t, page)
	// The checker itself catches what it should.
	for _, bad := range []string{`<script src="x.js">`, `<img src="https://x/y.png">`, `<link rel="stylesheet" href="//cdn/x.css">`, `a{background:url(x.png)}`} {
		ft := &testing.T{}
		checkSelfContained(ft, bad)
		if !ft.Failed() {
			t.Errorf("checker accepted %q", bad)
		}
	}
}

// TestHTMLEscapes: names come from result files and are untrusted.
func TestHTMLEscapes(t *testing.T) {
	task, _ := demo.Load()
	root := t.TempDir()
	if err := reporttest.Write(reporttest.Run{Dir: filepath.Join(root, "x"), Task: "demo", System: `<script>alert(1)</script>`, Ranked: reporttest.Perfect(task)}); err != nil {
		t.Fatal(err)
	}
	_, r := build(t, root, false, Options{})
	var b bytes.Buffer
	if err := r.WriteHTML(&b); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "<script>alert") || !strings.Contains(b.String(), "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Error("system name not escaped in the page or its charts")
	}
	// One system is one system: the page's first line read "1 systems".
	if !strings.Contains(b.String(), " · 1 system (1 ours, 0 published) · ") {
		t.Errorf("the page's first line does not count one system in the singular")
	}
}

// TestChartFiles writes the charts for papers twice in each format and
// requires the same bytes; the PNGs must decode to their sizes, not be
// blank, and show the series colours.
func TestChartFiles(t *testing.T) {
	root, _ := fixture(t)
	_, r := build(t, root, false, Options{Systems: []string{"perfect", "buried"}})
	pngDir := ""
	for _, f := range []ChartFormat{SVG, PNG, PDF} {
		a, b := t.TempDir(), t.TempDir()
		fa, err := r.WriteCharts(a, f)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.WriteCharts(b, f); err != nil {
			t.Fatal(err)
		}
		if len(fa) != 3 {
			t.Fatalf("%s: wrote %v, want bars, recall and scatter", f, fa)
		}
		for _, p := range fa {
			x, _ := os.ReadFile(p)
			y, _ := os.ReadFile(filepath.Join(b, filepath.Base(p)))
			if len(x) == 0 || !bytes.Equal(x, y) {
				t.Errorf("%s differs between two writes of the same report", filepath.Base(p))
			}
			switch f {
			case SVG: // a font stack, no embedded font (hundreds of kB each)
				if bytes.Contains(x, []byte("@font-face")) || bytes.Contains(x, []byte("base64")) || !bytes.Contains(x, []byte("Arial")) || len(x) > 200_000 {
					t.Errorf("%s: %d bytes, embeds a font or names no font stack", filepath.Base(p), len(x))
				}
			case PDF:
				if !bytes.HasPrefix(x, []byte("%PDF-")) || !bytes.Contains(x, []byte("(D:20000101000000")) {
					t.Errorf("%s: not a PDF with a fixed date", filepath.Base(p))
				}
			}
		}
		if f == PNG {
			pngDir = a
		}
	}
	for name, want := range map[string]image.Point{
		// The plots, then above them their one legend (22 pt a row) and
		// the title.
		"bars":    {8 * PNGDPI, 686},
		"recall":  {int(2 * 3.4 * PNGDPI), 481},
		"scatter": {int(5.5 * PNGDPI), 907},
	} {
		f, err := os.Open(filepath.Join(pngDir, name+".png"))
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s.png: %v", name, err)
		}
		if got := img.Bounds().Size(); got != want {
			t.Errorf("%s.png is %v, want %v", name, got, want)
		}
		// Not blank, and the series colours are drawn.
		colors := Palette[:2]
		if name == "scatter" {
			colors = TaskPalette[:2]
		}
		nonWhite, series := countPixels(img, colors)
		if nonWhite < img.Bounds().Dx()*img.Bounds().Dy()/100 {
			t.Errorf("%s.png: only %d non-background pixels", name, nonWhite)
		}
		for i, n := range series {
			if n < 50 {
				t.Errorf("%s.png: %d pixels of series colour %s", name, n, colors[i])
			}
		}
	}
}

// countPixels counts pixels that are not white, and pixels within a small
// distance of each colour.
func countPixels(img image.Image, colors []string) (nonWhite int, per []int) {
	per = make([]int, len(colors))
	rgb := make([][3]int, len(colors))
	for i, c := range colors {
		cc := hexColor(c)
		r, g, b, _ := cc.RGBA()
		rgb[i] = [3]int{int(r >> 8), int(g >> 8), int(b >> 8)}
	}
	bnd := img.Bounds()
	for y := bnd.Min.Y; y < bnd.Max.Y; y++ {
		for x := bnd.Min.X; x < bnd.Max.X; x++ {
			r, g, b, _ := img.At(x, y).RGBA()
			p := [3]int{int(r >> 8), int(g >> 8), int(b >> 8)}
			if p != [3]int{255, 255, 255} {
				nonWhite++
			}
			for i, c := range rgb {
				if abs(p[0]-c[0])+abs(p[1]-c[1])+abs(p[2]-c[2]) <= 12 {
					per[i]++
				}
			}
		}
	}
	return nonWhite, per
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

func TestSupersededOtherRun(t *testing.T) {
	task, _ := demo.Load()
	root := t.TempDir()
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, dir := range []string{"old", "new"} {
		run := reporttest.Perfect(task)
		if dir == "old" {
			run = reporttest.Buried(task, func(string) bool { return true })
		}
		if err := reporttest.Write(reporttest.Run{Dir: filepath.Join(root, dir), Task: "demo", System: "bm25", Ranked: run, Started: t0.Add(time.Duration(i) * time.Hour)}); err != nil {
			t.Fatal(err)
		}
	}
	d, r := build(t, root, false, Options{})
	if len(d.Board.Systems) != 1 || len(d.Board.Superseded) != 1 || !strings.HasSuffix(d.Board.Superseded[0].Dir, "old") {
		t.Fatalf("%d systems, superseded %v", len(d.Board.Systems), d.Board.Superseded)
	}
	if v := Value(&d.Board.Systems[0], "demo", "ndcg_at_10"); v != 1 {
		t.Errorf("the newer run's nDCG@10 is 1, got %v", v)
	}
	if len(r.Notes) != 1 || !strings.Contains(r.Notes[0], "older run") {
		t.Errorf("notes %q", r.Notes)
	}
}

// TestParetoFront: the front is the points nothing cheaper-or-equal
// matches or beats; equal points share it.
func TestParetoFront(t *testing.T) {
	ps := []CostPoint{{Name: "a", X: 0, Y: 10}, {Name: "b", X: 1, Y: 20}, {Name: "c", X: 2, Y: 15}, {Name: "d", X: 1, Y: 20}, {Name: "e", X: 3, Y: 30}, {Name: "f", X: 3, Y: 25}, {Name: "g", X: 0, Y: 5}}
	ParetoFront(ps)
	var front []string
	for _, p := range ps {
		if p.Front {
			front = append(front, p.Name)
		}
	}
	if got := strings.Join(front, ","); got != "a,b,d,e" {
		t.Errorf("front %s, want a,b,d,e", got)
	}
}

// costFixture writes four systems of ours on Biology and demo with their
// usage: perfect at 1¢ a query, buried at 0.2¢, buried-again (the same
// ranking) at 2¢, and free, a run that called no model.
func costFixture(t *testing.T) string {
	t.Helper()
	task, err := demo.Load()
	if err != nil {
		t.Fatal(err)
	}
	bury := func(q string) bool { return q[len(q)-1]%2 == 0 }
	shift := func(string) int { return 2 }
	root := t.TempDir()
	for _, name := range []string{"Biology", "demo"} {
		for _, r := range []reporttest.Run{
			{Dir: filepath.Join(root, "perfect", name), Task: name, System: "perfect", Ranked: reporttest.Perfect(task), Usage: usageOf(15, 2000, 0.01)},
			{Dir: filepath.Join(root, "buried", name), Task: name, System: "buried", Ranked: reporttest.Buried(task, bury), Usage: usageOf(15, 300, 0.002)},
			{Dir: filepath.Join(root, "buried-again", name), Task: name, System: "buried-again", Ranked: reporttest.Buried(task, bury), Usage: usageOf(15, 4000, 0.02)},
			{Dir: filepath.Join(root, "free", name), Task: name, System: "free", Ranked: reporttest.Shifted(task, shift), Usage: usageOf(15, 0, 0)},
		} {
			if err := reporttest.Write(r); err != nil {
				t.Fatal(err)
			}
		}
	}
	return root
}

// usageOf is a manifest's usage of queries queries at tokens and dollars
// per query (tokens 0: a run that called nothing).
func usageOf(queries int, tokens, usd float64) *usage.Summary {
	n := int64(0)
	if tokens > 0 {
		n = int64(queries)
	}
	return &usage.Summary{Calls: n, Queries: queries, PerQuery: &usage.PerQuery{PromptTokens: tokens, Seconds: tokens / 1000, USD: &usd}}
}

// TestCostChart: the report plots each charted system's quality against
// its cost per query on the tasks they share, in dollars, with the
// Pareto front; the leaderboard shows the cost columns; the chart is in
// the chart files too.
func TestCostChart(t *testing.T) {
	root := costFixture(t)
	_, r := build(t, root, false, Options{})
	if r.Cost == nil {
		t.Fatalf("no cost chart: %s", r.CostNote)
	}
	pts := map[string]CostPoint{}
	for _, p := range r.Cost.Points {
		pts[p.Name] = p
	}
	for name, usd := range map[string]float64{"perfect": 0.01, "buried": 0.002, "buried-again": 0.02, "free": 0} {
		p, ok := pts[name]
		if !ok || p.X != usd {
			t.Errorf("%s at %+v, want cost %v", name, p, usd)
		}
		var y float64
		for _, task := range []string{"Biology", "demo"} {
			res, err := results.ReadR2MED(filepath.Join(root, name, task, results.ResultsFile))
			if err != nil {
				t.Fatal(err)
			}
			y += res.Test["ndcg_at_10"] * 50
		}
		if math.Abs(p.Y-y) > 1e-9 {
			t.Errorf("%s quality %v, want the mean of its two tasks ×100, %v", name, p.Y, y)
		}
	}
	if !pts["perfect"].Front || !pts["free"].Front || pts["buried-again"].Front {
		t.Errorf("front: %+v", r.Cost.Points)
	}
	if r.Cost.XLabel != "dollars per query" || !strings.Contains(r.Cost.Desc, "on Biology, demo") {
		t.Errorf("x label %q, caption %q", r.Cost.XLabel, r.Cost.Desc)
	}
	svg := r.Cost.SVG()
	for _, want := range []string{`class="front"`, `data-series="front"`, ">Pareto front<"} {
		if !strings.Contains(svg, want) {
			t.Errorf("the chart lacks %s", want)
		}
	}
	var page bytes.Buffer
	if err := r.WriteHTML(&page); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`id="cost-figure"`, `data-key="cost"`, `data-v="0.01" title="$0.01 a query; 2000 prompt &#43; 0 completion tokens, 2 s of model calls">0.01<span class="note">2 s</span>`} {
		if !strings.Contains(page.String(), want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	for _, f := range []ChartFormat{PNG, SVG, PDF} {
		files, err := r.WriteCharts(t.TempDir(), f)
		if err != nil || len(files) != 4 || filepath.Base(files[3]) != "cost."+string(f) {
			t.Fatalf("%s: %v %v", f, files, err)
		}
		if f != PNG {
			continue
		}
		fh, _ := os.Open(files[3])
		img, err := png.Decode(fh)
		fh.Close()
		if err != nil {
			t.Fatal(err)
		}
		// (Series 2's marker is gonum's hollow triangle: a few pixels.)
		if _, series := countPixels(img, Palette[:4]); slices.Min(series) < 3 || series[0] < 50 {
			t.Errorf("cost.png: series colours drawn %v pixels", series)
		}
	}

	// Without usage (older runs), no chart, and a note says why.
	plain, _ := fixture(t)
	if _, r := build(t, plain, false, Options{}); r.Cost != nil || !strings.Contains(r.CostNote, "Fewer than two") {
		t.Errorf("chart %v, note %q", r.Cost, r.CostNote)
	}
}

// Every chart file's legend lies outside its plotting area (above it, with
// the title), so no key covers a bar or a point, and the bars of the last
// group stay inside the plot, centred on their tick, not cut at its edge.
func TestChartLegendsOutsidePlots(t *testing.T) {
	root, _ := fixture(t)
	_, r := build(t, root, false, Options{Systems: []string{"perfect", "buried"}})
	dir := t.TempDir()
	if _, err := r.WriteCharts(dir, SVG); err != nil {
		t.Fatal(err)
	}
	// gonum's SVG: y grows upwards (scale(1,-1)); each plot's area starts
	// with its white background, M0,0L{w},0L{w},{h}L0,{h}Z.
	bg := regexp.MustCompile(`<path d="M0,0L([0-9.]+),0L[0-9.]+,([0-9.]+)L0,[0-9.]+Z" style="fill:#FFFFFF"`)
	text := regexp.MustCompile(`<text x="([0-9.]+)" y="-([0-9.]+)"[^>]*>([^<]*)</text>`)
	rect := regexp.MustCompile(`<path d="M([0-9.]+),([0-9.]+)L([0-9.]+),[0-9.]+L[0-9.]+,([0-9.]+)L[0-9.]+,[0-9.]+Z" style="fill:(#[0-9A-F]+)"`)
	num := func(s string) float64 { f, _ := strconv.ParseFloat(s, 64); return f }
	for _, c := range []struct {
		file  string
		names []string
	}{
		{"bars.svg", []string{"perfect", "buried"}},
		{"scatter.svg", []string{r.Scatter.Groups[0].Name}},
	} {
		b, err := os.ReadFile(filepath.Join(dir, c.file))
		if err != nil {
			t.Fatal(err)
		}
		m := bg.FindSubmatch(b)
		if m == nil {
			t.Fatalf("%s: no plot background", c.file)
		}
		w, top := num(string(m[1])), num(string(m[2]))
		for _, name := range c.names {
			found := false
			for _, tm := range text.FindAllSubmatch(b, -1) {
				if string(tm[3]) == name {
					found = true
					if y := num(string(tm[2])); y <= top {
						t.Errorf("%s: legend key %q at y=%v, inside the plotting area (top %v)", c.file, name, y, top)
					}
				}
			}
			if !found {
				t.Errorf("%s: no legend key %q", c.file, name)
			}
		}
		if c.file != "bars.svg" {
			continue
		}
		bars := 0
		for _, rm := range rect.FindAllSubmatch(b, -1) {
			x0, x1, y1 := num(string(rm[1])), num(string(rm[3])), num(string(rm[4]))
			if y1 > top || !slices.Contains(Palette[:2], string(rm[5])) {
				continue // a legend swatch
			}
			bars++
			if x1 >= w-1 || x0 <= 1 {
				t.Errorf("%s: a bar from x=%v to %v runs to the edge of the %v-wide chart", c.file, x0, x1, w)
			}
		}
		if bars == 0 {
			t.Errorf("%s: no bars found", c.file)
		}
	}
}

// TestRunFileVerified: a run file that is not the one its manifest
// vouches for (cut short by a copy, edited) is an error naming it, not
// ranked lists the page shows and scores per query as the run's.
func TestRunFileVerified(t *testing.T) {
	root, _ := fixture(t)
	dir := filepath.Join(root, "buried", "demo")
	runPath := filepath.Join(dir, results.RunFile)
	m, err := results.ReadManifest(filepath.Join(dir, results.ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	rec, err := reuse.Seal(dir, "", results.RunFile)
	if err != nil {
		t.Fatal(err)
	}
	m.OutputSHA256 = rec.SHA256
	if err := m.WriteFile(filepath.Join(dir, results.ManifestFile)); err != nil {
		t.Fatal(err)
	}
	load := func() *Data {
		d, err := Load(root, leaderboard.Sources{}, reporttest.Loader)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	if _, err := load().RunFile("ours/buried", "demo"); err != nil {
		t.Fatalf("the file the manifest vouches for: %v", err)
	}
	data, err := os.ReadFile(runPath)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	if err := os.WriteFile(runPath, []byte(strings.Join(lines[:len(lines)/2], "")), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := load().RunFile("ours/buried", "demo"); err == nil || !strings.Contains(err.Error(), runPath+" changed since the run wrote it") {
		t.Errorf("a cut run file: %v, want it named as changed", err)
	}
}

// TestBrightMRRDepth: the report's MRR leaderboard marks the MRR of a
// BRIGHT run kept 10 deep "@10" (BRIGHT's MRR reads each query's top
// 1000), says what that is under the table, on hover and under the
// charts, where it showed it as plain MRR beside BRIGHT's; the run as
// deep as BRIGHT's is unmarked, and an nDCG@10 report marks nothing.
func TestBrightMRRDepth(t *testing.T) {
	root := t.TempDir()
	if err := reporttest.WriteBrightDepths(root); err != nil {
		t.Fatal(err)
	}
	const note = "@10: MRR over each query's top 10, where BRIGHT's run.py reads its top 1000 (r2med run --top-k 1000)"
	page := func(m leaderboard.Metric) string {
		_, r := build(t, root, false, Options{Metric: m})
		var b bytes.Buffer
		if err := r.WriteHTML(&b); err != nil {
			t.Fatal(err)
		}
		return html.UnescapeString(b.String())
	}
	mrr := page(leaderboard.Metric{Key: "mrr", Label: "MRR"})
	cell := regexp.MustCompile(`<td class="num[^"]*"[^>]* title="([^"]*)">0\.00<span class="note">@10</span></td>`)
	if m := cell.FindAllStringSubmatch(mrr, -1); len(m) != 1 || m[0][1] != note {
		t.Errorf("want the 10-deep run's MRR cell marked @10 with the note on hover, got %q", m)
	}
	if n := strings.Count(mrr, `<span class="note">@10</span>`); n != 1 {
		t.Errorf("%d cells marked @10, want 1: the 10-deep run's", n)
	}
	if !strings.Contains(mrr, "<li>"+note+"</li>") {
		t.Errorf("no legend line %q", note)
	}
	if !regexp.MustCompile(`<li>charts: bm25 \(bright\) #[0-9a-f]{4}'s MRR on BRIGHT-biology is its MRR@10, MRR over each query's top 10`).MatchString(mrr) {
		t.Errorf("no note on the charts' MRR@10: %s", regexp.MustCompile(`<li>[^<]*</li>`).FindAllString(mrr, -1))
	}
	if ndcg := page(leaderboard.DefaultMetric); strings.Contains(ndcg, "@10</span>") || strings.Contains(ndcg, note) {
		t.Errorf("an nDCG@10 report marks the MRR's depth")
	}
}
