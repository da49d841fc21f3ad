package errtext

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/r2med/r2med/internal/fileio"
)

func TestQuoteList(t *testing.T) {
	for _, c := range []struct {
		ids   []string
		limit int
		want  string
	}{
		{nil, 5, ""},
		{[]string{"a"}, 5, `"a"`},
		{[]string{"a", `b"c`}, 5, `"a", "b\"c"`},
		{[]string{"1", "2", "3", "4"}, 2, `"1", "2" and 2 more`},
		{[]string{"1", "2"}, 2, `"1", "2"`},
	} {
		if got := QuoteList(c.ids, c.limit); got != c.want {
			t.Errorf("QuoteList(%q, %d) = %s, want %s", c.ids, c.limit, got, c.want)
		}
	}
}

func TestPlural(t *testing.T) {
	if Plural(1, "query is", "queries are") != "query is" || Plural(0, "x", "xs") != "xs" || Plural(2, "x", "xs") != "xs" {
		t.Error("Plural picks the wrong form")
	}
}

func TestJSONKind(t *testing.T) {
	for raw, want := range map[string]string{
		``: "nothing", `"s"`: "a string", `{}`: "an object", `[1]`: "an array",
		`true`: "a boolean", `false`: "a boolean", `null`: "null", `-1`: "a number", `2.5e3`: "a number",
	} {
		if got := JSONKind(json.RawMessage(raw)); got != want {
			t.Errorf("JSONKind(%s) = %q, want %q", raw, got, want)
		}
	}
}

func TestDecodeObject(t *testing.T) {
	m, err := DecodeObject([]byte(`{"id": 3, "text": "x"}`))
	if err != nil || string(m["id"]) != "3" || string(m["text"]) != `"x"` {
		t.Fatalf("DecodeObject = %v, %v", m, err)
	}
	for line, msg := range map[string]string{
		`{"id": 3`:   "malformed JSON at column",
		`["id"]`:     "line holds a JSON array, want one JSON object per line",
		`"text"`:     "line holds a JSON string, want one JSON object per line",
		`null`:       "line holds a JSON null",
		`{"a":1} {}`: "malformed JSON at column",
	} {
		_, err := DecodeObject([]byte(line))
		if err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("DecodeObject(%s) error %v, want %q", line, err, msg)
		}
		if err != nil && strings.Contains(err.Error(), "json: ") {
			t.Errorf("DecodeObject(%s) error keeps the package prefix: %v", line, err)
		}
	}
}

// A pretty-printed file (a JSON array, or objects over several lines, as
// json.dump(indent=…) and jq without -c write) fails on its first line,
// which holds only a bracket; the error says so and how to convert it.
func TestDecodeObjectPrettyPrinted(t *testing.T) {
	for _, line := range []string{"[", "{", "  [  ", "[{", "\t{\r"} {
		_, err := DecodeObject([]byte(line))
		if err == nil || !strings.Contains(err.Error(), "pretty-printed") || !strings.Contains(err.Error(), "jq -c") {
			t.Errorf("DecodeObject(%q) error %v, want it to name a pretty-printed file and jq -c", line, err)
		}
	}
	// A line cut short elsewhere is still a malformed line.
	if _, err := DecodeObject([]byte(`{"id": 3`)); err == nil || strings.Contains(err.Error(), "pretty-printed") {
		t.Errorf("DecodeObject of a cut line: %v, want a malformed line", err)
	}
}

func TestCheckUTF8(t *testing.T) {
	for _, ok := range []string{"", "plain", "日本語 🩺", "\u2028", "a\nb"} {
		if err := CheckUTF8([]byte(ok), "line"); err != nil {
			t.Errorf("CheckUTF8(%q) = %v, want nil", ok, err)
		}
	}
	for _, c := range []struct {
		in           string
		line, offset int
		msg          string
	}{
		{"a\xffb", 1, 1, "invalid UTF-8 (byte 0xff) at byte offset 1 of the line; the file must be UTF-8 text"},
		{"caf\xe9 au lait", 1, 3, "invalid UTF-8 (byte 0xe9) at byte offset 3 of the line"},
		{"日本\xe8\xaa", 1, 6, "(byte 0xe8) at byte offset 6"},           // cut short
		{"\xed\xa0\x80", 1, 0, "(byte 0xed) at byte offset 0"},         // an encoded surrogate
		{"ok\nfine\nx\xc0\xafy", 3, 1, "(byte 0xc0) at byte offset 1"}, // overlong, third line
	} {
		err := CheckUTF8([]byte(c.in), "line")
		var te *TextError
		if !errors.As(err, &te) || te.Line != c.line || te.Offset != c.offset || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("CheckUTF8(%q) = %v (%+v), want line %d offset %d and %q", c.in, err, te, c.line, c.offset, c.msg)
		}
	}
	if err := CheckUTF8([]byte("\x80"), "value"); err == nil || !strings.Contains(err.Error(), "of the value;") {
		t.Errorf("CheckUTF8 names %v, want the value", err)
	}
}

