package report

import (
	_ "embed"
	"html/template"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/r2med/r2med/internal/fileio"
	"github.com/r2med/r2med/leaderboard"
	"github.com/r2med/r2med/results"
)

//go:embed assets/style.css
var styleCSS string

//go:embed assets/app.js
var appJS string

// Style is the stylesheet of the report and the viewer.
func Style() template.CSS { return template.CSS(styleCSS) }

// Script is the JavaScript of the report and the viewer: sortable tables,
// tooltips, legend highlighting. It fetches nothing.
func Script() template.JS { return template.JS(appJS) }

// TableView is a leaderboard laid out for HTML: sortable columns, cells
// with their sort keys.
type TableView struct {
	Caption string
	Columns []Column
	Rows    []RowView
}

// Column is one column heading.
type Column struct {
	Key, Label, Title string
	Num               bool
}

// RowView is one row.
type RowView struct {
	System *leaderboard.System
	Color  string // the system's chart colour, "" when not charted
	Cells  []Cell // after the rank, system and source columns
	Rank   string
}

// Cell is one value; Sort is its numeric sort key ("" when missing).
type Cell struct {
	Text, Sort string
	Best       bool
}

// Leaderboard lays out t with a column per task (the table's R2MED tasks
// first when showR2MED, then any other task the systems have), the R2MED
// average after the R2MED tasks. colors gives charted systems' colours
// by ID.
func Leaderboard(t *leaderboard.Table, taskCols []string, colors map[string]string) TableView {
	v := TableView{Caption: t.Metric.Label + " ×100 per task; R2MED's average over its tasks (complete systems only); bold: best in column"}
	v.Columns = []Column{{Key: "rank", Label: "#", Num: true}, {Key: "system", Label: "System"}, {Key: "source", Label: "Source"}, {Key: "kind", Label: "Kind"}}
	r2med := map[string]int{}
	for j, task := range t.Tasks {
		r2med[task] = j
	}
	// The average goes right after R2MED's tasks, before other data's.
	avgAt := -1
	for i, task := range taskCols {
		if _, ok := r2med[task]; ok {
			avgAt = i + 1
		}
	}
	for i, task := range taskCols {
		if i == avgAt {
			v.Columns = append(v.Columns, avgColumn(t))
		}
		v.Columns = append(v.Columns, Column{Key: task, Label: leaderboard.ShortTaskName(task), Title: task, Num: true})
	}
	if avgAt == len(taskCols) {
		v.Columns = append(v.Columns, avgColumn(t))
	}
	best := map[string]float64{}
	for _, task := range taskCols {
		if j, ok := r2med[task]; ok {
			best[task] = t.Best[j]
			continue
		}
		b := math.NaN()
		for _, r := range t.Rows {
			if x := Value(r.System, task, t.Metric.Key); !math.IsNaN(x) && (math.IsNaN(b) || x > b) {
				b = x
			}
		}
		best[task] = b
	}
	for _, r := range t.Rows {
		rv := RowView{System: r.System, Color: colors[r.System.ID], Rank: "—"}
		if r.Rank > 0 {
			rv.Rank = strconv.Itoa(r.Rank)
		}
		avg := Cell{Text: t.AverageText(r)}
		if r.Complete {
			avg.Sort = strconv.FormatFloat(r.Average, 'f', 2, 64)
			avg.Best = r.Mean == t.BestAverage
		}
		for i, task := range taskCols {
			if i == avgAt {
				rv.Cells = append(rv.Cells, avg)
			}
			x := Value(r.System, task, t.Metric.Key)
			if math.IsNaN(x) {
				rv.Cells = append(rv.Cells, Cell{Text: "—"})
				continue
			}
			rv.Cells = append(rv.Cells, Cell{Text: leaderboard.Pct(x), Sort: strconv.FormatFloat(x*100, 'f', -1, 64), Best: x == best[task]})
		}
		if avgAt == len(taskCols) {
			rv.Cells = append(rv.Cells, avg)
		}
		v.Rows = append(v.Rows, rv)
	}
	return v
}

