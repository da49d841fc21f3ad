package dataset

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/r2med/r2med/internal/fileio"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/trec"
)

// addSeeds adds every plain file in the given testdata/malformed folders.
func addSeeds(f *testing.F, add func([]byte), folders ...string) {
	for _, dir := range folders {
		files, err := filepath.Glob(filepath.Join("testdata", "malformed", dir, "*"))
		if err != nil {
			f.Fatal(err)
		}
		for _, p := range files {
			if strings.HasSuffix(p, ".gz") {
				continue
			}
			b, err := os.ReadFile(p)
			if err != nil {
				f.Fatal(err)
			}
			add(b)
		}
	}
}

// checkLineError insists that a reader's failure points into its input.
func checkLineError(t *testing.T, err error, name string, data []byte) {
	t.Helper()
	var le *fileio.LineError
	if !errors.As(err, &le) {
		t.Fatalf("error %v is a %T, not a *fileio.LineError", err, err)
	}
	lines := bytes.Count(data, []byte("\n")) + 1
	if le.File != name || le.Line < 0 || le.Line > lines {
		t.Fatalf("error %v names %s line %d; the input is %s with %d lines", err, le.File, le.Line, name, lines)
	}
}

// checkNoReplacement insists that text read from data is valid UTF-8 and
// holds U+FFFD only where the input wrote one: invalid bytes and lone
// surrogates are errors, never silently replaced.
func checkNoReplacement(t *testing.T, data []byte, texts ...string) {
	t.Helper()
	for _, s := range texts {
		if !utf8.ValidString(s) {
			t.Fatalf("read invalid UTF-8 %q", s)
		}
		if strings.ContainsRune(s, utf8.RuneError) && !bytes.Contains(data, []byte("\ufffd")) &&
			!bytes.Contains(bytes.ToLower(data), []byte(`\ufffd`)) {
			t.Fatalf("read %q with U+FFFD from input that has none", s)
		}
	}
}

func splitLines(data []byte) [][]byte {
	lines := bytes.Split(data, []byte("\n"))
	for i, l := range lines {
		lines[i] = bytes.TrimSuffix(l, []byte("\r"))
	}
	return lines
}

func FuzzReadCorpus(f *testing.F) {
	addSeeds(f, func(b []byte) { f.Add(b, false) }, "corpus")
	addSeeds(f, func(b []byte) { f.Add(b, true) }, "corpus-beir")
	for _, s := range []string{
		`{"id": "a", "text": "x\ny \u00e9 \ud83d\ude00 \"q\" \\"}`,
		`{"id": "a", "text": "\ud800\udc00 \udc00 \ud800x"}`,
		"{\"id\": \"a\", \"text\": \"\xed\xa0\x80 \xff \xc3\xa9\"}",
		`{"text": "t", "id": "a", "id": "b"}` + "\n" + `{"id": "a", "text": ""}`,
		`{"id": 1e2, "text": "t"}`,
		`{"id": "a b", "text": "t"}`,
	} {
		f.Add([]byte(s), false)
	}
	f.Add([]byte(`{"_id": "MED-1", "title": "T", "text": "b"}`+"\n"+`{"_id": "MED-2", "title": "", "text": "c", "title": "late"}`), true)

	f.Fuzz(func(t *testing.T, data []byte, beir bool) {
		layout := ir.LayoutR2MED
		if beir {
			layout = ir.LayoutBEIR
		}
		k := mustKeys(t, beir)

		// The fast path may decline any line, but a line it accepts must
		// decode exactly as encoding/json decodes it.
		for _, line := range splitLines(data) {
			d, _, ok := fastDoc(line, beir, nil)
			if !ok {
				continue
			}
			want, err := slowDoc(line, k)
			if err != nil {
				t.Fatalf("fast path accepted %q, which encoding/json rejects: %v", line, err)
			}
			if d != want {
				t.Fatalf("fast path decoded %q as %q, encoding/json as %q", line, d, want)
			}
		}

		var docs []ir.Doc
		err := ReadCorpus(bytes.NewReader(data), "corpus.jsonl", layout, func(d ir.Doc) error {
			docs = append(docs, d)
			return nil
		})
		if err != nil {
			checkLineError(t, err, "corpus.jsonl", data)
			return
		}
		seen := make(map[string]bool)
		for _, d := range docs {
			if fileio.CheckID(d.ID) != nil || seen[d.ID] {
				t.Fatalf("accepted bad or repeated id %q", d.ID)
			}
			seen[d.ID] = true
			checkNoReplacement(t, data, d.ID, d.Text)
		}
		if len(docs) > bytes.Count(data, []byte("\n"))+1 {
			t.Fatalf("%d documents from %d lines", len(docs), bytes.Count(data, []byte("\n"))+1)
		}
	})
}

