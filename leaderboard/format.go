package leaderboard

import (
	"cmp"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/r2med/r2med/results"
	"github.com/r2med/r2med/sysname"
	"github.com/r2med/r2med/tasks"
	"github.com/r2med/r2med/usage"
)

// Format is an output format of a leaderboard.
type Format string

const (
	Terminal Format = "table"    // aligned columns, best per column marked with *
	Markdown Format = "markdown" // R2MED's table as the reference notes print it
	CSV      Format = "csv"      // values ×100 with two decimals, as R2MED's summary CSV
	JSON     Format = "json"     // stored values (0–1) and the reported average
	LaTeX    Format = "latex"    // a booktabs table for papers: best bold, marks as superscripts
)

// ParseFormat reads a format name.
func ParseFormat(s string) (Format, error) {
	switch f := Format(strings.ToLower(strings.TrimSpace(s))); f {
	case "", "terminal", Terminal:
		return Terminal, nil
	case "md", Markdown:
		return Markdown, nil
	case "tex", LaTeX:
		return LaTeX, nil
	case CSV, JSON:
		return f, nil
	}
	return "", &UsageError{fmt.Sprintf("unknown format %q; want table, markdown, csv, json or latex", s)}
}

// Write renders the table in format f.
func (t *Table) Write(w io.Writer, f Format) error {
	switch f {
	case Terminal, "":
		return t.writeTerminal(w, 0)
	case Markdown:
		return t.writeMarkdown(w)
	case CSV:
		return t.writeCSV(w)
	case JSON:
		return t.writeJSON(w)
	case LaTeX:
		return t.writeLaTeX(w)
	}
	return fmt.Errorf("leaderboard: unknown format %q", f)
}

// Pct formats a stored value as R2MED's tables print it: ×100, two
// decimals.
func Pct(v float64) string { return strconv.FormatFloat(v*100, 'f', 2, 64) }

// AverageText is the row's average as printed: "41.65"; for an external
// system whose paper printed another average than its values' mean,
// "35.22 (printed 35.19)"; for an average-only row "51.10 (printed)"; for
// a system missing tasks "— (3/8)".
func (t *Table) AverageText(r Row) string {
	switch {
	case r.AverageOnly:
		return r.AverageNumber() + " (printed)"
	case r.Complete:
		s := r.AverageNumber()
		if p, ok := t.PrintedDiffers(r); ok {
			s += " (printed " + p + ")"
		}
		return s
	}
	return fmt.Sprintf("— (%d/%d)", r.Have, len(t.Tasks))
}

// PrintedDiffers returns an external row's printed average when it is
// not its printed values' mean, rounded (PrintedAgrees: RaDeR's quirk,
// not BM25's rounding tie), in a view of that average (all tasks,
// nDCG@10, every task present).
func (t *Table) PrintedDiffers(r Row) (string, bool) {
	e := r.System.External
	if e == nil || e.AverageOnly || e.AverageComputed || t.Family != "" || t.Subset || t.Metric.Key != DefaultMetric.Key || !r.Complete || PrintedAgrees(r.System) {
		return "", false
	}
	return e.PrintedText(), true
}

// CellText is a cell as printed: the value ×100, its mark and its
// Label's depth mark ("34.50 @100", results.MRRMark), "—" when missing.
func CellText(s Score) string {
	if !s.OK {
		return "—"
	}
	if d := results.MRRMark(s.Label); d != "" {
		return s.Number() + s.Mark + " " + d
	}
	return s.Number() + s.Mark
}

// labels are the Labels of a row's shown cells that have one, by task.
func (t *Table) labels(r Row) map[string]string {
	out := map[string]string{}
	for j, s := range r.Scores {
		if s.OK && s.Label != "" {
			out[t.Tasks[j]] = s.Label
		}
	}
	for j, s := range r.Other {
		if s.OK && s.Label != "" {
			out[t.OtherTasks[j]] = s.Label
		}
	}
	return out
}

