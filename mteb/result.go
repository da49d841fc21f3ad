package mteb

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/r2med/r2med/internal/errtext"
	"github.com/r2med/r2med/results"
)

// TaskResult is MTEB's results file for one task (mteb/results/
// task_result.py): the dataset revision and task evaluated, per split a
// list of score sets (one per subset), and the evaluation time.
type TaskResult struct {
	DatasetRevision string
	TaskName        string
	// MTEBVersion is nil for results MTEB did not compute (ours: the key
	// is written as null, which MTEB's loader accepts as today's layout).
	MTEBVersion *string
	// Scores maps a split ("test") to its score sets.
	Scores map[string][]ScoreSet
	// EvaluationTime is in seconds; nil when unknown.
	EvaluationTime *float64
	KgCO2Emissions *float64
}

// ScoreSet is one subset's scores: MTEB's ScoresDict.
type ScoreSet struct {
	Subset    string   // hf_subset: "default" for R2MED's tasks
	Languages []string // languages: ["eng-Latn"]
	MainScore float64  // main_score: the task's main metric's value
	// Metrics are the other numeric scores by MTEB's keys (ndcg_at_10,
	// recall_at_100, mrr_at_10, …).
	Metrics map[string]float64
}

// Score returns a metric of the split's default subset, main_score
// included.
func (r *TaskResult) Score(split, metric string) (float64, bool) {
	for _, s := range r.Scores[split] {
		if s.Subset != Subset {
			continue
		}
		if metric == "main_score" {
			return s.MainScore, true
		}
		v, ok := s.Metrics[metric]
		return v, ok
	}
	return 0, false
}

// Validate checks a results file as MTEB's TaskResult schema does, so
// that what it accepts MTEB's loader accepts: a JSON object with
// dataset_revision and task_name (strings), mteb_version (a string or
// null), scores (an object of splits, each a list of objects holding
// main_score, hf_subset as a string and languages as a list) and
// evaluation_time (a number or null); kg_co2_emissions, date and
// evaluation_phases may follow. Other keys are ignored, as pydantic's
// default does. A file without mteb_version is MTEB's layout before
// version 1.11, which MTEB converts and this reader does not.
func Validate(data []byte) error {
	if err := errtext.CheckJSONText(data, "byte"); err != nil {
		return err
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return fmt.Errorf("not a JSON object: %s", errtext.JSONMsg(err))
	}
	if top == nil {
		return errors.New("not a JSON object: null")
	}
	if _, ok := top["mteb_version"]; !ok {
		if _, old := top["mteb_dataset_name"]; old {
			return errors.New("MTEB's layout before version 1.11 (mteb_dataset_name, splits at the top); load and save it with MTEB ≥ 1.11 first")
		}
	}
	want := func(key string, kinds ...string) error {
		raw, ok := top[key]
		if !ok {
			return fmt.Errorf("no %q: MTEB's TaskResult requires it", key)
		}
		if k := errtext.JSONKind(raw); !slices.Contains(kinds, k) {
			return fmt.Errorf("%q is %s; MTEB's TaskResult wants %s", key, k, strings.Join(kinds, " or "))
		}
		return nil
	}
	for _, c := range []struct {
		key   string
		kinds []string
	}{
		{"dataset_revision", []string{"a string"}},
		{"task_name", []string{"a string"}},
		{"mteb_version", []string{"a string", "null"}},
		{"scores", []string{"an object"}},
		{"evaluation_time", []string{"a number", "null"}},
	} {
		if err := want(c.key, c.kinds...); err != nil {
			return err
		}
	}
	for _, c := range []struct {
		key   string
		kinds []string
	}{
		{"kg_co2_emissions", []string{"a number", "null"}},
		{"date", []string{"a number", "a string", "null"}},
		{"evaluation_phases", []string{"an array", "null"}},
	} {
		if _, ok := top[c.key]; ok {
			if err := want(c.key, c.kinds...); err != nil {
				return err
			}
		}
	}
	var scores map[string]json.RawMessage
	if err := json.Unmarshal(top["scores"], &scores); err != nil {
		return fmt.Errorf("scores: %s", errtext.JSONMsg(err))
	}
	for _, split := range slices.Sorted(maps.Keys(scores)) {
		if k := errtext.JSONKind(scores[split]); k != "an array" {
			return fmt.Errorf("scores.%s is %s; MTEB wants a list of score sets, one per subset", split, k)
		}
		var sets []json.RawMessage
		json.Unmarshal(scores[split], &sets)
		for i, raw := range sets {
			where := fmt.Sprintf("scores.%s[%d]", split, i)
			if k := errtext.JSONKind(raw); k != "an object" {
				return fmt.Errorf("%s is %s; MTEB wants an object of scores", where, k)
			}
			var set map[string]json.RawMessage
			json.Unmarshal(raw, &set)
			if _, ok := set["main_score"]; !ok {
				return fmt.Errorf("%s has no main_score", where)
			}
			if k := errtext.JSONKind(set["hf_subset"]); k != "a string" {
				return fmt.Errorf("%s: hf_subset is %s; MTEB wants a string", where, missingOr(set, "hf_subset", k))
			}
			if k := errtext.JSONKind(set["languages"]); k != "an array" {
				return fmt.Errorf("%s: languages is %s; MTEB wants a list", where, missingOr(set, "languages", k))
			}
		}
	}
	return nil
}

func missingOr(m map[string]json.RawMessage, key, kind string) string {
	if _, ok := m[key]; !ok {
		return "missing"
	}
	return kind
}

