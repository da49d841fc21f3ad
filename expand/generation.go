package expand

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/r2med/r2med/internal/errtext"
	"github.com/r2med/r2med/internal/fileio"
)

// Generation is one query's LLM output.
type Generation struct {
	ID     string // the query's id
	Text   string // the query text as the generation file stores it
	HyDoc  string // the raw LLM output, reasoning and markers included
	Method string // HyDE, Query2Doc, …
	LLM    string // R2MED's short name, e.g. "qwen-7b", "r1-qwen-32b"
}

// R2MED's GAR methods, as spelled in its --gar_method and directory names.
const (
	HyDE      = "hyde"
	Query2Doc = "query2doc"
	LameR     = "lamer"
	SearchO1  = "search-o1"
	SearchR1  = "search-r1"
)

var methods = []string{HyDE, Query2Doc, LameR, SearchO1, SearchR1, Reasoning, ReasoningAppend}

// Methods lists the GAR methods: R2MED's five, then BRIGHT-style query
// reasoning in its two modes (see Reasoning).
func Methods() []string { return slices.Clone(methods) }

// llms are the LLM names of R2MED's published generations: its --gar_llm
// choices plus the two Search-R1 checkpoints missing from them.
var llms = []string{
	"qwen-7b", "qwen-32b", "qwen-72b", "llama-70b", "r1-qwen-32b", "r1-llama-70b",
	"huatuo-o1-70b", "qwq-32b", "qwen3-32b", "gpt4", "o3-mini",
	"qwen-3b-ins", "qwen-7b-ins",
}

// LLMs lists the LLM names R2MED publishes generations for. Other names are
// accepted everywhere; this list is for choices and help texts.
func LLMs() []string { return slices.Clone(llms) }

// FileName is the generation file inside <task>/<method>/<llm>/.
const FileName = "query_with_hydoc.jsonl"

// maxLine is the longest line a generation file may have: the readers'
// limit (fileio.MaxLineBytes), lowered by tests. Reasoning models write up
// to 10,240 tokens per output (R2MED's max_tokens), tens of kilobytes.
var maxLine = fileio.MaxLineBytes

