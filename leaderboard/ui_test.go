package leaderboard

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/r2med/r2med/internal/latextest"
	"github.com/r2med/r2med/results"
	"github.com/r2med/r2med/significance"
	"github.com/r2med/r2med/tasks"
	"github.com/r2med/r2med/usage"
)

const externalDir = "../../shared/data/external-results"

// TestExternalFileIsFresh converts the external-results directory again
// and requires the committed external.json byte for byte (go generate
// ./leaderboard rewrites it).
func TestExternalFileIsFresh(t *testing.T) {
	needShared(t, externalDir)
	ss, err := ReadExternal(externalDir)
	if err != nil {
		t.Fatal(err)
	}
	got, err := EncodeExternal(ss)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, externalJSON) {
		t.Fatal("external.json differs from a fresh conversion of " + externalDir + "; run go generate ./leaderboard")
	}
}

// TestExternal checks the shipped external figures against the source
// CSV's printed values: 19 + 2 + 1 systems, never marked published, the
// RaDeR quirk shown (printed 35.19, recomputed 35.22), InsertRank an
// average-only row in the average view only.
func TestExternal(t *testing.T) {
	es, err := Externals()
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 22 {
		t.Fatalf("%d external systems, want 22", len(es))
	}
	for _, s := range es {
		if s.Published || s.Origin() != OriginExternal || s.External.Reference == "" {
			t.Errorf("%s: published %v origin %s reference %q", s.ID, s.Published, s.Origin(), s.External.Reference)
		}
	}
	tb := build(t, append(pubSystems(t), es...), Options{})
	top := tb.Rows[0]
	if !top.AverageOnly || !strings.HasPrefix(top.System.Name, "InsertRank") || tb.AverageText(top) != "51.1 (printed)" || top.Rank != 1 {
		t.Errorf("first row %s (%s, rank %d), want InsertRank's printed 51.1", top.System.Name, tb.AverageText(top), top.Rank)
	}
	re := row(t, tb, "ReasonEmbed-Qwen3-8B")
	if got := tb.AverageText(re); got != "43.18" || re.Scores[0].Value != 0.5401 || re.Rank != 2 {
		t.Errorf("ReasonEmbed-Qwen3-8B: avg %s, Biology %v, rank %d", got, re.Scores[0].Value, re.Rank)
	}
	if got := tb.AverageText(row(t, tb, "RaDeR-gte-Qwen2-7B")); got != "35.22 (printed 35.19)" {
		t.Errorf("RaDeR average %q: the printed/recomputed quirk must show", got)
	}
	// Per-family or other-metric views have no average-only rows, and
	// external rows lack every metric but nDCG@10.
	for _, opt := range []Options{{Family: "clinical-case"}, {Metric: Metric{Key: "recall_at_100", Label: "Recall@100"}}} {
		tb := build(t, append(pubSystems(t), es...), opt)
		for _, r := range tb.Rows {
			if r.AverageOnly || (opt.Metric.Key != "" && r.System.External != nil) {
				t.Errorf("%+v: row %s should not be there", opt, r.System.Name)
			}
		}
	}
	var b strings.Builder
	if err := tb.Write(&b, CSV); err != nil {
		t.Fatal(err)
	}
	recs, _ := csv.NewReader(strings.NewReader(b.String())).ReadAll()
	found := false
	for _, rec := range recs {
		if rec[1] == "RaDeR-gte-Qwen2-7B" {
			found = rec[4] == "external" && rec[13] == "35.22" && rec[15] == "35.19" && strings.Contains(rec[16], "ReasonEmbed")
		}
	}
	if !found {
		t.Errorf("CSV lacks RaDeR as external with both averages and its source:\n%s", b.String()[:400])
	}
}

// TestIncompleteNotRanked: a system missing tasks has no rank and sorts
// after the complete ones, even when its partial mean is higher.
func TestIncompleteNotRanked(t *testing.T) {
	nan := math.NaN()
	ss := synthetic(map[string][]float64{"full": {.1, .1, .1, .1, .1, .1, .1, .1}, "part": {.9, .9, nan, .9, .9, .9, .9, .9}})
	tb := build(t, ss, Options{})
	if tb.Rows[0].System.Name != "full" || tb.Rows[0].Rank != 1 || tb.Rows[1].Rank != 0 || tb.AverageText(tb.Rows[1]) != "— (7/8)" {
		t.Errorf("rows %s/%d, %s/%d", tb.Rows[0].System.Name, tb.Rows[0].Rank, tb.Rows[1].System.Name, tb.Rows[1].Rank)
	}
}

