package trainset

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/r2med/r2med/dataset"
	"github.com/r2med/r2med/internal/errtext"
	"github.com/r2med/r2med/internal/fileio"
	"github.com/r2med/r2med/table"
)

// Formats are the values Options.Format takes.
var Formats = []string{"jsonl", "json", "parquet", "tsv", "text"}

// kinds names the line formats in the error for a line over the readers'
// limit (fileio.Lines, the project's rule for input lines, which these
// readers share).
var kinds = map[string]string{"jsonl": "JSON-lines", "tsv": "TSV", "text": "text (one text per line)"}

// File is a training file opened for reading, its layout known.
type File struct {
	Path   string
	Layout Layout
	opts   Options
	gz     bool
}

// Position is where reading resumes: after row Line, which ends at byte
// Offset of the file (text formats that are not gzipped; other files are
// read from their start and the rows up to Line skipped). JSON arrays and
// parquet files resume after their first Row rows: a JSON array may hold
// many rows on one line.
type Position struct {
	Line   int   `json:"line"`
	Offset int64 `json:"offset"`
	Row    int   `json:"row,omitempty"`
}

// Row is one row as read, not yet decoded: Decode turns it into a Record,
// so that decoding can run in parallel with reading.
type Row struct {
	Line int
	// Element is a JSON array row's 1-based place in the array (0 in
	// other formats).
	Element int
	// Next is where to resume once this row is done.
	Next Position
	data []byte
	obj  map[string]json.RawMessage
}

// Open opens a training file and tells its layout from its first row.
func Open(path string, opts Options) (*File, error) {
	f := &File{Path: path, opts: opts}
	format := strings.ToLower(opts.Format)
	base := strings.TrimSuffix(strings.ToLower(path), ".gz")
	if format == "" {
		switch {
		case strings.HasSuffix(base, ".jsonl"), strings.HasSuffix(base, ".ndjson"):
			format = "jsonl"
		case strings.HasSuffix(base, ".json"):
			format = "json"
		case strings.HasSuffix(base, ".parquet"):
			format = "parquet"
		case strings.HasSuffix(base, ".tsv"):
			format = "tsv"
		default:
			format = "text"
		}
	}
	if !slices.Contains(Formats, format) {
		return nil, fmt.Errorf("%s: unknown training file format %q; use one of %s", path, format, strings.Join(Formats, ", "))
	}
	rc, err := fileio.Open(path)
	if err != nil {
		return nil, err
	}
	br := bufio.NewReaderSize(rc, 1<<16)
	f.gz = isGzip(path)
	if format == "json" {
		// One JSON array, or JSON lines under a .json name.
		if fileio.FirstByte(br) != '[' {
			format = "jsonl"
		}
	}
	var first []byte
	firstLine := 0
	if format == "jsonl" || format == "tsv" || format == "text" {
		lr := fileio.NewLines(br, path, kinds[format])
		if format == "text" {
			lr.FreeText()
		}
		for {
			line, ok := lr.Scan()
			if !ok {
				if err := lr.Err(); err != nil {
					rc.Close()
					return nil, err
				}
				break
			}
			if fileio.IsBlank(string(line)) {
				continue
			}
			first, firstLine = line, lr.Line()
			break
		}
	}
	rc.Close()
	switch format {
	case "text":
		if first == nil {
			return nil, fileio.Errorf(path, 0, "the file is empty (or all its lines are blank): it holds no text to audit")
		}
		f.Layout = Layout{Format: "text", Name: "one text per line", Fields: Fields{Text: []string{"line"}}}
		if !opts.Fields.empty() {
			return nil, fmt.Errorf("%s is read as plain text, one text per line, which has no fields to name; drop the --*-field flags or give a .jsonl, .tsv or .parquet file", path)
		}
	case "tsv":
		if first == nil {
			return nil, fileio.Errorf(path, 0, "the file is empty (or all its lines are blank)")
		}
		if err := errtext.CheckUTF8(first, "line"); err != nil {
			return nil, fileio.Errorf(path, firstLine, "%v", err)
		}
		l, err := detectTSV(strings.Split(string(first), "\t"), opts.Fields)
		if err != nil {
			return nil, fileio.Errorf(path, firstLine, "%v", err)
		}
		if l.headerLine != 0 {
			l.headerLine = firstLine
		}
		f.Layout = l
	case "jsonl":
		if first == nil {
			return nil, fileio.Errorf(path, 0, "the file holds no JSON lines")
		}
		m, err := errtext.DecodeObject(first)
		if err != nil {
			return nil, fileio.Errorf(path, 0, "first row: %v", err)
		}
		l, err := detect(sortedKeys(m), opts.Fields)
		if err != nil {
			return nil, fileio.Errorf(path, 0, "the first row %v", err)
		}
		l.Format = "jsonl"
		f.Layout = l
	case "json", "parquet":
		var keys []string
		errStop := errors.New("stop")
		err := eachTableRow(path, f.detectColumns(), func(m map[string]json.RawMessage, _, _ int) error {
			keys = sortedKeys(m)
			return errStop
		})
		if err != nil && err != errStop {
			return nil, err
		}
		if keys == nil {
			return nil, fileio.Errorf(path, 0, "the file holds no rows")
		}
		l, err := detect(keys, opts.Fields)
		if err != nil {
			return nil, fileio.Errorf(path, 0, "the first row %v", err)
		}
		l.Format = format
		f.Layout = l
	}
	return f, nil
}

