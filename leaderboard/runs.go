package leaderboard

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/r2med/r2med/internal/textwrap"
	"github.com/r2med/r2med/results"
	"github.com/r2med/r2med/sysname"
	"github.com/r2med/r2med/tasks"
)

// RunInfo is one run of a results directory as `r2med results` lists it.
type RunInfo struct {
	Task   string `json:"task"`
	R2MED  bool   `json:"r2med_task"` // Task is one of R2MED's eight
	Suite  string `json:"suite"`      // r2med, nano, bright…; "" for other data
	System string `json:"system"`
	Kind   Kind   `json:"kind"`
	// Metrics are the stored values (0–1) of nDCG@10, Recall@100 and MRR;
	// absent when the result file lacks them.
	Metrics map[string]float64 `json:"metrics"`
	// MRRLabel names the MRR in Metrics (results.Manifest.MRRLabel):
	// "MRR", or "MRR@100" for a BRIGHT run kept 100 deep, whose MRR
	// BRIGHT reads over each query's top 1000.
	MRRLabel string `json:"mrr_label"`
	// Queries is the number of judged queries the means are over and
	// WithoutResults how many of them got no result, counting 0 in every
	// mean (results.Manifest.Unanswered); Queries is 0 where the manifest
	// does not say.
	Queries        int `json:"queries"`
	WithoutResults int `json:"queries_without_results"`
	// Depth is the most documents the run ranks per query where that is
	// fewer than its corpus holds (results.Manifest.ShallowDepth), else
	// 0: below 100, its Recall@100 counts those.
	Depth   int            `json:"shallow_depth,omitempty"`
	Seconds float64        `json:"seconds"` // the manifest's stage times, summed
	Started time.Time      `json:"started"`
	Dir     string         `json:"dir"`
	Config  map[string]any `json:"config"`
}

// runMetrics are the columns `r2med results` shows.
var runMetrics = []Metric{DefaultMetric, {Key: "recall_at_100", Label: "Recall@100"}, {Key: "mrr", Label: "MRR"}}

// Runs describes every finished run of a listing, in its order.
func Runs(l *results.Listing) []RunInfo {
	out := make([]RunInfo, 0, len(l.Runs))
	named := systemNames(l.Runs)
	for _, r := range l.Runs {
		task, ok := r.Task()
		m, _ := Normalize(r.Result.Test)
		suite := r.Suite()
		if !ok && suite == tasks.R2MED {
			suite = "" // the demo, a BEIR set: no benchmark's task
		}
		// The leaderboard's name (its hash where systems share a name),
		// the suite in a column of its own.
		_, hash := sysname.Base(named[SystemKey(r)])
		info := RunInfo{Task: task, R2MED: ok, Suite: string(suite), System: displayName(r) + hash, Kind: KindOf(r.Result),
			Metrics: map[string]float64{}, MRRLabel: r.Manifest.MRRLabel(), Seconds: r.Seconds(), Started: r.Started(), Dir: r.Dir, Config: r.Manifest.Config}
		for _, mt := range runMetrics {
			if v, ok := m[mt.Key]; ok {
				info.Metrics[mt.Key] = v
			}
		}
		info.WithoutResults, info.Queries = r.Manifest.Unanswered()
		info.Depth = r.Manifest.ShallowDepth()
		out = append(out, info)
	}
	return out
}

