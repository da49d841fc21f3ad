// Package tasks is the registry of R2MED's eight tasks: their names and
// the names older code and the Nano set give them, their Hugging Face
// repositories at pinned revisions, their families and sizes; and of
// BRIGHT's twelve, the second suite (see bright.go).
//
// Order and names are R2MED's (src/run.py --task, whose All expands to the
// eight in this order). Families are the paper's three retrieval tasks:
// Q&A reference retrieval (Biology, Bioinformatics and Medical-Sciences,
// StackExchange questions whose answers cite the relevant pages), clinical
// evidence retrieval (MedXpertQA-Exam, MedQA-Diag, PMC-Treatment: evidence
// for a diagnosis or treatment decision) and clinical case retrieval
// (PMC-Clinical, IIYi-Clinical: similar patient cases). HAKARI-Bench's
// NanoR2MED task pages group them the same way.
//
// Revisions are the ones MTEB's R2MED tasks pin. Sizes are R2MED's README
// (full tasks) and HAKARI-Bench's NanoR2MED task cards (Nano sets, which
// keep every query and cut the corpus to 10,000 documents).
package tasks

import (
	"fmt"
	"strings"
	"unicode"
)

// Family is one of R2MED's three kinds of retrieval task.
type Family string

const (
	QAReference      Family = "qa-reference"
	ClinicalEvidence Family = "clinical-evidence"
	ClinicalCase     Family = "clinical-case"
)

// Title is the family's name as the paper writes it.
func (f Family) Title() string {
	switch f {
	case QAReference:
		return "Q&A reference retrieval"
	case ClinicalEvidence:
		return "Clinical evidence retrieval"
	case ClinicalCase:
		return "Clinical case retrieval"
	case StackExchange:
		return "StackExchange"
	case Coding:
		return "Coding"
	case TheoremBased:
		return "Theorem-based"
	}
	return string(f)
}

// Suite is a published form of the benchmark.
type Suite string

const (
	// R2MED is the full tasks, one repository per task (R2MED/<Task>).
	R2MED Suite = "r2med"
	// Nano is HAKARI-Bench's NanoR2MED, one repository with a split per
	// task.
	Nano Suite = "nano"
	// Bright is BRIGHT's twelve tasks, splits of one repository
	// (BrightRepo): the documents config, judged by gold_ids.
	Bright Suite = "bright"
	// BrightLong is BRIGHT's long-document setting: the eight tasks that
	// have long_documents (whole web pages), judged by gold_ids_long.
	BrightLong Suite = "bright-long"
)

var suites = []Suite{R2MED, Nano, Bright, BrightLong}

// Suites lists the suites.
func Suites() []Suite { return append([]Suite(nil), suites...) }

// ParseSuite reads a suite name, in any case.
func ParseSuite(s string) (Suite, error) {
	want := Suite(strings.ToLower(strings.TrimSpace(s)))
	for _, su := range suites {
		if want == su {
			return su, nil
		}
	}
	return "", fmt.Errorf("unknown suite %q; want %q (the full R2MED tasks), %q (NanoR2MED), %q (BRIGHT) or %q (BRIGHT's long documents)", s, R2MED, Nano, Bright, BrightLong)
}

// Benchmark is the benchmark whose tasks the suite holds: R2MED for R2MED
// and Nano, Bright for Bright and BrightLong.
func (s Suite) Benchmark() Suite {
	switch s {
	case Nano, "":
		return R2MED
	case BrightLong:
		return Bright
	}
	return s
}

// Title is the suite as people name it.
func (s Suite) Title() string {
	switch s {
	case R2MED, "":
		return "R2MED"
	case Nano:
		return "NanoR2MED"
	case Bright:
		return "BRIGHT"
	case BrightLong:
		return "BRIGHT (long documents)"
	}
	return string(s)
}

