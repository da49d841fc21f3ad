package reproduce

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/r2med/r2med/internal/textwrap"
)

// Env is what is at hand where specs run.
type Env struct {
	// Offline allows nothing outside this machine: no server, no API key,
	// no GPU, and data only from the local Hub cache or the local data
	// folder.
	Offline bool
	// Given reports whether a flag of `r2med reproduce` was given; nil
	// means none was.
	Given func(flag string) bool
	// Getenv reads the environment; nil means os.Getenv's answer is "".
	Getenv func(string) string
}

func (e Env) given(flag string) bool { return flag != "" && e.Given != nil && e.Given(flag) }
func (e Env) env(name string) string {
	if name == "" || e.Getenv == nil {
		return ""
	}
	return e.Getenv(name)
}

// Unmet lists what the spec needs and env does not give, each as a
// phrase ("an embedding server … (--base-url)"); nil when it can run as
// far as can be told before its data is read.
func (s *Spec) Unmet(env Env) []string {
	var out []string
	n := s.Needs
	if env.Offline {
		var serves []string
		for _, sv := range n.Servers {
			serves = append(serves, sv.Serves)
		}
		switch len(serves) {
		case 0:
		case 1:
			out = append(out, "a server for "+serves[0]+" (not offline)")
		default:
			out = append(out, "servers for "+joinAnd(serves)+" (not offline)")
		}
		for _, k := range n.Keys {
			out = append(out, "the API key in "+k+" (not offline)")
		}
		if n.GPU && len(n.Servers) == 0 {
			out = append(out, "a GPU (not offline)")
		}
		if len(out) > 0 {
			return out
		}
	}
	for _, w := range n.Weights {
		// Weights r2med cannot fetch itself must be pointed at.
		if w.Pull == "" && !env.given(w.Flag) {
			out = append(out, w.Model+" (--"+w.Flag+")")
		}
	}
	if env.Offline {
		return out
	}
	for _, sv := range n.Servers {
		if env.given(sv.Flag) || env.env(sv.Env) != "" {
			continue
		}
		how := "--" + sv.Flag
		if sv.Env != "" {
			how += " or " + sv.Env
		}
		out = append(out, sv.What+" ("+how+")")
	}
	for _, k := range n.Keys {
		if env.env(k) == "" {
			out = append(out, "the API key in "+k)
		}
	}
	return out
}

// Report is what running one spec gave.
type Report struct {
	Spec *Spec `json:"-"`
	// Unmet lists what the spec needs and did not have; it did not run.
	Unmet []string     `json:"unmet,omitempty"`
	Tasks []TaskReport `json:"tasks,omitempty"`
}

// TaskReport is one task of a spec.
type TaskReport struct {
	Task string `json:"task"`
	// Dir is the run's directory; Revision the data's commit when read
	// from the Hub.
	Dir      string  `json:"dir,omitempty"`
	Revision string  `json:"revision,omitempty"`
	Checks   []Check `json:"checks,omitempty"`
	// Unmet says why the task did not run (its data is not at hand);
	// Err why it failed.
	Unmet string `json:"unmet,omitempty"`
	Err   string `json:"error,omitempty"`
}

// Check is one metric of one task.
type Check struct {
	Metric   string  `json:"metric"`
	Expected float64 `json:"expected"`
	Got      float64 `json:"got"`
	// Missing: the run has no value for the metric, which fails.
	Missing bool `json:"missing,omitempty"`
	OK      bool `json:"ok"`
	// Tolerance is the spec's: OK is |Got − Expected| ≤ Tolerance.
	// Source is the file (and line) Expected is from.
	Tolerance float64 `json:"tolerance"`
	Source    string  `json:"source,omitempty"`
}

// Delta is got − expected.
func (c Check) Delta() float64 { return c.Got - c.Expected }

// Check compares a task's scores with the expected ones; got returns a
// metric's value and whether the run has it.
func (s *Spec) Check(task string, got func(metric string) (float64, bool)) ([]Check, error) {
	e, ok := s.Expected.Task(task)
	if !ok {
		return nil, fmt.Errorf("spec %s expects nothing of task %s", s.Name, task)
	}
	var out []Check
	for _, m := range e.Metrics() {
		want := e.Scores[m]
		v, ok := got(m)
		out = append(out, Check{Metric: m, Expected: want, Got: v, Missing: !ok, OK: ok && s.Expected.Pass(want, v), Tolerance: s.Expected.Tolerance, Source: e.Source})
	}
	return out, nil
}

