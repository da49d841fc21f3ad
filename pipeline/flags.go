package pipeline

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
	"gopkg.in/yaml.v3"

	"github.com/r2med/r2med/internal/yamlx"
	"github.com/r2med/r2med/retrieve"
)

// Flags are the command-line form of a pipeline: each flag sets one key
// of the pipeline file's schema (File), and the retrievers' flags come
// from their kinds (retrieve.Kind.Flags). The flags given are laid over a
// pipeline file, or over the default pipeline (R2MED's BM25), and the
// result goes through FromYAML like any file: one schema, one path, the
// same Config whichever way a setting was given.
type Flags struct {
	fs   *pflag.FlagSet
	defs []flagDef
}

type flagDef struct {
	name  string
	path  []string // keys from the top of the file; a kind's flags: the key in the kind's value
	kind  string   // the retriever kind whose entries the flag sets; "" for the others
	also  []string // more kinds that declare the same flag (same key and type): it sets their entries too
	typ   retrieve.FlagType
	list  bool // a list of numbers (--weights)
	def   string
	usage string
}

// retrieverFlag replaces the retrieve: list by its comma-separated words.
const retrieverFlag = "retriever"

func pipelineFlags() []flagDef {
	i, f, b := retrieve.Int, retrieve.Float, retrieve.Bool
	defs := []flagDef{
		{name: retrieverFlag, path: []string{"retrieve"}, def: "bm25", usage: retrieverUsage()},
		{name: "name", path: []string{"name"}, usage: "the system's display name in results files and leaderboards (default: derived from the stages, e.g. rrf(bm25,bge))"},
		{name: "top-k", path: []string{"top_k"}, typ: i, def: "100", usage: "documents kept per query"},
		{name: "gar", path: []string{"expand", "method"}, usage: "generation-augmented retrieval with published LLM outputs: hyde, query2doc, lamer, search-o1, search-r1 (read from DATA/<method>/<llm>/query_with_hydoc.jsonl)"},
		{name: "gar-llm", path: []string{"expand", "llm"}, usage: "the LLM whose generations --gar uses (R2MED's names: gpt4, qwen-72b, r1-llama-70b, …)"},
		{name: "gar-dir", path: []string{"expand", "dir"}, usage: "directory of generations in R2MED's layout (METHOD/LLM/query_with_hydoc.jsonl), e.g. from r2med gar generate; {task} is replaced by the task name; default: the task's own"},
		{name: "gar-model", path: []string{"expand", "generate", "model"}, usage: "generate the --gar expansions in the run with this model of an OpenAI-compatible server (R2MED's sampling; the key from OPENAI_API_KEY; more settings in a pipeline file's expand: generate:)"},
		{name: "gar-base-url", path: []string{"expand", "generate", "base_url"}, usage: "with --gar-model: the LLM server's API root (default $OPENAI_BASE_URL, then OpenAI)"},
		{name: "gar-style", path: []string{"expand", "generate", "style"}, usage: "with --gar-model: prompt style, post, exam, case or similar-case (default: the task's)"},
		{name: "gar-domain", path: []string{"expand", "generate", "domain"}, usage: `with --gar-model: the post style's domain ("Biology", "Medical Science", …; default: the task's)`},
		{name: "fuse", path: []string{"fuse", "method"}, def: "rrf", usage: "with several retrievers: rrf or combsum"},
		{name: "rrf-k", path: []string{"fuse", "k"}, typ: f, def: "60", usage: "RRF constant k (60 as Pyserini; HAKARI-Bench uses 100)"},
		{name: "norm", path: []string{"fuse", "norm"}, def: "minmax", usage: "combsum score normalization: minmax, zscore, none"},
		{name: "weights", path: []string{"fuse", "weights"}, list: true, usage: "combsum weights, one per retriever"},
		{name: "rerank", path: []string{"rerank", "kind"}, usage: "rerank the top of the run: tei, cohere (/v1/rerank: Cohere, Jina, Voyage), llm-pointwise, llm-listwise, onnx"},
		{name: "rerank-model", path: []string{"rerank", "model"}, usage: "reranker model name (HTTP/LLM)"},
		{name: "rerank-url", path: []string{"rerank", "base_url"}, usage: "reranker server base URL"},
		{name: "rerank-model-dir", path: []string{"rerank", "model_dir"}, usage: "onnx reranker: a local cross-encoder directory"},
		{name: "rerank-depth", path: []string{"rerank", "depth"}, typ: i, def: "100", usage: "documents reranked per query (R2MED: 10 or 100); only they are kept unless --keep-tail"},
		{name: "keep-tail", path: []string{"rerank", "keep_tail"}, typ: b, usage: "keep the documents below --rerank-depth after the reranked ones"},
		{name: "without-safeguard", path: []string{"rerank", "without_safeguard"}, typ: b, usage: "drop a NanoR2MED reranking_hybrid list's rank-101 safeguard before reranking"},
	}
	for _, k := range retrieve.Kinds() {
	flags:
		for _, fl := range k.Flags {
			// Kinds may share a flag (weaviate's query vectors take dense's
			// --model, --backend, …): one flag sets every kind's entries.
			for i := range defs {
				if defs[i].name == fl.Name && defs[i].kind != "" && defs[i].path[0] == fl.Key && defs[i].typ == fl.Type {
					defs[i].also = append(defs[i].also, k.Name)
					continue flags
				}
			}
			defs = append(defs, flagDef{name: fl.Name, path: []string{fl.Key}, kind: k.Name, typ: fl.Type, def: fl.Default, usage: fl.Usage})
		}
	}
	return defs
}

