// Package reproduce keeps every published number r2med can reproduce as
// data, the way Anserini keeps its regressions: one YAML spec per published
// configuration — the data it ran on (suite, tasks, revisions), the
// pipeline (the schema `r2med run --pipeline` reads), what it needs
// (models, servers, API keys, a GPU), the scores it should give per task
// with a tolerance, and where those scores were published. The specs ship
// inside the package (All); `r2med reproduce` runs them and prints, per task
// and metric, what was expected, what came out, the difference and ✓ or ✗.
//
// The specs under specs/ are generated (go generate ./reproduce) from the
// data they cite: R2MED's published result files (through leaderboard's
// published.json), NanoR2MED's task cards, the results later papers
// printed, and trec_eval's output on R2MED's BM25 run of NFCorpus. A test
// regenerates them and requires the committed files byte for byte, and
// docs/REPRODUCE.md is rendered from them (Doc).
//
// This package holds the specs and the comparison; it runs nothing. The
// stages run in package pipeline (pipeline.Reproduce), which reads a spec's
// pipeline: as any pipeline file.
package reproduce

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/r2med/r2med/internal/yamlx"
)

//go:generate go run ./internal/gen -shared ../../shared/data -specs specs -doc ../docs/REPRODUCE.md

// Spec is one published configuration and what reproducing it should give.
type Spec struct {
	// Name is the spec's path under specs/ without .yaml ("r2med/bm25").
	Name  string `yaml:"-"`
	Title string `yaml:"title"`
	// Source says where the expected scores were published.
	Source Source `yaml:"source"`
	Data   Data   `yaml:"data"`
	// Pipeline is the pipeline, in the schema of a pipeline file (`r2med
	// run --pipeline`); config.FromYAML reads it.
	Pipeline yaml.Node `yaml:"pipeline"`
	Needs    Needs     `yaml:"needs"`
	// Evaluate says how the run is scored: Evaluate R2MED (the default)
	// or CandidateCard.
	Evaluate string   `yaml:"evaluate"`
	Expected Expected `yaml:"expected"`
	// Note says what a reader should know: a known difference, why the
	// tolerance is what it is.
	Note string `yaml:"note"`
}

// Ways a run is scored (Spec.Evaluate).
const (
	// R2MED scores the pipeline's run as R2MED's result files do
	// (trec_eval's measures under R2MED's keys: ndcg_at_10, recall_at_100,
	// mrr, …).
	R2MED = "r2med"
	// CandidateCard scores the candidate lists the pipeline's one
	// candidates: retriever reads as HAKARI-Bench's task cards do
	// (taskstats.ScoreCandidates: ndcg_at_10, hit_at_10, recall_at_100).
	CandidateCard = "candidate-card"
)

// Kinds of source (Source.Kind).
const (
	SourcePublished = "published" // R2MED's released result files
	SourceCard      = "card"      // HAKARI-Bench's NanoR2MED task cards
	SourceExternal  = "external"  // figures a later paper printed
	SourceReference = "reference" // reference outputs made for this project (../shared/data)
)

// Source is where the expected scores come from.
type Source struct {
	Kind string `yaml:"kind"`
	// Reference names the publication or file set.
	Reference string `yaml:"reference"`
	// System is the row as the source names it ("base/bm25",
	// "ReasonEmbed-Qwen3-8B").
	System string `yaml:"system"`
	// PrintedAverage is the average the source printed (×100), given only
	// where it is not the mean of its printed per-task values
	// (leaderboard.PrintedAgrees), so that the docs show both.
	PrintedAverage float64 `yaml:"printed_average"`
}

// Suites a spec's data comes from (Data.Suite). BRIGHT's tasks will be a
// suite of their own.
const (
	SuiteR2MED = "r2med" // R2MED's task repositories, at the revisions the registry pins
	SuiteNano  = "nano"  // NanoR2MED's splits
	SuiteLocal = "local" // a directory under the local data folder (--local-data)
)

// Data is what a spec runs on.
type Data struct {
	Suite string     `yaml:"suite"`
	Tasks []TaskData `yaml:"tasks"`
}

