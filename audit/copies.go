package audit

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/r2med/r2med/dataset"
	"github.com/r2med/r2med/hub"
	"github.com/r2med/r2med/hubrepo"
	"github.com/r2med/r2med/internal/errtext"
	"github.com/r2med/r2med/table"
)

// Copy is a task as one copy of its data holds it: every row of its
// corpus, query and qrels, in file order, repeated ids included.
type Copy struct {
	// Label says which copy this is ("as R2MED publishes it", "the copy
	// MTEB reads"); Repo and Revision where it was read (the commit).
	Label, Repo, Revision string
	Docs, Queries         []CopyRow
	Qrels                 []CopyJudgment
	// Expected is the number of documents the copy's own metadata states
	// (MTEB's statistics), 0 when it states none.
	Expected int
}

// CopyRow is a document or query row.
type CopyRow struct {
	ID, Text string
	At       string // file:line
}

// CopyJudgment is a qrels row.
type CopyJudgment struct {
	Query, Doc string
	Grade      int
	At         string
}

// The configs and splits of a task repository in R2MED's layout, as MTEB's
// loader names them in load_dataset(path, name=…, split=…).
var copyConfigs = []struct{ config, id, text string }{
	{"corpus", "id", "text"}, {"query", "id", "text"}, {"qrels", "", ""},
}

// FetchCopy downloads what ReadCopy reads of a task repository at a
// revision (its README and the corpus, query and qrels files, not the
// generations beside them) through the Hub cache, and reads it. The copy's
// Revision is the commit the revision resolved to.
func FetchCopy(ctx context.Context, c *hub.Client, repo, revision string) (*Copy, error) {
	r := hub.Repo{Type: hub.Dataset, ID: repo}
	snap, err := c.Snapshot(ctx, r, revision, "README.md")
	if err != nil {
		return nil, err
	}
	hc, err := hubrepo.ReadConfigs(snap.Dir)
	if err != nil {
		return nil, err
	}
	patterns := []string{"README.md"}
	for _, cc := range copyConfigs {
		p, err := hc.Patterns(cc.config, cc.config)
		if err != nil {
			return nil, err
		}
		patterns = append(patterns, p...)
	}
	if snap, err = c.Snapshot(ctx, r, snap.Commit, patterns...); err != nil {
		return nil, err
	}
	cp, err := ReadCopy(snap.Dir)
	if err != nil {
		return nil, err
	}
	cp.Repo, cp.Revision = repo, snap.Commit
	return cp, nil
}

// ReadCopy reads a task repository in R2MED's layout downloaded to dir
// (its README's configs corpus, query and qrels, each with the split of
// the same name, as MTEB's loader reads them), keeping every row.
func ReadCopy(dir string) (*Copy, error) {
	hc, err := hubrepo.ReadConfigs(dir)
	if err != nil {
		return nil, err
	}
	d, err := dataset.OpenDir(dir, "dataset repository", "")
	if err != nil {
		return nil, err
	}
	c := &Copy{}
	for _, cc := range copyConfigs {
		files, err := hc.Files(cc.config, cc.config)
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			err := table.Each(d, f, nil, func(m table.Row, at table.At) error {
				// Rows are placed by their path in the repository.
				loc := table.At{File: f, Line: at.Line, Row: at.Row}.String()
				if cc.config == "qrels" {
					j, err := copyJudgment(m)
					if err != nil {
						return at.Errorf("%v", err)
					}
					j.At = loc
					c.Qrels = append(c.Qrels, j)
					return nil
				}
				id, err := dataset.ID(m, dataset.IDKeys{ID: cc.id}, cc.config)
				if err != nil {
					return at.Errorf("%v", err)
				}
				text, err := dataset.Text(m, cc.text, true)
				if err != nil {
					return at.Errorf("%v", err)
				}
				row := CopyRow{ID: id, Text: text, At: loc}
				if cc.config == "corpus" {
					c.Docs = append(c.Docs, row)
				} else {
					c.Queries = append(c.Queries, row)
				}
				return nil
			})
			if err != nil {
				return nil, err
			}
		}
	}
	return c, nil
}

func copyJudgment(m map[string]json.RawMessage) (CopyJudgment, error) {
	q, err := dataset.ID(m, dataset.IDKeys{ID: "q_id"}, "judgment")
	if err != nil {
		return CopyJudgment{}, err
	}
	p, err := dataset.ID(m, dataset.IDKeys{ID: "p_id"}, "judgment")
	if err != nil {
		return CopyJudgment{}, err
	}
	raw, ok := m["score"]
	if !ok {
		return CopyJudgment{}, fmt.Errorf("judgment without a score")
	}
	g, err := dataset.Grade(raw)
	if err != nil {
		return CopyJudgment{}, err
	}
	return CopyJudgment{Query: q, Doc: p, Grade: g}, nil
}

