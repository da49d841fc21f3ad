package config

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

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
	// lenient leaves a flag out of a pipeline without the stage it sets
	// (AddServerFlags), instead of refusing it.
	lenient bool
}

type flagDef struct {
	name  string
	path  []string          // keys from the top of the file; a kind's flags: the key in the kind's value
	kind  string            // the retriever kind whose entries the flag sets; "" for the others
	also  []string          // more kinds that declare the same flag (same key and type): it sets their entries too
	typ   retrieve.FlagType // retrieve.Strings: repeatable, a list of texts
	list  bool              // a list of numbers (--weights)
	dur   bool              // a duration (--request-timeout)
	def   string
	usage string
	// rewrite, for a kind's flag that rewrites the retrieve: entries
	// (retrieve.Flag.Rewrite), instead of setting path.
	rewrite func(entries []*yaml.Node, value string) error
}

// retrieverFlag replaces the retrieve: list by its comma-separated words.
const retrieverFlag = "retriever"

func pipelineFlags() []flagDef {
	i, f, b, ss := retrieve.Int, retrieve.Float, retrieve.Bool, retrieve.Strings
	defs := []flagDef{
		{name: retrieverFlag, path: []string{"retrieve"}, def: "bm25", usage: retrieverUsage()},
		{name: "name", path: []string{"name"}, usage: "the system's display name in results files and leaderboards (default: derived from the stages, e.g. rrf(bm25,bge))"},
		{name: "top-k", path: []string{"top_k"}, typ: i, def: "100", usage: "documents kept per query"},
		{name: "gar", path: []string{"expand", "method"}, usage: "generation-augmented retrieval with published or generated (--gar-model) LLM outputs: hyde, query2doc, lamer, search-o1, search-r1 (read from DATA/<method>/<llm>/query_with_hydoc.jsonl), or BRIGHT-style query reasoning: reasoning (the reasoning replaces the query) or reasoning-append (it follows the query), both read from DATA/reasoning/<llm>/"},
		{name: "gar-llm", path: []string{"expand", "llm"}, usage: "the LLM whose generations --gar uses (R2MED's names: gpt4, qwen-72b, r1-llama-70b, …)"},
		{name: "gar-dir", path: []string{"expand", "dir"}, usage: "directory of generations in R2MED's layout (METHOD/LLM/query_with_hydoc.jsonl), e.g. from r2med gar generate; {task} is replaced by the task name; default: the task's own"},
		{name: "gar-model", path: []string{"expand", "generate", "model"}, usage: "generate the --gar expansions in the run with this model of an OpenAI-compatible server (R2MED's sampling; the key from OPENAI_API_KEY; more settings in a pipeline file's expand: generate:)"},
		{name: "gar-base-url", path: []string{"expand", "generate", "base_url"}, typ: ss, usage: "with --gar-model: the LLM server's API root (default $OPENAI_BASE_URL, then OpenAI); repeat it, or give a file of URLs, for a fleet of servers of one model"},
		{name: "gar-style", path: []string{"expand", "generate", "style"}, usage: "with --gar-model: prompt style, post, exam, case or similar-case (default: the task's)"},
		{name: "gar-domain", path: []string{"expand", "generate", "domain"}, usage: `with --gar-model: the post style's domain ("Biology", "Medical Science", …; default: the task's)`},
		{name: "fuse", path: []string{"fuse", "method"}, def: "rrf", usage: "with several retrievers: rrf or combsum"},
		{name: "rrf-k", path: []string{"fuse", "k"}, typ: f, def: "60", usage: "RRF constant k (60 as Pyserini; HAKARI-Bench uses 100)"},
		{name: "norm", path: []string{"fuse", "norm"}, def: "minmax", usage: "combsum score normalization: minmax, zscore, none"},
		{name: "weights", path: []string{"fuse", "weights"}, list: true, usage: "combsum weights, one per retriever"},
		{name: "rerank", path: []string{"rerank", "kind"}, usage: "rerank the top of the run: tei, cohere (/v1/rerank: Cohere, Jina, Voyage), llm-pointwise, llm-listwise, onnx, or a reasoning reranker: insertrank (InsertRank, listwise with first-stage scores), rank1 (Rank1, reason then judge), reasonrank (ReasonRank, reason then permute), grouprank (GroupRank, groups scored together on one 0-10 scale), diver (DIVER's merge of a pointwise and a listwise reranker's ranks)"},
		{name: "rerank-model", path: []string{"rerank", "model"}, usage: "reranker model name (HTTP/LLM)"},
		{name: "rerank-url", path: []string{"rerank", "base_url"}, typ: ss, usage: "reranker server base URL; repeat it, or give a file of URLs, for a fleet of servers of one model"},
		{name: "rerank-model-dir", path: []string{"rerank", "model_dir"}, usage: "onnx reranker: a local cross-encoder directory"},
		{name: "rerank-depth", path: []string{"rerank", "depth"}, typ: i, def: "100", usage: "documents reranked per query (R2MED: 10 or 100); only they are kept unless --keep-tail"},
		{name: "keep-tail", path: []string{"rerank", "keep_tail"}, typ: b, usage: "keep the documents below --rerank-depth after the reranked ones"},
		{name: "without-safeguard", path: []string{"rerank", "without_safeguard"}, typ: b, usage: "drop a NanoR2MED reranking_hybrid list's rank-101 safeguard before reranking"},
		{name: "rerank-templates", path: []string{"rerank", "templates"}, usage: "insertrank/rank1/reasonrank/grouprank (and diver's rerankers): directory of edited prompt templates (from r2med rerank templates)"},
		{name: "insertrank-scores", path: []string{"rerank", "scores"}, def: "raw", usage: "insertrank: first-stage scores shown as raw, minmax (0 to 1 over each query's candidates) or percent (0 to 100)"},
		{name: "insertrank-decimals", path: []string{"rerank", "decimals"}, typ: i, def: "2", usage: "insertrank: digits after the point of the scores shown, at least (more where a query's different scores would print alike)"},
		{name: "rerank-max-tokens", path: []string{"rerank", "max_tokens"}, typ: i, usage: "insertrank/rank1/reasonrank/grouprank: most tokens per answer, reasoning included (0: the server's default)"},
		{name: "rerank-text-only", path: []string{"rerank", "text_only"}, typ: b, usage: "rank1: ask for no logprobs (servers that refuse them); answers are scored from their text"},
		{name: "grouprank-size", path: []string{"rerank", "group_size"}, typ: i, def: "10", usage: "grouprank: passages judged together in one group (DIVER's default; its BRIGHT 46.8 run: 20)"},
		{name: "grouprank-repeats", path: []string{"rerank", "repeats"}, typ: i, def: "2", usage: "grouprank: passes over the candidates, each in another order, scores averaged (DIVER's default; its BRIGHT 46.8 run: 6)"},
		{name: "merge-pointwise", path: []string{"rerank", "merge", "pointwise"}, def: "rank1", usage: "diver: the pointwise reranker merged: llm-pointwise, rank1 or grouprank"},
		{name: "merge-listwise", path: []string{"rerank", "merge", "listwise"}, def: "reasonrank", usage: "diver: the listwise reranker merged: llm-listwise, insertrank, reasonrank or grouprank"},
		{name: "merge-weight", path: []string{"rerank", "merge", "weight"}, typ: f, def: "0.6", usage: "diver: weight of the pointwise ranking's -ln(rank), the listwise one's taking the rest (DIVER: 0.6)"},
	}
	defs = append(defs, remoteFlags()...)
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
			defs = append(defs, flagDef{name: fl.Name, path: []string{fl.Key}, kind: k.Name, typ: fl.Type, def: fl.Default, usage: fl.Usage, rewrite: fl.Rewrite})
		}
	}
	return defs
}

