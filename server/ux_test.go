package server

import (
	"context"
	"fmt"
	"html"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/r2med/r2med/demo"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/report/reporttest"
	"github.com/r2med/r2med/results"
	"github.com/r2med/r2med/sysname"
)

// Long names, as fused and reranked runs have them; the second and third
// differ only where a cut in the middle leaves out, so the one rule cuts
// them elsewhere (sysname.ShortAll).
const (
	longReranked   = "rrf(bm25,bge-large-en-v1.5,e5-mistral-7b-instruct) → insertrank:deepseek-r1@20 [window=20 step=10 scores=minmax]"
	longReranked40 = "rrf(bm25,bge-large-en-v1.5,e5-mistral-7b-instruct) → insertrank:deepseek-r1@40 [window=20 step=10 scores=minmax]"
	longPartial    = "hyde/gpt4 → nv-embed-v2 → rankllama-7b@top10 (a run that skips a query)"
)

// shown are the names the viewer shows for bm25 and the long names: cut
// to sysname.Width, no two alike.
var shown = func() map[string]string {
	names := []string{"bm25", longReranked, longReranked40, longPartial}
	m := map[string]string{}
	for i, s := range sysname.ShortAll(names, sysname.Width) {
		m[names[i]] = s
	}
	return m
}()

// pooledLoader is the demo task with pooled judgments, as TREC's are:
// each query's first three irrelevant documents (corpus order) judged 0.
func pooledLoader(context.Context, results.Run) (*ir.Task, error) {
	t, err := demo.Load()
	if err != nil {
		return nil, err
	}
	for _, q := range t.Queries {
		n := 0
		for _, d := range t.Corpus {
			if _, ok := t.Qrels[q.ID][d.ID]; !ok && n < 3 {
				t.Qrels[q.ID][d.ID] = 0
				n++
			}
		}
	}
	return t, nil
}

// unjudgedFirst ranks, for every query, 20 documents the pooled
// judgments do not hold first (from the end of the corpus), then the
// relevant ones, then the rest: a reranker that put unjudged documents
// on top.
func unjudgedFirst(t *ir.Task) ir.Run {
	pooled, _ := pooledLoader(context.Background(), results.Run{})
	run := ir.Run{}
	for _, q := range t.Queries {
		var top, rel, rest []string
		for i := len(t.Corpus) - 1; i >= 0; i-- {
			id := t.Corpus[i].ID
			switch g, judged := pooled.Qrels[q.ID][id]; {
			case g > 0:
				rel = append(rel, id)
			case !judged && len(top) < 20:
				top = append(top, id)
			default:
				rest = append(rest, id)
			}
		}
		for i, id := range append(append(top, rel...), rest...) {
			run[q.ID] = append(run[q.ID], ir.Hit{DocID: id, Score: float64(1000 - i)})
		}
	}
	return run
}