func FuzzReadQueries(f *testing.F) {
	addSeeds(f, func(b []byte) { f.Add(b, false) }, "queries", "corpus")
	f.Add([]byte(`{"id": "0", "text": "q", "doc_id": ["a", "b"], "answer": "x", "body_system": ""}`), false)
	f.Add([]byte(`{"_id": "PLAIN-1", "text": "q", "metadata": {"x": [1, 2.5, null, true]}}`), true)

	f.Fuzz(func(t *testing.T, data []byte, beir bool) {
		layout := ir.LayoutR2MED
		if beir {
			layout = ir.LayoutBEIR
		}
		k := mustKeys(t, beir)
		qs, err := ReadQueries(bytes.NewReader(data), "query.jsonl", layout)
		if err != nil {
			checkLineError(t, err, "query.jsonl", data)
			return
		}
		seen := make(map[string]bool)
		for _, q := range qs {
			if fileio.CheckID(q.ID) != nil || seen[q.ID] {
				t.Fatalf("accepted bad or repeated id %q", q.ID)
			}
			seen[q.ID] = true
			checkNoReplacement(t, data, q.ID, q.Text)
			if q.Extra != nil && len(q.Extra) == 0 {
				t.Fatal("Extra is empty but not nil")
			}
			for key, raw := range q.Extra {
				if key == k.id || key == "text" {
					t.Fatalf("Extra holds %q, which has its own field", key)
				}
				if !json.Valid(raw) {
					t.Fatalf("Extra[%q] = %q is not valid JSON", key, raw)
				}
			}
		}
	})
}

func FuzzReadQrelsJSONL(f *testing.F) {
	addSeeds(f, func(b []byte) { f.Add(b) }, "qrels-jsonl")
	f.Add([]byte(`{"q_id": "0", "p_id": "a", "score": 1}` + "\n" + `{"q_id": 1, "p_id": "b", "score": -2.0e0}`))

	f.Fuzz(func(t *testing.T, data []byte) {
		q, err := ReadQrelsJSONL(bytes.NewReader(data), "qrels.jsonl")
		if err != nil {
			checkLineError(t, err, "qrels.jsonl", data)
			return
		}
		for qid, docs := range q {
			for did := range docs {
				checkNoReplacement(t, data, qid, did)
			}
		}
		// Whatever was accepted must survive being written out and read back.
		var buf bytes.Buffer
		for _, qid := range trec.QueryIDs(q) {
			for _, did := range trec.QueryIDs(q[qid]) {
				line, err := json.Marshal(map[string]any{"q_id": qid, "p_id": did, "score": q[qid][did]})
				if err != nil {
					t.Fatal(err)
				}
				buf.Write(line)
				buf.WriteByte('\n')
			}
		}
		back, err := ReadQrelsJSONL(&buf, "again.jsonl")
		if err != nil {
			t.Fatalf("re-reading what was accepted: %v", err)
		}
		if !reflect.DeepEqual(q, back) {
			t.Fatalf("round trip changed the qrels: %v → %v", q, back)
		}
	})
}

func FuzzReadBEIRQrels(f *testing.F) {
	addSeeds(f, func(b []byte) { f.Add(b) }, "qrels-tsv")
	f.Add([]byte("query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td2\t0\nq2\td1\t-1\n"))

	f.Fuzz(func(t *testing.T, data []byte) {
		q, err := ReadBEIRQrels(bytes.NewReader(data), "test.tsv")
		if err != nil {
			checkLineError(t, err, "test.tsv", data)
			return
		}
		for qid, docs := range q {
			for did := range docs {
				checkNoReplacement(t, data, qid, did)
			}
		}
		var buf bytes.Buffer
		buf.WriteString("query-id\tcorpus-id\tscore\n")
		for _, qid := range trec.QueryIDs(q) {
			for _, did := range trec.QueryIDs(q[qid]) {
				if fileio.CheckID(qid) != nil || fileio.CheckID(did) != nil {
					t.Fatalf("accepted bad id %q or %q", qid, did)
				}
				fmt.Fprintf(&buf, "%s\t%s\t%d\n", qid, did, q[qid][did])
			}
		}
		back, err := ReadBEIRQrels(&buf, "again.tsv")
		if err != nil {
			t.Fatalf("re-reading what was accepted: %v", err)
		}
		if !reflect.DeepEqual(q, back) {
			t.Fatalf("round trip changed the qrels: %v → %v", q, back)
		}
	})
}
