package audit

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/r2med/r2med/audit/minhash"
	"github.com/r2med/r2med/internal/errtext"
	"github.com/r2med/r2med/internal/textwrap"
)

// Normalization states the normalisation every comparison uses.
const Normalization = "Unicode NFKC, full case folding, apostrophes deleted, every other run of characters other than letters, marks and digits collapsed to one space; exact = equal with the spaces dropped too"

// LeakageReport is what a leakage audit found, per task.
type LeakageReport struct {
	Settings LeakageSettings `json:"settings"`
	Train    []TrainFile     `json:"train"`
	Tasks    []TaskLeakage   `json:"tasks"`
}

// LeakageSettings records how the audit matched.
type LeakageSettings struct {
	Normalization string  `json:"normalization"`
	Shingle       int     `json:"shingle_words"`
	Threshold     float64 `json:"jaccard_threshold"`
	Bands         int     `json:"lsh_bands"`
	Rows          int     `json:"lsh_rows"`
	Seed          uint64  `json:"seed"`
	// RecallAtThreshold is the probability that LSH makes a pair at the
	// threshold a candidate (pairs above it are likelier).
	RecallAtThreshold float64 `json:"lsh_recall_at_threshold"`
	// WordEdits is the short-text detector: texts of min_words to
	// max_words words at most one word replaced, dropped or added
	// (similarity 1 − edits / words); off when not used.
	WordEdits      minhash.Edits `json:"word_edits"`
	Documents      Scope         `json:"documents"`
	DenseModel     string        `json:"dense_model,omitempty"`
	DenseThreshold float64       `json:"dense_threshold,omitempty"`
	// DenseTopK is how many nearest benchmark texts (exact cosine search)
	// each training text is compared with: a text matching more at the
	// threshold is reported with these only.
	DenseTopK int `json:"dense_top_k,omitempty"`
}

// TrainFile summarises one training file.
type TrainFile struct {
	Path    string `json:"path"`
	Layout  string `json:"layout"`
	Rows    int64  `json:"rows"`
	Texts   int64  `json:"texts"`
	Empty   int64  `json:"empty_texts"`
	Matches int64  `json:"matches"`
}

// TaskLeakage is one task's contamination.
type TaskLeakage struct {
	Task      string        `json:"task"`
	Queries   Contamination `json:"queries"`
	Documents Contamination `json:"documents"`
	// Pairs counts the task's judgments (query, relevant document) whose
	// query and document both match texts of one training record: the
	// training set holds the answer to that test question.
	Pairs int `json:"pairs"`
	// Judgments counts the judgments (query, relevant document) whose
	// query and document were both audited: what Pairs is out of (0 with
	// --documents none, where no pair can be found); nil in audit files
	// written before it was counted.
	Judgments *int `json:"audited_judgments,omitempty"`
	// MissingPositives counts relevant documents the corpus lacks (not
	// audited).
	MissingPositives int       `json:"missing_positives,omitempty"`
	Examples         []Example `json:"examples"`
}

// Contamination counts the benchmark texts of one kind found in the
// training set.
type Contamination struct {
	Total        int     `json:"total"`
	Contaminated int     `json:"contaminated"`
	Share        float64 `json:"share"`
	// Exact, Near and Dense split Contaminated by each text's strongest
	// match.
	Exact int `json:"exact"`
	Near  int `json:"near"`
	Dense int `json:"dense"`
	// Empty counts texts with nothing left after normalisation, which
	// cannot be audited.
	Empty int `json:"empty,omitempty"`
}

// Example is one contaminated benchmark text and its strongest match.
type Example struct {
	Kind      Kind   `json:"benchmark_kind"`
	ID        string `json:"benchmark_id"`
	Text      string `json:"benchmark_text"`
	TrainFile string `json:"train_file"`
	TrainLine int    `json:"train_line"`
	// TrainElement is the record's place in a JSON array file.
	TrainElement int     `json:"train_element,omitempty"`
	TrainField   string  `json:"train_field"`
	TrainText    string  `json:"train_text"`
	Match        string  `json:"match"`
	Measure      string  `json:"measure"`
	Similarity   float64 `json:"similarity"`
	// Matches counts all the training texts matching this benchmark text.
	Matches int `json:"matches"`
}

