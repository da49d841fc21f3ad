package analysis

import (
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	porterstemmer "github.com/blevesearch/go-porterstemmer"
)

// Filter rewrites a single term, as a Lucene TokenFilter does for a token.
// Every filter Lucene's English analyzer uses maps one token to at most one
// token, so that is all a Filter can do.
type Filter interface {
	// Filter returns the rewritten term, and keep=false to drop it.
	Filter(term string) (out string, keep bool)
}

// EnglishPossessiveFilter removes a trailing possessive "'s" (with an ASCII,
// right single or fullwidth apostrophe and an s of either case), like
// Lucene's EnglishPossessiveFilter. It runs before lowercasing, hence the S.
type EnglishPossessiveFilter struct{}

// Filter implements Filter.
func (EnglishPossessiveFilter) Filter(term string) (string, bool) {
	n := len(term)
	if n < 2 || term[n-1] != 's' && term[n-1] != 'S' {
		return term, true
	}
	rest := term[:n-1]
	for _, q := range [...]string{"'", "\u2019", "\uFF07"} {
		if strings.HasSuffix(rest, q) {
			return rest[:len(rest)-len(q)], true
		}
	}
	return term, true
}

// LowerCaseFilter lowercases each code point with the simple (one-to-one)
// Unicode mapping, which is what Java's Character.toLowerCase and so Lucene's
// LowerCaseFilter use: 'İ' becomes plain 'i' and a final 'Σ' becomes 'σ',
// never 'ς'. Terms without uppercase are returned as they are, unallocated.
type LowerCaseFilter struct{}

// Filter implements Filter.
func (LowerCaseFilter) Filter(term string) (string, bool) {
	return lower(term), true
}

func lower(s string) string {
	i := 0
	for ; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf {
			break
		}
		if 'A' <= c && c <= 'Z' {
			b := make([]byte, len(s))
			copy(b, s)
			for k := i; k < len(b); k++ {
				if c := b[k]; 'A' <= c && c <= 'Z' {
					b[k] = c + 'a' - 'A'
				} else if c >= utf8.RuneSelf {
					return lowerUnicode(string(b))
				}
			}
			return string(b)
		}
	}
	if i == len(s) {
		return s
	}
	return lowerUnicode(s)
}

func lowerUnicode(s string) string {
	for i, r := range s {
		if l := unicode.ToLower(r); l != r {
			var b strings.Builder
			b.Grow(len(s) + 4)
			b.WriteString(s[:i])
			for _, r := range s[i:] {
				b.WriteRune(unicode.ToLower(r))
			}
			return b.String()
		}
	}
	return s
}

// StopFilter drops the terms of a fixed set, compared exactly (so it belongs
// after LowerCaseFilter).
type StopFilter struct {
	words map[string]struct{}
}

// NewStopFilter returns a StopFilter for words.
func NewStopFilter(words []string) *StopFilter {
	f := &StopFilter{words: make(map[string]struct{}, len(words))}
	for _, w := range words {
		f.words[w] = struct{}{}
	}
	return f
}

// Filter implements Filter.
func (f *StopFilter) Filter(term string) (string, bool) {
	_, stop := f.words[term]
	return term, !stop
}

// englishStopWords is Lucene's EnglishAnalyzer.ENGLISH_STOP_WORDS_SET.
var englishStopWords = []string{
	"a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in",
	"into", "is", "it", "no", "not", "of", "on", "or", "such", "that", "the",
	"their", "then", "there", "these", "they", "this", "to", "was", "will", "with",
}

// EnglishStopWords returns Lucene's 33 English stop words.
func EnglishStopWords() []string {
	return append([]string(nil), englishStopWords...)
}

// PorterStemFilter applies the Porter stemming algorithm as Lucene's
// PorterStemFilter does. It expects lowercase input.
//
// Lucene's stemmer works on UTF-16 code units: it leaves terms of at most two
// units alone, and a character outside the Basic Multilingual Plane counts as
// two (consonant) units. Mapping such characters to their surrogate halves
// before stemming makes go-porterstemmer, which works on runes, see the same
// sequence, so lengths, measures and double consonants agree.
type PorterStemFilter struct{}

// Filter implements Filter.
func (PorterStemFilter) Filter(term string) (string, bool) {
	return stem(term), true
}

func stem(s string) string {
	// A UTF-8 string is never shorter in bytes than in UTF-16 units, so this
	// catches every term Lucene would leave alone, and more cheaply.
	if len(s) <= 2 {
		return s
	}
	// go-porterstemmer matches a suffix only when something precedes it;
	// Lucene also matches a suffix that is the whole word. That matters in
	// step 1 alone (later rules need a non-empty stem anyway), for exactly
	// these words, as TestPorterMatchesLuceneAlgorithm and the comparison
	// with real Lucene confirm.
	switch s {
	case "sses":
		return "ss"
	case "ies":
		return "i"
	case "eed", "eeds":
		return "eed"
	}
	var buf [64]rune
	units := buf[:0]
	for _, r := range s {
		if r >= 0x10000 {
			r1, r2 := utf16.EncodeRune(r)
			units = append(units, r1, r2)
		} else {
			units = append(units, r)
		}
	}
	if len(units) <= 2 {
		return s
	}
	n := len(units)
	out := porterstemmer.StemWithoutLowerCasing(units)
	if len(out) == n && sameRunes(out, s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for k := 0; k < len(out); k++ {
		r := out[k]
		if utf16.IsSurrogate(r) && k+1 < len(out) {
			if d := utf16.DecodeRune(r, out[k+1]); d != utf8.RuneError {
				r = d
				k++
			}
		}
		b.WriteRune(r)
	}
	return b.String()
}

// sameRunes reports whether the UTF-16 units u spell s.
func sameRunes(u []rune, s string) bool {
	k := 0
	for _, r := range s {
		if r >= 0x10000 {
			r1, r2 := utf16.EncodeRune(r)
			if u[k] != r1 || u[k+1] != r2 {
				return false
			}
			k += 2
			continue
		}
		if u[k] != r {
			return false
		}
		k++
	}
	return true
}
