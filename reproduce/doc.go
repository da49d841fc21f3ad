package reproduce

import (
	_ "embed"
	"fmt"
	"io"
	"strings"
	"text/template"
)

// DocTemplate is docs/REPRODUCE.md's text around the tables the specs
// fill in; Doc renders it.
//
//go:embed REPRODUCE.md.tmpl
var DocTemplate string

// Doc renders docs/REPRODUCE.md from the specs: its prose and the tables
// of expected scores, each spec's needs and command.
func Doc(w io.Writer, specs []*Spec) error {
	byName := map[string]*Spec{}
	for _, s := range specs {
		byName[s.Name] = s
	}
	funcs := template.FuncMap{
		"spec": func(name string) (*Spec, error) {
			s, ok := byName[name]
			if !ok {
				return nil, fmt.Errorf("the template names spec %q, which does not exist", name)
			}
			return s, nil
		},
		"group": func(g string) []*Spec {
			var out []*Spec
			for _, s := range specs {
				if strings.HasPrefix(s.Name, g+"/") {
					out = append(out, s)
				}
			}
			return out
		},
		"all":     func() []*Spec { return specs },
		"score":   formatScore,
		"pct":     func(v float64) string { return fmt.Sprintf("%.2f", v*100) },
		"avg":     average,
		"metrics": func(s *Spec) []string { return metricsOf(s.Expected.Tasks) },
		"value": func(e ExpectedTask, m string) string {
			if v, ok := e.Scores[m]; ok {
				return formatScore(v)
			}
			return "—"
		},
		"label":  metricLabel,
		"needs":  func(s *Spec) string { return s.Needs.Describe(s.Data) },
		"brief":  func(s *Spec) string { return s.Needs.Brief() },
		"tasks":  func(s *Spec) string { return strings.Join(s.TaskNames(), ", ") },
		"inCI":   func(s *Spec) bool { return s.Data.Suite == SuiteLocal && s.Needs.Offline() },
		"count":  func(ss []*Spec) int { return len(ss) },
		"tolpct": func(s *Spec) string { return formatScore(s.Expected.Tolerance) },
	}
	t, err := template.New("REPRODUCE.md").Funcs(funcs).Option("missingkey=error").Parse(DocTemplate)
	if err != nil {
		return err
	}
	return t.Execute(w, nil)
}

// average is R2MED's task average of a metric ×100 with two decimals: a
// plain float sum over the tasks in order, ÷ their number (the leaderboard's
// rule); "—" when a task lacks it. Where the source printed another
// average of nDCG@10 (Source.PrintedAverage) it follows, as the
// leaderboard shows it: "35.22 (printed 35.19)".
func average(s *Spec, metric string) string {
	sum := 0.0
	for _, e := range s.Expected.Tasks {
		v, ok := e.Scores[metric]
		if !ok {
			return "—"
		}
		sum += v
	}
	avg := fmt.Sprintf("%.2f", sum/float64(len(s.Expected.Tasks))*100)
	if p := s.Source.PrintedAverage; p != 0 && metric == "ndcg_at_10" {
		avg += fmt.Sprintf(" (printed %.2f)", p)
	}
	return avg
}

// metricLabel is a metric as tables head it.
func metricLabel(m string) string {
	switch m {
	case "ndcg_at_10":
		return "nDCG@10"
	case "hit_at_10":
		return "hit@10"
	case "recall_at_100":
		return "Recall@100"
	case "map_at_100":
		return "MAP@100"
	case "precision_at_10":
		return "P@10"
	case "mrr":
		return "MRR"
	}
	return m
}

// Brief says in a few words what a spec needs besides its data, each
// with what provides it: "r2med model pull bge", "--base-url:
// nvidia/NV-Embed-v2", "OPENAI_API_KEY", "GPU"; "nothing else" when it
// needs nothing more.
func (n Needs) Brief() string {
	var parts []string
	for _, w := range n.Weights {
		if w.Pull != "" {
			parts = append(parts, w.Pull)
		} else {
			parts = append(parts, "--"+w.Flag+": "+w.Model)
		}
	}
	for _, sv := range n.Servers {
		parts = append(parts, "--"+sv.Flag+": "+sv.Serves)
	}
	parts = append(parts, n.Keys...)
	if n.GPU {
		parts = append(parts, "GPU")
	}
	if len(parts) == 0 {
		return "nothing else"
	}
	return strings.Join(parts, ", ")
}

// Describe says in words what running a spec on data d takes, for docs
// and listings.
func (n Needs) Describe(d Data) string {
	parts := []string{dataPhrase(d, true)}
	for _, w := range n.Weights {
		s := w.Model
		switch {
		case w.Pull != "" && w.Flag != "":
			s += " (" + w.Pull + ", or --" + w.Flag + ")"
		case w.Pull != "":
			s += " (" + w.Pull + ")"
		case w.Flag != "":
			s += " (--" + w.Flag + ")"
		}
		parts = append(parts, s)
	}
	for _, sv := range n.Servers {
		how := "--" + sv.Flag
		if sv.Env != "" {
			how += " or " + sv.Env
		}
		parts = append(parts, sv.What+" ("+how+")")
	}
	for _, k := range n.Keys {
		parts = append(parts, k)
	}
	if n.GPU {
		parts = append(parts, "a GPU")
	}
	return strings.Join(parts, "; ")
}

// dataPhrase names where a spec's data comes from, in words (long) or for
// a listing's column.
func dataPhrase(d Data, long bool) string {
	switch {
	case d.Suite == SuiteLocal && long:
		return "local data (--local-data)"
	case d.Suite == SuiteLocal:
		return "local"
	case d.Suite == SuiteNano && long:
		return "NanoR2MED from the Hub"
	case d.Suite == SuiteNano:
		return "NanoR2MED (Hub)"
	case long:
		return "the R2MED tasks from the Hub"
	}
	return "R2MED (Hub)"
}
