package dataset

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/r2med/r2med/ir"
)

func readDocs(t *testing.T, input string, layout ir.Layout) ([]ir.Doc, error) {
	t.Helper()
	var docs []ir.Doc
	err := ReadCorpus(strings.NewReader(input), "c.jsonl", layout, func(d ir.Doc) error {
		docs = append(docs, d)
		return nil
	})
	return docs, err
}

func TestReadCorpusValues(t *testing.T) {
	for _, c := range []struct {
		name, line string
		layout     ir.Layout
		want       ir.Doc
	}{
		{"plain", `{"id": "a/b_1.txt", "text": "hello"}`, ir.LayoutR2MED, ir.Doc{ID: "a/b_1.txt", Text: "hello"}},
		{"compact, text first", `{"text":"hi","id":"x"}`, ir.LayoutR2MED, ir.Doc{ID: "x", Text: "hi"}},
		{"empty text is data", `{"id": "x", "text": ""}`, ir.LayoutR2MED, ir.Doc{ID: "x", Text: ""}},
		{"escapes", `{"id": "x", "text": "a\nb\t\"q\" \\ \/ \b\f\r"}`, ir.LayoutR2MED, ir.Doc{ID: "x", Text: "a\nb\t\"q\" \\ / \b\f\r"}},
		{"unicode escapes", `{"id": "x", "text": "caf\u00e9 \u00E9 \ud83d\ude00"}`, ir.LayoutR2MED, ir.Doc{ID: "x", Text: "café é 😀"}},
		{"raw UTF-8", "{\"id\": \"x\", \"text\": \"168\u00a0cm, Einhornhöhle, 😀\"}", ir.LayoutR2MED, ir.Doc{ID: "x", Text: "168\u00a0cm, Einhornhöhle, 😀"}},
		// Bad bytes and lone surrogates are errors, not U+FFFD (see
		// testdata/malformed); an escaped U+FFFD is data like any other.
		{"escaped U+FFFD", `{"id": "x", "text": "a\ufffdb"}`, ir.LayoutR2MED, ir.Doc{ID: "x", Text: "a\ufffdb"}},
		{"numeric id", `{"id": 12, "text": "t"}`, ir.LayoutR2MED, ir.Doc{ID: "12", Text: "t"}},
		{"numeric id literal", `{"id": -1.50e3, "text": "t"}`, ir.LayoutR2MED, ir.Doc{ID: "-1.50e3", Text: "t"}},
		{"repeated key, last wins", `{"id": "x", "text": "old", "text": "new"}`, ir.LayoutR2MED, ir.Doc{ID: "x", Text: "new"}},
		{"other fields ignored", `{"id": "x", "text": "t", "title": "ignored in R2MED", "n": [1, {"a": null}]}`, ir.LayoutR2MED, ir.Doc{ID: "x", Text: "t"}},
		{"outer whitespace", " \t{ \"id\" : \"x\" , \"text\" : \"t\" } \t", ir.LayoutR2MED, ir.Doc{ID: "x", Text: "t"}},
		{"BEIR title joined", `{"_id": "MED-1", "title": "Title", "text": "body"}`, ir.LayoutBEIR, ir.Doc{ID: "MED-1", Text: "Title body"}},
		{"BEIR empty title", `{"_id": "MED-1", "title": "", "text": "body"}`, ir.LayoutBEIR, ir.Doc{ID: "MED-1", Text: "body"}},
		{"BEIR title, empty text", `{"_id": "MED-1", "title": "T", "text": ""}`, ir.LayoutBEIR, ir.Doc{ID: "MED-1", Text: "T "}},
		{"BEIR null title", `{"_id": "MED-1", "title": null, "text": "body"}`, ir.LayoutBEIR, ir.Doc{ID: "MED-1", Text: "body"}},
		{"BEIR metadata", `{"_id": "MED-1", "title": "T", "text": "b", "metadata": {}}`, ir.LayoutBEIR, ir.Doc{ID: "MED-1", Text: "T b"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			docs, err := readDocs(t, c.line+"\n", c.layout)
			if err != nil {
				t.Fatal(err)
			}
			if len(docs) != 1 || docs[0] != c.want {
				t.Errorf("got %q, want %q", docs, c.want)
			}
		})
	}
}

// The fast path must take the shapes real corpora have, or loading silently
// falls back to the slow decoder and loses its speed.
func TestFastDocTakesCommonShapes(t *testing.T) {
	for _, c := range []struct {
		line string
		beir bool
	}{
		{`{"id": "neanderthals_vitamin_C_diet/Neanderthal_0_43.txt", "text": " pelvises;\nBased on 45 Neanderthal\u00a0long bones"}`, false},
		{`{"id": "1", "text": "raw UTF-8 é and escaped \u00e9 and \ud83d\ude00"}`, false},
		{`{"_id": "MED-10", "title": "", "text": "statin breast cancer"}`, true},
		{`{"_id": "MED-10", "title": "A \"title\"", "text": "text"}`, true},
		{`{"text": "t", "_id": "x"}`, true},
	} {
		d, _, ok := fastDoc([]byte(c.line), c.beir, nil)
		if !ok {
			t.Errorf("fast path declined %s", c.line)
			continue
		}
		want, err := slowDoc([]byte(c.line), mustKeys(t, c.beir))
		if err != nil || d != want {
			t.Errorf("fast path gave %q, slow path %q (%v)", d, want, err)
		}
	}
}