// detectColumns are the parquet columns worth reading to tell a layout:
// every known field, the negative_N columns and the fields asked for.
func (f *File) detectColumns() []string {
	cols := append([]string{}, knownFields...)
	for i := 1; i <= 64; i++ {
		cols = append(cols, "negative_"+strconv.Itoa(i))
	}
	fl := f.opts.Fields
	return append(append(append(append(append(cols, fl.Query...), fl.Positive...), fl.Negative...), fl.Text...), f.opts.Meta...)
}

// columns are the fields the layout reads.
func (f *File) columns() []string {
	l := f.Layout
	cols := append(append(append(append([]string{}, l.Fields.Query...), l.Fields.Positive...), l.Fields.Negative...), l.Fields.Text...)
	if l.ID != "" {
		cols = append(cols, l.ID)
	}
	if l.Title != "" {
		cols = append(cols, l.Title)
	}
	return append(cols, f.opts.Meta...)
}

// Seekable reports whether reading can start at a byte offset rather than
// by skipping rows.
func (f *File) Seekable() bool {
	return !f.gz && (f.Layout.Format == "jsonl" || f.Layout.Format == "tsv" || f.Layout.Format == "text")
}

// Rows calls fn with every row after from, in file order. Blank lines of
// JSON-lines files are not rows; every line of a plain-text file is (an
// empty one an empty text). An error from fn stops the read and is
// returned.
func (f *File) Rows(ctx context.Context, from Position, fn func(Row) error) error {
	switch f.Layout.Format {
	case "json", "parquet":
		n := 0
		return eachTableRow(f.Path, f.columns(), func(m map[string]json.RawMessage, line, row int) error {
			n++
			if n&1023 == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			at, elem := line, n
			if at == 0 { // parquet: the row is the line
				at, elem = row, 0
			}
			if n <= from.Row {
				return nil
			}
			return fn(Row{Line: at, Element: elem, Next: Position{Line: at, Row: n}, obj: m})
		})
	}
	fh, err := os.Open(f.Path)
	if err != nil {
		return err
	}
	defer fh.Close()
	var r io.Reader = fh
	start := Position{}
	if f.Seekable() && from.Offset > 0 {
		if err := checkBoundary(fh, from.Offset); err != nil {
			return fileio.Errorf(f.Path, from.Line, "cannot resume at byte %d: %v; the file changed since the checkpoint, start over", from.Offset, err)
		}
		if _, err := fh.Seek(from.Offset, io.SeekStart); err != nil {
			return err
		}
		start = from
	} else if f.gz {
		rc, err := fileio.Open(f.Path)
		if err != nil {
			return err
		}
		defer rc.Close()
		r = rc
	}
	lr := fileio.NewLines(r, f.Path, kinds[f.Layout.Format])
	if f.Layout.Format == "text" {
		lr.FreeText()
	}
	lr.Resume(start.Line, start.Offset)
	for {
		line, ok := lr.Scan()
		if !ok {
			return lr.Err()
		}
		if lr.Line()&1023 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if lr.Line() <= from.Line {
			continue
		}
		// A blank line holds no record in JSON lines or TSV (dataset's
		// readers skip it too); in a text file it is an empty text.
		if lr.Line() == f.Layout.headerLine || f.Layout.Format != "text" && fileio.IsBlank(string(line)) {
			continue
		}
		if err := fn(Row{Line: lr.Line(), Next: Position{Line: lr.Line(), Offset: lr.Offset()}, data: bytes.Clone(line)}); err != nil {
			return err
		}
	}
}

