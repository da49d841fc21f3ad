// Package reporttest writes run directories for tests of the report and
// the viewer: rankings built on the demo task whose per-query values are
// known by construction, with result files computed by package measure and
// manifests as pipeline.Run writes them; and the headless Chromium the
// page tests open the report and the viewer in.
package reporttest

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/r2med/r2med/demo"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/measure"
	"github.com/r2med/r2med/results"
	"github.com/r2med/r2med/trec"
	"github.com/r2med/r2med/usage"
)

// Loader is a report.TaskLoader for runs this package wrote: every one
// is on the demo task's data, whatever task name its manifest gives.
func Loader(context.Context, results.Run) (*ir.Task, error) { return demo.Load() }

// Perfect ranks each query's relevant documents first (best grade first),
// then the other documents: nDCG@10 is 1 for every query with at most ten
// relevant documents.
func Perfect(t *ir.Task) ir.Run { return Shifted(t, func(string) int { return 0 }) }

// Buried ranks the relevant documents after every other document for the
// queries where bury reports true (nDCG@10 is then 0 when the corpus has
// ten or more non-relevant documents), and first for the rest.
func Buried(t *ir.Task, bury func(qid string) bool) ir.Run {
	return Shifted(t, func(q string) int {
		if bury(q) {
			return len(t.Corpus)
		}
		return 0
	})
}

// Shifted ranks shift(qid) non-relevant documents first, then the
// relevant ones (best grade first), then the rest: per-query values that
// vary with the shift.
func Shifted(t *ir.Task, shift func(qid string) int) ir.Run {
	run := ir.Run{}
	for _, q := range t.Queries {
		grade := t.Qrels[q.ID]
		var rel, other []ir.Doc
		for _, d := range t.Corpus {
			if grade[d.ID] > 0 {
				rel = append(rel, d)
			} else {
				other = append(other, d)
			}
		}
		slices.SortStableFunc(rel, func(a, b ir.Doc) int { return grade[b.ID] - grade[a.ID] })
		n := min(shift(q.ID), len(other))
		docs := append(append(append([]ir.Doc{}, other[:n]...), rel...), other[n:]...)
		hits := make([]ir.Hit, 0, 100)
		for i, d := range docs[:min(100, len(docs))] {
			hits = append(hits, ir.Hit{DocID: d.ID, Score: float64(1000 - i)})
		}
		run[q.ID] = hits
	}
	return run
}

// Run describes one run directory to write.
type Run struct {
	Dir    string         // where to write
	Task   string         // the manifest's task name: "demo", "Biology"…
	System string         // the result file's model_name
	Config map[string]any // the manifest's settings; nil: {"retriever": System}
	Ranked ir.Run
	// Started is the manifest's start time; zero: a fixed date.
	Started time.Time
	// NoRunFile leaves run.trec out, as for a run that keeps only its
	// aggregates.
	NoRunFile bool
	// Usage is the manifest's usage (what the model calls cost); nil
	// writes none, as a run from before usage was recorded.
	Usage *usage.Summary
}

// Write evaluates the run against the demo task's judgments and writes
// run.trec, results.json and manifest.json.
func Write(r Run) error {
	t, err := demo.Load()
	if err != nil {
		return err
	}
	ev, err := measure.EvaluateR2MED(t.Qrels, r.Ranked)
	if err != nil {
		return fmt.Errorf("evaluating %s: %w", r.Dir, err)
	}
	if err := os.MkdirAll(r.Dir, 0o755); err != nil {
		return err
	}
	if !r.NoRunFile {
		if err := trec.WriteRunFile(filepath.Join(r.Dir, results.RunFile), r.Ranked, r.System); err != nil {
			return err
		}
	}
	res := &results.R2MED{DatasetName: r.Task, EvaluationTime: results.EvaluationTime(0), ModelName: r.System, Test: ev.Scores}
	if err := res.WriteFile(filepath.Join(r.Dir, results.ResultsFile)); err != nil {
		return err
	}
	m := results.NewManifest([]string{"reporttest"})
	m.Started = r.Started
	if m.Started.IsZero() {
		m.Started = time.Date(2025, 5, 1, 12, 0, 0, 0, time.UTC)
	}
	m.Task = results.TaskInfo{Name: r.Task, Layout: string(t.Layout), Source: "embedded:" + demo.Name}
	m.Config, m.Usage = r.Config, r.Usage
	if m.Config == nil {
		m.Config = map[string]any{"retriever": r.System}
	}
	m.Counts = map[string]int{"documents": len(t.Corpus)}
	return m.WriteFile(filepath.Join(r.Dir, results.ManifestFile))
}