func mustKeys(t testing.TB, beir bool) keys {
	layout := ir.LayoutR2MED
	if beir {
		layout = ir.LayoutBEIR
	}
	k, err := layoutKeys(layout)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestReadCorpusLines(t *testing.T) {
	// BOM, CRLF, blank and whitespace-only lines, no final newline.
	input := "\xef\xbb\xbf{\"id\": \"a\", \"text\": \"1\"}\r\n\r\n   \n{\"id\": \"b\", \"text\": \"2\"}\r\n{\"id\": \"c\", \"text\": \"3\"}"
	docs, err := readDocs(t, input, ir.LayoutR2MED)
	if err != nil {
		t.Fatal(err)
	}
	want := []ir.Doc{{ID: "a", Text: "1"}, {ID: "b", Text: "2"}, {ID: "c", Text: "3"}}
	if !reflect.DeepEqual(docs, want) {
		t.Errorf("got %q, want %q", docs, want)
	}
	// Line numbers count the skipped lines.
	_, err = readDocs(t, input+"\n\n{\"id\": \"a\", \"text\": \"dup\"}\n", ir.LayoutR2MED)
	if want := `c.jsonl:7: document id "a" already appeared on line 1; ids must be unique, remove or rename one of the two`; err == nil || err.Error() != want {
		t.Errorf("error %v, want %s", err, want)
	}
	if docs, err := readDocs(t, "", ir.LayoutR2MED); err != nil || len(docs) != 0 {
		t.Errorf("empty input: %q, %v", docs, err)
	}
	if err := ReadCorpus(strings.NewReader(""), "c", "trec", nil); err == nil || err.Error() != `unknown layout "trec" (want "r2med" or "beir")` {
		t.Errorf("unknown layout: %v", err)
	}
}

func TestReadCorpusStopsOnCallbackError(t *testing.T) {
	stop := errors.New("enough")
	n := 0
	err := ReadCorpus(strings.NewReader(`{"id": "a", "text": ""}`+"\n"+`{"id": "b", "text": ""}`+"\nnot json\n"), "c", ir.LayoutR2MED, func(ir.Doc) error {
		n++
		return stop
	})
	if err != stop || n != 1 {
		t.Errorf("ReadCorpus returned %v after %d documents, want the callback's error after 1", err, n)
	}
}

func TestReadCorpusLineLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates 128 MiB")
	}
	text := strings.Repeat("x", MaxLineBytes-64)
	line := `{"id": "big", "text": "` + text + `"}` + "\n"
	docs, err := readDocs(t, line, ir.LayoutR2MED)
	if err != nil || len(docs) != 1 || len(docs[0].Text) != len(text) {
		t.Fatalf("a line just under the limit: %v", err)
	}
	over := `{"id": "small", "text": ""}` + "\n" + `{"id": "big", "text": "` + strings.Repeat("x", MaxLineBytes) + `"}` + "\n"
	_, err = readDocs(t, over, ir.LayoutR2MED)
	want := "c.jsonl:2: line is longer than 64 MiB, the most the readers accept; a JSON-lines or TSV file holds one record per line, so check that this is one (a binary file, or one whose line breaks were lost, reads as one long line)"
	if err == nil || err.Error() != want {
		t.Errorf("error %v, want %s", err, want)
	}
}

// A read error ends the read with that error, also mid-line; the partial
// line must not be reported as malformed JSON instead.
func TestReadCorpusReadError(t *testing.T) {
	r := io.MultiReader(strings.NewReader(`{"id": "a", "text": ""}`+"\n"+`{"id": "b", "te`), iotestErr{})
	var docs []ir.Doc
	err := ReadCorpus(r, "c.jsonl", ir.LayoutR2MED, func(d ir.Doc) error { docs = append(docs, d); return nil })
	if want := "c.jsonl:2: read failed: disk on fire"; err == nil || err.Error() != want {
		t.Errorf("error %v, want %s", err, want)
	}
	if len(docs) != 1 {
		t.Errorf("%d documents before the error, want 1", len(docs))
	}
}

type iotestErr struct{}

func (iotestErr) Read([]byte) (int, error) { return 0, errors.New("disk on fire") }