var tableTmpl = template.Must(template.New("table").Parse(`<div class="table-wrap"><table class="sortable">
<caption class="sub">{{.Caption}}</caption>
<thead><tr>{{range .Columns}}<th scope="col" data-key="{{.Key}}"{{if .Num}} class="num" data-type="num"{{end}}{{if .Title}} title="{{.Title}}"{{end}}>{{.Label}}</th>{{end}}</tr></thead>
<tbody>
{{range .Rows}}<tr{{if not .System.Published}} class="ours"{{end}}><td class="num" data-v="{{.Rank}}">{{.Rank}}</td><td class="sys">{{if .Color}}<span class="swatch" style="background:{{.Color}}"></span>{{end}}{{.System.Name}}</td><td>{{if .System.Published}}<span class="tag">published</span>{{else}}<span class="tag ours">ours</span>{{end}}</td><td>{{.System.Kind}}</td>{{range .Cells}}<td class="num{{if .Best}} best{{end}}" data-v="{{.Sort}}">{{.Text}}</td>{{end}}</tr>
{{end}}</tbody></table></div>`))

func avgColumn(t *leaderboard.Table) Column {
	return Column{Key: "avg", Label: "Avg", Title: "R2MED's average over its " + strconv.Itoa(len(t.Tasks)) + " tasks", Num: true}
}

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

// Colors maps the IDs of the charted systems to their chart colours.
func (r *Report) Colors() map[string]string {
	m := map[string]string{}
	for i, s := range r.Charted {
		m[s.ID] = seriesColor(Palette, i)
	}
	return m
}

var pageTmpl = template.Must(template.New("report").Parse(`<!DOCTYPE html>
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
<p class="sub">{{.R.Metric.Label}} · {{len .R.Table.Rows}} systems ({{.Ours}} ours, {{.Published}} published) · made by r2med {{.Version}} · benchmark: R2MED (<a href="https://arxiv.org/abs/2505.14558">Li et al., 2025</a>)</p>
{{if .R.Notes}}<ul class="notes">{{range .R.Notes}}<li>{{.}}</li>{{end}}</ul>{{end}}

<h2 id="leaderboard">Leaderboard</h2>
<p class="sub">Click a column heading to sort. Published rows are R2MED's released result files; ours are the runs found in the results directory.</p>
{{.Table}}

<h2 id="tasks">{{.R.Metric.Label}} per task</h2>
{{if .R.Charted}}<figure>{{.Bars}}<figcaption>{{.R.Bars.Desc}}</figcaption></figure>{{else}}<p class="sub">No systems to chart.</p>{{end}}

<h2 id="recall">Recall@k</h2>
{{if .Curves}}<div class="grid2">{{range .Curves}}<figure>{{.}}</figure>{{end}}</div>
<p class="sub">Curves use the recall cutoffs each result file holds (R2MED's BM25, GAR and reranker files: 1, 10, 25, 50, 100; its dense files, evaluated through BEIR: 1, 3, 5, 10, 100, 1000).</p>
{{else}}<p class="sub">No charted system has recall at two or more cutoffs.</p>{{end}}

<h2 id="scatter">Per-query comparison</h2>
{{if .R.Scatter}}<figure>{{.Scatter}}<figcaption>{{.R.Scatter.Desc}}</figcaption></figure>
{{else}}<p class="sub">{{.R.ScatterNote}}</p>{{end}}
{{range .R.Sections}}{{.}}{{end}}
<footer>Self-contained: this file loads nothing from the network. Charts are inline SVG; hover or focus a mark for its value, a legend key to bring its series forward.</footer>
</main>
<script>{{.Script}}</script>
</body>
</html>
`))

// WriteHTML writes the report as one self-contained HTML page.
func (r *Report) WriteHTML(w io.Writer) error {
	curves := make([]template.HTML, len(r.Curves))
	for i, c := range r.Curves {
		curves[i] = template.HTML(c.SVG())
	}
	ours, published := 0, 0
	for _, row := range r.Table.Rows {
		if row.System.Published {
			published++
		} else {
			ours++
		}
	}
	data := map[string]any{
		"R": r, "Version": results.Version(), "Style": Style(), "Script": Script(),
		"Table": Leaderboard(r.Table, r.Tasks, r.Colors()).HTML(), "Bars": template.HTML(r.Bars.SVG()),
		"Curves": curves, "Ours": ours, "Published": published,
	}
	if r.Scatter != nil {
		data["Scatter"] = template.HTML(r.Scatter.SVG())
	}
	return pageTmpl.Execute(w, data)
}

// WriteFile writes the HTML report to path atomically.
func (r *Report) WriteFile(path string) error {
	return fileio.WriteAtomic(path, r.WriteHTML)
}