// TestPinOurs: with PinOurs our systems come first, ranks unchanged.
func TestPinOurs(t *testing.T) {
	ours := synthetic(map[string][]float64{"mine": {0, 0, 0, 0, 0, 0, 0, 0}})
	tb := build(t, append(ours, pubSystems(t)...), Options{PinOurs: true})
	if r := tb.Rows[0]; r.System.Name != "mine" || r.Rank != 72 {
		t.Errorf("first row %s rank %d, want mine ranked 72", r.System.Name, r.Rank)
	}
	if r := tb.Rows[1]; r.Rank != 1 {
		t.Errorf("second row rank %d, want 1", r.Rank)
	}
}

// TestMetricNames: unknown cutoffs are usage errors that list the valid
// names (r2med leaderboard exits 2, serve answers 400).
func TestMetricNames(t *testing.T) {
	for _, in := range []string{"ndcg@11", "ndcg@9999", "recall.7", "ndcg_at_2"} {
		_, err := ParseMetric(in)
		var ue *UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), "ndcg@10") || !strings.Contains(err.Error(), "recall@1000") {
			t.Errorf("ParseMetric(%q) = %v; want a usage error listing the valid metrics", in, err)
		}
	}
	for _, in := range []string{"ndcg@1000", "recall@25", "p@5", "map_cut.50", "NDCG@3"} {
		if _, err := ParseMetric(in); err != nil {
			t.Errorf("ParseMetric(%q): %v", in, err)
		}
	}
}

// TestFusionAndNames: a fused run is kind fusion and named by method and
// parts, from the manifest's settings; a run given a name keeps it; a
// fused reranked run is a reranker over rrf(…).
func TestFusionAndNames(t *testing.T) {
	root := t.TempDir()
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	fused := map[string]any{"retriever": "bm25", "bm25_scheme": "r2med", "fuse": map[string]any{"method": "rrf", "k": 60},
		"also": []any{map[string]any{"retriever": "dense", "model": "bge"}}}
	writeRun(t, filepath.Join(root, "rrf"), "demo", t0, fused, &results.R2MED{DatasetName: "demo", ModelName: "bm25+bge", Test: map[string]float64{"ndcg_at_10": .5}})
	rr := map[string]any{"retriever": "bm25", "fusion": map[string]any{"method": "combsum", "retrievers": []any{"bm25-lucene", "nv"}}, "rerank": map[string]any{"kind": "tei"}}
	writeRun(t, filepath.Join(root, "rr"), "demo", t0, rr, &results.R2MED{DatasetName: "demo", Test: map[string]float64{"ndcg_at_10": .6},
		Extra: map[string]any{"reranker_name": "tei", "retriever_name": "bm25-lucene+nv", "topk": 10}})
	named := map[string]any{"retriever": "bm25", "name": "my baseline"}
	writeRun(t, filepath.Join(root, "named"), "demo", t0, named, &results.R2MED{DatasetName: "demo", ModelName: "bm25", Test: map[string]float64{"ndcg_at_10": .4}})
	l, err := results.Scan(root)
	if err != nil {
		t.Fatal(err)
	}
	ss, _ := Ours(l)
	got := map[string]Kind{}
	for _, s := range ss {
		got[s.Name] = s.Kind
	}
	want := map[string]Kind{"rrf(bm25,bge)": Fusion, "combsum(bm25-lucene,nv) → tei@10": Reranker, "my baseline": Base}
	for n, k := range want {
		if got[n] != k {
			t.Errorf("system %q kind %q; have %v", n, k, got)
		}
	}
	// Exports carry our runs on non-R2MED data with the page's names.
	tb := build(t, ss, Options{PinOurs: true})
	if len(tb.OtherTasks) != 1 || tb.OtherTasks[0] != "demo" {
		t.Fatalf("other tasks %v", tb.OtherTasks)
	}
	var b strings.Builder
	if err := tb.Write(&b, JSON); err != nil {
		t.Fatal(err)
	}
	var j JSONTable
	if err := json.Unmarshal([]byte(b.String()), &j); err != nil {
		t.Fatal(err)
	}
	for _, r := range j.Rows {
		if r.Scores["demo"] == nil || r.Source != OriginOurs {
			t.Errorf("json row %s: demo score %v, source %s", r.Name, r.Scores["demo"], r.Source)
		}
		if r.Name == "rrf(bm25,bge)" && (r.Kind != Fusion || *r.Scores["demo"] != .5) {
			t.Errorf("fused row %+v", r)
		}
	}
	b.Reset()
	if err := tb.Write(&b, CSV); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `"rrf(bm25,bge)","ours/rrf(bm25,bge)",fusion,ours,`) || !strings.Contains(strings.Split(b.String(), "\n")[0], ",demo,") {
		t.Errorf("CSV lacks the fused row or the demo column:\n%s", b.String())
	}
}