// TaskData is one task of a spec: for the Hub suites, the repository and
// revision (which must be the task registry's); for local data, the
// directory under the local data folder and the split.
type TaskData struct {
	Task     string `yaml:"task"`
	Repo     string `yaml:"repo"`
	Revision string `yaml:"revision"`
	Split    string `yaml:"split"`
	Dir      string `yaml:"dir"`
}

// Needs is what running a spec takes besides r2med and its data.
type Needs struct {
	// Models are the checkpoints or API models the pipeline calls.
	Models []string `yaml:"models"`
	// Servers must be running and named, each by a flag of `r2med
	// reproduce` or an environment variable.
	Servers []Server `yaml:"servers"`
	// Keys are environment variables that must hold API keys.
	Keys []string `yaml:"keys"`
	// Weights are local model files r2med loads itself (ONNX), fetched
	// once with the command given.
	Weights []Weights `yaml:"weights"`
	// GPU says the model is large enough to want one (on the server that
	// serves it).
	GPU bool `yaml:"gpu"`
}

// Server is a model server a spec calls.
type Server struct {
	What string `yaml:"what"`
	// Serves names the model(s) it must serve.
	Serves string `yaml:"serves"`
	// Flag is the `r2med reproduce` flag that names it; Env, when set, an
	// environment variable that does too.
	Flag string `yaml:"flag"`
	Env  string `yaml:"env"`
}

// Weights are a model r2med runs locally.
type Weights struct {
	Model string `yaml:"model"`
	// Pull is the command that fetches them, or what to do instead.
	Pull string `yaml:"pull"`
	// Flag, when set, names a flag that points at the weights instead.
	Flag string `yaml:"flag"`
}

// Offline reports whether nothing the spec needs besides its data is
// outside this machine: no server, no API key, no GPU.
func (n Needs) Offline() bool {
	return len(n.Servers) == 0 && len(n.Keys) == 0 && !n.GPU
}

// Expected is what a spec should score: per task, metric values and where
// each was published, compared within Tolerance.
type Expected struct {
	// Tolerance is the largest |got − expected| that passes.
	Tolerance float64        `yaml:"tolerance"`
	Tasks     []ExpectedTask `yaml:"tasks"`
}

// ExpectedTask is one task's expected scores.
type ExpectedTask struct {
	Task string `yaml:"task"`
	// Source is the file (and line, for tables) the values are from.
	Source string             `yaml:"source"`
	Scores map[string]float64 `yaml:"scores"`
}

// Task returns the expected scores of task, if the spec has them.
func (e Expected) Task(task string) (ExpectedTask, bool) {
	for _, t := range e.Tasks {
		if t.Task == task {
			return t, true
		}
	}
	return ExpectedTask{}, false
}

// Pass says whether got is within the tolerance of want. A tolerance is
// widened by a few ulps so that values printed with the same digits pass
// at tolerance 0.
func (e Expected) Pass(want, got float64) bool {
	return math.Abs(got-want) <= e.Tolerance+1e-12*max(1, math.Abs(want))
}

// Parse reads a spec file; name is its Name. Errors name the line.
func Parse(name string, data []byte) (*Spec, error) {
	doc, err := yamlx.Parse(data)
	if err != nil {
		return nil, err
	}
	if doc == nil {
		return nil, errors.New("empty spec")
	}
	var s Spec
	if err := yamlx.Decode(doc, &s, "the spec"); err != nil {
		return nil, err
	}
	s.Name = name
	if s.Evaluate == "" {
		s.Evaluate = R2MED
	}
	if err := s.validate(doc); err != nil {
		return nil, err
	}
	return &s, nil
}

