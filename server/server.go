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
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"math"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"golang.org/x/sync/semaphore"

	"github.com/r2med/r2med/analysis"
	"github.com/r2med/r2med/internal/httpserve"
	"github.com/r2med/r2med/internal/numtext"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/leaderboard"
	"github.com/r2med/r2med/report"
	"github.com/r2med/r2med/results"
	"github.com/r2med/r2med/significance"
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
	// Addr is the address the viewer is served on ("127.0.0.1:8080").
	// Requests must name it, a loopback name (localhost, 127.0.0.1, [::1])
	// or one of AllowHosts in their Host header: a page on another site
	// whose name resolves to this machine (DNS rebinding) is refused.
	Addr string
	// AllowHosts are more host names the Host header may give (the
	// machine's name when serving on 0.0.0.0).
	AllowHosts []string
	// Key, when set, is asked of every request: as the password of HTTP
	// Basic authentication (any user name; a browser asks for it once)
	// or as "Authorization: Bearer KEY" (httpserve.BasicKey). A viewer
	// reachable from other machines needs one: it shows documents and
	// runs.
	Key string
	// Results is the results directory the Data was read from, and
	// Reload reads it again. With both set, a request finds out (at most
	// every RecheckInterval) whether a run file, result file or manifest
	// under Results was added, replaced or removed since, and then shows
	// what Reload reads: a run re-run into its directory, a run deleted,
	// a new run. While Reload fails (a result file cut short or edited, a
	// run caught between its files), requests are answered 503 naming
	// the problem, never with the numbers read before. Without them the
	// viewer shows the Data it was given.
	Results string
	Reload  func() (*report.Data, error)
	// Send bounds how long sending a page or an answer may take, in
	// proportion to its size; the zero value is httpserve.DefaultSend. A
	// client that stops reading a drill-down frees its share of
	// MaxInFlightBytes by then, not at the server's write timeout.
	Send httpserve.Send
}

// MaxK bounds ?k= in the drill-down.
const MaxK = 1000

// Limits of what one response carries, so a corpus with huge documents
// cannot make a page of gigabytes.
const (
	// SnippetBytes is how much of each document a page or /api/query
	// carries; "show more" fetches one document from /api/doc.
	SnippetBytes = 480
	// MaxDocBytes is the most of one document /api/doc returns.
	MaxDocBytes = 1 << 20
)

// Server serves a report.Data: the one it was given, or, with
// Options.Reload, what is on disk now.
type Server struct {
	opt   Options
	guard http.Handler // the current viewer behind the Host check and headers

	inflight *semaphore.Weighted // MaxInFlightBytes, shared by the viewers of every reload
	marking  *semaphore.Weighted // MaxMarking, likewise

	mu      sync.Mutex
	cur     *viewer   // the viewer of the last Data read
	err     error     // why the last reload failed; nil when cur is current
	sig     string    // signature of the results directory cur (or err) was read from
	checked time.Time // when sig was last compared with the directory
}

// viewer serves one report.Data.
type viewer struct {
	inflight *semaphore.Weighted
	marking  *semaphore.Weighted
	marks    marks // the tables' significance marks, worked out once
	data     *report.Data
	opt      Options
	hl       *Highlighter
	mux      *http.ServeMux
	pages    map[string]*template.Template
}

// RecheckInterval is how often, at most, a request compares the results
// directory with what the viewer shows (Options.Reload). A variable so
// that tests can set it to 0.
var RecheckInterval = time.Second

// New builds the viewer of d. With opt.Reload and opt.Results, the first
// request reads the directory again, so that nothing written between
// reading d and New goes unnoticed.
func New(d *report.Data, opt Options) (*Server, error) {
	if opt.TopK <= 0 {
		opt.TopK = 10
	}
	if opt.Title == "" {
		opt.Title = "R2MED results"
	}
	s := &Server{opt: opt, inflight: newInflight(), marking: newMarking()} // sig "" is no directory's: the first request reloads
	v, err := newViewer(d, opt, s.inflight, s.marking)
	if err != nil {
		return nil, err
	}
	s.cur = v
	// The Host check against the bind address, the security headers and
	// the read-only rule are internal/httpserve's, shared with the
	// search service.
	s.guard = httpserve.Guard(httpserve.BasicKey(http.HandlerFunc(s.serve), opt.Key), httpserve.GuardOptions{Hosts: httpserve.NewHosts(opt.Addr, opt.AllowHosts), CSP: csp(),
		Name: "viewer", Methods: []string{http.MethodGet, http.MethodHead}})
	return s, nil
}

