package slug

import "testing"

func TestMake(t *testing.T) {
	for in, want := range map[string]string{
		"hyde/gpt4 → bm25":        "hyde-gpt4-bm25",
		"rrf(bm25,bge)":           "rrf-bm25-bge",
		"reranking_hybrid":        "reranking-hybrid",
		"  ReasonEmbed-Qwen3-8B ": "ReasonEmbed-Qwen3-8B",
		"gte-Qwen2-7B-instruct":   "gte-Qwen2-7B-instruct",
		"Überrank 2.0":            "berrank-2.0",
		"///":                     "",
	} {
		if got := Make(in); got != want {
			t.Errorf("Make(%q) = %q, want %q", in, got, want)
		}
	}
}
