package leaderboard

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/r2med/r2med/results"
)

// LaTeXFloatRows is the most rows writeLaTeX puts in one table float;
// a longer table is a longtable on landscape pages, which breaks across
// pages instead of overflowing one.
const LaTeXFloatRows = 30

// latexNameWrap is the longest system name (in characters) set on one
// line; with a longer one the system column is a ragged paragraph
// column that wraps names.
const latexNameWrap = 32

// LaTeXPackages are the packages a LaTeX leaderboard of rows rows needs
// in the preamble.
func LaTeXPackages(rows int) []string {
	if rows > LaTeXFloatRows {
		return []string{"booktabs", "array", "longtable", "pdflscape"}
	}
	return []string{"booktabs", "graphicx", "array"}
}

// writeLaTeX renders the table for a paper: booktabs rules, the best
// value of each column in bold, significance marks as superscripts and a
// caption naming the metric and the test behind the marks. Up to
// LaTeXFloatRows rows it is one table float, scaled down to the line
// width when wider (\resizebox); longer, a longtable on landscape pages
// with its heading repeated on each. The first line names the packages
// the preamble needs (LaTeXPackages), the next ones each cut name whole.
func (t *Table) writeLaTeX(w io.Writer) error {
	var b strings.Builder
	long := len(t.Rows) > LaTeXFloatRows
	fmt.Fprintf(&b, "%% r2med leaderboard: needs \\usepackage{%s} in the preamble\n", strings.Join(LaTeXPackages(len(t.Rows)), ","))
	for _, c := range t.cutNames() {
		fmt.Fprintf(&b, "%% %s\n", c)
	}
	name := "l"
	for _, r := range t.Rows {
		if utf8.RuneCountInString(r.System.DisplayName()) > latexNameWrap {
			name = `>{\raggedright\arraybackslash}p{4.2cm}`
		}
	}
	cols := "r" + name + strings.Repeat("r", len(t.Tasks)+1)
	if t.Ranking == ByBorda {
		cols += "r"
	}
	cols += strings.Repeat("r", len(t.OtherTasks)+len(t.CostColumns()))
	caption := TeX(t.Title()) + "."
	if t.Baseline != "" {
		caption += fmt.Sprintf(` $^{\dagger}$/$^{\ddagger}$: differs from the baseline %s (two-sided paired randomization test per task, Holm--Bonferroni over each system's tasks; $^{\dagger}$ $p<0.05$, $^{\ddagger}$ $p<0.01$).`, TeX(t.Baseline))
	}
	caption += " Best per column in bold."
	var printed []string
	for _, r := range t.Rows {
		if _, note, ok := t.printedNote(r); ok {
			printed = append(printed, TeX(r.System.FullName()+": "+note))
		}
	}
	if len(printed) > 0 {
		caption += ` $^{p}$: the paper's printed average (` + strings.Join(printed, "; ") + `).`
	}
	for _, n := range t.printedCellNotes() {
		caption += " " + TeX(n) + "."
	}
	for _, n := range t.RankNotes() {
		caption += " R" + TeX(strings.TrimPrefix(n, "r")) + "." // a sentence: "Ranked by …"
	}
	for _, n := range append(t.unansweredNotes(), t.shallowNotes()...) {
		caption += " " + TeX(n) + "."
	}
	for _, n := range t.depthNotes() {
		caption += " " + TeX(n) + "."
	}
	if t.BoardSize > len(t.Rows) {
		caption += fmt.Sprintf(` \#: rank among all %d systems.`, t.BoardSize)
	}
	if t.Costs {
		caption += ` \$/q, tok/q, s/q: dollars, tokens and seconds of model calls per query.`
	}
	head := []string{`\#`, "System"}
	for _, task := range t.Tasks {
		head = append(head, TeX(ShortTaskName(task)))
	}
	head = append(head, "Avg")
	if t.Ranking == ByBorda {
		head = append(head, "Borda")
	}
	for _, task := range t.OtherTasks {
		head = append(head, TeX(task))
	}
	for _, c := range t.CostColumns() {
		head = append(head, TeX(c))
	}
	heading := strings.Join(head, " & ") + ` \\` + "\n"
	if long {
		fmt.Fprintf(&b, "\\begin{landscape}\n\\footnotesize\n\\setlength{\\tabcolsep}{4pt}\n\\begin{longtable}{%s}\n\\caption{%s}\\\\\n\\toprule\n%s\\midrule\n\\endfirsthead\n\\toprule\n%s\\midrule\n\\endhead\n\\bottomrule\n\\endfoot\n",
			cols, caption, heading, heading)
	} else {
		// Scaled down to the line width when wider, never up.
		fmt.Fprintf(&b, "\\begin{table}[t]\n\\centering\n\\small\n\\caption{%s}\n\\resizebox{\\ifdim\\width>\\linewidth\\linewidth\\else\\width\\fi}{!}{%%\n\\begin{tabular}{%s}\n\\toprule\n%s\\midrule\n",
			caption, cols, heading)
	}
	cell := func(s Score, best float64) string {
		if !s.OK {
			return "--"
		}
		v := s.Number()
		if AtBest(s.Value, best) {
			v = `\textbf{` + v + `}`
		}
		switch s.Mark {
		case Mark05:
			v += `$^{\dagger}$`
		case Mark01:
			v += `$^{\ddagger}$`
		}
		if d := results.MRRMark(s.Label); d != "" {
			v += `\textsuperscript{` + d + `}`
		}
		return v
	}
	for _, r := range t.Rows {
		name := texName(r.System.DisplayName())
		switch r.System.Origin() {
		case OriginOurs:
			name += ` (ours)`
		case OriginExternal:
			name += ` (ext.)`
		}
		line := []string{strings.Replace(rankText(r), "—", "--", 1), name}
		for j, s := range r.Scores {
			line = append(line, cell(s, t.Best[j]))
		}
		avg := TeX(t.AverageText(r))
		number, _, printedAvg := t.printedNote(r)
		if printedAvg {
			avg = number
		}
		if t.IsBest(r) {
			avg = `\textbf{` + avg + `}`
		}
		if printedAvg {
			avg += `$^{p}$`
		}
		line = append(line, avg)
		if t.Ranking == ByBorda {
			line = append(line, bordaText(r))
		}
		for j, s := range r.Other {
			line = append(line, cell(s, t.OtherBest[j]))
		}
		for _, c := range t.CostCells(r) {
			line = append(line, strings.Replace(c, "—", "--", 1))
		}
		b.WriteString(strings.Join(line, " & ") + ` \\` + "\n")
	}
	if long {
		b.WriteString("\\end{longtable}\n\\end{landscape}\n")
	} else {
		b.WriteString("\\bottomrule\n\\end{tabular}}\n\\end{table}\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

var texReplacer = strings.NewReplacer(
	`\`, `\textbackslash{}`, `&`, `\&`, `%`, `\%`, `$`, `\$`, `#`, `\#`, `_`, `\_`,
	`{`, `\{`, `}`, `\}`, `~`, `\textasciitilde{}`, `^`, `\textasciicircum{}`,
	"→", `$\rightarrow$`, "—", `---`, "–", `--`, "×", `$\times$`, "−", `$-$`,
	"…", `\ldots{}`, "†", `$^{\dagger}$`, "‡", `$^{\ddagger}$`, "≥", `$\geq$`, "≤", `$\leq$`, "·", `$\cdot$`,
)

// texName is a system name for a table cell: TeX and, for a name longer
// than latexNameWrap (set in a ragged paragraph column), a line break
// allowed after the commas, slashes, colons, arrows and "…" that join its
// parts, so that a name without spaces wraps too.
func texName(s string) string {
	if utf8.RuneCountInString(s) <= latexNameWrap {
		return TeX(s)
	}
	return nameBreaks.Replace(TeX(s))
}

var nameBreaks = strings.NewReplacer(",", `,\allowbreak{}`, "/", `/\allowbreak{}`, ":", `:\allowbreak{}`,
	`\ldots{}`, `\ldots{}\allowbreak{}`, `$\rightarrow$`, `$\rightarrow$\allowbreak{}`)

// TeX escapes text for LaTeX, spelling the symbols our names and titles
// use (→ — × − …) as commands, so the output compiles with pdflatex's
// default input encoding.
func TeX(s string) string { return texReplacer.Replace(s) }
