package significance

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/r2med/r2med/internal/textwrap"
	"github.com/r2med/r2med/measure"
	"github.com/r2med/r2med/results"
)

// minNameWidth is the narrowest a text table's system column is
// wrapped to.
const minNameWidth = 20

// superLetters are the letters a–z as superscripts, as ranx prints them
// (Unicode has no superscript q; ranx's stand-in is kept).
var superLetters = []rune("ᵃᵇᶜᵈᵉᶠᵍʰᶦʲᵏˡᵐⁿᵒᵖ۹ʳˢᵗᵘᵛʷˣʸᶻ")

func superscript(letters string) string {
	var b strings.Builder
	for _, r := range letters {
		b.WriteRune(superLetters[r-'a'])
	}
	return b.String()
}

// MetricLabel is a measure's column heading: "nDCG@10" for ndcg_cut.10,
// "Recall@100", "MAP@100", "P@10", "MRR"; other measures as named.
func MetricLabel(name string) string {
	ms, err := measure.Parse(name)
	if err != nil || len(ms) != 1 {
		return name
	}
	m := ms[0]
	k := fmt.Sprint(m.Cutoff)
	switch m.Family {
	case measure.NDCGCut:
		return "nDCG@" + k
	case measure.Recall:
		return "Recall@" + k
	case measure.MAPCut:
		return "MAP@" + k
	case measure.P:
		return "P@" + k
	case measure.Success:
		return "Success@" + k
	case measure.RecipRank:
		return "MRR"
	case measure.IPrecAtRecall, measure.RPrecMult:
		return m.Name() // as trec_eval prints it: iprec_at_recall_0.10, Rprec_mult_0.20
	}
	return name
}

// pairColumn is one column of the all-pairs table: a group of queries and
// a metric.
type pairColumn struct {
	rep   *Report
	group int
}

func (c pairColumn) g() PairGroup { return c.rep.AllPairs.Groups[c.group] }

// mark is the depth mark of system i's value in the column ("@100" for
// a BRIGHT run's MRR 100 deep, results.MRRMark), "" for none.
func (c pairColumn) mark(i int) string {
	return results.MRRMark(c.rep.mrrLabel(c.g(), c.rep.AllPairs.Systems[i]))
}

// mrrLabel names the system's value in group g where it is not the
// benchmark's MRR (Report.MRRLabels): its task's label, or for the
// pooled group, and one that names no task, the shallowest of its
// labels; "" for none.
func (r *Report) mrrLabel(g PairGroup, system string) string {
	labels := r.MRRLabels[system]
	if !g.Pooled && g.Task != "" {
		return labels[g.Task]
	}
	out, depth := "", 0
	for _, l := range labels {
		if d, err := strconv.Atoi(strings.TrimPrefix(results.MRRMark(l), "@")); err == nil && (out == "" || d < depth) {
			out, depth = l, d
		}
	}
	return out
}

func groupLabel(g PairGroup) string {
	switch {
	case g.Pooled:
		return fmt.Sprintf("pooled (%d q)", g.Queries)
	case g.Task != "":
		return fmt.Sprintf("%s (%d q)", g.Task, g.Queries)
	}
	return fmt.Sprintf("%d queries", g.Queries)
}

// pairsColumns lays the reports' all-pairs groups out as columns: by
// group, then by metric, so a task's metrics stand together.
func pairsColumns(reps []*Report) (cols []pairColumn, groups int) {
	for _, r := range reps {
		if r.AllPairs != nil {
			groups = max(groups, len(r.AllPairs.Groups))
		}
	}
	for gi := range groups {
		for _, r := range reps {
			if r.AllPairs != nil && gi < len(r.AllPairs.Groups) {
				cols = append(cols, pairColumn{r, gi})
			}
		}
	}
	return cols, groups
}

