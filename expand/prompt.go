package expand

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"text/template"

	"github.com/r2med/r2med/demo"
	"github.com/r2med/r2med/internal/prompts"
	"github.com/r2med/r2med/tasks"
)

// Prompts for generating expansions are ours: R2MED's own templates and
// few-shot examples (src/example.py) are not public. They follow the
// structure its generation script has per method and task family (see
// docs/r2med-reference-notes.md §1.6) and live as editable files under
// templates/: system.tmpl, hyde.tmpl, query2doc.tmpl, lamer.tmpl (Go
// text/template) and examples.json (Query2doc's two fixed pairs per style).
// reasoning.tmpl, the query-reasoning prompt, follows BRIGHT's three steps
// (the essential problem, step-by-step reasoning about what a relevant
// document holds, a drafted answer) in our wording.

//go:embed templates/*.tmpl templates/examples.json
var templateFS embed.FS

// Template file names. A template file's one trailing newline is not part
// of the prompt, so "Passage: " can end a file that editors end with "\n".
const (
	systemFile   = "system.tmpl"
	examplesFile = "examples.json"
)

// TemplateFiles lists the files a templates directory may hold.
func TemplateFiles() []string {
	return append(append([]string{systemFile}, templateNames()...), examplesFile)
}

// templateNames are the user-message templates, one per generating
// method's prompt.
func templateNames() []string {
	return []string{HyDE + ".tmpl", Query2Doc + ".tmpl", LameR + ".tmpl", Reasoning + ".tmpl"}
}

// GenerationMethods are the methods Generate writes prompts for. The two
// query-reasoning methods share one prompt and one generation set; they
// differ in how the output meets the query.
func GenerationMethods() []string {
	return []string{HyDE, Query2Doc, LameR, Reasoning, ReasoningAppend}
}

// templateOf is the template file of a generating method's prompt.
func templateOf(method string) string { return MethodDir(method) + ".tmpl" }

// Style is how prompts name a task's queries and what they ask for.
type Style string

const (
	// StylePost: a StackExchange post; asks for a passage (Biology,
	// Bioinformatics, Medical-Sciences).
	StylePost Style = "post"
	// StyleExam: a medical exam question; asks for a passage
	// (MedXpertQA-Exam, MedQA-Diag).
	StyleExam Style = "exam"
	// StyleCase: a clinical case; asks for a passage that answers it
	// (PMC-Treatment).
	StyleCase Style = "case"
	// StyleSimilarCase: a clinical case; asks for a similar case that helps
	// diagnose it (PMC-Clinical, IIYi-Clinical).
	StyleSimilarCase Style = "similar-case"
)

// Styles lists the styles.
func Styles() []Style { return []Style{StylePost, StyleExam, StyleCase, StyleSimilarCase} }

// ParseStyle reads a style name.
func ParseStyle(s string) (Style, error) {
	for _, st := range Styles() {
		if string(st) == strings.ToLower(strings.TrimSpace(s)) {
			return st, nil
		}
	}
	return "", fmt.Errorf("unknown prompt style %q; want post, exam, case or similar-case", s)
}

// Subject says how prompts address one task's queries.
type Subject struct {
	Style Style
	// Domain qualifies a post ("Biology", "Medical Science"); exams are
	// "Medical" and cases "Clinical" whatever it says.
	Domain string
}

// SubjectOf is the subject of a registry task (any of its names, Nano
// split names included). The built-in demo task is clinical vignettes
// asking for a diagnosis, so it takes the exam style.
func SubjectOf(task string) (Subject, error) {
	if strings.EqualFold(task, demo.Name) {
		return Subject{Style: StyleExam}, nil
	}
	t, err := tasks.Lookup(task)
	if err != nil {
		return Subject{}, fmt.Errorf("no prompt style known for task %q; the styles are post, exam, case and similar-case (a post also needs a domain)", task)
	}
	switch t.Name {
	case "Biology", "Bioinformatics":
		return Subject{Style: StylePost, Domain: t.Name}, nil
	case "Medical-Sciences":
		return Subject{Style: StylePost, Domain: "Medical Science"}, nil
	case "PMC-Treatment":
		return Subject{Style: StyleCase}, nil
	}
	switch t.Family {
	case tasks.ClinicalCase:
		return Subject{Style: StyleSimilarCase}, nil
	case tasks.ClinicalEvidence:
		return Subject{Style: StyleExam}, nil
	}
	return Subject{}, fmt.Errorf("no prompt style known for task %q (family %s)", task, t.Family)
}

// Example is one few-shot pair.
type Example struct {
	Query   string `json:"query"`
	Passage string `json:"passage"`
}

// PromptData is what templates see.
type PromptData struct {
	Style   Style
	Domain  string // "Biology", "Medical", "Clinical"
	Kind    string // "post", "exam", "case"
	Label   string // the query's label: "Post", "Exam", "Case"
	Subject string // "Biology post", "Medical Exam", "Clinical Case"
	Target  string // what is asked for: "Passage" or "Similar Case"
	Similar bool   // StyleSimilarCase
	Query   string
	// Examples are the style's Query2doc pairs.
	Examples []Example
	// Passages is LameR's retrieved text, FormatPassages of the top
	// documents ("\n[1]. …\n[2]. …").
	Passages string
}

