package server

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"net/http"
	"slices"
	"strings"

	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/leaderboard"
	"github.com/r2med/r2med/report"
	"github.com/r2med/r2med/taskstats"
)

// profileText is a task's profile as `r2med stats` prints it.
func profileText(t *ir.Task) string {
	var b strings.Builder
	if err := taskstats.Of(t).WriteText(&b); err != nil {
		return err.Error()
	}
	return b.String()
}

// countRow is one value of a field (or a range of counts) and how many
// queries have it; Sort is its sort key.
type countRow struct {
	Value string
	N     int
	Sort  int
}

// maxCountRows is how many distinct counts the data page lists one by
// one; with more, they are grouped in ranges that double.
const maxCountRows = 16

// countRows is the histogram of counts (count → queries) as table rows:
// one row per count, or, with more than maxCountRows of them (NFCorpus:
// a hundred), one per range 0, 1, 2, 3–4, 5–8, 9–16… Ranges no query
// falls in are left out.
func countRows(hist map[int]int) (rows []countRow, binned bool) {
	counts := slices.Sorted(maps.Keys(hist))
	if len(counts) <= maxCountRows {
		for _, n := range counts {
			rows = append(rows, countRow{Value: fmt.Sprint(n), N: hist[n], Sort: n})
		}
		return rows, false
	}
	lo, hi := 0, 0
	for len(counts) > 0 {
		row := countRow{Sort: lo}
		for len(counts) > 0 && counts[0] <= hi {
			row.N += hist[counts[0]]
			counts = counts[1:]
		}
		if row.N > 0 {
			row.Value = fmt.Sprint(lo)
			if hi > lo {
				row.Value = fmt.Sprintf("%d–%d", lo, hi)
			}
			rows = append(rows, row)
		}
		lo, hi = hi+1, max(2*hi, 1)
	}
	return rows, true
}

// dataPage is a task's dataset page: the r2med stats profile (queries,
// documents, judgments per query, text lengths), the judged documents per
// query, and the counts of R2MED's body_system field.
func (s *viewer) dataPage(w http.ResponseWriter, r *http.Request) {
	task := r.PathValue("task")
	if err := s.knownTask(task); err != nil {
		s.errorPage(w, err)
		return
	}
	systems := s.taskSystems(task)
	if len(systems) == 0 {
		s.errorPage(w, notFound("no system of ours has a run on %s, so its data was never loaded; published and external systems have only aggregate results", task))
		return
	}
	td, err := s.data.TaskData(context.WithoutCancel(r.Context()), systems[0].ID, task)
	if err != nil {
		s.errorPage(w, err)
		return
	}
	body := map[string]int{}
	for _, q := range td.Queries {
		if raw, ok := q.Extra["body_system"]; ok {
			var v string
			if json.Unmarshal(raw, &v) != nil {
				v = string(raw)
			}
			body[v]++
		}
	}
	var bodyRows []countRow
	for v, n := range body {
		bodyRows = append(bodyRows, countRow{Value: v, N: n})
	}
	slices.SortFunc(bodyRows, func(a, b countRow) int { return cmp.Or(b.N-a.N, strings.Compare(a.Value, b.Value)) })
	// Relevant documents per query, as a histogram.
	perQuery := map[int]int{}
	for _, q := range td.Queries {
		n := 0
		for _, g := range td.Qrels[q.ID] {
			if g > 0 {
				n++
			}
		}
		perQuery[n]++
	}
	relRows, binned := countRows(perQuery)
	s.page(w, "data", map[string]any{"Task": task, "Profile": profileText(td.Task), "Body": bodyRows, "RelPerQuery": relRows,
		"Binned": binned, "Distinct": len(perQuery), "Source": td.Task.Name, "From": systems[0].DisplayName()})
}

// diffQuery is one query of the diff page: both systems' values.
type diffQuery struct {
	ID, Text string
	A, B     float64
	Delta    float64
}

