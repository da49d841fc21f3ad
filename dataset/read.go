package dataset

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/r2med/r2med/internal/errtext"
	"github.com/r2med/r2med/internal/fileio"
	"github.com/r2med/r2med/ir"
)

// MaxLineBytes is the longest line the readers accept (fileio's, which
// trec's readers share). Real corpora have documents of a few hundred
// kilobytes at most; the cap exists so that a binary or newline-free file
// fails with a clear message instead of exhausting memory.
const MaxLineBytes = fileio.MaxLineBytes

// lineReader is fileio.Lines (the project's rule for input lines: a
// byte-order mark, CRLF, the line limit, a truncated stream) with the
// splitting the TSV readers add.
type lineReader struct{ *fileio.Lines }

func newLineReader(r io.Reader, name string) *lineReader {
	return &lineReader{fileio.NewLines(r, name, "JSON-lines or TSV")}
}

// nextFields splits the next non-blank line, which must be UTF-8, into its
// white-space separated fields, reusing f.
func (lr *lineReader) nextFields(f []string) ([]string, bool, error) {
	line, ok := lr.Next()
	if !ok {
		return f, false, nil
	}
	if err := errtext.CheckUTF8(line, "line"); err != nil {
		return f, false, lr.Errorf("%v", err)
	}
	return fileio.Fields(f, string(line)), true, nil
}

// keys names the JSON fields a layout uses.
type keys struct {
	id     string
	altID  string // a spelling from elsewhere, only for a hint in errors
	hint   string // what to make of altID
	hasTtl bool   // corpus lines may carry a title (BEIR)
}

const layoutHint = `R2MED files use "id", BEIR files "_id"; check that the directory's files are all from one layout`

func layoutKeys(layout ir.Layout) (keys, error) {
	switch layout {
	case ir.LayoutR2MED:
		return keys{id: "id", altID: "_id", hint: layoutHint}, nil
	case ir.LayoutBEIR:
		return keys{id: "_id", altID: "id", hint: layoutHint, hasTtl: true}, nil
	}
	return keys{}, fmt.Errorf("unknown layout %q (want %q or %q)", layout, ir.LayoutR2MED, ir.LayoutBEIR)
}

// ReadCorpus streams the documents of a corpus file (R2MED {"id","text"} or
// BEIR {"_id","title","text"} lines) to fn, in file order, without holding
// the corpus in memory; only the ids are kept, to reject duplicates. name is
// used in error messages. An error returned by fn stops the read and is
// returned unchanged.
func ReadCorpus(r io.Reader, name string, layout ir.Layout, fn func(ir.Doc) error) error {
	_, err := readCorpus(r, name, layout, fn)
	return err
}

// readCorpus also returns the set of ids, which Load needs to check the qrels.
func readCorpus(r io.Reader, name string, layout ir.Layout, fn func(ir.Doc) error) (map[string]int, error) {
	k, err := layoutKeys(layout)
	if err != nil {
		return nil, err
	}
	lr := newLineReader(r, name)
	seen := make(map[string]int)
	var scratch []byte
	for {
		line, ok := lr.Next()
		if !ok {
			break
		}
		var d ir.Doc
		d, scratch, ok = fastDoc(line, k.hasTtl, scratch)
		if !ok {
			if d, err = slowDoc(line, k); err != nil {
				return nil, lr.Errorf("%v", err)
			}
		}
		if prev, dup := seen[d.ID]; dup {
			return nil, lr.Errorf("document id %q already appeared on line %d; ids must be unique, remove or rename one of the two", d.ID, prev)
		}
		seen[d.ID] = lr.Line()
		if err := fn(d); err != nil {
			return nil, err
		}
	}
	return seen, lr.Err()
}

// slowDoc decodes a corpus line of any shape with encoding/json. It is the
// reference the fast path must agree with, and the only path that explains
// what is wrong with a bad line.
func slowDoc(line []byte, k keys) (ir.Doc, error) {
	m, err := errtext.DecodeObject(line)
	if err != nil {
		return ir.Doc{}, err
	}
	id, err := idField(m, k, "document")
	if err != nil {
		return ir.Doc{}, err
	}
	text, err := stringField(m, "text", true)
	if err != nil {
		return ir.Doc{}, err
	}
	if k.hasTtl {
		title, err := stringField(m, "title", false)
		if err != nil {
			return ir.Doc{}, err
		}
		text = joinTitle(title, text)
	}
	return ir.Doc{ID: id, Text: text}, nil
}

// joinTitle is how BEIR's own dense retrieval code builds the text it embeds.
func joinTitle(title, text string) string {
	if title == "" {
		return text
	}
	return title + " " + text
}