func TestReadQueries(t *testing.T) {
	input := `{"id": "0", "text": "q0", "doc_id": ["a", "b"],  "answer": "x\ny", "body_system": ""}` + "\n" +
		`{"id": 1, "text": ""}` + "\n"
	qs, err := ReadQueries(strings.NewReader(input), "q.jsonl", ir.LayoutR2MED)
	if err != nil {
		t.Fatal(err)
	}
	if len(qs) != 2 || qs[0].ID != "0" || qs[0].Text != "q0" || qs[1].ID != "1" || qs[1].Text != "" || qs[1].Extra != nil {
		t.Fatalf("got %+v", qs)
	}
	// Extra is verbatim: spacing inside values and escapes are kept.
	want := map[string]string{"doc_id": `["a", "b"]`, "answer": `"x\ny"`, "body_system": `""`}
	if len(qs[0].Extra) != len(want) {
		t.Errorf("Extra has %d keys, want %d", len(qs[0].Extra), len(want))
	}
	for k, v := range want {
		if string(qs[0].Extra[k]) != v {
			t.Errorf("Extra[%s] = %s, want %s", k, qs[0].Extra[k], v)
		}
	}
	// BEIR queries use _id; a stray "id" is kept as an extra field.
	qs, err = ReadQueries(strings.NewReader(`{"_id": "PLAIN-2", "id": 5, "text": "t"}`), "q", ir.LayoutBEIR)
	if err != nil || len(qs) != 1 || qs[0].ID != "PLAIN-2" || string(qs[0].Extra["id"]) != "5" {
		t.Errorf("BEIR query: %+v, %v", qs, err)
	}
}

func TestReadQrelsJSONL(t *testing.T) {
	input := `{"q_id": "0", "p_id": "a", "score": 1}` + "\n" +
		`{"q_id": "0", "p_id": "b", "score": 2.0}` + "\n" +
		`{"q_id": 1, "p_id": "a", "score": 0, "note": "ignored"}` + "\n" +
		`{"q_id": "1", "p_id": "c", "score": -1}` + "\n" +
		`{"q_id": "2", "p_id": "c", "score": 3e0}` + "\n"
	q, err := ReadQrelsJSONL(strings.NewReader(input), "qrels.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	want := ir.Qrels{"0": {"a": 1, "b": 2}, "1": {"a": 0, "c": -1}, "2": {"c": 3}}
	if !reflect.DeepEqual(q, want) {
		t.Errorf("got %v, want %v", q, want)
	}
}

func TestReadBEIRQrels(t *testing.T) {
	// Any non-numeric 3-column header is a header; spaces separate as well as
	// tabs; grades may be 0 or negative.
	input := "qid docid rel\n\nq1\td1\t1\nq1 d2 0\nq2\td1\t-1\n"
	q, err := ReadBEIRQrels(strings.NewReader(input), "test.tsv")
	if err != nil {
		t.Fatal(err)
	}
	want := ir.Qrels{"q1": {"d1": 1, "d2": 0}, "q2": {"d1": -1}}
	if !reflect.DeepEqual(q, want) {
		t.Errorf("got %v, want %v", q, want)
	}
	q, err = ReadBEIRQrels(strings.NewReader("query-id\tcorpus-id\tscore\n"), "test.tsv")
	if err != nil || len(q) != 0 {
		t.Errorf("header only: %v, %v", q, err)
	}
}

func BenchmarkFastVsSlowDoc(b *testing.B) {
	line := []byte(`{"id": "neanderthals_vitamin_C_diet/Neanderthal_0_43.txt", "text": "` +
		strings.Repeat(`Based on 45 Neanderthal long bones from 14 men and 7 women, the average height was 164 to 168`+"\u00a0"+`cm.\n`, 8) + `"}`)
	k := mustKeys(b, false)
	b.Run("fast", func(b *testing.B) {
		b.SetBytes(int64(len(line)))
		var scratch []byte
		for b.Loop() {
			var ok bool
			if _, scratch, ok = fastDoc(line, false, scratch); !ok {
				b.Fatal("declined")
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.SetBytes(int64(len(line)))
		for b.Loop() {
			if _, err := slowDoc(line, k); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// cleanRun's word-at-a-time test must find a bad byte in any position of
// an 8-byte group and in the tail.
func TestCleanRun(t *testing.T) {
	ref := func(b []byte) bool {
		for _, c := range b {
			if c < 0x20 {
				return false
			}
		}
		return utf8.Valid(b)
	}
	for n := 0; n <= 19; n++ {
		for p := 0; p < n; p++ {
			for c := 0; c < 256; c++ {
				b := bytes.Repeat([]byte{'a'}, n)
				b[p] = byte(c)
				if got := cleanRun(b); got != ref(b) {
					t.Fatalf("cleanRun(%q) = %v", b, got)
				}
			}
		}
	}
	for _, s := range []string{"ab\u00e9cdefgh", "abcdefg\u00e9", "abcdefgh\u20ac", "\U0001F600abcdefgh", "abcdefg\xe2\x82"} {
		if got := cleanRun([]byte(s)); got != ref([]byte(s)) {
			t.Errorf("cleanRun(%q) = %v", s, got)
		}
	}
}
