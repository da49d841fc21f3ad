// Package textwrap wraps prose, names and tables for terminals: the
// legends under the leaderboard's and compare's tables, and the reference
// tables (tasks, models, reproduce --list) fitted to $COLUMNS.
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

// MinColumn is the narrowest Table makes a column it wraps.
const MinColumn = 12

// Layout says how Table may fit a table into a width.
type Layout struct {
	// Wrap lists the columns that may be narrowed, the widest first,
	// down to MinColumn, their cells split onto more lines as Name splits
	// them: nothing is cut, the cells' lines joined are the cells.
	Wrap []int
	// Right lists the columns aligned right (numbers).
	Right []int
	// Below, when set, is a column (1-based) that, where the table is too
	// wide, leaves the columns and goes on a line of its own under its
	// row, indented, whole: a long identifier one copies (a repository
	// at its revision) rather than reads across.
	Below int
}

// Table lays rows (the first the header) out as columns two spaces
// apart in at most width runes (0: no limit), as the layout allows. The
// lines come without trailing spaces; a table that cannot be narrowed
// enough is returned as narrow as it goes.
func Table(rows [][]string, width int, l Layout) []string {
	if len(rows) == 0 {
		return nil
	}
	ncol := 0
	for _, r := range rows {
		ncol = max(ncol, len(r))
	}
	cell := func(r []string, i int) string {
		if i < len(r) {
			return r[i]
		}
		return ""
	}
	widths := make([]int, ncol)
	for _, r := range rows {
		for i := range ncol {
			widths[i] = max(widths[i], utf8.RuneCountInString(cell(r, i)))
		}
	}
	below := -1
	sum := func() int {
		n := 0
		for i, w := range widths {
			if i != below {
				n += w + 2
			}
		}
		return n - 2
	}
	if b := l.Below - 1; width > 0 && b >= 0 && b < ncol && sum() > width {
		below = b
	}
	for width > 0 && sum() > width {
		widest := -1 // one column at a time, a rune at a time: the widest give first
		for _, i := range l.Wrap {
			if i < ncol && i != below && widths[i] > MinColumn && (widest < 0 || widths[i] > widths[widest]) {
				widest = i
			}
		}
		if widest < 0 {
			break
		}
		widths[widest]--
	}
	isRight := make([]bool, ncol)
	for _, i := range l.Right {
		if i < ncol {
			isRight[i] = true
		}
	}
	var out []string
	for _, r := range rows {
		cells := make([][]string, ncol)
		height := 1
		for i := range ncol {
			if i != below {
				cells[i] = Name(cell(r, i), widths[i])
				height = max(height, len(cells[i]))
			}
		}
		for k := range height {
			var line strings.Builder
			first := true
			for i := range ncol {
				if i == below {
					continue
				}
				c := ""
				if k < len(cells[i]) {
					c = cells[i][k]
				}
				pad := strings.Repeat(" ", max(widths[i]-utf8.RuneCountInString(c), 0))
				if !first {
					line.WriteString("  ")
				}
				first = false
				if isRight[i] {
					line.WriteString(pad + c)
				} else {
					line.WriteString(c + pad)
				}
			}
			out = append(out, strings.TrimRight(line.String(), " "))
		}
		if below >= 0 && cell(r, below) != "" {
			out = append(out, "  "+cell(r, below))
		}
	}
	return out
}
