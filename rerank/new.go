package rerank

import (
	"fmt"
	"strings"

	"github.com/r2med/r2med/internal/httpx"
	"github.com/r2med/r2med/llm"
)

// Kinds are the reranker kinds New builds, as the CLI and pipeline files
// name them.
var Kinds = []string{"tei", "cohere", "jina", "voyage", "llm-pointwise", "llm-listwise", "onnx"}

// Spec names a reranker: its kind and where its model is.
type Spec struct {
	// Kind is one of Kinds. cohere, jina and voyage speak the /v1/rerank
	// shape: to the provider's hosted API when BaseURL is empty, otherwise
	// to any compatible server at BaseURL (vLLM, Infinity…).
	Kind    string
	Model   string // the served model (rerank APIs and LLMs)
	BaseURL string // tei: required; LLM kinds: the OpenAI-compatible API root
	// ModelDir holds model.onnx and tokenizer.json for onnx.
	ModelDir string
	// APIKey; empty means the provider's environment variable
	// (COHERE_API_KEY, JINA_API_KEY, VOYAGE_API_KEY; OPENAI_API_KEY for
	// the LLM kinds).
	APIKey string
	HTTP   *httpx.Client // nil means httpx's defaults
	// LLMCache caches LLM answers, so a rerun asks nothing again.
	LLMCache llm.Store
	// Concurrency bounds a pointwise LLM's requests per query; 0 means 8.
	Concurrency int
	// CrossEncoder tunes onnx.
	CrossEncoder CrossEncoderOptions
}

// New builds the Scorer spec describes. Scorers that hold resources (the
// onnx cross-encoder) implement io.Closer; LLM scorers have Stats().
func New(spec Spec) (Scorer, error) {
	kind := strings.ToLower(spec.Kind)
	switch kind {
	case "tei":
		if spec.BaseURL == "" {
			return nil, fmt.Errorf("the tei reranker needs the server's base URL (--rerank-url, e.g. http://localhost:8080)")
		}
		return &TEI{BaseURL: spec.BaseURL, Key: spec.APIKey, Client: spec.HTTP}, nil
	case "cohere", "jina", "voyage":
		a, err := NewAPI(kind, spec.BaseURL, spec.Model, spec.APIKey)
		if err != nil {
			return nil, err
		}
		a.Client = spec.HTTP
		return a, nil
	case "llm-pointwise", "llm-listwise":
		c, err := llm.New(llm.Options{BaseURL: spec.BaseURL, APIKey: spec.APIKey, Model: spec.Model, Cache: spec.LLMCache, HTTP: spec.HTTP})
		if err != nil {
			return nil, err
		}
		if spec.Model == "" {
			return nil, fmt.Errorf("an LLM reranker needs the model name the server serves (--rerank-model)")
		}
		if kind == "llm-pointwise" {
			return &Pointwise{Chat: c, Concurrency: spec.Concurrency}, nil
		}
		return &Listwise{Chat: c}, nil
	case "onnx":
		if spec.ModelDir == "" {
			return nil, fmt.Errorf("the onnx reranker needs the directory of model.onnx and tokenizer.json (--rerank-model-dir)")
		}
		return NewCrossEncoder(spec.ModelDir, spec.CrossEncoder)
	case "":
		return nil, fmt.Errorf("no reranker kind given (%s)", strings.Join(Kinds, ", "))
	}
	return nil, fmt.Errorf("unknown reranker %q (%s)", spec.Kind, strings.Join(Kinds, ", "))
}