// WriteBrightDepths writes two runs of one retriever on BRIGHT-biology
// (the demo task's data) under root: "shallow", kept 10 deep, whose MRR
// is MRR@10 (results.MRRLabel: BRIGHT's reads the top 1000), each
// query's relevant documents after its 10th hit so that its MRR is 0;
// and "deep", kept 1000 deep (the whole corpus), relevant documents
// first, whose MRR is BRIGHT's.
func WriteBrightDepths(root string) error {
	t, err := demo.Load()
	if err != nil {
		return err
	}
	shallow := Shifted(t, func(string) int { return 10 })
	for q, hits := range shallow {
		shallow[q] = hits[:min(10, len(hits))]
	}
	for _, r := range []Run{
		{Dir: filepath.Join(root, "shallow"), Task: "BRIGHT-biology", System: "bm25", Config: map[string]any{"retriever": "bm25", "top_k": 10}, Ranked: shallow},
		{Dir: filepath.Join(root, "deep"), Task: "BRIGHT-biology", System: "bm25", Config: map[string]any{"retriever": "bm25", "top_k": 1000}, Ranked: Perfect(t)},
	} {
		if err := Write(r); err != nil {
			return err
		}
	}
	return nil
}

// Chromium returns the headless browser the page tests use: $R2MED_CHROMIUM,
// else Debian's chromium on PATH. Without one the test is skipped, except
// under R2MED_CI=1 (set by .ci/run, which installs it), where it fails.
func Chromium(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("R2MED_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("R2MED_CI") == "1" {
		t.Fatal("chromium not found but R2MED_CI=1: install Debian's chromium (apt-get install chromium) or set R2MED_CHROMIUM")
	}
	t.Skip("chromium not found (apt-get install chromium); skipping the headless-browser test")
	return ""
}

func chromium(t testing.TB, args ...string) []byte {
	t.Helper()
	bin := Chromium(t)
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
		"--disable-extensions", "--disable-dev-shm-usage", "--user-data-dir=" + t.TempDir()}
	cmd := exec.CommandContext(ctx, bin, append(base, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", bin, args, err, stderr.String())
	}
	return out
}

// Screenshot loads url in headless Chromium in a window w×h and returns
// the screenshot.
func Screenshot(t testing.TB, url string, w, h int) image.Image {
	t.Helper()
	return ScreenshotArgs(t, url, w, h)
}

// ScreenshotArgs is Screenshot with more Chromium flags
// ("--force-dark-mode").
func ScreenshotArgs(t testing.TB, url string, w, h int, flags ...string) image.Image {
	t.Helper()
	file := filepath.Join(t.TempDir(), "shot.png")
	chromium(t, append(flags, "--screenshot="+file, fmt.Sprintf("--window-size=%d,%d", w, h), url)...)
	f, err := os.Open(file)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	return img
}

// DOM loads url in headless Chromium and returns the document as it is
// after its scripts ran.
func DOM(t testing.TB, url string) string {
	t.Helper()
	return string(chromium(t, "--dump-dom", url))
}

