package report

import (
	"context"
	"fmt"
	"image/color"
	"math"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/r2med/r2med/demo"
	"github.com/r2med/r2med/leaderboard"
	"github.com/r2med/r2med/measure"
	"github.com/r2med/r2med/report/reporttest"
	"github.com/r2med/r2med/significance"
)

// writeReport writes a report of two systems of ours on Biology and demo
// (no published ones, so the charts are above the fold): "perfect" and
// "shifted", which puts a varying number of non-relevant documents
// before the relevant ones, so the scatter's points spread out. It
// returns the report's path.
func writeReport(t *testing.T) string {
	t.Helper()
	task, err := demo.Load()
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	for n, name := range []string{"Biology", "demo"} {
		shift := map[string]int{}
		for i, q := range task.Queries {
			shift[q.ID] = (i + 5*n) % 12
		}
		for _, r := range []reporttest.Run{
			{Dir: filepath.Join(root, "perfect", name), Task: name, System: "perfect", Ranked: reporttest.Perfect(task)},
			{Dir: filepath.Join(root, "shifted", name), Task: name, System: "shifted", Ranked: reporttest.Shifted(task, func(q string) int { return shift[q] })},
		} {
			if err := reporttest.Write(r); err != nil {
				t.Fatal(err)
			}
		}
	}
	d, err := Load(root, leaderboard.Sources{}, reporttest.Loader)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Build(context.Background(), d, Options{Systems: []string{"shifted", "perfect"}})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "report.html")
	if err := r.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestBrowserScreenshot opens the report in headless Chromium and checks
// that the charts were drawn: the bar chart's two series colours cover
// large areas (perfect scores 100 on both tasks, a bar of 260 px), and
// the scatter's points are there.
func TestBrowserScreenshot(t *testing.T) {
	reporttest.Chromium(t)
	t.Parallel()
	path := writeReport(t)
	img := reporttest.Screenshot(t, "file://"+path, 1280, 2000)
	if got := img.Bounds().Size(); got.X != 1280 || got.Y != 2000 {
		t.Fatalf("screenshot is %v", got)
	}
	for i, min := range []int{2000, 4000} { // shifted's bars are lower
		n := reporttest.CountColor(img, Palette[i])
		t.Logf("%s: %d pixels", Palette[i], n)
		if n < min {
			t.Errorf("%d pixels of series colour %s in the screenshot, want ≥ %d: bar chart not rendered", n, Palette[i], min)
		}
	}
	n := reporttest.CountColor(img, TaskPalette[1])
	t.Logf("%s: %d pixels", TaskPalette[1], n)
	if n < 300 {
		t.Errorf("%d pixels of the scatter's demo colour %s, want ≥ 300", n, TaskPalette[1])
	}
	// Light mode by default: a white page.
	if r, g, b, _ := img.At(5, 5).RGBA(); r>>8 != 255 || g>>8 != 255 || b>>8 != 255 {
		t.Errorf("background (%d,%d,%d), want white", r>>8, g>>8, b>>8)
	}
}

// TestBrowserDarkMode: with the system in dark mode the page is dark.
func TestBrowserDarkMode(t *testing.T) {
	reporttest.Chromium(t)
	t.Parallel()
	path := writeReport(t)
	dark := reporttest.ScreenshotArgs(t, "file://"+path, 800, 600, "--force-dark-mode", "--blink-settings=preferredColorScheme=0")
	if r, g, b, _ := dark.At(5, 5).RGBA(); r>>8 > 40 || g>>8 > 40 || b>>8 > 40 {
		t.Errorf("dark-mode background (%d,%d,%d), want dark", r>>8, g>>8, b>>8)
	}
}

