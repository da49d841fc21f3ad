package jsonw

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestAppendStringRoundTrip compares the hand-written encoder with
// encoding/json on decoded values, for tricky strings and every single-byte
// string.
func TestAppendStringRoundTrip(t *testing.T) {
	cases := []string{"", "plain", "\"\\/", "\x00\x01\x1f\x7f", "\u2028\u2029", "日本語", "\xc3\x28", "a\xffb",
		"emoji 🩺", "tab\there\nnew\rline", `<a href="x">&amp;</a>`, "\xed\xa0\x80 surrogate", "end\xe2\x80"}
	for c := 0; c < 256; c++ {
		cases = append(cases, string([]byte{byte(c)}))
	}
	for _, s := range cases {
		enc := AppendString(nil, s)
		var got string
		if err := json.Unmarshal(enc, &got); err != nil {
			t.Fatalf("%q encoded as %s: %v", s, enc, err)
		}
		ref, _ := json.Marshal(s)
		var want string
		json.Unmarshal(ref, &want)
		if got != want {
			t.Errorf("%q round-trips to %q, encoding/json gives %q", s, got, want)
		}
	}
}

func TestAppendStringBytes(t *testing.T) {
	for s, want := range map[string]string{
		"a\xffb":         `"a\ufffdb"`,
		"q\"b\\":         `"q\"b\\"`,
		"\x00\x1f\t\n":   `"\u0000\u001f\t\n"`,
		"x\u2028y\u2029": `"x\u2028y\u2029"`,
		"<&>":            `"<&>"`,
		"é":              `"é"`,
	} {
		if got := string(AppendString(nil, s)); got != want {
			t.Errorf("AppendString(%q) = %s, want %s", s, got, want)
		}
	}
	// It appends: what b held stays in front.
	if got := string(AppendString([]byte("x:"), "y")); got != `x:"y"` {
		t.Errorf("append to prefix = %s", got)
	}
	// No raw control or line separator survives, so a value never breaks
	// its JSON line.
	var all strings.Builder
	for r := rune(0); r < 0x3000; r++ {
		all.WriteRune(r)
	}
	if out := string(AppendString(nil, all.String())); strings.ContainsAny(out, "\n\r\u2028\u2029\x00") {
		t.Error("raw line break or control in output")
	}
}
