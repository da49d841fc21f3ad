// Package leaderboard puts retrieval systems side by side on R2MED's eight
// tasks: R2MED's published results (71 systems, shipped in this package as
// published.json) and the runs found in a results directory, scored on one
// metric per task, averaged the way R2MED's paper and leaderboard average
// (the unweighted mean of the per-task values, ×100, two decimals), or
// ranked by HAKARI-Bench's Borda count.
//
// Metrics are R2MED's result-file metrics: "ndcg@10" here is the value
// R2MED stores under ndcg_at_10 (trec_eval's ndcg_cut.10), not
// HAKARI-Bench's ndcg@10, whatever the style the file spells it in.
package leaderboard

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/r2med/r2med/measure"
	"github.com/r2med/r2med/sysname"
	"github.com/r2med/r2med/tasks"
	"github.com/r2med/r2med/usage"
)

// Kind is the kind of system a row is.
type Kind string

const (
	Base     Kind = "base"     // a retriever on the queries as given
	GAR      Kind = "gar"      // a retriever on LLM-expanded queries
	Reranker Kind = "reranker" // a reranker over a retriever's top k
	Fusion   Kind = "fusion"   // several retrievers' runs fused (RRF, CombSUM)
)

// ParseKind reads a kind name.
func ParseKind(s string) (Kind, error) {
	switch k := Kind(strings.ToLower(strings.TrimSpace(s))); k {
	case Base, GAR, Reranker, Fusion:
		return k, nil
	}
	return "", &UsageError{fmt.Sprintf("unknown system kind %q; want base, gar, reranker or fusion", s)}
}

// UsageError is an unknown name in what the user asked for (a metric, a
// kind, a family, a ranking): the command line exits 2 on it and the
// viewer answers 400.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// Origin says where a system's numbers come from.
type Origin string

const (
	OriginOurs      Origin = "ours"      // runs found in the results directory
	OriginPublished Origin = "published" // R2MED's released result files
	OriginExternal  Origin = "external"  // figures printed by later papers
)

// External describes a system whose figures were printed by a paper after
// R2MED (external.json): never R2MED's files, never our runs.
type External struct {
	// Reference is the paper the figures are from.
	Reference string `json:"reference"`
	// EvaluatedBy says who produced the row ("ReasonEmbed authors",
	// "R2MED (Li et al. 2025)" for rows that repeat R2MED's numbers).
	EvaluatedBy string `json:"evaluated_by,omitempty"`
	Group       string `json:"group,omitempty"`
	Size        string `json:"size,omitempty"`
	// PrintedAverage is the paper's average (×100) as printed; it can
	// differ from the mean of the printed per-task values (RaDeR's 35.19
	// against 35.215), and both are shown.
	PrintedAverage float64 `json:"printed_average"`
	// AverageAsPrinted is the printed average's text where the source
	// printed it with fewer than two decimals (InsertRank's "51.1"): the
	// formats show it so, never with a digit the source did not print.
	AverageAsPrinted string `json:"average_as_printed,omitempty"`
	// AverageOnly marks a row with no per-task values: it appears in
	// average views only.
	AverageOnly bool   `json:"average_only,omitempty"`
	Note        string `json:"note,omitempty"`
	// Repeats is the ID of the published system whose numbers the row
	// repeats ("base/bm25": ReasonEmbed's table reprints R2MED's BM25):
	// the row says R2MED evaluated it and every printed value is that
	// system's, rounded. Load folds it into that system (Reprinted).
	Repeats string `json:"repeats,omitempty"`
	// Printed is the name the source prints the system under, set where
	// another row shows it (a reprint folded into a published system).
	Printed string `json:"printed_as,omitempty"`
	// AverageComputed marks a source that prints no average (MTEB's
	// results files): PrintedAverage is unset and the row shows R2MED's
	// average of its values alone.
	AverageComputed bool `json:"average_computed,omitempty"`
}

// PrintedText is the printed average as the formats show it: two
// decimals, or the source's own digits where it printed fewer
// (AverageAsPrinted).
func (e *External) PrintedText() string {
	if e.AverageAsPrinted != "" {
		return e.AverageAsPrinted
	}
	return strconv.FormatFloat(e.PrintedAverage, 'f', 2, 64)
}

// System is one retrieval system and its per-task results.
type System struct {
	// ID is unique among systems: the published results' path
	// ("base/nv", "gar/hyde/gpt4/nv", "reranker/rankllama/nv/top_10"), or
	// for our runs "ours/" and a name made from the run settings.
	ID string `json:"id"`
	// Name is the system by sysname's rule, as R2MED's tables write it:
	// "nv", "hyde/gpt4 → nv", "nv → rankllama@10"; external systems as
	// their source prints them.
	Name      string `json:"name"`
	Kind      Kind   `json:"kind"`
	Retriever string `json:"retriever"`
	GARMethod string `json:"gar_method,omitempty"`
	GARLLM    string `json:"gar_llm,omitempty"`
	Reranker  string `json:"reranker,omitempty"`
	TopK      int    `json:"topk,omitempty"`
	// Published marks R2MED's own results.
	Published bool `json:"published"`
	// External is set for figures printed by later papers.
	External *External `json:"external,omitempty"`
	// Reprinted lists the sources that printed this system's numbers
	// again (External.Repeats): one row, every source on hover and in
	// exports.
	Reprinted []External `json:"reprinted,omitempty"`
	// Suite is the form of the tasks the system ran on; "" means the full
	// R2MED tasks.
	Suite tasks.Suite `json:"suite,omitempty"`
	// Config is the run settings of our systems (the manifest's, without
	// the per-task fingerprint).
	Config map[string]any `json:"config,omitempty"`
	// Tasks maps R2MED task names to results.
	Tasks map[string]TaskResult `json:"tasks"`

	// display is the name views show (ShortenNames); "" until a board
	// gave it one.
	display string
}

