package dataset

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"github.com/r2med/r2med/internal/errtext"
	"github.com/r2med/r2med/internal/fileio"
	"github.com/r2med/r2med/ir"
)

// Per-query exclusions (ir.Exclusions: documents a query must not
// retrieve) come from two places, in every layout:
//
//   - a query's "excluded_ids" field, as BRIGHT's examples carry it: a list
//     of document ids, where BRIGHT's placeholder "N/A" means none (its
//     run.py skips it), and null or a missing field mean none too;
//   - an exclusions file (ExclusionsFile in a task directory, or any file
//     named with Options.Exclude): one pair per line, "QUERY-ID DOC-ID"
//     separated by a tab or spaces, as in a TREC run or qrels file without
//     the other columns. A first line "query-id corpus-id" is a header;
//     blank lines are skipped; gzip is accepted. A pair listed twice is an
//     error, since it usually means two files were concatenated.
//
// Exclude checks them against the task: every query must be one of the
// task's (from its query file), and no excluded pair may be judged, as
// BRIGHT's run.py asserts: an excluded document is neither retrieved nor
// relevant (see ir.Exclusions). A document the corpus lacks may be
// excluded: that changes nothing (no retriever returns it), and it happens
// with BRIGHT's long-document setting, whose corpus is another; runs count
// such exclusions in their manifest.
const (
	ExcludedField  = "excluded_ids"
	ExclusionsFile = "excluded_ids.tsv"
	// NoExclusion is BRIGHT's placeholder in excluded_ids for "none".
	NoExclusion = "N/A"
)

// Exclusion is what one source excludes for one query, and where it was
// read ("corpus.jsonl:3", "examples/biology-00000-of-00001.parquet row 2"),
// for messages.
type Exclusion struct {
	QueryID string
	DocIDs  []string
	At      string
}

// ExcludedIDs reads a row's excluded_ids field: nil when it is missing,
// null or holds only BRIGHT's "N/A"; else its document ids, each a
// non-empty id without white space (a string, or a number taken by its
// text), in order.
func ExcludedIDs(m map[string]json.RawMessage) ([]string, error) {
	raw, ok := m[ExcludedField]
	if !ok {
		return nil, nil
	}
	switch errtext.JSONKind(raw) {
	case "null":
		return nil, nil
	case "an array":
	default:
		return nil, fmt.Errorf("%q is %s, want a list of document ids", ExcludedField, errtext.JSONKind(raw))
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(raw, &elems); err != nil {
		return nil, fmt.Errorf("%q: %s", ExcludedField, errtext.JSONMsg(err))
	}
	var ids []string
	k := keys{id: ExcludedField}
	for i, e := range elems {
		id, err := idField(map[string]json.RawMessage{ExcludedField: e}, k, "exclusion")
		if err != nil {
			return nil, fmt.Errorf("element %d of %v", i+1, err)
		}
		if id != NoExclusion {
			ids = append(ids, id)
		}
	}
	return ids, nil
}

// TakeExcluded moves the excluded_ids field of each query that has one
// out of its Extra into exclusions, located as "where (query "ID")".
// The queries' fields must have been checked with ExcludedIDs.
func TakeExcluded(queries []ir.Query, where string) ([]Exclusion, error) {
	var out []Exclusion
	for i := range queries {
		q := &queries[i]
		if _, ok := q.Extra[ExcludedField]; !ok {
			continue
		}
		ids, err := ExcludedIDs(q.Extra)
		if err != nil {
			return nil, fmt.Errorf("%s: query %q: %v", where, q.ID, err)
		}
		delete(q.Extra, ExcludedField)
		if len(q.Extra) == 0 {
			q.Extra = nil
		}
		if len(ids) > 0 {
			out = append(out, Exclusion{QueryID: q.ID, DocIDs: ids, At: fmt.Sprintf("%s (query %q)", where, q.ID)})
		}
	}
	return out, nil
}

// ReadExclusions reads an exclusions file (see ExclusionsFile), named name
// in messages.
func ReadExclusions(r io.Reader, name string) ([]Exclusion, error) {
	lr := newLineReader(r, name)
	var out []Exclusion
	seen := make(map[[2]string]int)
	var f []string
	for {
		var ok bool
		var err error
		if f, ok, err = lr.nextFields(f); err != nil {
			return nil, err
		} else if !ok {
			break
		}
		if len(f) == 2 && f[0] == "query-id" && f[1] == "corpus-id" && len(out) == 0 && len(seen) == 0 {
			continue // the header
		}
		if len(f) != 2 {
			return nil, lr.Errorf("line has %d fields, want 2: a query id and the id of a document it must not retrieve", len(f))
		}
		for j, what := range []string{"query id", "document id"} {
			if err := fileio.CheckID(f[j]); err != nil {
				return nil, lr.Errorf("%s %v", what, err)
			}
		}
		pair := [2]string{f[0], f[1]}
		if prev, dup := seen[pair]; dup {
			return nil, lr.Errorf("document %q is excluded for query %q again (first on line %d); list each pair once", f[1], f[0], prev)
		}
		seen[pair] = lr.Line()
		out = append(out, Exclusion{QueryID: f[0], DocIDs: []string{f[1]}, At: name + ":" + strconv.Itoa(lr.Line())})
	}
	return out, lr.Err()
}

// ReadExclusionsFile reads the exclusions file at path, plain or gzipped.
func ReadExclusionsFile(path string) ([]Exclusion, error) {
	rc, err := fileio.Open(path)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return ReadExclusions(rc, path)
}

// ExcludeFile adds the exclusions of the file at path to a loaded task
// (one whose reader took no Options.Exclude: the built-in demo), checked
// against its queries (those left out of evaluation are unknown by then)
// and judgments. The file is not added to t.Files.
func ExcludeFile(t *ir.Task, path string) error {
	ex, err := ReadExclusionsFile(path)
	if err != nil {
		return err
	}
	known := make(map[string]bool, len(t.Queries))
	for _, q := range t.Queries {
		known[q.ID] = true
	}
	return Exclude(t, ex, func(id string) bool { return known[id] })
}

// Exclude checks exclusions against t and adds them to t.Excluded.
// knownQuery says whether a query id is the task's (queries left out of
// evaluation included). Every judgment in t.Qrels is checked against them.
func Exclude(t *ir.Task, ex []Exclusion, knownQuery func(string) bool) error {
	for _, e := range ex {
		if !knownQuery(e.QueryID) {
			return fmt.Errorf("%s: query %q is not one of the task's queries; the exclusions must come from the same task as the queries", e.At, e.QueryID)
		}
		for _, did := range e.DocIDs {
			if g, judged := t.Qrels[e.QueryID][did]; judged {
				return fmt.Errorf("%s: query %q excludes document %q, which its judgments grade %d; a document cannot be both excluded and judged (BRIGHT's run.py asserts the same), so remove the judgment or the exclusion", e.At, e.QueryID, did, g)
			}
			if t.Excluded == nil {
				t.Excluded = make(ir.Exclusions)
			}
			t.Excluded.Add(e.QueryID, did)
		}
	}
	return nil
}