// remoteFlags set the keys of Remote.
func remoteFlags() []flagDef {
	return []flagDef{
		{name: "request-timeout", path: []string{"request_timeout"}, dur: true, def: "2m0s", usage: "model servers (embeddings, LLMs, rerankers): the most one request may take, answer included"},
		{name: "retries", path: []string{"retries"}, typ: retrieve.Int, def: "5", usage: "model servers: how often a failed request (timeout, 429, 5xx, dropped connection) is tried again, with backoff; 0 never"},
		{name: "endpoint-concurrency", path: []string{"endpoint_concurrency"}, typ: retrieve.Int, usage: "model servers: the most requests in flight to each server of a fleet (0: each stage's own concurrency)"},
	}
}

// RemoteFlags are the flags of Remote (--request-timeout, --retries,
// --endpoint-concurrency) for commands that call model servers without
// the pipeline flags (sweep, gar generate, rerank); run has them among
// its pipeline flags, as keys of the pipeline file.
type RemoteFlags struct{ Flags }

// AddRemoteFlags defines the flags of Remote on fs.
func AddRemoteFlags(fs *pflag.FlagSet) *RemoteFlags {
	f := &RemoteFlags{Flags{fs: fs, defs: remoteFlags()}}
	f.define()
	return f
}

// Apply sets the fields of r whose flags were given; the others keep
// their value (a pipeline file's, or the defaults).
func (f *RemoteFlags) Apply(r Remote) (Remote, error) {
	doc, err := f.Overlay(yamlx.Mapping())
	if err != nil {
		return r, err
	}
	var file File
	if err := yamlx.Decode(doc, &file, "the flags"); err != nil {
		return r, err
	}
	given, err := file.Remote()
	if err != nil {
		return r, err
	}
	return given.Or(r), nil
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
	f.define()
	return f
}

