package highlight

import (
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