// validate checks what the schema alone cannot: required keys, known
// names, every expected task among the data's and the other way round.
func (s *Spec) validate(doc *yaml.Node) error {
	at := func(key string) *yaml.Node {
		if _, v := yamlx.Lookup(doc, key); v != nil {
			return v
		}
		return doc
	}
	switch {
	case s.Title == "":
		return yamlx.Errorf(doc, "the spec needs a title:")
	case !slices.Contains([]string{SourcePublished, SourceCard, SourceExternal, SourceReference}, s.Source.Kind):
		return yamlx.Errorf(at("source"), "source: kind %q is none of %s, %s, %s, %s", s.Source.Kind, SourcePublished, SourceCard, SourceExternal, SourceReference)
	case s.Source.Reference == "":
		return yamlx.Errorf(at("source"), "source: needs a reference (where the expected scores were published)")
	case !slices.Contains([]string{SuiteR2MED, SuiteNano, SuiteLocal}, s.Data.Suite):
		return yamlx.Errorf(at("data"), "data: suite %q is none of %s, %s, %s", s.Data.Suite, SuiteR2MED, SuiteNano, SuiteLocal)
	case len(s.Data.Tasks) == 0:
		return yamlx.Errorf(at("data"), "data: needs at least one task")
	case s.Pipeline.Kind != yaml.MappingNode:
		return yamlx.Errorf(at("pipeline"), "the spec needs a pipeline: mapping, as a pipeline file writes it (retrieve:, expand:, rerank:, …)")
	case s.Evaluate != R2MED && s.Evaluate != CandidateCard:
		return yamlx.Errorf(at("evaluate"), "evaluate: %q is neither %s nor %s", s.Evaluate, R2MED, CandidateCard)
	case s.Expected.Tolerance < 0 || math.IsNaN(s.Expected.Tolerance):
		return yamlx.Errorf(at("expected"), "expected: tolerance must be 0 or more, got %v", s.Expected.Tolerance)
	}
	seen := map[string]bool{}
	for _, t := range s.Data.Tasks {
		switch {
		case t.Task == "":
			return yamlx.Errorf(at("data"), "data: a task has no name (task:)")
		case seen[t.Task]:
			return yamlx.Errorf(at("data"), "data: task %s is listed twice", t.Task)
		case s.Data.Suite == SuiteLocal && t.Dir == "":
			return yamlx.Errorf(at("data"), "data: local task %s needs dir: (a directory under the local data folder)", t.Task)
		case s.Data.Suite != SuiteLocal && (t.Repo == "" || t.Revision == ""):
			return yamlx.Errorf(at("data"), "data: task %s needs repo: and revision: (the Hub repository it is read from)", t.Task)
		}
		seen[t.Task] = true
	}
	if len(s.Expected.Tasks) != len(s.Data.Tasks) {
		return yamlx.Errorf(at("expected"), "expected: %d tasks for the %d tasks of data:; give each task's scores once", len(s.Expected.Tasks), len(s.Data.Tasks))
	}
	for _, e := range s.Expected.Tasks {
		if !seen[e.Task] {
			return yamlx.Errorf(at("expected"), "expected: task %q is not among data's tasks", e.Task)
		}
		seen[e.Task] = false
		if len(e.Scores) == 0 {
			return yamlx.Errorf(at("expected"), "expected: task %s has no scores", e.Task)
		}
		for k, v := range e.Scores {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return yamlx.Errorf(at("expected"), "expected: %s of %s is %v", k, e.Task, v)
			}
		}
	}
	return nil
}

// Metrics lists the metrics of a task's expected scores in the order they
// are shown: the headline ones first, then the rest by name.
func (t ExpectedTask) Metrics() []string {
	var out []string
	for _, k := range metricOrder {
		if _, ok := t.Scores[k]; ok {
			out = append(out, k)
		}
	}
	var rest []string
	for k := range t.Scores {
		if !slices.Contains(metricOrder, k) {
			rest = append(rest, k)
		}
	}
	slices.Sort(rest)
	return append(out, rest...)
}

var metricOrder = []string{"ndcg_at_10", "hit_at_10", "recall_at_100", "map_at_100", "precision_at_10", "mrr"}

// TaskNames lists the spec's tasks in order.
func (s *Spec) TaskNames() []string {
	out := make([]string, len(s.Data.Tasks))
	for i, t := range s.Data.Tasks {
		out[i] = t.Task
	}
	return out
}

// Describe is the spec in one line for listings: its title and tasks.
func (s *Spec) Describe() string {
	return fmt.Sprintf("%s (%d %s)", s.Title, len(s.Data.Tasks), plural(len(s.Data.Tasks), "task", "tasks"))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// joinAnd joins words as a sentence lists them.
func joinAnd(words []string) string {
	switch len(words) {
	case 0:
		return ""
	case 1:
		return words[0]
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}
