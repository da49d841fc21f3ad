package report

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/r2med/r2med/internal/errtext"
	"github.com/r2med/r2med/internal/fileio"
	"github.com/r2med/r2med/internal/numtext"
	"github.com/r2med/r2med/leaderboard"
	"github.com/r2med/r2med/measure"
	"github.com/r2med/r2med/results"
	"github.com/r2med/r2med/usage"
)

//go:embed assets/style.css
var styleCSS string

//go:embed assets/app.js
var appJS string

//go:embed assets/viewer.js
var viewerJS string

// ViewerScript is Script with the viewer's "show more", which fetches one
// document from the viewer's /api/doc.
func ViewerScript() template.JS { return template.JS(appJS + viewerJS) }

// Style is the stylesheet of the report and the viewer, with the chart
// palettes (light and dark) as classes: c0… for series, t0… for tasks.
func Style() template.CSS { return template.CSS(styleWithPalette) }

var styleWithPalette = styleCSS + paletteCSS()

func paletteCSS() string {
	var b strings.Builder
	vars := func(light bool) string {
		var v strings.Builder
		p, t := Palette, TaskPalette
		if !light {
			p, t = DarkPalette, DarkTaskPalette
		}
		for i, c := range p {
			fmt.Fprintf(&v, "--c%d:%s;", i, c)
		}
		for i, c := range t {
			fmt.Fprintf(&v, "--t%d:%s;", i, c)
		}
		return v.String()
	}
	fmt.Fprintf(&b, "\n/* chart palettes (report.Palette, DarkPalette, TaskPalette, DarkTaskPalette) */\n:root{%s}\n@media (prefers-color-scheme: dark){:root{%s}}\n", vars(true), vars(false))
	for i := range Palette {
		fmt.Fprintf(&b, "svg.chart .c%d{fill:var(--c%d)} svg.chart .s%d{stroke:var(--c%d)} .sw.c%d{background:var(--c%d)}\n", i, i, i, i, i, i)
	}
	for i := range TaskPalette {
		fmt.Fprintf(&b, "svg.chart .t%d{fill:var(--t%d)}\n", i, i)
	}
	return b.String()
}

// Script is the JavaScript of the report and the viewer: sortable tables,
// pinning our runs, tooltips, legend highlighting. It fetches nothing.
func Script() template.JS { return template.JS(appJS) }

// TableView is a leaderboard laid out for HTML: sortable columns, cells
// with their sort keys.
type TableView struct {
	ID      string
	Caption string
	Columns []Column
	Rows    []RowView
	// Legend explains sources and marks (leaderboard.Table.Legend).
	Legend []string
	// Pin shows the "our runs first" toggle, on.
	Pin bool
}

// Column is one column heading.
type Column struct {
	Key, Label, Title string
	Num               bool
	// Class is the column's CSS class ("avg", "rank", "sys").
	Class string
}

// RowView is one row.
type RowView struct {
	System *leaderboard.System
	// Series is the system's chart series (colour, marker), -1 when not
	// charted.
	Series int
	Cells  []Cell // after the rank and system columns
	Rank   string
	// Order is the row's position in the ranking, for unpinning.
	Order int
	// Title is the system cell's hover text (leaderboard's System.About):
	// the full name, where the numbers come from (every source of a row
	// a later paper reprinted) and, for ours, the full settings.
	Title string
}

// Short is the system name as the table prints it (DisplayName).
func (r RowView) Short() string { return r.System.DisplayName() }

// Origin is "ours", "published" or "external".
func (r RowView) Origin() string { return string(r.System.Origin()) }

// Cell is one value; Sort is its numeric sort key ("" when missing).
type Cell struct {
	Text, Sort string
	Best       bool
	// Mark is a significance mark (†, ‡) and Title its explanation.
	Mark, Title string
	// Note is a second line under the value ("printed 35.19").
	Note  string
	Class string
}