func (s Subject) data() (PromptData, error) {
	d := PromptData{Style: s.Style, Target: "Passage"}
	switch s.Style {
	case StylePost:
		if strings.TrimSpace(s.Domain) == "" {
			return d, errors.New(`the post style needs a domain ("Biology", "Medical Science", …)`)
		}
		d.Domain, d.Kind, d.Label = s.Domain, "post", "Post"
		d.Subject = s.Domain + " post"
	case StyleExam:
		d.Domain, d.Kind, d.Label, d.Subject = "Medical", "exam", "Exam", "Medical Exam"
	case StyleCase, StyleSimilarCase:
		d.Domain, d.Kind, d.Label, d.Subject = "Clinical", "case", "Case", "Clinical Case"
		if s.Style == StyleSimilarCase {
			d.Target, d.Similar = "Similar Case", true
		}
	default:
		return d, fmt.Errorf("unknown prompt style %q; want post, exam, case or similar-case", s.Style)
	}
	return d, nil
}

// LameRDepth is how many BM25 documents LameR's prompt shows (R2MED: the
// top 10); lameRMaxWords is its per-passage cut (R2MED keeps each
// document's first 512 whitespace-separated tokens, newlines removed).
const (
	LameRDepth    = 10
	lameRMaxWords = 512
)

// FormatPassages is LameR's passage block: each text's white space
// (newlines included) collapsed to single spaces, cut to its first 512
// words, and numbered from 1 as "\n[i]. text". Words are split as
// Python's str.split() splits them (isPySpace), as R2MED's cut_text does.
func FormatPassages(texts []string) string {
	var b strings.Builder
	for i, t := range texts {
		w := strings.FieldsFunc(t, isPySpace)
		if len(w) > lameRMaxWords {
			w = w[:lameRMaxWords]
		}
		fmt.Fprintf(&b, "\n[%d]. %s", i+1, strings.Join(w, " "))
	}
	return b.String()
}

// Prompts renders prompts from templates. The zero value is not usable;
// get one from LoadPrompts.
type Prompts struct {
	tmpl     map[string]*template.Template // by method
	system   string
	examples map[Style][]Example
	// Sources says where each file came from: "embedded" or its path.
	Sources map[string]string
	digest  string
}

// LoadPrompts reads the templates: the embedded ones, each replaced by the
// file of the same name in dir when dir is not empty and has it. A file in
// dir that is not a template name is an error, so a misspelt override
// does not go unnoticed.
func LoadPrompts(dir string) (*Prompts, error) {
	set, err := prompts.Load(templateFS, "templates", TemplateFiles(), dir, ".tmpl", ".json")
	if err != nil {
		return nil, err
	}
	sources := set.Sources
	p := &Prompts{tmpl: map[string]*template.Template{}, Sources: sources, digest: set.Digest()}
	p.system = set.Text(systemFile)
	if strings.TrimSpace(p.system) == "" {
		return nil, fmt.Errorf("%s: the system prompt is empty", sources[systemFile])
	}
	for _, name := range templateNames() {
		t, err := template.New(name).Option("missingkey=error").Parse(set.Text(name))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", sources[name], err)
		}
		p.tmpl[name] = t
	}
	if err := json.Unmarshal(set.Bytes(examplesFile), &p.examples); err != nil {
		return nil, fmt.Errorf("%s: %w; it maps each style (post, exam, case, similar-case) to a list of {\"query\", \"passage\"} pairs", sources[examplesFile], err)
	}
	for st, ex := range p.examples {
		if !slices.Contains(Styles(), st) {
			return nil, fmt.Errorf("%s: unknown style %q; the styles are post, exam, case and similar-case", sources[examplesFile], st)
		}
		for i, e := range ex {
			if strings.TrimSpace(e.Query) == "" || strings.TrimSpace(e.Passage) == "" {
				return nil, fmt.Errorf("%s: %s example %d has an empty query or passage", sources[examplesFile], st, i+1)
			}
		}
	}
	return p, nil
}

// DefaultPrompts are the embedded templates.
func DefaultPrompts() *Prompts {
	p, err := LoadPrompts("")
	if err != nil {
		panic("expand: embedded templates: " + err.Error())
	}
	return p
}

// System is the system message.
func (p *Prompts) System() string { return p.system }

// Digest is a SHA-256 of every template file, for manifests.
func (p *Prompts) Digest() string { return p.digest }

// Render is the user message for one query. LameR needs passages (the
// texts of the query's top BM25 documents); other methods refuse them.
func (p *Prompts) Render(method string, s Subject, query string, passages []string) (string, error) {
	t, ok := p.tmpl[templateOf(method)]
	if !ok || !slices.Contains(GenerationMethods(), method) {
		return "", fmt.Errorf("no prompt for method %q; generation supports %s", method, strings.Join(GenerationMethods(), ", "))
	}
	d, err := s.data()
	if err != nil {
		return "", err
	}
	d.Query = query
	switch method {
	case LameR:
		if len(passages) == 0 {
			return "", errors.New("lamer needs the query's retrieved passages")
		}
		d.Passages = FormatPassages(passages)
	case Query2Doc:
		d.Examples = p.examples[s.Style]
		if len(d.Examples) == 0 {
			return "", fmt.Errorf("%s has no %s examples for query2doc", p.Sources[examplesFile], s.Style)
		}
	}
	if len(passages) > 0 && method != LameR {
		return "", fmt.Errorf("%s takes no passages", method)
	}
	var b bytes.Buffer
	if err := t.Execute(&b, d); err != nil {
		return "", fmt.Errorf("%s: %w", p.Sources[templateOf(method)], err)
	}
	return b.String(), nil
}

// WriteTemplates copies the embedded templates into dir, to edit and pass
// back to LoadPrompts. Existing files are not overwritten.
func WriteTemplates(dir string) ([]string, error) {
	return prompts.Write(templateFS, "templates", TemplateFiles(), dir)
}
