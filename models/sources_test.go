package models

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/r2med/r2med/tasks"
)

// sources is testdata/instruction-sources.json: what each source says,
// quoted, and which recipe takes what from where.
type sources struct {
	Sources map[string]struct {
		Repo, Path, Commit string
		Quotes             map[string]json.RawMessage
	}
	Recipes []struct {
		Model, Benchmark, Source, Instructions, Format, Doc string
		MaxLength                                           string `json:"max_length"`
	}
	Generic []struct {
		Models                   []string
		Source, Query, Doc, Task string
	}
}

func loadSources(t *testing.T) sources {
	t.Helper()
	raw, err := os.ReadFile("testdata/instruction-sources.json")
	if err != nil {
		t.Fatal(err)
	}
	var s sources
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// quote is the string at "source#key" (a JSON string, or one entry of a
// quoted table as "source#table.key"); a value without "#" is itself.
func (s sources) quote(t *testing.T, ref string) string {
	t.Helper()
	id, key, ok := strings.Cut(ref, "#")
	if !ok {
		return ref
	}
	src, found := s.Sources[id]
	if !found {
		t.Fatalf("no source %q", id)
	}
	raw, found := src.Quotes[key]
	if !found {
		t.Fatalf("source %s quotes no %q", id, key)
	}
	var v string
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("%s: %v", ref, err)
	}
	return v
}

// table is a source's quotes as task → string (the quotes that are
// strings, or the named table of them).
func (s sources) table(t *testing.T, ref string) map[string]string {
	t.Helper()
	id, key, _ := strings.Cut(ref, "#")
	src, found := s.Sources[id]
	if !found {
		t.Fatalf("no source %q", id)
	}
	out := map[string]string{}
	if key != "" {
		if err := json.Unmarshal(src.Quotes[key], &out); err != nil {
			t.Fatalf("%s: %v", ref, err)
		}
		return out
	}
	for k, raw := range src.Quotes {
		var v string
		if json.Unmarshal(raw, &v) == nil {
			out[k] = v
		}
	}
	return out
}

// prefix applies a quoted format as its source's code does. A shell
// script's format keeps "\n" as two characters, which FlagEmbedding turns
// into a newline; "{task}" is the task's name (BRIGHT's
// instruction.format(task=task)); "{text}" is where the instructed query
// goes (RaDeR's f"query: {text}…"); in a format with two "{}" the first is
// the instruction and the second the query; with one, it is the
// instruction, or the query where there is no instruction.
func prefix(t *testing.T, format, instruction, task string) string {
	t.Helper()
	format = strings.ReplaceAll(format, `\n`, "\n")
	instruction = strings.ReplaceAll(instruction, "{task}", task)
	if i := strings.Index(format, "{text}"); i >= 0 {
		return format[:i] + instruction
	}
	switch strings.Count(format, "{}") {
	case 0:
		if instruction == "" {
			return format // a whole prefix
		}
	case 2:
		f := strings.Replace(format, "{}", instruction, 1)
		if !strings.HasSuffix(f, "{}") {
			t.Fatalf("format %q does not end with the query", format)
		}
		return strings.TrimSuffix(f, "{}")
	case 1:
		if instruction == "" {
			return strings.TrimSuffix(format, "{}")
		}
		return strings.Replace(format, "{}", instruction, 1)
	}
	t.Fatalf("format %q has no place for the text", format)
	return ""
}

// benchTasks are a benchmark's tasks by the names its tables use, and a
// name r2med's task argument takes for each.
func benchTasks(bench string) map[string]string {
	out := map[string]string{}
	if bench == BenchBRIGHT {
		for _, bt := range BRIGHTTasks {
			out[bt] = "BRIGHT-" + bt
		}
		return out
	}
	for _, task := range tasks.All() {
		out[task.Name] = task.Name
	}
	return out
}

