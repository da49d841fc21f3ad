// Package server is the results viewer behind `r2med serve`: the
// leaderboard, a page per task, and a per-query drill-down that shows the
// query, its relevant documents and what each of our systems retrieved,
// with the words that match the query highlighted the way the retriever's
// analyzer matched them; a JSON API and a CSV export of the leaderboard.
//
// Pages are html/template (document and query texts are untrusted and
// always escaped) with the report's stylesheet and script inline, so the
// viewer, like the report, loads nothing from elsewhere.
package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"math"
	"net"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/r2med/r2med/analysis"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/leaderboard"
	"github.com/r2med/r2med/report"
	"github.com/r2med/r2med/tasks"
)

// Options tune the viewer. The zero value works.
type Options struct {
	// Analyzer finds the query's terms in documents for highlighting;
	// "" is the project's default, lucene-english.
	Analyzer string
	// TopK is how many hits of each system the drill-down shows unless
	// the request asks (?k=); 0 means 10.
	TopK int
	// Title heads every page; "" gives "R2MED results".
	Title string
}

// MaxK bounds ?k= in the drill-down.
const MaxK = 1000

// Server serves one report.Data.
type Server struct {
	data  *report.Data
	opt   Options
	hl    *Highlighter
	mux   *http.ServeMux
	pages map[string]*template.Template
}

// New builds the viewer of d.
func New(d *report.Data, opt Options) (*Server, error) {
	a, err := analysis.Get(opt.Analyzer)
	if err != nil {
		return nil, err
	}
	if opt.TopK <= 0 {
		opt.TopK = 10
	}
	if opt.Title == "" {
		opt.Title = "R2MED results"
	}
	s := &Server{data: d, opt: opt, hl: NewHighlighter(a), mux: http.NewServeMux(), pages: map[string]*template.Template{}}
	for name, body := range pageBodies {
		s.pages[name] = template.Must(template.Must(layout.Clone()).Parse(body))
	}
	s.mux.HandleFunc("GET /{$}", s.leaderboardPage)
	s.mux.HandleFunc("GET /task/{task}", s.taskPage)
	s.mux.HandleFunc("GET /query/{task}/{qid}", s.queryPage)
	s.mux.HandleFunc("GET /api/leaderboard", s.apiLeaderboard)
	s.mux.HandleFunc("GET /api/runs", s.apiRuns)
	s.mux.HandleFunc("GET /api/query/{task}/{qid}", s.apiQuery)
	s.mux.HandleFunc("GET /leaderboard.csv", s.leaderboardCSV)
	return s, nil
}

// ServeHTTP serves the viewer.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:; connect-src 'self'; base-uri 'none'; form-action 'self'")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	s.mux.ServeHTTP(w, r)
}

// Serve serves h on ln until ctx is done, then shuts down gracefully:
// no new connections, requests in flight finish (for up to 5 seconds).
func Serve(ctx context.Context, ln net.Listener, h http.Handler) error {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second,
		BaseContext: func(net.Listener) context.Context { return context.WithoutCancel(ctx) }}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := srv.Shutdown(sctx)
	if serr := <-errc; !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	return err
}

// httpError carries a status code to the page or JSON error writer.
type httpError struct {
	code int
	msg  string
}

func (e *httpError) Error() string { return e.msg }

func notFound(format string, a ...any) error {
	return &httpError{http.StatusNotFound, fmt.Sprintf(format, a...)}
}

func badRequest(format string, a ...any) error {
	return &httpError{http.StatusBadRequest, fmt.Sprintf(format, a...)}
}

func status(err error) int {
	var he *httpError
	if errors.As(err, &he) {
		return he.code
	}
	return http.StatusInternalServerError
}

// tableOptions reads ?metric=&family=&kind=&rank= as r2med leaderboard
// reads its flags.
func tableOptions(r *http.Request) (leaderboard.Options, error) {
	var opt leaderboard.Options
	var err error
	q := r.URL.Query()
	if m := q.Get("metric"); m != "" {
		if opt.Metric, err = leaderboard.ParseMetric(m); err != nil {
			return opt, badRequest("%v", err)
		}
	}
	if opt.Family, err = leaderboard.ParseFamily(q.Get("family")); err != nil {
		return opt, badRequest("%v", err)
	}
	if k := q.Get("kind"); k != "" {
		if opt.Kind, err = leaderboard.ParseKind(k); err != nil {
			return opt, badRequest("%v", err)
		}
	}
	if opt.Ranking, err = leaderboard.ParseRanking(q.Get("rank")); err != nil {
		return opt, badRequest("%v", err)
	}
	return opt, nil
}