// depthNotes explain the depth marks of the shown cells
// (results.MRRMarkNotes).
func (t *Table) depthNotes() []string {
	var labels []string
	for _, r := range t.Rows {
		for _, l := range t.labels(r) {
			labels = append(labels, l)
		}
	}
	return results.MRRMarkNotes(labels)
}

// CostColumns are the headings of the cost columns a table with Costs
// shows after its score columns: dollars per query (when CostUSD),
// tokens per query and seconds of model calls per query.
func (t *Table) CostColumns() []string {
	if !t.Costs {
		return nil
	}
	if t.CostUSD {
		return []string{"$/q", "tok/q", "s/q"}
	}
	return []string{"tok/q", "s/q"}
}

// CostCells are a row's cost columns as printed ("—" where unknown).
func (t *Table) CostCells(r Row) []string {
	if !t.Costs {
		return nil
	}
	var out []string
	c := r.Cost
	if t.CostUSD {
		if c == nil || c.USD == nil {
			out = append(out, "—")
		} else {
			out = append(out, usage.USDNumber(*c.USD)) // no exponent, no sign (the column is $/q)
		}
	}
	if c == nil {
		return append(out, "—", "—")
	}
	return append(out, strconv.FormatFloat(c.Tokens(), 'f', 0, 64), SecondsText(c.Seconds))
}

// SecondsText prints seconds with three significant digits, 0 as "0".
func SecondsText(v float64) string { return strconv.FormatFloat(v, 'g', 3, 64) }

// costLegend explains the cost columns.
const costLegend = "cost per query of our runs' model calls over the tasks shown ($/q: dollars by the run's price table; tok/q: prompt and completion tokens; s/q: seconds of model calls); embedding the corpus is spread over the queries, and a cached answer counts at its cost when made"

// ShortTaskName is a column heading narrow enough for a terminal
// ("MedXpert", "PMC-T"), the abbreviations of R2MED's leaderboard.
func ShortTaskName(task string) string {
	if s, ok := shortNames[task]; ok {
		return s
	}
	return task
}

var shortNames = map[string]string{
	"Biology": "Bio", "Bioinformatics": "Bioinf", "Medical-Sciences": "MedSci",
	"MedXpertQA-Exam": "MedXpert", "MedQA-Diag": "MedQA", "PMC-Treatment": "PMC-T",
	"PMC-Clinical": "PMC-C", "IIYi-Clinical": "IIYi",
}

// Title describes the table: metric, scope and ranking.
func (t *Table) Title() string {
	scope := "8-task average"
	switch {
	case t.Family != "":
		scope = fmt.Sprintf("%s, %d-task average", tasks.Family(t.Family).Title(), len(t.Tasks))
	case t.Subset:
		short := make([]string, len(t.Tasks))
		for i, task := range t.Tasks {
			short[i] = ShortTaskName(task)
		}
		scope = fmt.Sprintf("%d-task average: %s", len(t.Tasks), strings.Join(short, ", "))
	}
	s := fmt.Sprintf("%s ×100 (%s)", t.Metric.Label, scope)
	if t.Ranking == ByBorda {
		s += ", ranked by Borda count"
	}
	return s
}

// Legend explains the table's marks and sources, one line each.
func (t *Table) Legend() []string {
	var out []string
	if t.Baseline != "" {
		out = append(out, fmt.Sprintf("%s / %s: differs from the baseline %s (%s)", Mark05, Mark01, t.Baseline, t.Test))
	}
	origins := map[Origin]bool{}
	for _, r := range t.Rows {
		origins[r.System.Origin()] = true
	}
	if origins[OriginOurs] {
		out = append(out, "ours: runs found in the results directory")
	}
	if origins[OriginPublished] {
		out = append(out, "published: R2MED's released result files ("+PublishedSource+")")
	}
	if origins[OriginExternal] {
		out = append(out, "external: figures printed by later papers and R2MED's website, with their source; not R2MED's released files")
	}
	out = append(out, t.printedCellNotes()...)
	out = append(out, t.RankNotes()...)
	out = append(out, t.unansweredNotes()...)
	out = append(out, t.shallowNotes()...)
	if len(t.OtherTasks) > 0 {
		out = append(out, "columns after Avg: our runs on data that is no R2MED task, outside the average")
	}
	out = append(out, t.depthNotes()...)
	if t.Costs {
		out = append(out, costLegend)
	}
	if t.BoardSize > len(t.Rows) {
		out = append(out, fmt.Sprintf("%d of the board's %d systems shown; # is the rank among all %d", len(t.Rows), t.BoardSize, t.BoardSize))
	}
	if t.anyCut() {
		out = append(out, CutLegend)
	}
	out = append(out, t.twinNotes()...)
	return out
}

