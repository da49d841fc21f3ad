package analysis

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"unicode/utf8"

	"github.com/r2med/r2med/internal/fileio"
)

// AnalyzeJSONL reads JSON lines {"id": ..., "text": "..."} from r and writes
// one line {"id": ...,"tokens":[...]} per input line to w, in input order.
// The id is copied as it was written (a string or a number); other fields
// are ignored and blank lines skipped. A bad line stops the run with a
// *fileio.LineError naming name, the line number and the problem.
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
				out = appendJSONString(out, t)
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

func parseRecord(line []byte, rec *jsonlRecord) error {
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
	if rec.ID[0] == '"' && !utf8.Valid(rec.ID) {
		// Re-encode so the output stays valid JSON, as encoding/json would.
		var s string
		_ = json.Unmarshal(rec.ID, &s)
		rec.ID = appendJSONString(nil, s)
	}
	return nil
}

// appendJSONString appends s as a JSON string. Unlike encoding/json it
// leaves <, > and & alone (nothing here is HTML); like it, it writes invalid
// UTF-8 as U+FFFD.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i++
			start = i
			continue
		}
		// U+2028 and U+2029 are valid JSON but break JavaScript readers;
		// encoding/json escapes them too.
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