// retrieverUsage describes --retriever from the registered kinds.
func retrieverUsage() string {
	var parts []string
	for _, k := range retrieve.Kinds() {
		parts = append(parts, k.Usage+": "+k.Help)
	}
	return "retriever; several, comma-separated, are fused (--fuse). " + strings.Join(parts, "; ")
}

// AddFlags defines the pipeline's flags on fs.
func AddFlags(fs *pflag.FlagSet) *Flags {
	f := &Flags{fs: fs, defs: pipelineFlags()}
	for _, d := range f.defs {
		switch {
		case d.list:
			fs.Float64Slice(d.name, nil, d.usage)
		case d.typ == retrieve.Int:
			v, _ := strconv.Atoi(d.def)
			fs.Int(d.name, v, d.usage)
		case d.typ == retrieve.Float:
			v, _ := strconv.ParseFloat(d.def, 64)
			fs.Float64(d.name, v, d.usage)
		case d.typ == retrieve.Bool:
			fs.Bool(d.name, d.def == "true", d.usage)
		default:
			fs.String(d.name, d.def, d.usage)
		}
	}
	return f
}

// Given lists the pipeline flags set on the command line.
func (f *Flags) Given() []string {
	var out []string
	for _, d := range f.defs {
		if f.fs.Changed(d.name) {
			out = append(out, "--"+d.name)
		}
	}
	return out
}

// Config is the pipeline the flags describe, laid over the pipeline file
// path when it is not empty.
func (f *Flags) Config(path string) (Config, error) {
	var doc *yaml.Node
	if path != "" {
		var err error
		if doc, err = readFile(path); err != nil {
			return Config{}, err
		}
	}
	doc, err := f.Overlay(doc)
	if err != nil {
		return Config{}, err
	}
	cfg, err := FromYAML(doc)
	if err != nil && path != "" {
		return Config{}, fmt.Errorf("%s: %w", path, err)
	}
	return cfg, err
}

// DefaultDocument is the default pipeline as a document: R2MED's BM25.
func DefaultDocument() *yaml.Node {
	doc := yamlx.Mapping()
	entry, _ := retrieve.Entry("bm25")
	yamlx.Set(doc, "retrieve", &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Content: []*yaml.Node{entry}})
	return doc
}

// Overlay sets the keys of the flags given in doc (nil: the default
// pipeline) and returns it: --retriever first, since the retrievers'
// own flags set keys of its entries.
func (f *Flags) Overlay(doc *yaml.Node) (*yaml.Node, error) {
	if doc == nil {
		doc = DefaultDocument()
	}
	if doc.Kind != yaml.MappingNode {
		return nil, yamlx.Errorf(doc, "a pipeline is a mapping of stages (retrieve:, fuse:, …), not %s", yamlx.Describe(doc))
	}
	if f.fs.Changed(retrieverFlag) {
		v, _ := f.fs.GetString(retrieverFlag)
		list := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		for _, w := range strings.Split(v, ",") {
			w = strings.TrimSpace(w)
			if w == "" {
				return nil, fmt.Errorf("--retriever %q has an empty entry", v)
			}
			e, err := retrieve.Entry(w)
			if err != nil {
				return nil, fmt.Errorf("--retriever: %w", err)
			}
			list.Content = append(list.Content, e)
		}
		yamlx.Set(doc, "retrieve", list)
	}
	for _, d := range f.defs {
		if d.name == retrieverFlag || !f.fs.Changed(d.name) {
			continue
		}
		value, err := f.value(d)
		if err != nil {
			return nil, err
		}
		if d.kind == "" {
			setPath(doc, d.path, value)
			continue
		}
		set := 0
		if list := yamlx.Get(doc, "retrieve"); list != nil && list.Kind == yaml.SequenceNode {
			for _, e := range list.Content {
				if e.Kind != yaml.MappingNode || len(e.Content) != 2 || (e.Content[0].Value != d.kind && !slices.Contains(d.also, e.Content[0].Value)) {
					continue
				}
				yamlx.Set(e.Content[1], d.path[0], value)
				set++
			}
		}
		if set == 0 {
			kinds := strings.Join(append([]string{d.kind}, d.also...), " or ")
			return nil, fmt.Errorf("--%s sets %s retrievers, and the pipeline has none (add one with --retriever %s)", d.name, kinds, d.kind)
		}
	}
	return doc, nil
}

// value is a flag's value as a YAML node.
func (f *Flags) value(d flagDef) (*yaml.Node, error) {
	if d.list {
		vs, err := f.fs.GetFloat64Slice(d.name)
		if err != nil {
			return nil, err
		}
		list := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		for _, v := range vs {
			list.Content = append(list.Content, yamlx.Scalar(strconv.FormatFloat(v, 'g', -1, 64)))
		}
		return list, nil
	}
	s := f.fs.Lookup(d.name).Value.String()
	if d.typ == retrieve.String {
		return yamlx.Text(s), nil
	}
	return yamlx.Scalar(s), nil
}

// setPath sets the key at path in doc, making the mappings on the way.
func setPath(doc *yaml.Node, path []string, value *yaml.Node) {
	m := doc
	for _, k := range path[:len(path)-1] {
		next := yamlx.Get(m, k)
		if next == nil || next.Kind != yaml.MappingNode {
			next = yamlx.Mapping()
			yamlx.Set(m, k, next)
		}
		m = next
	}
	yamlx.Set(m, path[len(path)-1], value)
}