// TestInstructionsMatchSources rebuilds every recipe's instruction for
// every task from the quoted sources and compares it, with the source the
// registry cites and the lengths and pooling the sources name.
func TestInstructionsMatchSources(t *testing.T) {
	s := loadSources(t)
	covered := map[string]bool{}
	for _, r := range s.Recipes {
		m, ok := Lookup(r.Model)
		if !ok {
			t.Errorf("%s is not in the registry", r.Model)
			continue
		}
		covered[r.Model+"/"+r.Benchmark] = true
		tb, ok := m.table(r.Benchmark)
		if !ok {
			t.Errorf("%s has no %s table", r.Model, r.Benchmark)
			continue
		}
		src := s.Sources[r.Source]
		if tb.Source.Repo != src.Repo || tb.Source.Path != src.Path || tb.Source.Commit != src.Commit || tb.Source.Derived != "" {
			t.Errorf("%s %s cites %+v, want %s %s@%s", r.Model, r.Benchmark, tb.Source, src.Repo, src.Path, src.Commit)
		}
		var instr map[string]string
		if r.Instructions != "" {
			instr = s.table(t, r.Instructions)
		}
		format := s.quote(t, r.Format)
		doc := ""
		if r.Doc != "" {
			doc = prefix(t, s.quote(t, r.Doc), "", "")
		}
		for name, arg := range benchTasks(r.Benchmark) {
			in, found := instr[name]
			if !found && instr != nil {
				t.Fatalf("%s quotes no instruction for %s", r.Instructions, name)
			}
			want := prefix(t, format, in, name)
			got := m.Instruction(arg)
			if got.Query != want || got.Doc != doc || got.Generic {
				t.Errorf("%s %s %s: query %q doc %q (generic %v), want %q and %q", r.Model, r.Benchmark, name, got.Query, got.Doc, got.Generic, want, doc)
			}
			if got.Source != tb.Source {
				t.Errorf("%s %s: Instruction cites %v, the table %v", r.Model, name, got.Source, tb.Source)
			}
			if got.MaxLength != tb.MaxLength {
				t.Errorf("%s %s: Instruction's length is %d, the table's %d (what a run of the task cuts at)", r.Model, name, got.MaxLength, tb.MaxLength)
			}
		}
		wantLen := m.MaxLength
		if tb.MaxLength > 0 {
			wantLen = tb.MaxLength
		}
		if r.MaxLength == "" && src.Quotes["embedder_query_max_length"] != nil {
			r.MaxLength = r.Source + "#embedder_query_max_length"
		}
		if r.MaxLength != "" {
			if got := s.quote(t, r.MaxLength); got != itoa(wantLen) {
				t.Errorf("%s %s: length %d, the source says %s", r.Model, r.Benchmark, wantLen, got)
			}
		}
		if q := src.Quotes["model_path"]; q != nil && s.quote(t, r.Source+"#model_path") != m.HubID {
			t.Errorf("%s: checkpoint %s, the script runs %s", r.Model, m.HubID, s.quote(t, r.Source+"#model_path"))
		}
		if q := src.Quotes["pooling_method"]; q != nil && (s.quote(t, r.Source+"#pooling_method") != "last_token" || m.Pooling != LastToken) {
			t.Errorf("%s: pooling %s, the script %s", r.Model, m.Pooling, q)
		}
		if !m.Normalize || s.quote(t, "flagembedding-defaults#normalize_embeddings") != "True" {
			t.Errorf("%s: every evaluation quoted normalizes", r.Model)
		}
	}
	// Every table of a recipe added after R2MED is covered by a quote, or
	// says how it was derived.
	for _, m := range leaders {
		for _, tb := range m.Tables {
			if !covered[m.Name+"/"+tb.Benchmark] && tb.Source.Derived == "" {
				t.Errorf("%s %s: neither quoted in testdata nor marked derived", m.Name, tb.Benchmark)
			}
		}
	}
}

