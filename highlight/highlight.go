// Package highlight finds the words of a text that a query matched: the
// tokens whose index terms (after the analyzer's tokenizing, stop words
// and stemming) are among the query's, so "infarction" in a document
// lights up for "infarcts" in the query, the way the retriever matched
// them. It is the one highlighting rule of the results viewer (package
// server) and the search service (package searchapi).
package highlight

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

// Highlighter marks the words of texts whose index terms are in a set. It
// is safe for concurrent use.
type Highlighter struct {
	tok  analysis.Tokenizer
	term func(tok string) (string, bool)
	an   analysis.Analyzer
}

// New uses analyzer a. A Chain (every analyzer the project registers) is
// used token by token; any other analyzer is applied to each
// StandardTokenizer token on its own.
func New(a analysis.Analyzer) *Highlighter {
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
	segs, _ := h.scan(text, terms, len(text), false)
	return segs
}

// Snippet is Segments cut to the first n bytes of text (at a character
// boundary), whether anything was cut, and the query's index terms found
// anywhere in text, in the order they first occur. Text is tokenized
// once, and the pieces are slices of it, so a long document costs one
// pass and no copies.
func (h *Highlighter) Snippet(text string, terms map[string]bool, n int) (segs []Segment, matched []string, cut bool) {
	segs, matched = h.scan(text, terms, n, true)
	segs, cut = Cut(segs, n)
	return segs, matched, cut
}

// Head is Snippet's segments for a long text of which only the start is
// read: text is its first bytes, whole says whether that is all of it.
// Words never run across an ASCII space or line break, so the text up to
// the first one at or after byte n tokenizes as the whole text does up to
// there: only that window is analyzed. It returns the segments covering
// the first n bytes, whether the text goes on past them, and false when
// text holds no such break past n and is not whole (read more of it).
// Which of the query's terms the whole text holds, Head does not say
// (the index's postings do: bm25.Index.Holds).
func (h *Highlighter) Head(text string, whole bool, terms map[string]bool, n int) (segs []Segment, cut, ok bool) {
	if !whole {
		if n >= len(text) {
			return nil, false, false
		}
		i := strings.IndexAny(text[n:], " \t\n\r")
		if i < 0 {
			return nil, false, false
		}
		text = text[:n+i]
	}
	segs, _ = h.scan(text, terms, n, false)
	segs, cut = Cut(segs, n)
	return segs, cut || !whole, true
}

