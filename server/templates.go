package server

import (
	"html/template"
	"net/url"
	"strconv"

	"github.com/r2med/r2med/leaderboard"
)

// snippetBytes is how much of a document the drill-down shows before
// "show all".
const snippetBytes = 480

var funcs = template.FuncMap{
	// html/template leaves "/", "?" and "#" alone in a URL's path, so an
	// id holding them would make another route; ids are escaped as one
	// path segment.
	"path":    url.PathEscape,
	"short":   leaderboard.ShortTaskName,
	"snippet": func(segs []Segment) []Segment { out, _ := Cut(segs, snippetBytes); return out },
	"long":    func(segs []Segment) bool { _, cut := Cut(segs, snippetBytes); return cut },
	"f3": func(v *float64) string {
		if v == nil {
			return "—"
		}
		return strconv.FormatFloat(*v, 'f', 3, 64)
	},
	"score": func(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) },
	"rank": func(n int) string {
		if n == 0 {
			return "not retrieved"
		}
		return "#" + strconv.Itoa(n)
	},
}

var layout = template.Must(template.New("layout").Funcs(funcs).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{block "title" .}}{{.Title}}{{end}}</title>
<style>{{.Style}}</style>
</head>
<body>
<nav class="top" aria-label="site"><a href="/">Leaderboard</a>{{range .Tasks}}<a href="/task/{{path .}}" title="{{.}}">{{short .}}</a>{{end}}</nav>
<main>
{{block "content" .}}{{end}}
</main>
<script>{{.Script}}</script>
</body>
</html>
`))

var pageBodies = map[string]string{
	"error": `{{define "title"}}{{.Heading}} — {{.Title}}{{end}}{{define "content"}}<h1>{{.Heading}}</h1><p class="notes">{{.Error}}</p>{{end}}`,

	"leaderboard": `{{define "content"}}<h1>{{.Title}}</h1>
<form class="inline" method="get" action="/">
<label>Metric <input name="metric" value="{{.Metric.Label}}" size="10"></label>
<label>Family <select name="family">
<option value="all">all tasks</option>
<option value="qa"{{if eq .Family "qa-reference"}} selected{{end}}>Q&amp;A reference</option>
<option value="evidence"{{if eq .Family "clinical-evidence"}} selected{{end}}>clinical evidence</option>
<option value="case"{{if eq .Family "clinical-case"}} selected{{end}}>clinical case</option>
</select></label>
<button class="btn" type="submit">Show</button>
<a href="{{.CSV}}">CSV</a> · <a href="{{.JSON}}">JSON</a> · <a href="/api/runs">runs (JSON)</a>
</form>
{{if .Notes}}<ul class="notes">{{range .Notes}}<li>{{.}}</li>{{end}}</ul>{{end}}
{{.Table}}
{{if .HasBars}}<h2>{{.Metric.Label}} per task</h2><figure>{{.Bars}}</figure>{{end}}
{{end}}`,

	"task": `{{define "title"}}{{.Task}} — {{.Title}}{{end}}{{define "content"}}<h1>{{.Task}}</h1>