// CopiesReport compares two copies of a task. Rows are keyed by id, a later
// row replacing an earlier one with the same id, as MTEB's loader (and
// R2MED's own code) build their dicts; the repeated ids are listed apart.
type CopiesReport struct {
	Task string      `json:"task"`
	A    CopySummary `json:"a"`
	B    CopySummary `json:"b"`
	// Documents and Queries: ids in one copy only, and ids whose text
	// differs (as each copy's dict keeps them).
	Documents IDDiff `json:"documents"`
	Queries   IDDiff `json:"queries"`
	// Judgments: (query, document) pairs in one copy only, and pairs whose
	// grade differs, each "query\tdocument".
	Judgments IDDiff `json:"judgments"`
}

// CopySummary is what one copy holds.
type CopySummary struct {
	Label    string `json:"label"`
	Repo     string `json:"repo"`
	Revision string `json:"revision"`
	// Rows and distinct ids (pairs, for judgments).
	DocumentRows  int      `json:"document_rows"`
	Documents     int      `json:"documents"`
	QueryRows     int      `json:"query_rows"`
	Queries       int      `json:"queries"`
	JudgmentRows  int      `json:"judgment_rows"`
	Judgments     int      `json:"judgments"`
	ExpectedDocs  int      `json:"expected_documents,omitempty"`
	RepeatedDocs  []Repeat `json:"repeated_documents,omitempty"`
	RepeatedQuery []Repeat `json:"repeated_queries,omitempty"`
	// RepeatedJudgments are (query, document) pairs on several qrels
	// rows, each "query\tdocument"; TextDiffer says their grades differ
	// (a dict keeps the last).
	RepeatedJudgments []Repeat `json:"repeated_judgments,omitempty"`
}

// Repeat is an id on several rows: where, and whether their texts
// differ (then which one a dict keeps matters).
type Repeat struct {
	ID         string   `json:"id"`
	At         []string `json:"at"`
	TextDiffer bool     `json:"text_differs"`
}

// IDDiff lists what is in one copy and not the other, and what differs.
type IDDiff struct {
	OnlyA   []string `json:"only_a"`
	OnlyB   []string `json:"only_b"`
	Differs []string `json:"differs"`
}

// Same reports whether nothing differs.
func (d IDDiff) Same() bool { return len(d.OnlyA)+len(d.OnlyB)+len(d.Differs) == 0 }

// CompareCopies compares copy a with copy b of task.
func CompareCopies(task string, a, b *Copy) *CopiesReport {
	r := &CopiesReport{Task: task, A: summarize(a), B: summarize(b)}
	r.Documents = diffRows(a.Docs, b.Docs)
	r.Queries = diffRows(a.Queries, b.Queries)
	r.Judgments = diffRows(judgmentRows(a.Qrels), judgmentRows(b.Qrels))
	return r
}

func summarize(c *Copy) CopySummary {
	s := CopySummary{Label: c.Label, Repo: c.Repo, Revision: c.Revision, ExpectedDocs: c.Expected,
		DocumentRows: len(c.Docs), QueryRows: len(c.Queries), JudgmentRows: len(c.Qrels)}
	s.Documents, s.RepeatedDocs = distinct(c.Docs)
	s.Queries, s.RepeatedQuery = distinct(c.Queries)
	s.Judgments, s.RepeatedJudgments = distinct(judgmentRows(c.Qrels))
	return s
}

func judgmentRows(js []CopyJudgment) []CopyRow {
	out := make([]CopyRow, len(js))
	for i, j := range js {
		out[i] = CopyRow{ID: j.Query + "\t" + j.Doc, Text: fmt.Sprint(j.Grade), At: j.At}
	}
	return out
}

// distinct counts the ids and lists those on several rows.
func distinct(rows []CopyRow) (int, []Repeat) {
	at := map[string][]int{}
	var order []string
	for i, r := range rows {
		if _, ok := at[r.ID]; !ok {
			order = append(order, r.ID)
		}
		at[r.ID] = append(at[r.ID], i)
	}
	var reps []Repeat
	for _, id := range order {
		if len(at[id]) < 2 {
			continue
		}
		rep := Repeat{ID: id}
		for _, i := range at[id] {
			rep.At = append(rep.At, rows[i].At)
			rep.TextDiffer = rep.TextDiffer || rows[i].Text != rows[at[id][0]].Text
		}
		reps = append(reps, rep)
	}
	return len(order), reps
}

