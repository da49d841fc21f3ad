package significance

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/r2med/r2med/internal/errtext"
	"github.com/r2med/r2med/internal/numtext"
	"github.com/r2med/r2med/internal/textwrap"
	"github.com/r2med/r2med/results"
	"github.com/r2med/r2med/usage"
)

// System is one system's per-query values of a metric, by query key (a
// query id, or "task/id" when several tasks are pooled).
type System struct {
	Name string
	// FullName is the whole name where Name is cut to fit; "" otherwise.
	FullName string
	// Apart is what sets the system apart from others of its name
	// (Input.Apart); "" otherwise.
	Apart  string
	Values map[string]float64
	// Unanswered are the judged queries the system's runs returned
	// nothing for (their value is 0 in Values); Gather fills it.
	Unanswered []string
	// Unjudged are the queries the system's runs rank that the
	// judgments lack: they are in no test; Gather fills it.
	Unjudged []string
	// Cost is what the system's model calls cost per query on the runs
	// compared (their manifests' usage); nil when none recorded it.
	Cost *usage.Cost
	// MRRLabels name, by task, the system's MRR where it is not the
	// benchmark's (results.MRRLabel: "MRR@100" for a BRIGHT run 100
	// deep); nil for other measures and where every one is.
	MRRLabels map[string]string
}

// Grouping assigns queries to groups for a breakdown: R2MED's body_system
// field, the task family, the task. Queries it does not name fall in
// "(none)".
type Grouping struct {
	Name string
	Of   map[string]string
}

// Report compares every system with the first, the baseline.
type Report struct {
	Metric   string `json:"metric"`
	Baseline string `json:"baseline"`
	// Queries is how many queries are compared: every query any system
	// has a value for. A system lacking one of them scores 0 there
	// (trec_eval -c's rule); Missing counts those per system.
	Queries int            `json:"queries"`
	Missing map[string]int `json:"missing"`
	// Unjudged lists, per system, the queries its runs rank that the
	// judgments lack (System.Unjudged): left out, as trec_eval leaves
	// them out.
	Unjudged map[string][]string `json:"unjudged,omitempty"`
	// Pooled names the tasks whose queries the overall test pools, when
	// there are several; the breakdown by task then tests each alone.
	Pooled []string `json:"pooled_tasks,omitempty"`
	Rows   []Row    `json:"rows"`
	// Costs are the systems' cost per query by name (the baseline's
	// included), for those whose runs recorded their usage.
	Costs      map[string]usage.Cost `json:"costs,omitempty"`
	Breakdowns []Breakdown           `json:"breakdowns,omitempty"`
	// AllPairs compares every system with every other (the baseline
	// too), per task and pooled: ranx's comparison.
	AllPairs *AllPairs `json:"all_pairs,omitempty"`
	// FullNames gives the whole name of each system whose name the
	// report shows cut (sysname.Short), by the name shown.
	FullNames map[string]string `json:"full_names,omitempty"`
	// Apart gives, by name, what sets each system apart from others of
	// its name told apart by a hash of their settings ("top_k=10").
	Apart map[string]string `json:"apart,omitempty"`
	// MRRLabels gives, by name, System.MRRLabels: {"bm25 #5729":
	// {"BRIGHT-biology": "MRR@100"}}.
	MRRLabels map[string]map[string]string `json:"mrr_labels,omitempty"`
}

// Row is one system against the baseline.
type Row struct {
	System string `json:"system"`
	Result
	// HolmP is the randomization p-value adjusted by Holm–Bonferroni over
	// the systems compared with the baseline (the rows of one table).
	HolmP float64 `json:"holm_p"`
	// Untested marks a group too small to test (fewer than MinQueries
	// queries): means and wins are given, p-values, interval and d not.
	Untested bool `json:"untested,omitempty"`
	// TopGains and TopLosses are the queries where the system beats or trails
	// the baseline most, largest first (at most Extremes each).
	TopGains  []QueryDiff `json:"top_gains,omitempty"`
	TopLosses []QueryDiff `json:"top_losses,omitempty"`
}

