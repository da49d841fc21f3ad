package gar

import (
	"strings"
	"testing"
)

func TestLLMName(t *testing.T) {
	for in, want := range map[string]string{
		"Qwen/Qwen2.5-7B-Instruct": "qwen2.5-7b-instruct",
		"gpt-4o":                   "gpt-4o",
		"qwen2.5:7b":               "qwen2.5-7b",
		"a/":                       "llm",
	} {
		if got := (Spec{Model: in}).LLMName(); got != want {
			t.Errorf("LLMName(%q) = %q, want %q", in, got, want)
		}
	}
	if got := (Spec{Model: "x", Label: "qwq-32b"}).LLMName(); got != "qwq-32b" {
		t.Errorf("a label wins: %q", got)
	}
}

// TestValidateRanges: settings out of range are refused before any LLM
// is asked, naming the setting, where a negative temperature or
// max_tokens failed every query as an unusable answer, a top_p above 1
// was sent (servers refuse it: it is a probability mass), and agentic
// bounds of 0 were recorded in the manifest as 0 while the agent ran
// with its defaults (5 searches, 3 passages, 16,384 tokens).
func TestValidateRanges(t *testing.T) {
	ok := Default()
	ok.Method, ok.Model = "search-r1", "m"
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		edit func(*Spec)
		want string
	}{
		"temperature": {func(g *Spec) { g.Temperature = -0.1 }, "temperature -0.1"},
		"top_p":       {func(g *Spec) { g.TopP = 1.5 }, "top_p 1.5"},
		"max_tokens":  {func(g *Spec) { g.MaxTokens = -1 }, "max_tokens -1"},
		"searches":    {func(g *Spec) { g.MaxSearches = 0 }, "max_searches 0"},
		"search_k":    {func(g *Spec) { g.SearchK = 0 }, "search_k 0"},
		"budget":      {func(g *Spec) { g.TokenBudget = 0 }, "token_budget 0"},
	} {
		g := ok
		c.edit(&g)
		if err := g.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error naming %q", name, err, c.want)
		}
	}
	// The agentic bounds matter to the agentic methods only.
	hyde := ok
	hyde.Method, hyde.MaxSearches = "hyde", 0
	if err := hyde.Validate(); err != nil {
		t.Errorf("hyde with max_searches 0: %v", err)
	}
}
