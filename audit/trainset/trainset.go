// Package trainset reads training sets for retrievers — the files people
// fine-tune embedders and rerankers on — as a stream of records, each a
// query, its positives and negatives, or plain texts, located by file and
// line so that what is found in them can be pointed at.
//
// Formats, by file name (a .gz suffix is allowed on all but plain text
// read from an offset): JSON lines (.jsonl, .ndjson; .json holding lines
// or one array), parquet (.parquet), TSV (.tsv: cells split on tabs, no
// quoting, as MS MARCO's files) and anything else as plain text, one text
// per line.
//
// Layouts are told by a file's fields (the first row's keys; a TSV's
// header), unless Fields names them:
//
//	{query, pos: [...], neg: [...]}              BGE / FlagEmbedding
//	{anchor, positive, negative…}                sentence-transformers triplets and pairs
//	{query, positive, negative…}                 sentence-transformers (negative, negative_1, …)
//	{query_id, query, positive_passages, …}      Tevatron (passages {docid, title, text})
//	{sentence1, sentence2}                       sentence-transformers pairs
//	{_id, title, text}                           BEIR corpus (title + " " + text, as BEIR)
//	{_id, text} / {id, text} / {text}            BEIR or R2MED queries and corpora
//	plain text, TSV with one column              one text per line
//	TSV with two columns                         id, text (the first cell of line 1 has no space) or query, positive
//	TSV with three columns                       query, positive, negative (MS MARCO triples)
//
// A TSV's first line is a header when its cells are single words, one of
// them a known field name (or one Fields names); otherwise Fields may name
// columns by their 1-based number.
package trainset

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Role says what a text is in its record.
type Role string

// The roles a text can have.
const (
	Query    Role = "query"
	Positive Role = "positive"
	Negative Role = "negative"
	Plain    Role = "text" // a text without a role: a corpus document, a line of plain text
)

// Text is one text of a record.
type Text struct {
	Role  Role
	Field string // the field (or TSV column) it came from
	Text  string
}

// Record is one row of a training file.
type Record struct {
	// Line is the row's 1-based line in the file (parquet: its 1-based
	// row; a JSON array: the line its object starts on).
	Line int
	// Element is a JSON array row's 1-based place in the array, which
	// tells apart rows on one line; 0 in other formats.
	Element int
	ID      string // the row's id field, when its layout has one
	Texts   []Text
	// Meta holds the string values of the fields Options.Meta asks for
	// that the row has.
	Meta map[string]string
}

// Fields names the fields of each role; empty means detected.
type Fields struct {
	Query, Positive, Negative, Text []string
}

func (f Fields) empty() bool {
	return len(f.Query) == 0 && len(f.Positive) == 0 && len(f.Negative) == 0 && len(f.Text) == 0
}

// Options say how to read a file.
type Options struct {
	Fields Fields
	// Format overrides the format the name implies: jsonl, json, parquet,
	// tsv or text.
	Format string
	// Meta lists fields to keep as strings in Record.Meta (metadata such
	// as body_system and answer).
	Meta []string
}

// Layout is how a file's rows map to texts.
type Layout struct {
	Format string // jsonl, json, parquet, tsv or text
	Name   string // what was recognised, for messages and reports
	Fields Fields
	// ID is the row's id field, if any.
	ID string
	// Title is BEIR's title field, put before Text's first field.
	Title string
	// numbered reads sentence-transformers' negative_1, negative_2, …
	// wherever a row has them, beyond those the first row named.
	numbered bool
	// headerLine is the line of a TSV's header, its first non-blank line
	// when that names its columns (0: no header); columns maps a TSV
	// field name to its cell.
	headerLine int
	columns    map[string]int
}

// Describe says how the layout reads rows, e.g. "BGE {query, pos, neg}".
func (l Layout) Describe() string {
	var parts []string
	add := func(role string, fields []string) {
		if len(fields) > 0 {
			parts = append(parts, role+"="+strings.Join(fields, "|"))
		}
	}
	add("query", l.Fields.Query)
	add("positive", l.Fields.Positive)
	add("negative", l.Fields.Negative)
	add("text", l.Fields.Text)
	return fmt.Sprintf("%s %s (%s)", l.Format, l.Name, strings.Join(parts, ", "))
}

// knownFields are the field names that make a TSV's first line a header.
var knownFields = []string{"query", "pos", "neg", "anchor", "positive", "negative", "sentence1", "sentence2", "_id", "id", "title", "text", "document", "passage", "question", "answer", "body_system", "query_id", "positive_passages", "negative_passages"}