// QueryDiff is one query's values.
type QueryDiff struct {
	Query    string  `json:"query"`
	Baseline float64 `json:"baseline"`
	System   float64 `json:"system"`
}

// Breakdown is the comparison within each group of a Grouping.
type Breakdown struct {
	By     string  `json:"by"`
	Groups []Group `json:"groups"`
}

// Group is the comparison on one group's queries.
type Group struct {
	Name    string `json:"name"`
	Queries int    `json:"queries"`
	Rows    []Row  `json:"rows"`
}

// Extremes is how many best and worst queries a Row lists.
const Extremes = 5

// MinQueries is the fewest queries a breakdown group is tested on;
// smaller groups are listed with their means and wins only.
const MinQueries = 5

// Compare tests every system after the first against the first on the
// union of their queries, adjusts the randomization p-values with Holm,
// and repeats the comparison inside each group of each grouping (Holm
// within each group's rows).
func Compare(metric string, systems []System, groupings []Grouping, opt Options) (*Report, error) {
	if len(systems) < 2 {
		return nil, fmt.Errorf("significance: compare needs a baseline and at least one system, got %d", len(systems))
	}
	keys := map[string]bool{}
	for _, s := range systems {
		for k := range s.Values {
			keys[k] = true
		}
	}
	queries := make([]string, 0, len(keys))
	for k := range keys {
		queries = append(queries, k)
	}
	slices.Sort(queries)
	rep := &Report{Metric: metric, Baseline: systems[0].Name, Queries: len(queries), Missing: map[string]int{}}
	for _, s := range systems {
		if s.FullName != "" && s.FullName != s.Name {
			if rep.FullNames == nil {
				rep.FullNames = map[string]string{}
			}
			rep.FullNames[s.Name] = s.FullName
		}
		if s.Apart != "" {
			if rep.Apart == nil {
				rep.Apart = map[string]string{}
			}
			rep.Apart[s.Name] = s.Apart
		}
		if s.MRRLabels != nil {
			if rep.MRRLabels == nil {
				rep.MRRLabels = map[string]map[string]string{}
			}
			rep.MRRLabels[s.Name] = s.MRRLabels
		}
		if s.Cost != nil {
			if rep.Costs == nil {
				rep.Costs = map[string]usage.Cost{}
			}
			rep.Costs[s.Name] = *s.Cost
		}
		if len(s.Unjudged) > 0 {
			if rep.Unjudged == nil {
				rep.Unjudged = map[string][]string{}
			}
			rep.Unjudged[s.Name] = s.Unjudged
		}
		rep.Missing[s.Name] += len(s.Unanswered)
		for _, q := range queries {
			if _, ok := s.Values[q]; !ok {
				rep.Missing[s.Name]++
			}
		}
	}
	var err error
	if rep.Rows, err = compareOn(queries, systems, opt, true); err != nil {
		return nil, err
	}
	if rep.AllPairs, err = allPairs(queries, systems, groupings, opt); err != nil {
		return nil, err
	}
	for _, g := range groupings {
		members := map[string][]string{}
		for _, q := range queries {
			name, ok := g.Of[q]
			if !ok || name == "" {
				name = "(none)"
			}
			members[name] = append(members[name], q)
		}
		if len(members) < 2 {
			continue // one group (a single task, no body_system) breaks nothing down
		}
		b := Breakdown{By: g.Name}
		if g.Name == TaskGrouping {
			rep.Pooled = slices.Sorted(maps.Keys(members))
		}
		for name, qs := range members {
			rows, err := compareOn(qs, systems, opt, len(qs) >= MinQueries)
			if err != nil {
				return nil, err
			}
			b.Groups = append(b.Groups, Group{Name: name, Queries: len(qs), Rows: rows})
		}
		slices.SortFunc(b.Groups, func(x, y Group) int {
			return cmp.Or(cmp.Compare(y.Queries, x.Queries), strings.Compare(x.Name, y.Name))
		})
		rep.Breakdowns = append(rep.Breakdowns, b)
	}
	return rep, nil
}

