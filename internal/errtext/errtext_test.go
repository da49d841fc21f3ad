package errtext

import (
	"encoding/json"
	"strings"
	"testing"
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