func newViewer(d *report.Data, opt Options, inflight, marking *semaphore.Weighted) (*viewer, error) {
	a, err := analysis.Get(opt.Analyzer)
	if err != nil {
		return nil, err
	}
	s := &viewer{inflight: inflight, marking: marking, data: d, opt: opt, hl: NewHighlighter(a), mux: http.NewServeMux(), pages: map[string]*template.Template{}}
	for name, body := range pageBodies {
		s.pages[name] = template.Must(template.Must(layout.Clone()).Parse(body))
	}
	s.mux.HandleFunc("GET /{$}", s.leaderboardPage)
	s.mux.HandleFunc("GET /task/{task}", s.taskPage)
	s.mux.HandleFunc("GET /task/{task}/data", s.dataPage)
	s.mux.HandleFunc("GET /query/{task}/{qid}", s.queryPage)
	s.mux.HandleFunc("GET /diff/{task}", s.diffPage)
	s.mux.HandleFunc("GET /api/leaderboard", s.apiLeaderboard)
	s.mux.HandleFunc("GET /api/runs", s.apiRuns)
	s.mux.HandleFunc("GET /api/query/{task}/{qid}", s.apiQuery)
	s.mux.HandleFunc("GET /api/doc/{task}/{docid}", s.apiDoc)
	s.mux.HandleFunc("GET /leaderboard.csv", s.leaderboardCSV)
	return s, nil
}

// csp is the pages' Content-Security-Policy: nothing from elsewhere, the
// one inline stylesheet and script allowed by their hashes (no
// 'unsafe-inline'), no framing, no plugins, forms to the viewer only.
func csp() string {
	hash := func(s string) string {
		h := sha256.Sum256([]byte(s))
		return "'sha256-" + base64.StdEncoding.EncodeToString(h[:]) + "'"
	}
	return "default-src 'none'; style-src " + hash(string(report.Style())) + "; script-src " + hash(string(report.ViewerScript())) +
		"; img-src data:; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
}

// ServeHTTP serves the viewer.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.guard.ServeHTTP(w, r) }

func (s *Server) watching() bool { return s.opt.Reload != nil && s.opt.Results != "" }

// serve answers r with the viewer of the results as they are now.
func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	v, err := s.current()
	if err != nil {
		if strings.HasPrefix(r.URL.Path, "/api/") {
			v.jsonError(w, err)
		} else {
			v.errorPage(w, err)
		}
		return
	}
	v.mux.ServeHTTP(w, r)
}

// current is the viewer of what is under Options.Results now: the one it
// has, or, when a file a run is read from has been added, replaced or
// removed since it was read, one of what Reload reads. A failed reload is
// an error (503) until the directory changes again and reads whole;
// the viewer returned with it renders the error page.
func (s *Server) current() (*viewer, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.watching() || time.Since(s.checked) < RecheckInterval {
		return s.cur, s.err
	}
	sig := resultsSignature(s.opt.Results)
	s.checked = time.Now()
	if sig == s.sig {
		return s.cur, s.err
	}
	// The signature is taken before reading: a change while Reload reads
	// is seen at the next check.
	s.sig = sig
	d, err := s.opt.Reload()
	if err == nil {
		var v *viewer
		if v, err = newViewer(d, s.opt, s.inflight, s.marking); err == nil {
			s.cur, s.err = v, nil
			return v, nil
		}
	}
	s.err = &httpError{http.StatusServiceUnavailable, fmt.Sprintf("the results under %s changed while the viewer was showing them, and reading them again failed: %v. "+
		"The viewer shows them again once they read whole (once r2med results lists them)", s.opt.Results, err)}
	return s.cur, s.err
}

// resultsSignature identifies the state of the files under root that a
// results listing is read from (run, result and manifest files: their
// paths, sizes and modification times), so that a run re-run, a
// file edited or a directory deleted or added changes it. Files that
// vanish while it is taken make it differ too.
func resultsSignature(root string) string {
	h := sha256.New()
	filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			fmt.Fprintf(h, "%s\x00error %v\n", path, err)
			return nil
		}
		switch name := d.Name(); {
		case d.IsDir():
			return nil
		case name != results.ResultsFile && name != results.ManifestFile && !strings.HasPrefix(name, results.RunFile):
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			fmt.Fprintf(h, "%s\x00error %v\n", path, err)
			return nil
		}
		fmt.Fprintf(h, "%s\x00%d %d\n", path, fi.Size(), fi.ModTime().UnixNano())
		return nil
	})
	return string(h.Sum(nil))
}