// TaskGrouping is the name of the breakdown by task; Compare reports the
// tasks it pools from it.
const TaskGrouping = "task"

func compareOn(queries []string, systems []System, opt Options, test bool) ([]Row, error) {
	vals := func(s System) []float64 {
		v := make([]float64, len(queries))
		for i, q := range queries {
			v[i] = s.Values[q]
		}
		return v
	}
	base := vals(systems[0])
	var rows []Row
	var ps []float64
	for _, s := range systems[1:] {
		x := vals(s)
		o := opt
		if !test {
			o.Permutations, o.Resamples = 1, 1 // means and wins only; the tests are not shown
		}
		r, err := Paired(base, x, o)
		if err != nil {
			return nil, fmt.Errorf("%s vs %s: %w", s.Name, systems[0].Name, err)
		}
		row := Row{System: s.Name, Result: r, Untested: !test}
		if !test {
			row.Result = Result{N: r.N, MeanA: r.MeanA, MeanB: r.MeanB, Diff: r.Diff, Wins: r.Wins, Losses: r.Losses, Ties: r.Ties, Level: r.Level}
		}
		diffs := make([]QueryDiff, len(queries))
		for i, q := range queries {
			diffs[i] = QueryDiff{q, base[i], x[i]}
		}
		slices.SortStableFunc(diffs, func(a, b QueryDiff) int {
			return cmp.Compare(b.System-b.Baseline, a.System-a.Baseline)
		})
		for _, d := range diffs {
			if d.System > d.Baseline && len(row.TopGains) < Extremes {
				row.TopGains = append(row.TopGains, d)
			}
		}
		for i := len(diffs) - 1; i >= 0 && len(row.TopLosses) < Extremes; i-- {
			if d := diffs[i]; d.System < d.Baseline {
				row.TopLosses = append(row.TopLosses, d)
			}
		}
		rows = append(rows, row)
		ps = append(ps, r.RandP)
	}
	for i, p := range Holm(ps) {
		if test {
			rows[i].HolmP = p
		}
	}
	return rows, nil
}

// Format is a report format.
type Format string

// The formats Report.Write renders.
const (
	Text     Format = "text"     // aligned columns and a legend of the tests
	Markdown Format = "markdown" // a table per comparison, for issues and papers
	JSON     Format = "json"     // the Report as it is, for scripts
	LaTeX    Format = "latex"    // a booktabs table per comparison, for papers
)

// ParseFormat reads a format name.
func ParseFormat(s string) (Format, error) {
	switch f := Format(strings.ToLower(strings.TrimSpace(s))); f {
	case "", "table", Text:
		return Text, nil
	case "md", Markdown:
		return Markdown, nil
	case "tex", LaTeX:
		return LaTeX, nil
	case JSON:
		return JSON, nil
	}
	return "", fmt.Errorf("unknown format %q; want text, markdown, json or latex", s)
}

// WriteAll renders reports of several metrics: the all-pairs table of
// every metric together, then each report's comparison with the
// baseline. As JSON, one report is an object and several an array.
func WriteAll(w io.Writer, reps []*Report, f Format) error { return WriteAllWith(w, reps, f, 0) }

// WriteAllWith is WriteAll with the text's all-pairs table split to keep
// to width columns (0: one table).
func WriteAllWith(w io.Writer, reps []*Report, f Format, width int) error {
	if f == JSON && len(reps) > 1 {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(reps)
	}
	if f != JSON {
		if err := writePairs(w, reps, f, width); err != nil {
			return err
		}
	}
	for _, r := range reps {
		if f != JSON {
			if _, err := io.WriteString(w, "\n"); err != nil {
				return err
			}
		}
		if err := r.write(w, f, width); err != nil {
			return err
		}
	}
	return nil
}

