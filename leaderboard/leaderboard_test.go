package leaderboard

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/r2med/r2med/results"
	"github.com/r2med/r2med/tasks"
)

const (
	official = "../../shared/data/r2med-official-results"
	notes    = "../../shared/docs/r2med-reference-notes.md"
)

func needShared(t *testing.T, path string) {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		t.Skipf("shared reference data not found at %s: %v", path, err)
	}
}

// TestPublishedFileIsFresh converts R2MED's results directory again and
// requires the committed published.json byte for byte, so the data file
// cannot drift from its source (go generate ./leaderboard rewrites it).
func TestPublishedFileIsFresh(t *testing.T) {
	needShared(t, official)
	ss, err := ReadOfficial(official)
	if err != nil {
		t.Fatal(err)
	}
	got, err := EncodePublished(ss)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, publishedJSON) {
		t.Fatal("published.json differs from a fresh conversion of " + official + "; run go generate ./leaderboard")
	}
}

func pubSystems(t *testing.T) []System {
	t.Helper()
	ss, err := Published()
	if err != nil {
		t.Fatal(err)
	}
	return ss
}

// readCSVFile reads a reference CSV whole.
func readCSVFile(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// summaryID is the system ID of a row of R2MED's summary or all-results
// CSV, get reading its columns by name.
func summaryID(get func(string) string) string {
	switch get("family") {
	case "base_retriever":
		return "base/" + get("retriever")
	case "gar":
		return "gar/" + get("method") + "/" + get("llm") + "/" + get("retriever")
	case "reranker":
		return "reranker/" + get("reranker") + "/" + get("retriever") + "/top_" + get("rerank_topk")
	}
	return ""
}

func build(t *testing.T, ss []System, opt Options) *Table {
	t.Helper()
	tb, err := Build(ss, opt)
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

func row(t *testing.T, tb *Table, name string) Row {
	t.Helper()
	for _, r := range tb.Rows {
		if r.System.Name == name {
			return r
		}
	}
	t.Fatalf("no row %q", name)
	return Row{}
}

// TestPublishedAverages checks the embedded data against R2MED's figures
// as the reference notes (section 2) quote them.
func TestPublishedAverages(t *testing.T) {
	ss := pubSystems(t)
	if len(ss) != 71 {
		t.Fatalf("%d published systems, want 71", len(ss))
	}
	kinds := map[Kind]int{}
	files := 0
	for _, s := range ss {
		kinds[s.Kind]++
		files += len(s.Tasks)
	}
	if kinds[Base] != 15 || kinds[GAR] != 53 || kinds[Reranker] != 3 || files != 568 {
		t.Errorf("kinds %v, %d task results; want 15 base, 53 gar, 3 reranker, 568", kinds, files)
	}
	ndcg := build(t, ss, Options{})
	for name, want := range map[string]string{
		"nv": "31.43", "grit": "31.12", "sfr": "30.65", "bmr-7b": "30.18", "bm25": "15.13", "medcpt": "7.87",
		"query2doc/gpt4 → nv": "41.65", "hyde/huatuo-o1-70b → nv": "39.56", "hyde/qwen-72b → bge": "26.89",
		"nv → rankllama@10": "29.93", "nv → monobert@10": "26.47", "nv → bge-reranker@10": "25.55",
	} {
		if got := ndcg.AverageText(row(t, ndcg, name)); got != want {
			t.Errorf("%s: nDCG@10 average %s, want %s", name, got, want)
		}
	}
	if r := ndcg.Rows[0]; r.System.Name != "query2doc/gpt4 → nv" || r.Rank != 1 {
		t.Errorf("first row %s (rank %d), want query2doc/gpt4 → nv", r.System.Name, r.Rank)
	}
	recall := build(t, ss, Options{Metric: Metric{Key: "recall_at_100", Label: "Recall@100"}})
	for name, want := range map[string]string{"nv": "68.06", "grit": "69.20", "bm25": "44.52", "medcpt": "27.07"} {
		if got := recall.AverageText(row(t, recall, name)); got != want {
			t.Errorf("%s: Recall@100 average %s, want %s", name, got, want)
		}
	}
	// Dense files carry no MRR: missing, not zero.
	mrr := build(t, ss, Options{Metric: Metric{Key: "mrr", Label: "MRR"}})
	if r := row(t, mrr, "nv"); r.Complete || r.Have != 0 || r.Scores[0].OK {
		t.Errorf("nv MRR: complete %v have %d; want missing everywhere", r.Complete, r.Have)
	}
	if r := row(t, mrr, "bm25"); !r.Complete {
		t.Error("bm25 has MRR on every task")
	}
}

// TestMarkdownIsThePublishedTable renders the published systems as
// markdown and requires the reference notes' 71-row table line for line,
// but for the depth of the three rerankers: the notes write "nv →
// rankllama@top10", r2med's one naming rule (sysname) "nv →
// rankllama@10", as it names our reranked runs.
func TestMarkdownIsThePublishedTable(t *testing.T) {
	needShared(t, notes)
	data, err := os.ReadFile(notes)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	in := false
	for _, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(l, "| # | system | Biology |") {
			in = true
		}
		if in && !strings.HasPrefix(l, "|") {
			break
		}
		if in {
			want = append(want, strings.Replace(l, "@top10 |", "@10 |", 1))
		}
	}
	if len(want) != 73 {
		t.Fatalf("found %d table lines in %s, want 73", len(want), notes)
	}
	var b strings.Builder
	if err := build(t, pubSystems(t), Options{}).Write(&b, Markdown); err != nil {
		t.Fatal(err)
	}
	// The table, then (after a blank line) the notes: R2MED ranks by the
	// unrounded average, and three pairs of its rows print the same one.
	table, legend, _ := strings.Cut(b.String(), "\n\n")
	got := strings.Split(strings.TrimSuffix(table, "\n"), "\n")
	for _, n := range []string{"36.82 is 36.8231 for hyde/llama-70b → nv (#12), 36.8195 for hyde/qwq-32b → nv (#13)", "32.07 is 32.0692 for lamer/gpt4 → bm25 (#26), 32.0676 for hyde/qwen-72b → bm25 (#27)", "31.12 is 31.1232 for grit (#31), 31.1209 for hyde/qwen-32b → bm25 (#32)"} {
		if !strings.Contains(legend, n) {
			t.Errorf("the notes under the table lack %q:\n%s", n, legend)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("%d lines, want %d", len(got), len(want))
	}
	// The notes bold every average; ours bold each column's best (and
	// right-align the numbers): the text is the same, line for line.
	plain := func(s string) string { return strings.ReplaceAll(s, "**", "") }
	for i := range want {
		if plain(got[i]) != plain(want[i]) && i != 1 { // line 1 is the separator, spelled |---|
			t.Errorf("line %d:\n got %s\nwant %s", i, got[i], want[i])
		}
	}
	// Bold marks the best of each column, and only it: query2doc/gpt4 →
	// nv's average (41.65) and PMC-Clinical (52.30), hyde/qwq-32b →
	// bm25's Biology (58.24); bm25's average is not bold.
	for _, want := range []string{"| 1 | query2doc/gpt4 → nv | 37.01 | 52.35 | 51.95 | 25.86 | 43.30 | 47.10 | **52.30** | 23.37 | **41.65** |", "| **58.24** |", "| 15.13 |"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("markdown lacks %q", want)
		}
	}
	if n := strings.Count(b.String(), "**") / 2; n != 9 {
		t.Errorf("%d bold cells, want 9 (8 tasks and the average)", n)
	}
}

// TestSummaryCSV checks every average R2MED's summary CSV lists: nDCG@10,
// Recall@100 and MRR for each of the 71 systems.
func TestSummaryCSV(t *testing.T) {
	needShared(t, official)
	recs := readCSVFile(t, filepath.Join(official, "summary-ndcg10.csv"))
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	ss := pubSystems(t)
	byMetric := map[string]*Table{}
	for _, m := range []string{"ndcg_at_10", "recall_at_100", "mrr"} {
		byMetric[m] = build(t, ss, Options{Metric: metricFromKeyOrMRR(m)})
	}
	checked := 0
	for _, rec := range recs[1:] {
		get := func(h string) string { return rec[col[h]] }
		id := summaryID(get)
		for h, m := range map[string]string{"ndcg10_avg8": "ndcg_at_10", "recall100_avg8": "recall_at_100", "mrr_avg8": "mrr"} {
			tb := byMetric[m]
			var r *Row
			for i := range tb.Rows {
				if tb.Rows[i].System.ID == id {
					r = &tb.Rows[i]
				}
			}
			if r == nil {
				t.Fatalf("no system %s", id)
			}
			want := get(h)
			got := ""
			if r.Complete {
				got = tb.AverageText(*r)
			}
			if got != want {
				t.Errorf("%s %s: %q, want %q", id, h, got, want)
			}
			checked++
		}
	}
	if checked != 213 {
		t.Errorf("checked %d averages, want 213", checked)
	}
}

func metricFromKeyOrMRR(k string) Metric {
	if k == "mrr" {
		return Metric{Key: "mrr", Label: "MRR"}
	}
	return metricFromKey(k)
}

func TestParseMetric(t *testing.T) {
	for in, want := range map[string]string{
		"ndcg@10": "ndcg_at_10", "NDCG@10": "ndcg_at_10", "ndcg_at_10": "ndcg_at_10", "ndcg_cut.10": "ndcg_at_10",
		"recall@100": "recall_at_100", "recall.100": "recall_at_100", "mrr": "mrr", "MRR": "mrr", "recip_rank": "mrr",
		"map@100": "map_at_100", "p@10": "precision_at_10", "P.10": "precision_at_10", "precision_at_5": "precision_at_5",
		"ndcg_cut_10": "ndcg_at_10", "P_10": "precision_at_10", "recall_100": "recall_at_100", "map_cut_100": "map_at_100",
	} {
		m, err := ParseMetric(in)
		if err != nil || m.Key != want {
			t.Errorf("ParseMetric(%q) = %q, %v; want %q", in, m.Key, err, want)
		}
	}
	for _, in := range []string{"", "bpref", "ndcg@0", "ndcg@x", "success@10", "ndcg_cut.5,10", "mrr@10", "hit@10", "ndcg_cut_x"} {
		if _, err := ParseMetric(in); err == nil {
			t.Errorf("ParseMetric(%q) accepted", in)
		}
	}
}

// synthetic makes systems with given nDCG@10 per task (NaN: no result).
func synthetic(scores map[string][]float64) []System {
	var ss []System
	names := TaskNames("")
	for name, vals := range scores {
		s := System{ID: "x/" + name, Name: name, Kind: Base, Tasks: map[string]TaskResult{}}
		for i, v := range vals {
			if !math.IsNaN(v) {
				s.Tasks[names[i]] = TaskResult{Metrics: map[string]float64{"ndcg_at_10": v}}
			}
		}
		ss = append(ss, s)
	}
	return ss
}

// TestBorda checks HAKARI-Bench's Borda count on a hand-computed case with
// ties: per task, competition ranks give 100·(n−rank)/(n−1) points.
func TestBorda(t *testing.T) {
	nan := math.NaN()
	ss := synthetic(map[string][]float64{
		//      Bio  Binf MedS MedX MedQ PMCT PMCC IIYi
		"a": {.9, .1, .5, .5, .5, .5, .5, .5},
		"b": {.8, .2, .5, .4, .4, .4, .4, .4},
		"c": {.7, .3, .4, .4, .4, .4, .4, .4},
		"d": {.9, nan, .5, .5, .5, .5, .5, .5}, // incomplete: not ranked
	})
	tb := build(t, ss, Options{Ranking: ByBorda})
	// a: Bio rank1 (100), Binf rank3 (0), MedS tie rank1 with b (100),
	//    others rank1 (100×5) → 700/8 = 87.5
	// b: Bio 50, Binf 50, MedS 100 (tied first), MedX..IIYi tie with c at
	//    rank 2 (50×5) → 450/8 = 56.25
	// c: Bio 0, Binf 100, MedS rank3 (0), rank2 ties (50×5) → 350/8 = 43.75
	want := []struct {
		name  string
		rank  int
		borda float64
	}{{"a", 1, 87.5}, {"b", 2, 56.25}, {"c", 3, 43.75}, {"d", 0, 0}}
	for i, w := range want {
		r := tb.Rows[i]
		if r.System.Name != w.name || r.Rank != w.rank || r.Borda != w.borda {
			t.Errorf("row %d: %s rank %d borda %v; want %s rank %d borda %v", i, r.System.Name, r.Rank, r.Borda, w.name, w.rank, w.borda)
		}
	}
	var b strings.Builder
	if err := tb.Write(&b, Markdown); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "| — | d (ours) | **90.00** | — |") || !strings.Contains(b.String(), "— (7/8) | — |") {
		t.Errorf("incomplete row not shown as missing:\n%s", b.String())
	}
}