// Timeouts of Serve's server: a slow or idle client cannot hold a
// connection, and a response (which may load a task's data first) is
// cut after WriteTimeout. Variables so that tests can shorten them.
var (
	ReadHeaderTimeout = 10 * time.Second
	ReadTimeout       = 30 * time.Second
	WriteTimeout      = 5 * time.Minute
	IdleTimeout       = 2 * time.Minute
)

// MaxHeaderBytes bounds a request's headers.
const MaxHeaderBytes = httpserve.MaxHeaderBytes

// Serve serves h on ln until ctx is done, then shuts down gracefully:
// no new connections, requests in flight finish (for up to 5 seconds).
func Serve(ctx context.Context, ln net.Listener, h http.Handler) error {
	return httpserve.Serve(ctx, ln, h, httpserve.Timeouts{ReadHeader: ReadHeaderTimeout, Read: ReadTimeout,
		Write: WriteTimeout, Idle: IdleTimeout, Shutdown: 5 * time.Second})
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

// reqError is a request's error: a usage error (an unknown metric, kind,
// family) is 400, not 500.
func reqError(err error) error {
	var ue *leaderboard.UsageError
	if errors.As(err, &ue) {
		return badRequest("%v", err)
	}
	return err
}

func status(err error) int {
	var he *httpError
	if errors.As(err, &he) {
		return he.code
	}
	if errors.Is(err, results.ErrDataNotFound) {
		// The run's data is not where its manifest says: the message
		// names the manifest and what to do; the server is fine.
		return http.StatusNotFound
	}
	return http.StatusInternalServerError
}

// tableOptions reads ?metric=&family=&kind=&rank= as r2med leaderboard
// reads its flags; ours are pinned first unless ?pin=0.
func tableOptions(r *http.Request) (leaderboard.Options, error) {
	opt := leaderboard.Options{PinOurs: r.URL.Query().Get("pin") != "0"}
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

// table builds the leaderboard a request asks for, marked against
// ?baseline= when given.
func (s *viewer) table(r *http.Request) (*leaderboard.Table, []string, error) {
	opt, err := tableOptions(r)
	if err != nil {
		return nil, nil, err
	}
	t, err := s.data.Board.Table(opt)
	if err != nil {
		return nil, nil, badRequest("%v", err)
	}
	var notes []string
	if b := r.URL.Query().Get("baseline"); b != "" {
		if notes, err = s.markTable(r.Context(), t, opt, b); err != nil {
			return nil, nil, err
		}
	}
	return t, notes, nil
}

// writeJSON answers v as indented JSON, made whole, then sent within
// Options.Send (a drill-down's share of MaxInFlightBytes is held until it
// is sent).
func (s *viewer) writeJSON(w http.ResponseWriter, code int, v any) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		code = http.StatusInternalServerError
		b.Reset()
		json.NewEncoder(&b).Encode(map[string]string{"error": err.Error()})
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(b.Len()))
	w.WriteHeader(code)
	s.opt.Send.Write(w, b.Bytes()) // the status is sent; a failed write is the client gone
}

func (s *viewer) jsonError(w http.ResponseWriter, err error) {
	retryAfter(w, err)
	s.writeJSON(w, status(err), map[string]string{"error": err.Error()})
}

// apiLeaderboard is the leaderboard as JSON, with every column the page
// shows: R2MED's tasks, the average, our runs' other data.
func (s *viewer) apiLeaderboard(w http.ResponseWriter, r *http.Request) {
	t, _, err := s.table(r)
	if err != nil {
		s.jsonError(w, err)
		return
	}
	s.writeJSON(w, http.StatusOK, t.JSON())
}

