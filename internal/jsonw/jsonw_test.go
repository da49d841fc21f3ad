package jsonw

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
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

// TestAppendStringIsEncodingJSON: the bytes are encoding/json's without
// HTML escaping (a string value's line, less its newline), for every
// single byte, tricky strings, and random strings mixing plain runs with
// what must be escaped.
func TestAppendStringIsEncodingJSON(t *testing.T) {
	cases := []string{"", "plain", "\"\\/", "\b\f\x00\x01\x1f\x7f", "\u2028\u2029", "日本語", "\xc3\x28", "a\xffb",
		"emoji 🩺", "tab\there\nnew\rline", `<a href="x">&amp;</a>`, "\xed\xa0\x80 surrogate", "end\xe2\x80"}
	for c := range 256 {
		cases = append(cases, string([]byte{byte(c)}), "12345678"+string([]byte{byte(c)})+"abcdefgh")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	specials := []string{"\"", "\\", "\n", "\b", "\x00", "\x1f", "\x7f", "é", "\u2028", "\xff", "\xe2\x80", "😀", "<>&"}
	for range 3000 {
		var sb strings.Builder
		for n := rng.IntN(200); sb.Len() < n; {
			if rng.IntN(4) == 0 {
				sb.WriteString(specials[rng.IntN(len(specials))])
			} else {
				sb.WriteString(strings.Repeat("x", rng.IntN(20)))
			}
		}
		cases = append(cases, sb.String())
	}
	for _, s := range cases {
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
		if got := AppendString(nil, s); string(got) != strings.TrimSuffix(want.String(), "\n") {
			t.Fatalf("AppendString(%q) = %s, encoding/json %s", s, got, want.String())
		}
	}
}

// TestPlain8: the 8-bytes-at-once test says plain exactly when each byte
// is printable ASCII other than '"' and '\\': every byte value at every
// place among plain bytes, and random words.
func TestPlain8(t *testing.T) {
	plain := func(s string) bool {
		for i := range len(s) {
			if c := s[i]; c < 0x20 || c >= 0x80 || c == '"' || c == '\\' {
				return false
			}
		}
		return true
	}
	for pos := range 8 {
		for c := range 256 {
			for _, fill := range []byte{'a', ' ', '~', 0x7f, '!', '#', '[', ']'} {
				b := bytes.Repeat([]byte{fill}, 8)
				b[pos] = byte(c)
				if got, want := plain8(string(b)), plain(string(b)); got != want {
					t.Fatalf("plain8(%q) = %v, want %v", b, got, want)
				}
			}
		}
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 100000 {
		b := make([]byte, 8)
		for i := range b {
			b[i] = byte(rng.IntN(256))
		}
		if got, want := plain8(string(b)), plain(string(b)); got != want {
			t.Fatalf("plain8(%q) = %v, want %v", b, got, want)
		}
	}
}