// eachTableRow reads a parquet file or a JSON array through package
// table, the project's one parquet and JSON-table reader, giving each
// row's 1-based line (JSON) or row number (parquet, line 0). Parquet
// columns are decoded whole, so a parquet training file is held in
// memory (its text columns only) while it is read.
func eachTableRow(path string, cols []string, fn func(row map[string]json.RawMessage, line, rowNum int) error) error {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	d, err := dataset.OpenDir(dir, "directory", "")
	if err != nil {
		return err
	}
	return table.Each(d, base, cols, func(r table.Row, at table.At) error { return fn(r, at.Line, at.Row) })
}

// checkBoundary checks that offset follows a line end.
func checkBoundary(fh *os.File, offset int64) error {
	var b [1]byte
	if _, err := fh.ReadAt(b[:], offset-1); err != nil {
		return err
	}
	if b[0] != '\n' {
		return errors.New("it is not at the start of a line")
	}
	return nil
}

// Decode turns a row into a record. It is safe for concurrent use.
func (f *File) Decode(r Row) (Record, error) {
	l := f.Layout
	rec := Record{Line: r.Line, Element: r.Element}
	errorf := func(format string, args ...any) (Record, error) {
		if r.Element > 0 { // a line of a JSON array may hold many elements
			format, args = "element %d of the array: "+format, append([]any{r.Element}, args...)
		}
		return Record{}, fileio.Errorf(f.Path, r.Line, format, args...)
	}
	if l.Format == "text" || l.Format == "tsv" {
		if err := errtext.CheckUTF8(r.data, "line"); err != nil {
			return errorf("%v", err)
		}
	}
	switch l.Format {
	case "text":
		rec.Texts = []Text{{Role: Plain, Field: "line", Text: string(r.data)}}
		return rec, nil
	case "tsv":
		cells := strings.Split(string(r.data), "\t")
		if len(cells) != len(l.columns) {
			return errorf("%d tab-separated cells; the file's first line has %d", len(cells), len(l.columns))
		}
		cell := func(name string) string { return cells[l.columns[name]] }
		if l.ID != "" {
			rec.ID = cell(l.ID)
		}
		add := func(role Role, fields []string) {
			for _, name := range fields {
				rec.Texts = append(rec.Texts, Text{Role: role, Field: name, Text: cell(name)})
			}
		}
		add(Query, l.Fields.Query)
		add(Positive, l.Fields.Positive)
		add(Negative, l.Fields.Negative)
		add(Plain, l.Fields.Text)
		if l.Title != "" && len(rec.Texts) > 0 {
			if t := cell(l.Title); t != "" {
				rec.Texts[0].Text = t + " " + rec.Texts[0].Text
			}
		}
		for _, k := range f.opts.Meta {
			if i, ok := l.columns[k]; ok {
				if rec.Meta == nil {
					rec.Meta = map[string]string{}
				}
				rec.Meta[k] = cells[i]
			}
		}
		return rec, nil
	}
	m := r.obj
	if m == nil {
		var err error
		if m, err = errtext.DecodeObject(r.data); err != nil {
			return errorf("%v", err)
		}
	}
	if l.ID != "" {
		if raw, ok := m[l.ID]; ok {
			id, err := scalar(raw)
			if err != nil {
				return errorf("field %q: %v", l.ID, err)
			}
			rec.ID = id
		}
	}
	add := func(role Role, fields []string, required bool) error {
		for _, name := range fields {
			raw, ok := m[name]
			if !ok || string(raw) == "null" {
				if required {
					return fmt.Errorf("no %q field (or null); every row of this %s file needs one", name, l.Name)
				}
				continue
			}
			texts, err := strings1(raw)
			if err != nil {
				return fmt.Errorf("field %q: %v", name, err)
			}
			for _, t := range texts {
				rec.Texts = append(rec.Texts, Text{Role: role, Field: name, Text: t})
			}
		}
		return nil
	}
	// Negatives may be missing (pairs beside triplets); the rest not.
	for _, g := range []struct {
		role     Role
		fields   []string
		required bool
	}{{Query, l.Fields.Query, true}, {Positive, l.Fields.Positive, true}, {Negative, negativeFields(l, m), false}, {Plain, l.Fields.Text, true}} {
		if err := add(g.role, g.fields, g.required); err != nil {
			return errorf("%v", err)
		}
	}
	if l.Title != "" {
		if raw, ok := m[l.Title]; ok && string(raw) != "null" {
			t, err := scalar(raw)
			if err != nil {
				return errorf("field %q: %v", l.Title, err)
			}
			if t != "" && len(rec.Texts) > 0 {
				rec.Texts[0].Text = t + " " + rec.Texts[0].Text
			}
		}
	}
	for _, k := range f.opts.Meta {
		if raw, ok := m[k]; ok && string(raw) != "null" {
			v, err := scalar(raw)
			if err != nil {
				return errorf("field %q: %v", k, err)
			}
			if rec.Meta == nil {
				rec.Meta = map[string]string{}
			}
			rec.Meta[k] = v
		}
	}
	return rec, nil
}