<p class="sub">{{if .Family}}{{.Family}} · {{end}}{{len .Rows}} systems</p>
<div class="table-wrap"><table class="sortable"><thead><tr><th data-key="system">System</th><th data-key="source">Source</th>{{range .Metrics}}<th class="num" data-type="num" data-key="{{.Key}}">{{.Label}}</th>{{end}}</tr></thead>
<tbody>{{range .Rows}}<tr{{if not .Sys.Published}} class="ours"{{end}}><td class="sys">{{.Sys.Name}}</td><td>{{if .Sys.Published}}<span class="tag">published</span>{{else}}<span class="tag ours">ours</span>{{end}}</td>{{range .Cells}}<td class="num" data-v="{{.Sort}}">{{.Text}}</td>{{end}}</tr>
{{end}}</tbody></table></div>
{{if .Curve}}<h2>Recall@k</h2><figure>{{.Curve}}</figure>{{end}}
<h2>Queries</h2>
{{if .LoadError}}<p class="notes">Per-query values unavailable: {{.LoadError}}</p>
{{else if not .Systems}}<p class="sub">No system of ours has a run file on this task; published systems have only aggregate results.</p>
{{else}}<p class="sub">Per-query {{.Metric.Label}} of our systems; sort a column to find the queries a system fails, open one to see what it retrieved.</p>
<div class="table-wrap"><table class="sortable" id="queries"><thead><tr><th data-key="qid">Query</th><th data-key="text">Text</th>{{range .Systems}}<th class="num" data-type="num" data-key="{{.ID}}">{{.Name}}</th>{{end}}</tr></thead>
<tbody>{{range .Queries}}<tr><td><a href="/query/{{path $.Task}}/{{path .ID}}">{{.ID}}</a></td><td class="qtext" title="{{.Text}}">{{printf "%.90s" .Text}}</td>{{range .Cells}}<td class="num" data-v="{{.Sort}}">{{.Text}}</td>{{end}}</tr>
{{end}}</tbody></table></div>{{end}}
{{end}}`,

	"query": `{{define "title"}}{{.Q.Query.ID}} · {{.Q.Task}} — {{.Title}}{{end}}{{define "content"}}<p class="sub"><a href="/task/{{path .Q.Task}}">{{.Q.Task}}</a> › query {{.Q.Query.ID}}</p>
<h1>Query {{.Q.Query.ID}}</h1>
<div class="query" id="query-text">{{range .QuerySegs}}{{if .Match}}<mark>{{.Text}}</mark>{{else}}{{.Text}}{{end}}{{end}}</div>
<p class="terms">Index terms ({{len .Q.Terms}}): {{range $i, $t := .Q.Terms}}{{if $i}}, {{end}}{{$t}}{{end}}. Highlighted: words whose index term the query and the document share.</p>
{{if .Fields}}<table class="fields"><tbody>{{range $k, $v := .Fields}}<tr><th scope="row">{{$k}}</th><td>{{$v}}</td></tr>{{end}}</tbody></table>{{end}}
<h2>Relevant documents ({{len .Q.Relevant}})</h2>
{{range .Q.Relevant}}<div class="doc rel"><div class="meta"><span class="relmark">grade {{.Grade}}</span> · {{.ID}}{{if .Missing}} · not in the corpus{{end}}</div>
<div class="text">{{range snippet .Segments}}{{if .Match}}<mark>{{.Text}}</mark>{{else}}{{.Text}}{{end}}{{end}}{{if long .Segments}}…{{end}}</div>
{{if long .Segments}}<details><summary>show all</summary><div class="text">{{range .Segments}}{{if .Match}}<mark>{{.Text}}</mark>{{else}}{{.Text}}{{end}}{{end}}</div></details>{{end}}</div>
{{end}}
<h2>What each system retrieved (top {{.K}})</h2>
<div class="systems">{{range .Q.Systems}}<section class="system" data-system="{{.ID}}"><h3><span class="swatch" style="background:{{.Color}}"></span>{{.Name}}</h3>
<p class="sub">{{$.Metric.Label}} {{f3 .Value}} · relevant at: {{range $id, $r := .RelevantRanks}}<span title="{{$id}}">{{rank $r}}</span> {{end}}</p>
{{if .Error}}<p class="notes">{{.Error}}</p>{{end}}
<ol class="hits">{{range .Hits}}<li class="doc{{if .Relevant}} rel{{end}}"><div class="meta">#{{.Rank}} · {{.DocID}} · score {{score .Score}}{{if .Relevant}} · <span class="relmark">relevant (grade {{.Grade}})</span>{{end}}</div>
<div class="text">{{range snippet .Segments}}{{if .Match}}<mark>{{.Text}}</mark>{{else}}{{.Text}}{{end}}{{end}}{{if long .Segments}}…{{end}}</div>
{{if long .Segments}}<details><summary>show all</summary><div class="text">{{range .Segments}}{{if .Match}}<mark>{{.Text}}</mark>{{else}}{{.Text}}{{end}}{{end}}</div></details>{{end}}</li>
{{end}}</ol></section>
{{end}}</div>
{{end}}`,
}
