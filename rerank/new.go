package rerank

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/r2med/r2med/internal/httpx"
	"github.com/r2med/r2med/llm"
	"github.com/r2med/r2med/usage"
)

// Kinds are the reranker kinds New builds, as the CLI and pipeline files
// name them.
var Kinds = []string{"tei", "cohere", "jina", "voyage", "llm-pointwise", "llm-listwise", "onnx", KindInsertRank, KindRank1, KindReasonRank, KindGroupRank, KindDiver}

// UsesLLM reports whether a reranker kind asks a chat model, so that its
// callers give it the LLM answer cache (Spec.LLMCache).
func UsesLLM(kind string) bool {
	k := strings.ToLower(kind)
	return strings.HasPrefix(k, "llm-") || slices.Contains(templated, k) || k == KindDiver
}

// Spec names a reranker: its kind and where its model is.
type Spec struct {
	// Kind is one of Kinds. cohere, jina and voyage speak the /v1/rerank
	// shape: to the provider's hosted API when BaseURL is empty, otherwise
	// to any compatible server at BaseURL (vLLM, Infinity…).
	Kind    string
	Model   string // the served model (rerank APIs and LLMs)
	BaseURL string // tei: required; LLM kinds: the OpenAI-compatible API root
	// BaseURLs are more servers of the same model: with BaseURL, one
	// fleet that requests are spread over (httpx.Fleet).
	BaseURLs []string
	// Fleet bounds each server's requests in flight (PerEndpoint; 0: no
	// bound beyond Concurrency and the rerank workers) and tunes how
	// failing servers are taken out and back.
	Fleet httpx.FleetOptions
	// ModelDir holds model.onnx and tokenizer.json for onnx.
	ModelDir string
	// APIKey; empty means the provider's environment variable
	// (COHERE_API_KEY, JINA_API_KEY, VOYAGE_API_KEY; OPENAI_API_KEY for
	// the LLM kinds).
	APIKey string
	HTTP   *httpx.Client // nil means httpx's defaults
	// LLMCache caches LLM answers, so a rerun asks nothing again.
	LLMCache llm.Store
	// Meter hears the usage of the LLM kinds' calls.
	Meter *usage.Meter
	// Replay sends nothing: LLM kinds answer from LLMCache only, and the
	// HTTP kinds (whose scores are not cached) refuse every request.
	Replay bool
	// Concurrency bounds a pointwise LLM's requests per query; 0 means 8.
	Concurrency int
	// CrossEncoder tunes onnx.
	CrossEncoder CrossEncoderOptions

	// Templates is a directory of edited prompt templates for insertrank,
	// rank1, reasonrank and grouprank (see WriteTemplates); files it
	// lacks are the built-in ones. Empty: the built-in set.
	Templates string
	// Scores is how insertrank shows first-stage scores (raw, minmax or
	// percent; "" is raw) and Decimals the digits printed (0 means 2).
	Scores   ScoreScale
	Decimals int
	// MaxTokens caps each answer of insertrank, rank1, reasonrank and
	// grouprank, reasoning included; 0 means the server's default.
	MaxTokens int
	// TextOnly makes rank1 ask for no logprobs (servers that refuse them).
	TextOnly bool
	// GroupSize and Repeats are grouprank's passages per group and passes
	// over the candidates; 0 means DefaultGroupSize and DefaultRepeats.
	GroupSize, Repeats int
	// Merge names diver's two rerankers and the pointwise one's weight;
	// they are built from this spec with their own kind (one server and
	// model for both).
	Merge MergeSpec
}

// Settings are the knobs beyond kind and model that change an LLM
// reranker's answers, for checkpoint keys and manifests: the sampling
// every one of them asks with (temperature 0, greedy, and no seed), and
// for llm-pointwise its prompt, max_tokens, top_logprobs and passage
// cut, for llm-listwise its prompt's digest, window, step and cut, for
// the templated ones the templates' digest, insertrank's scale and
// decimals, max_tokens, rank1's logprobs, grouprank's group size and
// repeats; for diver, each of its rerankers' kind and settings and the
// weight. nil for other kinds.
func (s Spec) Settings() (map[string]any, error) {
	kind := strings.ToLower(s.Kind)
	switch kind {
	case "llm-pointwise":
		return map[string]any{"temperature": 0, "prompt": DefaultPointwisePrompt, "max_tokens": pointwiseMaxTokens, "top_logprobs": DefaultTopLogprobs, "max_words": DefaultMaxWords}, nil
	case "llm-listwise":
		return map[string]any{"temperature": 0, "prompt_sha256": listwiseDigest(), "window": DefaultWindow, "step": DefaultStep, "max_words": DefaultMaxWords}, nil
	}
	if kind == KindDiver {
		point, list, w, err := s.mergeParts()
		if err != nil {
			return nil, err
		}
		m := map[string]any{"weight": w}
		for name, part := range map[string]Spec{MergePointwise: point, MergeListwise: list} {
			ps, err := part.Settings()
			if err != nil {
				return nil, err
			}
			if ps == nil {
				ps = map[string]any{}
			}
			ps["kind"] = part.Kind
			m[name] = ps
		}
		return m, nil
	}
	if !slices.Contains(templated, kind) {
		return nil, nil
	}
	p, err := LoadPrompts(s.Templates)
	if err != nil {
		return nil, err
	}
	m := map[string]any{"temperature": 0, "prompts_sha256": p.Digest(), "max_tokens": s.MaxTokens}
	switch kind {
	case KindInsertRank:
		scale, err := ParseScoreScale(string(s.Scores))
		if err != nil {
			return nil, err
		}
		m["scores"], m["decimals"] = scale, max(s.Decimals, 0)
		if s.Decimals == 0 {
			m["decimals"] = 2
		}
	case KindRank1:
		m["logprobs"] = !s.TextOnly
	case KindGroupRank:
		size, repeats, err := s.groups()
		if err != nil {
			return nil, err
		}
		m["group_size"], m["repeats"] = size, repeats
	}
	return m, nil
}