// TaskResult is one system's result on one task.
type TaskResult struct {
	// Metrics maps R2MED's lower-case result keys (ndcg_at_10,
	// recall_at_100, map_at_100, precision_at_10, mrr) to the stored
	// values, whatever style the file used.
	Metrics map[string]float64 `json:"metrics"`
	// Style is the key style of the source file: "lower_pytrec" (R2MED's
	// BM25), "upper_pytrec" (GAR+BM25 and rerankers, NDCG@10…) or "beir"
	// (dense retrievers, no MRR).
	Style          string `json:"style"`
	EvaluationTime string `json:"evaluation_time,omitempty"`
	// Source is the file the numbers come from: a path inside R2MED's
	// results/ for published rows, the run directory for ours.
	Source string `json:"source"`
	// Usage is what our run's model calls cost, from its manifest; nil
	// for other rows and for runs made before usage was recorded.
	Usage *usage.Summary `json:"usage,omitempty"`
	// MRRLabel names our run's MRR where it is not the benchmark's
	// (results.Manifest.MRRLabel): "MRR@100" for a BRIGHT run kept 100
	// deep, whose MRR BRIGHT reads over the top 1000; "" where the
	// stored mrr is the benchmark's MRR (R2MED's, published and external
	// rows).
	MRRLabel string `json:"mrr_label,omitempty"`
	// Queries is the number of judged queries our run's means are over,
	// and Unanswered how many of them got no result and count 0 in them
	// (results.Manifest.Unanswered); 0 where the manifest does not say
	// and for other rows.
	Queries    int `json:"queries,omitempty"`
	Unanswered int `json:"queries_without_results,omitempty"`
	// Depth is the most documents our run ranks per query where that is
	// fewer than its corpus holds (results.Manifest.ShallowDepth), else
	// 0; a metric at a deeper k counts those documents.
	Depth int `json:"shallow_depth,omitempty"`
	// AsPrinted is the value's text where its source printed it with
	// fewer than two decimals (an external row's "7.8"): shown so, never
	// with a digit the source did not print.
	AsPrinted string `json:"as_printed,omitempty"`
}

// Label names the value of metric m in this result: m's label, or the
// run's MRRLabel for MRR ("MRR@100"). Every view of a run's MRR names it
// by this, and marks a cell whose Label is not its column's (results.MRRMark).
func (tr TaskResult) Label(m Metric) string { return m.labelOf(tr.MRRLabel) }

// labelOf names m's value in a run whose MRR is named mrr ("" or "MRR"
// for the benchmark's MRR): m's label, or mrr for MRR.
func (m Metric) labelOf(mrr string) string {
	if m.Key == "mrr" && mrr != "" {
		return mrr
	}
	return m.Label
}

// Key styles of R2MED result files.
const (
	StyleLower = "lower_pytrec"
	StyleUpper = "upper_pytrec"
	StyleBEIR  = "beir"
)

// Origin says whether the system is ours, R2MED's published or external.
func (s *System) Origin() Origin {
	switch {
	case s.External != nil:
		return OriginExternal
	case s.Published:
		return OriginPublished
	}
	return OriginOurs
}

// DisplayName is the system's name as tables, pages, chart legends and
// terminals show it: its name cut to sysname.Width characters by
// sysname.Short, the hash suffix and a reranker's depth kept, and on a
// board (Load) cut so that no two systems read the same
// (ShortenNames). It is the one place a displayed name is made from a
// system; FullName is the whole of it, and About the hover.
func (s *System) DisplayName() string {
	if s.display != "" {
		return s.display
	}
	return sysname.Short(s.Name, sysname.Width)
}

// FullName is the system's name in full: what a hover or tooltip shows
// beside DisplayName, and what exports record.
func (s *System) FullName() string { return s.Name }

// Cut reports whether DisplayName is not the whole name.
func (s *System) Cut() bool { return s.DisplayName() != s.Name }

// ShortenNames gives systems shown together their display names: each
// name cut to sysname.Width, no two different names cut to one text
// (sysname.ShortAll). Load calls it on a board's systems, so that a
// system reads the same in every table, chart and page of the board.
func ShortenNames(systems []System) {
	names := make([]string, len(systems))
	for i := range systems {
		names[i] = systems[i].Name
	}
	for i, n := range sysname.ShortAll(names, sysname.Width) {
		systems[i].display = n
	}
}

