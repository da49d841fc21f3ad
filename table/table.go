// Package table reads the table files of Hugging Face dataset repositories
// — parquet, JSON lines and JSON arrays, each optionally gzipped — row by
// row, as maps of field names to JSON values, so that one set of field
// readers (dataset.ID, dataset.Text, dataset.Grade) serves every format.
// Rows are placed for messages by their physical line, or by their row
// number in a parquet file.
package table

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/parquet-go/parquet-go"
	"github.com/r2med/r2med/dataset"
	"github.com/r2med/r2med/internal/errtext"
	"github.com/r2med/r2med/internal/fileio"
)

// Formats names the files this package reads, for messages.
const Formats = ".parquet, .jsonl, .ndjson or .json, optionally gzipped with .gz added"

// Format tells a table file's format by its name, returning the name
// without a .gz suffix; ok is false for other files.
func Format(name string) (base string, ok bool) {
	base = strings.TrimSuffix(name, ".gz")
	for _, ext := range []string{".parquet", ".jsonl", ".ndjson", ".json"} {
		if strings.HasSuffix(base, ext) && len(base) > len(ext) {
			return base, true
		}
	}
	return base, false
}

func isParquet(name string) bool {
	base, _ := Format(name)
	return strings.HasSuffix(base, ".parquet")
}

// Row is one row: field name → JSON value.
type Row = map[string]json.RawMessage

// At locates a row for messages: the physical line of a JSON-lines or
// JSON-array file, or the 1-based row of a parquet file.
type At struct {
	File      string
	Line, Row int
}

// Errorf is an error at the row: "FILE:LINE: …" or "FILE: row N: …".
func (a At) Errorf(format string, args ...any) error {
	if a.Line > 0 {
		return fileio.Errorf(a.File, a.Line, format, args...)
	}
	return fileio.Errorf(a.File, 0, "row %d: "+format, append([]any{a.Row}, args...)...)
}

// String places a row in messages.
func (a At) String() string {
	switch {
	case a.Line > 0:
		return fmt.Sprintf("%s:%d", a.File, a.Line)
	case a.Row > 0:
		return fmt.Sprintf("%s row %d", a.File, a.Row)
	}
	return a.File
}

// Each calls fn with every row of the table file rel of d, in file order.
// A parquet file is read column by column and only the columns in cols
// are decoded (nil means all); JSON rows carry every field. An error from
// fn stops the read and is returned unchanged.
func Each(d dataset.Dir, rel string, cols []string, fn func(Row, At) error) error {
	name := d.Show(rel)
	if isParquet(rel) {
		return parquetRows(d, rel, name, cols, fn)
	}
	rc, err := d.Open(rel)
	if err != nil {
		return err
	}
	defer rc.Close()
	br := bufio.NewReaderSize(rc, 1<<16)
	if fileio.FirstByte(br) == '[' {
		return jsonArrayRows(br, name, fn)
	}
	lr := fileio.NewLines(br, name, "JSON-lines")
	for {
		line, ok := lr.Next()
		if !ok {
			break
		}
		m, err := errtext.DecodeObject(line)
		if err != nil {
			return lr.Errorf("%v", err)
		}
		if err := fn(m, At{File: name, Line: lr.Line()}); err != nil {
			return err
		}
	}
	return lr.Err()
}