// TermList is the index terms of text, each once, in the order they
// first occur.
func (h *Highlighter) TermList(text string) []string {
	var out []string
	seen := map[string]bool{}
	for _, t := range h.an.Analyze(nil, text) {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}

// scan splits text into pieces up to about limit bytes (whole tokens;
// Cut trims them) and, when wantTerms, lists the matched terms of all of
// text.
func (h *Highlighter) scan(text string, terms map[string]bool, limit int, wantTerms bool) ([]Segment, []string) {
	var b pieces
	var matched []string
	var seen map[string]bool
	pos := 0
	for _, tok := range h.tok.Tokenize(nil, text) {
		if pos > limit && !wantTerms {
			break
		}
		// Tokens are substrings of text in order, so the next
		// occurrence at or after pos is the token itself.
		i := strings.Index(text[pos:], tok)
		if i < 0 {
			continue
		}
		start := pos + i
		t, ok := h.term(tok)
		match := ok && terms[t]
		if match && wantTerms && !seen[t] {
			if seen == nil {
				seen = map[string]bool{}
			}
			seen[t] = true
			matched = append(matched, t)
		}
		pos = b.token(start, start+len(tok), match, limit)
	}
	return b.segments(text, limit), matched
}

// pieces builds a text's segments from its tokens, in order: the plain
// text between them, each token marked or not, neighbours of one kind
// joined; tokens past limit are not needed.
type pieces struct {
	ps  []piece
	pos int
}

type piece struct {
	start, end int
	match      bool
}

func (b *pieces) add(start, end int, m bool) {
	if start == end {
		return
	}
	if n := len(b.ps); n > 0 && b.ps[n-1].match == m {
		b.ps[n-1].end = end
		return
	}
	b.ps = append(b.ps, piece{start, end, m})
}

// token adds the text up to a token and the token, unless the pieces
// already reach past limit, and returns where the token ends.
func (b *pieces) token(start, end int, match bool, limit int) int {
	if b.pos <= limit {
		b.add(b.pos, start, false)
		b.add(start, end, match)
	}
	b.pos = end
	return end
}

// segments ends the pieces with the text after the last token (when they
// do not reach past limit) and returns them as slices of text.
func (b *pieces) segments(text string, limit int) []Segment {
	return b.appendSegments(make([]Segment, 0, len(b.ps)+1), text, limit)
}

// appendSegments is segments appended to dst.
func (b *pieces) appendSegments(dst []Segment, text string, limit int) []Segment {
	if b.pos <= limit {
		b.add(b.pos, len(text), false)
	}
	for _, p := range b.ps {
		dst = append(dst, Segment{Text: text[p.start:p.end], Match: p.match})
	}
	return dst
}

// Token is one token of a text: its byte range, and the index term it
// becomes (Keep false when the analyzer drops it).
type Token struct {
	Start, End int
	Term       string
	Keep       bool
}

// Tokens lists text's tokens with their index terms, as Segments sees
// them: what an index stores of a document's start so that a snippet of
// it needs no analysis (Marked).
func (h *Highlighter) Tokens(text string) []Token {
	var out []Token
	pos := 0
	for _, tok := range h.tok.Tokenize(nil, text) {
		i := strings.Index(text[pos:], tok)
		if i < 0 {
			continue
		}
		start := pos + i
		t, ok := h.term(tok)
		out = append(out, Token{Start: start, End: start + len(tok), Term: t, Keep: ok})
		pos = start + len(tok)
	}
	return out
}

// Span is a token's byte range in a text and whether it matches.
type Span struct {
	Start, End int
	Match      bool
}

// Marked is the segments covering the first n bytes of a text, and
// whether the text goes on, made from its tokens' spans without
// analyzing it: with the spans of its Tokens marked by the query's terms,
// exactly what Snippet gives. head is the text's start — more than n
// bytes of it (the cut must see the character at n), or all of it — size
// the whole text's length, and spans its tokens in order, every one
// starting before n lying in head.
func Marked(head string, size int, spans []Span, n int) ([]Segment, bool) {
	mk := Marker{pieces{ps: make([]piece, 0, 16)}}
	return mk.Append(nil, head, size, spans, n)
}

// Marker makes Marked's segments with room it keeps from one text to
// the next, for a caller that marks many. The zero value is ready to
// use; a Marker is not safe for concurrent use.
type Marker struct{ b pieces }

// Append appends Marked(head, size, spans, n)'s segments to dst.
func (mk *Marker) Append(dst []Segment, head string, size int, spans []Span, n int) ([]Segment, bool) {
	b := &mk.b
	b.ps, b.pos = b.ps[:0], 0
	for _, sp := range spans {
		if b.pos > n {
			break
		}
		b.token(sp.Start, sp.End, sp.Match, n)
	}
	start := len(dst)
	dst = b.appendSegments(dst, head, n)
	segs, _ := cutInto(dst[start:start], dst[start:], n)
	return dst[:start+len(segs)], size > n
}

// Cut returns the segments covering the first n bytes of their text (cut
// at a character boundary) and whether anything was left out.
func Cut(segs []Segment, n int) ([]Segment, bool) { return cutInto(nil, segs, n) }

// cutInto is Cut appending to out (segs[:0] cuts in place).
func cutInto(out, segs []Segment, n int) ([]Segment, bool) {
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