// Tasks are the suite's tasks in its benchmark's order: R2MED's eight for
// R2MED and Nano, BRIGHT's twelve for Bright, the eight with long
// documents for BrightLong.
func (s Suite) Tasks() []Task {
	var out []Task
	for _, t := range registry(s) {
		if s != BrightLong || t.LongSize.Documents > 0 {
			out = append(out, t.clone())
		}
	}
	return out
}

func registry(s Suite) []Task {
	if s.Benchmark() == Bright {
		return bright
	}
	return all
}

// NanoRepo is NanoR2MED's repository. It is used at NanoRevision: no
// revision of it is pinned anywhere we know of (HAKARI-Bench's config names
// none), so a run should record the commit "main" resolved to.
const (
	NanoRepo     = "hakari-bench/NanoR2MED"
	NanoRevision = "main"
)

// Size is a task's size.
type Size struct {
	Queries   int
	Documents int
	// PositiveQrels is known for the Nano sets (their cards) and BRIGHT's
	// tasks (MTEB's counts); 0 for R2MED's full tasks.
	PositiveQrels int
}

// Revision is a repository commit with a note on where it comes from.
type Revision struct {
	Commit string
	Note   string
}

// Task is one R2MED or BRIGHT task.
type Task struct {
	Name   string // its benchmark's spelling: "MedQA-Diag", "earth_science"
	Family Family
	// Suite is the task's benchmark: R2MED (NanoR2MED is a form of it) or
	// Bright.
	Suite Suite
	// Repo is the full task's repository and Revision the commit pinned
	// for it; Older lists other commits in use.
	Repo     string
	Revision string
	Older    []Revision
	Size     Size
	// OldName is the task's key in R2MED's dense-retriever instruction
	// table, which predates the current names; "" when unchanged.
	OldName string
	// NanoSplit is the task's split in NanoR2MED, NanoSize its size there.
	NanoSplit string
	NanoSize  Size
	// LongSize is a BRIGHT task's size in the long-document setting;
	// zero when the task has no long documents.
	LongSize Size
	// MTEBName is the task's name in MTEB, for BRIGHT's tasks
	// ("BrightBiologyRetrieval"); its long-document form puts "Long"
	// before "Retrieval".
	MTEBName string
	// CorpusOf names the task whose corpus this one searches, where
	// tasks share one (BRIGHT's theoremqa_questions searches aops's);
	// "" for a corpus of its own.
	CorpusOf string

	aliases []string // BRIGHT's short names (the paper's column heads)
}

func (t Task) clone() Task {
	t.Older = append([]Revision(nil), t.Older...)
	t.aliases = append([]string(nil), t.aliases...)
	return t
}

func init() {
	for i := range all {
		all[i].Suite = R2MED
	}
}

