package synth

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"sort"

	"github.com/r2med/r2med/internal/fileio"
	"github.com/r2med/r2med/internal/jsonw"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/trec"
)

// WriteR2MED writes t in R2MED's layout — corpus.jsonl {id,text},
// query.jsonl {id,text,extra fields…}, qrels.jsonl {q_id,p_id,score} — into
// dir, each file atomically. Output is deterministic: extra query fields in
// key order, qrels in query order then document id order.
func WriteR2MED(t *ir.Task, dir string) error {
	err := fileio.WriteAtomic(filepath.Join(dir, "corpus.jsonl"), func(w io.Writer) error {
		var b []byte
		for _, d := range t.Corpus {
			b = appendIDText(b[:0], d.ID, d.Text)
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
			b = appendIDText(b[:0], q.ID, q.Text)
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
				b = jsonw.AppendString(b, k)
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
				b = jsonw.AppendString(b, qid)
				b = append(b, `,"p_id":`...)
				b = jsonw.AppendString(b, d)
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
func qrelsOrder(t *ir.Task) []string {
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

// appendIDText opens a corpus or query line: {"id":…,"text":… with the
// object left open for any further fields.
func appendIDText(b []byte, id, text string) []byte {
	b = append(b, `{"id":`...)
	b = jsonw.AppendString(b, id)
	b = append(b, `,"text":`...)
	return jsonw.AppendString(b, text)
}

func appendInt(b []byte, n int) []byte {
	if n < 0 {
		return appendUint(append(b, '-'), uint64(-n))
	}
	return appendUint(b, uint64(n))
}