// docDiff is one document of a query's diff: its rank in each run (0: not
// retrieved) and its judgment.
type docDiff struct {
	DocID        string
	RankA, RankB int
	Grade        int
	// Judged says the judgments hold the document; Pooled that they
	// hold irrelevant ones too, so that an unjudged one is worth marking.
	Judged, Pooled bool
	Snippet        string
}

// Change says how the document moved from A to B.
func (d docDiff) Change() string {
	switch {
	case d.RankA == 0:
		return "new in B"
	case d.RankB == 0:
		return "dropped by B"
	case d.RankB < d.RankA:
		return fmt.Sprintf("▲ %d", d.RankA-d.RankB)
	case d.RankB > d.RankA:
		return fmt.Sprintf("▼ %d", d.RankB-d.RankA)
	}
	return "="
}

// diffPage compares two of our systems on a task: per-query deltas
// (B − A, every judged query, sorted), and for one query (?q=, else the
// one with the largest change) the documents' rank changes and those only
// in A's or only in B's top k.
func (s *viewer) diffPage(w http.ResponseWriter, r *http.Request) {
	task := r.PathValue("task")
	if err := s.knownTask(task); err != nil {
		s.errorPage(w, err)
		return
	}
	k, metric, err := s.queryParams(r)
	if err != nil {
		s.errorPage(w, err)
		return
	}
	k = max(k, 20)
	systems := s.taskSystems(task)
	if len(systems) < 2 {
		s.errorPage(w, notFound("the diff needs two systems of ours with run files on %s; it has %d", task, len(systems)))
		return
	}
	pick := func(param string, def *leaderboard.System) (*leaderboard.System, error) {
		v := r.URL.Query().Get(param)
		if v == "" {
			return def, nil
		}
		sys, err := s.data.System(v)
		if err != nil {
			return nil, badRequest("%s: %v", param, err)
		}
		if !s.data.HasRunFile(sys.ID, task) {
			return nil, badRequest("%s: %s has no run file on %s", param, sys.Name, task)
		}
		return sys, nil
	}
	a, err := pick("a", systems[0])
	if err == nil {
		var b *leaderboard.System
		if b, err = pick("b", systems[1]); err == nil {
			s.renderDiff(w, r, task, a, b, k, metric, systems)
			return
		}
	}
	s.errorPage(w, err)
}

