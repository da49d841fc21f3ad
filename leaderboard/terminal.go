package leaderboard

import (
	"fmt"
	"io"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/r2med/r2med/internal/textwrap"
)

// WriteOptions tune how a table is written.
type WriteOptions struct {
	// Width is the terminal's width in columns. The table format keeps to
	// it when it can: the source column abbreviated, the average's notes
	// moved under the table, system names wrapped onto more lines (never
	// cut). 0 is unlimited.
	Width int
}

// MinNameWidth is the narrowest the system column is wrapped to; a table
// whose other columns leave less is printed wider than asked, and says
// how to narrow it.
const MinNameWidth = 20

// WriteWith renders the table in format f with options o.
func (t *Table) WriteWith(w io.Writer, f Format, o WriteOptions) error {
	if f == Terminal || f == "" {
		return t.writeTerminal(w, o.Width)
	}
	return t.Write(w, f)
}

// printedMark flags, in a compact table, an average the legend explains
// (a paper's printed average).
const printedMark = "ᵖ"

var sourceAbbrev = map[Origin]string{OriginOurs: "ours", OriginPublished: "pub", OriginExternal: "ext"}

// terminalRows lays the table out as text cells: the heading, then a row
// per system. compact abbreviates the source (and its heading) and
// leaves the averages' notes to the legend (returned as notes).
func (t *Table) terminalRows(compact bool) (rows [][]string, stars bool, notes []string) {
	head := []string{"#", "system", "source"}
	if compact {
		head[2] = "src"
	}
	for _, task := range t.Tasks {
		head = append(head, ShortTaskName(task))
	}
	head = append(head, "Avg")
	if t.Ranking == ByBorda {
		head = append(head, "Borda")
	}
	head = append(head, t.OtherTasks...)
	head = append(head, t.CostColumns()...)
	rows = [][]string{head}
	star := func(v, best float64, ok bool) string {
		if math.IsNaN(best) || !ok {
			return ""
		}
		if AtBest(v, best) {
			stars = true
			return "*"
		}
		return " "
	}
	for _, r := range t.Rows {
		src := string(r.System.Origin())
		if compact {
			src = sourceAbbrev[r.System.Origin()]
		}
		line := []string{rankText(r), r.System.DisplayName(), src}
		for j, s := range r.Scores {
			line = append(line, CellText(s)+star(s.Value, t.Best[j], s.OK))
		}
		avg := t.AverageText(r)
		if compact {
			if short, note, ok := t.printedNote(r); ok {
				avg = short + printedMark
				notes = append(notes, fmt.Sprintf("%s %s: %s", printedMark, r.System.FullName(), note))
			}
		}
		avg += star(r.Mean, t.BestAverage, r.ranked(ByAverage))
		line = append(line, avg)
		if t.Ranking == ByBorda {
			line = append(line, bordaText(r))
		}
		for j, s := range r.Other {
			line = append(line, CellText(s)+star(s.Value, t.OtherBest[j], s.OK))
		}
		line = append(line, t.CostCells(r)...)
		rows = append(rows, line)
	}
	return rows, stars, notes
}

// printedNote splits an average whose text carries a note about what the
// paper printed ("51.10 (printed)", "35.22 (printed 35.19)") into the
// number and the whole text, for compact tables that explain it apart.
func (t *Table) printedNote(r Row) (number, note string, ok bool) {
	full := t.AverageText(r)
	if !r.AverageOnly && !strings.Contains(full, "(printed") {
		return "", "", false
	}
	return r.AverageNumber(), full, true
}

func columnWidths(rows [][]string) []int {
	width := make([]int, len(rows[0]))
	for _, l := range rows {
		for i, c := range l {
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	return width
}

// total is the width of a line: the columns and sep spaces between.
func total(width []int, sep int) int {
	n := sep * (len(width) - 1)
	for _, w := range width {
		n += w
	}
	return n
}

func (t *Table) writeTerminal(w io.Writer, limit int) error {
	rows, stars, notes := t.terminalRows(false)
	width := columnWidths(rows)
	sep := 2
	compact := limit > 0 && total(width, sep) > limit
	if compact {
		rows, stars, notes = t.terminalRows(true)
		width = columnWidths(rows)
		// Names wrap to make the table fit, down to MinNameWidth; then
		// the columns close up to one space.
		name := width[1]
		if over := total(width, sep) - limit; over > 0 {
			width[1] = max(name-over, min(name, MinNameWidth))
		}
		if over := total(width, sep) - limit; over > 0 {
			sep = 1
			width[1] = max(name-(total(width, sep)-width[1]+name-limit), min(name, MinNameWidth))
			width[1] = min(width[1], name)
		}
	}
	title := t.Title()
	if stars {
		title += "; * best in column"
	}
	var b strings.Builder
	for _, l := range textwrap.Lines(title, limit) {
		b.WriteString(l + "\n")
	}
	for _, l := range rows {
		name := textwrap.Name(l[1], width[1])
		for k, part := range name {
			cells := l
			if k > 0 {
				cells = make([]string, len(l))
			}
			var line strings.Builder
			for i, c := range cells {
				if i == 1 {
					c = part
				}
				pad := strings.Repeat(" ", max(width[i]-utf8.RuneCountInString(c), 0))
				if i > 0 {
					line.WriteString(strings.Repeat(" ", sep))
				}
				if i == 1 || i == 2 {
					line.WriteString(c + pad) // text columns left-aligned
				} else {
					line.WriteString(pad + c)
				}
			}
			b.WriteString(strings.TrimRight(line.String(), " ") + "\n")
		}
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	var legend []string
	if compact {
		legend = append(legend, notes...)
		legend = append(legend, "src, the source: ours = runs found in the results directory; pub = R2MED's released result files ("+PublishedSource+"); ext = figures printed by later papers")
	}
	if t.hasLegend() {
		for _, l := range t.Legend() {
			if compact && (strings.HasPrefix(l, "ours:") || strings.HasPrefix(l, "published:") || strings.HasPrefix(l, "external:")) {
				continue // said by the source line
			}
			legend = append(legend, l)
		}
	}
	if n := total(width, sep); limit > 0 && n > limit {
		legend = append(legend, fmt.Sprintf("(the table needs %d columns, %d are available: choose fewer columns with --tasks or --family, or set COLUMNS)", n, limit))
	}
	for _, l := range legend {
		for _, part := range textwrap.Lines(l, limit) {
			if _, err := fmt.Fprintln(w, part); err != nil {
				return err
			}
		}
	}
	return nil
}