func TestFamilyAndKind(t *testing.T) {
	ss := pubSystems(t)
	tb := build(t, ss, Options{Family: tasks.ClinicalCase, Kind: Reranker})
	if len(tb.Rows) != 3 || len(tb.Tasks) != 2 || tb.Tasks[0] != "PMC-Clinical" {
		t.Fatalf("rerankers on clinical case: %d rows, tasks %v", len(tb.Rows), tb.Tasks)
	}
	// nv → rankllama@10: PMC-Clinical 38.36, IIYi 13.64 (the notes' row).
	r := row(t, tb, "nv → rankllama@10")
	if got := tb.AverageText(r); got != "26.00" {
		t.Errorf("rankllama clinical-case average %s, want 26.00", got)
	}
	for _, s := range []string{"qa", "evidence", "case", "all", "clinical-case"} {
		if _, err := ParseFamily(s); err != nil {
			t.Error(err)
		}
	}
	if _, err := ParseFamily("cases"); err == nil {
		t.Error("ParseFamily(cases) accepted")
	}
}

func TestFormats(t *testing.T) {
	nan := math.NaN()
	ss := synthetic(map[string][]float64{"x": {.5, .25, .125, 1, 0, .5, .5, .5}, "y": {.25, nan, nan, nan, nan, nan, nan, nan}})
	tb := build(t, ss, Options{})
	var b strings.Builder
	if err := tb.Write(&b, Terminal); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	// Only x has an average: nothing to call best there.
	if !strings.Contains(lines[2], "50.00*") || !strings.Contains(lines[2], "42.19") || strings.Contains(lines[2], "42.19*") || !strings.Contains(lines[3], "— (1/8)") {
		t.Errorf("terminal table:\n%s", b.String())
	}
	b.Reset()
	if err := tb.Write(&b, CSV); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(strings.NewReader(b.String())).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(recs[1], ","); got != "1,x,x/x,base,ours,50.00,25.00,12.50,100.00,0.00,50.00,50.00,50.00,42.19,8,,," {
		t.Errorf("csv row %s", got)
	}
	if got := strings.Join(recs[2], ","); got != ",y,x/y,base,ours,25.00,,,,,,,,,1,,," {
		t.Errorf("csv row %s", got)
	}
	b.Reset()
	if err := tb.Write(&b, JSON); err != nil {
		t.Fatal(err)
	}
	var j JSONTable
	if err := json.Unmarshal([]byte(b.String()), &j); err != nil {
		t.Fatal(err)
	}
	if *j.Rows[0].Average != 42.19 || j.Rows[1].Average != nil || j.Rows[1].Scores["Bioinformatics"] != nil || *j.Rows[1].Scores["Biology"] != .25 {
		t.Errorf("json rows %+v", j.Rows)
	}
}