// TestMarkAgainst: cells that differ from the baseline on many queries
// get ‡, cells on noise none; Holm is over each row's tasks.
func TestMarkAgainst(t *testing.T) {
	ss := synthetic(map[string][]float64{"base": {.5, .5, .5, .5, .5, .5, .5, .5}, "better": {.9, .5, .5, .5, .5, .5, .5, .5}})
	for i := range ss { // and a task of ours outside R2MED's, a column after the average
		ss[i].Tasks["demo"] = TaskResult{Metrics: map[string]float64{"ndcg_at_10": map[string]float64{"base": .5, "better": .8}[ss[i].Name]}}
	}
	tb := build(t, ss, Options{})
	values := func(id, task string) (significance.Values, error) {
		v := significance.Values{ByQuery: map[string]float64{}}
		for i := range 40 {
			x := float64(i%7) / 10
			if id == "x/better" && (task == "Biology" || task == "demo") {
				x += .3 // better on every query of one task
			} else if id == "x/better" && i%2 == 0 {
				x += .01 // noise elsewhere
			} else if id == "x/better" {
				x -= .01
			}
			v.ByQuery[string(rune('a'+i%26))+string(rune('a'+i/26))] = x
		}
		return v, nil
	}
	var base *System
	for i := range ss {
		if ss[i].Name == "base" {
			base = &ss[i]
		}
	}
	if _, err := tb.MarkAgainst(base, values, significance.Options{}); err != nil {
		t.Fatal(err)
	}
	r := row(t, tb, "better")
	if r.Scores[0].Mark != Mark01 {
		t.Errorf("Biology mark %q (p %v), want ‡", r.Scores[0].Mark, r.Scores[0].P)
	}
	for j := 1; j < 8; j++ {
		if r.Scores[j].Mark != "" {
			t.Errorf("%s marked %q at p %v", tb.Tasks[j], r.Scores[j].Mark, r.Scores[j].P)
		}
	}
	if b := row(t, tb, "base"); !math.IsNaN(b.Scores[0].P) {
		t.Error("the baseline's own cells were tested")
	}
	var out strings.Builder
	if err := tb.Write(&out, Terminal); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "90.00‡*") || !strings.Contains(out.String(), "differs from the baseline base") {
		t.Errorf("terminal lacks the mark or its legend:\n%s", out.String())
	}
	out.Reset()
	if err := tb.Write(&out, LaTeX); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`\toprule`, `\textbf{90.00}$^{\ddagger}$`, "paired randomization", `\bottomrule`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("LaTeX lacks %q:\n%s", want, out.String())
		}
	}
	latextest.Compile(t, out.String())
	// CSV names the marked cells in its marks column, the columns after
	// the average too, as the other formats mark them in their cells.
	out.Reset()
	if err := tb.Write(&out, CSV); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), ",Biology‡ demo‡\n") && !strings.Contains(out.String(), ",Biology‡ demo‡\r\n") {
		t.Errorf("CSV marks column, want \"Biology‡ demo‡\" on better's row:\n%s", out.String())
	}
}

// TestLaTeXPublished: the published table with external rows compiles.
func TestLaTeXPublished(t *testing.T) {
	es, err := Externals()
	if err != nil {
		t.Fatal(err)
	}
	tb := build(t, append(pubSystems(t), es...), Options{})
	var b strings.Builder
	if err := tb.Write(&b, LaTeX); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `query2doc/gpt4 $\rightarrow$ nv`) || !strings.Contains(b.String(), `(printed 35.19)`) {
		t.Errorf("LaTeX rows:\n%s", b.String()[:600])
	}
	latextest.Compile(t, b.String())
}