// Status is a report's outcome: "pass", "fail" (a check failed or a task
// failed to run), "skip" (nothing ran) or "partial" (some tasks ran and
// passed, others could not run).
func (r *Report) Status() string {
	ran, unmet := 0, len(r.Unmet) > 0
	for _, t := range r.Tasks {
		if t.Err != "" {
			return "fail"
		}
		for _, c := range t.Checks {
			if !c.OK {
				return "fail"
			}
		}
		if t.Unmet != "" {
			unmet = true
		} else {
			ran++
		}
	}
	switch {
	case ran == 0:
		return "skip"
	case unmet:
		return "partial"
	}
	return "pass"
}

// Failed reports whether any report failed.
func Failed(reports []*Report) bool {
	for _, r := range reports {
		if r.Status() == "fail" {
			return true
		}
	}
	return false
}

// WriteTable prints each spec's tasks: per metric the expected value, the
// value got, their difference, the tolerance (within) and ✓ or ✗; for
// what did not run, what it needs; then, for each spec that ran, where its
// expected values were published and the files they are read from, what ✓
// means, and a summary. Lines under the table wrap at 120 columns.
func WriteTable(w io.Writer, reports []*Report) error {
	var t table
	var from []string
	t.row("spec", "task", "metric", "expected", "got", "delta", "within", "")
	for _, r := range reports {
		var files []string
		for _, tr := range r.Tasks {
			for _, c := range tr.Checks {
				if c.Source != "" && !slices.Contains(files, c.Source) {
					files = append(files, c.Source)
				}
			}
		}
		if ran := slices.ContainsFunc(r.Tasks, func(tr TaskReport) bool { return len(tr.Checks) > 0 }); ran {
			line := r.Spec.Name + ": expected from " + r.Spec.Source.Reference
			if r.Spec.Source.System != "" {
				line += " (" + r.Spec.Source.System + ")"
			}
			if len(files) > 0 {
				line += ", read from " + strings.Join(files, ", ")
			}
			if !slices.Contains(from, line) {
				from = append(from, line)
			}
		}
		name := r.Spec.Name
		if len(r.Unmet) > 0 {
			n := len(r.Spec.Data.Tasks)
			t.wide(name, fmt.Sprintf("(%d %s)", n, plural(n, "task", "tasks")), "skipped: needs "+joinAnd(r.Unmet))
			continue
		}
		for _, tr := range r.Tasks {
			switch {
			case tr.Err != "":
				t.wide(name, tr.Task, "✗ error: "+oneLine(tr.Err))
				name = ""
				continue
			case tr.Unmet != "":
				t.wide(name, tr.Task, "skipped: needs "+tr.Unmet)
				name = ""
				continue
			}
			task := tr.Task
			for _, c := range tr.Checks {
				got, delta, mark := formatScore(c.Got), formatDelta(c), "✓"
				if c.Missing {
					got, delta = "—", ""
				}
				if !c.OK {
					mark = "✗"
				}
				t.row(name, task, c.Metric, formatScore(c.Expected), got, delta, "±"+formatScore(c.Tolerance), mark)
				name, task = "", ""
			}
		}
	}
	if err := t.write(w); err != nil {
		return err
	}
	if len(from) > 0 {
		from = append(from, "✓: |got − expected| ≤ within, the spec's tolerance")
		for _, line := range from {
			if _, err := fmt.Fprintln(w, strings.Join(textwrap.Lines(line, 120), "\n")); err != nil {
				return err
			}
		}
	}
	_, err := fmt.Fprintln(w, Summary(reports))
	return err
}

// table lines up rows of cells; a wide row's last cell runs on past the
// columns instead of widening them.
type table struct {
	rows    [][]string
	wideRow []bool
}

func (t *table) row(cells ...string) {
	t.rows = append(t.rows, cells)
	t.wideRow = append(t.wideRow, false)
}

func (t *table) wide(cells ...string) {
	t.rows = append(t.rows, cells)
	t.wideRow = append(t.wideRow, true)
}

