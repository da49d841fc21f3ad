package tokenizer

import (
	"sort"
	"unicode"
	"unicode/utf8"
)

// addedToken is one entry of tokenizer.json's added_tokens.
type addedToken struct {
	content                    string
	id                         int32
	singleWord, lstrip, rstrip bool
}

// matcher finds added tokens the way HF's AddedVocabulary does: an
// Aho-Corasick leftmost-longest scan, matches that break single_word
// skipped, lstrip/rstrip extending a match over neighbouring white space.
// Tokenizers carry a handful of added tokens, so a first-byte filter and a
// longest-first list do the work of the automaton.
type matcher struct {
	toks  []addedToken // longest content first
	first [256]bool
}

func newMatcher(toks []addedToken) *matcher {
	if len(toks) == 0 {
		return nil
	}
	m := &matcher{toks: append([]addedToken(nil), toks...)}
	sort.SliceStable(m.toks, func(i, j int) bool { return len(m.toks[i].content) > len(m.toks[j].content) })
	for _, t := range m.toks {
		m.first[t.content[0]] = true
	}
	return m
}

// piece is a part of the input: text still to tokenize (id < 0) or an
// added token.
type piece struct {
	start, end int
	id         int32
}

// split appends the pieces of s to out. A nil matcher yields s whole.
func (m *matcher) split(s []byte, out []piece) []piece {
	if m == nil {
		return append(out, piece{0, len(s), -1})
	}
	last := 0
	for i := 0; i < len(s); {
		if !m.first[s[i]] {
			i++
			continue
		}
		var tok *addedToken
		for k := range m.toks {
			c := m.toks[k].content
			if len(c) <= len(s)-i && string(s[i:i+len(c)]) == c {
				tok = &m.toks[k]
				break
			}
		}
		if tok == nil {
			i++
			continue
		}
		start, stop := i, i+len(tok.content)
		i = stop
		if tok.singleWord && (start > 0 && endsWithWord(s[:start]) || stop < len(s) && startsWithWord(s[stop:])) {
			continue
		}
		if tok.lstrip {
			start = max(spaceStartAtEnd(s[:start]), last)
		}
		if tok.rstrip {
			stop += spaceLenAtStart(s[stop:])
		}
		if last < start {
			out = append(out, piece{last, start, -1})
		}
		out = append(out, piece{start, stop, tok.id})
		last = stop
		i = stop
	}
	if last < len(s) || len(out) == 0 {
		out = append(out, piece{last, len(s), -1})
	}
	return out
}

// isWordChar is Rust regex's Unicode \w, which HF's single_word check uses:
// Alphabetic, marks, decimal digits, connector punctuation, joiners.
func isWordChar(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsMark(r) || unicode.Is(unicode.Nd, r) || unicode.Is(unicode.Pc, r) ||
		unicode.Is(unicode.Nl, r) || unicode.Is(unicode.Other_Alphabetic, r) || r == 0x200C || r == 0x200D
}

func endsWithWord(s []byte) bool {
	r, _ := utf8.DecodeLastRune(s)
	return isWordChar(r)
}

func startsWithWord(s []byte) bool {
	r, _ := utf8.DecodeRune(s)
	return isWordChar(r)
}

func spaceStartAtEnd(s []byte) int {
	for len(s) > 0 {
		r, size := utf8.DecodeLastRune(s)
		if class(r)&clsSpace == 0 {
			break
		}
		s = s[:len(s)-size]
	}
	return len(s)
}

func spaceLenAtStart(s []byte) int {
	n := 0
	for n < len(s) {
		r, size := utf8.DecodeRune(s[n:])
		if class(r)&clsSpace == 0 {
			break
		}
		n += size
	}
	return n
}
