package gar

import "testing"

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