// TestBrowserScript checks that the report's script ran in the browser:
// it marks the body ready, finds the table rows and chart marks, and
// sorts the table by the column the URL names (#sort=demo:asc puts
// shifted, the worse system on demo, first; the page as written has
// perfect first).
func TestBrowserScript(t *testing.T) {
	reporttest.Chromium(t)
	t.Parallel()
	path := writeReport(t)
	dom := reporttest.DOM(t, "file://"+path+"#sort=demo:asc")
	for _, want := range []string{`data-ready="1"`, `data-rows="2"`, `aria-sort="ascending"`} {
		if !strings.Contains(dom, want) {
			t.Errorf("DOM lacks %s", want)
		}
	}
	if m := regexp.MustCompile(`data-tips="(\d+)"`).FindStringSubmatch(dom); m == nil || m[1] == "0" {
		t.Errorf("no tooltip targets found by the script: %v", m)
	}
	body := dom[strings.Index(dom, "<tbody>"):]
	first := body[:strings.Index(body, "</tr>")]
	if !strings.Contains(first, "shifted") {
		t.Errorf("after #sort=demo:asc the first row is %q, want shifted", first)
	}
	// Sorted by the DOM, not by the page as written.
	unsorted := reporttest.DOM(t, "file://"+path)
	body = unsorted[strings.Index(unsorted, "<tbody>"):]
	if first := body[:strings.Index(body, "</tr>")]; !strings.Contains(first, "perfect") {
		t.Errorf("unsorted first row %q, want perfect", first)
	}
}