// Leaderboard lays out t with a column per R2MED task, then the average,
// then a column per other task (taskCols: the tasks of these shown,
// others of t.OtherTasks are left out). series gives charted systems'
// chart series by ID.
func Leaderboard(t *leaderboard.Table, taskCols []string, series map[string]int) TableView {
	v := TableView{ID: "leaderboard", Caption: t.Metric.Label + " ×100 per task, each the mean over " + measure.MeanOverJudged + " (one without results counts 0, as in R2MED's files); Avg: R2MED's average over its " + strconv.Itoa(len(t.Tasks)) + " tasks (complete systems only, unranked otherwise); bold: best in column", Legend: t.Legend(), Pin: true}
	v.Columns = []Column{{Key: "rank", Label: "#", Num: true, Class: "rank"}, {Key: "system", Label: "System", Class: "sys"}, {Key: "kind", Label: "Kind", Class: "kind"}}
	// R2MED's columns, unless no row has a value there (runs on the demo
	// task or BEIR data only).
	r2med := false
	for _, r := range t.Rows {
		r2med = r2med || r.Have > 0 || r.AverageOnly
	}
	if r2med {
		for _, task := range t.Tasks {
			v.Columns = append(v.Columns, Column{Key: task, Label: leaderboard.ShortTaskName(task), Title: task, Num: true})
		}
		v.Columns = append(v.Columns, Column{Key: "avg", Label: "Avg", Title: "R2MED's average over its " + strconv.Itoa(len(t.Tasks)) + " tasks", Num: true, Class: "avg"})
	} else {
		v.Caption = t.Metric.Label + " ×100 per task, each the mean over " + measure.MeanOverJudged + " (one without results counts 0); bold: best in column (no system has results on R2MED's tasks)"
	}
	var others []int
	for j, task := range t.OtherTasks {
		if slices.Contains(taskCols, task) {
			others = append(others, j)
			v.Columns = append(v.Columns, Column{Key: task, Label: task, Title: task + " (not an R2MED task: outside the average)", Num: true, Class: "other"})
		}
	}
	if t.Costs {
		// One column, so that the table keeps to the page: dollars (or
		// tokens, when no run was priced), seconds under them.
		c := Column{Key: "cost", Label: "$/q", Title: "dollars per query: what our run's model calls cost by its price table; under them the seconds of model calls per query (embedding the corpus spread over the queries); tokens on hover", Num: true, Class: "cost"}
		if !t.CostUSD {
			c.Label, c.Title = "tok/q", "prompt and completion tokens per query of our run's model calls; under them the seconds of model calls per query (embedding the corpus spread over the queries)"
		}
		v.Columns = append(v.Columns, c)
	}
	order := rankOrder(t)
	for _, r := range t.Rows {
		rv := RowView{System: r.System, Series: -1, Rank: "—", Order: order[r.System.ID], Title: r.System.About()}
		if i, ok := series[r.System.ID]; ok {
			rv.Series = i
		}
		if r.Rank > 0 {
			rv.Rank = strconv.Itoa(r.Rank)
		}
		for j, s := range r.Scores {
			if r2med {
				rv.Cells = append(rv.Cells, scoreCell(s, t.Best[j], t.Baseline))
			}
		}
		avg := Cell{Text: t.AverageText(r), Class: "avg"}
		if r.Complete || r.AverageOnly {
			avg.Text = r.AverageNumber()
			avg.Sort = avg.Text
			avg.Best = t.IsBest(r)
			if r.AverageOnly {
				avg.Note, avg.Title = "printed", "average printed by the paper; no per-task values"
			} else if p, ok := t.PrintedDiffers(r); ok {
				avg.Note = "printed " + p
				avg.Title = "the paper prints " + p + "; " + avg.Text + " is R2MED's average of its printed per-task values"
			}
		} else {
			avg.Text = fmt.Sprintf("—/%d", len(t.Tasks))
			avg.Title = fmt.Sprintf("%d of %d tasks: no average, no rank", r.Have, len(t.Tasks))
			if r.Have > 0 {
				avg.Note = fmt.Sprintf("%d of %d", r.Have, len(t.Tasks))
			} else {
				avg.Text, avg.Title = "—", "no R2MED task: no average, no rank"
			}
		}
		if r2med {
			rv.Cells = append(rv.Cells, avg)
		}
		for _, j := range others {
			rv.Cells = append(rv.Cells, scoreCell(r.Other[j], t.OtherBest[j], t.Baseline))
		}
		rv.Cells = append(rv.Cells, costCells(t, r)...)
		v.Rows = append(v.Rows, rv)
	}
	return v
}