func (s *viewer) leaderboardCSV(w http.ResponseWriter, r *http.Request) {
	t, _, err := s.table(r)
	if err != nil {
		http.Error(w, err.Error(), status(err))
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

func (s *viewer) apiRuns(w http.ResponseWriter, r *http.Request) {
	out := RunsJSON{Runs: []leaderboard.RunInfo{}, Unfinished: []string{}}
	if l := s.data.Board.Listing; l != nil {
		out.Root, out.Runs = l.Root, leaderboard.Runs(l)
		out.Unfinished = append(out.Unfinished, l.Unfinished...)
	}
	s.writeJSON(w, http.StatusOK, out)
}

// QueryJSON is the drill-down of one query, /api/query/{task}/{qid}.
// Document texts are snippets (SnippetBytes); /api/doc gives one whole.
type QueryJSON struct {
	Task string `json:"task"`
	// PooledJudgments is set when the judgments hold documents judged
	// not relevant (grade 0 or below), as pooled TREC judgments do: a
	// document they lack is then unjudged, and is marked so. R2MED's and
	// BEIR's list relevant documents only.
	PooledJudgments bool            `json:"pooled_judgments"`
	Query           QueryInfo       `json:"query"`
	Terms           []string        `json:"terms"` // the query's index terms
	Relevant        []DocJSON       `json:"relevant"`
	Metric          string          `json:"metric"` // R2MED key of Systems[].Value
	Systems         []SystemResults `json:"systems"`
}

// QueryInfo is the query: id, text and its other fields (R2MED's
// body_system, answer…) as they are in the query file.
type QueryInfo struct {
	ID     string                     `json:"id"`
	Text   string                     `json:"text"`
	Fields map[string]json.RawMessage `json:"fields,omitempty"`
}

// DocJSON is a document with its judgment: a snippet of its text.
type DocJSON struct {
	ID    string `json:"id"`
	Grade int    `json:"grade"`
	// Text is the first SnippetBytes of the document; Truncated says
	// there is more (Length bytes in all, /api/doc has it).
	Text      string    `json:"text"`
	Truncated bool      `json:"truncated,omitempty"`
	Length    int       `json:"length"`
	Missing   bool      `json:"missing,omitempty"` // judged but not in the corpus
	Segments  []Segment `json:"-"`
}

// SystemResults is one system's ranking for the query.
type SystemResults struct {
	ID       string   `json:"id"`
	Name     string   `json:"name"`      // as pages show it (DisplayName)
	FullName string   `json:"full_name"` // for exports
	About    string   `json:"-"`         // the hover: leaderboard's System.About
	Series   int      `json:"-"`
	Value    *float64 `json:"value"` // the metric on this query; null when not evaluated
	// Label names Value: the metric's label, or the run's name for its
	// MRR where that is not the benchmark's ("MRR@100" for a BRIGHT run
	// kept 100 deep; leaderboard.TaskResult.Label).
	Label string `json:"label"`
	// RelevantRanks maps each relevant document to its rank in the run, 0
	// when the run does not retrieve it.
	RelevantRanks map[string]int `json:"relevant_ranks"`
	Hits          []HitJSON      `json:"hits"`
	Retrieved     int            `json:"retrieved"` // hits in the run for the query
	// Judged of JudgedOf (the top k, or fewer hits) are in the
	// judgments; Unjudged = JudgedOf − Judged. FewerJudged marks a
	// system whose top k holds fewer judged documents than another's,
	// with pooled judgments: its score may understate it.
	Judged      int    `json:"judged"`
	JudgedOf    int    `json:"judged_of"`
	Unjudged    int    `json:"-"`
	FewerJudged bool   `json:"fewer_judged,omitempty"`
	Error       string `json:"error,omitempty"`
}

// RelevantAt lists the ranks of the relevant documents, best first, then
// the count of those not retrieved.
func (r SystemResults) RelevantAt() (ranks []int, missing int) {
	for _, k := range r.RelevantRanks {
		if k == 0 {
			missing++
		} else {
			ranks = append(ranks, k)
		}
	}
	slices.Sort(ranks)
	return ranks, missing
}

// HitJSON is one retrieved document: a snippet of it.
type HitJSON struct {
	Rank      int       `json:"rank"`
	DocID     string    `json:"doc_id"`
	Score     float64   `json:"score"`
	Grade     int       `json:"grade"`
	Relevant  bool      `json:"relevant"`
	Judged    bool      `json:"judged"` // in the judgments, relevant or not
	Text      string    `json:"text"`
	Truncated bool      `json:"truncated,omitempty"`
	Length    int       `json:"length"`
	Segments  []Segment `json:"-"`
}

// taskSystems are the systems with a run file on task, ours in board
// order.
func (s *viewer) taskSystems(task string) []*leaderboard.System {
	var out []*leaderboard.System
	for _, sys := range s.data.Ours() {
		if s.data.HasRunFile(sys.ID, task) {
			out = append(out, sys)
		}
	}
	return out
}

func (s *viewer) knownTask(task string) error {
	if !slices.Contains(s.data.Tasks, task) {
		return notFound("no task %q; tasks with results: %s", task, strings.Join(s.data.Tasks, ", "))
	}
	return nil
}

// snippet cuts a text to SnippetBytes with its highlighted segments.
func (s *viewer) snippet(text string, terms map[string]bool) (string, []Segment, bool) {
	cut, more := text, false
	if len(text) > SnippetBytes {
		n := SnippetBytes
		for n > 0 && !utf8.RuneStart(text[n]) {
			n--
		}
		cut, more = text[:n], true
	}
	return cut, s.hl.Segments(cut, terms), more
}

// query assembles the drill-down. The query and its relevant documents
// come from the data of the first system with a run on the task; each
// system's hits are judged with its own run's data.
func (s *viewer) query(ctx context.Context, task, qid string, k int, metric leaderboard.Metric) (*QueryJSON, error) {
	if err := s.knownTask(task); err != nil {
		return nil, err
	}
	systems := s.taskSystems(task)
	if len(systems) == 0 {
		return nil, notFound("no system of ours has a run file on %s; published and external systems have only aggregate results", task)
	}
	series := map[string]int{}
	for i, sys := range s.data.Ours() {
		series[sys.ID] = i
	}
	out := &QueryJSON{Task: task, Metric: metric.Key, Terms: []string{}, Relevant: []DocJSON{}}
	var terms map[string]bool
	found := false
	var loadErr error
	for _, sys := range systems {
		td, err := s.data.TaskData(ctx, sys.ID, task)
		if err != nil {
			// One run's data that cannot be loaded costs its column, not
			// the page.
			loadErr = err
			out.Systems = append(out.Systems, SystemResults{ID: sys.ID, Name: sys.DisplayName(), FullName: sys.FullName(), About: sys.About(), Series: series[sys.ID] % len(report.Palette),
				RelevantRanks: map[string]int{}, Hits: []HitJSON{}, Error: err.Error()})
			continue
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
			out.PooledJudgments = pooled(td.Qrels)
			for _, id := range relevantIDs(td.Qrels[qid]) {
				dj := DocJSON{ID: id, Grade: td.Qrels[qid][id]}
				if d, ok := td.Doc(id); ok {
					dj.Length = len(d.Text)
					dj.Text, dj.Segments, dj.Truncated = s.snippet(d.Text, terms)
				} else {
					dj.Missing = true
				}
				out.Relevant = append(out.Relevant, dj)
			}
		}
		sr := SystemResults{ID: sys.ID, Name: sys.DisplayName(), FullName: sys.FullName(), About: sys.About(), Series: series[sys.ID] % len(report.Palette),
			Label: sys.Tasks[task].Label(metric), RelevantRanks: map[string]int{}, Hits: []HitJSON{}}
		run, err := s.data.RunFile(sys.ID, task)
		if err != nil {
			sr.Error = err.Error()
			out.Systems = append(out.Systems, sr)
			continue
		}
		if pq, err := s.data.PerQuery(ctx, sys.ID, task, metric.Key); err != nil {
			sr.Error = err.Error()
		} else if v, ok := pq.ByQuery[qid]; ok {
			sr.Value = &v
		}
		hits := ranked(run[qid])
		sr.Retrieved = len(hits)
		for _, id := range relevantIDs(td.Qrels[qid]) {
			sr.RelevantRanks[id] = 0
		}
		sr.JudgedOf = min(k, len(hits))
		for i, h := range hits {
			g, judged := td.Qrels[qid][h.DocID]
			if g > 0 {
				sr.RelevantRanks[h.DocID] = i + 1
			}
			if i >= k {
				continue
			}
			if judged {
				sr.Judged++
			}
			hj := HitJSON{Rank: i + 1, DocID: h.DocID, Score: h.Score, Grade: g, Relevant: g > 0, Judged: judged}
			if d, ok := td.Doc(h.DocID); ok {
				hj.Length = len(d.Text)
				hj.Text, hj.Segments, hj.Truncated = s.snippet(d.Text, terms)
			}
			sr.Hits = append(sr.Hits, hj)
		}
		out.Systems = append(out.Systems, sr)
	}
	if !found {
		if loadErr != nil {
			return nil, loadErr
		}
		return nil, notFound("no query %q in %s", qid, task)
	}
	most := 0
	for i := range out.Systems {
		sr := &out.Systems[i]
		sr.Unjudged = sr.JudgedOf - sr.Judged
		most = max(most, sr.Judged)
	}
	for i := range out.Systems {
		if sr := &out.Systems[i]; out.PooledJudgments && sr.Error == "" && sr.Judged < most && sr.Unjudged > 0 {
			sr.FewerJudged = true
		}
	}
	return out, nil
}

// pooled reports whether judgments hold documents judged not relevant
// (grade 0 or below) as well as relevant ones, as pooled TREC judgments
// do; R2MED's and BEIR's list the relevant ones only, so that there any
// other document is unjudged.
func pooled(q ir.Qrels) bool {
	for _, docs := range q {
		for _, g := range docs {
			if g <= 0 {
				return true
			}
		}
	}
	return false
}

// judgedAt is the mean over the judged queries of the share of a run's
// top k (trec_eval's order; an unanswered query's is 0) that the
// judgments cover, relevant or not.
func judgedAt(run ir.Run, q ir.Qrels, k int) float64 {
	if len(q) == 0 {
		return 0
	}
	var sum float64
	for qid, docs := range q {
		hits := ranked(run[qid])
		n := 0
		for _, h := range hits[:min(k, len(hits))] {
			if _, ok := docs[h.DocID]; ok {
				n++
			}
		}
		sum += float64(n) / float64(k)
	}
	return sum / float64(len(q))
}

// ranked orders hits as trec_eval ranks them (score descending, ties by
// document id descending), so a drill-down's ranks are the ranks the
// metrics were computed at.
func ranked(hits []ir.Hit) []ir.Hit {
	out := slices.Clone(hits)
	slices.SortStableFunc(out, ir.ByScore)
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

func (s *viewer) queryParams(r *http.Request) (int, leaderboard.Metric, error) {
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

func (s *viewer) apiQuery(w http.ResponseWriter, r *http.Request) {
	k, m, err := s.queryParams(r)
	var done func()
	if err == nil {
		done, err = s.admit(r.PathValue("task"), r.PathValue("qid"), k)
	}
	if err == nil {
		defer done()
		var q *QueryJSON
		if q, err = s.query(context.WithoutCancel(r.Context()), r.PathValue("task"), r.PathValue("qid"), k, m); err == nil {
			s.writeJSON(w, http.StatusOK, q)
			return
		}
	}
	s.jsonError(w, err)
}

// DocJSONFull is /api/doc/{task}/{docid}: one document, cut at
// MaxDocBytes.
type DocJSONFull struct {
	Task      string `json:"task"`
	ID        string `json:"id"`
	Text      string `json:"text"`
	Length    int    `json:"length"`
	Truncated bool   `json:"truncated"`
}

// apiDoc serves one document of a task (from the data of the first
// system of ours with a run on it, or ?system=ID's): what "show more"
// fetches.
func (s *viewer) apiDoc(w http.ResponseWriter, r *http.Request) {
	task, id := r.PathValue("task"), r.PathValue("docid")
	if err := s.knownTask(task); err != nil {
		s.jsonError(w, err)
		return
	}
	systems := s.taskSystems(task)
	if sid := r.URL.Query().Get("system"); sid != "" {
		sys, err := s.data.System(sid)
		if err != nil || !s.data.HasRunFile(sys.ID, task) {
			s.jsonError(w, notFound("no system %q with a run on %s", sid, task))
			return
		}
		systems = []*leaderboard.System{sys}
	}
	if len(systems) == 0 {
		s.jsonError(w, notFound("no system of ours has a run on %s: no documents to show", task))
		return
	}
	td, err := s.data.TaskData(context.WithoutCancel(r.Context()), systems[0].ID, task)
	if err != nil {
		s.jsonError(w, err)
		return
	}
	d, ok := td.Doc(id)
	if !ok {
		s.jsonError(w, notFound("no document %q in %s", id, task))
		return
	}
	out := DocJSONFull{Task: task, ID: id, Text: d.Text, Length: len(d.Text)}
	if len(d.Text) > MaxDocBytes {
		n := MaxDocBytes
		for n > 0 && !utf8.RuneStart(d.Text[n]) {
			n--
		}
		out.Text, out.Truncated = d.Text[:n], true
	}
	s.writeJSON(w, http.StatusOK, out)
}

// page renders a page in the layout, or an error page.
func (s *viewer) page(w http.ResponseWriter, name string, data map[string]any) {
	data["Title"] = s.opt.Title
	data["Style"] = report.Style()
	data["Script"] = report.ViewerScript()
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
	s.opt.Send.Write(w, []byte(b.String())) // a failed write is the client gone (or too slow: Options.Send)
}

// retryAfter asks a client answered 503 (busy, results being rewritten)
// to come back in a moment.
func retryAfter(w http.ResponseWriter, err error) {
	if status(err) == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", "2")
	}
}

func (s *viewer) errorPage(w http.ResponseWriter, err error) {
	retryAfter(w, err)
	s.page(w, "error", map[string]any{"Heading": http.StatusText(status(err)), "Error": err.Error(), "Code": status(err)})
}

func (s *viewer) leaderboardPage(w http.ResponseWriter, r *http.Request) {
	t, notes, err := s.table(r)
	if err != nil {
		s.errorPage(w, err)
		return
	}
	rep, err := report.Build(r.Context(), s.data, report.Options{Metric: t.Metric, NoScatter: true})
	if err != nil {
		s.errorPage(w, err)
		return
	}
	view := report.Leaderboard(t, rep.Tasks, rep.Series())
	var ours []*leaderboard.System
	for _, sys := range s.data.Ours() {
		ours = append(ours, sys)
	}
	s.page(w, "leaderboard", map[string]any{
		"Table": view.HTML(), "Metric": t.Metric, "Family": string(t.Family), "Bars": template.HTML(rep.Bars.SVG()),
		"HasBars": len(rep.Bars.Categories) > 0, "Notes": append(rep.Notes, notes...), "Ours": ours, "Baseline": r.URL.Query().Get("baseline"),
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

// taskRow is one system on the task page's leaderboard.
type taskRow struct {
	Rank  string
	Sys   *leaderboard.System
	Cells []report.Cell
}

// judgedK is the depth of the judged@k the task and diff pages show.
const judgedK = 10

var taskMetrics = []leaderboard.Metric{
	leaderboard.DefaultMetric, {Key: "recall_at_10", Label: "Recall@10"}, {Key: "recall_at_100", Label: "Recall@100"},
	{Key: "map_at_100", Label: "MAP@100"}, {Key: "mrr", Label: "MRR"},
}

// queryRow is one query on the task page: its per-system values.
type queryRow struct {
	ID, Text string
	Cells    []report.Cell
}

// taskBoard is the task's leaderboard: every system with a value of
// metric on it (ours, published, external; average-only rows have none),
// best first, with competition ranks: values that print alike (×100, two
// decimals) share a rank, as the page shows them and says.
func (s *viewer) taskBoard(task string, metric leaderboard.Metric) []taskRow {
	var rows []taskRow
	for i := range s.data.Board.Systems {
		sys := &s.data.Board.Systems[i]
		if _, ok := sys.Tasks[task]; !ok {
			continue
		}
		row := taskRow{Sys: sys}
		for _, m := range taskMetrics {
			row.Cells = append(row.Cells, report.ScoreCell(sys.Tasks[task], m))
		}
		rows = append(rows, row)
	}
	val := func(r taskRow) float64 { return report.Value(r.Sys, task, metric.Key) }
	slices.SortStableFunc(rows, func(a, b taskRow) int {
		va, vb := val(a), val(b)
		switch {
		case math.IsNaN(va) && math.IsNaN(vb):
			return strings.Compare(a.Sys.Name, b.Sys.Name)
		case math.IsNaN(va):
			return 1
		case math.IsNaN(vb):
			return -1
		}
		return cmp.Compare(vb, va)
	})
	for i := range rows {
		switch {
		case math.IsNaN(val(rows[i])):
			rows[i].Rank = "—"
		case i > 0 && leaderboard.Pct(val(rows[i-1])) == leaderboard.Pct(val(rows[i])):
			rows[i].Rank = rows[i-1].Rank
		default:
			rows[i].Rank = strconv.Itoa(i + 1)
		}
	}
	return rows
}

func (s *viewer) taskPage(w http.ResponseWriter, r *http.Request) {
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
	rows := s.taskBoard(task, metric)
	// Our systems with run files, their per-query values side by side.
	systems := s.taskSystems(task)
	var queries []queryRow
	var loadErr string
	var unanswered []int
	if len(systems) > 0 {
		perSys := make([]significance.Values, len(systems))
		for i, sys := range systems {
			if perSys[i], err = s.data.PerQuery(context.WithoutCancel(r.Context()), sys.ID, task, metric.Key); err != nil {
				loadErr = err.Error()
				break
			}
			unanswered = append(unanswered, len(perSys[i].Unanswered))
		}
		if loadErr == "" {
			td, err := s.data.TaskData(context.WithoutCancel(r.Context()), systems[0].ID, task)
			if err != nil {
				loadErr = err.Error()
			} else {
				for _, q := range td.Queries {
					if _, judged := td.Qrels[q.ID]; !judged {
						continue
					}
					qr := queryRow{ID: q.ID, Text: q.Text}
					for i := range systems {
						v := perSys[i].ByQuery[q.ID]
						qr.Cells = append(qr.Cells, report.Cell{Text: numtext.Query(v), Sort: strconv.FormatFloat(v, 'f', -1, 64)})
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
	var curve, legend template.HTML
	for _, c := range rep.Curves {
		if strings.HasSuffix(c.Title, "— "+task) {
			c.SharedLegend = false
			curve = template.HTML(c.SVG())
		}
	}
	family := ""
	if t, err := tasks.Lookup(task); err == nil {
		family = t.Family.Title()
	}
	var judged []string
	isPooled := false
	if loadErr == "" && len(systems) > 0 {
		if td, err := s.data.TaskData(context.WithoutCancel(r.Context()), systems[0].ID, task); err == nil {
			isPooled = pooled(td.Qrels)
			for _, sys := range systems {
				run, err := s.data.RunFile(sys.ID, task)
				if err != nil {
					judged = append(judged, "—")
					continue
				}
				judged = append(judged, strconv.FormatFloat(judgedAt(run, td.Qrels, judgedK), 'f', 2, 64))
			}
		}
	}
	var diff string
	if len(systems) >= 2 {
		diff = "/diff/" + url.PathEscape(task) + "?a=" + url.QueryEscape(systems[0].ID) + "&b=" + url.QueryEscape(systems[1].ID)
	}
	// MRRs named by their depth (MRR@100 of a BRIGHT run kept 100
	// deep): marked in the board and the per-query columns, said under
	// the board.
	var labels, marks []string
	for _, row := range rows {
		if _, ok := row.Sys.Tasks[task].Metrics["mrr"]; ok {
			labels = append(labels, row.Sys.Tasks[task].MRRLabel)
		}
	}
	for _, sys := range systems {
		marks = append(marks, results.MRRMark(sys.Tasks[task].Label(metric)))
	}
	s.page(w, "task", map[string]any{
		"Task": task, "Family": family, "Metrics": taskMetrics, "Rows": rows, "Systems": systems, "Queries": queries,
		"Unanswered": unanswered, "LoadError": loadErr, "Curve": curve, "Legend": legend, "Metric": metric, "Diff": diff,
		"HasData": len(systems) > 0, "Judged": judged, "JudgedK": judgedK, "Pooled": isPooled,
		"DepthNotes": results.MRRMarkNotes(labels), "Marks": marks,
	})
}

func (s *viewer) queryPage(w http.ResponseWriter, r *http.Request) {
	k, m, err := s.queryParams(r)
	if err != nil {
		s.errorPage(w, err)
		return
	}
	done, err := s.admit(r.PathValue("task"), r.PathValue("qid"), k)
	if err != nil {
		s.errorPage(w, err)
		return
	}
	defer done()
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
	// Rows of the rank grid: rank i of every system side by side.
	depth := 0
	for _, sys := range q.Systems {
		depth = max(depth, len(sys.Hits))
	}
	grid := make([]gridRow, depth)
	for i := range grid {
		grid[i].Rank = i + 1
		for _, sys := range q.Systems {
			switch {
			case i < len(sys.Hits):
				h := sys.Hits[i]
				grid[i].Cells = append(grid[i].Cells, gridCell{Hit: &h})
			case i == len(sys.Hits) && sys.Error != "":
				grid[i].Cells = append(grid[i].Cells, gridCell{Note: "not shown: " + sys.Error})
			case i == 0:
				grid[i].Cells = append(grid[i].Cells, gridCell{Note: "no answer: the run ranks no document for this query"})
			case i == len(sys.Hits):
				grid[i].Cells = append(grid[i].Cells, gridCell{Note: fmt.Sprintf("end of the run: it ranks %d document%s for this query", len(sys.Hits), map[bool]string{true: "", false: "s"}[len(sys.Hits) == 1])})
			default:
				grid[i].Cells = append(grid[i].Cells, gridCell{})
			}
		}
	}
	var labels []string
	for _, sys := range q.Systems {
		labels = append(labels, sys.Label)
	}
	s.page(w, "query", map[string]any{"Q": q, "Fields": fields, "K": k, "Metric": m, "Grid": grid, "Cols": len(q.Systems), "DepthNotes": results.MRRMarkNotes(labels),
		"QuerySegs": s.hl.Segments(q.Query.Text, shared)})
}

// gridRow is one rank of the per-query page's grid.
type gridRow struct {
	Rank  int
	Cells []gridCell
}

// gridCell is one system's hit at a rank; a system that ranks fewer
// documents has no Hit there, and the first such cell says why (Note).
type gridCell struct {
	Hit  *HitJSON
	Note string
}