// TestCostColumns: when some run called a model, every format shows each
// row's cost per query beside its scores (dollars when a run was priced,
// "—" where a row has none), from the manifests' usage over the tasks
// shown; a table of free or unknown runs has no cost columns.
func TestCostColumns(t *testing.T) {
	price := func(usd float64) *float64 { return &usd }
	sum := func(queries int, prompt, seconds float64, usd *float64) *usage.Summary {
		return &usage.Summary{Calls: 1, Queries: queries, PerQuery: &usage.PerQuery{PromptTokens: prompt, Seconds: seconds, USD: usd}}
	}
	ss := synthetic(map[string][]float64{"bm25": {.5, .5, .5, .5, .5, .5, .5, .5}, "rerank": {.6, .6, .6, .6, .6, .6, .6, .6}, "old": {.4, .4, .4, .4, .4, .4, .4, .4}})
	for i := range ss {
		for task, tr := range ss[i].Tasks {
			switch ss[i].Name {
			case "bm25":
				tr.Usage = &usage.Summary{Queries: 10, PerQuery: &usage.PerQuery{}}
			case "rerank":
				tr.Usage = sum(10, 2000, 1.5, price(0.004))
				if task == "Biology" {
					tr.Usage = sum(30, 6000, 0.5, price(0.012)) // weighted by its 30 queries
				}
			}
			ss[i].Tasks[task] = tr
		}
	}
	tb := build(t, ss, Options{})
	if !tb.Costs || !tb.CostUSD {
		t.Fatalf("costs %v, dollars %v", tb.Costs, tb.CostUSD)
	}
	r := row(t, tb, "rerank")
	// 7 tasks × 10 queries at 2000 tokens, 1 × 30 at 6000: 320000/100.
	if c := r.Cost; c == nil || c.Queries != 100 || c.Tokens() != 3200 || !near(c.Seconds, (7*15+15)/100.0) || !near(*c.USD, (7*0.04+0.36)/100) {
		t.Fatalf("cost %+v", r.Cost)
	}
	if c := row(t, tb, "bm25").Cost; c == nil || *c.USD != 0 || c.Tokens() != 0 {
		t.Errorf("a run that called nothing costs nothing: %+v", c)
	}
	if row(t, tb, "old").Cost != nil {
		t.Error("a run without usage has a cost")
	}
	var term, md, csvOut, js, tex strings.Builder
	for f, b := range map[Format]*strings.Builder{Terminal: &term, Markdown: &md, CSV: &csvOut, JSON: &js, LaTeX: &tex} {
		if err := tb.Write(b, f); err != nil {
			t.Fatal(err)
		}
	}
	for _, want := range []string{"$/q  tok/q  s/q", "0.0064   3200  1.2", "0      0    0", "—      —    —", "cost per query of our runs' model calls over the tasks shown ($/q: dollars"} {
		if !strings.Contains(term.String(), want) {
			t.Errorf("terminal lacks %q:\n%s", want, term.String())
		}
	}
	if !strings.Contains(md.String(), "| Avg | $/q | tok/q | s/q |") || !strings.Contains(md.String(), "| **60.00** | 0.0064 | 3200 | 1.2 |") {
		t.Errorf("markdown:\n%s", md.String())
	}
	if !strings.Contains(csvOut.String(), ",usd_per_query,tokens_per_query,seconds_per_query") || !strings.Contains(csvOut.String(), ",0.0064,3200,1.2") {
		t.Errorf("csv:\n%s", csvOut.String())
	}
	var jt struct{ Rows []JSONRow }
	if err := json.Unmarshal([]byte(js.String()), &jt); err != nil || jt.Rows[0].Cost == nil || jt.Rows[0].Cost.Tokens() != 3200 || jt.Rows[2].Cost != nil {
		t.Errorf("json rows %+v %v", jt.Rows, err)
	}
	if !strings.Contains(tex.String(), `\$/q & tok/q & s/q \\`) {
		t.Errorf("latex:\n%s", tex.String())
	}
	latextest.Compile(t, tex.String())

	var others []System
	for _, s := range ss {
		if s.Name != "rerank" {
			others = append(others, s)
		}
	}
	if free := build(t, others, Options{}); free.Costs {
		t.Error("free and unknown runs alone show cost columns")
	}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// TestCoarsePrintedCellsExplained reads the external-results CSVs for
// cells printed with fewer than two decimals (R2MED's website prints
// o3-mini + BM25's IIYi-Clinical as 7.8: a digit may be lost) and requires
// every format a reader sees to say so beside the row: the cells show two
// decimals ("7.80"), so the table, Markdown and LaTeX must carry the note
// the CSV and JSON formats already carry, naming the task and the value
// as printed.
func TestCoarsePrintedCellsExplained(t *testing.T) {
	needShared(t, externalDir)
	type coarse struct{ system, task, value string }
	var want []coarse
	for _, name := range []string{"reasonembed-table3.csv", "r2med-website.csv"} {
		for _, rec := range readCSVFile(t, filepath.Join(externalDir, name))[1:] {
			for j, task := range TaskNames("") {
				if v := rec[3+j]; decimals(v) < 2 {
					want = append(want, coarse{rec[0], task, v})
				}
			}
		}
	}
	if len(want) == 0 {
		t.Fatal("no cell printed with fewer than two decimals in " + externalDir + "; the test has nothing to check")
	}
	es, err := Externals()
	if err != nil {
		t.Fatal(err)
	}
	tb := build(t, append(pubSystems(t), es...), Options{})
	for _, f := range []Format{Terminal, Markdown, LaTeX, CSV, JSON} {
		var b strings.Builder
		if err := tb.Write(&b, f); err != nil {
			t.Fatal(err)
		}
		for _, c := range want {
			if !strings.Contains(b.String(), c.system+": printed with fewer than two decimals") && f != CSV && f != JSON ||
				!strings.Contains(b.String(), c.task+" "+c.value) {
				t.Errorf("%s: no note that %s's %s was printed %s", f, c.system, c.task, c.value)
			}
		}
	}
}

// TestCSVPrintedAverageOnlyBesideItsAverage: the csv format's printed_avg
// is the paper's 8-task average (reasonembed-table3.csv's avg column, as
// printed) in the view whose avg is that average, and empty in a family
// or --tasks view, whose avg is over other tasks: 43.18 printed beside a
// Q&A average of 62.66 reads as a disagreement that is none.
func TestCSVPrintedAverageOnlyBesideItsAverage(t *testing.T) {
	path := filepath.Join(externalDir, "reasonembed-table3.csv")
	needShared(t, path)
	printed := map[string]string{}
	for _, rec := range readCSVFile(t, path)[1:] {
		printed[rec[0]] = rec[2]
	}
	es, err := Externals()
	if err != nil {
		t.Fatal(err)
	}
	for _, opt := range []Options{{}, {Family: tasks.QAReference}, {Tasks: []string{"Biology", "MedQA-Diag"}}} {
		tb := build(t, append(pubSystems(t), es...), opt)
		var b strings.Builder
		if err := tb.Write(&b, CSV); err != nil {
			t.Fatal(err)
		}
		rows, err := csv.NewReader(strings.NewReader(b.String())).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		col := map[string]int{}
		for i, h := range rows[0] {
			col[h] = i
		}
		seen := 0
		for _, r := range rows[1:] {
			want, ok := printed[r[col["system"]]]
			if !ok {
				continue
			}
			seen++
			if opt.Family != "" || len(opt.Tasks) > 0 {
				want = ""
			}
			if got := r[col["printed_avg"]]; got != want {
				t.Errorf("%+v: %s printed_avg %q beside avg %s; want %q", opt, r[col["system"]], got, r[col["avg"]], want)
			}
		}
		if seen < 15 {
			t.Errorf("%+v: %d of the table's rows in the csv", opt, seen)
		}
	}
}

// TestRunsSuiteOnlyForBenchmarkTasks: `r2med results` names a run's
// suite only where the run is on a benchmark's task: R2MED's Biology
// (r2med), NanoR2MED's split (nano), BRIGHT's biology (bright); a run on
// the demo or on NFCorpus (../shared/data/nfcorpus, BEIR) is in no suite
// and shows "—", not "r2med".
func TestRunsSuiteOnlyForBenchmarkTasks(t *testing.T) {
	run := func(name, split string) results.Run {
		return results.Run{Dir: name, Rel: name, Result: &results.R2MED{ModelName: "bm25", Test: map[string]float64{"ndcg_at_10": 0.5}},
			Manifest: &results.Manifest{Task: results.TaskInfo{Name: name, Split: split}}}
	}
	l := &results.Listing{Root: "out", Runs: []results.Run{run("Biology", ""), run("NanoR2MEDBiology", ""), run("BRIGHT-biology", ""), run("demo", ""), run("nfcorpus", "test")}}
	want := []string{"r2med", "nano", "bright", "", ""}
	for i, r := range Runs(l) {
		if r.Suite != want[i] {
			t.Errorf("%s: suite %q, want %q", r.Task, r.Suite, want[i])
		}
	}
	var b strings.Builder
	if err := WriteRuns(&b, l, Markdown, 0); err != nil {
		t.Fatal(err)
	}
	for _, task := range []string{"demo", "nfcorpus"} {
		if !strings.Contains(b.String(), "| "+task+" | bm25 | — |") {
			t.Errorf("%s's row does not show its suite as —:\n%s", task, b.String())
		}
	}
}

// TestUSDTextNoExponent: the $/q column wrote a cheap pipeline's
// $0.0000988 a query as 9.88e-05.
func TestUSDTextNoExponent(t *testing.T) {
	for v, want := range map[float64]string{0.0000988: "0.0000988", 0.0064: "0.0064", 0: "0", 2.5: "2.50"} {
		if got := usage.USDNumber(v); got != want {
			t.Errorf("USDText(%v) = %q, want %q", v, got, want)
		}
	}
}
