package leaderboard

import (
	"bytes"
	_ "embed"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/r2med/r2med/internal/fileio"
)

//go:generate go run ./internal/gen/external -in ../../shared/data/external-results -out external.json

// externalJSON is the results printed after R2MED by other papers, as
// converted by ReadExternal and EncodeExternal. It is kept apart from
// published.json: those are R2MED's own released files.
//
//go:embed external.json
var externalJSON []byte

// The files of an external-results directory.
const (
	ExternalTableFile    = "reasonembed-table3.csv"
	ExternalWebsiteFile  = "r2med-website.csv"
	ExternalAveragesFile = "headline-averages.csv"
)

// The sources of the per-task files, which name who evaluated each row
// but not where the table is from.
const (
	reasonEmbedReference = "Chen et al., ReasonEmbed: Enhanced Text Embeddings for Reasoning-Intensive Document Retrieval, arXiv 2510.08252, Table 3"
	websiteReference     = "R2MED's online leaderboard, https://r2med.github.io (section Leaderboard), read 2026-11-27"
)

var externals = shipped(DecodeExternal, externalJSON)

// Externals returns the systems whose R2MED figures later papers printed
// (nDCG@10 only), sorted by ID, as a fresh copy.
func Externals() ([]System, error) { return externals() }

// ReadExternal reads an external-results directory: ExternalTableFile
// and ExternalWebsiteFile (system, size, avg, the eight tasks, group,
// evaluated_by; nDCG@10 ×100 as printed) and ExternalAveragesFile
// (system, avg, tasks, source, note: systems with only an 8-task
// average). Values are kept as printed, divided by 100 into R2MED's 0–1
// scale; the printed average is kept beside them, however it compares
// with their mean, and a value printed with fewer than two decimals is
// noted. A row R2MED evaluated whose every value is a published
// system's, rounded, is marked as repeating it (External.Repeats).
func ReadExternal(dir string) ([]System, error) {
	published, err := Published()
	if err != nil {
		return nil, err
	}
	var out []System
	for _, f := range []struct{ file, reference string }{{ExternalTableFile, reasonEmbedReference}, {ExternalWebsiteFile, websiteReference}} {
		systems, err := readExternalTable(filepath.Join(dir, f.file), f.reference, published)
		if err != nil {
			return nil, err
		}
		out = append(out, systems...)
	}
	avgs, err := readCSV(filepath.Join(dir, ExternalAveragesFile), []string{"system", "avg", "tasks", "source", "note"})
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, ExternalAveragesFile)
	for i, rec := range avgs {
		line := i + 2
		if rec[2] != strconv.Itoa(len(TaskNames(""))) {
			return nil, fileio.Errorf(path, line, "tasks is %q; only averages over R2MED's %d tasks compare with the leaderboard's", rec[2], len(TaskNames("")))
		}
		kind := Base
		if strings.Contains(strings.ToLower(rec[0]), "rerank") {
			kind = Reranker // the file names no kind; its systems say it in their names
		}
		s := externalSystem(rec[0], kind)
		s.External.AverageOnly, s.External.Reference, s.External.Note = true, rec[3], rec[4]
		if s.External.PrintedAverage, err = pct(path, line, "avg", rec[1]); err != nil {
			return nil, err
		}
		s.External.AverageAsPrinted = asPrinted(rec[1])
		out = append(out, s)
	}
	seen := map[string]bool{}
	for _, s := range out {
		if seen[s.ID] {
			return nil, fmt.Errorf("%s: system %q appears twice", dir, s.Name)
		}
		seen[s.ID] = true
	}
	slices.SortFunc(out, func(a, b System) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

// r2medEvaluated is how evaluated_by names R2MED's own evaluation.
const r2medEvaluated = "R2MED ("

// garGroup is the group of rows that generate with an LLM before
// retrieving ("o3-mini + BM25"): their kind is GAR.
const garGroup = "LLM+retriever"

// readExternalTable reads a per-task file of reference's: one system a
// row, as ReadExternal describes.
func readExternalTable(path, reference string, published []System) ([]System, error) {
	table, err := readCSV(path, append(append([]string{"system", "size", "avg"}, TaskNames("")...), "group", "evaluated_by"))
	if err != nil {
		return nil, err
	}
	var out []System
	for i, rec := range table {
		line := i + 2
		s := externalSystem(rec[0], Base)
		s.External.Size, s.External.Group, s.External.EvaluatedBy = dash(rec[1]), rec[11], rec[12]
		s.External.Reference = reference
		if llm, retriever, ok := strings.Cut(rec[0], " + "); ok && strings.HasPrefix(s.External.Group, garGroup) {
			s.Kind, s.GARLLM, s.Retriever = GAR, llm, retriever
		}
		if s.External.PrintedAverage, err = pct(path, line, "avg", rec[2]); err != nil {
			return nil, err
		}
		s.External.AverageAsPrinted = asPrinted(rec[2])
		var coarse []string
		for j, task := range TaskNames("") {
			v, err := pct(path, line, task, rec[3+j])
			if err != nil {
				return nil, err
			}
			if decimals(rec[3+j]) < 2 {
				coarse = append(coarse, task+" "+strings.TrimSpace(rec[3+j]))
			}
			s.Tasks[task] = TaskResult{Metrics: map[string]float64{DefaultMetric.Key: math.Round(v*100) / 10000}, Style: "printed", Source: filepath.Base(path) + ":" + strconv.Itoa(line), AsPrinted: asPrinted(rec[3+j])}
		}
		if len(coarse) > 0 {
			s.External.Note = "printed with fewer than two decimals (a digit may be lost): " + strings.Join(coarse, ", ")
		}
		if strings.HasPrefix(s.External.EvaluatedBy, r2medEvaluated) {
			s.External.Repeats = repeated(&s, published)
		}
		out = append(out, s)
	}
	return out, nil
}

// asPrinted is a printed average's text where it has fewer than two
// decimals ("51.1"), "" otherwise (External.AverageAsPrinted).
func asPrinted(s string) string {
	if s = strings.TrimSpace(s); decimals(s) < 2 {
		return s
	}
	return ""
}

// decimals counts the digits a printed number has after its point.
func decimals(v string) int {
	_, frac, ok := strings.Cut(strings.TrimSpace(v), ".")
	if !ok {
		return 0
	}
	return len(frac)
}

// repeated is the ID of the one published system whose nDCG@10 on every
// task rounds to the external row's printed value (within half a unit of
// its last digit, 0.005 ×100), "" when none or several do.
func repeated(s *System, published []System) string {
	match := ""
	for i := range published {
		p := &published[i]
		same := true
		for _, task := range TaskNames("") {
			pv, ok1 := p.Tasks[task].Metrics[DefaultMetric.Key]
			ev, ok2 := s.Tasks[task].Metrics[DefaultMetric.Key]
			if !ok1 || !ok2 || math.Abs(pv*100-ev*100) > 0.005+1e-9 {
				same = false
				break
			}
		}
		if same {
			if match != "" {
				return ""
			}
			match = p.ID
		}
	}
	return match
}

// FoldReprints folds each external row that repeats a published system
// of systems (External.Repeats) into that system, its source kept in the
// system's Reprinted with the name it printed: one row for one system,
// counted once. Rows whose published system is not among systems stay.
func FoldReprints(systems []System) []System {
	at := map[string]int{}
	for i, s := range systems {
		if s.Published {
			at[s.ID] = i
		}
	}
	folded := map[int]bool{}
	for i, s := range systems {
		if e := s.External; e != nil && e.Repeats != "" {
			if j, ok := at[e.Repeats]; ok {
				x := *e
				x.Printed = s.Name
				systems[j].Reprinted = append(systems[j].Reprinted, x)
				folded[i] = true
			}
		}
	}
	out := make([]System, 0, len(systems)-len(folded))
	for i, s := range systems {
		if !folded[i] {
			out = append(out, s)
		}
	}
	return out
}

func externalSystem(name string, kind Kind) System {
	return System{ID: "external/" + name, Name: name, Kind: kind, Retriever: name, External: &External{}, Tasks: map[string]TaskResult{}}
}

func dash(s string) string {
	if s == "-" {
		return ""
	}
	return s
}

func pct(path string, line int, col, v string) (float64, error) {
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || f < 0 || f > 100 {
		return 0, fileio.Errorf(path, line, "%s %q is not a value from 0 to 100 (nDCG@10 ×100 as printed)", col, v)
	}
	return f, nil
}

// readCSV reads a CSV file whose header must be want, and returns its
// records.
func readCSV(path string, want []string) ([][]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.FieldsPerRecord = len(want)
	recs, err := r.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(recs) == 0 || !slices.Equal(recs[0], want) {
		got := []string{}
		if len(recs) > 0 {
			got = recs[0]
		}
		return nil, fileio.Errorf(path, 1, "header %q; want %q", strings.Join(got, ","), strings.Join(want, ","))
	}
	return recs[1:], nil
}

// ExternalSource says where the external figures come from.
const ExternalSource = "results printed after R2MED by other papers and on R2MED's website (nDCG@10 ×100, as printed); not R2MED's released result files"

// EncodeExternal renders systems as external.json, one line per system.
func EncodeExternal(systems []System) ([]byte, error) {
	return encodeFile(ExternalSource, systems, func(b *bytes.Buffer, s System) error {
		line, err := json.Marshal(s)
		if err != nil {
			return err
		}
		b.WriteString("\n    ")
		b.Write(line)
		return nil
	})
}

// DecodeExternal reads what EncodeExternal wrote.
func DecodeExternal(data []byte) ([]System, error) {
	var f publishedFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("external results: %w", err)
	}
	for _, s := range f.Systems {
		if s.External == nil || s.Published {
			return nil, fmt.Errorf("external results: system %q is not marked external", s.ID)
		}
	}
	return f.Systems, nil
}

