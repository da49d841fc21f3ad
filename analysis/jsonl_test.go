package analysis

import (
	"bufio"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/r2med/r2med/internal/fileio"
)

func TestAnalyzeJSONL(t *testing.T) {
	in := "\xef\xbb\xbf" + `{"id": "d1", "text": "The patient's HbA1c was 9.8%.", "title": "ignored"}

{"text": "Fevers and chills", "id": 42}
{"id":"q\u00e9","text":""}` + "\r\n" + `{"id": "last", "text": "no newline at the end"}`
	want := `{"id":"d1","tokens":["patient","hba1c","9.8"]}
{"id":42,"tokens":["fever","chill"]}
{"id":"q\u00e9","tokens":[]}
{"id":"last","tokens":["newlin","end"]}
`
	var out strings.Builder
	if err := AnalyzeJSONL(strings.NewReader(in), &out, LuceneEnglish(), "docs.jsonl"); err != nil {
		t.Fatal(err)
	}
	if out.String() != want {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want)
	}
}

// splitAnalyzer splits at '|', so tokens can hold anything, whitespace
// and separators included.
type splitAnalyzer struct{}

func (splitAnalyzer) Analyze(dst []string, text string) []string {
	return append(dst, strings.Split(text, "|")...)
}

func TestAnalyzeJSONLEscapes(t *testing.T) {
	tokens := []string{`"quoted"`, `back\slash`, "ctl\x00\x01\x1f\t\n\r", "sep\u2028\u2029", "ünï", "<&>", "\ufffd escaped"}
	in, _ := json.Marshal(map[string]string{"id": "x", "text": strings.Join(tokens, "|")})
	var out strings.Builder
	if err := AnalyzeJSONL(strings.NewReader(string(in)), &out, splitAnalyzer{}, "in"); err != nil {
		t.Fatal(err)
	}
	var rec struct {
		ID     string
		Tokens []string
	}
	if err := json.Unmarshal([]byte(out.String()), &rec); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out.String())
	}
	for i := range tokens {
		if i >= len(rec.Tokens) || rec.Tokens[i] != tokens[i] {
			t.Fatalf("round trip: got %q, want %q", rec.Tokens, tokens)
		}
	}
	line, ok := strings.CutSuffix(out.String(), "\n")
	if !ok || strings.ContainsAny(line, "\u2028\u2029\x00\x01\x1f\t\n\r") {
		t.Errorf("not one line free of raw controls and separators: %q", out.String())
	}
	if !strings.Contains(out.String(), `<&>`) {
		t.Errorf("escaping: %s", out.String())
	}
}

func TestAnalyzeJSONLErrors(t *testing.T) {
	good := `{"id":"ok","text":"fine"}` + "\n"
	tests := []struct {
		bad, msg string
	}{
		{`{"id":"a","text":"unterminated}`, "malformed JSON"},
		{`["id","text"]`, "malformed JSON"},
		{`{"text":"no id"}`, `missing "id"`},
		{`{"id":null,"text":"null id"}`, `missing "id"`},
		{`{"id":{"x":1},"text":"object id"}`, `"id" is neither a string nor a number`},
		{`{"id":"a"}`, `missing "text"`},
		{`{"id":"a","text":null}`, `missing "text"`},
		{`{"id":"a","text":7}`, `"text" is not a string`},
		// Not silently U+FFFD: the byte offset and what to do.
		{"{\"id\":\"a\",\"text\":\"caf\xe9\"}", "invalid UTF-8 (byte 0xe9) at byte offset 21 of the line; the file must be UTF-8 text"},
		{"{\"id\":\"\xff\",\"text\":\"\"}", "invalid UTF-8 (byte 0xff) at byte offset 7 of the line"},
		{`{"id":"a","text":"\ud83d"}`, `unpaired UTF-16 surrogate \ud83d (half of a character) at byte offset 18 of the line; write both halves`},
		// The project's line rule (fileio.Lines) and id rule (fileio.CheckID).
		{"\xef\xbb\xbf" + good[:len(good)-1], "line starts with a byte-order mark (U+FEFF, bytes EF BB BF), as where files with one were joined"},
		{`{"id":"a b","text":""}`, `"id" "a b" contains whitespace at byte 1; TREC run and qrels files separate fields by whitespace`},
		{`{"id":"a\u00a0b","text":""}`, `"id" "a\u00a0b" contains U+00A0, which Python's str.split() takes for whitespace, at byte 1`},
		{`{"id":"","text":""}`, `"id" is empty`},
	}
	for _, tt := range tests {
		var out strings.Builder
		err := AnalyzeJSONL(strings.NewReader(good+"\n"+tt.bad+"\n"+good), &out, LuceneEnglish(), "queries.jsonl")
		var le *fileio.LineError
		if !errors.As(err, &le) {
			t.Errorf("%s: error %v is not a *fileio.LineError", tt.bad, err)
			continue
		}
		if le.File != "queries.jsonl" || le.Line != 3 || !strings.Contains(le.Msg, tt.msg) {
			t.Errorf("%s: got %q (file %q line %d), want line 3 and %q", tt.bad, err, le.File, le.Line, tt.msg)
		}
	}
}

// TestAnalyzeJSONLLongLines: documents of several megabytes are one line.
func TestAnalyzeJSONLLongLines(t *testing.T) {
	text := strings.Repeat("word ", 1<<20)
	in, _ := json.Marshal(map[string]string{"id": "big", "text": text})
	var out strings.Builder
	if err := AnalyzeJSONL(strings.NewReader(string(in)), &out, LuceneEnglish(), "big.jsonl"); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(strings.NewReader(out.String()))
	sc.Buffer(nil, 1<<26)
	sc.Scan()
	var rec struct{ Tokens []string }
	if err := json.Unmarshal(sc.Bytes(), &rec); err != nil || len(rec.Tokens) != 1<<20 {
		t.Errorf("got %d tokens, err %v", len(rec.Tokens), err)
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestAnalyzeJSONLWriteError(t *testing.T) {
	in := strings.Repeat(`{"id":"a","text":"some words here"}`+"\n", 10000)
	if err := AnalyzeJSONL(strings.NewReader(in), failWriter{}, LuceneEnglish(), "in"); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("got %v, want the writer's error", err)
	}
}
