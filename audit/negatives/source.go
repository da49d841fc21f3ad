package negatives

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/r2med/r2med/audit/trainset"
	"github.com/r2med/r2med/ir"
)

// FromTask lists a benchmark task's queries with their positives (judged
// grade > 0) and the metadata fields asked for (string values of the
// query file's extra fields, such as R2MED's body_system and answer).
func FromTask(t *ir.Task, meta []string) ([]Query, error) {
	out := make([]Query, 0, len(t.Queries))
	for _, q := range t.Queries {
		nq := Query{ID: q.ID, Text: q.Text}
		for _, d := range sortedIDs(t.Qrels[q.ID]) {
			if t.Qrels[q.ID][d] > 0 {
				nq.Positives = append(nq.Positives, d)
			}
		}
		for _, f := range meta {
			raw, ok := q.Extra[f]
			if !ok || string(raw) == "null" {
				continue
			}
			var s string
			if err := json.Unmarshal(raw, &s); err != nil {
				s = string(raw) // a number or boolean, as written
			}
			if nq.Meta == nil {
				nq.Meta = map[string]string{}
			}
			nq.Meta[f] = s
		}
		out = append(out, nq)
	}
	return out, nil
}

// Training reads the queries and positive texts of a training file (any
// layout trainset reads that has queries). A record's id is its id field,
// else "FILE:LINE" ("FILE#N" for a JSON array's Nth element). pool collects every positive and negative text in
// first-seen order, for use as the corpus when none is given (as
// FlagEmbedding's hn_mine does).
func Training(ctx context.Context, path string, opts trainset.Options) (queries []Query, pool []ir.Doc, err error) {
	f, err := trainset.Open(path, opts)
	if err != nil {
		return nil, nil, err
	}
	if len(f.Layout.Fields.Query) == 0 {
		return nil, nil, fmt.Errorf("%s: %s has no queries to mine negatives for; name the query field with --query-field", path, f.Layout.Describe())
	}
	inPool := map[string]bool{}
	add := func(text string) {
		if !inPool[text] && text != "" {
			inPool[text] = true
			pool = append(pool, ir.Doc{ID: fmt.Sprintf("pool-%d", len(pool)+1), Text: text})
		}
	}
	seen := map[string]int{}
	err = f.Rows(ctx, trainset.Position{}, func(r trainset.Row) error {
		rec, err := f.Decode(r)
		if err != nil {
			return err
		}
		q := Query{ID: rec.ID, Meta: rec.Meta}
		if q.ID == "" {
			q.ID = fmt.Sprintf("%s:%d", path, rec.Line)
			if rec.Element > 0 { // a JSON array may hold many records on a line
				q.ID = fmt.Sprintf("%s#%d", path, rec.Element)
			}
		}
		if line, dup := seen[q.ID]; dup {
			return fmt.Errorf("%s:%d: id %q already appeared on line %d; ids must be unique", path, rec.Line, q.ID, line)
		}
		seen[q.ID] = rec.Line
		for _, t := range rec.Texts {
			switch t.Role {
			case trainset.Query:
				if q.Text == "" {
					q.Text = t.Text
				}
			case trainset.Positive:
				q.PositiveTexts = append(q.PositiveTexts, t.Text)
				add(t.Text)
			case trainset.Negative:
				add(t.Text)
			}
		}
		if q.Text == "" {
			return fmt.Errorf("%s:%d: the query is empty", path, rec.Line)
		}
		queries = append(queries, q)
		return nil
	})
	return queries, pool, err
}

// Corpus reads a corpus file (JSON lines, parquet, TSV or text; BEIR's
// {_id, title, text} or {id, text}) as documents; rows without an id are
// named "line N" ("element N" in a JSON array).
func Corpus(ctx context.Context, path string, opts trainset.Options) ([]ir.Doc, error) {
	f, err := trainset.Open(path, opts)
	if err != nil {
		return nil, err
	}
	var docs []ir.Doc
	seen := map[string]int{}
	err = f.Rows(ctx, trainset.Position{}, func(r trainset.Row) error {
		rec, err := f.Decode(r)
		if err != nil {
			return err
		}
		if len(rec.Texts) != 1 {
			return fmt.Errorf("%s:%d: a corpus row holds one text; this %s row holds %d", path, rec.Line, f.Layout.Name, len(rec.Texts))
		}
		id := rec.ID
		if id == "" {
			id = fmt.Sprintf("line %d", rec.Line)
			if rec.Element > 0 { // a JSON array may hold many rows on a line
				id = fmt.Sprintf("element %d", rec.Element)
			}
		}
		if line, dup := seen[id]; dup {
			return fmt.Errorf("%s:%d: document id %q already appeared on line %d; ids must be unique", path, rec.Line, id, line)
		}
		seen[id] = rec.Line
		docs = append(docs, ir.Doc{ID: id, Text: rec.Texts[0].Text})
		return nil
	})
	return docs, err
}

func sortedIDs(m map[string]int) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