// exact reports whether every tested row's randomization p-value was
// enumerated exactly, and the largest number of random flips drawn; same,
// whether a tested row has no query that differs (its t-test undefined).
func (r *Report) exact() (all bool, perms int, same bool) {
	all = true
	check := func(rows []Row) {
		for _, row := range rows {
			if row.Untested {
				continue
			}
			if !row.Exact {
				all = false
				perms = max(perms, row.Permutations)
			}
			same = same || row.Wins+row.Losses == 0
		}
	}
	check(r.Rows)
	for _, b := range r.Breakdowns {
		for _, g := range b.Groups {
			check(g.Rows)
		}
	}
	return all, perms, same
}

// Footer explains the columns and says how the randomization test ran:
// "exact" only when every p-value was enumerated over all sign flips.
func (r *Report) Footer() string {
	all, perms, same := r.exact()
	rand := "rand = paired randomization test, exact (every sign flip enumerated)"
	if !all {
		rand = fmt.Sprintf("rand = paired randomization test, %d random sign flips (exact, marked so, where at most %d queries differ)", perms, ExactLimit)
	}
	t := "t = paired t-test"
	if same {
		t += " (p 1 where no query differs; SciPy's ttest_rel gives nan there)"
	}
	return "p: two-sided; " + rand + ", " + t + ", Holm = rand p adjusted over the systems compared with the baseline (" + Mark05 + " Holm p < 0.05, " + Mark01 + " Holm p < 0.01); d = Cohen's d (paired; — where the differences do not vary); CI = bootstrap percentile interval of the mean difference; groups under " + fmt.Sprint(MinQueries) + " queries are listed without tests"
}

func (r *Report) scope() string {
	if len(r.Pooled) > 1 {
		return fmt.Sprintf("%d queries pooled over %d tasks (%s; each task is tested alone in the breakdown by task)", r.Queries, len(r.Pooled), strings.Join(r.Pooled, ", "))
	}
	return fmt.Sprintf("%d queries", r.Queries)
}

// Write renders the report.
func (r *Report) Write(w io.Writer, f Format) error { return r.write(w, f, 0) }