// Parse reads a results file that Validate accepts. Scores that are not
// numbers (MTEB's files hold none in retrieval tasks besides hf_subset
// and languages) are left out of Metrics.
func Parse(data []byte) (*TaskResult, error) {
	if err := Validate(data); err != nil {
		return nil, err
	}
	var raw struct {
		DatasetRevision string                                  `json:"dataset_revision"`
		TaskName        string                                  `json:"task_name"`
		MTEBVersion     *string                                 `json:"mteb_version"`
		Scores          map[string][]map[string]json.RawMessage `json:"scores"`
		EvaluationTime  *float64                                `json:"evaluation_time"`
		KgCO2Emissions  *float64                                `json:"kg_co2_emissions"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("%s", errtext.JSONMsg(err))
	}
	r := &TaskResult{DatasetRevision: raw.DatasetRevision, TaskName: raw.TaskName, MTEBVersion: raw.MTEBVersion,
		Scores: map[string][]ScoreSet{}, EvaluationTime: raw.EvaluationTime, KgCO2Emissions: raw.KgCO2Emissions}
	for split, sets := range raw.Scores {
		for i, set := range sets {
			s := ScoreSet{Metrics: map[string]float64{}}
			json.Unmarshal(set["hf_subset"], &s.Subset)
			if err := json.Unmarshal(set["languages"], &s.Languages); err != nil {
				return nil, fmt.Errorf("scores.%s[%d]: languages is not a list of texts", split, i)
			}
			if err := json.Unmarshal(set["main_score"], &s.MainScore); err != nil {
				return nil, fmt.Errorf("scores.%s[%d]: main_score is %s, not a number", split, i, errtext.JSONKind(set["main_score"]))
			}
			for k, v := range set {
				var f float64
				if k != "main_score" && json.Unmarshal(v, &f) == nil {
					s.Metrics[k] = f
				}
			}
			r.Scores[split] = append(r.Scores[split], s)
		}
	}
	return r, nil
}

// Marshal writes the file as MTEB's TaskResult.to_disk does: json.dump
// with indent 2, the keys in the model's order, floats as Python prints
// them; a score set's metrics in MTEB's order (ndcg, map, recall,
// precision, mrr by cutoff), then main_score, hf_subset and languages.
func (r *TaskResult) Marshal() []byte {
	var b bytes.Buffer
	b.WriteString("{\n")
	fmt.Fprintf(&b, "  \"dataset_revision\": %s,\n", jsonText(r.DatasetRevision))
	fmt.Fprintf(&b, "  \"task_name\": %s,\n", jsonText(r.TaskName))
	fmt.Fprintf(&b, "  \"mteb_version\": %s,\n", jsonOptText(r.MTEBVersion))
	b.WriteString("  \"scores\": {")
	splits := slices.Sorted(maps.Keys(r.Scores))
	for i, split := range splits {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "\n    %s: [", jsonText(split))
		for j, s := range r.Scores[split] {
			if j > 0 {
				b.WriteByte(',')
			}
			b.WriteString("\n      {")
			for _, k := range MetricOrder(s.Metrics) {
				fmt.Fprintf(&b, "\n        %s: %s,", jsonText(k), results.PyFloat(s.Metrics[k]))
			}
			fmt.Fprintf(&b, "\n        \"main_score\": %s,", results.PyFloat(s.MainScore))
			fmt.Fprintf(&b, "\n        \"hf_subset\": %s,", jsonText(s.Subset))
			b.WriteString("\n        \"languages\": [")
			for l, lang := range s.Languages {
				if l > 0 {
					b.WriteByte(',')
				}
				fmt.Fprintf(&b, "\n          %s", jsonText(lang))
			}
			if len(s.Languages) > 0 {
				b.WriteString("\n        ")
			}
			b.WriteString("]\n      }")
		}
		if len(r.Scores[split]) > 0 {
			b.WriteString("\n    ")
		}
		b.WriteByte(']')
	}
	if len(splits) > 0 {
		b.WriteString("\n  ")
	}
	b.WriteString("},\n")
	fmt.Fprintf(&b, "  \"evaluation_time\": %s,\n", optFloat(r.EvaluationTime))
	fmt.Fprintf(&b, "  \"kg_co2_emissions\": %s\n", optFloat(r.KgCO2Emissions))
	b.WriteString("}")
	return b.Bytes()
}

// families are MTEB's retrieval metric families in the order its files
// list them.
var families = []string{"ndcg_at_", "map_at_", "recall_at_", "precision_at_", "mrr_at_"}

// MetricOrder lists metric keys as MTEB's files order them: by family,
// then cutoff; other keys after, by name.
func MetricOrder(m map[string]float64) []string {
	rank := func(k string) (int, int) {
		n, f := cutoff(k)
		return f, n
	}
	keys := slices.Collect(maps.Keys(m))
	slices.SortFunc(keys, func(a, b string) int {
		fa, na := rank(a)
		fb, nb := rank(b)
		if fa != fb {
			return fa - fb
		}
		if na != nb {
			return na - nb
		}
		return strings.Compare(a, b)
	})
	return keys
}

func optFloat(f *float64) string {
	if f == nil {
		return "null"
	}
	return results.PyFloat(*f)
}

func jsonOptText(s *string) string {
	if s == nil {
		return "null"
	}
	return jsonText(*s)
}

// jsonText is a JSON string as Python's json.dumps writes it.
func jsonText(s string) string { return results.PyString(s) }
