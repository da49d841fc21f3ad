// Package minhash finds texts that are the same or nearly the same: a
// stated normalisation, word shingles under seeded 64-bit hashes, MinHash
// signatures, a banded LSH index, and a Collection that answers "which of
// my texts does this text duplicate?" with exact Jaccard similarities.
//
// # What "the same" means
//
// Texts are compared after Normalize: Unicode NFKC, full case folding,
// apostrophes deleted (don't = dont), and every other run of characters
// that are not letters, marks or digits (space, punctuation, symbols,
// controls) collapsed to one space, trimmed. Two texts match exactly when
// their normalised forms are equal once the spaces are dropped as well, so
// that "COVID-19", "covid 19" and "Covid19" are one text; the Collection
// compares 128-bit hashes of that form (two differently seeded 64-bit
// hashes), so a false exact match needs a 128-bit collision.
//
// Two texts are near-duplicates when the Jaccard similarity of their sets of
// word shingles (runs of Spec.Shingle consecutive normalised words; a text
// shorter than that is one shingle) is at least Spec.Threshold. The
// similarity the Collection reports is that Jaccard computed exactly over
// the two shingle sets (shingles hashed to 64 bits), not the MinHash
// estimate: MinHash and LSH only pick the candidates, so they decide
// recall, never precision. With the default plan a pair at the threshold is
// a candidate with probability ≥ 0.995 (Spec.Recall gives the curve).
//
// The default shingle is one word (the set of words): it survives swapped
// word order and keeps short texts — queries are often five words —
// comparable; longer shingles (3–5) suit long web text, where a bag of
// words is too forgiving.
//
// Every hash is seeded from Spec.Seed, so a run is deterministic: the same
// texts, spec and seed give the same candidates and matches on any machine
// and with any number of workers.
package minhash

import (
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// Normalize returns s in the form texts are compared in: NFKC, case
// folded, apostrophes (' ’ ‘ ʼ) deleted, every other run of characters
// that are not letters, marks or digits collapsed to one space, no
// leading or trailing space.
func Normalize(s string) string { return string(AppendNormalized(nil, s)) }

// folders pools case folders: a cases.Caser keeps state between calls.
var folders = sync.Pool{New: func() any { c := cases.Fold(); return &c }}

// AppendNormalized appends Normalize(s) to dst. ASCII text takes a fast
// path with the same result as the Unicode one.
func AppendNormalized(dst []byte, s string) []byte {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if !ascii {
		return appendNormalizedUnicode(dst, s)
	}
	start := len(dst)
	space := true // at the start, or after a separator already written
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
		case 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		case c == '\'':
			continue // apostrophes join: don't → dont
		default:
			if !space {
				dst = append(dst, ' ')
				space = true
			}
			continue
		}
		dst = append(dst, c)
		space = false
	}
	return trimSpace(dst, start)
}

// appendNormalizedUnicode is AppendNormalized for any text.
func appendNormalizedUnicode(dst []byte, s string) []byte {
	start := len(dst)
	space := true
	// NFKC first so compatibility forms fold as their plain letters, then
	// full case folding, then NFKC again: folding can leave a sequence
	// that is no longer composed (NFKC_Casefold's order).
	c := folders.Get().(*cases.Caser)
	t := norm.NFKC.String(c.String(norm.NFKC.String(s)))
	folders.Put(c)
	for _, r := range t {
		if isApostrophe(r) {
			continue
		}
		if unicode.IsLetter(r) || unicode.IsMark(r) || unicode.IsNumber(r) {
			dst = utf8.AppendRune(dst, r)
			space = false
		} else if !space {
			dst = append(dst, ' ')
			space = true
		}
	}
	return trimSpace(dst, start)
}

// isApostrophe tells the characters deleted rather than made separators,
// so that "don't", "dont" and "Don’t" are one word.
func isApostrophe(r rune) bool {
	return r == '\'' || r == '\u2019' || r == '\u2018' || r == '\u02bc'
}

// trimSpace drops the separator a text ending in one left.
func trimSpace(dst []byte, start int) []byte {
	if len(dst) > start && dst[len(dst)-1] == ' ' {
		dst = dst[:len(dst)-1]
	}
	return dst
}

// Words splits a normalised text into its words.
func Words(normalized string) []string { return strings.Fields(normalized) }