func (s *viewer) renderDiff(w http.ResponseWriter, r *http.Request, task string, a, b *leaderboard.System, k int, metric leaderboard.Metric, systems []*leaderboard.System) {
	ctx := context.WithoutCancel(r.Context())
	va, err := s.data.PerQuery(ctx, a.ID, task, metric.Key)
	if err != nil {
		s.errorPage(w, err)
		return
	}
	vb, err := s.data.PerQuery(ctx, b.ID, task, metric.Key)
	if err != nil {
		s.errorPage(w, err)
		return
	}
	td, err := s.data.TaskData(ctx, a.ID, task)
	if err != nil {
		s.errorPage(w, err)
		return
	}
	var rows []diffQuery
	wins, losses := 0, 0
	for q, x := range va.ByQuery {
		y := vb.ByQuery[q]
		text := ""
		if qq, ok := td.Query(q); ok {
			text = qq.Text
		}
		rows = append(rows, diffQuery{ID: q, Text: text, A: x, B: y, Delta: y - x})
		switch {
		case y > x:
			wins++
		case y < x:
			losses++
		}
	}
	slices.SortFunc(rows, func(x, y diffQuery) int { return cmp.Or(cmp.Compare(y.Delta, x.Delta), strings.Compare(x.ID, y.ID)) })
	sel := r.URL.Query().Get("q")
	if sel == "" && len(rows) > 0 {
		best := rows[0]
		for _, q := range rows {
			if math.Abs(q.Delta) > math.Abs(best.Delta) {
				best = q
			}
		}
		sel = best.ID
	}
	runA, errA := s.data.RunFile(a.ID, task)
	runB, errB := s.data.RunFile(b.ID, task)
	if errA != nil || errB != nil {
		s.errorPage(w, cmp.Or(errA, errB))
		return
	}
	isPooled := pooled(td.Qrels)
	data := map[string]any{"Task": task, "A": a, "B": b, "Rows": rows, "N": len(rows), "Wins": wins, "Losses": losses,
		"Ties": len(rows) - wins - losses, "UnA": len(va.Unanswered), "UnB": len(vb.Unanswered), "Metric": metric,
		"Systems": systems, "Sel": sel, "K": k, "Pooled": isPooled, "JudgedK": judgedK,
		"JudgedA": fmt.Sprintf("%.2f", judgedAt(runA, td.Qrels, judgedK)), "JudgedB": fmt.Sprintf("%.2f", judgedAt(runB, td.Qrels, judgedK)),
		"DepthNotes": append(report.LabelNotes(a, metric, []string{task}), report.LabelNotes(b, metric, []string{task})...)}
	if sel != "" {
		if _, ok := va.ByQuery[sel]; !ok {
			s.errorPage(w, notFound("no judged query %q in %s", sel, task))
			return
		}
		rankA, rankB := rankOf(runA[sel]), rankOf(runB[sel])
		docs := map[string]*docDiff{}
		add := func(id string) {
			if docs[id] == nil {
				g, judged := td.Qrels[sel][id]
				d := &docDiff{DocID: id, RankA: rankA[id], RankB: rankB[id], Grade: g, Judged: judged, Pooled: isPooled}
				if doc, ok := td.Doc(id); ok {
					d.Snippet, _, _ = s.snippet(doc.Text, nil)
					if len(d.Snippet) > 160 {
						d.Snippet, _, _ = cutString(d.Snippet, 160)
					}
				}
				docs[id] = d
			}
		}
		var onlyA, onlyB []*docDiff
		for id, rk := range rankA {
			if rk <= k {
				add(id)
			}
		}
		for id, rk := range rankB {
			if rk <= k {
				add(id)
			}
		}
		for _, id := range relevantIDs(td.Qrels[sel]) {
			add(id)
		}
		var list []*docDiff
		top := func(r int) bool { return r > 0 && r <= k }
		for _, d := range docs {
			list = append(list, d)
			if top(d.RankA) && !top(d.RankB) {
				onlyA = append(onlyA, d)
			}
			if top(d.RankB) && !top(d.RankA) {
				onlyB = append(onlyB, d)
			}
		}
		best := func(d *docDiff) int {
			m := math.MaxInt
			for _, r := range []int{d.RankA, d.RankB} {
				if r > 0 {
					m = min(m, r)
				}
			}
			return m
		}
		byRank := func(x, y *docDiff) int { return cmp.Or(best(x)-best(y), strings.Compare(x.DocID, y.DocID)) }
		slices.SortFunc(list, byRank)
		slices.SortFunc(onlyA, func(x, y *docDiff) int { return x.RankA - y.RankA })
		slices.SortFunc(onlyB, func(x, y *docDiff) int { return x.RankB - y.RankB })
		q, _ := td.Query(sel)
		data["Query"] = q
		data["Docs"], data["OnlyA"], data["OnlyB"] = list, onlyA, onlyB
		data["RelOnlyA"], data["RelOnlyB"] = countRelevant(onlyA), countRelevant(onlyB)
		data["SelA"], data["SelB"] = va.ByQuery[sel], vb.ByQuery[sel]
	}
	s.page(w, "diff", data)
}

// rankOf maps a query's hits to their trec_eval ranks.
func rankOf(hits []ir.Hit) map[string]int {
	out := map[string]int{}
	for i, h := range ranked(hits) {
		out[h.DocID] = i + 1
	}
	return out
}

func cutString(s string, n int) (string, []Segment, bool) {
	segs, more := Cut([]Segment{{Text: s}}, n)
	if len(segs) == 0 {
		return "", nil, more
	}
	return segs[0].Text, segs, more
}

func countRelevant(docs []*docDiff) int {
	n := 0
	for _, d := range docs {
		if d.Grade > 0 {
			n++
		}
	}
	return n
}
