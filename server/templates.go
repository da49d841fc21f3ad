package server

import (
	"html/template"
	"net/url"
	"strconv"

	"github.com/r2med/r2med/internal/errtext"
	"github.com/r2med/r2med/internal/numtext"
	"github.com/r2med/r2med/leaderboard"
)

var funcs = template.FuncMap{
	// html/template leaves "/", "?" and "#" alone in a URL's path, so an
	// id holding them would make another route; ids are escaped as one
	// path segment.
	"path":  url.PathEscape,
	"count": errtext.Count,
	"short": leaderboard.ShortTaskName,
	// A per-query value and its change, with as many decimals as
	// compare and the report give them (numtext.QueryDecimals).
	"qv": func(v *float64) string {
		if v == nil {
			return "—"
		}
		return numtext.Query(*v)
	},
	"qvv":   numtext.Query,
	"delta": func(v float64) string { return numtext.Signed(v, numtext.QueryDecimals) },
	"sub":   func(a, b float64) float64 { return a - b },
	"score": func(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) },
	"rank": func(n int) string {
		if n == 0 {
			return "—"
		}
		return "#" + strconv.Itoa(n)
	},
	"sign": func(v float64) string {
		switch {
		case v > 0:
			return "delta-pos"
		case v < 0:
			return "delta-neg"
		}
		return ""
	},
	"cols": func(n int) string { return "rankgrid cols" + strconv.Itoa(min(n, 8)) },
	// The ranks of the relevant documents a system retrieved, best first,
	// and how many it did not retrieve.
	"relranks":   func(r SystemResults) []int { ranks, _ := r.RelevantAt(); return ranks },
	"relmissing": func(r SystemResults) int { _, m := r.RelevantAt(); return m },
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

// The pages carry no inline style attributes or event handlers: the CSP
// allows the one stylesheet and the one script, by hash.
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
{{if .Ours}}<label>Significance vs <select name="baseline"><option value="">(none)</option>{{range .Ours}}<option value="{{.ID}}" title="{{.About}}"{{if eq $.Baseline .ID}} selected{{end}}>{{.DisplayName}}</option>{{end}}</select></label>{{end}}
<button class="btn" type="submit">Show</button>
<a href="{{.CSV}}">CSV</a> · <a href="{{.JSON}}">JSON</a> · <a href="/api/runs">runs (JSON)</a>
</form>
{{if .Notes}}<ul class="notes">{{range .Notes}}<li>{{.}}</li>{{end}}</ul>{{end}}
{{.Table}}
{{if .HasBars}}<h2>{{.Metric.Label}} per task</h2><figure>{{.Bars}}</figure>{{end}}
{{end}}`,

	"task": `{{define "title"}}{{.Task}} — {{.Title}}{{end}}{{define "content"}}<h1>{{.Task}}</h1>