// maxTwinSettings bounds the settings Apart names per system.
const maxTwinSettings = 3

// Apart says, for systems of ours that share a name (told apart by a
// short hash of their settings, sysname.Disambiguate), which settings
// set each apart from the others of its name: "top_k=100" for bm25 #14f7
// beside bm25 #7648's "top_k=10", at most maxTwinSettings of them in
// SettingsText's order, then how many more differ. A hash alone names a
// system but does not say what it is. Systems without a twin among
// systems have no entry; the map is keyed by index into systems.
func Apart(systems []*System) map[int]string {
	var order []string
	twins := map[string][]int{}
	for i, s := range systems {
		base, suffix := sysname.Base(s.Name)
		if suffix == "" || s.Origin() != OriginOurs {
			continue
		}
		if twins[base] == nil {
			order = append(order, base)
		}
		twins[base] = append(twins[base], i)
	}
	out := map[int]string{}
	for _, base := range order {
		group := twins[base]
		if len(group) < 2 {
			continue
		}
		settings := make([]map[string]string, len(group))
		var keys []string
		for j, i := range group {
			var pairs []string
			flatten(&pairs, "", systems[i].Config)
			settings[j] = map[string]string{}
			for _, p := range pairs {
				k, _, _ := strings.Cut(p, "=")
				if !slices.Contains(keys, k) {
					keys = append(keys, k)
				}
				settings[j][k] = p
			}
		}
		var differ []string
		for _, k := range keys {
			for _, set := range settings[1:] {
				if set[k] != settings[0][k] {
					differ = append(differ, k)
					break
				}
			}
		}
		// In SettingsText's order: what a system is first, then by name.
		slices.SortStableFunc(differ, func(a, b string) int {
			ha, _, _ := strings.Cut(a, ".")
			hb, _, _ := strings.Cut(b, ".")
			return cmp.Or(keyRank(ha)-keyRank(hb), strings.Compare(a, b))
		})
		more := ""
		if n := len(differ) - maxTwinSettings; n > 0 {
			more = fmt.Sprintf(" (+%d more)", n)
		}
		for j, i := range group {
			var shown []string
			for _, k := range differ[:min(len(differ), maxTwinSettings)] {
				shown = append(shown, cmp.Or(settings[j][k], k+"=none"))
			}
			out[i] = strings.Join(shown, " ") + more
		}
	}
	return out
}

// twinNotes are Apart's words for the shown rows (apartLines), reckoned
// over every system the table was built from.
func (t *Table) twinNotes() []string {
	systems := make([]*System, len(t.Rows))
	apart := map[int]string{}
	for i, r := range t.Rows {
		systems[i] = r.System
		if a, ok := t.apart[r.System]; ok {
			apart[i] = a
		}
	}
	return apartLines(systems, apart, (*System).DisplayName)
}

// apartLines are Apart's words for systems, each named as the view shows
// it (shown), a line per name shared: "bm25 #14f7: top_k=100; bm25
// #7648: top_k=10".
func apartLines(systems []*System, apart map[int]string, shown func(*System) string) []string {
	var order []string
	lines := map[string][]string{}
	for i, s := range systems {
		a, ok := apart[i]
		if !ok {
			continue
		}
		base, _ := sysname.Base(s.Name)
		if lines[base] == nil {
			order = append(order, base)
		}
		lines[base] = append(lines[base], shown(s)+": "+a)
	}
	out := make([]string, len(order))
	for i, base := range order {
		out[i] = strings.Join(lines[base], "; ")
		if strings.HasSuffix(out[i], " more)") {
			out[i] += "; every setting: --format csv or json"
		}
	}
	return out
}

