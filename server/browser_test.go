package server

import (
	"strings"
	"testing"

	"github.com/r2med/r2med/report"
	"github.com/r2med/r2med/report/reporttest"
)

// TestBrowserLeaderboard opens the viewer's leaderboard in headless
// Chromium: the per-task bar chart is drawn (our two systems' colours
// cover bars of nDCG@10 up to 100) and the script ran.
func TestBrowserLeaderboard(t *testing.T) {
	reporttest.Chromium(t)
	t.Parallel()
	ts, _ := fixture(t)
	img := reporttest.Screenshot(t, ts.URL+"/", 1280, 2400)
	n := reporttest.CountColor(img, report.Palette[1]) // perfect: 100 on demo
	t.Logf("%s: %d pixels", report.Palette[1], n)
	if n < 1500 { // one bar 12 px wide, 260 px high; the legend and swatch add ~250
		t.Errorf("%d pixels of %s: bar chart not rendered", n, report.Palette[1])
	}
	dom := reporttest.DOM(t, ts.URL+"/#sort=avg:asc")
	for _, want := range []string{`data-ready="1"`, `data-rows="73"`, `aria-sort="ascending"`} {
		if !strings.Contains(dom, want) {
			t.Errorf("DOM lacks %s", want)
		}
	}
}

// TestBrowserDrillDown opens a query's drill-down: matched words are
// highlighted (the mark colour is on screen), relevant hits are marked,
// and the markup planted in the query and a relevant document did not
// run (the page title is still ours).
func TestBrowserDrillDown(t *testing.T) {
	reporttest.Chromium(t)
	t.Parallel()
	ts, task := fixture(t)
	url := ts.URL + "/query/demo/" + task.Queries[0].ID
	img := reporttest.Screenshot(t, url, 1280, 1600)
	for hex, min := range map[string]int{"#fff3b0": 500, "#1a7f37": 200} { // <mark>, relevant border
		n := reporttest.CountColor(img, hex)
		t.Logf("%s: %d pixels", hex, n)
		if n < min {
			t.Errorf("%d pixels of %s, want ≥ %d", n, hex, min)
		}
	}
	dom := reporttest.DOM(t, url)
	if !strings.Contains(dom, `data-ready="1"`) || strings.Count(dom, "<mark>") < 10 {
		t.Errorf("script not run or too few highlights (%d)", strings.Count(dom, "<mark>"))
	}
	if !strings.Contains(dom, "<title>"+task.Queries[0].ID+" · demo — R2MED results</title>") || strings.Contains(dom, "pwned</title>") {
		t.Error("the page title changed: planted markup ran")
	}
}