// New builds the Scorer spec describes. Scorers that hold resources (the
// onnx cross-encoder) implement io.Closer; LLM scorers have Stats().
func New(spec Spec) (Scorer, error) {
	kind := strings.ToLower(spec.Kind)
	hc := spec.HTTP
	if spec.Replay {
		c := httpx.Client{}
		if hc != nil {
			c = *hc
		}
		c.Replay = true
		hc = &c
	}
	switch kind {
	case "tei":
		if spec.BaseURL == "" && len(spec.BaseURLs) == 0 {
			return nil, fmt.Errorf("the tei reranker needs the server's base URL (--rerank-url, e.g. http://localhost:8080)")
		}
		return &TEI{BaseURL: spec.BaseURL, BaseURLs: spec.BaseURLs, Key: spec.APIKey, Client: hc, Fleet: spec.Fleet}, nil
	case "cohere", "jina", "voyage":
		base := spec.BaseURL
		if base == "" && len(spec.BaseURLs) > 0 {
			base = spec.BaseURLs[0]
		}
		a, err := NewAPI(kind, base, spec.Model, spec.APIKey)
		if err != nil {
			return nil, err
		}
		if base == spec.BaseURL {
			a.BaseURLs = spec.BaseURLs
		} else {
			a.BaseURLs = spec.BaseURLs[1:]
		}
		a.Client, a.Fleet = hc, spec.Fleet
		return a, nil
	case "llm-pointwise", "llm-listwise":
		c, err := spec.LLM()
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
	case KindInsertRank, KindRank1, KindReasonRank, KindGroupRank:
		return newReasoning(kind, spec)
	case KindDiver:
		return newMerge(spec)
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

// LLM is the chat client of an LLM kind: the spec's servers (one or a
// fleet), key, model, answer cache, usage meter and replay mode. Every
// LLM reranker builds its client here, so all of them share those.
func (spec Spec) LLM() (*llm.Client, error) {
	return llm.New(llm.Options{BaseURL: spec.BaseURL, BaseURLs: spec.BaseURLs, Fleet: spec.Fleet, APIKey: spec.APIKey, Model: spec.Model,
		Cache: spec.LLMCache, HTTP: spec.HTTP, Meter: spec.Meter, Replay: spec.Replay})
}

// newReasoning builds insertrank, rank1, reasonrank or grouprank.
func newReasoning(kind string, spec Spec) (Scorer, error) {
	if spec.Model == "" {
		return nil, fmt.Errorf("the %s reranker needs the model name the server serves (--rerank-model)", kind)
	}
	prompts, err := LoadPrompts(spec.Templates)
	if err != nil {
		return nil, err
	}
	c, err := spec.LLM()
	if err != nil {
		return nil, err
	}
	switch kind {
	case KindInsertRank:
		scale, err := ParseScoreScale(string(spec.Scores))
		if err != nil {
			return nil, err
		}
		if spec.Decimals < 0 {
			return nil, fmt.Errorf("insertrank decimals must be positive, got %d", spec.Decimals)
		}
		return &InsertRank{Chat: c, Prompts: prompts, MaxTokens: spec.MaxTokens, Scores: scale, Decimals: spec.Decimals}, nil
	case KindRank1:
		return &Rank1{Chat: c, Prompts: prompts, MaxTokens: spec.MaxTokens, TextOnly: spec.TextOnly, Concurrency: spec.Concurrency}, nil
	case KindGroupRank:
		size, repeats, err := spec.groups()
		if err != nil {
			return nil, err
		}
		return &GroupRank{Chat: c, Prompts: prompts, MaxTokens: spec.MaxTokens, GroupSize: size, Repeats: repeats, Concurrency: spec.Concurrency}, nil
	}
	return &ReasonRank{Chat: c, Prompts: prompts, MaxTokens: spec.MaxTokens}, nil
}

// groups are grouprank's group size and repeats, defaults filled in.
func (s Spec) groups() (size, repeats int, err error) { return groupSettings(s.GroupSize, s.Repeats) }

// listwiseDigest is a SHA-256 of llm-listwise's prompt: its messages for
// a window of two placeholder passages.
func listwiseDigest() string {
	b, _ := json.Marshal(ListwiseMessages("{query}", []string{"{passage 1}", "{passage 2}"}))
	return fmt.Sprintf("%x", sha256.Sum256(b))
}
