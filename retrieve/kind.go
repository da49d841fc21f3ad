package retrieve

import (
	"fmt"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/r2med/r2med/internal/yamlx"
)

// Kind is a kind of retriever as pipeline files and the command line
// write it. In a pipeline file's retrieve: list each entry is a mapping
// with one key, the kind's name, whose value Parse reads:
//
//	retrieve:
//	  - bm25: {scheme: lucene, k1: 1.2}
//	  - dense: {model: bge}
//	  - candidates: reranking_hybrid
//	  - run: runs/{task}.trec
//
// On the command line, --retriever KIND or KIND:ARG stands for the entry
// KIND: ARG (KIND: {} without an argument), and the kind's Flags set keys
// of every entry of that kind.
type Kind struct {
	Name string
	// Usage is how --retriever writes it: "bm25", "candidates:CONFIG".
	Usage string
	// Help is a short description for --retriever's help.
	Help string
	// Parse reads the kind's value in a retrieve: entry (null for an entry
	// written "bm25: {}" or "bm25:"). Errors name the line (yamlx.Errorf).
	Parse func(value *yaml.Node) (Spec, error)
	// Flags are the command-line flags laid over the kind's keys.
	Flags []Flag
	// ArgKey, when set, is the key KIND:ARG sets in a mapping ("weaviate:
	// hybrid" is {weaviate: {search: hybrid}}), so the kind's flags can
	// add the other keys; empty: ARG is the whole value.
	ArgKey string
	// FlagsOf, when set, names the kind whose flags set the keys of an
	// entry of this kind, from the entry's value (an index entry takes its
	// part's: --k1 reaches an index's bm25 part); nil: the kind's own.
	FlagsOf func(value *yaml.Node) string
}

// Flag is a command-line flag that sets one key of a kind's YAML value.
type Flag struct {
	Name    string   // the flag, without dashes: "k1"
	Key     string   // the key it sets: "k1"
	Type    FlagType // how the flag parses its value
	Default string   // shown in help; the kind's own default applies when the flag is not given
	Usage   string
	// Rewrite, when set, makes the flag rewrite the pipeline's retrieve:
	// entries instead of setting Key (--index PATH turns the bm25 and
	// dense entries into index entries over PATH), after every other flag
	// is laid over them; it refuses a value or a pipeline it cannot apply
	// to.
	Rewrite func(entries []*yaml.Node, value string) error
}

// FlagType is how a flag's value is parsed and written into YAML.
type FlagType int

const (
	String FlagType = iota // text, kept as text even when it looks like a number
	Int
	Float
	Bool
	// Strings is a repeatable flag whose values make a list (a fleet's
	// --base-url); its key takes one text or a list (yamlx.Strings).
	Strings
)

var kinds []Kind

// Register adds a kind; each kind registers itself in init: this
// package's kinds in their files, a kind whose client is heavy in a
// package of its own that programs import for it (as database/sql
// drivers; retrieve/weaviatekind), so that only they link the client.
func Register(k Kind) {
	if _, dup := Lookup(k.Name); dup {
		panic("retrieve: kind " + k.Name + " registered twice")
	}
	kinds = append(kinds, k)
}

// Kinds lists the registered kinds in registration order.
func Kinds() []Kind { return slices.Clone(kinds) }

// Lookup finds a kind by name.
func Lookup(name string) (Kind, bool) {
	for _, k := range kinds {
		if k.Name == name {
			return k, true
		}
	}
	return Kind{}, false
}

func kindNames() []string {
	var names []string
	for _, k := range kinds {
		names = append(names, k.Name)
	}
	return names
}

// Usage lists the kinds as --retriever takes them, for help and errors:
// "bm25, dense, candidates:CONFIG, run:PATH".
func Usage() string {
	var us []string
	for _, k := range kinds {
		us = append(us, k.Usage)
	}
	return strings.Join(us, ", ")
}

