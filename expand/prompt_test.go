package expand

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var updatePrompts = flag.Bool("update-prompts", false, "rewrite testdata/genprompts from the embedded templates")

// Hand-written from the structure in the reference notes (§1.6), not from
// the templates: a template edit that changes these fails here.
func TestRenderStructure(t *testing.T) {
	p := DefaultPrompts()
	cases := []struct {
		method  string
		subject Subject
		want    string
	}{
		{HyDE, Subject{Style: StylePost, Domain: "Biology"},
			"Please write a passage to help answer the Biology post.\nPost: Q?\nPassage: "},
		{HyDE, Subject{Style: StyleExam},
			"Please write a passage to help answer the Medical Exam.\nExam: Q?\nPassage: "},
		{HyDE, Subject{Style: StyleCase},
			"Please write a passage to help answer the Clinical Case.\nCase: Q?\nPassage: "},
		{HyDE, Subject{Style: StyleSimilarCase},
			"Please write a similar case to help diagnose the Clinical Case.\nCase: Q?\nSimilar Case: "},
	}
	for _, tc := range cases {
		got, err := p.Render(tc.method, tc.subject, "Q?", nil)
		if err != nil {
			t.Fatal(err)
		}
		if got != tc.want {
			t.Errorf("%s %s:\n got %q\nwant %q", tc.method, tc.subject.Style, got, tc.want)
		}
	}
	if p.System() != "You are a helpful assistant." {
		t.Errorf("system %q", p.System())
	}

	q2d, err := p.Render(Query2Doc, Subject{Style: StyleExam}, "Q?", nil)
	if err != nil {
		t.Fatal(err)
	}
	ex := p.examples[StyleExam]
	want := "Write a passage to help answer the Medical Exam.\n\n###Examples:###\n" +
		"Exam: " + ex[0].Query + "\nPassage: " + ex[0].Passage + "\n\n" +
		"Exam: " + ex[1].Query + "\nPassage: " + ex[1].Passage +
		"\n\n###Real Test:###\nExam: Q?\nPassage: "
	if q2d != want {
		t.Errorf("query2doc:\n got %q\nwant %q", q2d, want)
	}

	lamer, err := p.Render(LameR, Subject{Style: StyleSimilarCase}, "Q?", []string{"a\nb", "c"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(lamer, "Give a Clinical case and its possible similar cases") ||
		!strings.HasSuffix(lamer, "\n\nCase: Q?\n\nPossible Similar Cases: \n[1]. a b\n[2]. c") {
		t.Errorf("lamer: %q", lamer)
	}
}

func TestFormatPassages(t *testing.T) {
	long := strings.Repeat("w ", 600)
	got := FormatPassages([]string{"first line\nsecond\tline  ", long, ""})
	want := "\n[1]. first line second line\n[2]. " + strings.TrimSpace(strings.Repeat("w ", 512)) + "\n[3]. "
	if got != want {
		t.Errorf("got %q…", got[:80])
	}
	if FormatPassages(nil) != "" {
		t.Error("no passages gave text")
	}
}

func TestRenderErrors(t *testing.T) {
	p := DefaultPrompts()
	for _, tc := range []struct {
		method   string
		s        Subject
		passages []string
		want     string
	}{
		{SearchO1, Subject{Style: StyleExam}, nil, "no prompt for method"},
		{LameR, Subject{Style: StyleExam}, nil, "needs the query's retrieved passages"},
		{HyDE, Subject{Style: StyleExam}, []string{"x"}, "takes no passages"},
		{HyDE, Subject{Style: StylePost}, nil, "needs a domain"},
		{HyDE, Subject{Style: "poem"}, nil, "unknown prompt style"},
	} {
		if _, err := p.Render(tc.method, tc.s, "q", tc.passages); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %v: %v, want %q", tc.method, tc.s, err, tc.want)
		}
	}
}

// The golden files are the prompts as shipped, kept for review: every
// change to a template shows up as a diff here.
func TestPromptGolden(t *testing.T) {
	p := DefaultPrompts()
	queries := map[Style]Subject{
		StylePost:        {Style: StylePost, Domain: "Medical Science"},
		StyleExam:        {Style: StyleExam},
		StyleCase:        {Style: StyleCase},
		StyleSimilarCase: {Style: StyleSimilarCase},
	}
	passages := []string{
		"Scurvy results from vitamin C deficiency.\nCollagen synthesis needs ascorbate.",
		"Iron deficiency anemia is microcytic.",
	}
	for _, m := range GenerationMethods() {
		for _, st := range Styles() {
			var ps []string
			if m == LameR {
				ps = passages
			}
			got, err := p.Render(m, queries[st], "A 30-year-old sailor has bleeding gums and poor wound healing. What is the cause?", ps)
			if err != nil {
				t.Fatal(err)
			}
			if m == ReasoningAppend {
				// Both reasoning modes ask the one question.
				same, _ := p.Render(Reasoning, queries[st], "A 30-year-old sailor has bleeding gums and poor wound healing. What is the cause?", nil)
				if got != same {
					t.Errorf("reasoning-append's prompt differs from reasoning's:\n%s", got)
				}
				continue
			}
			path := filepath.Join("testdata", "genprompts", m+"-"+string(st)+".txt")
			if *updatePrompts {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (go test ./expand -run TestPromptGolden -update-prompts writes it)", err)
			}
			if got != string(want) {
				t.Errorf("%s differs from the rendered prompt:\n%s", path, got)
			}
		}
	}
}

func TestSubjectOf(t *testing.T) {
	cases := map[string]Subject{
		"Biology":          {StylePost, "Biology"},
		"bioinformatics":   {StylePost, "Bioinformatics"},
		"Medical-Sciences": {StylePost, "Medical Science"},
		"MedXpertQA-Exam":  {StyleExam, ""},
		"MedQA-Diag":       {StyleExam, ""},
		"PMC-Treatment":    {StyleCase, ""},
		"PMC-Clinical":     {StyleSimilarCase, ""},
		"IIYi-Clinical":    {StyleSimilarCase, ""},
		"demo":             {StyleExam, ""},
	}
	for name, want := range cases {
		got, err := SubjectOf(name)
		if err != nil || got != want {
			t.Errorf("SubjectOf(%q) = %v, %v; want %v", name, got, err, want)
		}
	}
	if _, err := SubjectOf("my-task"); err == nil || !strings.Contains(err.Error(), "similar-case") {
		t.Errorf("unknown task: %v", err)
	}
	if s, err := ParseStyle(" Similar-Case "); err != nil || s != StyleSimilarCase {
		t.Errorf("ParseStyle: %v %v", s, err)
	}
	if _, err := ParseStyle("poem"); err == nil {
		t.Error("ParseStyle accepted poem")
	}
}

func TestLoadPromptsOverride(t *testing.T) {
	dir := t.TempDir()
	written, err := WriteTemplates(dir)
	if err != nil || len(written) != len(TemplateFiles()) {
		t.Fatalf("%v %v", written, err)
	}
	if _, err := WriteTemplates(dir); err == nil {
		t.Error("WriteTemplates overwrote existing files")
	}
	p, err := LoadPrompts(dir)
	if err != nil {
		t.Fatal(err)
	}
	if p.Digest() != DefaultPrompts().Digest() {
		t.Error("the written templates differ from the embedded ones")
	}
	// Edit one template; the others stay embedded-equal.
	only := t.TempDir()
	os.WriteFile(filepath.Join(only, "hyde.tmpl"), []byte("Answer {{.Label}}: {{.Query}}\n"), 0o644)
	os.WriteFile(filepath.Join(only, "notes.txt"), []byte("ignored"), 0o644)
	p, err = LoadPrompts(only)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := p.Render(HyDE, Subject{Style: StyleExam}, "Q", nil)
	if got != "Answer Exam: Q" {
		t.Errorf("override rendered %q", got)
	}
	if p.Sources["hyde.tmpl"] != filepath.Join(only, "hyde.tmpl") || p.Sources["lamer.tmpl"] != "embedded" {
		t.Errorf("sources %v", p.Sources)
	}
	if p.Digest() == DefaultPrompts().Digest() {
		t.Error("digest ignores the override")
	}

	bad := map[string]struct{ file, content, want string }{
		"misspelt":     {"hyd.tmpl", "x", "not a template file name"},
		"parse":        {"hyde.tmpl", "{{.Query", "hyde.tmpl"},
		"missing key":  {"hyde.tmpl", "{{.Nope}}", "Nope"},
		"examples":     {"examples.json", `{"post": [{"query": "q"}]}`, "empty query or passage"},
		"style":        {"examples.json", `{"poem": []}`, `unknown style "poem"`},
		"json":         {"examples.json", `{`, "examples.json"},
		"empty system": {"system.tmpl", "\n", "system prompt is empty"},
	}
	for name, tc := range bad {
		t.Run(name, func(t *testing.T) {
			d := t.TempDir()
			os.WriteFile(filepath.Join(d, tc.file), []byte(tc.content), 0o644)
			p, err := LoadPrompts(d)
			if err == nil {
				_, err = p.Render(HyDE, Subject{Style: StyleExam}, "q", nil)
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err %v, want %q", err, tc.want)
			}
		})
	}
	if _, err := LoadPrompts(filepath.Join(dir, "absent")); err == nil {
		t.Error("a missing templates directory was accepted")
	}
}

// TestFormatPassagesPythonSplit: R2MED cuts each LameR passage with
// Python's str.split(), whose white space includes U+001C..U+001F (the
// information separators, str.isspace() true) where Go's strings.Fields
// has none of them: "a\x1fb".split() is ['a', 'b'].
func TestFormatPassagesPythonSplit(t *testing.T) {
	words := make([]string, 600)
	for i := range words {
		words[i] = "w"
	}
	got := FormatPassages([]string{"a\x1cb\x1dc\x1ed\x1fe", strings.Join(words, "\x1f")})
	want := "\n[1]. a b c d e\n[2]. " + strings.Join(words[:512], " ")
	if got != want {
		t.Errorf("got %q…, want %q…", got[:min(len(got), 40)], want[:40])
	}
}