// uxFixture serves four systems of ours on the demo task with pooled
// judgments: bm25 (every relevant document first), two rerankers with
// long names that a middle cut would show alike and that put unjudged
// documents on top, and a run with a long name that does not answer the
// third query; R2MED's published systems too.
func uxFixture(t *testing.T) (*httptest.Server, *ir.Task) {
	t.Helper()
	task, err := demo.Load()
	if err != nil {
		t.Fatal(err)
	}
	partial := reporttest.Buried(task, func(string) bool { return true })
	delete(partial, task.Queries[2].ID)
	root := t.TempDir()
	for _, r := range []reporttest.Run{
		{Dir: filepath.Join(root, "a"), Task: "demo", System: "bm25", Ranked: reporttest.Perfect(task)},
		{Dir: filepath.Join(root, "b"), Task: "demo", System: "insertrank", Config: map[string]any{"retriever": "insertrank", "name": longReranked}, Ranked: unjudgedFirst(task)},
		{Dir: filepath.Join(root, "c"), Task: "demo", System: "rankllama", Config: map[string]any{"retriever": "rankllama", "name": longPartial}, Ranked: partial},
		{Dir: filepath.Join(root, "d"), Task: "demo", System: "insertrank40", Config: map[string]any{"retriever": "insertrank", "name": longReranked40}, Ranked: unjudgedFirst(task)},
	} {
		if err := reporttest.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	return serveRuns(t, root, pooledLoader), task
}

func diffURL(ts *httptest.Server, a, b, q string) string {
	return ts.URL + "/diff/demo?a=" + url.QueryEscape("ours/"+a) + "&b=" + url.QueryEscape("ours/"+b) + "&q=" + url.QueryEscape(q)
}

var hrefAttr = regexp.MustCompile(`href="(/[^"]*)"`)

// TestViewerNoDeadEnds follows every link of the viewer's pages (the
// leaderboard, a task page, a query page, a diff page, a dataset page):
// each answers 200. The dataset link is there for a task our runs name
// the data of, and not for one with published results only.
func TestViewerNoDeadEnds(t *testing.T) {
	ts, task := uxFixture(t)
	q := task.Queries[0].ID
	pages := []string{"/", "/task/demo", "/task/demo/data", "/task/Biology", "/query/demo/" + q, strings.TrimPrefix(diffURL(ts, "bm25", longReranked, q), ts.URL)}
	seen := map[string]bool{}
	for _, p := range pages {
		code, _, body := get(t, ts.URL+p)
		if code != 200 {
			t.Errorf("%s: %d", p, code)
			continue
		}
		for _, m := range hrefAttr.FindAllStringSubmatch(body, -1) {
			link := html.UnescapeString(m[1])
			if seen[link] || strings.HasPrefix(link, "/api/") {
				continue
			}
			seen[link] = true
			if code, _, body := get(t, ts.URL+link); code != 200 {
				t.Errorf("%s links to %s: %d %.200s", p, link, code, body)
			}
		}
	}
	if !seen["/task/demo/data"] {
		t.Error("no dataset link on the demo task's page")
	}
	if seen["/task/Biology/data"] {
		t.Error("a dataset link on Biology, whose data no run of ours names")
	}
	if len(seen) < 20 {
		t.Errorf("only %d links followed", len(seen))
	}
}

// TestViewerUnansweredAndJudged: a system that did not answer a query
// says so instead of "relevant at ;" and bare cards; judged@10 is shown
// per system on the query, task and diff pages; with pooled judgments
// the documents a reranker put on top unjudged are marked, and its
// score flagged as possibly understated.
func TestViewerUnansweredAndJudged(t *testing.T) {
	ts, task := uxFixture(t)
	_, _, page := get(t, ts.URL+"/query/demo/"+task.Queries[2].ID)
	for _, want := range []string{"no answer: its run ranks no document for this query, so it scores nDCG@10 0", "no answer: the run ranks no document for this query"} {
		if !strings.Contains(page, want) {
			t.Errorf("unanswered query page lacks %q", want)
		}
	}
	if strings.Contains(page, "relevant at ;") || strings.Contains(page, `<div class="hit empty">—</div>`) {
		t.Error("unanswered query shown as an empty list and bare cards")
	}
	q := task.Queries[0].ID
	_, _, page = get(t, ts.URL+"/query/demo/"+q)
	// bm25's top 10: the relevant documents, then the first irrelevant
	// ones in corpus order, three of them judged 0.
	bm25Judged := min(len(task.Qrels[q])+3, 10)
	for _, want := range []string{fmt.Sprintf("judged@10 %d/10", bm25Judged), "judged@10 0/10", "its top 10 holds 10 unjudged documents: its score may understate it", `class="hit unjudged"`, `class="unjudged-mark"`} {
		if !strings.Contains(page, want) {
			t.Errorf("query page lacks %q", want)
		}
	}
	if strings.Contains(page, "The judgments list relevant documents only") {
		t.Error("pooled judgments called relevant-only")
	}
	_, _, page = get(t, ts.URL+"/task/demo")
	if !regexp.MustCompile(`judged@10, the share of each system's top 10 that the judgments cover: bm25 0\.51, ` + regexp.QuoteMeta(shown[longPartial]) + ` 0\.28, ` + regexp.QuoteMeta(shown[longReranked]) + ` 0\.00, ` + regexp.QuoteMeta(shown[longReranked40]) + ` 0\.00\.`).MatchString(page) {
		t.Errorf("task page lacks judged@10:\n%s", regexp.MustCompile(`<p class="sub" id="judged">.*</p>`).FindString(page))
	}
	_, _, page = get(t, diffURL(ts, "bm25", longReranked, task.Queries[0].ID))
	if !strings.Contains(page, "judged@10: A ") || !strings.Contains(page, ", B 0.00") {
		t.Errorf("diff page lacks judged@10:\n%s", regexp.MustCompile(`<p class="sub" id="diff-summary">.*</p>`).FindString(page))
	}
}

// TestCountRows: a dataset page lists up to 16 counts one by one and
// groups more (NFCorpus has about a hundred) in ranges that double,
// losing no query.
func TestCountRows(t *testing.T) {
	few := map[int]int{1: 5, 2: 3, 7: 1}
	rows, binned := countRows(few)
	if binned || len(rows) != 3 || rows[2].Value != "7" {
		t.Errorf("few counts: %+v", rows)
	}
	many := map[int]int{}
	total := 0
	for n := 1; n <= 300; n += 3 {
		many[n] = n%7 + 1
		total += n%7 + 1
	}
	rows, binned = countRows(many)
	var labels []string
	sum := 0
	for _, r := range rows {
		labels = append(labels, r.Value)
		sum += r.N
	}
	if !binned || len(rows) > maxCountRows || sum != total || !slices.Equal(labels[:5], []string{"1", "3–4", "5–8", "9–16", "17–32"}) {
		t.Errorf("many counts: %v (%d queries, want %d)", labels, sum, total)
	}
}

// TestBrowserTaskPageLongNames opens the task page at 1400×900 with long
// fused and reranked names: every metric column is in view without
// scrolling, each name shown cut by the one rule (sysname.ShortAll: at
// most sysname.Width characters, no two alike) and whole on hover, in
// the board and in the per-query table's heading; nothing sticks out of
// its box.
func TestBrowserTaskPageLongNames(t *testing.T) {
	reporttest.Chromium(t)
	ts, _ := uxFixture(t)
	p := reporttest.Open(t, ts.URL+"/task/demo", 1400, 900, false)
	for _, sel := range []string{`#task-board th[data-key="mrr"]`, `#task-board tbody tr:nth-child(1) td:last-child`} {
		if !p.InView(sel) {
			t.Errorf("%s not in view at 1400×900", sel)
		}
	}
	// The per-query table, further down, is as wide as the window at most.
	var right, width float64
	p.Eval(`document.querySelector("#queries th:last-child").getBoundingClientRect().right`, &right)
	p.Eval(`window.innerWidth`, &width)
	if right > width {
		t.Errorf("the per-query table's last column ends at %v, past the window's %v", right, width)
	}
	for _, sel := range []string{"#task-board tr.ours td.sys", "#queries th.sysname"} {
		checkShownNames(t, p, sel)
	}
	p.CheckLayout("/task/demo")
}

// checkShownNames checks the names the elements sel finds show: each of
// our four as the one rule cuts it, whole at the start of its hover, and
// not clipped again by the page.
func checkShownNames(t *testing.T, p *reporttest.Page, sel string) {
	t.Helper()
	var clipped []string
	p.Eval(`Array.from(document.querySelectorAll(`+strconv.Quote(sel)+`)).filter(e => {
	  const s = getComputedStyle(e);
	  return s.textOverflow === "ellipsis" || e.scrollWidth > e.clientWidth + 1 && s.overflowX !== "visible";
	}).map(e => e.innerText)`, &clipped)
	if len(clipped) > 0 {
		t.Errorf("%s: names clipped by the page: %q", sel, clipped)
	}
	var got [][2]string
	p.Eval(`Array.from(document.querySelectorAll(`+strconv.Quote(sel)+`)).map(e => [e.innerText.trim(), e.title])`, &got)
	if len(got) != len(shown) {
		t.Fatalf("%s: %d names, want %d: %q", sel, len(got), len(shown), got)
	}
	seen := map[string]bool{}
	for _, g := range got {
		text, title := g[0], g[1]
		full, _, _ := strings.Cut(title, " — ")
		if want, ok := shown[full]; !ok || text != want {
			t.Errorf("%s: %q shown, hover %q; want %q", sel, text, title, want)
		}
		if utf8.RuneCountInString(text) > sysname.Width || seen[text] {
			t.Errorf("%s: %q is longer than %d characters or shown twice", sel, text, sysname.Width)
		}
		seen[text] = true
	}
}

// TestBrowserDiffPage opens the diff of bm25 and the reranker on one
// query: the documents only in A's top 20 are the relevant ones, marked
// ✓; those only in B's are marked unjudged; a query link of the
// per-query table opens that query's diff.
func TestBrowserDiffPage(t *testing.T) {
	reporttest.Chromium(t)
	ts, task := uxFixture(t)
	q := task.Queries[0]
	p := reporttest.Open(t, diffURL(ts, "bm25", longReranked, q.ID), 1400, 900, false)
	var onlyA, onlyB string
	p.Eval(`document.getElementById("only-a").innerText`, &onlyA)
	p.Eval(`document.getElementById("only-b").innerText`, &onlyB)
	rel := 0
	for _, g := range task.Qrels[q.ID] {
		if g > 0 {
			rel++
		}
	}
	if strings.Count(onlyA, "✓ 1") != rel || !strings.Contains(onlyA, "(B: #2") {
		t.Errorf("only in A: want the %d relevant documents marked ✓:\n%s", rel, onlyA)
	}
	if strings.Count(onlyB, "unjudged") < 10 || strings.Contains(onlyB, "✓") {
		t.Errorf("only in B: want unjudged documents marked so:\n%s", onlyB)
	}
	p.CheckLayout("diff")
	checkShownNames(t, p, `select[name="a"] option[value^="ours/"]`)
	var h1 [][2]string
	p.Eval(`Array.from(document.querySelectorAll("h1 span")).map(e => [e.innerText, e.title])`, &h1)
	if len(h1) != 2 || h1[0][0] != shown[longReranked] || !strings.HasPrefix(h1[0][1], longReranked+" — ours") || h1[1][0] != "bm25" {
		t.Errorf("diff heading names %q", h1)
	}
	other := task.Queries[3].ID
	p.Click(`#deltas a[href*="q=`+other+`"]`, `h2`)
	var h2 string
	p.Eval(`document.querySelector("h2").innerText`, &h2)
	if !strings.HasPrefix(h2, "Query "+other+":") {
		t.Errorf("the query link opened %q", h2)
	}
}

// TestBrowserPhoneWidth opens every kind of page at 390×844 with the
// long names: no page scrolls sideways, every link of the navigation bar
// is on screen, nothing sticks out of its box.
func TestBrowserPhoneWidth(t *testing.T) {
	reporttest.Chromium(t)
	ts, task := uxFixture(t)
	q := task.Queries[0].ID
	p := reporttest.Open(t, ts.URL+"/", 390, 844, false)
	for _, path := range []string{"/", "/task/demo", "/task/demo/data", "/query/demo/" + q, strings.TrimPrefix(diffURL(ts, "bm25", longReranked, q), ts.URL)} {
		p.Navigate(ts.URL + path)
		var off []string
		p.Eval(`Array.from(document.querySelectorAll("nav.top a")).filter(a => { const r = a.getBoundingClientRect(); return r.right > window.innerWidth || r.left < 0; }).map(a => a.textContent)`, &off)
		if len(off) > 0 {
			t.Errorf("%s: navigation links off screen at 390 px: %v", path, off)
		}
		p.CheckLayout(fmt.Sprintf("%s at 390×844", path))
		switch {
		case path == "/task/demo":
			checkShownNames(t, p, "#task-board tr.ours td.sys")
		case strings.HasPrefix(path, "/query/"):
			checkShownNames(t, p, ".rankgrid .head[title]")
		}
	}
}