// jsonArrayRows reads a file holding one JSON array of row objects, which
// the datasets library accepts beside JSON lines. Rows are located by the
// line their object starts on.
func jsonArrayRows(r io.Reader, name string, fn func(Row, At) error) error {
	data, err := io.ReadAll(r)
	if err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return fileio.Errorf(name, 0, "file ends in the middle of its data (%v); it is probably truncated, download or decompress it again", err)
		}
		return fileio.Errorf(name, 0, "read failed: %v", err)
	}
	if err := errtext.CheckJSONFile(name, data); err != nil {
		return err
	}
	data = bytes.TrimPrefix(data, fileio.BOM)
	// The line rule (fileio.SkipBOM) holds here too: a byte-order mark
	// starting a later line is where files were joined. Lines have no
	// length limit: json.dump writes a whole array on one line.
	for i, n := 0, 1; ; n++ {
		j := bytes.IndexByte(data[i:], '\n')
		if j < 0 {
			break
		}
		i += j + 1
		if _, err := fileio.SkipBOM(data[i:min(len(data), i+len(fileio.BOM))], n+1); err != nil {
			return fileio.Errorf(name, n+1, "%v", err)
		}
	}
	// Offsets only grow, so lines are counted on from the last one asked.
	var lastOff int64
	lastLine := 1
	lineOf := func(off int64) int {
		if off < lastOff {
			return 1 + bytes.Count(data[:off], []byte("\n"))
		}
		lastLine += bytes.Count(data[lastOff:off], []byte("\n"))
		lastOff = off
		return lastLine
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if _, err := dec.Token(); err != nil { // the opening bracket
		return fileio.Errorf(name, 1, "malformed JSON: %v", err)
	}
	for dec.More() {
		off := dec.InputOffset()
		// The offset is that of the separator before the element; skip it
		// and white space so that the line is the object's own.
		for off < int64(len(data)) && (data[off] == ',' || fileio.IsSpace(data[off])) {
			off++
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			var se *json.SyntaxError
			if errors.As(err, &se) {
				return fileio.Errorf(name, lineOf(min(se.Offset, int64(len(data)))), "malformed JSON: %s; the file must be one JSON array of objects", errtext.JSONMsg(se))
			}
			return fileio.Errorf(name, lineOf(off), "malformed JSON: %v; the file must be one JSON array of objects", err)
		}
		at := At{File: name, Line: lineOf(off)}
		m, err := errtext.DecodeObject(raw)
		if err != nil {
			return at.Errorf("%s", arrayWording.Replace(err.Error()))
		}
		if err := fn(m, at); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil {
		return fileio.Errorf(name, lineOf(dec.InputOffset()), "malformed JSON: %v; the file must be one JSON array of objects", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return fileio.Errorf(name, lineOf(dec.InputOffset()), "data after the JSON array; the file must be one JSON array of objects")
	}
	return nil
}

// arrayWording rewords errtext.DecodeObject's messages, written for JSON lines,
// for an array element.
var arrayWording = strings.NewReplacer("line holds", "element holds", "per line", "per array element")

// parquetRows reads the columns cols of a parquet file into JSON values
// and hands them to fn row by row. Strings become JSON strings, integers
// and floats numbers, lists arrays and nulls null; nested structs and maps
// are refused, as no config here has them.
func parquetRows(d dataset.Dir, rel, name string, cols []string, fn func(Row, At) error) error {
	ra, size, closer, err := openReaderAt(d, rel)
	if err != nil {
		return err
	}
	defer closer.Close()
	names, values, err := parquetColumns(ra, size, name, cols)
	if err != nil {
		return err
	}
	nrows := 0
	if len(values) > 0 {
		nrows = len(values[0])
	}
	for r := range nrows {
		m := make(map[string]json.RawMessage, len(names))
		for i, col := range names {
			m[col] = values[i][r]
		}
		if err := fn(m, At{File: name, Row: r + 1}); err != nil {
			return err
		}
	}
	return nil
}

// parquetColumns decodes the columns cols (nil: all) of a parquet file
// whole. A corrupt file can make the parquet library panic rather than
// fail; that is reported as the file's error, since a damaged download is
// an input problem, not a bug to crash on.
func parquetColumns(ra io.ReaderAt, size int64, name string, cols []string) (names []string, values [][]json.RawMessage, err error) {
	defer func() {
		if p := recover(); p != nil {
			names, values = nil, nil
			err = fileio.Errorf(name, 0, "not a readable parquet file: %v; download it again", p)
		}
	}()
	f, err := parquet.OpenFile(ra, size, parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		return nil, nil, fileio.Errorf(name, 0, "not a readable parquet file: %v", err)
	}
	nrows := f.NumRows()
	if nrows < 0 || nrows > math.MaxInt32 {
		return nil, nil, fileio.Errorf(name, 0, "%d rows is more than this reader takes", nrows)
	}
	var picked []*parquet.Column
	if cols == nil {
		picked = f.Root().Columns()
	} else {
		for _, c := range cols {
			if col := f.Root().Column(c); col != nil {
				picked = append(picked, col)
			}
		}
	}
	values = make([][]json.RawMessage, len(picked))
	for i, col := range picked {
		names = append(names, col.Name())
		if values[i], err = parquetColumn(col, int(nrows)); err != nil {
			return nil, nil, fileio.Errorf(name, 0, "column %q: %v", col.Name(), err)
		}
		if len(values[i]) != int(nrows) {
			return nil, nil, fileio.Errorf(name, 0, "column %q has %d rows, the file %d; the file is corrupt", col.Name(), len(values[i]), nrows)
		}
	}
	return names, values, nil
}

// openReaderAt gives random access to rel, which parquet needs: the file
// itself when the file system allows it, else its bytes in memory (a
// gzipped parquet file, or an fs.FS without ReadAt).
func openReaderAt(d dataset.Dir, rel string) (io.ReaderAt, int64, io.Closer, error) {
	f, err := d.OpenFile(rel)
	if err != nil {
		return nil, 0, nil, err
	}
	var magic [2]byte
	ra, isRA := f.(io.ReaderAt)
	st, statErr := f.Stat()
	if isRA && statErr == nil {
		if n, _ := ra.ReadAt(magic[:], 0); n < 2 || magic != [2]byte{0x1f, 0x8b} {
			return ra, st.Size(), f, nil
		}
	}
	f.Close()
	rc, err := d.Open(rel) // decompresses gzip
	if err != nil {
		return nil, 0, nil, err
	}
	defer rc.Close()
	data, err := io.ReadAll(rc)
	if err != nil {
		return nil, 0, nil, fileio.Errorf(d.Show(rel), 0, "read failed: %v", err)
	}
	return bytes.NewReader(data), int64(len(data)), io.NopCloser(nil), nil
}

// parquetColumn decodes one top-level column: a leaf, or a list of leaves
// in any of the LIST encodings (three-level with any names, or a bare
// repeated field). A list's presence is told by the definition levels: below
// the level of the repeated node's parent the list is null, at it the list
// is empty, from the repeated node's level on there is an element.
func parquetColumn(col *parquet.Column, nrows int) ([]json.RawMessage, error) {
	node := col
	def, listDef, repeated := 0, -1, 0
	for {
		if node.Repeated() {
			repeated++
			listDef = def
		}
		if node.Optional() || node.Repeated() {
			def++
		}
		if node.Leaf() {
			break
		}
		// A group is taken only as a list: repeated itself (the middle
		// level) or holding one repeated field (the LIST-annotated outer
		// level). Anything else is a struct or a map.
		kids := node.Columns()
		if len(kids) != 1 || !node.Repeated() && !kids[0].Repeated() {
			return nil, errors.New("is a struct or map column; want a string, number or list column")
		}
		node = kids[0]
	}
	if repeated > 1 {
		return nil, errors.New("is a list of lists; want a string, number or list column")
	}
	enc, err := leafEncoder(node.Type())
	if err != nil {
		return nil, err
	}
	maxDef := def
	out := make([]json.RawMessage, 0, nrows)
	// Strings must be UTF-8: JSON encoding would turn bad bytes into
	// U+FFFD unseen. The row is the one being built.
	isText := node.Type().Kind() == parquet.ByteArray || node.Type().Kind() == parquet.FixedLenByteArray
	checkText := func(v parquet.Value) error {
		if !isText {
			return nil
		}
		var te *errtext.TextError
		if errors.As(errtext.CheckUTF8(v.ByteArray(), "value"), &te) {
			te.Fix = "strings in a parquet file must be UTF-8: write the table again from text decoded in its real encoding"
			return fmt.Errorf("row %d: %w", len(out)+1, te)
		}
		return nil
	}
	var list []byte // the list row being built
	inList := false
	flush := func() {
		if inList {
			out = append(out, json.RawMessage(append(list, ']')))
			list, inList = nil, false
		}
	}
	pages := node.Pages()
	defer pages.Close()
	buf := make([]parquet.Value, 1024)
	for {
		page, err := pages.ReadPage()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		vr := page.Values()
		for {
			n, err := vr.ReadValues(buf)
			for _, v := range buf[:n] {
				d := v.DefinitionLevel()
				if repeated == 0 {
					if d < maxDef {
						out = append(out, json.RawMessage("null"))
					} else if err := checkText(v); err != nil {
						parquet.Release(page)
						return nil, err
					} else {
						out = append(out, enc(nil, v))
					}
					continue
				}
				if v.RepetitionLevel() == 0 {
					flush()
					switch {
					case d < listDef:
						out = append(out, json.RawMessage("null"))
						continue
					case d == listDef:
						out = append(out, json.RawMessage("[]"))
						continue
					}
					list, inList = []byte{'['}, true
				} else if !inList {
					parquet.Release(page)
					return nil, errors.New("a list continues a row that has none; the file is corrupt")
				} else {
					list = append(list, ',')
				}
				if d < maxDef {
					list = append(list, "null"...)
				} else if err := checkText(v); err != nil {
					parquet.Release(page)
					return nil, err
				} else {
					list = enc(list, v)
				}
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				parquet.Release(page)
				return nil, err
			}
		}
		parquet.Release(page)
	}
	flush()
	return out, nil
}

// leafEncoder returns how values of a leaf type append themselves as JSON.
func leafEncoder(t parquet.Type) (func([]byte, parquet.Value) []byte, error) {
	switch t.Kind() {
	case parquet.ByteArray, parquet.FixedLenByteArray:
		return func(dst []byte, v parquet.Value) []byte {
			b, _ := json.Marshal(string(v.ByteArray()))
			return append(dst, b...)
		}, nil
	case parquet.Int32:
		return func(dst []byte, v parquet.Value) []byte { return strconv.AppendInt(dst, int64(v.Int32()), 10) }, nil
	case parquet.Int64:
		return func(dst []byte, v parquet.Value) []byte { return strconv.AppendInt(dst, v.Int64(), 10) }, nil
	case parquet.Float:
		return func(dst []byte, v parquet.Value) []byte { return appendJSONFloat(dst, float64(v.Float()), 32) }, nil
	case parquet.Double:
		return func(dst []byte, v parquet.Value) []byte { return appendJSONFloat(dst, v.Double(), 64) }, nil
	case parquet.Boolean:
		return func(dst []byte, v parquet.Value) []byte { return strconv.AppendBool(dst, v.Boolean()) }, nil
	}
	return nil, fmt.Errorf("has values of type %s; want strings, numbers or booleans", t)
}

// appendJSONFloat writes the shortest decimal that reads back to f at its
// own precision. JSON has no NaN or infinity; they become strings, which
// every numeric field then rejects by name.
func appendJSONFloat(dst []byte, f float64, bits int) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return strconv.AppendQuote(dst, strconv.FormatFloat(f, 'g', -1, bits))
	}
	return strconv.AppendFloat(dst, f, 'g', -1, bits)
}