// printedCellNotes are the notes of the shown external rows about how
// their per-task values were printed ("o3-mini + BM25: printed with fewer
// than two decimals (a digit may be lost): IIYi-Clinical 7.8"): the cells
// show two decimals, so the note says which the source did not print.
// MTEB's rows (notes on revisions) and average-only rows (their note is
// the printed average's) are explained elsewhere.
func (t *Table) printedCellNotes() []string {
	var out []string
	for _, r := range t.Rows {
		if e := r.System.External; e != nil && e.Note != "" && !e.AverageOnly && !e.AverageComputed {
			out = append(out, r.System.FullName()+": "+e.Note)
		}
	}
	return out
}

// unansweredNotes say, for each shown cell of our runs whose run left
// judged queries without a result, how many: they count 0 in the cell's
// mean (results.UnansweredNote), which the number alone does not tell.
func (t *Table) unansweredNotes() []string {
	var out []string
	for _, r := range t.Rows {
		for _, cols := range [][]string{t.Tasks, t.OtherTasks} {
			for _, task := range cols {
				tr := r.System.Tasks[task]
				if n := results.UnansweredNote(task, tr.Unanswered, tr.Queries); n != "" {
					out = append(out, r.System.FullName()+" on "+n)
				}
			}
		}
	}
	return out
}

// shallowNotes say, for each shown system that ranks fewer documents per
// query than the table's metric reaches (Recall@100 of a list of 10),
// on which tasks and that the metric counts those: R2MED's reranker
// files rank their retriever's top 10 (their Recall@100 is their
// Recall@10), and our runs kept shallower than k (TaskResult.Depth).
func (t *Table) shallowNotes() []string {
	k := t.metricK()
	var out []string
	for _, r := range t.Rows {
		s := r.System
		if s.Published && s.Kind == Reranker && s.TopK > 0 && s.TopK < k {
			out = append(out, s.FullName()+" (R2MED's reranker files: its retriever's top "+strconv.Itoa(s.TopK)+" reranked) "+results.ShallowNote(s.TopK, t.Metric.Label))
			continue
		}
		byDepth := map[int][]string{}
		var depths []int
		for _, cols := range [][]string{t.Tasks, t.OtherTasks} {
			for _, task := range cols {
				if d := s.Tasks[task].Depth; d > 0 && d < k {
					if byDepth[d] == nil {
						depths = append(depths, d)
					}
					byDepth[d] = append(byDepth[d], task)
				}
			}
		}
		for _, d := range depths {
			out = append(out, s.FullName()+" on "+strings.Join(byDepth[d], ", ")+" "+results.ShallowNote(d, t.Metric.Label))
		}
	}
	return out
}

// RankNotes say where shown rows print the same average and hold
// different ranks: the ranking is by the unrounded average, as R2MED's
// summary ranks hyde/llama-70b → nv 12th and hyde/qwq-32b → nv 13th,
// both 36.82, so the note gives the averages to four decimals. Under
// Borda the ranks are by Borda points, and there is nothing to say.
func (t *Table) RankNotes() []string {
	if t.Ranking != ByAverage {
		return nil
	}
	var order []string
	groups := map[string][]Row{}
	for _, r := range t.Rows {
		if r.Rank == 0 || r.AverageOnly {
			continue
		}
		p := Pct(r.Mean)
		if groups[p] == nil {
			order = append(order, p)
		}
		groups[p] = append(groups[p], r)
	}
	var out []string
	for _, p := range order {
		g := groups[p]
		slices.SortStableFunc(g, func(a, b Row) int { return a.Rank - b.Rank })
		if g[0].Rank == g[len(g)-1].Rank {
			continue
		}
		// Four decimals, more where four would print two ranks alike.
		digits := 4
		for ; digits < 10; digits++ {
			seen := map[string]bool{}
			for _, r := range g {
				seen[strconv.FormatFloat(r.Mean*100, 'f', digits, 64)+"#"+strconv.Itoa(r.Rank)] = true
			}
			distinct := map[string]bool{}
			for _, r := range g {
				distinct[strconv.FormatFloat(r.Mean*100, 'f', digits, 64)] = true
			}
			if len(distinct) == len(seen) {
				break
			}
		}
		var each []string
		for _, r := range g {
			each = append(each, fmt.Sprintf("%s for %s (#%d)", strconv.FormatFloat(r.Mean*100, 'f', digits, 64), r.System.FullName(), r.Rank))
		}
		out = append(out, fmt.Sprintf("ranked by the unrounded average, as R2MED ranks: %s is %s", p, strings.Join(each, ", ")))
	}
	return out
}