// pairsLegend explains the letters, the test and the values, one line
// each.
func pairsLegend(reps []*Report) []string {
	p := reps[0].AllPairs
	n := len(p.Systems)
	sampled, perms := false, 0
	pooled := false
	for _, r := range reps {
		for _, g := range r.AllPairs.Groups {
			if !g.Exact && p.Test != T {
				sampled = true
				perms = max(perms, g.Permutations)
			}
			pooled = pooled || g.Pooled
		}
	}
	how := ""
	switch {
	case p.Test == Tukey:
		how = fmt.Sprintf("; %d shuffles", perms)
	case p.Test == Rand && sampled:
		how = fmt.Sprintf("; exact where at most %d queries differ, else %d random sign flips", ExactLimit, perms)
	case p.Test == Rand:
		how = "; exact (every sign flip enumerated)"
	}
	out := []string{
		fmt.Sprintf("superscript letters: the systems (lettered in the first column) a value is significantly better than: %s, adjusted p ≤ %g%s", p.Test.Describe(n*(n-1)/2), p.MaxP, how),
		"values: the mean per query over every judged query of the column's queries (a query a system did not answer scores 0)",
	}
	if pooled {
		out = append(out, "pooled: every task's queries together, tested as one set")
	}
	if cut := cutNames(reps); len(cut) > 0 {
		out = append(out, "…: names cut in the middle to fit; "+strings.Join(cut, "; "))
	}
	if apart := apartNames(reps); len(apart) > 0 {
		out = append(out, "#: names shared by systems of other settings, told apart by a hash of their settings; "+strings.Join(apart, "; "))
	}
	var labels []string
	cols, _ := pairsColumns(reps)
	for _, c := range cols {
		for _, s := range p.Systems {
			labels = append(labels, c.rep.mrrLabel(c.g(), s))
		}
	}
	return append(out, results.MRRMarkNotes(labels)...)
}

// apartNames are the systems told apart by a hash, each with what sets
// it apart: "bm25 #7648: top_k=10".
func apartNames(reps []*Report) []string {
	return nameNotes(reps, func(r *Report) map[string]string { return r.Apart }, ": ")
}

// cutNames are the systems whose names the reports show cut, each with
// its whole name: "rrf(bm25,bge…deepseek-r1@20 is rrf(bm25,bge,nv) → …".
func cutNames(reps []*Report) []string {
	return nameNotes(reps, func(r *Report) map[string]string { return r.FullNames }, " is ")
}

// nameNotes gathers a per-name note of the reports (of), by name, each as
// the name, sep and the note.
func nameNotes(reps []*Report, of func(*Report) map[string]string, sep string) []string {
	notes := map[string]string{}
	for _, r := range reps {
		maps.Copy(notes, of(r))
	}
	var out []string
	for _, n := range slices.Sorted(maps.Keys(notes)) {
		out = append(out, n+sep+notes[n])
	}
	return out
}

// writePairs renders the reports' all-pairs comparisons as one table: a
// row per system, lettered, a column per group of queries and metric;
// as text it is split into tables of at most width columns (0: one
// table).
func writePairs(w io.Writer, reps []*Report, f Format, width int) error {
	// Reports share a table when they compare the same systems on the
	// same groups of queries (the metrics of one comparison).
	for len(reps) > 0 {
		n := 1
		for n < len(reps) && sameLayout(reps[0].AllPairs, reps[n].AllPairs) {
			n++
		}
		if reps[0].AllPairs != nil {
			if err := writePairTable(w, reps[:n], f, width); err != nil {
				return err
			}
		}
		reps = reps[n:]
	}
	return nil
}

func sameLayout(a, b *AllPairs) bool {
	if a == nil || b == nil || !slices.Equal(a.Systems, b.Systems) || len(a.Groups) != len(b.Groups) {
		return false
	}
	for i := range a.Groups {
		if a.Groups[i].Task != b.Groups[i].Task || a.Groups[i].Pooled != b.Groups[i].Pooled || a.Groups[i].Queries != b.Groups[i].Queries {
			return false
		}
	}
	return true
}

