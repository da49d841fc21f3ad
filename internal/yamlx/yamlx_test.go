package yamlx

import (
	"strings"
	"testing"
)

type inner struct {
	Scheme string   `yaml:"scheme"`
	K1     *float64 `yaml:"k1"`
	On     bool     `yaml:"on"`
	N      int      `yaml:"n"`
	List   []string `yaml:"list"`
}

type outer struct {
	Name     string `yaml:"name"`
	Inner    *inner `yaml:"inner"`
	Embedded `yaml:",inline"`
}

type Embedded struct {
	Extra string `yaml:"extra"`
}

func TestDecodeSpeaksYAML(t *testing.T) {
	for _, c := range []struct{ doc, want string }{
		{"name: x\ninner:\n  schem: a", `line 3: unknown key "schem" in inner (did you mean "scheme"?)`},
		{"nmae: x", `line 1: unknown key "nmae" in the file (did you mean "name"?)`},
		{"zzz: 1", `line 1: unknown key "zzz" in the file (known keys: extra, inner, name)`},
		{"inner: {k1: abc}", `line 1: k1 in inner must be a number, not "abc"`},
		{"inner:\n  on: yes please", `line 2: on in inner must be true or false, not "yes please"`},
		{"inner:\n  n: 1.5", `line 2: n in inner must be a whole number, not 1.5`},
		{"inner:\n  list: a", `line 2: list in inner must be a list`},
		{"inner:\n  list: [a, {b: c}]", `line 2: item 2 of list in inner must be text, not a mapping`},
		{"inner: 3", `line 1: inner in the file must be a mapping of settings`},
		{"name: [a]", `line 1: name in the file must be text, not a list`},
	} {
		n, err := Parse([]byte(c.doc))
		if err != nil {
			t.Fatal(err)
		}
		var o outer
		err = Decode(n, &o, "the file")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.doc, err, c.want)
		}
	}
	n, _ := Parse([]byte("name: x\nextra: e\ninner: {scheme: s, k1: 2, on: true, n: 3, list: [a]}"))
	var o outer
	if err := Decode(n, &o, "the file"); err != nil || o.Name != "x" || o.Extra != "e" || *o.Inner.K1 != 2 || !o.Inner.On || o.Inner.N != 3 {
		t.Fatalf("%+v %v", o, err)
	}
	if _, err := Parse([]byte("a: [b")); err == nil || !strings.HasPrefix(err.Error(), "line ") || strings.Contains(err.Error(), "yaml:") {
		t.Errorf("syntax error %v", err)
	}
	if n, err := Parse([]byte("")); n != nil || err != nil {
		t.Errorf("empty document: %v %v", n, err)
	}
}

// TestStrings: a setting of one text or a list of them takes either, and
// is checked like any list.
func TestStrings(t *testing.T) {
	type urls struct {
		URL Strings `yaml:"url"`
	}
	for doc, want := range map[string][]string{"url: http://a": {"http://a"}, "url: [http://a, http://b]": {"http://a", "http://b"}, "url:\n  - x\n  - y": {"x", "y"}} {
		n, _ := Parse([]byte(doc))
		var u urls
		if err := Decode(n, &u, "the file"); err != nil || strings.Join(u.URL, " ") != strings.Join(want, " ") {
			t.Errorf("%q: %q %v", doc, u.URL, err)
		}
	}
	for doc, want := range map[string]string{
		"url: {a: b}":   "line 1: url in the file must be text or a list of texts, not a mapping",
		"url: [a, [b]]": "line 1: item 2 of url in the file must be text, not a list",
	} {
		n, _ := Parse([]byte(doc))
		var u urls
		if err := Decode(n, &u, "the file"); err == nil || err.Error() != want {
			t.Errorf("%q: %v, want %q", doc, err, want)
		}
	}
	if s := Seq([]string{"1", "yes"}); len(s.Content) != 2 || s.Content[0].Tag != "!!str" || s.Content[1].Value != "yes" {
		t.Errorf("Seq: %+v", s)
	}
}

func TestSuggest(t *testing.T) {
	for s, want := range map[string]string{"schem": "scheme", "bm52": "bm25", "retreive": "retrieve", "qqqqq": "", "K1": "k1"} {
		if got := Suggest(s, []string{"scheme", "bm25", "retrieve", "k1"}); got != want {
			t.Errorf("Suggest(%q) = %q, want %q", s, got, want)
		}
	}
}

func TestScalar(t *testing.T) {
	for s, tag := range map[string]string{"1": "!!int", "1.5": "!!float", "true": "!!bool", "x": "!!str", "": "!!str"} {
		if n := Scalar(s); n.Tag != tag || n.Value != s {
			t.Errorf("Scalar(%q) = %s %q", s, n.Tag, n.Value)
		}
	}
	if Text("1").Tag != "!!str" {
		t.Error("Text keeps text")
	}
}
