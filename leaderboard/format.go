package leaderboard

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/r2med/r2med/tasks"
)

// Format is an output format of a leaderboard.
type Format string

const (
	Terminal Format = "table"    // aligned columns, best per column marked with *
	Markdown Format = "markdown" // R2MED's table as the reference notes print it
	CSV      Format = "csv"      // values ×100 with two decimals, as R2MED's summary CSV
	JSON     Format = "json"     // stored values (0–1) and the reported average
)

// ParseFormat reads a format name.
func ParseFormat(s string) (Format, error) {
	switch f := Format(strings.ToLower(strings.TrimSpace(s))); f {
	case "", "terminal", Terminal:
		return Terminal, nil
	case "md", Markdown:
		return Markdown, nil
	case CSV, JSON:
		return f, nil
	}
	return "", fmt.Errorf("unknown format %q; want table, markdown, csv or json", s)
}

// Write renders the table in format f.
func (t *Table) Write(w io.Writer, f Format) error {
	switch f {
	case Terminal, "":
		return t.writeTerminal(w)
	case Markdown:
		return t.writeMarkdown(w)
	case CSV:
		return t.writeCSV(w)
	case JSON:
		return t.writeJSON(w)
	}
	return fmt.Errorf("leaderboard: unknown format %q", f)
}

// Pct formats a stored value as R2MED's tables print it: ×100, two
// decimals.
func Pct(v float64) string { return strconv.FormatFloat(v*100, 'f', 2, 64) }

// AverageText is the row's average as printed: "41.65", or for a system
// missing tasks "— (3/8)".
func (t *Table) AverageText(r Row) string {
	if r.Complete {
		return strconv.FormatFloat(r.Average, 'f', 2, 64)
	}
	return fmt.Sprintf("— (%d/%d)", r.Have, len(t.Tasks))
}

func (t *Table) mixed() bool {
	for _, r := range t.Rows {
		if !r.System.Published {
			return true
		}
	}
	return false
}

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

func (t *Table) title() string {
	scope := "8-task average"
	if t.Family != "" {
		scope = fmt.Sprintf("%s, %d-task average", tasks.Family(t.Family).Title(), len(t.Tasks))
	}
	s := fmt.Sprintf("%s ×100 (%s)", t.Metric.Label, scope)
	if t.Ranking == ByBorda {
		s += ", ranked by Borda count"
	}
	return s
}