// keep is what a dict keyed by id keeps: the last row's text.
func keep(rows []CopyRow) map[string]string {
	m := make(map[string]string, len(rows))
	for _, r := range rows {
		m[r.ID] = r.Text
	}
	return m
}

func diffRows(a, b []CopyRow) IDDiff {
	ka, kb := keep(a), keep(b)
	d := IDDiff{OnlyA: []string{}, OnlyB: []string{}, Differs: []string{}} // [] in JSON, not null
	for _, id := range slices.Sorted(maps.Keys(ka)) {
		tb, ok := kb[id]
		switch {
		case !ok:
			d.OnlyA = append(d.OnlyA, id)
		case tb != ka[id]:
			d.Differs = append(d.Differs, id)
		}
	}
	for _, id := range slices.Sorted(maps.Keys(kb)) {
		if _, ok := ka[id]; !ok {
			d.OnlyB = append(d.OnlyB, id)
		}
	}
	return d
}

// WriteTable prints the comparison: each copy's rows and ids, what one has
// and the other not, repeated ids; limit caps each list (0: all).
func (r *CopiesReport) WriteTable(w io.Writer, limit int) error {
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	p("%s: %s\n", r.Task, sameOrNot(r))
	for _, s := range []struct {
		name string
		s    CopySummary
	}{{"A", r.A}, {"B", r.B}} {
		p("  %s  %s: %s at %s\n", s.name, s.s.Label, s.s.Repo, s.s.Revision)
		p("     documents %d (%d rows), queries %d (%d rows), judgments %d (%d rows)\n",
			s.s.Documents, s.s.DocumentRows, s.s.Queries, s.s.QueryRows, s.s.Judgments, s.s.JudgmentRows)
		if s.s.ExpectedDocs > 0 {
			verdict := "as counted here"
			if s.s.ExpectedDocs != s.s.Documents {
				verdict = fmt.Sprintf("%+d against the %d distinct ids here", s.s.ExpectedDocs-s.s.Documents, s.s.Documents)
			}
			p("     its metadata states %d documents (%s)\n", s.s.ExpectedDocs, verdict)
		}
		for _, kind := range []struct {
			what   string
			reps   []Repeat
			differ string
		}{{"document id", s.s.RepeatedDocs, "texts differ"}, {"query id", s.s.RepeatedQuery, "texts differ"}, {"judged pair", s.s.RepeatedJudgments, "grades differ"}} {
			if len(kind.reps) == 0 {
				continue
			}
			p("     %d %s on several rows (a dict keeps the last):\n", len(kind.reps), errtext.Plural(len(kind.reps), kind.what, kind.what+"s"))
			for i, rep := range kind.reps {
				if limit > 0 && i == limit {
					p("       … %d more\n", len(kind.reps)-limit)
					break
				}
				differ := "the same"
				if rep.TextDiffer {
					differ = kind.differ
				}
				p("       %s: %s (%s)\n", strings.ReplaceAll(rep.ID, "\t", "/"), strings.Join(rep.At, ", "), differ)
			}
		}
	}
	list := func(label string, ids []string) {
		if len(ids) == 0 {
			return
		}
		shown := ids
		if limit > 0 && len(shown) > limit {
			shown = shown[:limit]
		}
		p("  %s (%d): %s", label, len(ids), strings.ReplaceAll(strings.Join(shown, ", "), "\t", "/"))
		if len(shown) < len(ids) {
			p(", … %d more", len(ids)-len(shown))
		}
		p("\n")
	}
	for _, d := range []struct {
		what, field string
		d           IDDiff
	}{{"documents", "text", r.Documents}, {"queries", "text", r.Queries}, {"judgments", "grade", r.Judgments}} {
		list(d.what+" only in A", d.d.OnlyA)
		list(d.what+" only in B", d.d.OnlyB)
		list(d.what+" in both whose "+d.field+" differs", d.d.Differs)
	}
	return nil
}

func sameOrNot(r *CopiesReport) string {
	if r.Documents.Same() && r.Queries.Same() && r.Judgments.Same() {
		if len(r.A.RepeatedDocs)+len(r.B.RepeatedDocs)+len(r.A.RepeatedQuery)+len(r.B.RepeatedQuery)+len(r.A.RepeatedJudgments)+len(r.B.RepeatedJudgments) > 0 {
			return "the same ids, texts and judgments, with ids or judgments repeated on several rows"
		}
		return "the same ids, texts and judgments"
	}
	return "the copies differ"
}
