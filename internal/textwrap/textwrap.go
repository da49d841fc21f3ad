// Package textwrap wraps prose for terminals: the legends under the
// leaderboard's and compare's tables.
package textwrap

import (
	"strings"
	"unicode/utf8"
)

// Lines word-wraps s at width runes (0: no wrapping), keeping its
// indentation, continuation lines indented by two spaces more; a word
// longer than the width stands alone on its line.
func Lines(s string, width int) []string {
	if width <= 0 || utf8.RuneCountInString(s) <= width {
		return []string{s}
	}
	indent := s[:len(s)-len(strings.TrimLeft(s, " "))]
	more := indent + "  "
	var lines []string
	cur, n := indent, len(indent)
	for _, word := range strings.Fields(s) {
		wl := utf8.RuneCountInString(word)
		switch {
		case cur == indent:
			cur, n = cur+word, n+wl
		case n+1+wl > width:
			lines = append(lines, cur)
			cur, n = more+word, len(more)+wl
		default:
			cur, n = cur+" "+word, n+1+wl
		}
	}
	return append(lines, cur)
}

// Name splits a name (a system's: "rrf(bm25,bge) → tei@top10") into
// lines of at most width runes, breaking after spaces, commas, slashes
// and hyphens where it can and inside a word only where it must; the lines
// joined are the name, but for the spaces broken at.
func Name(name string, width int) []string {
	if width <= 0 || utf8.RuneCountInString(name) <= width {
		return []string{name}
	}
	var lines []string
	rest := []rune(name)
	for len(rest) > width {
		cut := -1
		for i := width; i > width/3; i-- {
			if c := rest[i-1]; c == ' ' || c == ',' || c == '/' || c == '-' {
				cut = i
				break
			}
		}
		if cut <= 0 {
			cut = width
		}
		lines = append(lines, strings.TrimRight(string(rest[:cut]), " "))
		rest = rest[cut:]
		for len(rest) > 0 && rest[0] == ' ' {
			rest = rest[1:]
		}
	}
	if len(rest) > 0 {
		lines = append(lines, string(rest))
	}
	return lines
}
