package synth

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"sort"
	"unicode/utf8"

	"github.com/r2med/r2med/dataset"
	"github.com/r2med/r2med/internal/fileio"
	"github.com/r2med/r2med/trec"
)

// WriteR2MED writes t in R2MED's layout — corpus.jsonl {id,text},
// query.jsonl {id,text,extra fields…}, qrels.jsonl {q_id,p_id,score} — into
// dir, each file atomically. Output is deterministic: extra query fields in
// key order, qrels in query order then document id order.
func WriteR2MED(t *dataset.Task, dir string) error {
	err := fileio.WriteAtomic(filepath.Join(dir, "corpus.jsonl"), func(w io.Writer) error {
		var b []byte
		for _, d := range t.Corpus {
			b = append(b[:0], `{"id":`...)
			b = appendJSONString(b, d.ID)
			b = append(b, `,"text":`...)
			b = appendJSONString(b, d.Text)
			b = append(b, "}\n"...)
			if _, err := w.Write(b); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	err = fileio.WriteAtomic(filepath.Join(dir, "query.jsonl"), func(w io.Writer) error {
		var b []byte
		for _, q := range t.Queries {
			b = append(b[:0], `{"id":`...)
			b = appendJSONString(b, q.ID)
			b = append(b, `,"text":`...)
			b = appendJSONString(b, q.Text)
			keys := make([]string, 0, len(q.Extra))
			for k := range q.Extra {
				// id and text are written above; a second copy would make
				// the line ambiguous to JSON readers.
				if k != "id" && k != "text" {
					keys = append(keys, k)
				}
			}
			sort.Strings(keys)
			for _, k := range keys {
				raw := q.Extra[k]
				if !json.Valid(raw) {
					return fmt.Errorf("query %s: field %q is not valid JSON", q.ID, k)
				}
				b = append(b, ',')
				b = appendJSONString(b, k)
				b = append(b, ':')
				b = append(b, raw...)
			}
			b = append(b, "}\n"...)
			if _, err := w.Write(b); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	return fileio.WriteAtomic(filepath.Join(dir, "qrels.jsonl"), func(w io.Writer) error {
		var b []byte
		for _, qid := range qrelsOrder(t) {
			judged := t.Qrels[qid]
			docs := make([]string, 0, len(judged))
			for d := range judged {
				docs = append(docs, d)
			}
			sort.Strings(docs)
			for _, d := range docs {
				b = append(b[:0], `{"q_id":`...)
				b = appendJSONString(b, qid)
				b = append(b, `,"p_id":`...)
				b = appendJSONString(b, d)
				b = append(b, `,"score":`...)
				b = appendInt(b, judged[d])
				b = append(b, "}\n"...)
				if _, err := w.Write(b); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// qrelsOrder lists judged queries in the task's query order, then any
// judged query the task does not list, in byte order.
func qrelsOrder(t *dataset.Task) []string {
	ids := make([]string, 0, len(t.Qrels))
	listed := make(map[string]bool, len(t.Queries))
	for _, q := range t.Queries {
		if _, ok := t.Qrels[q.ID]; ok && !listed[q.ID] {
			ids = append(ids, q.ID)
		}
		listed[q.ID] = true
	}
	var rest []string
	for _, qid := range trec.QueryIDs(t.Qrels) {
		if !listed[qid] {
			rest = append(rest, qid)
		}
	}
	return slices.Concat(ids, rest)
}

func appendInt(b []byte, n int) []byte {
	if n < 0 {
		return appendUint(append(b, '-'), uint64(-n))
	}
	return appendUint(b, uint64(n))
}

const hexDigits = "0123456789abcdef"

// appendJSONString quotes s as a JSON string. encoding/json would do, but at
// hundreds of megabytes its reflection and HTML escaping are the bulk of
// WriteR2MED's time. Invalid UTF-8 becomes U+FFFD as encoding/json does;
// U+2028/2029 are escaped so the output is also valid JavaScript.
func appendJSONString(b []byte, s string) []byte {
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
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