<p class="sub">{{if .Family}}{{.Family}} · {{end}}{{count (len .Rows) "system" "systems"}} · {{if .HasData}}<a href="/task/{{path .Task}}/data">dataset profile</a>{{else}}<span title="no run of ours on {{.Task}} names its data">dataset profile: r2med stats --task {{.Task}}</span>{{end}}{{if .Diff}} · <a href="{{.Diff}}">compare two systems</a>{{end}}</p>
<h2>Leaderboard on {{.Task}}</h2>
<p class="sub">Sorted by {{.Metric.Label}}; ranks by it as printed (values that print alike share a rank).</p>
<div class="table-wrap"><table class="sortable" id="task-board"><thead><tr><th class="num" data-type="num" data-key="rank">#</th><th data-key="system" class="sysname">System</th><th data-key="source">Source</th>{{range .Metrics}}<th class="num" data-type="num" data-key="{{.Key}}">{{.Label}}</th>{{end}}</tr></thead>
<tbody>{{range .Rows}}<tr class="{{.Sys.Origin}}"><td class="num" data-v="{{.Rank}}">{{.Rank}}</td><td class="sys sysname" title="{{.Sys.About}}">{{.Sys.DisplayName}}</td><td><span class="tag {{.Sys.Origin}}">{{.Sys.Origin}}</span></td>{{range .Cells}}<td class="num" data-v="{{.Sort}}"{{if .Title}} title="{{.Title}}"{{end}}>{{.Text}}{{if .Note}}<span class="note">{{.Note}}</span>{{end}}</td>{{end}}</tr>
{{end}}</tbody></table></div>
{{if .DepthNotes}}<ul class="legend-line" id="depth-notes">{{range .DepthNotes}}<li>{{.}}</li>{{end}}</ul>{{end}}
{{if .Curve}}<h2>Recall@k</h2><figure>{{.Curve}}</figure>{{end}}
<h2>Queries</h2>
{{if .LoadError}}<p class="notes">Per-query values unavailable: {{.LoadError}}</p>
{{else if not .Systems}}<p class="sub">No system of ours has a run file on this task; published and external systems have only aggregate results.</p>
{{else}}<p class="sub">Per-query {{.Metric.Label}} of our systems on every judged query ({{len .Queries}}); a query a system did not answer scores 0 (unanswered: {{range $i, $s := .Systems}}{{if $i}}, {{end}}{{$s.DisplayName}} {{index $.Unanswered $i}}{{end}}). Sort a column to find the queries a system fails; open one to see what each retrieved.</p>
<p class="sub" id="judged">judged@{{.JudgedK}}, the share of each system's top {{.JudgedK}} that the judgments cover{{if not .Pooled}} (they list relevant documents only, so here it is the share judged relevant){{end}}: {{range $i, $s := .Systems}}{{if $i}}, {{end}}{{$s.DisplayName}} {{index $.Judged $i}}{{end}}.</p>
<div class="table-wrap"><table class="sortable" id="queries"><thead><tr><th data-key="qid">Query</th><th data-key="text">Text</th>{{range $i, $s := .Systems}}<th class="num sysname" data-type="num" data-key="{{$s.ID}}" title="{{$s.About}}">{{$s.DisplayName}}{{with index $.Marks $i}} <span class="note">{{.}}</span>{{end}}</th>{{end}}</tr></thead>
<tbody>{{range .Queries}}<tr><td><a href="/query/{{path $.Task}}/{{path .ID}}">{{.ID}}</a></td><td class="qtext" title="{{.Text}}">{{printf "%.90s" .Text}}</td>{{range .Cells}}<td class="num" data-v="{{.Sort}}">{{.Text}}</td>{{end}}</tr>
{{end}}</tbody></table></div>{{end}}
{{end}}`,

	"data": `{{define "title"}}{{.Task}} data — {{.Title}}{{end}}{{define "content"}}<p class="sub"><a href="/task/{{path .Task}}">{{.Task}}</a> › dataset</p>
<h1>{{.Task}}: the data</h1>
<p class="sub">The profile r2med stats prints, of the data {{.From}} was run on.</p>
<pre class="query" id="profile">{{.Profile}}</pre>
<div class="grid2">
<section><h2>Relevant documents per query</h2>
<table class="sortable" id="rel-per-query"><thead><tr><th class="num" data-type="num">relevant</th><th class="num" data-type="num">queries</th></tr></thead><tbody>{{range .RelPerQuery}}<tr><td class="num" data-v="{{.Sort}}">{{.Value}}</td><td class="num">{{.N}}</td></tr>{{end}}</tbody></table>
{{if .Binned}}<p class="sub">Counts grouped in ranges that double (1, 2, 3–4, 5–8…): {{.Distinct}} different counts.</p>{{end}}</section>
<section><h2>body_system</h2>
{{if .Body}}<table class="sortable" id="body-system"><thead><tr><th>body_system</th><th class="num" data-type="num">queries</th></tr></thead><tbody>{{range .Body}}<tr><td>{{.Value}}</td><td class="num">{{.N}}</td></tr>{{end}}</tbody></table>
{{else}}<p class="sub">The queries carry no body_system field.</p>{{end}}</section>
</div>
{{end}}`,

	"query": `{{define "title"}}{{.Q.Query.ID}} · {{.Q.Task}} — {{.Title}}{{end}}{{define "content"}}<p class="sub"><a href="/task/{{path .Q.Task}}">{{.Q.Task}}</a> › query {{.Q.Query.ID}}</p>