// report aggregates the matches file into the report.
func (a *auditor) report(matchesPath string) (*LeakageReport, error) {
	sp := a.opts.MinHash
	rep := &LeakageReport{Settings: LeakageSettings{
		Normalization: Normalization, Shingle: sp.Shingle, Threshold: sp.Threshold,
		Bands: sp.Bands, Rows: sp.Rows, Seed: sp.Seed, RecallAtThreshold: minhash.Recall(sp.Threshold, sp.Bands, sp.Rows),
		WordEdits: a.opts.Edits, Documents: a.opts.Documents,
	}}
	if d := a.opts.Dense; d != nil {
		rep.Settings.DenseModel, rep.Settings.DenseThreshold, rep.Settings.DenseTopK = d.Model, d.Threshold, d.TopK
	}
	for _, f := range a.ck.Files {
		rep.Train = append(rep.Train, TrainFile{Path: f.Path, Layout: f.Layout, Rows: f.Rows, Texts: f.Texts, Empty: f.Empty, Matches: f.Matches})
	}
	index := make(map[string]int, len(a.items))
	key := func(task string, kind Kind, id string) string { return task + "\x00" + string(kind) + "\x00" + id }
	for i, it := range a.items {
		index[key(a.tasks[it.task].Name, it.kind, it.id)] = i
	}
	best := make([]*Match, len(a.items))
	count := make([]int, len(a.items))
	taskOf := make(map[string]int, len(a.tasks))
	for i, t := range a.tasks {
		taskOf[t.Name] = i
	}
	// Pairs: judgments whose query and document match one record.
	pairs := make([]map[[2]string]bool, len(a.tasks))
	for i := range pairs {
		pairs[i] = map[[2]string]bool{}
	}
	var recFile string
	recLine, recElem := -1, -1
	var recQ, recD []int
	flush := func() {
		for _, q := range recQ {
			for _, d := range recD {
				qi, di := a.items[q], a.items[d]
				if qi.task == di.task && a.tasks[qi.task].Qrels[qi.id][di.id] > 0 {
					pairs[qi.task][[2]string{qi.id, di.id}] = true
				}
			}
		}
		recQ, recD = recQ[:0], recD[:0]
	}
	err := readMatches(matchesPath, func(m Match) error {
		i, ok := index[key(m.Task, m.BenchmarkKind, m.BenchmarkID)]
		if !ok {
			return fmt.Errorf("%s names %s %s %q, which the benchmark does not have; the state directory belongs to another run, delete it", matchesPath, m.Task, m.BenchmarkKind, m.BenchmarkID)
		}
		if m.TrainFile != recFile || m.TrainLine != recLine || m.TrainElement != recElem {
			flush()
			recFile, recLine, recElem = m.TrainFile, m.TrainLine, m.TrainElement
		}
		if m.BenchmarkKind == QueryKind {
			recQ = append(recQ, i)
		} else {
			recD = append(recD, i)
		}
		count[i]++
		if b := best[i]; b == nil || stronger(m, *b) {
			mm := m
			best[i] = &mm
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	flush()
	for ti, t := range a.tasks {
		tl := TaskLeakage{Task: t.Name, Pairs: len(pairs[ti]), MissingPositives: a.missing[ti]}
		tl.Judgments = new(int)
		for q, docs := range t.Qrels {
			if _, ok := index[key(t.Name, QueryKind, q)]; !ok {
				continue
			}
			for d, g := range docs {
				if _, ok := index[key(t.Name, DocumentKind, d)]; ok && g > 0 {
					*tl.Judgments++
				}
			}
		}
		var examples [2][]Match
		for i, it := range a.items {
			if it.task != ti {
				continue
			}
			c := &tl.Queries
			k := 0
			if it.kind == DocumentKind {
				c, k = &tl.Documents, 1
			}
			c.Total++
			if len(a.coll.Shingles(i)) == 0 {
				c.Empty++
			}
			b := best[i]
			if b == nil {
				continue
			}
			c.Contaminated++
			switch b.Match {
			case MatchExact:
				c.Exact++
			case MatchNear:
				c.Near++
			default:
				c.Dense++
			}
			examples[k] = append(examples[k], *b)
		}
		for _, c := range []*Contamination{&tl.Queries, &tl.Documents} {
			if c.Total > 0 {
				c.Share = float64(c.Contaminated) / float64(c.Total)
			}
		}
		for _, ex := range examples {
			sortMatches(ex)
			for _, m := range ex[:min(len(ex), a.opts.Examples)] {
				i := index[key(m.Task, m.BenchmarkKind, m.BenchmarkID)]
				tl.Examples = append(tl.Examples, Example{Kind: m.BenchmarkKind, ID: m.BenchmarkID, Text: snippet(a.items[i].text, 300),
					TrainFile: m.TrainFile, TrainLine: m.TrainLine, TrainElement: m.TrainElement, TrainField: m.TrainField, TrainText: m.TrainText,
					Match: m.Match, Measure: m.Measure, Similarity: m.Similarity, Matches: count[i]})
			}
		}
		rep.Tasks = append(rep.Tasks, tl)
	}
	return rep, nil
}

// stronger reports whether m beats b as a text's strongest match: by
// kind (exact, near, dense), then similarity; the earlier wins a tie.
func stronger(m, b Match) bool {
	if r, s := kindRank(m.Match), kindRank(b.Match); r != s {
		return r < s
	}
	return m.Similarity > b.Similarity
}

// PairsText is the pairs as tables show them: "—" when no judgment had
// both its query and its document audited (--documents none), where 0
// would read as checked and clean.
func (t TaskLeakage) PairsText() string {
	if t.Judgments != nil && *t.Judgments == 0 {
		return "—"
	}
	return fmt.Sprint(t.Pairs)
}

// JudgmentsText is the audited judgments as tables show them, blank for an
// audit file that did not count them.
func (t TaskLeakage) JudgmentsText() string {
	if t.Judgments == nil {
		return ""
	}
	return fmt.Sprint(*t.Judgments)
}

// Notes say what the task's rows leave unsaid: audited texts with no
// words after normalisation (in the totals the shares divide by, yet
// nothing can match them) and relevant documents the corpus lacks (not
// audited, not in the totals).
func (t TaskLeakage) Notes() []string {
	var notes, parts []string
	if n := t.Queries.Empty; n > 0 {
		parts = append(parts, fmt.Sprintf("%d %s", n, errtext.Plural(n, "query", "queries")))
	}
	if n := t.Documents.Empty; n > 0 {
		parts = append(parts, fmt.Sprintf("%d %s", n, errtext.Plural(n, "document", "documents")))
	}
	if len(parts) > 0 {
		verb := "have"
		if t.Queries.Empty+t.Documents.Empty == 1 {
			verb = "has"
		}
		notes = append(notes, fmt.Sprintf("%s %s no words after normalisation and cannot be audited (counted in the totals and shares)", strings.Join(parts, " and "), verb))
	}
	if n := t.MissingPositives; n > 0 {
		notes = append(notes, fmt.Sprintf("%d relevant %s the corpus lacks %s not audited (not in the totals)", n, errtext.Plural(n, "document", "documents"), errtext.Plural(n, "was", "were")))
	}
	return notes
}

// Percent is the share as tables show it; "—" when nothing of the kind
// was audited.
func (c Contamination) Percent() string {
	if c.Total == 0 {
		return "—"
	}
	return fmt.Sprintf("%.1f%%", 100*c.Share)
}

// WriteTable writes the report as aligned text: the settings, one row per
// task, then the examples.
func (r *LeakageReport) WriteTable(w io.Writer) error {
	s := r.Settings
	head := []string{fmt.Sprintf("Leakage audit: exact = equal after normalisation (%s).", s.Normalization)}
	near := fmt.Sprintf("Near = Jaccard ≥ %s over %d-word shingles", settingText(s.Threshold), s.Shingle)
	if e := s.WordEdits; !e.Off {
		near += fmt.Sprintf(", or a text of %d–%d words with one word replaced, dropped or added, a content word by another from %d words (word_edits = 1 − edits/words)", e.MinWords, e.MaxWords, e.ContentMinWords)
	}
	head = append(head, near+".")
	lsh := lshLines(s.Bands, s.Rows, s.Seed, s.RecallAtThreshold)
	head = append(head, "Jaccard "+lsh[0]+" "+lsh[1]+".")
	if s.DenseModel != "" {
		head = append(head, fmt.Sprintf("Dense = cosine ≥ %s with %s, among the %d benchmark texts nearest each training text (exact search).", settingText(s.DenseThreshold), s.DenseModel, s.DenseTopK))
	}
	head = append(head, fmt.Sprintf("Documents audited: %s.", s.Documents))
	for _, p := range head {
		fmt.Fprintln(w, strings.Join(textwrap.Lines(p, 120), "\n"))
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "training file\trows\ttexts\tempty\tmatches\t\tlayout")
	for _, f := range r.Train {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t\t%s\n", f.Path, f.Rows, f.Texts, f.Empty, f.Matches, f.Layout)
	}
	tw.Flush()
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "task\tqueries\tleaked\tshare\texact/near/dense\tdocuments\tleaked\tshare\texact/near/dense\tpairs\tof judgments\t")
	for _, t := range r.Tasks {
		q, d := t.Queries, t.Documents
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%d/%d/%d\t%d\t%d\t%s\t%d/%d/%d\t%s\t%s\t\n", t.Task,
			q.Total, q.Contaminated, q.Percent(), q.Exact, q.Near, q.Dense,
			d.Total, d.Contaminated, d.Percent(), d.Exact, d.Near, d.Dense, t.PairsText(), t.JudgmentsText())
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, t := range r.Tasks {
		for _, note := range t.Notes() {
			fmt.Fprintf(w, "%s: %s\n", t.Task, note)
		}
	}
	for _, t := range r.Tasks {
		if len(t.Examples) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n%s: examples\n", t.Task)
		for _, e := range t.Examples {
			at := fmt.Sprintf("%s:%d", e.TrainFile, e.TrainLine)
			if e.TrainElement > 0 {
				at += fmt.Sprintf(" element %d", e.TrainElement)
			}
			fmt.Fprintf(w, "  %s %s  %s %s %.3f  %s (%s, %d %s)\n    benchmark: %s\n    training:  %s\n",
				e.Kind, e.ID, e.Match, measureName(e.Measure), e.Similarity, at, e.TrainField, e.Matches, errtext.Plural(e.Matches, "match", "matches"),
				snippet(e.Text, 120), snippet(e.TrainText, 120))
		}
	}
	return nil
}

// settingText writes a setting as given: 0.855 stays 0.855, where %.2f showed a
// threshold the audit did not use.
func settingText(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

// lshLines say how near-duplicate candidates are found and what that
// promises: the LSH plan and seed, the chance that a pair at the threshold
// is found, and that the similarities reported are exact. Two lines, each
// within 120 columns.
func lshLines(bands, rows int, seed uint64, recall float64) [2]string {
	return [2]string{
		fmt.Sprintf("candidates from MinHash LSH, %d bands × %d rows, seed %d (the same pairs on every run with this seed):", bands, rows, seed),
		fmt.Sprintf("a pair at the threshold is found with probability %.3f, missed with %.3f; similarities are exact, not estimates", recall, 1-recall),
	}
}

// lshNote is lshLines on one line, for pages.
func lshNote(bands, rows int, seed uint64, recall float64) string {
	l := lshLines(bands, rows, seed, recall)
	return l[0] + " " + l[1]
}

// measureName is how the table names a similarity measure; files written
// before the measure field was recorded name none.
func measureName(m string) string {
	if m == "" {
		return "similarity"
	}
	return m
}
