package main

import (
	"fmt"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/r2med/r2med/models"
	"github.com/r2med/r2med/reproduce"
)

// recipe is how r2med runs a published system: its pipeline document,
// what that needs, and how closely it should match.
type recipe struct {
	pipeline  *yaml.Node
	needs     reproduce.Needs
	tolerance float64
	notes     []string
}

// Tolerances, on R2MED's 0–1 scale.
const (
	// exactTol: lexical pipelines reproduce R2MED's exactly; its files
	// round to five decimals, so one unit of the last digit.
	exactTol = 0.00001
	// denseTol: dense models in fp32 here against R2MED's GPU runs
	// (fp16/bf16) differ in the last digits.
	denseTol = 0.005
	// closeTol: models that take their instruction as a separate prompt
	// (INSTRUCTOR, GritLM, NV-Embed), API models that may have changed
	// since, rerankers behind servers, later papers' rows.
	closeTol = 0.01
)

// retrieverRecipe is the retrieve: entry for a retriever R2MED names
// ("bm25", or a dense model's R2MED name), with its needs.
func retrieverRecipe(r2medName string) (recipe, error) {
	if r2medName == "bm25" {
		return recipe{pipeline: retrieveDoc(entry("bm25", mapping("scheme", text("r2med")))), tolerance: exactTol}, nil
	}
	for _, m := range models.All() {
		if m.R2MEDName == r2medName {
			return denseRecipe(m), nil
		}
	}
	return recipe{}, fmt.Errorf("no recipe for R2MED's retriever %q: neither bm25 nor a registry model's R2MEDName", r2medName)
}

// denseRecipe runs a registry model with its own recipe, served the way
// the registry prefers.
func denseRecipe(m models.Model) recipe {
	r := recipe{pipeline: retrieveDoc(entry("dense", mapping("model", text(m.Name)))), tolerance: denseTol}
	ids := m.HubIDs()
	r.needs.Models = ids
	switch backend := m.Backends[0]; {
	case backend == models.ONNX:
		r.needs.Weights = []reproduce.Weights{{Model: strings.Join(ids, " + "), Pull: "r2med model pull " + m.Name, Flag: "model-dir"}}
		r.notes = append(r.notes, "runs locally through ONNX Runtime in fp32; R2MED's GPU runs differ in the last digits")
	case m.Hosted && backend == models.Voyage:
		r.needs.Keys = []string{"VOYAGE_API_KEY"}
		r.tolerance = closeTol
		r.notes = append(r.notes, "an API model, which may have changed since R2MED called it")
	case m.Hosted && backend == models.OpenAI:
		r.needs.Keys = []string{"OPENAI_API_KEY"}
		r.tolerance = closeTol
		r.notes = append(r.notes, "an API model, which may have changed since R2MED called it")
	default:
		r.needs.Servers = []reproduce.Server{{
			What:   "an embedding server (OpenAI-compatible /v1/embeddings, e.g. vLLM or TEI) serving " + strings.Join(ids, " + "),
			Serves: strings.Join(ids, " + "), Flag: "base-url", Env: "OPENAI_BASE_URL",
		}}
		r.needs.GPU = true
	}
	if m.SeparatePrompt {
		r.tolerance = closeTol
		r.notes = append(r.notes, "the model takes its instruction as a separate prompt in its own encode, which an embedding server cannot do (it pools over the prefix too): close, not bit-exact")
	}
	if m.Note != "" {
		r.notes = append(r.notes, m.Note)
	}
	return r
}

