package searchapi

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/r2med/r2med/highlight"
)

// encodingJSON is what the answers were written with before encode.go:
// a json.Encoder without HTML escaping.
func encodingJSON(r *Result) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	err := enc.Encode(r)
	return buf.Bytes(), err
}

func sameAsEncodingJSON(t *testing.T, r *Result) {
	t.Helper()
	want, werr := encodingJSON(r)
	got, gerr := appendResult(nil, r)
	if (werr != nil) != (gerr != nil) {
		t.Fatalf("%+v: error %v, encoding/json's %v", r, gerr, werr)
	}
	if werr != nil {
		if gerr.Error() != werr.Error() {
			t.Fatalf("error %q, encoding/json's %q", gerr, werr)
		}
		return
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%+v:\ngot  %s\nwant %s", r, got, want)
	}
}

// trickyStrings are what a JSON string encoder must get right: quotes,
// backslashes, every control character, DEL, HTML's characters (left as
// they are), the JavaScript line separators, invalid and truncated
// UTF-8, encoded surrogates, non-ASCII letters and symbols.
func trickyStrings() []string {
	ss := []string{"", "plain text", `"quoted"`, `back\slash`, "<b>&amp;</b>", "\u2028\u2029", "a\u2028b",
		"\xff", "\xe2\x80", "ab\xe2", "\xed\xa0\x80", "\xf4\x90\x80\x80", "café 東京 😀 ™", "\x7f", "é\xffé",
		"line\nbreak\r\ttab\b\f", strings.Repeat("x", 300) + "\x00"}
	for c := range 0x20 {
		ss = append(ss, string(rune(c)), "a"+string(rune(c))+"b")
	}
	return ss
}

// trickyFloats cross encoding/json's switch to exponents (1e-6, 1e21),
// and hold scores as the service gives them (float32s widened, then as
// a run file writes them).
func trickyFloats() []float64 {
	return []float64{0, math.Copysign(0, -1), 1, -1, 26.524343, float64(float32(26.524343)), 1e-6, 9.999999e-7,
		-1e-7, 1.5e-9, 1e-10, 1e20, 1e21, 9.99e20, -1e21, 123456789012345678901234, 0.1, 1.0 / 3,
		math.SmallestNonzeroFloat64, math.MaxFloat64, -math.MaxFloat64, float64(math.MaxFloat32), 5e-324, 1e-300, 1e300}
}

// TestAppendResultIsEncodingJSON: the hand-written answer encoder writes
// exactly encoding/json's bytes for every shape a Result takes (ids,
// expansions, snippets and matched terms present, empty or absent; hits
// nil or empty), tricky strings and floats, and thousands of random
// results; NaN and infinite scores fail as encoding/json fails.
func TestAppendResultIsEncodingJSON(t *testing.T) {
	for _, s := range trickyStrings() {
		sameAsEncodingJSON(t, &Result{ID: s, Query: s, System: s, Hits: []Hit{{Rank: 1, ID: s, Score: 1,
			Snippet: []highlight.Segment{{Text: s}, {Text: s, Match: true}}, Matched: []string{s}}},
			Expansion: &Expansion{Method: s, LLM: s, Generation: s, Text: s}})
	}
	for _, f := range trickyFloats() {
		sameAsEncodingJSON(t, &Result{Query: "q", System: "bm25", Hits: []Hit{{Rank: 1, ID: "d", Score: f}}})
	}
	for _, f := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		sameAsEncodingJSON(t, &Result{Query: "q", Hits: []Hit{{Rank: 1, ID: "d", Score: f}}})
	}
	for _, r := range []*Result{
		{},
		{Query: "q", Hits: []Hit{}},
		{Query: "q", Hits: []Hit{{}}},
		{Query: "q", Hits: []Hit{{Rank: 2, Snippet: []highlight.Segment{}, Matched: []string{}, Truncated: true}}},
		{ID: "1", Query: "q", System: "s", Expansion: &Expansion{Cached: true}},
	} {
		sameAsEncodingJSON(t, r)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	strs, floats := trickyStrings(), trickyFloats()
	str := func() string {
		if rng.IntN(3) == 0 {
			return strs[rng.IntN(len(strs))]
		}
		b := make([]byte, rng.IntN(24))
		for i := range b {
			b[i] = byte(rng.IntN(256))
		}
		return string(b)
	}
	for range 3000 {
		r := &Result{ID: str(), Query: str(), System: str()}
		if rng.IntN(4) > 0 {
			r.Hits = make([]Hit, rng.IntN(5))
		}
		for i := range r.Hits {
			h := &r.Hits[i]
			h.Rank, h.ID, h.Truncated = rng.IntN(2000)-1000, str(), rng.IntN(2) == 0
			if rng.IntN(2) == 0 {
				h.Score = floats[rng.IntN(len(floats))]
			} else {
				h.Score = math.Float64frombits(rng.Uint64())
			}
			if rng.IntN(3) > 0 {
				h.Snippet = make([]highlight.Segment, rng.IntN(4))
				for j := range h.Snippet {
					h.Snippet[j] = highlight.Segment{Text: str(), Match: rng.IntN(2) == 0}
				}
			}
			if rng.IntN(3) > 0 {
				h.Matched = make([]string, rng.IntN(4))
				for j := range h.Matched {
					h.Matched[j] = str()
				}
			}
		}
		if rng.IntN(3) == 0 {
			r.Expansion = &Expansion{Method: str(), LLM: str(), Generation: str(), Text: str(), Cached: rng.IntN(2) == 0}
		}
		sameAsEncodingJSON(t, r)
	}
}

func FuzzAppendResult(f *testing.F) {
	for _, s := range trickyStrings() {
		f.Add(s, s, 1.5, true, false)
	}
	for _, x := range trickyFloats() {
		f.Add("d1", "seg", x, false, true)
	}
	f.Fuzz(func(t *testing.T, id, text string, score float64, match, expand bool) {
		r := &Result{ID: id, Query: text, System: id, Hits: []Hit{{Rank: 1, ID: id, Score: score,
			Snippet: []highlight.Segment{{Text: text, Match: match}}, Truncated: match, Matched: []string{text, id}}}}
		if expand {
			r.Expansion = &Expansion{Method: id, Text: text, Cached: match}
		}
		sameAsEncodingJSON(t, r)
	})
}

// TestAppendResultMixedRuns: long strings mixing plain runs (which the
// string encoder passes 8 bytes at a time) with what must be escaped
// encode as encoding/json's.
func TestAppendResultMixedRuns(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	specials := []string{"\"", "\\", "\n", "\x00", "\x1f", "\x7f", "é", "\u2028", "\xff", "\xe2\x80", "😀"}
	for range 3000 {
		var sb strings.Builder
		for sb.Len() < rng.IntN(200) {
			if rng.IntN(4) == 0 {
				sb.WriteString(specials[rng.IntN(len(specials))])
			} else {
				sb.WriteString(strings.Repeat("x", rng.IntN(20)))
			}
		}
		s := sb.String()
		sameAsEncodingJSON(t, &Result{Query: s, Hits: []Hit{{Rank: 1, ID: s, Snippet: []highlight.Segment{{Text: s}}}}})
	}
}