// CutLegend explains a name cut to sysname.Width.
var CutLegend = fmt.Sprintf("%s: a name over %d characters cut in its middle; whole on hover in the report and viewer and in --format csv or json", sysname.Ellipsis, sysname.Width)

func (t *Table) anyCut() bool {
	for _, r := range t.Rows {
		if r.System.Cut() {
			return true
		}
	}
	return false
}

// cutNames are the shown names that are cut, each with the whole name
// ("hyde/gpt4 → rrf(bm2…deepseek-r1@20 #3f2a is hyde/gpt4 → …"), for
// the metadata of a table file.
func (t *Table) cutNames() []string {
	var out []string
	for _, r := range t.Rows {
		if r.System.Cut() {
			out = append(out, r.System.DisplayName()+" is "+r.System.FullName())
		}
	}
	return out
}

func (t *Table) writeLegend(w io.Writer, prefix string) error {
	if !t.hasLegend() {
		return nil // R2MED's own table, line for line
	}
	for _, l := range t.Legend() {
		if _, err := fmt.Fprintln(w, prefix+l); err != nil {
			return err
		}
	}
	return nil
}

// hasLegend reports whether the table needs its legend: anything beyond
// R2MED's own published table.
func (t *Table) hasLegend() bool {
	return t.Baseline != "" || t.mixed() || len(t.OtherTasks) > 0 || t.Costs || t.BoardSize > len(t.Rows) || t.anyCut() || len(t.twinNotes()) > 0 || len(t.depthNotes()) > 0 || len(t.RankNotes()) > 0
}

func (t *Table) mixed() bool {
	for _, r := range t.Rows {
		if !r.System.Published {
			return true
		}
	}
	return false
}

func rankText(r Row) string {
	if r.Rank == 0 {
		return "—"
	}
	return strconv.Itoa(r.Rank)
}

func bordaText(r Row) string {
	if !r.Complete {
		return "—"
	}
	return strconv.FormatFloat(r.Borda, 'f', 2, 64)
}