var all = []Task{
	{
		Name: "Biology", Family: QAReference,
		Repo: "R2MED/Biology", Revision: "8b9fec2db9eda4b5742d03732213fbaee8169556",
		Size: Size{Queries: 103, Documents: 57359}, OldName: "Stack-Biology",
		NanoSplit: "NanoR2MEDBiology", NanoSize: Size{Queries: 103, Documents: 10000, PositiveQrels: 374},
	},
	{
		Name: "Bioinformatics", Family: QAReference,
		Repo: "R2MED/Bioinformatics", Revision: "6021fce366892cbfd7837fa85a4128ea93315e18",
		Size: Size{Queries: 77, Documents: 47473}, OldName: "Stack-Bioinformatics",
		NanoSplit: "NanoR2MEDBioinformatics", NanoSize: Size{Queries: 77, Documents: 10000, PositiveQrels: 226},
	},
	{
		Name: "Medical-Sciences", Family: QAReference,
		Repo: "R2MED/Medical-Sciences", Revision: "1b48911514c80bf9182222d99752ad75e23b4b47",
		Older:     []Revision{{Commit: "7f11654e9aed0c6fa99784641c8880f87ad62930", Note: "pinned by MTEB's older R2MED task file"}},
		Size:      Size{Queries: 88, Documents: 34810},
		OldName:   "Stack-Medical",
		NanoSplit: "NanoR2MEDMedicalSciences", NanoSize: Size{Queries: 88, Documents: 10000, PositiveQrels: 244},
	},
	{
		Name: "MedXpertQA-Exam", Family: ClinicalEvidence,
		Repo: "R2MED/MedXpertQA-Exam", Revision: "b457ea43db9ae5db74c3a3e5be0a213d0f85ac3a",
		Size:      Size{Queries: 97, Documents: 61379},
		NanoSplit: "NanoR2MEDMedXpertQAExam", NanoSize: Size{Queries: 97, Documents: 10000, PositiveQrels: 292},
	},
	{
		Name: "MedQA-Diag", Family: ClinicalEvidence,
		Repo: "R2MED/MedQA-Diag", Revision: "78b585990279cc01a493f876c1b0cf09557fba57",
		Size:      Size{Queries: 118, Documents: 56250},
		NanoSplit: "NanoR2MEDMedQADiag", NanoSize: Size{Queries: 118, Documents: 10000, PositiveQrels: 522},
	},
	{
		Name: "PMC-Treatment", Family: ClinicalEvidence,
		Repo: "R2MED/PMC-Treatment", Revision: "53c489a44a3664ba352c07550b72b4525a5968d5",
		Size: Size{Queries: 150, Documents: 28954}, OldName: "PMC-Treat",
		NanoSplit: "NanoR2MEDPMCTreatment", NanoSize: Size{Queries: 150, Documents: 10000, PositiveQrels: 315},
	},
	{
		Name: "PMC-Clinical", Family: ClinicalCase,
		Repo: "R2MED/PMC-Clinical", Revision: "812829522f7eaa407ef82b96717be85788a50f7e",
		Size: Size{Queries: 114, Documents: 60406}, OldName: "PMCPatients",
		NanoSplit: "NanoR2MEDPMCClinical", NanoSize: Size{Queries: 114, Documents: 10000, PositiveQrels: 248},
	},
	{
		Name: "IIYi-Clinical", Family: ClinicalCase,
		Repo: "R2MED/IIYi-Clinical", Revision: "974abbc9bc281c3169180a6aa5d7586cfd2f5877",
		Size: Size{Queries: 129, Documents: 10449}, OldName: "IIYiPatients-EN",
		NanoSplit: "NanoR2MEDIIYiClinical", NanoSize: Size{Queries: 129, Documents: 10000, PositiveQrels: 457},
	},
}

// byKey maps every accepted spelling, folded, to its task's index.
var byKey = func() map[string]int {
	m := make(map[string]int)
	for i, t := range all {
		for _, name := range t.Names() {
			k := fold(name)
			if j, dup := m[k]; dup && j != i {
				panic(fmt.Sprintf("tasks: %q names both %s and %s", name, all[j].Name, t.Name))
			}
			m[k] = i
		}
	}
	return m
}()