// idField reads an id. Ids are strings in both layouts, but exporters
// (pandas, some HF scripts) write numeric-looking ids as JSON numbers; those
// are taken by their literal text, so 12 is "12", the same string a TREC run
// file would carry. Ids must be non-empty and free of whitespace because run
// and qrels files are whitespace-separated: such an id could be loaded but
// never written out and read back.
func idField(m map[string]json.RawMessage, k keys, what string) (string, error) {
	raw, ok := m[k.id]
	if !ok {
		if _, alt := m[k.altID]; alt {
			return "", fmt.Errorf("missing %q field (the line has %q: %s)", k.id, k.altID, k.hint)
		}
		return "", fmt.Errorf("missing %q field; every %s needs an id", k.id, what)
	}
	var id string
	switch {
	case len(raw) > 0 && raw[0] == '"':
		if err := json.Unmarshal(raw, &id); err != nil {
			return "", fmt.Errorf("%q: %s", k.id, errtext.JSONMsg(err))
		}
	case len(raw) > 0 && (raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9'):
		id = string(raw)
	default:
		return "", fmt.Errorf("%q is %s, want a string (or a number)", k.id, errtext.JSONKind(raw))
	}
	if err := fileio.CheckID(id); err != nil {
		return "", fmt.Errorf("%s %s", k.id, err)
	}
	return id, nil
}

// stringField reads a string field. An empty string is legal data (some
// corpora have empty documents, and a benchmark must still count them); a
// missing or null field is not, since it usually means a wrong field name or
// a broken export.
func stringField(m map[string]json.RawMessage, key string, required bool) (string, error) {
	raw, ok := m[key]
	if !ok || errtext.JSONKind(raw) == "null" {
		if !required {
			return "", nil
		}
		if !ok {
			return "", fmt.Errorf("missing %q field; every record needs one (it may be the empty string)", key)
		}
		return "", fmt.Errorf("%q is null, want a string (use \"\" for an empty text)", key)
	}
	if raw[0] != '"' {
		return "", fmt.Errorf("%q is %s, want a string", key, errtext.JSONKind(raw))
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fmt.Errorf("%q: %s", key, errtext.JSONMsg(err))
	}
	return s, nil
}

// ReadQueriesOfEitherLayout reads a query file given on its own (r2med
// search --queries), whose layout no directory tells: the first line's id
// key says it ("_id" without "id": BEIR's queries.jsonl, else R2MED's
// query.jsonl). A file without queries is an error naming it.
func ReadQueriesOfEitherLayout(r io.Reader, name string) ([]ir.Query, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	layout := ir.LayoutR2MED
	first, _, _ := bytes.Cut(bytes.TrimLeft(b, " \t\r\n"), []byte("\n"))
	if m, err := errtext.DecodeObject(first); err == nil && m["id"] == nil && m["_id"] != nil {
		layout = ir.LayoutBEIR
	}
	qs, err := ReadQueries(bytes.NewReader(b), name, layout)
	if err == nil && len(qs) == 0 {
		err = fmt.Errorf("%s: no queries; write one JSON object a line, {\"id\": \"q1\", \"text\": \"…\"}", name)
	}
	return qs, err
}

// ReadQueries reads a query file (R2MED query.jsonl or BEIR queries.jsonl)
// in file order. Every field besides the id and "text" is kept verbatim in
// Query.Extra (nil when there are none); an excluded_ids field must be a
// list of document ids (ExcludedIDs), which Load moves into the task's
// exclusions.
func ReadQueries(r io.Reader, name string, layout ir.Layout) ([]ir.Query, error) {
	k, err := layoutKeys(layout)
	if err != nil {
		return nil, err
	}
	lr := newLineReader(r, name)
	seen := make(map[string]int)
	var qs []ir.Query
	for {
		line, ok := lr.Next()
		if !ok {
			break
		}
		m, err := errtext.DecodeObject(line)
		if err != nil {
			return nil, lr.Errorf("%v", err)
		}
		id, err := idField(m, k, "query")
		if err != nil {
			return nil, lr.Errorf("%v", err)
		}
		text, err := stringField(m, "text", true)
		if err != nil {
			return nil, lr.Errorf("%v", err)
		}
		if _, err := ExcludedIDs(m); err != nil {
			return nil, lr.Errorf("%v", err)
		}
		if prev, dup := seen[id]; dup {
			return nil, lr.Errorf("query id %q already appeared on line %d; ids must be unique, remove or rename one of the two", id, prev)
		}
		seen[id] = lr.Line()
		delete(m, k.id)
		delete(m, "text")
		if len(m) == 0 {
			m = nil
		}
		qs = append(qs, ir.Query{ID: id, Text: text, Extra: m})
	}
	return qs, lr.Err()
}

// ReadQrelsJSONL reads R2MED's qrels.jsonl: {"q_id","p_id","score"} lines.
// Other fields are ignored. The score must be an integer; an integral JSON
// float such as 1.0 is accepted because pandas and other exporters write
// integer columns that way, while 1.5 or a string is an error.
func ReadQrelsJSONL(r io.Reader, name string) (ir.Qrels, error) {
	lr := newLineReader(r, name)
	q := make(ir.Qrels)
	const hint = `R2MED's qrels.jsonl names its fields "q_id", "p_id" and "score"`
	qk := keys{id: "q_id", altID: "query-id", hint: hint}
	pk := keys{id: "p_id", altID: "corpus-id", hint: hint}
	for {
		line, ok := lr.Next()
		if !ok {
			break
		}
		m, err := errtext.DecodeObject(line)
		if err != nil {
			return nil, lr.Errorf("%v", err)
		}
		qid, err := idField(m, qk, "judgment")
		if err != nil {
			return nil, lr.Errorf("%v", err)
		}
		did, err := idField(m, pk, "judgment")
		if err != nil {
			return nil, lr.Errorf("%v", err)
		}
		grade, err := jsonGrade(m["score"])
		if err != nil {
			return nil, lr.Errorf("%v", err)
		}
		if !q.Add(qid, did, grade) {
			return nil, lr.Errorf("document %q is judged twice for query %q; keep one judgment per pair", did, qid)
		}
	}
	return q, lr.Err()
}

func jsonGrade(raw json.RawMessage) (int, error) {
	switch errtext.JSONKind(raw) {
	case "nothing":
		return 0, errors.New(`missing "score" field; every judgment needs an integer grade`)
	case "a number":
	case "a string":
		// A parquet float column's NaN and infinities reach here as the
		// strings "NaN", "+Inf" and "-Inf" (JSON has no such numbers).
		var s string
		if json.Unmarshal(raw, &s) == nil {
			if f, err := strconv.ParseFloat(s, 64); err == nil && (math.IsNaN(f) || math.IsInf(f, 0)) {
				return 0, fmt.Errorf(`"score" is %s, not a number a grade can be; give every judgment an integer grade`, s)
			}
		}
		return 0, errors.New(`"score" is a string, want an integer grade`)
	default:
		return 0, fmt.Errorf(`"score" is %s, want an integer grade`, errtext.JSONKind(raw))
	}
	s := string(raw)
	g, err := strconv.ParseInt(s, 10, 0)
	if err == nil {
		return int(g), nil
	}
	f, ferr := strconv.ParseFloat(s, 64)
	if errors.Is(err, strconv.ErrRange) || errors.Is(ferr, strconv.ErrRange) || ferr == nil && (f < math.MinInt || f >= math.MaxInt) {
		return 0, fmt.Errorf(`"score" %s is out of range for a grade`, s)
	}
	if ferr != nil || f != math.Trunc(f) {
		return 0, fmt.Errorf(`"score" %s is not an integer grade`, s)
	}
	return int(f), nil
}

// ReadBEIRQrels reads a BEIR qrels/<split>.tsv file: a header line, then
// "query-id corpus-id score" rows. The header is required because BEIR's
// loader skips the first line unread: a file without one would lose a
// judgment there, so it is rejected rather than guessed at. Scores must be
// plain integers, as BEIR's int() requires.
func ReadBEIRQrels(r io.Reader, name string) (ir.Qrels, error) {
	lr := newLineReader(r, name)
	q := make(ir.Qrels)
	var f []string
	header := true
	for {
		var ok bool
		var err error
		if f, ok, err = lr.nextFields(f); err != nil {
			return nil, err
		} else if !ok {
			break
		}
		if header {
			header = false
			if len(f) != 3 {
				return nil, lr.Errorf("header has %d columns, want 3 (query-id corpus-id score); is this a BEIR qrels file?", len(f))
			}
			if _, err := strconv.Atoi(f[2]); err == nil {
				return nil, lr.Errorf("first line is a judgment, not the header \"query-id\\tcorpus-id\\tscore\"; BEIR's loader skips the first line, so add the header")
			}
			continue
		}
		if len(f) != 3 {
			return nil, lr.Errorf("row has %d fields, want 3 (query-id corpus-id score)", len(f))
		}
		grade, err := strconv.Atoi(f[2])
		if err != nil {
			return nil, lr.Errorf("score %q is not an integer grade", f[2])
		}
		for j, what := range []string{"query-id", "corpus-id"} {
			if err := fileio.CheckID(f[j]); err != nil {
				return nil, lr.Errorf("%s %v", what, err)
			}
		}
		if !q.Add(f[0], f[1], grade) {
			return nil, lr.Errorf("document %q is judged twice for query %q; keep one judgment per pair", f[1], f[0])
		}
	}
	if err := lr.Err(); err != nil {
		return nil, err
	}
	if header {
		return nil, fileio.Errorf(name, 0, "empty file: want a header line \"query-id\\tcorpus-id\\tscore\" and judgment rows")
	}
	return q, nil
}