// serverFlags are the pipeline flags that say where models run and how
// calls to them are bounded, never what is computed: the servers and
// local model folders of the retrievers and rerankers, and Remote's.
var serverFlags = []string{"base-url", "model-dir", "rerank-url", "rerank-model-dir", "concurrency", "request-timeout", "retries", "endpoint-concurrency"}

// AddServerFlags defines serverFlags on fs, for a command that runs
// pipelines it did not write (r2med reproduce): Overlay sets each flag in
// the pipelines that have its stage and leaves the others alone.
func AddServerFlags(fs *pflag.FlagSet) *Flags {
	f := &Flags{fs: fs, lenient: true}
	for _, d := range pipelineFlags() {
		if slices.Contains(serverFlags, d.name) {
			f.defs = append(f.defs, d)
		}
	}
	f.define()
	return f
}

func (f *Flags) define() {
	fs := f.fs
	for _, d := range f.defs {
		switch {
		case d.list:
			fs.Float64Slice(d.name, nil, d.usage)
		case d.dur:
			v, _ := time.ParseDuration(d.def)
			fs.Duration(d.name, v, d.usage)
		case d.typ == retrieve.Strings:
			fs.StringArray(d.name, nil, d.usage)
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
	if f.fs.Lookup(retrieverFlag) != nil && f.fs.Changed(retrieverFlag) {
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
		if d.name == retrieverFlag || d.rewrite != nil || !f.fs.Changed(d.name) {
			continue
		}
		value, err := f.value(d)
		if err != nil {
			return nil, err
		}
		if d.kind == "" {
			if f.lenient && len(d.path) > 1 && yamlx.Get(doc, d.path[0]) == nil {
				continue // the pipeline has no such stage
			}
			setPath(doc, d.path, value)
			continue
		}
		set := 0
		if list := yamlx.Get(doc, "retrieve"); list != nil && list.Kind == yaml.SequenceNode {
			for _, e := range list.Content {
				// An entry takes the flags of the kind it says (an index
				// entry, its part's).
				if k := retrieve.FlagKind(e); k != d.kind && !slices.Contains(d.also, k) {
					continue
				}
				yamlx.Set(e.Content[1], d.path[0], value)
				set++
			}
		}
		if set == 0 && !f.lenient {
			kinds := strings.Join(append([]string{d.kind}, d.also...), " or ")
			return nil, fmt.Errorf("--%s sets %s retrievers, and the pipeline has none (add one with --retriever %s)", d.name, kinds, d.kind)
		}
	}
	// Last, so that the retrievers' own flags are among the keys an entry
	// rewritten checks (an index, against what it was built with).
	for _, d := range f.defs {
		if d.rewrite == nil || !f.fs.Changed(d.name) {
			continue
		}
		var entries []*yaml.Node
		if list := yamlx.Get(doc, "retrieve"); list != nil && list.Kind == yaml.SequenceNode {
			entries = list.Content
		}
		if err := d.rewrite(entries, f.fs.Lookup(d.name).Value.String()); err != nil {
			return nil, err
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
	if d.typ == retrieve.Strings {
		vs, err := f.fs.GetStringArray(d.name)
		if err != nil {
			return nil, err
		}
		return yamlx.Seq(vs), nil
	}
	s := f.fs.Lookup(d.name).Value.String()
	if d.typ == retrieve.String || d.dur {
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

// KindFlags are one retriever kind's flags on a command other than run
// (the dense flags of `r2med index build` and `r2med index push`), read
// into the kind's YAML value as run's flags are laid over a pipeline
// file's entry.
type KindFlags struct {
	Flags
	kind retrieve.Kind
}

// AddKindFlags defines the flags of the retriever kind named kind on fs,
// but those named in skip.
func AddKindFlags(fs *pflag.FlagSet, kind string, skip ...string) *KindFlags {
	k, _ := retrieve.Lookup(kind)
	f := &KindFlags{Flags: Flags{fs: fs}, kind: k}
	for _, fl := range k.Flags {
		if !slices.Contains(skip, fl.Name) {
			f.defs = append(f.defs, flagDef{name: fl.Name, path: []string{fl.Key}, kind: k.Name, typ: fl.Type, def: fl.Default, usage: fl.Usage})
		}
	}
	f.define()
	return f
}

// Spec is the kind's entry the flags given make, validated.
func (f *KindFlags) Spec() (retrieve.Spec, error) {
	m := yamlx.Mapping()
	for _, d := range f.defs {
		if !f.fs.Changed(d.name) {
			continue
		}
		v, err := f.value(d)
		if err != nil {
			return nil, err
		}
		yamlx.Set(m, d.path[0], v)
	}
	s, err := f.kind.Parse(m)
	if err != nil {
		return nil, err
	}
	return s, s.Validate()
}
