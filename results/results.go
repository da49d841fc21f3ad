// Package results writes what a run leaves behind: R2MED's per-task result
// file, in the exact shape R2MED publishes (so our files sit beside the
// official ones and tools read both), and a manifest that records every knob,
// input checksum and stage timing needed to reproduce the numbers.
package results

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/r2med/r2med/internal/errtext"
	"github.com/r2med/r2med/internal/fileio"
	"github.com/r2med/r2med/internal/pynum"
	"github.com/r2med/r2med/tasks"
)

// Cutoffs are the k values in R2MED's result files.
var Cutoffs = []int{1, 10, 25, 50, 100}

// R2MED is one task's result as R2MED's eval scripts write it. Test maps
// metric keys (ndcg_at_10, map_at_1, recall_at_100, precision_at_25, mrr…)
// to per-task means rounded to 5 decimals. Extra holds the other top-level
// keys some official files carry (retriever_name, gar_method, gar_llm,
// reranker_name, topk), strings or numbers.
type R2MED struct {
	DatasetName    string
	EvaluationTime string
	ModelName      string
	// MeanOver says which queries the means are over, as r2med's files
	// state it ("mean_over": "all judged queries", measure.MeanOverJudged);
	// R2MED's own files, which average over the same queries, leave it out.
	MeanOver string
	Test     map[string]float64
	Extra    map[string]any
}

// EvaluationTime formats seconds the way R2MED does: minutes rounded to two
// decimals, printed as Python prints a float ("0.21 minutes", "1.0 minutes").
func EvaluationTime(seconds float64) string {
	m := math.RoundToEven(seconds/60*100) / 100
	return PyFloat(m) + " minutes"
}

// Marshal renders r as Python's json.dump(indent=2, sort_keys=True) does,
// floats in Python's repr and no final newline, so a file we write is
// byte-comparable with an official one holding the same numbers.
func (r *R2MED) Marshal() []byte {
	top := map[string]string{}
	for k, v := range r.Extra {
		top[k] = pyValue(v)
	}
	top["dataset_name"] = jsonString(r.DatasetName)
	top["evaluation_time"] = jsonString(r.EvaluationTime)
	if r.ModelName != "" {
		top["model_name"] = jsonString(r.ModelName)
	}
	if r.MeanOver != "" {
		top["mean_over"] = jsonString(r.MeanOver)
	}
	var t bytes.Buffer
	t.WriteByte('{')
	for i, k := range sortedKeys(r.Test) {
		if i > 0 {
			t.WriteByte(',')
		}
		fmt.Fprintf(&t, "\n    %s: %s", jsonString(k), PyFloat(r.Test[k]))
	}
	if len(r.Test) > 0 {
		t.WriteString("\n  ")
	}
	t.WriteByte('}')
	top["test"] = t.String()

	var b bytes.Buffer
	b.WriteString("{")
	for i, k := range sortedKeys(top) {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "\n  %s: %s", jsonString(k), top[k])
	}
	b.WriteString("\n}")
	return b.Bytes()
}

// UnmarshalJSON reads any R2MED result file into r.
func (r *R2MED) UnmarshalJSON(data []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	*r = R2MED{Extra: map[string]any{}}
	for k, v := range raw {
		var err error
		switch k {
		case "dataset_name":
			err = json.Unmarshal(v, &r.DatasetName)
		case "evaluation_time":
			err = json.Unmarshal(v, &r.EvaluationTime)
		case "model_name":
			err = json.Unmarshal(v, &r.ModelName)
		case "mean_over":
			err = json.Unmarshal(v, &r.MeanOver)
		case "test":
			err = json.Unmarshal(v, &r.Test)
		default:
			var x any
			dec := json.NewDecoder(bytes.NewReader(v))
			dec.UseNumber()
			err = dec.Decode(&x)
			r.Extra[k] = x
		}
		if err != nil {
			return fmt.Errorf("key %q: %w", k, err)
		}
	}
	if r.Test == nil {
		return fmt.Errorf("no \"test\" metrics")
	}
	return nil
}

// MarshalJSON makes R2MED usable with encoding/json.
func (r *R2MED) MarshalJSON() ([]byte, error) { return r.Marshal(), nil }

func pyValue(v any) string {
	switch x := v.(type) {
	case string:
		return jsonString(x)
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return strconv.FormatInt(i, 10)
		}
		f, _ := x.Float64()
		return PyFloat(f)
	case int:
		return strconv.Itoa(x)
	case float64:
		return PyFloat(x)
	case bool:
		return strconv.FormatBool(x)
	case nil:
		return "null"
	default:
		b, _ := json.Marshal(x)
		return string(b)
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// WriteFile writes r atomically.
func (r *R2MED) WriteFile(path string) error {
	return fileio.WriteAtomic(path, func(w io.Writer) error {
		_, err := w.Write(r.Marshal())
		return err
	})
}

// ReadR2MED reads an R2MED result file. Official files use three metric-name
// styles; ReadR2MED returns keys as written.
func ReadR2MED(path string) (*R2MED, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if err := errtext.CheckJSONFile(path, data); err != nil {
		return nil, err
	}
	var r R2MED
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fileio.Errorf(path, 0, "not an R2MED result file: %v", err)
	}
	return &r, nil
}

// PyString is s as a JSON string the way Python's json.dumps writes it
// (ensure_ascii: everything outside printable ASCII escaped).
func PyString(s string) string { return jsonString(s) }