// WriteRuns lists the runs of l in format f (Terminal, Markdown, CSV or
// JSON); terminal and markdown show the systems' names cut by sysname's
// one rule (csv and json whole) and add notes under the table (names cut,
// MRR depths, what hashes stand for, unfinished runs), the terminal's
// wrapped at width (0: not wrapped).
func WriteRuns(w io.Writer, l *results.Listing, f Format, width int) error {
	runs := Runs(l)
	switch f {
	case JSON:
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(struct {
			Root       string    `json:"root"`
			Runs       []RunInfo `json:"runs"`
			Unfinished []string  `json:"unfinished"`
		}{l.Root, runs, append([]string{}, l.Unfinished...)})
	case CSV:
		cw := csv.NewWriter(w)
		head := []string{"task", "suite", "system", "kind"}
		for _, m := range runMetrics {
			head = append(head, m.Key)
		}
		cw.Write(append(head, "mrr_label", "seconds", "started", "queries", "queries_without_results", "dir"))
		for _, r := range runs {
			line := []string{r.Task, r.Suite, r.System, string(r.Kind)}
			for _, m := range runMetrics {
				v, ok := r.Metrics[m.Key]
				if ok {
					line = append(line, strconv.FormatFloat(v, 'g', -1, 64))
				} else {
					line = append(line, "")
				}
			}
			queries := ""
			if r.Queries > 0 {
				queries = strconv.Itoa(r.Queries)
			}
			cw.Write(append(line, r.MRRLabel, strconv.FormatFloat(r.Seconds, 'f', 3, 64), r.Started.Format(time.RFC3339), queries, strconv.Itoa(r.WithoutResults), r.Dir))
		}
		cw.Flush()
		return cw.Error()
	case Terminal, Markdown, "":
	default:
		return fmt.Errorf("leaderboard: unknown format %q", f)
	}
	head := []string{"task", "system", "suite"}
	for _, m := range runMetrics {
		head = append(head, m.Label)
	}
	head = append(head, "time", "started", "dir")
	rows := [][]string{head}
	names := make([]string, len(runs))
	for i, r := range runs {
		names[i] = r.System
	}
	shown := sysname.ShortAll(names, sysname.Width) // whole in csv and json
	cut := false
	var labels []string // of the MRRs shown
	for i, r := range runs {
		cut = cut || shown[i] != r.System
		suite := r.Suite
		if suite == "" {
			suite = "—"
		}
		line := []string{r.Task, shown[i], suite}
		for _, m := range runMetrics {
			if v, ok := r.Metrics[m.Key]; ok {
				cell := Score{Value: v, OK: true}
				if l := m.labelOf(r.MRRLabel); l != m.Label {
					cell.Label = l
					labels = append(labels, l)
				}
				line = append(line, CellText(cell))
			} else {
				line = append(line, "—")
			}
		}
		line = append(line, formatSeconds(r.Seconds), r.Started.Local().Format("2006-01-02 15:04"), l.Runs[i].Rel)
		rows = append(rows, line)
	}
	var err error
	if f == Markdown {
		err = writeMarkdownRows(w, rows)
	} else {
		err = writeAligned(w, rows, map[int]bool{0: true, 1: true, 2: true, len(head) - 1: true})
	}
	if err != nil {
		return err
	}
	var notes []string
	if len(runs) == 0 {
		notes = append(notes, "no finished runs under "+l.Root)
	}
	if cut {
		notes = append(notes, CutLegend)
	}
	notes = append(notes, results.MRRMarkNotes(labels)...)
	// What the hashes of systems sharing a name stand for, as the
	// leaderboard says it.
	systems, _ := Ours(l)
	ptrs := make([]*System, len(systems))
	for i := range systems {
		ptrs[i] = &systems[i]
	}
	// Named as the list shows them (the suite in a column of its own).
	listed := map[string]string{}
	for _, r := range runs {
		listed[r.Dir] = r.System
	}
	notes = append(notes, apartLines(ptrs, Apart(ptrs), func(s *System) string {
		for _, tr := range s.Tasks {
			if n, ok := listed[tr.Source]; ok {
				return n
			}
		}
		return s.DisplayName()
	})...)
	for i, r := range runs {
		if n := results.UnansweredNote(r.Task, r.WithoutResults, r.Queries); n != "" {
			notes = append(notes, shown[i]+" on "+n)
		}
		if _, ok := r.Metrics["recall_at_100"]; ok && r.Depth > 0 && r.Depth < 100 {
			notes = append(notes, shown[i]+" on "+r.Task+" "+results.ShallowNote(r.Depth, "Recall@100"))
		}
	}
	if len(l.Unfinished) > 0 {
		notes = append(notes, fmt.Sprintf("%d unfinished (no manifest.json: interrupted or still running): %s", len(l.Unfinished), strings.Join(l.Unfinished, ", ")))
	}
	// In Markdown the notes are a list after a blank line, as the
	// leaderboard's legend is, so no renderer reads them as table rows.
	prefix := ""
	if f == Markdown && len(notes) > 0 {
		prefix = "- "
		if _, err := io.WriteString(w, "\n"); err != nil {
			return err
		}
	}
	for _, n := range notes {
		lines := []string{prefix + n}
		if f != Markdown {
			lines = textwrap.Lines(n, width)
		}
		for _, l := range lines {
			if _, err := fmt.Fprintln(w, l); err != nil {
				return err
			}
		}
	}
	return nil
}

func formatSeconds(s float64) string {
	switch {
	case s < 60:
		return strconv.FormatFloat(s, 'f', 1, 64) + "s"
	case s < 3600:
		return fmt.Sprintf("%dm%02ds", int(s)/60, int(s)%60)
	}
	return fmt.Sprintf("%dh%02dm", int(s)/3600, int(s)%3600/60)
}

// writeAligned prints rows as space-separated columns, the columns in left
// aligned and the others right aligned.
func writeAligned(w io.Writer, rows [][]string, left map[int]bool) error {
	width := map[int]int{}
	for _, l := range rows {
		for i, c := range l {
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	for _, l := range rows {
		var b strings.Builder
		for i, c := range l {
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(c))
			if i > 0 {
				b.WriteString("  ")
			}
			if left[i] {
				b.WriteString(c + pad)
			} else {
				b.WriteString(pad + c)
			}
		}
		if _, err := fmt.Fprintln(w, strings.TrimRight(b.String(), " ")); err != nil {
			return err
		}
	}
	return nil
}

func writeMarkdownRows(w io.Writer, rows [][]string) error {
	var b strings.Builder
	for i, l := range rows {
		b.WriteString("|")
		for _, c := range l {
			b.WriteString(" " + strings.ReplaceAll(c, "|", `\|`) + " |")
		}
		b.WriteByte('\n')
		if i == 0 {
			b.WriteString("|" + strings.Repeat("---|", len(l)) + "\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