// WriteExternal converts an external-results directory and writes
// external.json to out atomically (the go:generate step).
func WriteExternal(dir, out string) error {
	return generate(out, func() ([]System, error) { return ReadExternal(dir) }, EncodeExternal)
}

// PrintedAgrees reports whether an external system's printed average is
// its printed per-task values' mean, rounded to the printed digits: the
// mean lies within half a unit of the average's last digit (0.005). The
// sum is taken exactly, in integer hundredths of the printed values, so
// neither binary floats nor the rounding rule decide: a mean exactly half
// way, BM25's 15.125, agrees with 15.13 (half up, as printed) and 15.12
// (half even) alike, while RaDeR's 35.215 against 35.19 does not. An
// average-only row has nothing to disagree with.
func PrintedAgrees(s *System) bool {
	e := s.External
	if e == nil || e.AverageOnly {
		return true
	}
	var sum, n int64
	for _, t := range TaskNames("") {
		v, ok := s.Tasks[t].Metrics[DefaultMetric.Key]
		if !ok {
			return true
		}
		sum += int64(math.Round(v * 10000)) // hundredths of a percent
		n++
	}
	printed := int64(math.Round(e.PrintedAverage * 100))
	d := printed*n - sum
	if d < 0 {
		d = -d
	}
	return 2*d <= n
}

// RecomputedAverage is R2MED's average of the external system's printed
// per-task values (NaN for an average-only row), to set beside its
// printed average.
func RecomputedAverage(s *System) float64 {
	var vals []float64
	for _, t := range TaskNames("") {
		v, ok := s.Tasks[t].Metrics[DefaultMetric.Key]
		if !ok {
			return math.NaN()
		}
		vals = append(vals, v)
	}
	_, avg := average(vals)
	return avg
}