<h1>Query {{.Q.Query.ID}}</h1>
<div class="query" id="query-text">{{range .QuerySegs}}{{if .Match}}<mark>{{.Text}}</mark>{{else}}{{.Text}}{{end}}{{end}}</div>
{{if .Fields}}<table class="fields"><tbody>{{range $k, $v := .Fields}}<tr><th scope="row">{{$k}}</th><td>{{$v}}</td></tr>{{end}}</tbody></table>{{end}}
<p class="terms">Index terms ({{len .Q.Terms}}): {{range $i, $t := .Q.Terms}}{{if $i}}, {{end}}{{$t}}{{end}}. Highlighted: words whose index term the query and the document share.</p>
<h2>What each system retrieved (top {{.K}})</h2>
<ul class="relat">{{range .Q.Systems}}<li data-system="{{.ID}}"><span class="sw c{{.Series}}"></span><b title="{{.About}}">{{.Name}}</b>: {{if .Error}}<span class="notes">{{.Error}}</span>{{else if not .Retrieved}}<span class="unanswered">no answer: its run ranks no document for this query, so it scores {{$.Metric.Label}} 0{{with len $.Q.Relevant}} and retrieves none of the {{.}} relevant{{end}}</span>{{else}}{{.Label}} {{qv .Value}} · {{template "relat" .}} · <span title="the share of its top {{.JudgedOf}} that the judgments cover (relevant or not)">judged@{{.JudgedOf}} {{.Judged}}/{{.JudgedOf}}</span>{{if .FewerJudged}} · <span class="warn">its top {{.JudgedOf}} holds {{.Unjudged}} unjudged document{{if ne .Unjudged 1}}s{{end}}: its score may understate it</span>{{end}}{{end}}</li>{{end}}</ul>
{{if .DepthNotes}}<ul class="legend-line" id="depth-notes">{{range .DepthNotes}}<li>{{.}}</li>{{end}}</ul>{{end}}
{{if not .Q.PooledJudgments}}<p class="sub">The judgments list relevant documents only: a document not marked ✓ is unjudged, not judged irrelevant.</p>{{end}}
<div class="{{cols .Cols}}" id="rank-grid">
<div class="head rk">#</div>{{range .Q.Systems}}<div class="head" title="{{.About}}"><span class="sw c{{.Series}}"></span>{{.Name}}</div>{{end}}
{{range .Grid}}<div class="rk">{{.Rank}}</div>{{range .Cells}}{{if .Hit}}{{with .Hit}}<div class="hit{{if .Relevant}} rel{{end}}{{if and $.Q.PooledJudgments (not .Judged)}} unjudged{{end}}"><div class="meta">{{if .Relevant}}<span class="relmark" title="judged relevant, grade {{.Grade}}">✓ {{.Grade}}</span> · {{else if and $.Q.PooledJudgments (not .Judged)}}<span class="unjudged-mark" title="not in the judgments: neither relevant nor irrelevant as far as the metric knows">unjudged</span> · {{end}}{{.DocID}} · {{score .Score}}</div><div class="text">{{range .Segments}}{{if .Match}}<mark>{{.Text}}</mark>{{else}}{{.Text}}{{end}}{{end}}{{if .Truncated}}…{{end}}</div>{{if .Truncated}}<button class="more" type="button" data-doc="/api/doc/{{path $.Q.Task}}/{{path .DocID}}">show more</button>{{end}}</div>{{end}}{{else if .Note}}<div class="hit empty">{{.Note}}</div>{{else}}<div class="hit empty" aria-hidden="true"></div>{{end}}{{end}}
{{end}}</div>
<details id="relevant-docs"><summary>Relevant documents ({{len .Q.Relevant}}), in full</summary>
{{range .Q.Relevant}}<div class="doc rel"><div class="meta"><span class="relmark">grade {{.Grade}}</span> · {{.ID}}{{if .Missing}} · not in the corpus{{end}}</div>
<div class="text">{{range .Segments}}{{if .Match}}<mark>{{.Text}}</mark>{{else}}{{.Text}}{{end}}{{end}}{{if .Truncated}}…{{end}}</div>
{{if .Truncated}}<button class="more" type="button" data-doc="/api/doc/{{path $.Q.Task}}/{{path .ID}}">show more</button>{{end}}</div>
{{end}}</details>
{{end}}
{{define "relat"}}{{with relranks .}}relevant at {{range $i, $r := .}}{{if $i}}, {{end}}<b>#{{$r}}</b>{{end}}{{with relmissing $}}; {{.}} not retrieved{{end}}{{else}}{{with relmissing .}}none of the {{.}} relevant retrieved{{else}}no relevant document judged{{end}}{{end}}{{end}}`,

	"diff": `{{define "title"}}{{.A.DisplayName}} vs {{.B.DisplayName}} · {{.Task}} — {{.Title}}{{end}}{{define "content"}}<p class="sub"><a href="/task/{{path .Task}}">{{.Task}}</a> › diff</p>
<h1 class="sysname"><span title="{{.B.About}}">{{.B.DisplayName}}</span> vs <span title="{{.A.About}}">{{.A.DisplayName}}</span> on {{.Task}}</h1>
<form class="inline" method="get" action="/diff/{{path .Task}}">
<label>A <select name="a">{{range .Systems}}<option value="{{.ID}}" title="{{.About}}"{{if eq .ID $.A.ID}} selected{{end}}>{{.DisplayName}}</option>{{end}}</select></label>
<label>B <select name="b">{{range .Systems}}<option value="{{.ID}}" title="{{.About}}"{{if eq .ID $.B.ID}} selected{{end}}>{{.DisplayName}}</option>{{end}}</select></label>
<label>Metric <input name="metric" value="{{.Metric.Label}}" size="10"></label>
<button class="btn" type="submit">Compare</button></form>
<p class="sub" id="diff-summary">{{.Metric.Label}} on every judged query: N = {{.N}} ({{.UnA}} unanswered by A, {{.UnB}} by B, scored 0). B better on {{.Wins}}, A on {{.Losses}}, equal on {{.Ties}}. judged@{{.JudgedK}}: A {{.JudgedA}}, B {{.JudgedB}}{{if not .Pooled}} (the judgments list relevant documents only){{end}}.</p>
{{if .DepthNotes}}<ul class="legend-line" id="depth-notes">{{range .DepthNotes}}<li>{{.}}</li>{{end}}</ul>{{end}}
{{if .Query}}<h2>Query {{.Query.ID}}: {{qvv .SelA}} → {{qvv .SelB}}{{if ne .SelA .SelB}} (Δ {{delta (sub .SelB .SelA)}}){{end}}</h2>
<div class="query">{{.Query.Text}}</div>
<div class="grid2">
<section><h3>Only in A's top {{.K}} ({{len .OnlyA}}{{with .RelOnlyA}}, {{.}} relevant{{end}})</h3>{{if .OnlyA}}<ul id="only-a">{{range .OnlyA}}<li{{if gt .Grade 0}} class="rel"{{end}}>#{{.RankA}} {{.DocID}} {{template "judgment" .}} <span class="sub">{{if .RankB}}(B: #{{.RankB}}){{else}}(not in B's run){{end}}</span></li>{{end}}</ul>{{else}}<p class="sub" id="only-a">B's top {{.K}} holds every one of them.</p>{{end}}</section>
<section><h3>Only in B's top {{.K}} ({{len .OnlyB}}{{with .RelOnlyB}}, {{.}} relevant{{end}})</h3>{{if .OnlyB}}<ul id="only-b">{{range .OnlyB}}<li{{if gt .Grade 0}} class="rel"{{end}}>#{{.RankB}} {{.DocID}} {{template "judgment" .}} <span class="sub">{{if .RankA}}(A: #{{.RankA}}){{else}}(not in A's run){{end}}</span></li>{{end}}</ul>{{else}}<p class="sub" id="only-b">A's top {{.K}} holds every one of them.</p>{{end}}</section>
</div>
<h3>Rank changes (the top {{.K}} of either, and every relevant document)</h3>
<div class="table-wrap"><table class="sortable" id="doc-diff"><thead><tr><th data-key="doc">Document</th><th class="num" data-type="num">rel</th><th class="num" data-type="num">A</th><th class="num" data-type="num">B</th><th>change</th><th>text</th></tr></thead>
<tbody>{{range .Docs}}<tr{{if gt .Grade 0}} class="ours"{{end}}><td>{{.DocID}}</td><td class="num">{{template "judgment" .}}</td><td class="num" data-v="{{.RankA}}">{{rank .RankA}}</td><td class="num" data-v="{{.RankB}}">{{rank .RankB}}</td><td>{{.Change}}</td><td class="qtext" title="{{.Snippet}}">{{printf "%.70s" .Snippet}}</td></tr>{{end}}</tbody></table></div>
{{end}}
<h2>Per-query change (B − A), largest gain first</h2>
<div class="table-wrap"><table class="sortable" id="deltas"><thead><tr><th data-key="qid">Query</th><th data-key="text">Text</th><th class="num" data-type="num">A</th><th class="num" data-type="num">B</th><th class="num" data-type="num" data-key="delta">Δ</th></tr></thead>
<tbody>{{range .Rows}}<tr><td><a href="/diff/{{path $.Task}}?a={{$.A.ID}}&amp;b={{$.B.ID}}&amp;q={{.ID}}">{{.ID}}</a></td><td class="qtext" title="{{.Text}}">{{printf "%.80s" .Text}}</td><td class="num">{{qvv .A}}</td><td class="num">{{qvv .B}}</td><td class="num {{sign .Delta}}" data-v="{{.Delta}}">{{delta .Delta}}</td></tr>
{{end}}</tbody></table></div>
{{end}}
{{define "judgment"}}{{if gt .Grade 0}}<span class="relmark" title="judged relevant, grade {{.Grade}}">✓ {{.Grade}}</span>{{else if not .Pooled}}{{else if .Judged}}<span class="sub" title="judged, grade {{.Grade}}: not relevant">✗</span>{{else}}<span class="sub unjudged-mark" title="not in the judgments">unjudged</span>{{end}}{{end}}`,
}
