package highlight

import (
	"slices"
	"strings"
	"testing"

	"github.com/r2med/r2med/analysis"
)

func join(segs []Segment) (text string, marked []string) {
	var b strings.Builder
	for _, s := range segs {
		b.WriteString(s.Text)
		if s.Match {
			marked = append(marked, s.Text)
		}
	}
	return b.String(), marked
}

func TestSegments(t *testing.T) {
	h := New(analysis.LuceneEnglish())
	text := "Patients with infarcts; the INFARCTION's cause is unknown — café."
	terms := h.Terms("infarction and the cafe in patients")
	segs := h.Segments(text, terms)
	got, marked := join(segs)
	if got != text {
		t.Fatalf("segments join to %q", got)
	}
	// "the" is a stop word: never a term, so never marked; "café" is not
	// "cafe" to Lucene's English analyzer (no accent folding).
	if m := strings.Join(marked, "|"); m != "Patients|infarcts|INFARCTION's" {
		t.Errorf("marked %q", m)
	}
	for i := 1; i < len(segs); i++ {
		if segs[i].Match == segs[i-1].Match && !segs[i].Match {
			t.Errorf("plain pieces %d and %d not merged", i-1, i)
		}
	}
	cut, more := Cut(segs, 12)
	if !more || len(cut) != 2 || cut[0].Text != "Patients" || cut[1].Text != " wit" {
		t.Errorf("cut %+v %v", cut, more)
	}
	cut, more = Cut([]Segment{{Text: "aé"}}, 2) // inside é: cut before it
	if !more || len(cut) != 1 || cut[0].Text != "a" {
		t.Errorf("cut %+v", cut)
	}
}

// TestSnippet: Snippet is Segments cut to n bytes, and lists the query's
// terms found anywhere in the text, each once, in order of first
// occurrence; a word cut by the limit is judged whole.
func TestSnippet(t *testing.T) {
	h := New(analysis.LuceneEnglish())
	text := "Fever first. Then a long stretch of nothing relevant at all here, and finally a rash with more fever."
	terms := h.Terms("rash and fevers")
	for _, n := range []int{0, 3, 5, 13, 40, len(text), len(text) + 10} {
		segs, matched, cut := h.Snippet(text, terms, n)
		want, wantCut := Cut(h.Segments(text, terms), n)
		got, _ := join(segs)
		w, _ := join(want)
		if got != w || cut != wantCut || len(segs) != len(want) {
			t.Errorf("n=%d: %q %v, want %q %v", n, got, cut, w, wantCut)
		}
		for i := range segs {
			if segs[i] != want[i] {
				t.Errorf("n=%d: piece %d %+v, want %+v", n, i, segs[i], want[i])
			}
		}
		if strings.Join(matched, ",") != "fever,rash" {
			t.Errorf("n=%d: matched %v", n, matched)
		}
	}
	// "Fev", the first 3 bytes of "Fever", keeps the whole word's mark.
	segs, _, _ := h.Snippet(text, terms, 3)
	if len(segs) != 1 || segs[0].Text != "Fev" || !segs[0].Match {
		t.Errorf("the start of a matching word keeps its mark: %+v", segs)
	}
	if _, matched, _ := h.Snippet("nothing here", terms, 50); matched != nil {
		t.Errorf("matched %v", matched)
	}
}

// TestOtherAnalyzer: an analyzer that is not a Chain is applied token by
// token.
func TestOtherAnalyzer(t *testing.T) {
	h := New(upper{})
	segs := h.Segments("a Bc d", map[string]bool{"BC": true})
	if _, marked := join(segs); strings.Join(marked, ",") != "Bc" {
		t.Errorf("%+v", segs)
	}
}

type upper struct{}

func (upper) Analyze(dst []string, text string) []string {
	for _, f := range strings.Fields(text) {
		dst = append(dst, strings.ToUpper(f))
	}
	return dst
}

// TestHeadMatchesSnippet: the segments Head makes from a text's start,
// and Marked from its stored tokens, are the ones Snippet makes from the
// whole text, for texts of every kind
// the tokenizer treats specially (numbers with separators, apostrophes,
// emoji, CJK, combining marks, long runs without spaces), at every cut
// and with every amount read past it.
func TestHeadMatchesSnippet(t *testing.T) {
	h := New(analysis.LuceneEnglish())
	words := []string{"infarction", "patients'", "3.5", "1,000", "mg/dL", "café", "e\u0301te\u0301", "👩‍⚕️", "🇫🇷", "日本語", "don't", "U.S.A.", "x-ray", "(IL-6)", "and", "\t", "\n", "\r\n", "—", "thrombo" + strings.Repeat("x", 300) + "sis"}
	terms := h.Terms("infarction patients cafe x-ray il 6 1,000 dL usa don't")
	rng := uint64(7)
	next := func(n int) int {
		rng = rng*6364136223846793005 + 1442695040888963407
		return int(rng>>33) % n
	}
	for range 300 {
		var b strings.Builder
		for range 1 + next(60) {
			b.WriteString(words[next(len(words))])
			if next(4) > 0 {
				b.WriteString(" ")
			}
		}
		text := b.String()
		for _, n := range []int{1, 7, 40, 120, 300, len(text)} {
			want, _, wantCut := h.Snippet(text, terms, n)
			for _, extra := range []int{0, 1, 9, 64, 256, len(text)} {
				head := text[:min(len(text), n+extra)]
				got, cut, ok := h.Head(head, len(head) == len(text), terms, n)
				if !ok {
					if len(head) == len(text) {
						t.Fatalf("Head refused the whole text %q", text)
					}
					continue // not enough read: the caller reads more
				}
				if !slices.Equal(got, want) || cut != wantCut {
					t.Fatalf("text %q, n %d, %d bytes read:\nHead    %+v %v\nSnippet %+v %v", text, n, len(head), got, cut, want, wantCut)
				}
				// What an index stores of the text's start (Tokens) marks
				// the same segments without analysis.
				if ok && len(head) > n || len(head) == len(text) {
					var spans []Span
					for _, tk := range h.Tokens(head) {
						spans = append(spans, Span{tk.Start, tk.End, tk.Keep && terms[tk.Term]})
					}
					if got, cut := Marked(head, len(text), spans, n); !slices.Equal(got, want) || cut != wantCut {
						t.Fatalf("text %q, n %d, %d bytes read:\nMarked  %+v %v\nSnippet %+v %v", text, n, len(head), got, cut, want, wantCut)
					}
				}
			}
		}
	}
}
