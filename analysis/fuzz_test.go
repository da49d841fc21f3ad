package analysis

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
	"unsafe"
)

var fuzzSeeds = []string{
	"The patient's HbA1c was 9.8% (ref <5.7%); she's on insulin q.h.s.",
	"e.g., j.smith@mayo.edu https://www.ncbi.nlm.nih.gov x86_64 1,234.5",
	"צה\"ל ג'1 a.א' カタ_カナ 日本語のテキスト 한국어 การแพทย์",
	"👩‍⚕️ 👍🏽 🇺🇸🇬 1️⃣ #️⃣ ❤\ufe0e ©® 🏴\U000E0067\U000E0062\U000E007F",
	"\u0301a\u200db soft\u00adhyphen \xff\xfe invalid",
	strings.Repeat("ab.", 120),
	strings.Repeat("𝐀", 140) + strings.Repeat("ก", 300),
}

// FuzzStandardTokenizer checks what must hold for any input: tokens are
// non-empty, in order, non-overlapping substrings of the input, at most
// MaxTokenLength UTF-16 units, valid UTF-8; a token tokenizes to itself
// (acceptance never depends on what follows a match); the output agrees
// with the grammar transcribed as regular expressions; and the English
// analyzer, memo and all, yields what its filters give token by token, all
// lowercase. (Stop words can come out: "thes" stems to "the" after the
// stop filter has run, as in Lucene.)
func FuzzStandardTokenizer(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	compileGrammar()
	english := LuceneEnglish()
	plain := &Chain{Tokenizer: StandardTokenizer{}, Filters: english.(*Chain).Filters}
	f.Fuzz(func(t *testing.T, text string) {
		toks := StandardTokenizer{}.Tokenize(nil, text)
		base := uintptr(unsafe.Pointer(unsafe.StringData(text)))
		prevEnd := 0
		for _, tok := range toks {
			if tok == "" {
				t.Fatalf("empty token in %q", text)
			}
			off := int(uintptr(unsafe.Pointer(unsafe.StringData(tok))) - base)
			if off < prevEnd || off+len(tok) > len(text) || text[off:off+len(tok)] != tok {
				t.Fatalf("token %q is not a substring after offset %d of %q", tok, prevEnd, text)
			}
			prevEnd = off + len(tok)
			if !utf8.ValidString(tok) {
				t.Fatalf("token %q is not valid UTF-8", tok)
			}
			if u := units(tok); u > MaxTokenLength {
				t.Fatalf("token of %d UTF-16 units", u)
			}
			if again := (StandardTokenizer{}).Tokenize(nil, tok); len(again) != 1 || again[0] != tok {
				t.Fatalf("token %q re-tokenizes to %q", tok, again)
			}
		}
		if want := specTokenize(text); !slices.Equal(toks, want) && !(len(toks) == 0 && len(want) == 0) {
			t.Fatalf("Tokenize(%+q)\n got %+q\nwant %+q (grammar spec)", text, toks, want)
		}
		terms := english.Analyze(nil, text)
		if want := plain.Analyze(nil, text); !slices.Equal(terms, want) {
			t.Fatalf("memoized analyzer gives %q, filters give %q", terms, want)
		}
		for _, term := range terms {
			if lower(term) != term {
				t.Fatalf("term %q is not lowercase", term)
			}
		}
	})
}

// FuzzWhitespaceTokenizer: the tokens, joined, are the input less its
// whitespace, and none is over the length limit by more than a surrogate.
func FuzzWhitespaceTokenizer(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Add("a\u00a0b\u2003c\u0085d\u2028e")
	f.Fuzz(func(t *testing.T, text string) {
		var rest strings.Builder
		for i := 0; i < len(text); {
			r, size := utf8.DecodeRuneInString(text[i:])
			if !isJavaWhitespace(r) {
				rest.WriteString(text[i : i+size])
			}
			i += size
		}
		toks := WhitespaceTokenizer{}.Tokenize(nil, text)
		if joined := strings.Join(toks, ""); joined != rest.String() {
			t.Fatalf("tokens %q do not join to the input less whitespace %q", toks, rest.String())
		}
		for _, tok := range toks {
			if tok == "" || units(tok) > MaxTokenLength+1 {
				t.Fatalf("bad token %q", tok)
			}
		}
	})
}
