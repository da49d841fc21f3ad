package rerank

import (
	"bytes"
	"embed"
	"fmt"
	"strings"
	"text/template"

	"github.com/r2med/r2med/internal/prompts"
	"github.com/r2med/r2med/llm"
)

// The reasoning rerankers' prompts are editable templates (Go
// text/template), as the GAR prompts are: for each method a system message
// (METHOD.system.tmpl; an empty one sends none) and a user message
// (METHOD.user.tmpl). `r2med rerank templates` writes them out; a
// directory of edited copies (Spec.Templates) replaces the built-in ones
// file by file. The wording is ours; the structure follows each method's
// paper (see InsertRank, Rank1, ReasonRank and GroupRank).

//go:embed templates/*.tmpl
var templateFS embed.FS

// The methods with templates.
const (
	KindInsertRank = "insertrank"
	KindRank1      = "rank1"
	KindReasonRank = "reasonrank"
	KindGroupRank  = "grouprank"
)

var templated = []string{KindInsertRank, KindRank1, KindReasonRank, KindGroupRank}

// TemplateFiles lists the files a rerank templates directory may hold.
func TemplateFiles() []string {
	var out []string
	for _, m := range templated {
		out = append(out, m+".system.tmpl", m+".user.tmpl")
	}
	return out
}

// PromptPassage is one numbered passage of a listwise prompt.
type PromptPassage struct {
	N    int    // its number in the prompt, from 1
	Text string // white space collapsed to single spaces, cut to MaxWords words
	// Score is InsertRank's first-stage score as shown (see ScoreScale);
	// "" when the first stage gave ranks alone (ListPrompt.RanksOnly).
	Score string
	// Rank is the passage's 1-based rank in the first-stage list.
	Rank int
}

// ListPrompt is what the templates of several passages (insertrank,
// reasonrank, grouprank) see.
type ListPrompt struct {
	Query    string
	Num      int
	Passages []PromptPassage
	// ScoreScale is "" for raw first-stage scores, "0-1" or "0-100" when
	// they are min-max normalized over the query's candidates.
	ScoreScale string
	// RanksOnly is true when the first stage gave ranks and no scores (a
	// candidate list published without them): the passages' Rank is all
	// there is to show, and the prompt must say so.
	RanksOnly bool
}

// PointPrompt is what the pointwise template (rank1) sees.
type PointPrompt struct {
	Query   string
	Passage string // cut to MaxWords words
}

// Prompts renders the reasoning rerankers' messages. Get one from
// LoadPrompts; it is safe for concurrent use.
type Prompts struct {
	system, user map[string]*template.Template
	// Sources says where each file came from: "embedded" or its path.
	Sources map[string]string
	digest  string
}

// LoadPrompts reads the built-in templates, each replaced by the file of
// the same name in dir when dir is not empty and has it. Every template is
// tried on sample data, so a misspelt field is reported here, with its
// file, rather than in the middle of a rerank.
func LoadPrompts(dir string) (*Prompts, error) {
	set, err := prompts.Load(templateFS, "templates", TemplateFiles(), dir, ".tmpl")
	if err != nil {
		return nil, err
	}
	p := &Prompts{system: map[string]*template.Template{}, user: map[string]*template.Template{}, Sources: set.Sources, digest: set.Digest()}
	for _, m := range templated {
		for _, part := range []struct {
			file string
			into map[string]*template.Template
		}{{m + ".system.tmpl", p.system}, {m + ".user.tmpl", p.user}} {
			t, err := template.New(part.file).Option("missingkey=error").Parse(set.Text(part.file))
			if err != nil {
				return nil, fmt.Errorf("%s: %w", set.Sources[part.file], err)
			}
			part.into[m] = t
		}
		for _, data := range samples(m) {
			msgs, err := p.Messages(m, data)
			if err != nil {
				return nil, err
			}
			if strings.TrimSpace(msgs[len(msgs)-1].Content) == "" || msgs[len(msgs)-1].Role != "user" {
				return nil, fmt.Errorf("%s: the user message is empty", set.Sources[m+".user.tmpl"])
			}
		}
	}
	return p, nil
}

// samples are what a template is tried on: for the listwise ones, with
// first-stage scores and with ranks alone.
func samples(method string) []any {
	if method == KindRank1 {
		return []any{PointPrompt{Query: "q", Passage: "p"}}
	}
	return []any{
		ListPrompt{Query: "q", Num: 2, Passages: []PromptPassage{{N: 1, Text: "a", Score: "1.00", Rank: 1}, {N: 2, Text: "b", Score: "0.50", Rank: 2}}},
		ListPrompt{Query: "q", Num: 2, Passages: []PromptPassage{{N: 1, Text: "a", Rank: 1}, {N: 2, Text: "b", Rank: 2}}, RanksOnly: true},
	}
}

// DefaultPrompts are the built-in templates.
func DefaultPrompts() *Prompts {
	p, err := LoadPrompts("")
	if err != nil {
		panic("rerank: embedded templates: " + err.Error())
	}
	return p
}

// Digest is a SHA-256 of every template file, for checkpoint keys and
// manifests: an edited prompt must not reuse rankings made with the old.
func (p *Prompts) Digest() string { return p.digest }

// Messages renders method's conversation for data (a ListPrompt or a
// PointPrompt): the system message when its template renders to anything
// but white space, then the user message.
func (p *Prompts) Messages(method string, data any) ([]llm.Message, error) {
	st, ok := p.system[method]
	if !ok {
		return nil, fmt.Errorf("no prompt templates for reranker %q; the templated rerankers are %s", method, strings.Join(templated, ", "))
	}
	var sys, user bytes.Buffer
	if err := st.Execute(&sys, data); err != nil {
		return nil, fmt.Errorf("%s: %w", p.Sources[method+".system.tmpl"], err)
	}
	if err := p.user[method].Execute(&user, data); err != nil {
		return nil, fmt.Errorf("%s: %w", p.Sources[method+".user.tmpl"], err)
	}
	var msgs []llm.Message
	if strings.TrimSpace(sys.String()) != "" {
		msgs = append(msgs, llm.System(sys.String()))
	}
	return append(msgs, llm.User(user.String())), nil
}

// WriteTemplates copies the built-in templates into dir, to edit and pass
// back with Spec.Templates. Existing files are not overwritten.
func WriteTemplates(dir string) ([]string, error) {
	return prompts.Write(templateFS, "templates", TemplateFiles(), dir)
}
