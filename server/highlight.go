package server

import (
	"strings"
	"unicode/utf8"

	"github.com/r2med/r2med/analysis"
)

// Segment is a piece of text, marked when its token's index term is one
// of the query's.
type Segment struct {
	Text  string `json:"text"`
	Match bool   `json:"match,omitempty"`
}

// Highlighter finds the words of a text whose index terms (after the
// analyzer: tokenizing, stop words, stemming) are among a query's, so
// "infarction" in a document lights up for "infarcts" in the query, the
// way the retriever matched them.
type Highlighter struct {
	tok  analysis.Tokenizer
	term func(tok string) (string, bool)
	an   analysis.Analyzer
}

// NewHighlighter uses analyzer a. A Chain (every analyzer the project
// registers) is used token by token; any other analyzer is applied to
// each StandardTokenizer token on its own.
func NewHighlighter(a analysis.Analyzer) *Highlighter {
	if c, ok := a.(*analysis.Chain); ok {
		return &Highlighter{tok: c.Tokenizer, term: c.Term, an: a}
	}
	h := &Highlighter{tok: analysis.StandardTokenizer{}, an: a}
	h.term = func(tok string) (string, bool) {
		ts := a.Analyze(nil, tok)
		if len(ts) == 0 {
			return "", false
		}
		return ts[0], true
	}
	return h
}

// Terms is the set of index terms of text.
func (h *Highlighter) Terms(text string) map[string]bool {
	out := map[string]bool{}
	for _, t := range h.an.Analyze(nil, text) {
		out[t] = true
	}
	return out
}

// Segments splits text into plain and matching pieces; joined they are
// text again.
func (h *Highlighter) Segments(text string, terms map[string]bool) []Segment {
	var segs []Segment
	pos := 0
	add := func(s string, m bool) {
		if s == "" {
			return
		}
		if n := len(segs); n > 0 && segs[n-1].Match == m {
			segs[n-1].Text += s
			return
		}
		segs = append(segs, Segment{s, m})
	}
	for _, tok := range h.tok.Tokenize(nil, text) {
		// Tokens are substrings of text in order, so the next
		// occurrence at or after pos is the token itself.
		i := strings.Index(text[pos:], tok)
		if i < 0 {
			continue
		}
		start := pos + i
		t, ok := h.term(tok)
		match := ok && terms[t]
		add(text[pos:start], false)
		add(tok, match)
		pos = start + len(tok)
	}
	add(text[pos:], false)
	return segs
}

// Cut returns the segments covering the first n bytes of their text (cut
// at a character boundary) and whether anything was left out.
func Cut(segs []Segment, n int) ([]Segment, bool) {
	var out []Segment
	for _, s := range segs {
		if len(s.Text) <= n {
			out = append(out, s)
			n -= len(s.Text)
			continue
		}
		cut := n
		for cut > 0 && !utf8.RuneStart(s.Text[cut]) {
			cut--
		}
		if cut > 0 {
			out = append(out, Segment{s.Text[:cut], s.Match})
		}
		return out, true
	}
	return out, false
}
