package expand

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/r2med/r2med/ir"
)

// TestReasoningRules checks both modes for a plain and a reasoning LLM
// label, for BM25 and dense, against strings written out by hand.
func TestReasoningRules(t *testing.T) {
	cases := []struct {
		method, llm, hy string
		want            string
	}{
		{Reasoning, "gpt4", "The problem is scurvy.", "The problem is scurvy."},
		{ReasoningAppend, "gpt4", "The problem is scurvy.", "Q text The problem is scurvy."},
		// A reasoning label keeps the answer after the thinking.
		{Reasoning, "qwq-32b", "<think>hmm</think>\n\nVitamin C deficiency.", "Vitamin C deficiency."},
		{ReasoningAppend, "qwq-32b", "<think>hmm</think>\n\nVitamin C deficiency.", "Q text Vitamin C deficiency."},
	}
	for _, c := range cases {
		g := Generation{ID: "1", Text: "Q text", HyDoc: c.hy, Method: c.method, LLM: c.llm}
		if got := g.BM25Text(); got != c.want {
			t.Errorf("%s/%s BM25 %q, want %q", c.method, c.llm, got, c.want)
		}
		if got := g.Dense(); got != (DenseInput{Query: c.want}) {
			t.Errorf("%s/%s dense %+v, want one input %q", c.method, c.llm, got, c.want)
		}
	}
	for mode, want := range map[string]string{"": Reasoning, "replace": Reasoning, " Append": ReasoningAppend} {
		if got, err := ReasoningMethod(mode); err != nil || got != want {
			t.Errorf("ReasoningMethod(%q) = %q %v", mode, got, err)
		}
	}
	if _, err := ReasoningMethod("prepend"); err == nil || !strings.Contains(err.Error(), "replace") {
		t.Errorf("ReasoningMethod(prepend): %v", err)
	}
}

// TestReasoningGenerateAndLoad generates a reasoning set through a
// loopback chat server, writes it, and reads it back in both modes from
// the one reasoning/<llm>/ directory, as a run with --gar reasoning or
// --gar reasoning-append reads a local set.
func TestReasoningGenerateAndLoad(t *testing.T) {
	s := newGenServer(t)
	task := genTask("chest pain on exertion", "fever and rash")
	res, err := Generate(context.Background(), genClient(t, s, nil), task, config(ReasoningAppend, "my-llm"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(s.prompts[0], "Identify the essential problem in the Medical Exam.") {
		t.Errorf("prompt %q", s.prompts[0])
	}
	root := t.TempDir()
	path, err := res.WriteDir(root)
	if err != nil {
		t.Fatal(err)
	}
	if path != filepath.Join(root, "reasoning", "my-llm", FileName) {
		t.Errorf("written to %s", path)
	}
	for _, m := range []string{Reasoning, ReasoningAppend} {
		gens, err := LoadDir(root, m, "my-llm")
		if err != nil {
			t.Fatal(err)
		}
		qs, err := Apply(task.Queries, gens)
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"passage for: chest pain on exertion", "passage for: fever and rash"}
		if m == ReasoningAppend {
			want = []string{"chest pain on exertion passage for: chest pain on exertion", "fever and rash passage for: fever and rash"}
		}
		if got := []string{qs[0].Text, qs[1].Text}; !reflect.DeepEqual(got, want) {
			t.Errorf("%s: queries %q, want %q", m, got, want)
		}
	}
	src, err := Sources(root)
	if err != nil || !reflect.DeepEqual(src, []Source{{Reasoning, "my-llm"}}) {
		t.Errorf("Sources %v %v", src, err)
	}
	if _, err := LoadDir(t.TempDir(), ReasoningAppend, "gpt4"); err == nil || !strings.Contains(err.Error(), filepath.Join("reasoning", "gpt4", FileName)) {
		t.Errorf("missing set: %v", err)
	}
}

// TestReasoningPublishedLayout reads a hand-written BRIGHT-style set (the
// LLM's rewritten query as hy_doc) from a task directory.
func TestReasoningPublishedLayout(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "reasoning", "gpt4", FileName)
	os.MkdirAll(filepath.Dir(p), 0o755)
	os.WriteFile(p, []byte(`{"id": "q1", "text": "Why scurvy?", "hy_doc": "Essential problem: vitamin C."}`+"\n"), 0o644)
	gens, err := LoadDir(dir, Reasoning, "gpt4")
	if err != nil {
		t.Fatal(err)
	}
	qs, err := Apply([]ir.Query{{ID: "q1", Text: "Why scurvy?"}}, gens)
	if err != nil || qs[0].Text != "Essential problem: vitamin C." {
		t.Errorf("%v %v", qs, err)
	}
}