// negativeFields are the negative fields read from a row: the layout's,
// and for sentence-transformers the row's own negative_N beyond them.
func negativeFields(l Layout, m map[string]json.RawMessage) []string {
	if !l.numbered {
		return l.Fields.Negative
	}
	return append(slices.Clip(l.Fields.Negative), numberedNegatives(m, l.Fields.Negative)...)
}

// strings1 reads a text field: a string, or an array of strings or of
// passages ({title, text} objects, as Tevatron's; see passageText).
func strings1(raw json.RawMessage) ([]string, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return []string{s}, nil
	}
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, fmt.Errorf("is %s; want a string or a list of strings", errtext.JSONKind(raw))
	}
	out := make([]string, 0, len(list))
	for i, el := range list {
		var s string
		switch kind := errtext.JSONKind(el); {
		case kind == "an object":
			t, err := passageText(el)
			if err != nil {
				return nil, fmt.Errorf("element %d %v", i, err)
			}
			out = append(out, t)
		case kind != "a string" || json.Unmarshal(el, &s) != nil:
			return nil, fmt.Errorf("element %d is %s; want a list of strings (or of {title, text} passages)", i, kind)
		default:
			out = append(out, s)
		}
	}
	return out, nil
}

// passageText is a passage object's text as Tevatron's format_passage
// makes it (texttron/tevatron src/tevatron/retriever/dataset.py):
// f'{title.strip()} {text.strip()}'.strip(), the title optional.
func passageText(raw json.RawMessage) (string, error) {
	var p struct {
		Title *string `json:"title"`
		Text  *string `json:"text"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return "", fmt.Errorf("is not a passage: %v", errtext.JSONMsg(err))
	}
	if p.Text == nil {
		return "", errors.New(`has no "text"; a passage is {"title": …, "text": …}`)
	}
	title := ""
	if p.Title != nil {
		title = strings.TrimSpace(*p.Title)
	}
	return strings.TrimSpace(title + " " + strings.TrimSpace(*p.Text)), nil
}

// scalar reads an id or metadata field: a string, or a number or boolean
// as written.
func scalar(raw json.RawMessage) (string, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	switch t := bytes.TrimSpace(raw); {
	case len(t) > 0 && (t[0] == '-' || t[0] >= '0' && t[0] <= '9'), string(t) == "true", string(t) == "false":
		return string(t), nil
	}
	return "", fmt.Errorf("is %s; want a string or a number", errtext.JSONKind(raw))
}

func sortedKeys(m map[string]json.RawMessage) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func isGzip(path string) bool {
	fh, err := os.Open(path)
	if err != nil {
		return false
	}
	defer fh.Close()
	var b [2]byte
	n, _ := io.ReadFull(fh, b[:])
	return n == 2 && b == [2]byte{0x1f, 0x8b}
}