// costCells is a row's cost cell (none when the table shows no cost):
// dollars per query, or tokens when the table has no dollars, sorted by
// that; the seconds of model calls per query under it, the tokens on
// hover.
func costCells(t *leaderboard.Table, r leaderboard.Row) []Cell {
	if !t.Costs {
		return nil
	}
	c := r.Cost
	cell := Cell{Text: "—", Class: "cost"}
	if c == nil {
		return []Cell{cell}
	}
	tokens := strconv.FormatFloat(c.Tokens(), 'f', 0, 64)
	cell.Note = leaderboard.SecondsText(c.Seconds) + " s"
	cell.Title = fmt.Sprintf("per query: %s prompt + %s completion tokens, %s s of model calls", strconv.FormatFloat(c.PromptTokens, 'f', 0, 64), strconv.FormatFloat(c.CompletionTokens, 'f', 0, 64), leaderboard.SecondsText(c.Seconds))
	switch {
	case t.CostUSD && c.USD != nil:
		cell.Text, cell.Sort = usage.USDNumber(*c.USD), strconv.FormatFloat(*c.USD, 'g', -1, 64)
		cell.Title = fmt.Sprintf("$%s a query; %s", cell.Text, strings.TrimPrefix(cell.Title, "per query: "))
	case !t.CostUSD:
		cell.Text, cell.Sort = tokens, strconv.FormatFloat(c.Tokens(), 'g', -1, 64)
	}
	return []Cell{cell}
}

// rankOrder is each row's position in the table's ranking (the order
// without pinning): ranked rows by rank, then the others as sorted.
func rankOrder(t *leaderboard.Table) map[string]int {
	rows := slices.Clone(t.Rows)
	slices.SortStableFunc(rows, func(a, b leaderboard.Row) int {
		ra, rb := a.Rank, b.Rank
		if ra == 0 {
			ra = math.MaxInt
		}
		if rb == 0 {
			rb = math.MaxInt
		}
		return ra - rb
	})
	out := map[string]int{}
	for i, r := range rows {
		out[r.System.ID] = i
	}
	return out
}

func scoreCell(s leaderboard.Score, best float64, baseline string) Cell {
	if !s.OK {
		return Cell{Text: "—"}
	}
	c := Cell{Text: s.Number(), Sort: strconv.FormatFloat(s.Value*100, 'f', -1, 64), Best: leaderboard.AtBest(s.Value, best), Mark: s.Mark}
	if !math.IsNaN(s.P) {
		c.Title = fmt.Sprintf("vs %s: p = %s (Holm)", baseline, numtext.P(s.P))
	}
	return c.depth(s.Label)
}

// ScoreCell is the cell of metric m in a task result outside a
// leaderboard table (a task's own board): its value ×100, marked as a
// table marks it where the result names m otherwise (MRR@100).
func ScoreCell(tr leaderboard.TaskResult, m leaderboard.Metric) Cell {
	v, ok := tr.Metrics[m.Key]
	if !ok {
		return Cell{Text: "—"}
	}
	text := leaderboard.Pct(v)
	if tr.AsPrinted != "" && m.Key == leaderboard.DefaultMetric.Key {
		text = tr.AsPrinted // as the source printed it (7.8)
	}
	return Cell{Text: text, Sort: strconv.FormatFloat(v*100, 'f', -1, 64)}.depth(tr.Label(m))
}

// depth marks a cell whose value is named label where its column names
// another (Score.Label): its results.MRRMark under the value, what it means on
// hover (the table's legend says it too).
func (c Cell) depth(label string) Cell {
	notes := results.MRRMarkNotes([]string{label}) // none for a plain label
	if len(notes) == 0 {
		return c
	}
	c.Note = results.MRRMark(label)
	c.Title = strings.TrimPrefix(c.Title+"; "+notes[0], "; ")
	return c
}