func (t *Table) writeTerminal(w io.Writer) error {
	head := []string{"#", "system", "source"}
	for _, task := range t.Tasks {
		head = append(head, ShortTaskName(task))
	}
	head = append(head, "Avg")
	if t.Ranking == ByBorda {
		head = append(head, "Borda")
	}
	rows := [][]string{head}
	for _, r := range t.Rows {
		src := "published"
		if !r.System.Published {
			src = "ours"
		}
		line := []string{rankText(r), r.System.Name, src}
		for j, s := range r.Scores {
			switch {
			case !s.OK:
				line = append(line, "—")
			case s.Value == t.Best[j]:
				line = append(line, Pct(s.Value)+"*")
			default:
				line = append(line, Pct(s.Value)+" ")
			}
		}
		avg := t.AverageText(r)
		if r.Complete {
			if r.Mean == t.BestAverage {
				avg += "*"
			} else {
				avg += " "
			}
		}
		line = append(line, avg)
		if t.Ranking == ByBorda {
			line = append(line, bordaText(r))
		}
		rows = append(rows, line)
	}
	width := make([]int, len(head))
	for _, l := range rows {
		for i, c := range l {
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	if _, err := fmt.Fprintf(w, "%s; * best in column\n", t.title()); err != nil {
		return err
	}
	for _, l := range rows {
		var b strings.Builder
		for i, c := range l {
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(c))
			if i > 0 {
				b.WriteString("  ")
			}
			if i == 1 || i == 2 {
				b.WriteString(c + pad) // text columns left-aligned
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
// "| # | system | Biology | … | Avg |", averages in bold. Our systems are
// marked "(ours)"; a table of published systems only is the published
// table line for line.
func (t *Table) writeMarkdown(w io.Writer) error {
	var b strings.Builder
	b.WriteString("| # | system |")
	sep := "|---|---|"
	for _, task := range t.Tasks {
		b.WriteString(" " + task + " |")
		sep += "---|"
	}
	b.WriteString(" Avg |")
	sep += "---|"
	if t.Ranking == ByBorda {
		b.WriteString(" Borda |")
		sep += "---|"
	}
	b.WriteString("\n" + sep + "\n")
	for _, r := range t.Rows {
		name := r.System.Name
		if !r.System.Published {
			name += " (ours)"
		}
		fmt.Fprintf(&b, "| %s | %s |", rankText(r), strings.ReplaceAll(name, "|", `\|`))
		for _, s := range r.Scores {
			if s.OK {
				b.WriteString(" " + Pct(s.Value) + " |")
			} else {
				b.WriteString(" — |")
			}
		}
		if r.Complete {
			b.WriteString(" **" + t.AverageText(r) + "** |")
		} else {
			b.WriteString(" " + t.AverageText(r) + " |")
		}
		if t.Ranking == ByBorda {
			b.WriteString(" " + bordaText(r) + " |")
		}
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func (t *Table) writeCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	head := []string{"rank", "system", "id", "kind", "source"}
	for _, task := range t.Tasks {
		head = append(head, task)
	}
	head = append(head, "avg", "tasks")
	if t.Ranking == ByBorda {
		head = append(head, "borda")
	}
	if err := cw.Write(head); err != nil {
		return err
	}
	for _, r := range t.Rows {
		src := "published"
		if !r.System.Published {
			src = "ours"
		}
		rank := ""
		if r.Rank > 0 {
			rank = strconv.Itoa(r.Rank)
		}
		line := []string{rank, r.System.Name, r.System.ID, string(r.System.Kind), src}
		for _, s := range r.Scores {
			if s.OK {
				line = append(line, Pct(s.Value))
			} else {
				line = append(line, "")
			}
		}
		avg := ""
		if r.Complete {
			avg = strconv.FormatFloat(r.Average, 'f', 2, 64)
		}
		line = append(line, avg, strconv.Itoa(r.Have))
		if t.Ranking == ByBorda {
			b := ""
			if r.Complete {
				b = strconv.FormatFloat(r.Borda, 'f', 4, 64)
			}
			line = append(line, b)
		}
		if err := cw.Write(line); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// JSONTable is the JSON form of a Table.
type JSONTable struct {
	Metric  string    `json:"metric"` // R2MED key, "ndcg_at_10"
	Label   string    `json:"label"`  // "nDCG@10"
	Family  string    `json:"family,omitempty"`
	Ranking string    `json:"ranking"`
	Tasks   []string  `json:"tasks"`
	Rows    []JSONRow `json:"rows"`
}

// JSONRow is one row of JSONTable. Scores are the stored values (0–1),
// null where missing; Average is R2MED's reported figure (×100, two
// decimals), null unless every task is there.
type JSONRow struct {
	Rank      int                 `json:"rank,omitempty"`
	ID        string              `json:"id"`
	Name      string              `json:"name"`
	Kind      Kind                `json:"kind"`
	Published bool                `json:"published"`
	Retriever string              `json:"retriever,omitempty"`
	GARMethod string              `json:"gar_method,omitempty"`
	GARLLM    string              `json:"gar_llm,omitempty"`
	Reranker  string              `json:"reranker,omitempty"`
	TopK      int                 `json:"topk,omitempty"`
	Scores    map[string]*float64 `json:"scores"`
	Have      int                 `json:"tasks_present"`
	Complete  bool                `json:"complete"`
	Mean      *float64            `json:"mean"`
	Average   *float64            `json:"average"`
	Borda     *float64            `json:"borda,omitempty"`
	Sources   map[string]string   `json:"sources"`
}

// JSON returns the table in its JSON form.
func (t *Table) JSON() JSONTable {
	out := JSONTable{Metric: t.Metric.Key, Label: t.Metric.Label, Family: string(t.Family), Ranking: string(t.Ranking), Tasks: t.Tasks, Rows: []JSONRow{}}
	for _, r := range t.Rows {
		s := r.System
		jr := JSONRow{Rank: r.Rank, ID: s.ID, Name: s.Name, Kind: s.Kind, Published: s.Published, Retriever: s.Retriever,
			GARMethod: s.GARMethod, GARLLM: s.GARLLM, Reranker: s.Reranker, TopK: s.TopK,
			Scores: map[string]*float64{}, Have: r.Have, Complete: r.Complete, Sources: map[string]string{}}
		for j, task := range t.Tasks {
			jr.Scores[task] = nil
			if r.Scores[j].OK {
				v := r.Scores[j].Value
				jr.Scores[task] = &v
			}
			if tr, ok := s.Tasks[task]; ok {
				jr.Sources[task] = tr.Source
			}
		}
		if r.Complete {
			m, a := r.Mean, r.Average
			jr.Mean, jr.Average = &m, &a
			if t.Ranking == ByBorda {
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