func TestReadOfficialErrors(t *testing.T) {
	write := func(root, rel, body string) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct{ rel, body, want string }{
		{"base retriever/nv/Biology.json", `{"dataset_name":"Biology","model_name":"grit","test":{}}`, `model_name is "grit" but the path says "nv"`},
		{"base retriever/nv/Biology.json", `{"dataset_name":"Bioinformatics","model_name":"nv","test":{}}`, `dataset_name "Bioinformatics" does not match`},
		{"base retriever/nv/Biologie.json", `{"dataset_name":"Biologie","model_name":"nv","test":{}}`, `not an R2MED task name`},
		{"gar/hyde/gpt4/Biology.json", `{"dataset_name":"Biology","test":{}}`, `not at a place of R2MED's results layout`},
		{"reranker/x/nv/top_10/Biology.json", `{"dataset_name":"Biology","reranker_name":"x","retriever_name":"nv","topk":20,"test":{}}`, `topk is "20" but the path says "10"`},
		{"base retriever/nv/Biology.json", `{"dataset_name":"Biology","model_name":"nv"}`, `no "test" metrics`},
	} {
		root := t.TempDir()
		write(root, c.rel, c.body)
		_, err := ReadOfficial(root)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), filepath.Join(root, c.rel)) {
			t.Errorf("%s: got %v, want an error naming the file and %q", c.rel, err, c.want)
		}
	}
}