// write renders the report, its text tables' system names wrapped to keep
// to width columns (0: unbounded).
func (r *Report) write(w io.Writer, f Format, width int) error {
	switch f {
	case JSON:
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(r)
	case LaTeX:
		return r.writeLaTeX(w)
	}
	md := f == Markdown
	var b strings.Builder
	if md {
		fmt.Fprintf(&b, "## %s: systems vs baseline %s (%s)\n\n", r.Metric, r.Baseline, r.scope())
	} else {
		for _, l := range textwrap.Lines(fmt.Sprintf("%s: systems vs baseline %s on %s (differences are system − baseline)", r.Metric, r.Baseline, r.scope()), width) {
			b.WriteString(l + "\n")
		}
	}
	// In the systems' order: ranging over the map would shuffle the notes
	// from one run to the next.
	names := []string{r.Baseline}
	for _, row := range r.Rows {
		names = append(names, row.System)
	}
	for _, name := range names {
		if n := r.Missing[name]; n > 0 {
			for _, l := range textwrap.Lines(fmt.Sprintf("note: %s has no value for %d of the %d queries (unanswered); they count as 0", name, n, r.Queries), width) {
				b.WriteString(l + "\n")
			}
		}
		if qs := r.Unjudged[name]; len(qs) > 0 {
			for _, l := range textwrap.Lines(fmt.Sprintf("note: %s ranks %d %s the judgments lack (%s); %s left out, as trec_eval leaves them",
				name, len(qs), errtext.Plural(len(qs), "query", "queries"), errtext.QuoteList(qs, 3), errtext.Plural(len(qs), "it is", "they are")), width) {
				b.WriteString(l + "\n")
			}
		}
	}
	for _, l := range r.labelNotes() {
		for _, l := range textwrap.Lines("note: "+l, width) {
			b.WriteString(l + "\n")
		}
	}
	if !md {
		b.WriteByte('\n')
	}
	writeRows(&b, r.Rows, md, true, width)
	r.writeCosts(&b, names, md)
	for _, br := range r.Breakdowns {
		if md {
			fmt.Fprintf(&b, "\n### By %s\n\n", br.By)
		} else {
			fmt.Fprintf(&b, "\nBy %s:\n", br.By)
		}
		for _, g := range br.Groups {
			small := ""
			if g.Queries < MinQueries {
				small = ", too few to test"
			}
			n := fmt.Sprintf("%d %s", g.Queries, errtext.Plural(g.Queries, "query", "queries"))
			if md {
				fmt.Fprintf(&b, "\n**%s** (%s%s)\n\n", g.Name, n, small)
			} else {
				fmt.Fprintf(&b, "\n  %s (%s%s)\n", g.Name, n, small)
			}
			writeRows(&b, g.Rows, md, false, width)
		}
	}
	b.WriteString("\n")
	for _, l := range textwrap.Lines(r.Footer(), width) {
		b.WriteString(l + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// labelCaption is labelNotes as sentences for a caption, "" without
// any.
func (r *Report) labelCaption() string {
	var out string
	for _, l := range r.labelNotes() {
		out += " " + l + "."
	}
	return out
}

// labelNotes say, a line per system and label in the systems' order,
// which of their MRRs are not the benchmark's (MRRLabels,
// results.MRRLabelNote).
func (r *Report) labelNotes() []string {
	var out []string
	names := []string{r.Baseline}
	for _, row := range r.Rows {
		names = append(names, row.System)
	}
	for _, name := range names {
		on := map[string][]string{}
		var labels []string
		for _, task := range slices.Sorted(maps.Keys(r.MRRLabels[name])) {
			l := r.MRRLabels[name][task]
			if on[l] == nil {
				labels = append(labels, l)
			}
			on[l] = append(on[l], task)
		}
		for _, l := range labels {
			out = append(out, results.MRRLabelNote(name, on[l], l))
		}
	}
	return out
}

// writeCosts prints the systems' cost per query beside the comparison,
// when some run recorded its usage: dollars (when priced), tokens and
// seconds of model calls.
func (r *Report) writeCosts(b *strings.Builder, names []string, md bool) {
	spent := false
	for _, c := range r.Costs {
		spent = spent || c.Tokens() > 0 || c.Seconds > 0
	}
	if !spent {
		return // no run called a model: a table of zeros says nothing
	}
	if md {
		b.WriteString("\nCost per query of the model calls (on the runs compared):\n\n| system | $/q | tok/q | s/q |\n|---|---|---|---|\n")
	} else {
		b.WriteString("\nCost per query of the model calls (on the runs compared):\n")
	}
	rows := [][]string{{"system", "$/q", "tok/q", "s/q"}}
	for _, name := range names {
		row := []string{name, "—", "—", "—"}
		if c, ok := r.Costs[name]; ok {
			if c.USD != nil {
				row[1] = usage.USDNumber(*c.USD)
			}
			row[2], row[3] = strconv.FormatFloat(c.Tokens(), 'f', 0, 64), strconv.FormatFloat(c.Seconds, 'g', 3, 64)
		}
		if md {
			fmt.Fprintf(b, "| %s | %s |\n", strings.ReplaceAll(row[0], "|", `\|`), strings.Join(row[1:], " | "))
			continue
		}
		rows = append(rows, row)
	}
	if md {
		return
	}
	width := make([]int, 4)
	for _, row := range rows {
		for i, c := range row {
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	for _, row := range rows {
		b.WriteString("  " + row[0] + strings.Repeat(" ", width[0]-utf8.RuneCountInString(row[0])))
		for i := 1; i < 4; i++ {
			b.WriteString("  " + strings.Repeat(" ", width[i]-utf8.RuneCountInString(row[i])) + row[i])
		}
		b.WriteByte('\n')
	}
}

func writeRows(b *strings.Builder, rows []Row, md, extremes bool, limit int) {
	head := []string{"system", "baseline", "system", "diff", "CI", "W/L/T", "rand p", "t p", "Holm p", "d"}
	var lines [][]string
	for _, r := range rows {
		if r.Untested {
			lines = append(lines, []string{r.System, f4(r.MeanA), f4(r.MeanB), signed(r.Diff), "—",
				fmt.Sprintf("%d/%d/%d", r.Wins, r.Losses, r.Ties), "—", "—", "—", "—"})
			continue
		}
		exact := ""
		if r.Exact {
			exact = " (exact)"
		}
		d := "—"
		if r.CohenDefined {
			d = signed(r.CohenD)
		}
		lines = append(lines, []string{r.System, f4(r.MeanA), f4(r.MeanB), signed(r.Diff),
			fmt.Sprintf("[%s, %s]", signed(r.CILow), signed(r.CIHigh)),
			fmt.Sprintf("%d/%d/%d", r.Wins, r.Losses, r.Ties),
			pval(r.RandP) + exact, pval(r.TTestP), pval(r.HolmP) + markOf(r.HolmP), d})
	}
	if md {
		b.WriteString("| " + strings.Join(head, " | ") + " |\n|" + strings.Repeat("---|", len(head)) + "\n")
		for _, l := range lines {
			b.WriteString("| " + strings.Join(l, " | ") + " |\n")
		}
	} else {
		width := make([]int, len(head))
		for _, l := range append([][]string{head}, lines...) {
			for i, c := range l {
				width[i] = max(width[i], len([]rune(c)))
			}
		}
		if limit > 0 {
			rest := 2
			for _, w := range width[1:] {
				rest += 2 + w
			}
			width[0] = max(min(width[0], limit-rest), min(width[0], minNameWidth))
		}
		for _, l := range append([][]string{head}, lines...) {
			for n, name := range textwrap.Name(l[0], width[0]) {
				b.WriteString("  " + name)
				if n == 0 {
					b.WriteString(strings.Repeat(" ", max(width[0]-len([]rune(name)), 0)))
					for i, c := range l[1:] {
						b.WriteString("  " + strings.Repeat(" ", width[i+1]-len([]rune(c))) + c)
					}
				}
				b.WriteByte('\n')
			}
		}
	}
	if !extremes {
		return
	}
	for _, r := range rows {
		for _, x := range []struct {
			label string
			qs    []QueryDiff
		}{{"largest gains", r.TopGains}, {"largest losses", r.TopLosses}} {
			if len(x.qs) == 0 {
				continue
			}
			var parts []string
			for _, q := range x.qs {
				part := fmt.Sprintf("%s %s→%s", q.Query, f4(q.Baseline), f4(q.System))
				if f4(q.Baseline) == f4(q.System) { // a change too small for four decimals
					part += " (Δ " + signed(q.System-q.Baseline) + ")"
				}
				parts = append(parts, part)
			}
			if md {
				fmt.Fprintf(b, "\n%s, %s: %s\n", r.System, x.label, strings.Join(parts, "; "))
			} else {
				for _, l := range textwrap.Lines(fmt.Sprintf("  %s, %s: %s", r.System, x.label, strings.Join(parts, "; ")), limit) {
					b.WriteString(l + "\n")
				}
			}
		}
	}
}

var texReplacer = strings.NewReplacer(
	`\`, `\textbackslash{}`, `&`, `\&`, `%`, `\%`, `$`, `\$`, `#`, `\#`, `_`, `\_`,
	`{`, `\{`, `}`, `\}`, `~`, `\textasciitilde{}`, `^`, `\textasciicircum{}`,
	"→", `$\rightarrow$`, "—", `---`, "–", `--`, "×", `$\times$`, "−", `$-$`, "≤", `$\leq$`,
	"…", `\ldots{}`, "†", `$^{\dagger}$`, "‡", `$^{\ddagger}$`,
)

// writeLaTeX renders the comparison with the baseline as a booktabs
// table scaled to the line width when wider: the best mean in bold,
// Holm-significant rows marked † (p < 0.05) or ‡ (p < 0.01) as
// superscripts, signed numbers in math mode alike ($-0.0046$, $+0.0031$),
// a caption naming the tests. It needs booktabs and graphicx.
func (r *Report) writeLaTeX(w io.Writer) error {
	tex := texReplacer.Replace
	var b strings.Builder
	all, perms, _ := r.exact()
	test := "two-sided paired randomization test (exact, all sign flips)"
	if !all {
		test = fmt.Sprintf("two-sided paired randomization test (%d random sign flips where more than %d queries differ)", perms, ExactLimit)
	}
	fmt.Fprintf(&b, "\\begin{table}[t]\n\\centering\n\\small\n\\caption{%s of each system against the baseline %s on %s. $^{\\dagger}$ $p<0.05$, $^{\\ddagger}$ $p<0.01$: %s, Holm--Bonferroni over the systems. $\\Delta$: mean difference with its %.0f\\%% bootstrap interval; $d$: Cohen's $d$ (paired). Best mean in bold.%s}\n",
		tex(MetricLabel(r.Metric)), tex(r.Baseline), tex(r.scope()), test, r.level()*100, tex(r.labelCaption()))
	b.WriteString("\\resizebox{\\ifdim\\width>\\linewidth\\linewidth\\else\\width\\fi}{!}{%\n\\begin{tabular}{lrrrrrr}\n\\toprule\nSystem & Mean & $\\Delta$ & CI & W/L/T & $p$ (Holm) & $d$ \\\\\n\\midrule\n")
	best := 0.0
	for _, row := range r.Rows {
		best = max(best, row.MeanA, row.MeanB)
	}
	bold := func(v float64) string {
		s := f4(v)
		if v == best {
			return `\textbf{` + s + `}`
		}
		return s
	}
	if len(r.Rows) > 0 {
		fmt.Fprintf(&b, "%s (baseline) & %s & & & & & \\\\\n", tex(r.Baseline), bold(r.Rows[0].MeanA))
	}
	for _, row := range r.Rows {
		mark := ""
		switch {
		case row.Untested:
		case row.HolmP < 0.01:
			mark = `$^{\ddagger}$`
		case row.HolmP < 0.05:
			mark = `$^{\dagger}$`
		}
		d := "--"
		if row.CohenDefined {
			d = texSigned(row.CohenD)
		}
		fmt.Fprintf(&b, "%s & %s%s & %s & [%s, %s] & %d/%d/%d & %s & %s \\\\\n", tex(row.System), bold(row.MeanB), mark,
			texSigned(row.Diff), texSigned(row.CILow), texSigned(row.CIHigh), row.Wins, row.Losses, row.Ties, texP(row.HolmP), d)
	}
	b.WriteString("\\bottomrule\n\\end{tabular}}\n\\end{table}\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// texSigned is a signed number in math mode, so that a minus and a plus
// are set alike: $-0.0046$, $+0.0031$, $-8.0 \times 10^{-6}$.
func texSigned(v float64) string { return "$" + texExp(signed(v)) + "$" }

// texP is a p-value, in math mode when written with an exponent.
func texP(p float64) string {
	s := pval(p)
	if strings.Contains(s, "e") {
		return "$" + texExp(s) + "$"
	}
	return s
}

// texExp writes a number's exponent as LaTeX sets one ("6.3e-06" is
// "6.3 \times 10^{-6}"); a number without one is left as it is.
func texExp(s string) string {
	mant, exp, ok := strings.Cut(s, "e")
	if !ok {
		return s
	}
	n, err := strconv.Atoi(exp)
	if err != nil {
		return s
	}
	return fmt.Sprintf("%s \\times 10^{%d}", mant, n)
}

func (r *Report) level() float64 {
	for _, row := range r.Rows {
		if row.Level > 0 {
			return row.Level
		}
	}
	return 0.95
}

func f4(v float64) string { return fmt.Sprintf("%.4f", v) }

// signed and pval write differences and p-values as the report and the
// viewer do (numtext): never a signed zero, never a p of 0.0000.
func signed(v float64) string { return numtext.Signed(v, 4) }

func pval(p float64) string { return numtext.P(p) }

// The marks of a row whose Holm-adjusted p is below 0.05 or 0.01, as the
// leaderboard prints them.
const (
	Mark05 = "†"
	Mark01 = "‡"
)

func markOf(p float64) string {
	switch {
	case p < 0.01:
		return " " + Mark01
	case p < 0.05:
		return " " + Mark05
	}
	return ""
}