// TestR2MEDTemplatesMatchSource checks R2MED's own recipes against its
// instruction table, quoted under the old task names.
func TestR2MEDTemplatesMatchSource(t *testing.T) {
	s := loadSources(t)
	e5, grit := s.table(t, "r2med-instrcution#e5_q"), s.table(t, "r2med-instrcution#grit")
	instQ, instD := s.table(t, "r2med-instrcution#inst_q"), s.table(t, "r2med-instrcution#inst_d")
	bmrDoc := s.quote(t, "r2med-instrcution#doc_instruction[bmr]")
	want := map[string]func(old string) (string, string){
		"e5": func(o string) (string, string) { return e5[o], "" }, "sfr": func(o string) (string, string) { return e5[o], "" },
		"nv": func(o string) (string, string) { return e5[o], "" },
		// bmr_q = {k: v.removeprefix("Instruct: ") for k, v in e5_q.items()}
		"bmr-410m": func(o string) (string, string) { return strings.TrimPrefix(e5[o], "Instruct: "), bmrDoc },
		"bmr-2b":   func(o string) (string, string) { return strings.TrimPrefix(e5[o], "Instruct: "), bmrDoc },
		"bmr-7b":   func(o string) (string, string) { return strings.TrimPrefix(e5[o], "Instruct: "), bmrDoc },
		"grit":     func(o string) (string, string) { return grit[o], s.quote(t, "r2med-instrcution#doc_instruction[grit]") },
		"inst-l":   func(o string) (string, string) { return instQ[o], instD[o] },
		"inst-xl":  func(o string) (string, string) { return instQ[o], instD[o] },
		"bge": func(string) (string, string) {
			return s.quote(t, "r2med-instrcution#query_instruction[bge]"), ""
		},
	}
	for _, m := range All() {
		if m.R2MEDName == "" && m.Name != "medcpt" {
			continue
		}
		f, ok := want[m.Name]
		if !ok {
			f = func(string) (string, string) { return "", "" } // R2MED gives none
		}
		for _, task := range tasks.All() {
			q, d := f(task.OldName)
			if task.OldName == "" {
				q, d = f(task.Name)
			}
			// Old names, Nano splits and today's names reach the same text.
			for _, name := range append(task.Names(), task.OldName) {
				if name == "" {
					continue
				}
				got := m.Instruction(name)
				if got.Query != q || got.Doc != d || got.Generic {
					t.Errorf("%s %s (as %q): %q / %q, want %q / %q", m.Name, task.Name, name, got.Query, got.Doc, q, d)
				}
				if got.Source.Repo != "R2MED/R2MED" || got.Source.Commit != s.Sources["r2med-instrcution"].Commit {
					t.Errorf("%s cites %v", m.Name, got.Source)
				}
			}
		}
	}
}

// TestGenericInstructions checks that a task outside every table gets a
// documented, non-empty instruction for each model whose instructions name
// the task: quoted where the source prints it, marked derived otherwise.
func TestGenericInstructions(t *testing.T) {
	s := loadSources(t)
	quoted := map[string]bool{}
	for _, g := range s.Generic {
		for _, name := range g.Models {
			quoted[name] = true
			m, _ := Lookup(name)
			got := m.Instruction("nfcorpus")
			want := prefix(t, s.quote(t, g.Query), "", "")
			if g.Task != "" {
				want = strings.ReplaceAll(prefix(t, s.quote(t, g.Query), "", ""), "{task_description}", s.quote(t, g.Task))
				want = strings.TrimSuffix(want, "{query}")
			}
			doc := ""
			if g.Doc != "" {
				doc = prefix(t, s.quote(t, g.Doc), "", "")
			}
			src := s.Sources[g.Source]
			if !got.Generic || got.Query != want || got.Doc != doc || got.Source.Repo != src.Repo || got.Source.Commit != src.Commit || got.Source.Derived != "" {
				t.Errorf("%s generic: %+v, want %q / %q from %s", name, got, want, doc, g.Source)
			}
		}
	}
	for _, m := range All() {
		got := m.Instruction("demo")
		if !m.TaskDependent() {
			if got.Generic || got.Query != m.QueryPrefix || got.Doc != m.DocPrefix || got.Source.Repo == "" {
				t.Errorf("%s does not depend on the task: %+v", m.Name, got)
			}
			continue
		}
		if !got.Generic || got.Query == "" || got.Source.String() == "" {
			t.Errorf("%s on a task outside its tables: %+v", m.Name, got)
		}
		if !quoted[m.Name] && got.Source.Derived == "" {
			t.Errorf("%s's generic instruction is neither quoted in testdata nor marked derived: %v", m.Name, got.Source)
		}
	}
}