func writeRun(t *testing.T, dir, task string, started time.Time, cfg map[string]any, res *results.R2MED) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := res.WriteFile(filepath.Join(dir, results.ResultsFile)); err != nil {
		t.Fatal(err)
	}
	m := results.NewManifest(nil)
	m.Started, m.Task, m.Config = started, results.TaskInfo{Name: task}, cfg
	if err := m.WriteFile(filepath.Join(dir, results.ManifestFile)); err != nil {
		t.Fatal(err)
	}
}

func TestOurs(t *testing.T) {
	root := t.TempDir()
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	bm25 := map[string]any{"retriever": "bm25", "k1": 0.9, "fingerprint": "x"}
	lucene := map[string]any{"retriever": "bm25", "k1": 1.2, "fingerprint": "y"}
	for i, task := range TaskNames("") {
		cfg := map[string]any{"retriever": "bm25", "k1": 0.9, "fingerprint": task} // fingerprints differ per task
		writeRun(t, filepath.Join(root, "bm25", task), task, t0, cfg, &results.R2MED{DatasetName: task, ModelName: "bm25",
			Test: map[string]float64{"ndcg_at_10": float64(i) / 10, "mrr": 0.5}})
	}
	// A newer rerun of Biology replaces the old one; an older one does not.
	writeRun(t, filepath.Join(root, "rerun", "Biology"), "Biology", t0.Add(time.Hour), bm25, &results.R2MED{DatasetName: "Biology", ModelName: "bm25", Test: map[string]float64{"ndcg_at_10": 0.8}})
	writeRun(t, filepath.Join(root, "old", "Biology"), "Biology", t0.Add(-time.Hour), bm25, &results.R2MED{DatasetName: "Biology", ModelName: "bm25", Test: map[string]float64{"ndcg_at_10": 0.1}})
	writeRun(t, filepath.Join(root, "lucene"), "MedQA-Diag", t0, lucene, &results.R2MED{DatasetName: "MedQA-Diag", ModelName: "bm25", Test: map[string]float64{"ndcg_at_10": 0.3}})
	writeRun(t, filepath.Join(root, "gar"), "Biology", t0, map[string]any{"retriever": "bm25", "gar_method": "hyde"}, &results.R2MED{DatasetName: "Biology",
		Test: map[string]float64{"NDCG@10": 0.6}, Extra: map[string]any{"gar_method": "hyde", "gar_llm": "gpt4", "retriever_name": "bm25"}})
	writeRun(t, filepath.Join(root, "demo"), "demo", t0, bm25, &results.R2MED{DatasetName: "demo", ModelName: "bm25", Test: map[string]float64{}})

	l, err := results.Scan(root)
	if err != nil {
		t.Fatal(err)
	}
	ss, superseded := Ours(l)
	var names []string
	for _, s := range ss {
		names = append(names, s.Name)
	}
	// Two systems named bm25 with other settings: a short hash of each
	// one's settings tells them apart, never a dump of them.
	if got := strings.Join(names, "|"); got != "bm25 #612c|bm25 #8545|hyde/gpt4 → bm25" {
		t.Fatalf("systems %q", got)
	}
	if got := ss[1].SettingsText(); got != "retriever=bm25 k1=1.2" {
		t.Errorf("settings text %q", got)
	}
	if len(superseded) != 2 {
		t.Fatalf("%d superseded; want 2", len(superseded))
	}
	bm := ss[0]
	// The demo run has bm25's settings: it is the same system, on a task
	// that is no R2MED column.
	if _, ok := bm.Tasks["demo"]; !ok || len(bm.Tasks) != 9 || bm.Tasks["Biology"].Metrics["ndcg_at_10"] != 0.8 || !strings.HasSuffix(bm.Tasks["Biology"].Source, "rerun/Biology") {
		t.Errorf("bm25 Biology %+v", bm.Tasks["Biology"])
	}
	if g := ss[2]; g.Kind != GAR || g.Tasks["Biology"].Style != StyleUpper || g.Tasks["Biology"].Metrics["ndcg_at_10"] != 0.6 {
		t.Errorf("GAR system %+v", g)
	}
	tb := build(t, append(ss, pubSystems(t)...), Options{Kind: Base})
	r := row(t, tb, "bm25 #612c")
	// (0.8 + .1 + .2 + … + .7) / 8 = 3.6/8
	if !r.Complete || tb.AverageText(r) != "45.00" || r.System.Published {
		t.Errorf("our bm25 row %+v", r)
	}
	// The legend says what the hashes stand for: the settings that set
	// the two apart, not all of them.
	var twins []string
	for _, l := range tb.Legend() {
		if strings.Contains(l, "#612c") {
			twins = append(twins, l)
		}
	}
	if want := "bm25 #612c: k1=0.9; bm25 #8545: k1=1.2"; len(twins) != 1 || twins[0] != want {
		t.Errorf("legend lines naming bm25 #612c: %q, want [%q]", twins, want)
	}
}

