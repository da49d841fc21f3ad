package analysis

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"

	"github.com/r2med/r2med/internal/errtext"
	"github.com/r2med/r2med/internal/fileio"
	"github.com/r2med/r2med/internal/jsonw"
)

// AnalyzeJSONL reads JSON lines {"id": ..., "text": "..."} from r and writes
// one line {"id": ...,"tokens":[...]} per input line to w, in input order.
// The id is copied as it was written (a string or a number); other fields
// are ignored, blank lines skipped and a byte-order mark at the start
// dropped. A bad line stops the run with a *fileio.LineError naming name,
// the line number and the problem; text that is not valid Unicode (bad
// UTF-8, a lone surrogate escape) is such a problem, not a silent U+FFFD.
func AnalyzeJSONL(r io.Reader, w io.Writer, a Analyzer, name string) error {
	br := bufio.NewReaderSize(r, 1<<16)
	bw := bufio.NewWriterSize(w, 1<<16)
	var (
		rec    jsonlRecord
		tokens []string
		out    []byte
	)
	for lineNo := 1; ; lineNo++ {
		line, err := br.ReadBytes('\n')
		if len(line) == 0 && err == io.EOF {
			break
		}
		if err != nil && err != io.EOF {
			return err
		}
		if lineNo == 1 {
			line = bytes.TrimPrefix(line, utf8BOM)
		}
		if len(bytes.TrimSpace(line)) > 0 {
			rec = jsonlRecord{}
			if err := parseRecord(line, &rec); err != nil {
				return fileio.Errorf(name, lineNo, "%v", err)
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
		}
		if err == io.EOF {
			break
		}
	}
	return bw.Flush()
}

type jsonlRecord struct {
	ID   json.RawMessage `json:"id"`
	Text *string         `json:"text"`
}

var utf8BOM = []byte("\xef\xbb\xbf")

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
	return nil
}