// ParseSpec reads one entry of a pipeline file's retrieve: list: a
// mapping with one key, the kind.
func ParseSpec(entry *yaml.Node) (Spec, error) {
	if entry == nil {
		return nil, fmt.Errorf("no retriever: give one of %s", strings.Join(kindNames(), ", "))
	}
	if entry.Kind != yaml.MappingNode || len(entry.Content) != 2 {
		return nil, yamlx.Errorf(entry, "each retriever is a mapping with one key, its kind (%s), not %s", strings.Join(kindNames(), ", "), yamlx.Describe(entry))
	}
	key, value := entry.Content[0], entry.Content[1]
	k, ok := Lookup(key.Value)
	if !ok {
		if s := yamlx.Suggest(key.Value, kindNames()); s != "" {
			return nil, yamlx.Errorf(key, "unknown retriever %q (did you mean %q?)", key.Value, s)
		}
		return nil, yamlx.Errorf(key, "unknown retriever %q (available: %s)", key.Value, strings.Join(kindNames(), ", "))
	}
	s, err := k.Parse(value)
	if err != nil {
		return nil, err
	}
	if err := s.Validate(); err != nil {
		return nil, yamlx.Errorf(key, "%v", err)
	}
	return s, nil
}

// FlagKind is the kind whose command-line flags set the keys of a
// retrieve: entry: its own, or the one its kind names (Kind.FlagsOf).
func FlagKind(entry *yaml.Node) string {
	if entry == nil || entry.Kind != yaml.MappingNode || len(entry.Content) != 2 {
		return ""
	}
	name := entry.Content[0].Value
	if k, ok := Lookup(name); ok && k.FlagsOf != nil {
		return k.FlagsOf(entry.Content[1])
	}
	return name
}

// Entry is the retrieve: entry a --retriever word stands for: "bm25" is
// {bm25: null}, "run:runs/x.trec" is {run: runs/x.trec}.
func Entry(word string) (*yaml.Node, error) {
	name, arg, hasArg := strings.Cut(word, ":")
	k, ok := Lookup(name)
	if !ok {
		hint := "available: " + Usage()
		if s := yamlx.Suggest(name, kindNames()); s != "" {
			hint = fmt.Sprintf("did you mean %q? available: %s", s, Usage())
		}
		return nil, fmt.Errorf("unknown retriever %q (%s)", word, hint)
	}
	value := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null"}
	if hasArg {
		if arg == "" {
			return nil, fmt.Errorf("retriever %q: give what follows the colon (%s)", word, k.Usage)
		}
		value = yamlx.Text(arg)
	}
	if k.ArgKey != "" {
		m := yamlx.Mapping()
		if hasArg {
			yamlx.Set(m, k.ArgKey, value)
		}
		value = m
	}
	m := yamlx.Mapping()
	yamlx.Set(m, k.Name, value)
	return m, nil
}

// DecodeSettings reads a kind's mapping value into dst (null: nothing),
// strictly, with errors at the key's line: what a kind's Parse does with
// its settings.
func DecodeSettings(value *yaml.Node, dst any, kind string) error {
	if value == nil {
		return nil
	}
	if value.Kind == yaml.ScalarNode && value.Tag != "!!null" {
		return yamlx.Errorf(value, "%s takes its settings as a mapping ({key: value, …}), not %s", kind, yamlx.Describe(value))
	}
	return yamlx.Decode(value, dst, kind)
}

// argument reads a kind's scalar value: "candidates: bm25".
func argument(value *yaml.Node, kind, what string) (string, error) {
	if value == nil || value.Kind != yaml.ScalarNode || value.Tag == "!!null" || value.Value == "" {
		got := "nothing"
		if value != nil {
			got = yamlx.Describe(value)
		}
		return "", yamlx.Errorf(value, "%s needs %s, not %s", kind, what, got)
	}
	return value.Value, nil
}