func TestLoad(t *testing.T) {
	root := t.TempDir()
	writeRun(t, filepath.Join(root, "a"), "Biology", time.Now(), map[string]any{"retriever": "bm25"},
		&results.R2MED{DatasetName: "Biology", ModelName: "bm25", Test: map[string]float64{"ndcg_at_10": 0.5}})
	b, err := Load(root, Sources{Published: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Systems) != 72 || b.Systems[0].Published || !b.Systems[1].Published {
		t.Fatalf("%d systems, first published %v", len(b.Systems), b.Systems[0].Published)
	}
	if s, ok := b.System("base/nv"); !ok || s.Name != "nv" {
		t.Error("System(base/nv) not found")
	}
	if _, ok := b.System("bm25"); ok {
		t.Error("System(bm25) is ambiguous (ours and published) but was found")
	}
	tb, err := b.Table(Options{Family: tasks.QAReference})
	if err != nil {
		t.Fatal(err)
	}
	last := tb.Rows[len(tb.Rows)-1] // incomplete rows sort after complete ones
	if last.System.ID != "ours/bm25" || last.Have != 1 || last.Complete || last.Rank != 0 {
		t.Errorf("last row %s with %d tasks, want ours/bm25 with 1", last.System.ID, last.Have)
	}
	b, err = Load("", Sources{})
	if err != nil || len(b.Systems) != 0 || b.Listing != nil {
		t.Errorf("empty board: %v %d", err, len(b.Systems))
	}
}

// TestBordaTiesOnPublished ranks R2MED's 71 published systems by Borda
// count as the test computes it exactly from all-results.csv (each task's
// nDCG@10 in the files' five digits; per task a system scores n minus its
// competition rank, the number of other systems not above it, so Borda =
// 100·points/(8·(n−1)) and equal points are equal Borda) and requires the board's Borda and ranks: equal
// counts share a rank, as HAKARI-Bench's do, whatever order a float sum
// of fractions takes (query2doc/qwen-72b → bm25 and lamer/gpt4 → bm25
// both have 51.07).
func TestBordaTiesOnPublished(t *testing.T) {
	path := filepath.Join(official, "all-results.csv")
	needShared(t, path)
	recs := readCSVFile(t, path)
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	// value in units of 1e-5 per system ID and task
	vals := map[string]map[string]int64{}
	for _, rec := range recs[1:] {
		get := func(k string) string { return rec[col[k]] }
		id := summaryID(get)
		if vals[id] == nil {
			vals[id] = map[string]int64{}
		}
		v, err := strconv.ParseFloat(get("ndcg_at_10"), 64)
		if err != nil {
			t.Fatal(err)
		}
		vals[id][get("task")] = int64(math.Round(v * 1e5))
	}
	points := map[string]int{}
	for id, vs := range vals {
		for task, v := range vs {
			for oid, o := range vals {
				if oid != id && o[task] <= v {
					points[id]++
				}
			}
		}
	}
	n := len(vals)
	tb := build(t, pubSystems(t), Options{Ranking: ByBorda})
	if len(tb.Rows) != n || n != 71 {
		t.Fatalf("%d rows, %d systems in %s; want 71", len(tb.Rows), n, path)
	}
	for _, r := range tb.Rows {
		p, ok := points[r.System.ID]
		if !ok {
			t.Fatalf("row %s is not in %s", r.System.ID, path)
		}
		rank := 1
		for _, q := range points {
			if q > p {
				rank++
			}
		}
		want := 100 * float64(p) / float64(8*(n-1))
		if r.Rank != rank || math.Abs(r.Borda-want) > 1e-9 {
			t.Errorf("%s: rank %d Borda %v; want rank %d Borda %.4f (%d points)", r.System.Name, r.Rank, r.Borda, rank, want, p)
		}
	}
}

// A twin note names at most maxTwinSettings settings per system, says
// how many more differ, and shows a setting one twin lacks as none.
func TestTwinNotesBounded(t *testing.T) {
	mk := func(name string, cfg map[string]any) System {
		return System{ID: "ours/" + name, Name: name, Kind: Base, Config: cfg,
			Tasks: map[string]TaskResult{"Biology": {Metrics: map[string]float64{"ndcg_at_10": 0.5}}}}
	}
	a := mk("dense #aaaa", map[string]any{"model": "m1", "batch": 8.0, "pooling": "cls", "max_length": 512.0, "query_prompt": "q: "})
	b := mk("dense #bbbb", map[string]any{"model": "m2", "batch": 8.0, "pooling": "mean", "max_length": 256.0, "doc_prompt": "d: "})
	c := mk("bm25", map[string]any{"retriever": "bm25"})
	tb := build(t, []System{a, b, c}, Options{Kind: Base})
	var got []string
	for _, l := range tb.Legend() {
		if strings.Contains(l, "#aaaa") {
			got = append(got, l)
		}
	}
	// Keys in SettingsText's order: model first, then by name.
	want := "dense #aaaa: model=m1 doc_prompt=none max_length=512 (+2 more); dense #bbbb: model=m2 doc_prompt=\"d: \" max_length=256 (+2 more); every setting: --format csv or json"
	if len(got) != 1 || got[0] != want {
		t.Errorf("twin notes %q\nwant [%q]", got, want)
	}
	// A twin shown alone still says what its hash stands for.
	alone := build(t, []System{a, b, c}, Options{Kind: Base, Systems: []string{"dense #bbbb"}})
	if l := alone.Legend(); !slices.Contains(l, "dense #bbbb: model=m2 doc_prompt=\"d: \" max_length=256 (+2 more); every setting: --format csv or json") {
		t.Errorf("legend of dense #bbbb alone: %q", l)
	}
}

// TestRankNoteDigits: the line under the table that gives tied printed
// averages unrounded uses four decimals, more where four would print two
// ranks alike (45.00001 and 45.00002 ×100 apart by 1e-7), and says
// nothing of rows that share their rank.
func TestRankNoteDigits(t *testing.T) {
	ss := synthetic(map[string][]float64{
		"a": {.45, .45, .45, .45, .45, .45, .45, .4500008},
		"b": {.45, .45, .45, .45, .45, .45, .45, .4500016},
		"c": {.45, .45, .45, .45, .45, .45, .45, .4500016},
	})
	notes := build(t, ss, Options{}).RankNotes()
	want := "ranked by the unrounded average, as R2MED ranks: 45.00 is 45.00002 for b (#1), 45.00002 for c (#1), 45.00001 for a (#3)"
	if len(notes) != 1 || notes[0] != want {
		t.Errorf("notes %q, want [%q]", notes, want)
	}
}