var tableTmpl = template.Must(template.New("table").Parse(`{{if .Legend}}<ul class="legend-line">{{range .Legend}}<li>{{.}}</li>{{end}}</ul>{{end}}
{{if .Pin}}<p class="controls"><label><input type="checkbox" class="pin" data-table="{{.ID}}" checked> our runs first</label></p>{{end}}
<div class="table-wrap"><table class="sortable board" id="{{.ID}}" data-pin="{{if .Pin}}1{{end}}">
<caption class="sub">{{.Caption}}</caption>
<thead><tr>{{range .Columns}}<th scope="col" data-key="{{.Key}}" class="{{.Class}}{{if .Num}} num{{end}}"{{if .Num}} data-type="num"{{end}}{{if .Title}} title="{{.Title}}"{{end}}>{{.Label}}</th>{{end}}</tr></thead>
<tbody>
{{range .Rows}}<tr class="{{.Origin}}" data-order="{{.Order}}"><td class="num rank" data-v="{{.Rank}}">{{.Rank}}</td><td class="sys" title="{{.Title}}">{{if ge .Series 0}}<span class="sw c{{.Series}}"></span>{{end}}<span class="name">{{.Short}}</span>{{if ne .Origin "published"}} <span class="tag {{.Origin}}">{{.Origin}}</span>{{end}}</td><td class="kind">{{.System.Kind}}</td>{{range .Cells}}<td class="num{{if .Best}} best{{end}}{{if .Class}} {{.Class}}{{end}}" data-v="{{.Sort}}"{{if .Title}} title="{{.Title}}"{{end}}>{{.Text}}{{if .Mark}}<sup class="mark">{{.Mark}}</sup>{{end}}{{if .Note}}<span class="note">{{.Note}}</span>{{end}}</td>{{end}}</tr>
{{end}}</tbody></table></div>`))

// HTML renders the table.
func (v TableView) HTML() template.HTML {
	var b strings.Builder
	if err := tableTmpl.Execute(&b, v); err != nil {
		// Executing a parsed template on this fixed type fails only on a
		// bug; show it rather than an empty table.
		return template.HTML(template.HTMLEscapeString("table: " + err.Error()))
	}
	return template.HTML(b.String())
}

// Series maps the IDs of the charted systems to their chart series.
func (r *Report) Series() map[string]int {
	m := map[string]int{}
	for i, s := range r.Charted {
		m[s.ID] = i
	}
	return m
}