// IsOurs reports whether the system is one of our runs.
func (s *System) IsOurs() bool { return s.Origin() == OriginOurs }

// Normalize maps a result file's test keys, in any of R2MED's three
// styles, to the lower-case style, and reports the style found. Keys that
// are in no style are kept as they are.
func Normalize(test map[string]float64) (map[string]float64, string) {
	out := make(map[string]float64, len(test))
	upper, mrr := false, false
	for k, v := range test {
		low, isUpper := lowerKey(k)
		upper = upper || isUpper
		mrr = mrr || low == "mrr"
		out[low] = v
	}
	switch {
	case upper:
		return out, StyleUpper
	case mrr:
		return out, StyleLower
	}
	return out, StyleBEIR
}

var upperPrefixes = []struct{ upper, lower string }{
	{"NDCG@", "ndcg_at_"}, {"MAP@", "map_at_"}, {"Recall@", "recall_at_"}, {"P@", "precision_at_"},
}

func lowerKey(k string) (string, bool) {
	if k == "MRR" {
		return "mrr", true
	}
	for _, p := range upperPrefixes {
		if rest, ok := strings.CutPrefix(k, p.upper); ok {
			return p.lower + rest, true
		}
	}
	return k, false
}

// Metric is a metric a leaderboard can show.
type Metric struct {
	Key   string // R2MED's lower-case result key: "ndcg_at_10"
	Label string // the column heading: "nDCG@10"
}

// DefaultMetric is R2MED's headline metric.
var DefaultMetric = Metric{Key: "ndcg_at_10", Label: "nDCG@10"}

var metricLabels = map[string]string{"ndcg": "nDCG", "map": "MAP", "recall": "Recall", "precision": "P"}

// MetricCutoffs are the k that R2MED's result files (and ours, written
// the same way) hold values at: 1, 10 and 100 in every file, 3 and 5 in
// the dense retrievers', 25 and 50 in BM25, GAR and reranker files, 1000
// in a few.
var MetricCutoffs = []int{1, 3, 5, 10, 25, 50, 100, 1000}

// MetricNames lists the metrics ParseMetric accepts, in the spelling
// people type.
func MetricNames() []string {
	var out []string
	for _, m := range []string{"ndcg", "recall", "map", "p"} {
		for _, k := range MetricCutoffs {
			out = append(out, m+"@"+strconv.Itoa(k))
		}
	}
	return append(out, "mrr")
}

func unknownMetric(s string) error {
	return &UsageError{fmt.Sprintf("unknown leaderboard metric %q; valid: %s (R2MED's result-file values; trec_eval's ndcg_cut.10 and ndcg_cut_10 and R2MED's NDCG@10/ndcg_at_10 spellings work too)", s, strings.Join(MetricNames(), ", "))}
}

func knownCutoff(k string) bool {
	for _, c := range MetricCutoffs {
		if strconv.Itoa(c) == k {
			return true
		}
	}
	return false
}

// ParseMetric reads a metric in every spelling measure.ParseIn reads
// under the trec profile (R2MED's values are trec_eval's): "ndcg@10",
// "ndcg_cut.10", "ndcg_cut_10", "NDCG@10", "ndcg_at_10"; "recall@100",
// "map@100", "p@10" or "precision@10", "mrr" or "recip_rank".
func ParseMetric(s string) (Metric, error) {
	ms, err := measure.ParseIn(strings.TrimSpace(s), measure.TrecProfile)
	if err != nil || len(ms) != 1 {
		return Metric{}, unknownMetric(s)
	}
	key := measure.R2MEDKey(ms[0])
	if key == "mrr" {
		return Metric{Key: "mrr", Label: "MRR"}, nil
	}
	if name, k, ok := strings.Cut(key, "_at_"); ok && metricLabels[name] != "" && knownCutoff(k) {
		return metricFromKey(key), nil
	}
	return Metric{}, unknownMetric(s)
}

func metricFromKey(key string) Metric {
	name, k, _ := strings.Cut(key, "_at_")
	return Metric{Key: key, Label: metricLabels[name] + "@" + k}
}

// Family selects tasks by R2MED family; "" selects all eight.
type Family = tasks.Family

// ParseFamily reads a family: "qa", "evidence", "case" or the full names
// tasks uses ("qa-reference", "clinical-evidence", "clinical-case"); "" or
// "all" is every task.
func ParseFamily(s string) (Family, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "all":
		return "", nil
	case "qa", "q&a", string(tasks.QAReference), "reference":
		return tasks.QAReference, nil
	case "evidence", string(tasks.ClinicalEvidence):
		return tasks.ClinicalEvidence, nil
	case "case", string(tasks.ClinicalCase):
		return tasks.ClinicalCase, nil
	}
	return "", &UsageError{fmt.Sprintf("unknown task family %q; want qa (Q&A reference), evidence (clinical evidence), case (clinical case) or all", s)}
}

// TaskNames returns the R2MED tasks of family f in R2MED's order; every
// task for "".
func TaskNames(f Family) []string {
	var out []string
	for _, t := range tasks.All() {
		if f == "" || t.Family == f {
			out = append(out, t.Name)
		}
	}
	return out
}