func writePairTable(w io.Writer, reps []*Report, f Format, width int) error {
	switch f {
	case LaTeX:
		return writePairsLaTeX(w, reps)
	case Markdown:
		return writePairsMarkdown(w, reps)
	}
	p := reps[0].AllPairs
	cols, groups := pairsColumns(reps)
	var metrics []string
	for _, r := range reps {
		metrics = append(metrics, MetricLabel(r.Metric))
	}
	var b strings.Builder
	for _, l := range textwrap.Lines(fmt.Sprintf("All pairs: %s of %d systems, every system against every other", strings.Join(metrics, ", "), len(p.Systems)), width) {
		b.WriteString(l + "\n")
	}
	cell := func(c pairColumn, i int) string {
		g := c.g()
		v := f4(g.Means[i]) + superscript(c.rep.AllPairs.Letters(g, i))
		if m := c.mark(i); m != "" {
			v += " " + m
		}
		return v
	}
	nameW := utf8.RuneCountInString("system")
	for _, s := range p.Systems {
		nameW = max(nameW, utf8.RuneCountInString(s))
	}
	colW := make([]int, len(cols))
	for k, c := range cols {
		colW[k] = utf8.RuneCountInString(MetricLabel(c.rep.Metric))
		for i := range p.Systems {
			colW[k] = max(colW[k], utf8.RuneCountInString(cell(c, i)))
		}
	}
	perGroup := len(cols) / max(groups, 1)
	groupW := func(gi int) int {
		n := 0
		for k := gi * perGroup; k < (gi+1)*perGroup; k++ {
			n += 2 + colW[k]
		}
		return n
	}
	labels := groups > 1 || cols[0].g().Task != ""
	for gi := range groups {
		// A group's label wider than its columns widens the last one.
		if extra := 2 + utf8.RuneCountInString(groupLabel(cols[gi*perGroup].g())) - groupW(gi); labels && extra > 0 {
			colW[(gi+1)*perGroup-1] += extra
		}
	}
	// Names wrap when the widest group would not fit beside them.
	if width > 0 {
		widest := 0
		for gi := range groups {
			widest = max(widest, groupW(gi))
		}
		nameW = max(min(nameW, width-3-widest), min(nameW, minNameWidth))
	}
	// Each group's columns stay together where they fit beside the names
	// (else they go on in the next table, their label repeated); the
	// pieces are packed into tables of at most width columns.
	type piece struct{ gi, lo, hi int }
	pieceW := func(p piece) int {
		n := 0
		for k := p.lo; k < p.hi; k++ {
			n += 2 + colW[k]
		}
		return n
	}
	var pieces []piece
	for gi := range groups {
		p := piece{gi, gi * perGroup, gi * perGroup}
		for ; p.hi < (gi+1)*perGroup; p.hi++ {
			if width > 0 && p.hi > p.lo && 3+nameW+pieceW(p)+2+colW[p.hi] > width {
				pieces = append(pieces, p)
				p.lo = p.hi
			}
		}
		pieces = append(pieces, p)
	}
	var chunks [][]piece
	var cur []piece
	used := 3 + nameW
	for _, p := range pieces {
		if width > 0 && len(cur) > 0 && used+pieceW(p) > width {
			chunks, cur, used = append(chunks, cur), nil, 3+nameW
		}
		cur, used = append(cur, p), used+pieceW(p)
	}
	chunks = append(chunks, cur)
	pad := func(s string, n int) string {
		return s + strings.Repeat(" ", max(n-utf8.RuneCountInString(s), 0))
	}
	for ci, chunk := range chunks {
		if ci > 0 {
			b.WriteByte('\n')
		}
		var head1, head2 strings.Builder
		head1.WriteString(strings.Repeat(" ", 3+nameW))
		head2.WriteString("#  " + pad("system", nameW))
		for _, p := range chunk {
			head1.WriteString("  " + pad(groupLabel(cols[p.lo].g()), pieceW(p)-2))
			for k := p.lo; k < p.hi; k++ {
				head2.WriteString("  " + pad(MetricLabel(cols[k].rep.Metric), colW[k]))
			}
		}
		if labels {
			b.WriteString(strings.TrimRight(head1.String(), " ") + "\n")
		}
		b.WriteString(strings.TrimRight(head2.String(), " ") + "\n")
		for i, s := range p.Systems {
			for n, part := range textwrap.Name(s, nameW) {
				line := Letter(i) + "  " + pad(part, nameW)
				if n > 0 {
					line = "   " + part
				} else {
					for _, p := range chunk {
						for k := p.lo; k < p.hi; k++ {
							line += "  " + pad(cell(cols[k], i), colW[k])
						}
					}
				}
				b.WriteString(strings.TrimRight(line, " ") + "\n")
			}
		}
	}
	b.WriteByte('\n')
	for _, l := range pairsLegend(reps) {
		for _, part := range textwrap.Lines(l, width) {
			b.WriteString(part + "\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func writePairsMarkdown(w io.Writer, reps []*Report) error {
	p := reps[0].AllPairs
	cols, groups := pairsColumns(reps)
	var b strings.Builder
	b.WriteString("| # | system |")
	sep := "|---|---|"
	for _, c := range cols {
		label := MetricLabel(c.rep.Metric)
		if g := c.g(); groups > 1 || g.Task != "" {
			label = groupLabel(g) + " " + label
		}
		b.WriteString(" " + label + " |")
		sep += "---:|"
	}
	b.WriteString("\n" + sep + "\n")
	for i, s := range p.Systems {
		fmt.Fprintf(&b, "| %s | %s |", Letter(i), strings.ReplaceAll(s, "|", `\|`))
		for _, c := range cols {
			v := f4(c.g().Means[i])
			if l := c.rep.AllPairs.Letters(c.g(), i); l != "" {
				v += "<sup>" + l + "</sup>"
			}
			if m := c.mark(i); m != "" {
				v += " " + m
			}
			b.WriteString(" " + v + " |")
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
	for _, l := range pairsLegend(reps) {
		b.WriteString("- " + l + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func writePairsLaTeX(w io.Writer, reps []*Report) error {
	tex := texReplacer.Replace
	p := reps[0].AllPairs
	cols, groups := pairsColumns(reps)
	perGroup := len(cols) / max(groups, 1)
	var b strings.Builder
	legend := pairsLegend(reps)
	caption := fmt.Sprintf("Every system against every other. Superscripts: the systems (lettered in the first column) a value is significantly better than (%s). Values: %s.", strings.TrimPrefix(legend[0], "superscript letters: the systems (lettered in the first column) a value is significantly better than: "), strings.TrimPrefix(legend[1], "values: "))
	if slices.ContainsFunc(legend, func(l string) bool { return strings.HasPrefix(l, "pooled:") }) {
		caption += " Pooled: every task's queries together, tested as one set."
	}
	for _, l := range legend {
		if strings.HasPrefix(l, "@") {
			caption += " " + l + "."
		}
	}
	caption += " Best per column in bold."
	b.WriteString("% r2med compare: needs \\usepackage{booktabs,graphicx} in the preamble\n")
	for _, c := range cutNames(reps) {
		fmt.Fprintf(&b, "%% %s\n", c)
	}
	fmt.Fprintf(&b, "\\begin{table}[t]\n\\centering\n\\small\n\\caption{%s}\n\\resizebox{\\ifdim\\width>\\linewidth\\linewidth\\else\\width\\fi}{!}{%%\n\\begin{tabular}{cl%s}\n\\toprule\n", tex(caption), strings.Repeat("r", len(cols)))
	if groups > 1 || cols[0].g().Task != "" {
		b.WriteString(" & ")
		for gi := range groups {
			fmt.Fprintf(&b, " & \\multicolumn{%d}{c}{%s}", perGroup, tex(groupLabel(cols[gi*perGroup].g())))
		}
		b.WriteString(" \\\\\n")
		for gi := range groups {
			fmt.Fprintf(&b, "\\cmidrule(lr){%d-%d}", 3+gi*perGroup, 2+(gi+1)*perGroup)
		}
		b.WriteString("\n")
	}
	b.WriteString(`\# & System`)
	for _, c := range cols {
		b.WriteString(" & " + tex(MetricLabel(c.rep.Metric)))
	}
	b.WriteString(" \\\\\n\\midrule\n")
	for i, s := range p.Systems {
		b.WriteString(Letter(i) + " & " + tex(s))
		for _, c := range cols {
			g := c.g()
			best := true
			for j := range p.Systems {
				best = best && g.Means[i] >= g.Means[j]
			}
			v := f4(g.Means[i])
			if best {
				v = `\textbf{` + v + `}`
			}
			// The letters a value lacks are set invisibly, as ranx does,
			// so the values of a column line up.
			var has, lacks strings.Builder
			for j := range p.Systems {
				if j == i {
					continue
				}
				if c.rep.AllPairs.Better(g, i, j) {
					has.WriteString(Letter(j))
				} else {
					lacks.WriteString(Letter(j))
				}
			}
			if has.Len() > 0 {
				v += "$^{" + has.String() + "}$"
			}
			if lacks.Len() > 0 {
				v += `\hphantom{$^{` + lacks.String() + `}$}`
			}
			if m := c.mark(i); m != "" {
				v += `\textsuperscript{` + tex(m) + `}`
			}
			b.WriteString(" & " + v)
		}
		b.WriteString(" \\\\\n")
	}
	b.WriteString("\\bottomrule\n\\end{tabular}}\n\\end{table}\n")
	_, err := io.WriteString(w, b.String())
	return err
}