var pageTmpl = template.Must(template.New("report").Funcs(template.FuncMap{"count": errtext.Count}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="r2med {{.Version}}">
<title>{{.R.Title}} — {{.R.Metric.Label}}</title>
<style>{{.Style}}</style>
</head>
<body>
<main>
<h1>{{.R.Title}}</h1>
<p class="sub">{{.R.Metric.Label}} · {{count (len .R.Table.Rows) "system" "systems"}} ({{.Ours}} ours, {{.Published}} published{{if .External}}, {{.External}} external{{end}}) · made by r2med {{.Version}} · benchmark: R2MED (<a href="https://arxiv.org/abs/2505.14558">Li et al., 2025</a>)</p>
{{if .R.Notes}}<ul class="notes">{{range .R.Notes}}<li>{{.}}</li>{{end}}</ul>{{end}}

<h2 id="section-leaderboard">Leaderboard</h2>
{{.Table}}

<h2 id="section-tasks">{{.R.Metric.Label}} per task</h2>
{{if .R.Charted}}<figure>{{.Bars}}<figcaption>{{.R.Bars.Desc}}</figcaption></figure>{{else}}<p class="sub">No systems to chart.</p>{{end}}

<h2 id="section-recall">Recall@k</h2>
{{if .Curves}}<div class="chart-group"><div class="legend-scroll">{{.CurvesLegend}}</div><div class="grid2">{{range .Curves}}<figure>{{.}}</figure>{{end}}</div></div>
<p class="sub">One legend for all panels; each panel's y axis is scaled to its data. Curves use the recall cutoffs each result file holds (R2MED's BM25, GAR and reranker files: 1, 10, 25, 50, 100; its dense files, evaluated through BEIR: 1, 3, 5, 10, 100, 1000).</p>
{{else}}<p class="sub">No charted system has recall at two or more cutoffs.</p>{{end}}

<h2 id="section-scatter">Per-query comparison</h2>
{{if .R.Scatter}}<figure id="scatter-figure" data-n="{{.N}}">{{.Scatter}}<figcaption>{{.R.Scatter.Desc}}</figcaption></figure>
{{.TestsTable}}
{{else}}<p class="sub">{{.R.ScatterNote}}</p>{{end}}

<h2 id="section-cost">Quality and cost</h2>
{{if .R.Cost}}<figure id="cost-figure">{{.Cost}}<figcaption>{{.R.Cost.Desc}}</figcaption></figure>
{{else}}<p class="sub">{{.R.CostNote}}</p>{{end}}
{{range .R.Sections}}{{.}}{{end}}
<footer>Self-contained: this file loads nothing from the network. Charts are inline SVG; hover or focus a mark for its value, a legend key to bring its series forward.</footer>
</main>
<script>{{.Script}}</script>
</body>
</html>
`))

var testsTmpl = template.Must(template.New("tests").Funcs(template.FuncMap{"signed": func(v float64) string { return numtext.Signed(v, 4) }, "p": numtext.P}).Parse(`<div class="table-wrap"><table class="tests" id="pair-tests">
<caption class="sub">{{.B}} − {{.A}} per task on every judged query (a query a system did not answer scores 0); two-sided paired randomization test ({{.Exact}}), paired t-test, {{.Level}} bootstrap interval of the mean difference. The pooled row tests all tasks' queries together and says so.</caption>
<thead><tr><th>Task</th><th class="num">N</th><th class="num">unanswered ({{.A}} / {{.B}})</th><th class="num">{{.A}}</th><th class="num">{{.B}}</th><th class="num">diff</th><th class="num">CI</th><th class="num">W/L/T</th><th class="num">rand p</th><th class="num">t p</th></tr></thead>
<tbody>{{range .Tests}}<tr{{if .Pooled}} class="pooled"{{end}}><td>{{.Task}}</td><td class="num n">{{.N}}</td><td class="num">{{.UnansweredA}} / {{.UnansweredB}}</td><td class="num">{{printf "%.4f" .MeanA}}</td><td class="num">{{printf "%.4f" .MeanB}}</td><td class="num">{{signed .Diff}}</td><td class="num">[{{signed .CILow}}, {{signed .CIHigh}}]</td><td class="num">{{.Wins}}/{{.Losses}}/{{.Ties}}</td><td class="num">{{p .RandP}}{{if .Exact}} (exact){{end}}</td><td class="num">{{p .TTestP}}</td></tr>
{{end}}</tbody></table></div>`))

// TestsHTML renders the scatter's per-task and pooled tests.
func (r *Report) TestsHTML() template.HTML {
	if r.Scatter == nil {
		return ""
	}
	exact := "exact where at most 20 queries differ, else 10,000 random sign flips"
	var b strings.Builder
	err := testsTmpl.Execute(&b, map[string]any{"A": r.ScatterPair[0].DisplayName(), "B": r.ScatterPair[1].DisplayName(), "Tests": r.Tests, "Exact": exact,
		"Level": fmt.Sprintf("%.0f%%", r.Tests[0].Level*100)})
	if err != nil {
		return template.HTML(template.HTMLEscapeString("tests: " + err.Error()))
	}
	return template.HTML(b.String())
}

// CurvesLegend is the one legend of the recall@k panels.
func (r *Report) CurvesLegend() template.HTML {
	seen := map[int]bool{}
	var names, full []string
	var series []int
	for _, c := range r.Curves {
		for _, l := range c.Series {
			seen[l.Series] = true
		}
	}
	fulls := r.chartedFullNames()
	for i, name := range r.chartedNames() {
		if seen[i] {
			names, full, series = append(names, name), append(full, fulls[i]), append(series, i)
		}
	}
	return template.HTML(Legend("curves-legend", names, full, series))
}

// WriteHTML writes the report as one self-contained HTML page.
func (r *Report) WriteHTML(w io.Writer) error {
	curves := make([]template.HTML, len(r.Curves))
	for i, c := range r.Curves {
		curves[i] = template.HTML(c.SVG())
	}
	count := map[leaderboard.Origin]int{}
	for _, row := range r.Table.Rows {
		count[row.System.Origin()]++
	}
	data := map[string]any{
		"R": r, "Version": results.Version(), "Style": Style(), "Script": Script(),
		"Table": Leaderboard(r.Table, r.Tasks, r.Series()).HTML(), "Bars": template.HTML(r.Bars.SVG()),
		"Curves": curves, "CurvesLegend": r.CurvesLegend(), "Ours": count[leaderboard.OriginOurs], "Published": count[leaderboard.OriginPublished],
		"External": count[leaderboard.OriginExternal], "N": r.N(), "TestsTable": r.TestsHTML(),
	}
	if r.Scatter != nil {
		data["Scatter"] = template.HTML(r.Scatter.SVG())
	}
	if r.Cost != nil {
		data["Cost"] = template.HTML(r.Cost.SVG())
	}
	return pageTmpl.Execute(w, data)
}

// WriteFile writes the HTML report to path atomically.
func (r *Report) WriteFile(path string) error {
	return fileio.WriteAtomic(path, r.WriteHTML)
}