// rerankers are R2MED's three rerankers as r2med runs them.
var rerankers = map[string]struct {
	stage *yaml.Node
	needs reproduce.Needs
}{
	"bge-reranker": {
		stage: mapping("kind", text("tei"), "model", text("BAAI/bge-reranker-v2-m3")),
		needs: reproduce.Needs{
			Models:  []string{"BAAI/bge-reranker-v2-m3"},
			Servers: []reproduce.Server{{What: "a rerank server (Text Embeddings Inference /rerank) serving BAAI/bge-reranker-v2-m3", Serves: "BAAI/bge-reranker-v2-m3", Flag: "rerank-url"}},
			GPU:     true,
		},
	},
	"monobert": {
		stage: mapping("kind", text("onnx")),
		needs: reproduce.Needs{
			Models:  []string{"castorini/monobert-large-msmarco"},
			Weights: []reproduce.Weights{{Model: "castorini/monobert-large-msmarco exported to ONNX", Flag: "rerank-model-dir"}},
		},
	},
	"rankllama": {
		stage: mapping("kind", text("tei"), "model", text("castorini/rankllama-v1-7b-lora-passage")),
		needs: reproduce.Needs{
			Models:  []string{"castorini/rankllama-v1-7b-lora-passage", "meta-llama/Llama-2-7b-hf"},
			Servers: []reproduce.Server{{What: "a rerank server (Text Embeddings Inference /rerank) serving RankLLaMA (castorini/rankllama-v1-7b-lora-passage merged into meta-llama/Llama-2-7b-hf)", Serves: "RankLLaMA", Flag: "rerank-url"}},
			GPU:     true,
		},
	},
}

// withRerank adds R2MED's reranking of the first stage's top depth.
func (r recipe) withRerank(name string, depth int) (recipe, error) {
	rr, ok := rerankers[name]
	if !ok {
		return recipe{}, fmt.Errorf("no recipe for R2MED's reranker %q", name)
	}
	stage := flow(clone(rr.stage))
	stage.Content = append(stage.Content, text("depth"), number(fmt.Sprint(depth)))
	set(r.pipeline, "rerank", stage)
	r.needs = mergeNeeds(r.needs, rr.needs)
	r.tolerance = max(r.tolerance, closeTol)
	r.notes = append(r.notes, fmt.Sprintf("only the %d reranked documents are kept, as R2MED keeps them (so Recall@100 is Recall@%d)", depth, depth))
	return r, nil
}

// withGAR puts R2MED's published generations in front of the retriever.
func (r recipe) withGAR(method, llm string) recipe {
	doc := mapping("expand", flow(mapping("method", text(method), "llm", text(llm))))
	doc.Content = append(doc.Content, r.pipeline.Content...)
	r.pipeline = doc
	r.notes = append(r.notes, fmt.Sprintf("the queries become R2MED's combination of the query and %s's published %s generation, read from the task's repository", llm, method))
	return r
}

func mergeNeeds(a, b reproduce.Needs) reproduce.Needs {
	add := func(dst []string, src ...string) []string {
		for _, s := range src {
			if !slices.Contains(dst, s) {
				dst = append(dst, s)
			}
		}
		return dst
	}
	a.Models = add(a.Models, b.Models...)
	a.Keys = add(a.Keys, b.Keys...)
	a.Servers = append(a.Servers, b.Servers...)
	a.Weights = append(a.Weights, b.Weights...)
	a.GPU = a.GPU || b.GPU
	return a
}

// YAML nodes.

func text(s string) *yaml.Node {
	n := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}
	return n
}

func number(s string) *yaml.Node {
	tag := "!!int"
	if strings.ContainsAny(s, ".e") {
		tag = "!!float"
	}
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: s}
}

func boolean(b bool) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: fmt.Sprint(b)}
}

// mapping builds a mapping from key, value pairs.
func mapping(kv ...any) *yaml.Node {
	m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	for i := 0; i < len(kv); i += 2 {
		m.Content = append(m.Content, text(kv[i].(string)), kv[i+1].(*yaml.Node))
	}
	return m
}

func seq(items ...*yaml.Node) *yaml.Node {
	return &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Content: items}
}

func texts(ss []string) *yaml.Node {
	n := seq()
	for _, s := range ss {
		n.Content = append(n.Content, text(s))
	}
	return n
}

// flow prints n on one line.
func flow(n *yaml.Node) *yaml.Node {
	n.Style = yaml.FlowStyle
	return n
}

// entry is a retrieve: list entry, kind: settings.
func entry(kind string, settings *yaml.Node) *yaml.Node {
	return mapping(kind, flow(settings))
}

func retrieveDoc(entries ...*yaml.Node) *yaml.Node {
	return mapping("retrieve", seq(entries...))
}

func set(m *yaml.Node, key string, v *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content[i+1] = v
			return
		}
	}
	m.Content = append(m.Content, text(key), v)
}

func clone(n *yaml.Node) *yaml.Node {
	c := *n
	c.Content = nil
	for _, ch := range n.Content {
		c.Content = append(c.Content, clone(ch))
	}
	return &c
}