// CountColor counts the pixels of img within a small distance of the
// colour hex ("#4477AA").
func CountColor(img image.Image, hex string) int {
	v, _ := strconv.ParseUint(strings.TrimPrefix(hex, "#"), 16, 32)
	want := [3]int{int(v >> 16 & 0xff), int(v >> 8 & 0xff), int(v & 0xff)}
	n := 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			d := abs(int(r>>8)-want[0]) + abs(int(g>>8)-want[1]) + abs(int(bl>>8)-want[2])
			if d <= 12 {
				n++
			}
		}
	}
	return n
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// Page is a page open in headless Chromium (through the DevTools
// protocol), for tests that measure layout and run scripts in it.
type Page struct {
	t   testing.TB
	ctx context.Context
}

// Open loads url in a fresh headless Chromium with a w×h viewport, dark
// mode when dark (prefers-color-scheme: dark), and waits for the page's
// script to mark the body ready. The browser is closed when the test
// ends.
func Open(t testing.TB, url string, w, h int, dark bool) *Page {
	t.Helper()
	bin := Chromium(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(bin), chromedp.NoSandbox,
		chromedp.Flag("hide-scrollbars", true), chromedp.Flag("disable-gpu", true), chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(w, h))
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	bctx, cancelC := chromedp.NewContext(actx)
	ctx, cancelT := context.WithTimeout(bctx, 60*time.Second)
	t.Cleanup(func() {
		chromedp.Cancel(bctx) // closes the browser and waits for it, before its profile directory is removed
		cancelT()
		cancelC()
		cancelA()
	})
	scheme := "light"
	if dark {
		scheme = "dark"
	}
	err := chromedp.Run(ctx,
		chromedp.EmulateViewport(int64(w), int64(h)),
		chromedp.ActionFunc(func(ctx context.Context) error {
			return emulation.SetEmulatedMedia().WithFeatures([]*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}}).Do(ctx)
		}),
		chromedp.Navigate(url),
		chromedp.WaitReady(`body[data-ready="1"]`, chromedp.ByQuery),
	)
	if err != nil {
		t.Fatalf("chromium: opening %s: %v", url, err)
	}
	return &Page{t: t, ctx: ctx}
}

// Eval runs the JavaScript expression js in the page and stores its
// (JSON) value in out.
func (p *Page) Eval(js string, out any) {
	p.t.Helper()
	if err := chromedp.Run(p.ctx, chromedp.Evaluate(js, out)); err != nil {
		p.t.Fatalf("chromium: evaluating %.80q: %v", js, err)
	}
}

// Click clicks the first element matching the CSS selector and waits for
// the element matching wait to appear.
func (p *Page) Click(selector, wait string) {
	p.t.Helper()
	if err := chromedp.Run(p.ctx, chromedp.Click(selector, chromedp.ByQuery), chromedp.WaitVisible(wait, chromedp.ByQuery)); err != nil {
		p.t.Fatalf("chromium: clicking %s: %v", selector, err)
	}
}

// Screenshot is the viewport as it is now, as a PNG.
func (p *Page) Screenshot() []byte {
	p.t.Helper()
	var buf []byte
	if err := chromedp.Run(p.ctx, chromedp.CaptureScreenshot(&buf)); err != nil {
		p.t.Fatalf("chromium: screenshot: %v", err)
	}
	return buf
}

