package models

import (
	"fmt"
	"strings"

	"github.com/r2med/r2med/tasks"
)

// Source is where an instruction was published: a repository file at a
// commit, or a page (a model card). Derived, when set, says that the text
// was not printed whole there but built from what was (a published wording
// in another published format) and how.
type Source struct {
	Repo, Path, Commit string
	URL                string
	// Entry says which part of the file or page holds the text, and
	// what else the recipe takes from elsewhere.
	Entry   string
	Derived string
}

// String names the source as `r2med model show` prints it: repository,
// path and the commit's first 12 digits, or the URL; then the entry.
func (s Source) String() string {
	where := s.URL
	if s.Repo != "" {
		where = s.Repo + " " + s.Path
		if s.Commit != "" {
			where += "@" + s.Commit[:min(12, len(s.Commit))]
		}
	}
	if s.Entry != "" {
		where += ": " + s.Entry
	}
	if s.Derived != "" {
		where += " (derived: " + s.Derived + ")"
	}
	return where
}

// Instruction is what a recipe puts before one task's queries and
// documents, and where that comes from.
type Instruction struct {
	Query, Doc string
	Source     Source
	// Generic says the task is outside the model's published
	// instructions: the model's generic instruction (Model.Generic) is
	// used, which a run records and reports.
	Generic bool
	// MaxLength is the tokens per text (queries and documents) the
	// source evaluated the task with, where that is not the model's
	// MaxLength (Table.MaxLength: BRIGHT's long posts); 0 otherwise. A
	// run cuts the task's texts there, as the source did.
	MaxLength int
}

// Table is one benchmark's instructions for a model, as one source
// publishes them: a query prefix per task (the instruction inside the
// model's format, whole) and one document prefix.
type Table struct {
	Benchmark string            // R2MED or BRIGHT
	Query     map[string]string // the benchmark's task name → query prefix
	Doc       string
	Source    Source
	// MaxLength is the tokens per text that evaluation used, when it
	// differs from the model's MaxLength (BRIGHT's long posts).
	MaxLength int
}

// The benchmarks a Table covers.
const (
	BenchR2MED  = "R2MED"
	BenchBRIGHT = "BRIGHT"
)

// BRIGHTTasks are BRIGHT's twelve tasks as its data and code name them.
var BRIGHTTasks = []string{
	"biology", "earth_science", "economics", "psychology", "robotics", "stackoverflow", "sustainable_living",
	"leetcode", "pony", "aops", "theoremqa_questions", "theoremqa_theorems",
}

// BRIGHTTask reads a task name that selects BRIGHT's instructions:
// "BRIGHT-" (or "bright/", "bright_", "bright:") followed by a BRIGHT
// task, with "-" for "_" allowed ("BRIGHT-earth-science"), and the names
// BRIGHT tasks' data carry (tasks.Resolve: "BRIGHT-biology-long" in the
// long-document setting). The prefix is needed because BRIGHT's "biology"
// is not R2MED's Biology.
func BRIGHTTask(name string) (string, bool) {
	n := strings.ToLower(strings.TrimSpace(name))
	// The long-document setting's data name ("BRIGHT-biology-long"): the
	// tables hold BRIGHT's instructions per task, for both settings.
	for _, long := range []string{"-long", "_long"} {
		if t, ok := strings.CutSuffix(n, long); ok && !strings.HasSuffix(t, "_") {
			n = t
			break
		}
	}
	if len(n) < len("bright")+2 || !strings.HasPrefix(n, "bright") || !strings.ContainsRune("-/_:", rune(n[len("bright")])) {
		return "", false
	}
	n = strings.ReplaceAll(n[len("bright")+1:], "-", "_")
	for _, t := range BRIGHTTasks {
		if n == t {
			return t, true
		}
	}
	return "", false
}

// Instruction is the recipe's instruction for task: a task of R2MED (any
// name the tasks registry takes) or of BRIGHT (see BRIGHTTask) where the
// model's sources publish one; else, for a model whose instructions name
// the task, its documented generic instruction (Generic set); else the
// model's fixed prefixes.
func (m Model) Instruction(task string) Instruction {
	if t, err := tasks.Lookup(task); err == nil {
		if tb, ok := m.table(BenchR2MED); ok {
			return Instruction{Query: tb.Query[t.Name], Doc: tb.Doc, Source: tb.Source, MaxLength: tb.MaxLength}
		}
		if m.Template != NoTemplate {
			return m.templated(t.Name)
		}
	}
	if bt, ok := BRIGHTTask(task); ok {
		if tb, ok := m.table(BenchBRIGHT); ok {
			return Instruction{Query: tb.Query[bt], Doc: tb.Doc, Source: tb.Source, MaxLength: tb.MaxLength}
		}
	}
	if m.TaskDependent() {
		in := m.Generic
		in.Generic = true
		return in
	}
	return Instruction{Query: m.QueryPrefix, Doc: m.DocPrefix, Source: m.PrefixSource}
}

// QueryInstruction is Instruction(task).Query.
func (m Model) QueryInstruction(task string) string { return m.Instruction(task).Query }

// DocInstruction is Instruction(task).Doc.
func (m Model) DocInstruction(task string) string { return m.Instruction(task).Doc }

// TaskDependent says whether the model's instructions name the task.
func (m Model) TaskDependent() bool { return m.Template != NoTemplate || len(m.Tables) > 0 }

func (m Model) table(bench string) (Table, bool) {
	for _, t := range m.Tables {
		if t.Benchmark == bench {
			return t, true
		}
	}
	return Table{}, false
}

// templated builds R2MED's own instruction for one of its tasks from its
// wording, in the model's template.
func (m Model) templated(task string) Instruction {
	w := wordings[task]
	in := Instruction{Doc: m.DocPrefix, Source: r2medInstructions}
	switch m.Template {
	case E5:
		in.Query = "Instruct: Given " + w.subject + ", " + w.goal + "\nQuery: "
	case BMR:
		in.Query = "Given " + w.subject + ", " + w.goal + "\nQuery: "
	case Grit:
		in.Query = "<|user|>\nGiven " + w.subject + ", " + w.goal + "\n<|embed|>\n"
	case Instructor:
		in.Query = "Represent the " + w.instQuery + ": "
		in.Doc = "Represent the " + w.instDoc + " for retrieval: "
	default:
		panic(fmt.Sprintf("model %s: unknown template %d", m.Name, m.Template))
	}
	return in
}

// wrap puts each task's instruction into format, where "{}" stands for
// the instruction (FlagEmbedding's query_instruction_format less its
// second "{}", the query).
func wrap(format string, instructions map[string]string) map[string]string {
	out := make(map[string]string, len(instructions))
	for task, in := range instructions {
		out[task] = strings.Replace(format, "{}", in, 1)
	}
	return out
}