// writeMarkdown prints R2MED's table in the form of the reference notes:
// "| # | system | Biology | … | Avg |", the best value of each column in
// bold. Our systems are marked "(ours)", external ones "(external)"; a
// table of published systems only is the published table line for line
// but for the bold. A name cut to sysname.Width is given whole in an
// HTML comment above the table.
func (t *Table) writeMarkdown(w io.Writer) error {
	var b strings.Builder
	// Cut names whole, where a renderer shows nothing.
	for _, c := range t.cutNames() {
		b.WriteString("<!-- " + strings.ReplaceAll(c, "--", "- -") + " -->\n")
	}
	b.WriteString("| # | system |")
	sep := "|---|---|"
	for _, task := range t.Tasks {
		b.WriteString(" " + task + " |")
		sep += "---:|"
	}
	b.WriteString(" Avg |")
	sep += "---:|"
	if t.Ranking == ByBorda {
		b.WriteString(" Borda |")
		sep += "---:|"
	}
	for _, task := range t.OtherTasks {
		b.WriteString(" " + task + " |")
		sep += "---:|"
	}
	for _, c := range t.CostColumns() {
		b.WriteString(" " + c + " |")
		sep += "---:|"
	}
	b.WriteString("\n" + sep + "\n")
	bold := func(text string, best bool) string {
		if best {
			return "**" + text + "**"
		}
		return text
	}
	for _, r := range t.Rows {
		name := r.System.DisplayName()
		switch r.System.Origin() {
		case OriginOurs:
			name += " (ours)"
		case OriginExternal:
			name += " (external)"
		}
		fmt.Fprintf(&b, "| %s | %s |", rankText(r), strings.ReplaceAll(name, "|", `\|`))
		for j, s := range r.Scores {
			b.WriteString(" " + bold(CellText(s), s.OK && AtBest(s.Value, t.Best[j])) + " |")
		}
		b.WriteString(" " + bold(t.AverageText(r), t.IsBest(r)) + " |")
		if t.Ranking == ByBorda {
			b.WriteString(" " + bordaText(r) + " |")
		}
		for j, s := range r.Other {
			b.WriteString(" " + bold(CellText(s), s.OK && AtBest(s.Value, t.OtherBest[j])) + " |")
		}
		for _, c := range t.CostCells(r) {
			b.WriteString(" " + c + " |")
		}
		b.WriteByte('\n')
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	if t.hasLegend() {
		if _, err := io.WriteString(w, "\n"); err != nil {
			return err
		}
	}
	return t.writeLegend(w, "- ")
}

func (t *Table) writeCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	head := []string{"rank", "system", "id", "kind", "source"}
	head = append(head, t.Tasks...)
	head = append(head, "avg", "tasks")
	if t.Ranking == ByBorda {
		head = append(head, "borda")
	}
	head = append(head, t.OtherTasks...)
	head = append(head, "printed_avg", "reference", "settings")
	if t.Baseline != "" {
		head = append(head, "marks")
	}
	if t.Metric.Key == "mrr" {
		head = append(head, "mrr_labels")
	}
	if t.Costs {
		head = append(head, "usd_per_query", "tokens_per_query", "seconds_per_query")
	}
	// What the notes under the table say of our runs, by task, in columns
	// of their own where some row has any.
	var anyUnanswered, anyShallow bool
	for _, r := range t.Rows {
		u, s := t.rowCounts(r)
		anyUnanswered, anyShallow = anyUnanswered || u != nil, anyShallow || s != nil
	}
	if anyUnanswered {
		head = append(head, "queries_without_results")
	}
	if anyShallow {
		head = append(head, "shallow_depths")
	}
	if err := cw.Write(head); err != nil {
		return err
	}
	for _, r := range t.Rows {
		rank := ""
		if r.Rank > 0 {
			rank = strconv.Itoa(r.Rank)
		}
		line := []string{rank, r.System.Name, r.System.ID, string(r.System.Kind), string(r.System.Origin())}
		var marks []string
		for j, s := range r.Scores {
			if s.OK {
				line = append(line, s.Number())
			} else {
				line = append(line, "")
			}
			if s.Mark != "" {
				marks = append(marks, t.Tasks[j]+s.Mark)
			}
		}
		avg := ""
		if r.ranked(ByAverage) {
			avg = r.AverageNumber()
		}
		line = append(line, avg, strconv.Itoa(r.Have))
		if t.Ranking == ByBorda {
			b := ""
			if r.Complete {
				b = strconv.FormatFloat(r.Borda, 'f', 4, 64)
			}
			line = append(line, b)
		}
		for j, s := range r.Other {
			if s.OK {
				line = append(line, s.Number())
			} else {
				line = append(line, "")
			}
			if s.Mark != "" {
				marks = append(marks, t.OtherTasks[j]+s.Mark)
			}
		}
		printed, ref := "", ""
		if e := r.System.External; e != nil {
			printed, ref = e.PrintedText(), e.Source()
			if e.AverageComputed || t.Family != "" || t.Subset {
				printed = "" // none printed, or not over this view's tasks
			}
		}
		for _, e := range r.System.Reprinted {
			if ref != "" {
				ref += " | "
			}
			ref += "also printed in " + e.Source()
		}
		line = append(line, printed, ref, r.System.SettingsText())
		if t.Baseline != "" {
			line = append(line, strings.Join(marks, " "))
		}
		if t.Metric.Key == "mrr" {
			var labels []string
			for task, l := range t.labels(r) {
				labels = append(labels, task+"="+l)
			}
			slices.Sort(labels)
			line = append(line, strings.Join(labels, " "))
		}
		if t.Costs {
			usd, tok, sec := "", "", ""
			if c := r.Cost; c != nil {
				tok, sec = strconv.FormatFloat(c.Tokens(), 'f', -1, 64), strconv.FormatFloat(c.Seconds, 'f', -1, 64)
				if c.USD != nil {
					usd = strconv.FormatFloat(*c.USD, 'f', -1, 64)
				}
			}
			line = append(line, usd, tok, sec)
		}
		u, s := t.rowCounts(r)
		if anyUnanswered {
			line = append(line, t.byTaskText(u))
		}
		if anyShallow {
			line = append(line, t.byTaskText(s))
		}
		if err := cw.Write(line); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// byTaskText writes counts by task as the csv format's label columns do,
// in the table's column order: "Biology=10 Bioinformatics=10".
func (t *Table) byTaskText(m map[string]int) string {
	var out []string
	for _, cols := range [][]string{t.Tasks, t.OtherTasks} {
		for _, task := range cols {
			if n, ok := m[task]; ok {
				out = append(out, task+"="+strconv.Itoa(n))
			}
		}
	}
	return strings.Join(out, " ")
}

// JSONTable is the JSON form of a Table.
type JSONTable struct {
	Metric  string `json:"metric"` // R2MED key, "ndcg_at_10"
	Label   string `json:"label"`  // "nDCG@10"
	Family  string `json:"family,omitempty"`
	Ranking string `json:"ranking"`
	// Tasks are the R2MED columns the average is over; OtherTasks are our
	// runs' other data (demo, NFCorpus…), scored in Scores too.
	Tasks      []string  `json:"tasks"`
	OtherTasks []string  `json:"other_tasks"`
	Baseline   string    `json:"baseline,omitempty"`
	Test       string    `json:"test,omitempty"`
	Rows       []JSONRow `json:"rows"`
}

// JSONRow is one row of JSONTable. Scores are the stored values (0–1),
// null where missing; Average is R2MED's reported figure (×100, two
// decimals), null unless every task is there (or, for an average-only
// external row, the printed one).
type JSONRow struct {
	Rank      int                 `json:"rank,omitempty"`
	ID        string              `json:"id"`
	Name      string              `json:"name"`
	Kind      Kind                `json:"kind"`
	Source    Origin              `json:"source"` // ours, published or external
	Published bool                `json:"published"`
	Retriever string              `json:"retriever,omitempty"`
	GARMethod string              `json:"gar_method,omitempty"`
	GARLLM    string              `json:"gar_llm,omitempty"`
	Reranker  string              `json:"reranker,omitempty"`
	TopK      int                 `json:"topk,omitempty"`
	Scores    map[string]*float64 `json:"scores"`
	// Marks and P are the cells' significance against the baseline
	// (tested cells only).
	Marks       map[string]string  `json:"marks,omitempty"`
	P           map[string]float64 `json:"p,omitempty"`
	Have        int                `json:"tasks_present"`
	Complete    bool               `json:"complete"`
	AverageOnly bool               `json:"average_only,omitempty"`
	Mean        *float64           `json:"mean"`
	Average     *float64           `json:"average"`
	Borda       *float64           `json:"borda,omitempty"`
	External    *External          `json:"external,omitempty"`
	// Reprinted are later sources that printed a published system's
	// numbers again (System.Reprinted).
	Reprinted []External        `json:"reprinted,omitempty"`
	Sources   map[string]string `json:"sources"`
	// Settings is our system's full settings (System.SettingsText).
	Settings string `json:"settings,omitempty"`
	// Cost is what our run's model calls cost per query over the tasks
	// shown (usage.CostOf); absent where no manifest recorded it.
	Cost *usage.Cost `json:"cost,omitempty"`
	// MRRLabels name, by task, the scores that are not the metric as
	// the column names it (Score.Label): {"BRIGHT-biology": "MRR@100"}
	// for a BRIGHT run kept 100 deep in an MRR table.
	MRRLabels map[string]string `json:"mrr_labels,omitempty"`
	// Unanswered counts, by task, the judged queries our run left without
	// a result (they count 0 in its mean), and ShallowDepths the depth of
	// a run ranking fewer documents per query than the table's metric
	// reaches (Recall@100 of a list of 10): what the notes under the
	// table say, by task.
	Unanswered    map[string]int `json:"queries_without_results,omitempty"`
	ShallowDepths map[string]int `json:"shallow_depths,omitempty"`
}

// rowCounts are, by task shown, the judged queries row's run left
// without a result and, where it ranks fewer documents than the metric's
// k, its depth (the notes' unansweredNotes and shallowNotes, by task).
func (t *Table) rowCounts(r Row) (unanswered, shallow map[string]int) {
	k := t.metricK()
	for _, cols := range [][]string{t.Tasks, t.OtherTasks} {
		for _, task := range cols {
			tr, ok := r.System.Tasks[task]
			if !ok {
				continue
			}
			if tr.Unanswered > 0 {
				if unanswered == nil {
					unanswered = map[string]int{}
				}
				unanswered[task] = tr.Unanswered
			}
			d := tr.Depth
			if s := r.System; s.Published && s.Kind == Reranker {
				d = s.TopK
			}
			if d > 0 && d < k {
				if shallow == nil {
					shallow = map[string]int{}
				}
				shallow[task] = d
			}
		}
	}
	return unanswered, shallow
}

// metricK is the k of the table's metric (100 for recall@100), 0 for
// one without (MRR).
func (t *Table) metricK() int {
	_, cut, _ := strings.Cut(t.Metric.Key, "_at_")
	k, _ := strconv.Atoi(cut)
	return k
}

// JSON returns the table in its JSON form.
func (t *Table) JSON() JSONTable {
	out := JSONTable{Metric: t.Metric.Key, Label: t.Metric.Label, Family: string(t.Family), Ranking: string(t.Ranking),
		Tasks: t.Tasks, OtherTasks: append([]string{}, t.OtherTasks...), Baseline: t.Baseline, Test: t.Test, Rows: []JSONRow{}}
	for _, r := range t.Rows {
		s := r.System
		jr := JSONRow{Rank: r.Rank, ID: s.ID, Name: s.Name, Kind: s.Kind, Source: s.Origin(), Published: s.Published, Retriever: s.Retriever,
			GARMethod: s.GARMethod, GARLLM: s.GARLLM, Reranker: s.Reranker, TopK: s.TopK, External: s.External, Reprinted: s.Reprinted, Settings: s.SettingsText(),
			Scores: map[string]*float64{}, Have: r.Have, Complete: r.Complete, AverageOnly: r.AverageOnly, Sources: map[string]string{}, Cost: r.Cost}
		cell := func(task string, c Score) {
			jr.Scores[task] = nil
			if c.OK {
				v := c.Value
				jr.Scores[task] = &v
			}
			if tr, ok := s.Tasks[task]; ok {
				jr.Sources[task] = tr.Source
			}
			if tested(c) {
				if jr.P == nil {
					jr.P, jr.Marks = map[string]float64{}, map[string]string{}
				}
				jr.P[task], jr.Marks[task] = c.P, c.Mark
			}
		}
		for j, task := range t.Tasks {
			cell(task, r.Scores[j])
		}
		for j, task := range t.OtherTasks {
			cell(task, r.Other[j])
		}
		if l := t.labels(r); len(l) > 0 {
			jr.MRRLabels = l
		}
		jr.Unanswered, jr.ShallowDepths = t.rowCounts(r)
		if r.ranked(ByAverage) {
			m, a := r.Mean, r.Average
			jr.Mean, jr.Average = &m, &a
			if t.Ranking == ByBorda && r.Complete {
				b := r.Borda
				jr.Borda = &b
			}
		}
		out.Rows = append(out.Rows, jr)
	}
	return out
}

func (t *Table) writeJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(t.JSON())
}
