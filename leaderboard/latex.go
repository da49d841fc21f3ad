package leaderboard

import (
	"fmt"
	"io"
	"strings"
)

// writeLaTeX renders the table for a paper: booktabs rules, the best
// value of each column in bold, significance marks as superscripts and a
// caption naming the metric and the test behind the marks. It needs
// \usepackage{booktabs} in the preamble.
func (t *Table) writeLaTeX(w io.Writer) error {
	var b strings.Builder
	cols := "rl" + strings.Repeat("r", len(t.Tasks)+1)
	if t.Ranking == ByBorda {
		cols += "r"
	}
	cols += strings.Repeat("r", len(t.OtherTasks)+len(t.CostColumns()))
	caption := TeX(t.Title()) + "."
	if t.Baseline != "" {
		caption += fmt.Sprintf(` $^{\dagger}$/$^{\ddagger}$: differs from the baseline %s (two-sided paired randomization test per task, Holm--Bonferroni over each system's tasks; $^{\dagger}$ $p<0.05$, $^{\ddagger}$ $p<0.01$).`, TeX(t.Baseline))
	}
	caption += " Best per column in bold."
	if t.Costs {
		caption += ` \$/q, tok/q, s/q: dollars, tokens and seconds of model calls per query.`
	}
	fmt.Fprintf(&b, "\\begin{table}[t]\n\\centering\n\\small\n\\caption{%s}\n\\begin{tabular}{%s}\n\\toprule\n", caption, cols)
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
	b.WriteString(strings.Join(head, " & ") + ` \\` + "\n\\midrule\n")
	otherBest := make([]float64, len(t.OtherTasks))
	for j := range t.OtherTasks {
		for _, r := range t.Rows {
			if r.Other[j].OK {
				otherBest[j] = max(otherBest[j], r.Other[j].Value)
			}
		}
	}
	cell := func(s Score, best float64) string {
		if !s.OK {
			return "--"
		}
		v := Pct(s.Value)
		if s.Value == best {
			v = `\textbf{` + v + `}`
		}
		switch s.Mark {
		case Mark05:
			v += `$^{\dagger}$`
		case Mark01:
			v += `$^{\ddagger}$`
		}
		return v
	}
	for _, r := range t.Rows {
		name := TeX(r.System.Name)
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
		if r.ranked(ByAverage) && r.Mean == t.BestAverage {
			avg = `\textbf{` + avg + `}`
		}
		line = append(line, avg)
		if t.Ranking == ByBorda {
			line = append(line, bordaText(r))
		}
		for j, s := range r.Other {
			line = append(line, cell(s, otherBest[j]))
		}
		for _, c := range t.CostCells(r) {
			line = append(line, strings.Replace(c, "—", "--", 1))
		}
		b.WriteString(strings.Join(line, " & ") + ` \\` + "\n")
	}
	b.WriteString("\\bottomrule\n\\end{tabular}\n\\end{table}\n")
	_, err := io.WriteString(w, b.String())
	return err
}

var texReplacer = strings.NewReplacer(
	`\`, `\textbackslash{}`, `&`, `\&`, `%`, `\%`, `$`, `\$`, `#`, `\#`, `_`, `\_`,
	`{`, `\{`, `}`, `\}`, `~`, `\textasciitilde{}`, `^`, `\textasciicircum{}`,
	"→", `$\rightarrow$`, "—", `---`, "–", `--`, "×", `$\times$`, "−", `$-$`,
	"†", `$^{\dagger}$`, "‡", `$^{\ddagger}$`, "≥", `$\geq$`, "≤", `$\leq$`, "·", `$\cdot$`,
)

// TeX escapes text for LaTeX, spelling the symbols our names and titles
// use (→ — × −) as commands, so the output compiles with pdflatex's
// default input encoding.
func TeX(s string) string { return texReplacer.Replace(s) }
