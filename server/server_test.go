package server

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"html"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/r2med/r2med/analysis"
	"github.com/r2med/r2med/demo"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/leaderboard"
	"github.com/r2med/r2med/report"
	"github.com/r2med/r2med/report/reporttest"
	"github.com/r2med/r2med/results"
)

const evil = `<script>document.title="pwned"</script>`

// evilLoader is the demo task with markup in the first query and in one
// of its relevant documents: texts are untrusted.
func evilLoader(ctx context.Context, r results.Run) (*ir.Task, error) {
	t, err := demo.Load()
	if err != nil {
		return nil, err
	}
	q := &t.Queries[0]
	q.Text = evil + " " + q.Text
	for i, d := range t.Corpus {
		if t.Qrels[q.ID][d.ID] > 0 {
			t.Corpus[i].Text = evil + " " + d.Text
			break
		}
	}
	return t, nil
}

// fixture serves two systems of ours on the demo task: perfect, and
// buried, which ranks the relevant documents last on every query.
func fixture(t *testing.T) (*httptest.Server, *ir.Task) {
	t.Helper()
	task, err := demo.Load()
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	for _, r := range []reporttest.Run{
		{Dir: filepath.Join(root, "perfect"), Task: "demo", System: "perfect", Ranked: reporttest.Perfect(task)},
		{Dir: filepath.Join(root, "buried"), Task: "demo", System: "buried", Ranked: reporttest.Buried(task, func(string) bool { return true })},
	} {
		if err := reporttest.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	return serveRuns(t, root, evilLoader), task
}

// serveRuns serves the runs under root with R2MED's published systems,
// their data loaded by load.
func serveRuns(t *testing.T, root string, load report.TaskLoader) *httptest.Server {
	t.Helper()
	d, err := report.Load(root, leaderboard.Sources{Published: true}, load)
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(d, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return ts
}

func get(t *testing.T, url string) (int, http.Header, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, string(b)
}

func TestQueryAPI(t *testing.T) {
	ts, task := fixture(t)
	q := task.Queries[1]
	code, h, body := get(t, ts.URL+"/api/query/demo/"+q.ID+"?k=5")
	if code != 200 || !strings.HasPrefix(h.Get("Content-Type"), "application/json") {
		t.Fatalf("%d %s: %s", code, h.Get("Content-Type"), body)
	}
	var got QueryJSON
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatal(err)
	}
	if got.Query.ID != q.ID || got.Query.Text != q.Text || string(got.Query.Fields["body_system"]) != string(q.Extra["body_system"]) {
		t.Errorf("query %+v", got.Query)
	}
	terms := slices.Sorted(slices.Values(analysis.LuceneEnglish().Analyze(nil, q.Text)))
	terms = slices.Compact(terms)
	if !slices.Equal(got.Terms, terms) {
		t.Errorf("terms %v, want %v", got.Terms, terms)
	}
	var rel []string
	for id, g := range task.Qrels[q.ID] {
		if g > 0 {
			rel = append(rel, id)
		}
	}
	slices.Sort(rel)
	var gotRel []string
	for _, d := range got.Relevant {
		gotRel = append(gotRel, d.ID)
		if doc, _ := findDoc(task, d.ID); !strings.HasPrefix(doc.Text, d.Text) || d.Length != len(doc.Text) || d.Truncated != (len(doc.Text) > SnippetBytes) {
			t.Errorf("relevant %s: snippet is not the document's start (or its length/truncation is wrong)", d.ID)
		}
	}
	slices.Sort(gotRel)
	if !slices.Equal(gotRel, rel) {
		t.Errorf("relevant %v, want %v", gotRel, rel)
	}
	if len(got.Systems) != 2 || got.Systems[0].Name != "buried" || got.Systems[1].Name != "perfect" {
		t.Fatalf("systems %+v", got.Systems)
	}
	buried, perfect := got.Systems[0], got.Systems[1]
	if *perfect.Value != 1 || *buried.Value != 0 || len(perfect.Hits) != 5 || perfect.Retrieved != 79 {
		t.Errorf("perfect %v (%d hits of %d), buried %v", *perfect.Value, len(perfect.Hits), perfect.Retrieved, *buried.Value)
	}
	for i, h := range perfect.Hits {
		if h.Rank != i+1 || h.Relevant != (i < len(rel)) {
			t.Errorf("perfect hit %+v", h)
		}
	}
	for id, r := range perfect.RelevantRanks {
		if r < 1 || r > len(rel) {
			t.Errorf("perfect ranks %s at %d", id, r)
		}
	}
	for id, r := range buried.RelevantRanks {
		if r <= 79-len(rel) && r != 0 {
			t.Errorf("buried ranks %s at %d, want after every non-relevant document", id, r)
		}
	}
	// Another metric, per query.
	_, _, body = get(t, ts.URL+"/api/query/demo/"+q.ID+"?metric=recall@100")
	json.Unmarshal([]byte(body), &got)
	if got.Metric != "recall_at_100" || *got.Systems[0].Value != 1 {
		t.Errorf("recall@100 of buried %v (%s), want 1", *got.Systems[0].Value, got.Metric)
	}
}

func findDoc(t *ir.Task, id string) (ir.Doc, bool) {
	for _, d := range t.Corpus {
		if d.ID == id {
			return d, true
		}
	}
	return ir.Doc{}, false
}

func TestErrors(t *testing.T) {
	ts, _ := fixture(t)
	for path, want := range map[string]int{
		"/api/query/demo/nosuch":            404,
		"/api/query/nosuch/q1":              404,
		"/api/query/Biology/q1":             404, // published systems only: no run files
		"/api/query/demo/q1?k=0":            400,
		"/api/leaderboard?metric=bleu":      400,
		"/api/leaderboard?metric=ndcg@9999": 400,
		"/api/query/demo/q1?metric=ndcg@11": 400,
		"/?metric=ndcg@9999":                400,
		"/api/doc/demo/nosuch":              404,
		"/diff/demo?a=nosuch":               400,
		"/query/demo/nosuch":                404,
		"/task/nosuch":                      404,
		"/nosuch":                           404,
	} {
		code, h, body := get(t, ts.URL+path)
		if code != want {
			t.Errorf("%s: %d, want %d: %s", path, code, want, body)
		}
		if strings.HasPrefix(path, "/api/") {
			var e map[string]string
			if json.Unmarshal([]byte(body), &e) != nil || e["error"] == "" || !strings.HasPrefix(h.Get("Content-Type"), "application/json") {
				t.Errorf("%s: not a JSON error: %s", path, body)
			}
		}
	}
}

func TestLeaderboardAPIAndCSV(t *testing.T) {
	ts, _ := fixture(t)
	_, _, body := get(t, ts.URL+"/api/leaderboard?metric=recall@100&family=case")
	var lb struct {
		Metric string   `json:"metric"`
		Tasks  []string `json:"tasks"`
		Rows   []struct {
			Name      string `json:"name"`
			Published bool   `json:"published"`
		} `json:"rows"`
	}
	if err := json.Unmarshal([]byte(body), &lb); err != nil {
		t.Fatal(err)
	}
	if lb.Metric != "recall_at_100" || strings.Join(lb.Tasks, ",") != "PMC-Clinical,IIYi-Clinical" || len(lb.Rows) != 73 {
		t.Errorf("leaderboard %s %v, %d rows", lb.Metric, lb.Tasks, len(lb.Rows))
	}
	code, h, body := get(t, ts.URL+"/leaderboard.csv?pin=0")
	if code != 200 || !strings.HasPrefix(h.Get("Content-Type"), "text/csv") {
		t.Fatalf("%d %s", code, h.Get("Content-Type"))
	}
	recs, err := csv.NewReader(strings.NewReader(body)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	avg := slices.Index(recs[0], "avg")
	if len(recs) != 74 || strings.Join(recs[0][:5], ",") != "rank,system,id,kind,source" || recs[1][1] != "query2doc/gpt4 → nv" || recs[1][avg] != "41.65" {
		t.Errorf("csv: %d records, first %v", len(recs), recs[1])
	}
	// Pinned (the page's order): ours first, with their demo scores,
	// the same names and kinds as the page.
	_, _, body = get(t, ts.URL+"/leaderboard.csv")
	recs, _ = csv.NewReader(strings.NewReader(body)).ReadAll()
	demo := slices.Index(recs[0], "demo")
	if demo < 0 || recs[1][1] != "buried" || recs[2][1] != "perfect" || recs[1][4] != "ours" || recs[2][demo] != "100.00" {
		t.Errorf("csv without pin=0: header %v, rows %v %v", recs[0], recs[1], recs[2])
	}
	_, _, body = get(t, ts.URL+"/api/leaderboard")
	var j leaderboard.JSONTable
	if err := json.Unmarshal([]byte(body), &j); err != nil || len(j.OtherTasks) != 1 || j.Rows[1].Name != "perfect" || *j.Rows[1].Scores["demo"] != 1 {
		t.Errorf("/api/leaderboard lacks our demo scores: %v %+v", err, j.Rows[:2])
	}
	_, _, body = get(t, ts.URL+"/api/runs")
	var runs RunsJSON
	if err := json.Unmarshal([]byte(body), &runs); err != nil || len(runs.Runs) != 2 || runs.Runs[0].Task != "demo" {
		t.Errorf("runs %v: %s", err, body)
	}
}

// TestEscaping: query and document texts are untrusted; markup in them
// is shown, never run.
func TestEscaping(t *testing.T) {
	ts, task := fixture(t)
	for _, path := range []string{"/query/demo/" + task.Queries[0].ID, "/task/demo"} {
		code, _, body := get(t, ts.URL+path)
		if code != 200 {
			t.Fatalf("%s: %d", path, code)
		}
		if strings.Contains(body, evil) || strings.Contains(body, `<script>document.title`) {
			t.Errorf("%s: untrusted markup not escaped", path)
		}
		// Shown as text, whatever words are highlighted in it.
		plain := strings.NewReplacer("<mark>", "", "</mark>", "").Replace(body)
		if !strings.Contains(plain, "&lt;script&gt;document.title=&#34;pwned&#34;&lt;/script&gt;") {
			t.Errorf("%s: escaped text not shown", path)
		}
	}
}

func TestPages(t *testing.T) {
	ts, task := fixture(t)
	for path, want := range map[string][]string{
		"/":                  {`<table class="sortable board" id="leaderboard"`, `id="bars"`, `href="/task/demo"`, `href="/leaderboard.csv"`, `class="pin"`},
		"/?metric=mrr":       {`value="MRR"`, `href="/leaderboard.csv?metric=mrr"`},
		"/task/demo":         {`id="queries"`, `href="/query/demo/` + task.Queries[0].ID + `"`, `id="recall-`, `id="task-board"`, `href="/task/demo/data"`, `href="/diff/demo?a=`, `class="sub">2 systems · `},
		"/task/demo/data":    {`id="profile"`, `id="body-system"`, "Endocrine"},
		"/query/demo/q2":     {`<mark>`, `class="doc rel"`, `id="rank-grid"`, `class="hit rel"`, `id="relevant-docs"`},
		"/query/demo/q2?k=3": {`top 3`},
		"/diff/demo":         {`id="deltas"`, `id="doc-diff"`, `id="only-a"`, "N = 15"},
	} {
		code, h, body := get(t, ts.URL+path)
		if code != 200 || !strings.HasPrefix(h.Get("Content-Type"), "text/html") {
			t.Errorf("%s: %d %s", path, code, h.Get("Content-Type"))
		}
		if !strings.Contains(h.Get("Content-Security-Policy"), "default-src 'none'") {
			t.Errorf("%s: no content security policy", path)
		}
		for _, w := range want {
			if !strings.Contains(body, w) {
				t.Errorf("%s lacks %q", path, w)
			}
		}
	}
}

func TestGracefulShutdown(t *testing.T) {
	ts, _ := fixture(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, ln, ts.Config.Handler) }()
	url := "http://" + ln.Addr().String()
	if code, _, _ := get(t, url+"/api/runs"); code != 200 {
		t.Fatalf("status %d", code)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Serve: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return after cancel")
	}
	if _, err := net.Dial("tcp", ln.Addr().String()); err == nil {
		t.Error("still accepting connections after shutdown")
	}
}

// TestOddIDLinks: a query id is data, not path syntax; one with "/", "#"
// or "?" (BEIR ids can hold anything) must still link to its drill-down.
func TestOddIDLinks(t *testing.T) {
	const odd = "q/1#a?b=c"
	loader := func(ctx context.Context, r results.Run) (*ir.Task, error) {
		task, err := demo.Load()
		if err != nil {
			return nil, err
		}
		old := task.Queries[0].ID
		task.Queries[0].ID = odd
		task.Qrels[odd] = task.Qrels[old]
		delete(task.Qrels, old)
		return task, nil
	}
	task, _ := loader(context.Background(), results.Run{})
	ts := perfectServer(t, task, loader)
	_, _, body := get(t, ts.URL+"/task/demo")
	const want = `href="/query/demo/q%2f1%23a%3fb=c"`
	if !strings.Contains(strings.ToLower(body), want) {
		i := strings.Index(body, `href="/query/`)
		t.Fatalf("task page lacks %s; first link: %.60s", want, body[max(i, 0):])
	}
	code, _, body := get(t, ts.URL+"/query/demo/q%2F1%23a%3Fb=c")
	if code != 200 || !strings.Contains(body, "Query q/1#a?b=c") {
		t.Errorf("following the link: %d", code)
	}
}

// perfectServer serves one run of task, "perfect" (every relevant
// document first), whose data loader gives.
func perfectServer(t *testing.T, task *ir.Task, loader report.TaskLoader) *httptest.Server {
	t.Helper()
	root := t.TempDir()
	if err := reporttest.Write(reporttest.Run{Dir: filepath.Join(root, "perfect"), Task: "demo", System: "perfect", Ranked: reporttest.Perfect(task)}); err != nil {
		t.Fatal(err)
	}
	d, err := report.Load(root, leaderboard.Sources{}, loader)
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(d, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return ts
}

// TestBrightMRRDepth: the viewer names the MRR of a BRIGHT run kept 10
// deep by its depth wherever it shows it, and says what that is, where
// it showed it as plain MRR beside BRIGHT's (each query's top 1000): the
// leaderboard's and the task board's cells read "@10" under the value,
// the per-query columns' heading too, the query page names it MRR@10,
// the diff says whose MRR it is; /api/runs, /api/query and
// /leaderboard.csv carry the label. The run as deep as BRIGHT's is
// unmarked.
func TestBrightMRRDepth(t *testing.T) {
	root := t.TempDir()
	if err := reporttest.WriteBrightDepths(root); err != nil {
		t.Fatal(err)
	}
	ts := serveRuns(t, root, reporttest.Loader)
	task, _ := demo.Load()
	const note = "@10: MRR over each query's top 10, where BRIGHT's run.py reads its top 1000 (r2med run --top-k 1000)"
	page := func(path string) string {
		t.Helper()
		code, _, body := get(t, ts.URL+path)
		if code != 200 {
			t.Fatalf("%s: %d\n%s", path, code, body)
		}
		return html.UnescapeString(body)
	}
	for _, path := range []string{"/?metric=mrr", "/task/BRIGHT-biology", "/task/BRIGHT-biology?metric=mrr"} {
		p := page(path)
		want := 1
		if strings.Contains(path, "/task/") && strings.Contains(path, "metric=mrr") {
			want = 2 // the board's cell and the per-query column's heading
		}
		if n := strings.Count(p, `<span class="note">@10</span>`); n != want || !strings.Contains(p, "<li>"+note+"</li>") {
			t.Errorf("%s: %d marks (want %d) or no note %q", path, n, want, note)
		}
	}
	if p := page("/task/BRIGHT-biology?metric=ndcg@10"); strings.Count(p, `<span class="note">@10</span>`) != 1 {
		t.Errorf("/task/BRIGHT-biology?metric=ndcg@10: the MRR column's mark, and no other, wanted")
	}
	q := task.Queries[0].ID
	if p := page("/query/BRIGHT-biology/" + q + "?metric=mrr"); strings.Count(p, "MRR@10 0.000") != 1 || strings.Count(p, "MRR 1.000") != 1 || !strings.Contains(p, note) {
		t.Errorf("query page: want one MRR@10 0.000, one MRR 1.000 and the note")
	}
	if p := page("/diff/BRIGHT-biology?metric=mrr"); !regexp.MustCompile(`bm25 \(bright\) #[0-9a-f]{4}'s MRR on BRIGHT-biology is its MRR@10, MRR over each query's top 10`).MatchString(p) {
		t.Errorf("diff page: no note on the MRR@10")
	}
	var runs struct {
		Runs []struct {
			Dir      string `json:"dir"`
			MRRLabel string `json:"mrr_label"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(page("/api/runs")), &runs); err != nil || len(runs.Runs) != 2 {
		t.Fatalf("/api/runs: %v %+v", err, runs)
	}
	for _, r := range runs.Runs {
		if want := map[string]string{"shallow": "MRR@10", "deep": "MRR"}[filepath.Base(r.Dir)]; r.MRRLabel != want {
			t.Errorf("/api/runs: %s's mrr_label %q, want %q", r.Dir, r.MRRLabel, want)
		}
	}
	var qj struct {
		Systems []struct {
			Label string  `json:"label"`
			Value float64 `json:"value"`
		} `json:"systems"`
	}
	if err := json.Unmarshal([]byte(page("/api/query/BRIGHT-biology/"+q+"?metric=mrr")), &qj); err != nil || len(qj.Systems) != 2 {
		t.Fatalf("/api/query: %v %+v", err, qj)
	}
	for _, s := range qj.Systems {
		if want := map[float64]string{0: "MRR@10", 1: "MRR"}[s.Value]; s.Label != want {
			t.Errorf("/api/query: label %q for value %v, want %q", s.Label, s.Value, want)
		}
	}
	rows, err := csv.NewReader(strings.NewReader(page("/leaderboard.csv?metric=mrr"))).ReadAll()
	if err != nil || !slices.Contains(rows[0], "mrr_labels") {
		t.Fatalf("/leaderboard.csv: %v %q", err, rows[0])
	}
	col, id := slices.Index(rows[0], "mrr_labels"), slices.Index(rows[0], "id")
	var ours, others []string
	for _, r := range rows[1:] {
		if strings.HasPrefix(r[id], "ours/") {
			ours = append(ours, r[col])
		} else {
			others = append(others, r[col])
		}
	}
	slices.Sort(ours)
	if !slices.Equal(ours, []string{"", "BRIGHT-biology=MRR@10"}) || slices.ContainsFunc(others, func(l string) bool { return l != "" }) {
		t.Errorf("/leaderboard.csv: mrr_labels %q of ours, %q of the others", ours, others)
	}
}