func (s *Server) writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(v) // the status is sent; a failed write is the client gone
}

func (s *Server) jsonError(w http.ResponseWriter, err error) {
	s.writeJSON(w, status(err), map[string]string{"error": err.Error()})
}

func (s *Server) apiLeaderboard(w http.ResponseWriter, r *http.Request) {
	opt, err := tableOptions(r)
	if err != nil {
		s.jsonError(w, err)
		return
	}
	t, err := s.data.Board.Table(opt)
	if err != nil {
		s.jsonError(w, badRequest("%v", err))
		return
	}
	s.writeJSON(w, http.StatusOK, t.JSON())
}

func (s *Server) leaderboardCSV(w http.ResponseWriter, r *http.Request) {
	opt, err := tableOptions(r)
	if err != nil {
		http.Error(w, err.Error(), status(err))
		return
	}
	t, err := s.data.Board.Table(opt)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="leaderboard.csv"`)
	t.Write(w, leaderboard.CSV) // headers are sent; a failed write is the client gone
}

// RunsJSON is /api/runs: the runs of the results directory as r2med
// results --format json lists them.
type RunsJSON struct {
	Root       string                `json:"root"`
	Runs       []leaderboard.RunInfo `json:"runs"`
	Unfinished []string              `json:"unfinished"`
}

func (s *Server) apiRuns(w http.ResponseWriter, r *http.Request) {
	out := RunsJSON{Runs: []leaderboard.RunInfo{}, Unfinished: []string{}}
	if l := s.data.Board.Listing; l != nil {
		out.Root, out.Runs = l.Root, leaderboard.Runs(l)
		out.Unfinished = append(out.Unfinished, l.Unfinished...)
	}
	s.writeJSON(w, http.StatusOK, out)
}

// QueryJSON is the drill-down of one query, /api/query/{task}/{qid}.
type QueryJSON struct {
	Task     string          `json:"task"`
	Query    QueryInfo       `json:"query"`
	Terms    []string        `json:"terms"` // the query's index terms
	Relevant []DocJSON       `json:"relevant"`
	Metric   string          `json:"metric"` // R2MED key of Systems[].Value
	Systems  []SystemResults `json:"systems"`
}

// QueryInfo is the query: id, text and its other fields (R2MED's
// body_system, answer…) as they are in the query file.
type QueryInfo struct {
	ID     string                     `json:"id"`
	Text   string                     `json:"text"`
	Fields map[string]json.RawMessage `json:"fields,omitempty"`
}

// DocJSON is a document with its judgment.
type DocJSON struct {
	ID       string    `json:"id"`
	Grade    int       `json:"grade"`
	Text     string    `json:"text"`
	Missing  bool      `json:"missing,omitempty"` // judged but not in the corpus
	Segments []Segment `json:"-"`
}

// SystemResults is one system's ranking for the query.
type SystemResults struct {
	ID    string   `json:"id"`
	Name  string   `json:"name"`
	Color string   `json:"-"`
	Value *float64 `json:"value"` // the metric on this query; null when not evaluated
	// RelevantRanks maps each relevant document to its rank in the run, 0
	// when the run does not retrieve it.
	RelevantRanks map[string]int `json:"relevant_ranks"`
	Hits          []HitJSON      `json:"hits"`
	Retrieved     int            `json:"retrieved"` // hits in the run for the query
	Error         string         `json:"error,omitempty"`
}

// HitJSON is one retrieved document.
type HitJSON struct {
	Rank     int       `json:"rank"`
	DocID    string    `json:"doc_id"`
	Score    float64   `json:"score"`
	Grade    int       `json:"grade"`
	Relevant bool      `json:"relevant"`
	Text     string    `json:"text"`
	Segments []Segment `json:"-"`
}

// taskSystems are the systems with a run file on task, ours in board
// order.
func (s *Server) taskSystems(task string) []*leaderboard.System {
	var out []*leaderboard.System
	for _, sys := range s.data.Ours() {
		if s.data.HasRunFile(sys.ID, task) {
			out = append(out, sys)
		}
	}
	return out
}

func (s *Server) knownTask(task string) error {
	if !slices.Contains(s.data.Tasks, task) {
		return notFound("no task %q; tasks with results: %s", task, strings.Join(s.data.Tasks, ", "))
	}
	return nil
}

// query assembles the drill-down. The query and its relevant documents
// come from the data of the first system with a run on the task; each
// system's hits are judged with its own run's data.
func (s *Server) query(ctx context.Context, task, qid string, k int, metric leaderboard.Metric) (*QueryJSON, error) {
	if err := s.knownTask(task); err != nil {
		return nil, err
	}
	systems := s.taskSystems(task)
	if len(systems) == 0 {
		return nil, notFound("no system of ours has a run file on %s; published systems have only aggregate results", task)
	}
	out := &QueryJSON{Task: task, Metric: metric.Key, Terms: []string{}, Relevant: []DocJSON{}}
	var terms map[string]bool
	found := false
	for i, sys := range systems {
		td, err := s.data.TaskData(ctx, sys.ID, task)
		if err != nil {
			return nil, err
		}
		q, ok := td.Query(qid)
		if !ok {
			continue
		}
		if !found {
			found = true
			out.Query = QueryInfo{ID: q.ID, Text: q.Text, Fields: q.Extra}
			terms = s.hl.Terms(q.Text)
			for t := range terms {
				out.Terms = append(out.Terms, t)
			}
			sort.Strings(out.Terms)
			for _, id := range relevantIDs(td.Qrels[qid]) {
				dj := DocJSON{ID: id, Grade: td.Qrels[qid][id]}
				if d, ok := td.Doc(id); ok {
					dj.Text = d.Text
					dj.Segments = s.hl.Segments(d.Text, terms)
				} else {
					dj.Missing = true
				}
				out.Relevant = append(out.Relevant, dj)
			}
		}
		sr := SystemResults{ID: sys.ID, Name: sys.Name, Color: report.Palette[i%len(report.Palette)], RelevantRanks: map[string]int{}, Hits: []HitJSON{}}
		run, err := s.data.RunFile(sys.ID, task)
		if err != nil {
			sr.Error = err.Error()
			out.Systems = append(out.Systems, sr)
			continue
		}
		if pq, err := s.data.PerQuery(ctx, sys.ID, task, metric.Key); err != nil {
			sr.Error = err.Error()
		} else if v, ok := pq[qid]; ok {
			sr.Value = &v
		}
		hits := ranked(run[qid])
		sr.Retrieved = len(hits)
		for _, id := range relevantIDs(td.Qrels[qid]) {
			sr.RelevantRanks[id] = 0
		}
		for i, h := range hits {
			g := td.Qrels[qid][h.DocID]
			if g > 0 {
				sr.RelevantRanks[h.DocID] = i + 1
			}
			if i >= k {
				continue
			}
			hj := HitJSON{Rank: i + 1, DocID: h.DocID, Score: h.Score, Grade: g, Relevant: g > 0}
			if d, ok := td.Doc(h.DocID); ok {
				hj.Text = d.Text
				hj.Segments = s.hl.Segments(d.Text, terms)
			}
			sr.Hits = append(sr.Hits, hj)
		}
		out.Systems = append(out.Systems, sr)
	}
	if !found {
		return nil, notFound("no query %q in %s", qid, task)
	}
	return out, nil
}

// ranked orders hits as trec_eval ranks them (score descending, ties by
// document id descending), so a drill-down's ranks are the ranks the
// metrics were computed at.
func ranked(hits []ir.Hit) []ir.Hit {
	out := slices.Clone(hits)
	slices.SortStableFunc(out, func(a, b ir.Hit) int {
		sa, sb := float32(a.Score), float32(b.Score)
		switch {
		case sa > sb:
			return -1
		case sa < sb:
			return 1
		}
		return strings.Compare(b.DocID, a.DocID)
	})
	return out
}

// relevantIDs lists the documents judged relevant (grade > 0), best grade
// first, then by id.
func relevantIDs(judged map[string]int) []string {
	var ids []string
	for id, g := range judged {
		if g > 0 {
			ids = append(ids, id)
		}
	}
	slices.SortFunc(ids, func(a, b string) int {
		if judged[a] != judged[b] {
			return judged[b] - judged[a]
		}
		return strings.Compare(a, b)
	})
	return ids
}

func (s *Server) queryParams(r *http.Request) (int, leaderboard.Metric, error) {
	k := s.opt.TopK
	if v := r.URL.Query().Get("k"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > MaxK {
			return 0, leaderboard.Metric{}, badRequest("k=%q: want a number from 1 to %d", v, MaxK)
		}
		k = n
	}
	m := leaderboard.DefaultMetric
	if v := r.URL.Query().Get("metric"); v != "" {
		var err error
		if m, err = leaderboard.ParseMetric(v); err != nil {
			return 0, m, badRequest("%v", err)
		}
	}
	return k, m, nil
}

func (s *Server) apiQuery(w http.ResponseWriter, r *http.Request) {
	k, m, err := s.queryParams(r)
	if err == nil {
		var q *QueryJSON
		if q, err = s.query(context.WithoutCancel(r.Context()), r.PathValue("task"), r.PathValue("qid"), k, m); err == nil {
			s.writeJSON(w, http.StatusOK, q)
			return
		}
	}
	s.jsonError(w, err)
}

// page renders a page in the layout, or an error page.
func (s *Server) page(w http.ResponseWriter, name string, data map[string]any) {
	data["Title"] = s.opt.Title
	data["Style"] = report.Style()
	data["Script"] = report.Script()
	data["Tasks"] = s.data.Tasks
	var b strings.Builder
	if err := s.pages[name].Execute(&b, data); err != nil {
		http.Error(w, "rendering "+name+": "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if c, ok := data["Code"].(int); ok {
		w.WriteHeader(c)
	}
	w.Write([]byte(b.String())) // a failed write is the client gone
}

func (s *Server) errorPage(w http.ResponseWriter, err error) {
	s.page(w, "error", map[string]any{"Heading": http.StatusText(status(err)), "Error": err.Error(), "Code": status(err)})
}

func (s *Server) leaderboardPage(w http.ResponseWriter, r *http.Request) {
	opt, err := tableOptions(r)
	if err != nil {
		s.errorPage(w, err)
		return
	}
	t, err := s.data.Board.Table(opt)
	if err != nil {
		s.errorPage(w, badRequest("%v", err))
		return
	}
	rep, err := report.Build(r.Context(), s.data, report.Options{Metric: t.Metric, NoScatter: true})
	if err != nil {
		s.errorPage(w, err)
		return
	}
	var cols []string
	for _, task := range rep.Tasks {
		if !report.IsR2MEDTask(task) || slices.Contains(t.Tasks, task) {
			cols = append(cols, task)
		}
	}
	view := report.Leaderboard(t, cols, rep.Colors())
	s.page(w, "leaderboard", map[string]any{
		"Table": view.HTML(), "Metric": t.Metric, "Family": string(opt.Family), "Bars": template.HTML(rep.Bars.SVG()),
		"HasBars": len(rep.Bars.Categories) > 0, "Notes": rep.Notes,
		"CSV": withQuery("/leaderboard.csv", r), "JSON": withQuery("/api/leaderboard", r),
	})
}

// withQuery is path with the request's query parameters, re-encoded.
func withQuery(path string, r *http.Request) string {
	if q := r.URL.Query().Encode(); q != "" {
		return path + "?" + q
	}
	return path
}

// taskRow is one system on the task page.
type taskRow struct {
	Sys   *leaderboard.System
	Cells []report.Cell
}

var taskMetrics = []leaderboard.Metric{
	leaderboard.DefaultMetric, {Key: "recall_at_10", Label: "Recall@10"}, {Key: "recall_at_100", Label: "Recall@100"},
	{Key: "map_at_100", Label: "MAP@100"}, {Key: "mrr", Label: "MRR"},
}

// queryRow is one query on the task page: its per-system values.
type queryRow struct {
	ID, Text string
	Cells    []report.Cell
}

func (s *Server) taskPage(w http.ResponseWriter, r *http.Request) {
	task := r.PathValue("task")
	if err := s.knownTask(task); err != nil {
		s.errorPage(w, err)
		return
	}
	_, metric, err := s.queryParams(r)
	if err != nil {
		s.errorPage(w, err)
		return
	}
	var rows []taskRow
	for i := range s.data.Board.Systems {
		sys := &s.data.Board.Systems[i]
		if _, ok := sys.Tasks[task]; !ok {
			continue
		}
		row := taskRow{Sys: sys}
		for _, m := range taskMetrics {
			v := report.Value(sys, task, m.Key)
			if math.IsNaN(v) {
				row.Cells = append(row.Cells, report.Cell{Text: "—"})
			} else {
				row.Cells = append(row.Cells, report.Cell{Text: leaderboard.Pct(v), Sort: strconv.FormatFloat(v*100, 'f', -1, 64)})
			}
		}
		rows = append(rows, row)
	}
	// Our systems with run files, their per-query values side by side.
	systems := s.taskSystems(task)
	var queries []queryRow
	var loadErr string
	if len(systems) > 0 {
		perSys := make([]map[string]float64, len(systems))
		for i, sys := range systems {
			if perSys[i], err = s.data.PerQuery(context.WithoutCancel(r.Context()), sys.ID, task, metric.Key); err != nil {
				loadErr = err.Error()
				break
			}
		}
		if loadErr == "" {
			td, err := s.data.TaskData(context.WithoutCancel(r.Context()), systems[0].ID, task)
			if err != nil {
				loadErr = err.Error()
			} else {
				for _, q := range td.Queries {
					qr := queryRow{ID: q.ID, Text: q.Text}
					for i := range systems {
						if v, ok := perSys[i][q.ID]; ok {
							qr.Cells = append(qr.Cells, report.Cell{Text: strconv.FormatFloat(v, 'f', 3, 64), Sort: strconv.FormatFloat(v, 'f', -1, 64)})
						} else {
							qr.Cells = append(qr.Cells, report.Cell{Text: "—"})
						}
					}
					queries = append(queries, qr)
				}
			}
		}
	}
	rep, err := report.Build(r.Context(), s.data, report.Options{Metric: metric, NoScatter: true})
	if err != nil {
		s.errorPage(w, err)
		return
	}
	var curve template.HTML
	for _, c := range rep.Curves {
		if strings.HasSuffix(c.Title, "— "+task) {
			curve = template.HTML(c.SVG())
		}
	}
	family := ""
	if t, err := tasks.Lookup(task); err == nil {
		family = t.Family.Title()
	}
	s.page(w, "task", map[string]any{
		"Task": task, "Family": family, "Metrics": taskMetrics, "Rows": rows, "Systems": systems, "Queries": queries,
		"LoadError": loadErr, "Curve": curve, "Metric": metric,
	})
}

func (s *Server) queryPage(w http.ResponseWriter, r *http.Request) {
	k, m, err := s.queryParams(r)
	if err != nil {
		s.errorPage(w, err)
		return
	}
	q, err := s.query(context.WithoutCancel(r.Context()), r.PathValue("task"), r.PathValue("qid"), k, m)
	if err != nil {
		s.errorPage(w, err)
		return
	}
	fields := map[string]string{}
	for name, raw := range q.Query.Fields {
		var str string
		if json.Unmarshal(raw, &str) == nil {
			fields[name] = str
		} else {
			fields[name] = string(raw)
		}
	}
	// In the query, the words that the relevant documents share with it.
	shared := map[string]bool{}
	terms := s.hl.Terms(q.Query.Text)
	for _, d := range q.Relevant {
		for t := range s.hl.Terms(d.Text) {
			if terms[t] {
				shared[t] = true
			}
		}
	}
	s.page(w, "query", map[string]any{"Q": q, "Fields": fields, "K": k, "Metric": m,
		"QuerySegs": s.hl.Segments(q.Query.Text, shared)})
}
