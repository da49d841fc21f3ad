package report

import (
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/r2med/r2med/demo"
	"github.com/r2med/r2med/leaderboard"
	"github.com/r2med/r2med/report/reporttest"
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