// LayoutJS is a script for Eval that reports what a reader at this
// window size would find wrong: elements sticking out of a container
// that does not clip or scroll them, horizontal scrolling of the page,
// tick labels under 11 CSS pixels as drawn, and charts with a plotted
// series that no legend names.
const LayoutJS = `(() => {
  const out = {overflow: [], pageScroll: document.documentElement.scrollWidth - window.innerWidth, smallTicks: [], unlegended: []};
  const clips = el => { const s = getComputedStyle(el); return s.overflowX !== "visible" || s.display === "contents"; };
  for (const el of document.querySelectorAll("main *:not(svg *):not(option)")) {
    const p = el.parentElement;
    if (!p || clips(p) || getComputedStyle(el).position === "fixed") continue;
    const r = el.getBoundingClientRect(), q = p.getBoundingClientRect();
    if (r.width === 0 || r.height === 0) continue;
    if (r.right > q.right + 1 || r.left < q.left - 1) out.overflow.push((el.id || el.tagName + "." + el.className) + " in " + (p.id || p.tagName + "." + p.className) + " by " + Math.round(Math.max(r.right - q.right, q.left - r.left)) + "px");
  }
  for (const svg of document.querySelectorAll("svg.chart")) {
    const vb = svg.viewBox.baseVal, scale = vb && vb.width ? svg.getBoundingClientRect().width / vb.width : 1;
    for (const t of svg.querySelectorAll("text.tick")) {
      const px = parseFloat(getComputedStyle(t).fontSize) * scale;
      if (px < 11) { out.smallTicks.push(svg.id + ": " + px.toFixed(1) + "px"); break; }
    }
    if (svg.classList.contains("legend-only")) continue;
    const legendId = svg.getAttribute("data-legend");
    const legend = legendId ? document.getElementById(legendId) : svg;
    const keys = new Set(Array.from(legend ? legend.querySelectorAll(".key") : []).map(k => k.getAttribute("data-series")));
    for (const g of svg.querySelectorAll(".series")) {
      if (g.childElementCount && !keys.has(g.getAttribute("data-series"))) out.unlegended.push(svg.id + " series " + g.getAttribute("data-series"));
    }
  }
  return out;
})()`

// Layout is what LayoutJS reports.
type Layout struct {
	Overflow   []string `json:"overflow"`
	PageScroll float64  `json:"pageScroll"`
	SmallTicks []string `json:"smallTicks"`
	Unlegended []string `json:"unlegended"`
}

// CheckLayout fails the test for every problem LayoutJS finds.
func (p *Page) CheckLayout(name string) {
	p.t.Helper()
	var l Layout
	p.Eval(LayoutJS, &l)
	if len(l.Overflow) > 0 {
		p.t.Errorf("%s: %d elements overflow their container, e.g. %v", name, len(l.Overflow), l.Overflow[:min(len(l.Overflow), 5)])
	}
	if l.PageScroll > 0 {
		p.t.Errorf("%s: the page scrolls sideways by %.0fpx", name, l.PageScroll)
	}
	if len(l.SmallTicks) > 0 {
		p.t.Errorf("%s: tick labels under 11px: %v", name, l.SmallTicks)
	}
	if len(l.Unlegended) > 0 {
		p.t.Errorf("%s: plotted series without a legend entry: %v", name, l.Unlegended)
	}
}

// InView reports whether the element matching selector is inside the
// viewport (wholly, horizontally; its top edge, vertically) without
// scrolling.
func (p *Page) InView(selector string) bool {
	p.t.Helper()
	var ok bool
	p.Eval(`(() => { const el = document.querySelector(`+strconv.Quote(selector)+`); if (!el) return false;
	  const r = el.getBoundingClientRect(); return r.width > 0 && r.left >= 0 && r.right <= window.innerWidth && r.top >= 0 && r.top < window.innerHeight; })()`, &ok)
	return ok
}

// FullScreenshot is the whole page, scrolled through, as a PNG.
func (p *Page) FullScreenshot() []byte {
	p.t.Helper()
	var buf []byte
	if err := chromedp.Run(p.ctx, chromedp.FullScreenshot(&buf, 100)); err != nil {
		p.t.Fatalf("chromium: screenshot: %v", err)
	}
	return buf
}

// Navigate loads url in the page's browser (same window size and colour
// scheme) and waits for the page's script to mark the body ready.
func (p *Page) Navigate(url string) {
	p.t.Helper()
	if err := chromedp.Run(p.ctx, chromedp.Navigate(url), chromedp.WaitReady(`body[data-ready="1"]`, chromedp.ByQuery)); err != nil {
		p.t.Fatalf("chromium: opening %s: %v", url, err)
	}
}