// fold is the form names are matched in: letters and digits only, lower
// case, so "MedQA-Diag", "medqa_diag" and "MedQADiag" are one name.
func fold(s string) string {
	var b strings.Builder
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

// Names lists the spellings Lookup (LookupIn for BRIGHT's) takes for t
// besides case and punctuation: for R2MED's tasks their name, Nano split,
// the split without the set's prefix and old name; for BRIGHT's their
// name, MTEB's name, the name their data carries (NameIn) and the paper's
// short name (and, in the long-document setting, MTEB's name of that:
// BrightPonyLongRetrieval).
func (t Task) Names() []string {
	if t.Suite == Bright {
		return append([]string{t.Name, t.MTEBName, BrightPrefix + t.Name}, t.aliases...)
	}
	names := []string{t.Name, t.NanoSplit, strings.TrimPrefix(t.NanoSplit, "NanoR2MED")}
	if t.OldName != "" {
		names = append(names, t.OldName)
	}
	return names
}

// All returns R2MED's eight tasks in R2MED's order (R2MED.Tasks()).
func All() []Task { return R2MED.Tasks() }

// Lookup finds an R2MED task by any of its names (Task.Names), ignoring
// case and everything but letters and digits.
func Lookup(name string) (Task, error) { return LookupIn(R2MED, name) }

// LookupIn finds a task of suite s by any of its names, as Lookup does:
// an R2MED task for R2MED and Nano, a BRIGHT task for Bright, one with
// long documents for BrightLong.
func LookupIn(s Suite, name string) (Task, error) {
	keys := byKey
	if s.Benchmark() == Bright {
		keys = brightKey
	}
	if i, ok := mtebLong(name); ok && s.Benchmark() == Bright {
		if s != BrightLong {
			return Task{}, fmt.Errorf("%s is MTEB's name of BRIGHT's %s with long documents: that is the suite %s", name, bright[i].Name, BrightLong)
		}
		return bright[i].clone(), nil
	}
	if i, ok := keys[fold(name)]; ok && fold(name) != "" {
		t := registry(s)[i].clone()
		if s == BrightLong && t.LongSize.Documents == 0 {
			return Task{}, fmt.Errorf("BRIGHT's %s has no long documents; the long-document setting has %s", t.Name, strings.Join(names(s), ", "))
		}
		return t, nil
	}
	return Task{}, &UnknownError{Suite: s, Name: name}
}

// mtebLong finds the BRIGHT task whose long-document setting MTEB names
// name (BrightPonyLongRetrieval: its name in the short setting with
// "Long" before "Retrieval").
func mtebLong(name string) (int, bool) {
	base, ok := strings.CutSuffix(fold(name), "longretrieval")
	if !ok {
		return 0, false
	}
	i, ok := brightKey[base+"retrieval"]
	if !ok || fold(bright[i].MTEBName) != base+"retrieval" || bright[i].LongSize.Documents == 0 {
		return 0, false
	}
	return i, true
}

func names(s Suite) []string {
	var out []string
	for _, t := range s.Tasks() {
		out = append(out, t.Name)
	}
	return out
}

// Expand turns task arguments into R2MED tasks: each argument a name
// Lookup takes, a comma-separated list of them, or "all" for the eight in
// R2MED's order. Tasks come in the order first named, each once.
func Expand(args ...string) ([]Task, error) { return ExpandIn(R2MED, args...) }

// UnknownError is a name that is none of a suite's tasks' (Lookup,
// LookupIn, Expand, ExpandIn).
type UnknownError struct {
	Suite Suite
	Name  string
}

func (e *UnknownError) Error() string {
	return fmt.Sprintf("unknown %s task %q; the tasks are %s (or \"all\")", e.Suite.Title(), e.Name, strings.Join(names(e.Suite), ", "))
}

// ExpandIn is Expand for the tasks of suite s: "all" is the suite's tasks
// in its benchmark's order.
func ExpandIn(s Suite, args ...string) ([]Task, error) {
	var out []Task
	seen := make(map[string]bool)
	add := func(t Task) {
		if !seen[t.Name] {
			seen[t.Name] = true
			out = append(out, t)
		}
	}
	for _, arg := range args {
		for _, name := range strings.Split(arg, ",") {
			name = strings.TrimSpace(name)
			if name == "" {
				continue
			}
			if strings.EqualFold(name, "all") {
				for _, t := range s.Tasks() {
					add(t)
				}
				continue
			}
			t, err := LookupIn(s, name)
			if err != nil {
				return nil, err
			}
			add(t)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no task named; name one or more of %s, or \"all\"", strings.Join(names(s), ", "))
	}
	return out, nil
}

// HubRepo returns the repository holding the task in suite s and the
// revision to read it at.
func (t Task) HubRepo(s Suite) (repo, revision string) {
	if s == Nano && t.Suite != Bright {
		return NanoRepo, NanoRevision
	}
	return t.Repo, t.Revision
}

// NameIn is the name the task's data carries in suite s — the loaded
// task's name, which manifests, result files and result directories use:
// R2MED's name, the Nano split, or for BRIGHT "BRIGHT-" and BRIGHT's name,
// with "-long" in the long-document setting ("BRIGHT-biology-long"), so
// that no BRIGHT result is taken for an R2MED task's. Resolve reads it
// back.
func (t Task) NameIn(s Suite) string {
	switch {
	case t.Suite == Bright && s == BrightLong:
		return BrightPrefix + t.Name + LongSuffix
	case t.Suite == Bright:
		return BrightPrefix + t.Name
	case s == Nano:
		return t.NanoSplit
	}
	return t.Name
}

// Resolve finds the task and suite a data name stands for: an R2MED
// task's name or alias (suite R2MED, or Nano for a Nano split's name), or
// a BRIGHT task's data name ("BRIGHT-biology", "BRIGHT-biology-long"; see
// NameIn) or MTEB name. Case and punctuation are ignored, as Lookup
// ignores them; a bare BRIGHT name ("biology") is R2MED's when R2MED has
// it, as everywhere a suite is not given.
func Resolve(name string) (Task, Suite, error) {
	if i, ok := mtebLong(name); ok {
		return bright[i].clone(), BrightLong, nil
	}
	if f := fold(name); strings.HasPrefix(f, fold(BrightPrefix)) {
		if i, ok := brightKey[f]; ok {
			return bright[i].clone(), Bright, nil
		}
		if base, ok := strings.CutSuffix(f, fold(LongSuffix)); ok {
			if i, ok := brightKey[base]; ok && bright[i].LongSize.Documents > 0 {
				return bright[i].clone(), BrightLong, nil
			}
		}
	}
	t, err := Lookup(name)
	if err != nil {
		return Task{}, "", err
	}
	if t.NanoSplit != "" && fold(name) == fold(t.NanoSplit) {
		return t, Nano, nil
	}
	return t, R2MED, nil
}

// HubURI is the task's repository in the form hf://datasets/OWNER/NAME@REV.
func (t Task) HubURI(s Suite) string {
	repo, rev := t.HubRepo(s)
	return "hf://datasets/" + repo + "@" + rev
}

// Total is a suite's size over its tasks: queries and judgments summed,
// and documents summed over its corpora, a corpus that several tasks
// search (Task.CorpusOf) counted once.
type Total struct {
	Size
	// Corpora is the number of corpora the documents count; Shared lists
	// each corpus several tasks search, as the tasks' names ("aops",
	// "theoremqa_questions").
	Corpora int
	Shared  [][]string
}

// Note says what Documents counts where tasks share a corpus
// ("documents of 11 corpora: aops and theoremqa_questions search one"),
// "" where each task has its own.
func (t Total) Note() string {
	if len(t.Shared) == 0 {
		return ""
	}
	var parts []string
	for _, names := range t.Shared {
		parts = append(parts, strings.Join(names[:len(names)-1], ", ")+" and "+names[len(names)-1]+" search one")
	}
	return fmt.Sprintf("documents of %d corpora: %s", t.Corpora, strings.Join(parts, "; "))
}

// Total is suite s's size over its tasks (Suite.Tasks, SizeIn).
func (s Suite) Total() Total {
	var tot Total
	shared := map[string]int{} // the corpus's task → its index in tot.Shared
	for _, t := range s.Tasks() {
		size := t.SizeIn(s)
		tot.Queries += size.Queries
		tot.PositiveQrels += size.PositiveQrels
		owner := t.Name
		if t.CorpusOf != "" {
			owner = t.CorpusOf
		}
		i, seen := shared[owner]
		switch {
		case !seen:
			shared[owner] = -1
			tot.Documents += size.Documents
			tot.Corpora++
			continue
		case i < 0:
			i = len(tot.Shared)
			shared[owner] = i
			tot.Shared = append(tot.Shared, []string{owner})
		}
		tot.Shared[i] = append(tot.Shared[i], t.Name)
	}
	return tot
}

// SizeIn returns the task's size in suite s.
func (t Task) SizeIn(s Suite) Size {
	switch s {
	case Nano:
		return t.NanoSize
	case BrightLong:
		return t.LongSize
	}
	return t.Size
}
