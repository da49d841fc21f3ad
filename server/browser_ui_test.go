package server

import (
	"strings"
	"testing"

	"github.com/r2med/r2med/report/reporttest"
)

// TestBrowserViewerReadsRight opens the viewer's pages at 1400×900, light
// and dark: on the leaderboard (73 systems) the Avg column and our two
// runs are visible without scrolling; no page has an element sticking out
// of its container, small tick labels or unexplained series; on the
// per-query page rank k of every system is on one row, and "show more"
// fetches the document under the CSP.
func TestBrowserViewerReadsRight(t *testing.T) {
	reporttest.Chromium(t)
	ts, task := fixture(t)
	q := task.Queries[1].ID
	for _, dark := range []bool{false, true} {
		p := reporttest.Open(t, ts.URL+"/", 1400, 900, dark)
		for _, sel := range []string{`#leaderboard th.avg`, `#leaderboard tbody tr:nth-child(1).ours td.avg`, `#leaderboard tbody tr:nth-child(2).ours td.sys`} {
			if !p.InView(sel) {
				t.Errorf("dark=%v: %s not in view at 1400×900", dark, sel)
			}
		}
		p.CheckLayout("leaderboard")
		for _, path := range []string{"/task/demo", "/task/demo/data", "/query/demo/" + q, "/diff/demo"} {
			p.Navigate(ts.URL + path)
			p.CheckLayout(path)
		}
	}
	p := reporttest.Open(t, ts.URL+"/query/demo/"+q+"?k=20", 1400, 900, false)
	var misaligned int
	p.Eval(`(() => { let bad = 0; const g = document.getElementById("rank-grid"); const rows = {};
	  for (const el of g.children) { if (el.classList.contains("head")) continue; const top = Math.round(el.getBoundingClientRect().top);
	    (rows[el.dataset.rank || ""] = rows[el.dataset.rank || ""] || []).push(top); }
	  const tops = Array.from(g.querySelectorAll(".hit")).map(h => Math.round(h.getBoundingClientRect().top));
	  const n = g.querySelectorAll(".head").length - 1;
	  for (let i = 0; i < tops.length; i += n) for (let j = 1; j < n; j++) if (tops[i + j] !== tops[i]) bad++;
	  return bad; })()`, &misaligned)
	if misaligned != 0 {
		t.Errorf("%d hits not on their rank's row", misaligned)
	}
	var before, after int
	p.Eval(`document.querySelector(".hit .text").textContent.length`, &before)
	p.Click(".hit button.more", ".hit.open")
	p.Eval(`document.querySelector(".hit.open .text").textContent.length`, &after)
	var label string
	p.Eval(`document.querySelector(".hit.open button.more").textContent`, &label)
	if after <= before || label != "show less" {
		t.Errorf("show more: text %d → %d characters, button %q", before, after, label)
	}
	// The relevant documents are collapsed below the systems.
	var open bool
	p.Eval(`document.getElementById("relevant-docs").open`, &open)
	if open {
		t.Error("relevant documents shown open")
	}
}

// TestLayoutCheckCatches: the layout check finds what it is for, on a
// page made to have each fault.
func TestLayoutCheckCatches(t *testing.T) {
	reporttest.Chromium(t)
	page := `data:text/html,<body data-ready="1"><main style="width:600px"><div id="box" style="width:300px"><p id="wide" style="width:500px">x</p></div>` +
		`<svg class="chart" id="c" viewBox="0 0 1000 100" style="width:500px"><text class="tick" style="font-size:12px">1</text><g class="series" data-series="0"><rect width="5" height="5"/></g></svg></main></body>`
	p := reporttest.Open(t, page, 1400, 900, false)
	var l reporttest.Layout
	p.Eval(reporttest.LayoutJS, &l)
	if len(l.Overflow) == 0 || !strings.Contains(strings.Join(l.Overflow, " "), "wide") || len(l.SmallTicks) != 1 || len(l.Unlegended) != 1 {
		t.Errorf("layout check missed a fault: %+v", l)
	}
}