func (t *table) write(w io.Writer) error {
	var widths []int
	for i, r := range t.rows {
		cells := r
		if t.wideRow[i] {
			cells = r[:len(r)-1]
		}
		for j, c := range cells {
			if j >= len(widths) {
				widths = append(widths, 0)
			}
			widths[j] = max(widths[j], utf8.RuneCountInString(c))
		}
	}
	var b strings.Builder
	for _, r := range t.rows {
		b.Reset()
		for j, c := range r {
			b.WriteString(c)
			if j < len(r)-1 {
				b.WriteString(strings.Repeat(" ", widths[j]-utf8.RuneCountInString(c)+2))
			}
		}
		if _, err := fmt.Fprintln(w, strings.TrimRight(b.String(), " ")); err != nil {
			return err
		}
	}
	return nil
}

// Summary counts the specs by outcome: "3 specs: 1 passed, 0 failed, 2
// skipped".
func Summary(reports []*Report) string {
	counts := map[string]int{}
	for _, r := range reports {
		counts[r.Status()]++
	}
	s := fmt.Sprintf("%d %s: %d passed, %d failed", len(reports), plural(len(reports), "spec", "specs"), counts["pass"], counts["fail"])
	if n := counts["partial"]; n > 0 {
		s += fmt.Sprintf(", %d passed on the tasks at hand", n)
	}
	return s + fmt.Sprintf(", %d skipped", counts["skip"])
}

// WriteJSON writes the reports as one JSON array: per spec its name,
// status, what it lacked and its tasks' checks.
func WriteJSON(w io.Writer, reports []*Report) error {
	type entry struct {
		Spec   string `json:"spec"`
		Status string `json:"status"`
		*Report
	}
	out := make([]entry, len(reports))
	for i, r := range reports {
		out[i] = entry{Spec: r.Spec.Name, Status: r.Status(), Report: r}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// WriteList prints the specs: name, what, source, tasks and needs, in
// width columns (0: a spec a line), the names and needs wrapped to fit.
func WriteList(w io.Writer, specs []*Spec, width int) error {
	rows := [][]string{{"spec", "source", "tasks", "data", "needs besides"}}
	for _, s := range specs {
		rows = append(rows, []string{s.Name, s.Source.Kind, strconv.Itoa(len(s.Data.Tasks)), dataPhrase(s.Data, false), s.Needs.Brief()})
	}
	var b strings.Builder
	for _, l := range textwrap.Table(rows, width, textwrap.Layout{Wrap: []int{0, 4}}) {
		b.WriteString(l + "\n")
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	offline := 0
	for _, s := range specs {
		if s.Needs.Offline() && s.Data.Suite == SuiteLocal {
			offline++
		}
	}
	_, err := fmt.Fprintf(w, "%d %s; %d run%s with local data alone (--offline runs the others too when their data is in the Hub cache)\n",
		len(specs), plural(len(specs), "spec", "specs"), offline, plural(offline, "s", ""))
	return err
}

// formatScore prints a score with the digits it was stored with.
func formatScore(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// formatDelta prints got − expected with as many decimals as the more
// precise of the two values has, and its sign: "-0.00001", "0".
func formatDelta(c Check) string {
	d := c.Delta()
	if d == 0 {
		return "0"
	}
	digits := max(decimals(c.Expected), decimals(c.Got))
	s := strconv.FormatFloat(d, 'f', digits, 64)
	if d > 0 {
		s = "+" + s
	}
	return s
}

// decimals is how many digits follow the point in v's shortest form.
func decimals(v float64) int {
	s := formatScore(v)
	if i := strings.IndexByte(s, '.'); i >= 0 {
		return len(s) - i - 1
	}
	return 0
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// metricsOf lists the metrics of a set of expected scores, for docs.
func metricsOf(tasks []ExpectedTask) []string {
	seen := map[string]bool{}
	for _, t := range tasks {
		for _, m := range t.Metrics() {
			seen[m] = true
		}
	}
	var out []string
	for _, m := range metricOrder {
		if seen[m] {
			out = append(out, m)
			delete(seen, m)
		}
	}
	return append(out, slices.Sorted(maps.Keys(seen))...)
}
