package rerank

import (
	"strings"
	"testing"
)

func TestNew(t *testing.T) {
	t.Setenv("COHERE_API_KEY", "")
	t.Setenv("OPENAI_API_KEY", "")
	for _, tc := range []struct {
		spec Spec
		want string // the scorer type, or an error fragment
	}{
		{Spec{Kind: "tei", BaseURL: "http://localhost:8080"}, "*rerank.TEI"},
		{Spec{Kind: "tei"}, "needs the server's base URL"},
		{Spec{Kind: "cohere", BaseURL: "http://localhost:8000", Model: "bge"}, "*rerank.API"},
		{Spec{Kind: "cohere", Model: "rerank-v3.5"}, "COHERE_API_KEY"},
		{Spec{Kind: "jina", BaseURL: "http://localhost:8000"}, "needs a model name"},
		{Spec{Kind: "llm-pointwise", BaseURL: "http://localhost:8000/v1", Model: "qwen"}, "*rerank.Pointwise"},
		{Spec{Kind: "llm-listwise", BaseURL: "http://localhost:8000/v1", Model: "qwen"}, "*rerank.Listwise"},
		// Kinds are case-insensitive all the way through, not only in the switch.
		{Spec{Kind: "LLM-Pointwise", BaseURL: "http://localhost:8000/v1", Model: "qwen"}, "*rerank.Pointwise"},
		{Spec{Kind: "llm-listwise", BaseURL: "http://localhost:8000/v1"}, "needs the model name"},
		{Spec{Kind: "onnx"}, "(--rerank-model-dir)"},
		{Spec{Kind: "colbert"}, `unknown reranker "colbert"`},
		{Spec{}, "no reranker kind"},
	} {
		s, err := New(tc.spec)
		got := ""
		if err != nil {
			got = err.Error()
		} else {
			got = typeName(s)
		}
		if !strings.Contains(got, tc.want) {
			t.Errorf("%+v: got %q, want %q", tc.spec, got, tc.want)
		}
	}
}

func typeName(s Scorer) string {
	switch s.(type) {
	case *TEI:
		return "*rerank.TEI"
	case *API:
		return "*rerank.API"
	case *Pointwise:
		return "*rerank.Pointwise"
	case *Listwise:
		return "*rerank.Listwise"
	case *CrossEncoder:
		return "*rerank.CrossEncoder"
	}
	return "?"
}