func TestCheckJSONText(t *testing.T) {
	for _, ok := range []string{
		`{"text": "plain"}`, `{"text": "\ud83d\ude00 pair"}`, `{"text": "\uD83D\uDE00"}`, `{"t": "\\ud800 is text"}`,
		`{"t": "\\\\ud800"}`, `{"t": "\u00e9\n"}`, `{"t": "\ud7ff\ue000"}`, `{"t": "\u12"}`, `00000\`, `\`,
	} {
		if err := CheckJSONText([]byte(ok), "line"); err != nil {
			t.Errorf("CheckJSONText(%s) = %v, want nil", ok, err)
		}
	}
	for _, c := range []struct {
		in     string
		offset int
		msg    string
	}{
		{`{"text": "x\ud800"}`, 11, `unpaired UTF-16 surrogate \ud800 (half of a character) at byte offset 11 of the line; write both halves`},
		{`{"text": "\ude00 after"}`, 10, `\ude00`},
		{`{"text": "\ud83d\ud83d\ude00"}`, 10, `\ud83d`},
		{`{"text": "\\\ud800"}`, 12, `\ud800`},
		{`{"text": "\ud83d\u0041"}`, 10, `\ud83d`},
		{`{"text": "end\ud83d"}`, 13, `\ud83d`},
		{"{\"text\": \"\xff\\ud800\"}", 10, "invalid UTF-8 (byte 0xff)"},
	} {
		err := CheckJSONText([]byte(c.in), "line")
		var te *TextError
		if !errors.As(err, &te) || te.Offset != c.offset || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("CheckJSONText(%s) = %v, want offset %d and %q", c.in, err, c.offset, c.msg)
		}
	}
}

// FuzzCheckJSONText holds CheckJSONText to encoding/json: a valid JSON
// text passes exactly when decoding it makes no U+FFFD the input did not
// write itself.
func FuzzCheckJSONText(f *testing.F) {
	for _, s := range []string{`{"a": "x"}`, `["\ud83d\ude00", "\ud800"]`, "\"\xff\"", `"\\ud800"`, `"\\\ud800"`, `"\udc00\ud800"`, `"\uFFFD"`, "\"\xef\xbf\xbd\"", `{"\ud800": 1}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		err := CheckJSONText(b, "line")
		if err != nil {
			var te *TextError
			if !errors.As(err, &te) || te.Line < 1 || te.Offset < 0 || te.Offset >= len(b) {
				t.Fatalf("CheckJSONText(%q) = %v: not a located TextError", b, err)
			}
		}
		if !json.Valid(b) {
			return
		}
		// Tokens, not a decoded map: a map would merge repeated keys.
		decoded := 0
		dec := json.NewDecoder(bytes.NewReader(b))
		for {
			tok, err := dec.Token()
			if err != nil {
				break
			}
			if str, ok := tok.(string); ok {
				decoded += strings.Count(str, "\uFFFD")
			}
		}
		replaced := decoded > writtenReplacements(b)
		if (err != nil) != replaced {
			t.Fatalf("CheckJSONText(%q) = %v, but encoding/json replaced characters: %v", b, err, replaced)
		}
	})
}

// writtenReplacements counts the U+FFFD a JSON text writes itself, raw or
// as the escape \ufffd (after an even run of backslashes).
func writtenReplacements(b []byte) int {
	n := bytes.Count(b, []byte("\uFFFD"))
	for i := 0; i+6 <= len(b); i++ {
		if b[i] != '\\' {
			continue
		}
		if strings.EqualFold(string(b[i:i+6]), `\ufffd`) {
			n++
		}
		i++ // skip the escaped character
	}
	return n
}

// CheckFile and CheckJSONFile name the file and line, and the error is
// both a *fileio.LineError and a *TextError.
func TestCheckFileNamesFileAndLine(t *testing.T) {
	if err := CheckFile("ok.tmpl", []byte("héllo\n")); err != nil {
		t.Fatal(err)
	}
	err := CheckFile("t.tmpl", []byte("one\ntw\x80o\n"))
	var le *fileio.LineError
	var te *TextError
	if err == nil || err.Error() != "t.tmpl:2: invalid UTF-8 (byte 0x80) at byte offset 2 of the line; "+utf8Fix ||
		!errors.As(err, &le) || le.Line != 2 || !errors.As(err, &te) || te.Offset != 2 {
		t.Errorf("err = %v", err)
	}
	err = CheckJSONFile("m.json", []byte("{\n \"a\": \"\\ud800\"\n}"))
	if err == nil || !strings.HasPrefix(err.Error(), `m.json:2: unpaired UTF-16 surrogate \ud800 (half of a character) at byte offset 7 of the line`) {
		t.Errorf("err = %v", err)
	}
	if CheckJSONFile("m.json", []byte(`{"a": "\ud83d\ude00"}`)) != nil {
		t.Error("a surrogate pair was refused")
	}
}

func TestCount(t *testing.T) {
	for n, want := range map[int]string{0: "0 systems", 1: "1 system", 2: "2 systems"} {
		if got := Count(n, "system", "systems"); got != want {
			t.Errorf("Count(%d) = %q, want %q", n, got, want)
		}
	}
}
