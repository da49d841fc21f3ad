// Package textwrap wraps prose for terminals: the legends under the
// leaderboard's and compare's tables.
package textwrap

import (
	"strings"
	"unicode/utf8"
)

// Lines word-wraps s at width runes (0: no wrapping), continuation lines
// indented by two spaces; a word longer than the width stands alone on
// its line.
func Lines(s string, width int) []string {
	if width <= 0 || utf8.RuneCountInString(s) <= width {
		return []string{s}
	}
	var lines []string
	cur, n := "", 0
	for _, word := range strings.Fields(s) {
		wl := utf8.RuneCountInString(word)
		switch {
		case n == 0:
			cur, n = word, wl
		case n+1+wl > width:
			lines = append(lines, cur)
			cur, n = "  "+word, 2+wl
		default:
			cur, n = cur+" "+word, n+1+wl
		}
	}
	return append(lines, cur)
}