// PyFloat formats f as Python's json.dumps writes a float (repr's shortest
// digits, 1e-05 style exponents, NaN and Infinity); see pynum.Format.
func PyFloat(f float64) string { return pynum.Format(f) }

func jsonString(s string) string {
	// Python's json.dump escapes non-ASCII by default (ensure_ascii=True).
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f || r > 0x7e:
			if r > 0xffff {
				r -= 0x10000
				fmt.Fprintf(&b, `\u%04x\u%04x`, 0xd800+(r>>10), 0xdc00+(r&0x3ff))
			} else {
				fmt.Fprintf(&b, `\u%04x`, r)
			}
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// UpperKeys renames R2MED's lower-case metric keys (ndcg_at_10, map_at_1,
// recall_at_100, precision_at_25, mrr) to the upper-case style its GAR+BM25
// and reranker result files use (NDCG@10, MAP@1, Recall@100, P@25, MRR).
// Other keys are kept as they are.
func UpperKeys(test map[string]float64) map[string]float64 {
	out := make(map[string]float64, len(test))
	for k, v := range test {
		out[upperKey(k)] = v
	}
	return out
}

var upperFamilies = []struct{ lower, upper string }{
	{"ndcg_at_", "NDCG@"}, {"map_at_", "MAP@"}, {"recall_at_", "Recall@"}, {"precision_at_", "P@"},
}

func upperKey(k string) string {
	if k == "mrr" {
		return "MRR"
	}
	for _, f := range upperFamilies {
		if rest, ok := strings.CutPrefix(k, f.lower); ok {
			return f.upper + rest
		}
	}
	return k
}

// Metric looks a metric up by its lower-case key in either style, so
// callers need not know which one a file uses.
func (r *R2MED) Metric(key string) (float64, bool) {
	if v, ok := r.Test[key]; ok {
		return v, true
	}
	v, ok := r.Test[upperKey(key)]
	return v, ok
}

// BrightMRRDepth is how deep BRIGHT's MRR reads: its retrievers keep each
// query's top 1000 (retrievers.py), and run.py's
// calculate_retrieval_metrics takes pytrec_eval's recip_rank over them.
const BrightMRRDepth = 1000

// MRRLabel names the MRR (trec_eval's recip_rank over the run file) of a
// run on task, the name its data carries, whose lists hold at most depth
// documents of a corpus of documents: "MRR", or "MRR@depth" for a BRIGHT
// task evaluated from lists shorter than BRIGHT's 1000 and than the
// corpus, whose MRR counts 0 for a query whose first relevant document
// lies below depth, where BRIGHT's counts its reciprocal rank. (R2MED's
// MRR is over its top 100, as the run's default depth.) depth or
// documents 0 means unknown: the label is then "MRR".
func MRRLabel(task string, depth, documents int) string {
	_, s, err := tasks.Resolve(task)
	if err != nil || s.Benchmark() != tasks.Bright || depth <= 0 || depth >= BrightMRRDepth || documents <= 0 || depth >= documents {
		return "MRR"
	}
	return "MRR@" + strconv.Itoa(depth)
}

// MRRNote says what an MRR named label (MRRLabel) is and how to get
// BRIGHT's: "MRR over each query's top 100, where BRIGHT's run.py reads
// its top 1000 (r2med run --top-k 1000)" for "MRR@100"; "" for "MRR".
// Every view that names a run's MRR by its depth explains it in these
// words.
func MRRNote(label string) string {
	depth, ok := strings.CutPrefix(label, "MRR@")
	if !ok {
		return ""
	}
	return fmt.Sprintf("MRR over each query's top %s, where BRIGHT's run.py reads its top %d (r2med run --top-k %[2]d)", depth, BrightMRRDepth)
}

// MRRLabelNote says that the MRR a view shows of system on tasks is its
// label, and what that is: "bm25 #5729's MRR on BRIGHT-biology is its
// MRR@100, MRR over each query's top 100, where BRIGHT's run.py reads its
// top 1000 (r2med run --top-k 1000)"; "" for "MRR".
func MRRLabelNote(system string, tasks []string, label string) string {
	note := MRRNote(label)
	if note == "" {
		return ""
	}
	return fmt.Sprintf("%s's MRR on %s is its %s, %s", system, strings.Join(tasks, ", "), label, note)
}

// MRRMark is what a view shows beside an MRR named label where its
// column or heading says MRR: "@100" for "MRR@100" (a cell reads
// "34.50 @100"); "" for "MRR" and "".
func MRRMark(label string) string {
	if d, ok := strings.CutPrefix(label, "MRR@"); ok {
		return "@" + d
	}
	return ""
}

// MRRMarkNotes explain the MRRMarks of labels, a line per mark, the
// shallowest first: "@100: MRR over each query's top 100, where BRIGHT's
// run.py reads its top 1000 (r2med run --top-k 1000)" (MRRNote). Labels
// without a mark add none.
func MRRMarkNotes(labels []string) []string {
	var depths []int
	for _, l := range labels {
		if d, err := strconv.Atoi(strings.TrimPrefix(MRRMark(l), "@")); err == nil && !slices.Contains(depths, d) {
			depths = append(depths, d)
		}
	}
	slices.Sort(depths)
	out := make([]string, len(depths))
	for i, d := range depths {
		l := "MRR@" + strconv.Itoa(d)
		out[i] = MRRMark(l) + ": " + MRRNote(l)
	}
	return out
}
