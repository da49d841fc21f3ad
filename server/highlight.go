package server

import (
	"github.com/r2med/r2med/analysis"
	"github.com/r2med/r2med/highlight"
)

// The highlighting rule lives in package highlight, shared with the
// search service; these names keep the viewer's code as it was.

// Segment is a piece of text, marked when it matches the query.
type Segment = highlight.Segment

// Highlighter marks the words of a text whose index terms a query shares.
type Highlighter = highlight.Highlighter

// NewHighlighter uses analyzer a (highlight.New).
func NewHighlighter(a analysis.Analyzer) *Highlighter { return highlight.New(a) }

// Cut returns the segments covering the first n bytes of their text
// (highlight.Cut).
func Cut(segs []Segment, n int) ([]Segment, bool) { return highlight.Cut(segs, n) }
