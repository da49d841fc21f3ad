package analysis

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/r2med/r2med/internal/errtext"
	"github.com/r2med/r2med/internal/fileio"
	"github.com/r2med/r2med/internal/jsonw"
)

// AnalyzeJSONL reads JSON lines {"id": ..., "text": "..."} from r and writes
// one line {"id": ...,"tokens":[...]} per input line to w, in input order.
// The id is copied as it was written (a string or a number); other fields
// are ignored and blank lines skipped; an input without a record is an
// error, as an empty corpus is to dataset. Lines are read by the project's
// rule (fileio.Lines: a byte-order mark at the start skipped, one on a
// later line refused, CRLF line ends, the line limit). A bad line stops
// the run with a *fileio.LineError naming name, the line number and the
// problem; text that is not valid Unicode (bad UTF-8, a lone surrogate
// escape) is such a problem, not a silent U+FFFD, and so is an id that a
// TREC file could not carry (fileio.CheckID: white space, Unicode white
// space, empty), since the tokens go on to be indexed under it.
func AnalyzeJSONL(r io.Reader, w io.Writer, a Analyzer, name string) error {
	lr := fileio.NewLines(r, name, "JSON-lines")
	bw := bufio.NewWriterSize(w, 1<<16)
	var (
		rec    jsonlRecord
		tokens []string
		out    []byte
		wrote  bool
	)
	for {
		line, ok := lr.Next()
		if !ok {
			break
		}
		rec = jsonlRecord{}
		if err := parseRecord(line, &rec); err != nil {
			return lr.Errorf("%v", err)
		}
		tokens = a.Analyze(tokens[:0], *rec.Text)
		out = append(out[:0], `{"id":`...)
		out = append(out, rec.ID...)
		out = append(out, `,"tokens":[`...)
		for i, t := range tokens {
			if i > 0 {
				out = append(out, ',')
			}
			out = jsonw.AppendString(out, t)
		}
		out = append(out, "]}\n"...)
		if _, err := bw.Write(out); err != nil {
			return err
		}
		wrote = true
	}
	if err := lr.Err(); err != nil {
		return err
	}
	if !wrote {
		return fileio.Errorf(name, 0, "no records: the input is empty (or all its lines are blank); give JSON lines {\"id\": ..., \"text\": ...}")
	}
	return bw.Flush()
}

type jsonlRecord struct {
	ID   json.RawMessage `json:"id"`
	Text *string         `json:"text"`
}

func parseRecord(line []byte, rec *jsonlRecord) error {
	if err := errtext.CheckJSONText(line, "line"); err != nil {
		return err
	}
	if err := json.Unmarshal(line, rec); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field == "text" {
			return errors.New(`"text" is not a string`)
		}
		return errors.New("malformed JSON: " + err.Error())
	}
	switch {
	case len(rec.ID) == 0 || string(rec.ID) == "null":
		return errors.New(`missing "id"`)
	case rec.ID[0] != '"' && rec.ID[0] != '-' && (rec.ID[0] < '0' || rec.ID[0] > '9'):
		return errors.New(`"id" is neither a string nor a number`)
	case rec.Text == nil:
		return errors.New(`missing "text"`)
	}
	if rec.ID[0] == '"' {
		var id string
		if err := json.Unmarshal(rec.ID, &id); err != nil {
			return errors.New(`"id": ` + err.Error())
		}
		if err := fileio.CheckID(id); err != nil {
			return fmt.Errorf(`"id" %v`, err)
		}
	}
	return nil
}