// TestDerivedTables checks that the tables no evaluation publishes are
// their siblings' as they say.
func TestDerivedTables(t *testing.T) {
	small, _ := Lookup("qwen3-embedding-0.6b")
	four, _ := Lookup("qwen3-embedding-4b")
	gte, _ := Lookup("gte-qwen2-7b")
	eight, _ := Lookup("qwen3-embedding-8b")
	for _, c := range []struct {
		m, like Model
		bench   string
	}{{small, four, BenchR2MED}, {small, four, BenchBRIGHT}, {gte, eight, BenchR2MED}} {
		a, _ := c.m.table(c.bench)
		b, _ := c.like.table(c.bench)
		if a.Source.Derived == "" || a.Doc != b.Doc || len(a.Query) != len(b.Query) {
			t.Errorf("%s %s: %+v", c.m.Name, c.bench, a.Source)
		}
		for task, q := range b.Query {
			if a.Query[task] != q {
				t.Errorf("%s %s %s: %q, %s has %q", c.m.Name, c.bench, task, a.Query[task], c.like.Name, q)
			}
		}
	}
}

func TestBRIGHTTask(t *testing.T) {
	for in, want := range map[string]string{
		"BRIGHT-biology": "biology", "bright/earth_science": "earth_science", "Bright_Earth-Science": "earth_science",
		"bright:theoremqa_theorems": "theoremqa_theorems",
	} {
		if got, ok := BRIGHTTask(in); !ok || got != want {
			t.Errorf("BRIGHTTask(%q) = %q %v, want %q", in, got, ok, want)
		}
	}
	for _, in := range []string{"biology", "Biology", "bright", "bright-", "brightbiology", "BRIGHT-nfcorpus"} {
		if got, ok := BRIGHTTask(in); ok {
			t.Errorf("BRIGHTTask(%q) = %q", in, got)
		}
	}
	// R2MED's Biology is not BRIGHT's (ReasonEmbed words the two alike,
	// from different sources; RaDeR does not).
	m, _ := Lookup("reasonembed-qwen3-8b")
	if r, b := m.Instruction("Biology"), m.Instruction("BRIGHT-biology"); r.Source == b.Source {
		t.Errorf("R2MED's and BRIGHT's biology both cite %v", r.Source)
	}
	m, _ = Lookup("rader")
	if r, b := m.Instruction("Biology"), m.Instruction("BRIGHT-biology"); r.Query == b.Query {
		t.Errorf("R2MED's and BRIGHT's biology give %q and %q", r.Query, b.Query)
	}
	if !slices.Contains(BRIGHTTasks, "pony") || len(BRIGHTTasks) != 12 {
		t.Errorf("BRIGHT's tasks: %v", BRIGHTTasks)
	}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// TestReportedMatchesExternalResults checks each recipe's reported
// nDCG@10 against ReasonEmbed's Table 3 as ../shared transcribes it, rows
// matched to recipes by the system's name (a name Lookup takes).
func TestReportedMatchesExternalResults(t *testing.T) {
	path := filepath.Join("..", "..", "shared", "data", "external-results", "reasonembed-table3.csv")
	f, err := os.Open(path)
	if err != nil {
		if os.Getenv("R2MED_CI") == "1" {
			t.Fatalf("R2MED_CI=1 and the external results are missing: %v", err)
		}
		t.Skipf("shared data not found: %v", err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	matched := map[string]bool{}
	for _, row := range rows[1:] {
		m, ok := Lookup(row[0])
		if !ok {
			continue
		}
		matched[m.Name] = true
		if m.R2MEDName != "" {
			continue // R2MED's own rows, repeated: NDCG10 is R2MED's
		}
		if got := strconv.FormatFloat(m.Reported, 'f', 2, 64); got != row[2] || m.ReportedBy == "" {
			t.Errorf("%s (%s): reported %s by %q, the table prints %s", m.Name, row[0], got, m.ReportedBy, row[2])
		}
	}
	for _, m := range leaders {
		if m.Reported > 0 && !matched[m.Name] {
			t.Errorf("%s reports %.2f but no row of %s names it", m.Name, m.Reported, path)
		}
	}
	if len(matched) < 14 {
		t.Errorf("only %d rows of the table name a recipe: %v", len(matched), matched)
	}
}