// detect tells the layout from a row's field names (in file order for TSV).
func detect(keys []string, fields Fields) (Layout, error) {
	has := func(k string) bool { return slices.Contains(keys, k) }
	var l Layout
	if !fields.empty() {
		l.Name, l.Fields = "fields given", fields
		for _, group := range [][]string{fields.Query, fields.Positive, fields.Negative, fields.Text} {
			for _, f := range group {
				if !has(f) {
					return l, fmt.Errorf("has no field %q (its fields: %s)", f, strings.Join(keys, ", "))
				}
			}
		}
		if has("_id") {
			l.ID = "_id"
		} else if has("id") {
			l.ID = "id"
		}
		return l, nil
	}
	// negative is optional (pairs beside triplets): read wherever a row
	// has it; negative_1, negative_2, … as the first row has them.
	negatives := func() []string {
		n := []string{"negative"}
		for _, k := range keys {
			if strings.HasPrefix(k, "negative_") && isDigits(k[len("negative_"):]) {
				n = append(n, k)
			}
		}
		return n
	}
	switch {
	case has("query") && has("pos"):
		// neg is optional: read wherever a row has it.
		l.Name, l.Fields = "BGE {query, pos, neg}", Fields{Query: []string{"query"}, Positive: []string{"pos"}, Negative: []string{"neg"}}
	case has("query") && has("positive_passages"):
		// Tevatron's training groups; negative_passages is optional.
		l.Name, l.Fields = "Tevatron {query_id, query, positive_passages, negative_passages}", Fields{Query: []string{"query"}, Positive: []string{"positive_passages"}, Negative: []string{"negative_passages"}}
		if has("query_id") {
			l.ID = "query_id"
		}
	case has("anchor") && has("positive"):
		l.Name, l.Fields, l.numbered = "sentence-transformers {anchor, positive, negative}", Fields{Query: []string{"anchor"}, Positive: []string{"positive"}, Negative: negatives()}, true
	case has("query") && has("positive"):
		l.Name, l.Fields, l.numbered = "sentence-transformers {query, positive, negative}", Fields{Query: []string{"query"}, Positive: []string{"positive"}, Negative: negatives()}, true
	case has("sentence1") && has("sentence2"):
		l.Name, l.Fields = "sentence-transformers {sentence1, sentence2}", Fields{Query: []string{"sentence1"}, Positive: []string{"sentence2"}}
	case has("_id") && has("title") && has("text"):
		l.Name, l.Fields, l.Title, l.ID = "BEIR corpus {_id, title, text}", Fields{Text: []string{"text"}}, "title", "_id"
	case has("_id") && has("text"):
		l.Name, l.Fields, l.ID = "BEIR queries {_id, text}", Fields{Query: []string{"text"}}, "_id"
	case has("id") && has("text"):
		l.Name, l.Fields, l.ID = "{id, text}", Fields{Text: []string{"text"}}, "id"
	case has("text"):
		l.Name, l.Fields = "{text}", Fields{Text: []string{"text"}}
	default:
		return l, fmt.Errorf("has fields %s, which match no known training layout ({query, pos, neg}, {anchor, positive, negative}, {query, positive}, {sentence1, sentence2}, {query, positive_passages, negative_passages}, {_id, title, text}, {id, text}, {text}); name them with --query-field, --pos-field, --neg-field or --text-field", strings.Join(keys, ", "))
	}
	return l, nil
}

// detectTSV tells a TSV's layout from its first line's cells.
func detectTSV(cells []string, fields Fields) (Layout, error) {
	l := Layout{Format: "tsv", columns: map[string]int{}}
	named := slices.Concat(knownFields, fields.Query, fields.Positive, fields.Negative, fields.Text)
	// A header names its columns: every cell a word without spaces, at
	// least one of them a field name we know.
	header, known := true, false
	for _, c := range cells {
		if c == "" || strings.ContainsAny(c, " \u00a0") {
			header = false
		}
		known = known || slices.Contains(named, c)
	}
	header = header && known
	if header {
		l2, err := detect(cells, fields)
		if err != nil {
			return l2, err
		}
		l2.Format, l2.headerLine, l2.columns = "tsv", -1, map[string]int{}
		for i, c := range cells {
			l2.columns[c] = i
		}
		// Optional fields the header lacks are not read.
		l2.Fields.Negative = slices.DeleteFunc(l2.Fields.Negative, func(f string) bool { _, ok := l2.columns[f]; return !ok })
		return l2, nil
	}
	// No header: columns are named by their 1-based number.
	for i := range cells {
		l.columns[strconv.Itoa(i+1)] = i
	}
	if !fields.empty() {
		for _, group := range [][]string{fields.Query, fields.Positive, fields.Negative, fields.Text} {
			for _, f := range group {
				if _, ok := l.columns[f]; !ok {
					return l, fmt.Errorf("has %d tab-separated columns and no header; field %q is neither a header name nor a column number 1–%d", len(cells), f, len(cells))
				}
			}
		}
		l.Name, l.Fields = "columns given", fields
		return l, nil
	}
	switch len(cells) {
	case 1:
		l.Name, l.Fields = "one text per line", Fields{Text: []string{"1"}}
	case 2:
		if !strings.ContainsAny(cells[0], " \u00a0") && len(cells[0]) <= 64 {
			l.Name, l.Fields, l.ID = "id, text", Fields{Text: []string{"2"}}, "1"
		} else {
			l.Name, l.Fields = "query, positive", Fields{Query: []string{"1"}, Positive: []string{"2"}}
		}
	case 3:
		l.Name, l.Fields = "query, positive, negative", Fields{Query: []string{"1"}, Positive: []string{"2"}, Negative: []string{"3"}}
	default:
		return l, fmt.Errorf("has %d tab-separated columns and no header; add a header line naming them, or say which to read with --query-field/--pos-field/--neg-field/--text-field N (1-based column numbers)", len(cells))
	}
	return l, nil
}

// numberedNegatives lists a row's negative_N fields that named are not
// among, by N.
func numberedNegatives(m map[string]json.RawMessage, named []string) []string {
	var extra []string
	for k := range m {
		if strings.HasPrefix(k, "negative_") && isDigits(k[len("negative_"):]) && !slices.Contains(named, k) {
			extra = append(extra, k)
		}
	}
	slices.SortFunc(extra, func(a, b string) int {
		x, _ := strconv.Atoi(a[len("negative_"):])
		y, _ := strconv.Atoi(b[len("negative_"):])
		return x - y
	})
	return extra
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