// checkSource rejects a method R2MED does not know, which would otherwise
// take the hyde rules without notice, and an LLM name that is not a single
// directory name.
func checkSource(method, llm string) error {
	if !slices.Contains(methods, method) {
		return fmt.Errorf("unknown GAR method %q; the methods are %s", method, strings.Join(methods, ", "))
	}
	if llm == "" || llm == "." || llm == ".." || strings.ContainsAny(llm, `/\`) {
		return fmt.Errorf("LLM name %q is not a plain directory name such as qwen-7b", llm)
	}
	return nil
}

// LoadDir reads <taskDir>/<method>/<llm>/query_with_hydoc.jsonl (or its
// .gz; both at once is an error); both query-reasoning modes read
// <taskDir>/reasoning/<llm>/.
func LoadDir(taskDir, method, llm string) ([]Generation, error) {
	if err := checkSource(method, llm); err != nil {
		return nil, err
	}
	want := filepath.Join(Dir(taskDir, method, llm), FileName)
	path, ok, err := fileio.Find(want)
	if err != nil {
		return nil, err
	}
	if !ok {
		msg := fmt.Sprintf("no %s generations: %s does not exist", method+"/"+llm, want)
		if have, err := Sources(taskDir); err == nil && len(have) > 0 {
			names := make([]string, len(have))
			for i, s := range have {
				names[i] = s.String()
			}
			msg += "; " + taskDir + " has " + strings.Join(names, ", ")
		}
		return nil, errors.New(msg)
	}
	f, err := fileio.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadGenerations(f, path, method, llm)
}

// Source names one set of generations.
type Source struct{ Method, LLM string }

func (s Source) String() string { return s.Method + "/" + s.LLM }

// Sources lists the generation sets under taskDir, sorted, so that callers
// can offer or run them all. Directories of unknown methods are left out;
// a reasoning set is listed once, as Reasoning.
func Sources(taskDir string) ([]Source, error) {
	var out []Source
	for _, m := range methods {
		if MethodDir(m) != m {
			continue
		}
		ents, err := os.ReadDir(filepath.Join(taskDir, m))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		for _, e := range ents {
			if !e.IsDir() {
				continue
			}
			if _, ok := fileio.Exists(filepath.Join(taskDir, m, e.Name(), FileName)); ok {
				out = append(out, Source{m, e.Name()})
			}
		}
	}
	slices.SortFunc(out, func(a, b Source) int { return strings.Compare(a.String(), b.String()) })
	return out, nil
}

// ReadGenerations reads a query_with_hydoc.jsonl stream: one JSON object per
// line with "id", "text" and "hy_doc" (other fields, such as R2MED's doc_id,
// are ignored). name is used in error messages, which give its line number.
// Blank lines are skipped; ids must be unique. Each Generation gets method
// and llm, which must name an R2MED method and a plain directory name.
func ReadGenerations(r io.Reader, name, method, llm string) ([]Generation, error) {
	if err := checkSource(method, llm); err != nil {
		return nil, err
	}
	lr := fileio.NewLines(r, name, "JSON-lines").Limit(maxLine)
	seen := make(map[string]int)
	var gens []Generation
	for {
		b, ok := lr.Next()
		if !ok {
			break
		}
		g, err := parseLine(b)
		if err != nil {
			return nil, lr.Errorf("%v", err)
		}
		if prev, dup := seen[g.ID]; dup {
			return nil, lr.Errorf("query id %q already has a generation on line %d; keep one per query", g.ID, prev)
		}
		seen[g.ID] = lr.Line()
		g.Method, g.LLM = method, llm
		gens = append(gens, g)
	}
	if err := lr.Err(); err != nil {
		return nil, err
	}
	if len(gens) == 0 {
		return nil, fileio.Errorf(name, 0, "no generations; the file is empty")
	}
	return gens, nil
}

func parseLine(b []byte) (Generation, error) {
	m, err := errtext.DecodeObject(b)
	if err != nil {
		return Generation{}, err
	}
	id, err := idField(m["id"])
	if err != nil {
		return Generation{}, err
	}
	text, err := stringField(m, "text", "the query text")
	if err != nil {
		return Generation{}, err
	}
	hy, err := stringField(m, "hy_doc", "the LLM output")
	if err != nil {
		return Generation{}, err
	}
	return Generation{ID: id, Text: text, HyDoc: hy}, nil
}

// idField takes a JSON number by its literal text, as the dataset readers
// do, so that "id": 3 matches the query "3".
func idField(raw json.RawMessage) (string, error) {
	if raw == nil {
		return "", errors.New(`missing "id" field; every generation needs the id of its query`)
	}
	var id string
	switch k := errtext.JSONKind(raw); k {
	case "a string":
		if err := json.Unmarshal(raw, &id); err != nil {
			return "", fmt.Errorf(`"id": %v`, err)
		}
	case "a number":
		id = string(raw)
	default:
		return "", fmt.Errorf(`"id" is %s, want a string (or a number)`, k)
	}
	if id == "" {
		return "", errors.New(`"id" is empty; every generation needs the id of its query`)
	}
	if err := fileio.CheckID(id); err != nil {
		return "", fmt.Errorf(`"id" %v`, err)
	}
	return id, nil
}

// stringField requires the field: the empty string is a legal (if useless)
// LLM output, but a missing or null field means a broken file, and filling
// in "" would retrieve with an empty query without a word.
func stringField(m map[string]json.RawMessage, key, what string) (string, error) {
	raw, ok := m[key]
	if !ok {
		return "", fmt.Errorf("missing %q field; every generation needs %s (it may be the empty string)", key, what)
	}
	if k := errtext.JSONKind(raw); k != "a string" {
		return "", fmt.Errorf("%q is %s, want a string", key, k)
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fmt.Errorf("%q: %v", key, err)
	}
	return s, nil
}