// writeWideReport writes the report of writeReport's two systems with
// R2MED's published and the external systems, as a user sees it first:
// 8 task columns, the average, the demo column, the cost columns (perfect
// called a priced model, the other none), ours among 93 systems.
func writeWideReport(t *testing.T) (path, root string) {
	t.Helper()
	task, err := demo.Load()
	if err != nil {
		t.Fatal(err)
	}
	root = t.TempDir()
	shift := map[string]int{}
	for i, q := range task.Queries {
		shift[q.ID] = i % 12
	}
	for _, r := range []reporttest.Run{
		{Dir: filepath.Join(root, "perfect", "demo"), Task: "demo", System: "perfect", Ranked: reporttest.Perfect(task), Usage: usageOf(15, 12345, 0.0123)},
		{Dir: filepath.Join(root, "a-system-with-a-very-long-name-from-a-pipeline-file-that-goes-on", "demo"), Task: "demo", System: "a-system-with-a-very-long-name-from-a-pipeline-file-that-goes-on",
			Ranked: reporttest.Shifted(task, func(q string) int { return shift[q] }), Usage: usageOf(15, 0, 0)},
	} {
		if err := reporttest.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	d, err := Load(root, leaderboard.Sources{Published: true, External: true}, reporttest.Loader)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Build(context.Background(), d, Options{Baseline: "perfect"})
	if err != nil {
		t.Fatal(err)
	}
	path = filepath.Join(t.TempDir(), "report.html")
	if err := r.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	return path, root
}

// TestBrowserReadsRight opens the report at 1400×900, light and dark: the
// Avg column and our runs are visible without scrolling, the cost columns
// beside them; nothing sticks out of its container; tick labels are at
// least 11 px; every plotted series has a legend entry (the quality and
// cost chart's Pareto front included); the scatter counts the queries
// compare counts; in dark mode the series colours are the dark palette's.
func TestBrowserReadsRight(t *testing.T) {
	reporttest.Chromium(t)
	path, root := writeWideReport(t)
	for _, dark := range []bool{false, true} {
		p := reporttest.Open(t, "file://"+path, 1400, 900, dark)
		for _, sel := range []string{`#leaderboard th.avg`, `#leaderboard tbody tr.ours td.avg`, `#leaderboard tbody tr.ours td.sys`, `#leaderboard tbody tr:nth-child(2).ours`} {
			if !p.InView(sel) {
				t.Errorf("dark=%v: %s not visible at 1400×900 without scrolling", dark, sel)
			}
		}
		p.CheckLayout("report")
		var front, costCols int
		p.Eval(`document.querySelectorAll("#cost polyline.front").length`, &front)
		p.Eval(`document.querySelectorAll("#leaderboard th.cost").length`, &costCols)
		if front != 1 || costCols != 1 {
			t.Errorf("dark=%v: %d Pareto lines in the cost chart, %d cost columns", dark, front, costCols)
		}
		var fill, bg string
		p.Eval(`getComputedStyle(document.querySelector("#bars rect.c0")).fill`, &fill)
		p.Eval(`getComputedStyle(document.body).backgroundColor`, &bg)
		want, wantBG := rgb(Palette[0]), "rgb(255, 255, 255)"
		if dark {
			want, wantBG = rgb(DarkPalette[0]), rgb(DarkBackground)
		}
		if fill != want || bg != wantBG {
			t.Errorf("dark=%v: series 0 drawn %s on %s, want %s on %s", dark, fill, bg, want, wantBG)
		}
		// The long name is cut on screen, whole on hover.
		var title string
		p.Eval(`document.querySelector("#leaderboard td.sys[title^='a-system']").title`, &title)
		if !strings.HasPrefix(title, "a-system-with-a-very-long-name-from-a-pipeline-file-that-goes-on") {
			t.Errorf("long name's hover text %q", title)
		}
	}
	// The scatter's N is compare's.
	p := reporttest.Open(t, "file://"+path, 1400, 900, false)
	var n string
	p.Eval(`document.getElementById("scatter-figure").dataset.n`, &n)
	var inputs []significance.Input
	for _, dir := range []string{"perfect", "a-system-with-a-very-long-name-from-a-pipeline-file-that-goes-on"} {
		in, err := significance.Open(filepath.Join(root, dir))
		if err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, in)
	}
	ms, _ := measure.Parse("ndcg_cut.10")
	sys, groups, err := significance.Gather(context.Background(), inputs, ms[0], significance.GatherOptions{Load: reporttest.Loader})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := significance.Compare("ndcg_cut.10", sys, groups, significance.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if n != strconv.Itoa(rep.Queries) {
		t.Errorf("the scatter's N is %s, compare's %d", n, rep.Queries)
	}
	// Unpinned, ours take their rank (after every published system).
	p = reporttest.Open(t, "file://"+path+"#unpin", 1400, 900, false)
	if p.InView(`#leaderboard tbody tr.ours`) {
		t.Error("#unpin: our runs still first")
	}
}

func rgb(hex string) string {
	c := hexColor(hex).(color.RGBA)
	return fmt.Sprintf("rgb(%d, %d, %d)", c.R, c.G, c.B)
}

// TestDarkPaletteContrast: every series and task colour of the dark
// palettes has at least WCAG's 3:1 contrast for graphics with the dark
// background.
func TestDarkPaletteContrast(t *testing.T) {
	lum := func(hex string) float64 {
		c := hexColor(hex).(color.RGBA)
		ch := func(v uint8) float64 {
			x := float64(v) / 255
			if x <= 0.03928 {
				return x / 12.92
			}
			return math.Pow((x+0.055)/1.055, 2.4)
		}
		return 0.2126*ch(c.R) + 0.7152*ch(c.G) + 0.0722*ch(c.B)
	}
	bg := lum(DarkBackground)
	for _, p := range [][]string{DarkPalette, DarkTaskPalette} {
		for _, c := range p {
			if r := (lum(c) + 0.05) / (bg + 0.05); r < 3 {
				t.Errorf("%s on %s: contrast %.2f, want ≥ 3", c, DarkBackground, r)
			}
		}
	}
	if len(DarkPalette) != len(Palette) || len(DarkTaskPalette) != len(TaskPalette) {
		t.Error("dark palettes differ in length from the light ones")
	}
}

// TestBrowserBoldIsBest opens the wide report and checks what its caption
// says, "bold: best in column": a number cell of the leaderboard is drawn
// bold exactly where it is its column's best. The Avg column drew every
// average at weight 600, which the page's fonts show as bold, so the best
// average did not stand out from the others.
func TestBrowserBoldIsBest(t *testing.T) {
	reporttest.Chromium(t)
	path, _ := writeWideReport(t)
	p := reporttest.Open(t, "file://"+path, 1400, 900, false)
	var wrong []string
	p.Eval(`Array.from(document.querySelectorAll("#leaderboard tbody td.num")).filter(td => td.textContent.trim() !== "—" && (parseInt(getComputedStyle(td).fontWeight) >= 600) !== td.classList.contains("best")).map(td => td.className + " " + td.textContent.trim() + " weight " + getComputedStyle(td).fontWeight)`, &wrong)
	if len(wrong) > 0 {
		t.Errorf("%d number cells bold where not best or plain where best, e.g. %q", len(wrong), wrong[:min(3, len(wrong))])
	}
	var bestAvg int
	p.Eval(`document.querySelectorAll("#leaderboard tbody td.avg.best").length`, &bestAvg)
	if bestAvg != 1 {
		t.Errorf("%d averages marked best, want 1", bestAvg)
	}
}
