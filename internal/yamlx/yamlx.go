// Package yamlx decodes YAML settings files strictly and reports what is
// wrong in the file's own words: the key, where it sits, its line and what
// it should be — never a Go type name. An unknown key is an error (a
// misspelt one would otherwise fall back to a default silently), with the
// closest known key suggested.
package yamlx

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/r2med/r2med/internal/errtext"
)

// Error is a problem at a line of a YAML document; Line is 0 when the
// value came from elsewhere (a command-line flag laid over the file).
type Error struct {
	Line int
	Msg  string
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("line %d: %s", e.Line, e.Msg)
	}
	return e.Msg
}

// Errorf is an Error at the line of n (nil: no line).
func Errorf(n *yaml.Node, format string, args ...any) error {
	e := &Error{Msg: fmt.Sprintf(format, args...)}
	if n != nil {
		e.Line = n.Line
	}
	return e
}

var syntaxLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// Parse reads a YAML document and returns its top-level node; an empty
// document gives nil and no error. Syntax errors read "line N: …".
func Parse(data []byte) (*yaml.Node, error) {
	// yaml.v3 says "invalid leading UTF-8 octet" without a line; the
	// readers' rule says where.
	var te *errtext.TextError
	if errors.As(errtext.CheckUTF8(data, "line"), &te) {
		return nil, &Error{Line: te.Line, Msg: te.Error()}
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		msg := err.Error()
		if m := syntaxLine.FindStringSubmatch(msg); m != nil {
			line, _ := strconv.Atoi(m[1])
			return nil, &Error{Line: line, Msg: m[2]}
		}
		return nil, errors.New("YAML syntax: " + strings.TrimPrefix(msg, "yaml: "))
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, nil
	}
	return doc.Content[0], nil
}

// Decode checks n against the yaml-tagged fields of the struct dst points
// to, then decodes it. where names n in messages: "unknown key "schem" in
// bm25". Fields of type yaml.Node are left for the caller to check.
func Decode(n *yaml.Node, dst any, where string) error {
	if n == nil {
		return nil
	}
	if err := check(n, reflect.TypeOf(dst).Elem(), where, where); err != nil {
		return err
	}
	if err := n.Decode(dst); err != nil {
		var te *yaml.TypeError
		if errors.As(err, &te) && len(te.Errors) > 0 {
			msg := te.Errors[0]
			if m := syntaxLine.FindStringSubmatch("yaml: " + msg); m != nil {
				line, _ := strconv.Atoi(m[1])
				return &Error{Line: line, Msg: "in " + where + ": " + m[2]}
			}
			return errors.New(msg)
		}
		return Errorf(n, "in %s: %s", where, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	return nil
}

var (
	nodeType    = reflect.TypeOf(yaml.Node{})
	stringsType = reflect.TypeOf(Strings{})
)

// Strings is a setting that takes one text or a list of them: `base_url:
// http://a/v1` and `base_url: [http://a/v1, http://b/v1]` both decode,
// the first as a list of one.
type Strings []string

// UnmarshalYAML reads one scalar or a list of scalars.
func (s *Strings) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		*s = Strings{n.Value}
		return nil
	}
	var list []string
	if err := n.Decode(&list); err != nil {
		return err
	}
	*s = list
	return nil
}

// Seq is a list node of texts.
func Seq(values []string) *yaml.Node {
	n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
	for _, v := range values {
		n.Content = append(n.Content, Text(v))
	}
	return n
}

// check walks n along t, reporting the first key t does not know and the
// first value of the wrong kind. what names n in messages ("k1 in bm25").
func check(n *yaml.Node, t reflect.Type, what, where string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if t == nodeType || t.Kind() == reflect.Interface || isNull(n) {
		return nil
	}
	if t == stringsType && n.Kind != yaml.SequenceNode {
		if n.Kind != yaml.ScalarNode {
			return Errorf(n, "%s must be text or a list of texts, not %s", what, Describe(n))
		}
		return nil // one value for a list of one
	}
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			return Errorf(n, "%s must be a mapping of settings (key: value), not %s", what, Describe(n))
		}
		fields := fieldsOf(t)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			f, ok := fields[k.Value]
			if !ok {
				return UnknownKey(k, where, keys(fields))
			}
			if err := check(v, f, k.Value+" in "+where, child(where, k.Value)); err != nil {
				return err
			}
		}
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			return Errorf(n, "%s must be a mapping (key: value), not %s", what, Describe(n))
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i].Value
			if err := check(n.Content[i+1], t.Elem(), k+" in "+where, child(where, k)); err != nil {
				return err
			}
		}
	case reflect.Slice, reflect.Array:
		if n.Kind != yaml.SequenceNode {
			return Errorf(n, "%s must be a list ([a, b] or one \"- item\" per line), not %s", what, Describe(n))
		}
		for i, e := range n.Content {
			if err := check(e, t.Elem(), fmt.Sprintf("item %d of %s", i+1, what), fmt.Sprintf("%s[%d]", where, i)); err != nil {
				return err
			}
		}
	case reflect.String:
		if n.Kind != yaml.ScalarNode {
			return Errorf(n, "%s must be text, not %s", what, Describe(n))
		}
	case reflect.Bool:
		if n.Kind != yaml.ScalarNode || n.Tag != "!!bool" {
			return Errorf(n, "%s must be true or false, not %s", what, Describe(n))
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if n.Kind != yaml.ScalarNode || n.Tag != "!!int" {
			return Errorf(n, "%s must be a whole number, not %s", what, Describe(n))
		}
	case reflect.Float32, reflect.Float64:
		if n.Kind != yaml.ScalarNode || (n.Tag != "!!int" && n.Tag != "!!float") {
			return Errorf(n, "%s must be a number, not %s", what, Describe(n))
		}
	}
	return nil
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

func child(where, key string) string {
	if where == "" || strings.HasPrefix(where, "the ") {
		return key
	}
	return where + "." + key
}

// fieldsOf maps a struct's YAML keys to their types, inline fields
// flattened.
func fieldsOf(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("yaml")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" {
			continue
		}
		if strings.Contains(opts, "inline") {
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			for k, v := range fieldsOf(ft) {
				out[k] = v
			}
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		out[name] = f.Type
	}
	return out
}

func keys(m map[string]reflect.Type) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// UnknownKey is the error for a key k that where does not have, with the
// closest of known suggested, else all of them listed.
func UnknownKey(k *yaml.Node, where string, known []string) error {
	if s := Suggest(k.Value, known); s != "" {
		return Errorf(k, "unknown key %q in %s (did you mean %q?)", k.Value, where, s)
	}
	return Errorf(k, "unknown key %q in %s (known keys: %s)", k.Value, where, strings.Join(known, ", "))
}

// Describe names a node's value for messages: "the text "abc"", "a list",
// "a mapping".
func Describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!null":
			return "nothing"
		case "!!bool", "!!int", "!!float":
			return n.Value
		}
		return strconv.Quote(n.Value)
	}
	return "an alias"
}

// Suggest returns the candidate closest to s by edit distance when it is
// close enough to be a likely misspelling, else "".
func Suggest(s string, candidates []string) string {
	best, bestD := "", 0
	for _, c := range candidates {
		d := distance(strings.ToLower(s), strings.ToLower(c))
		if best == "" || d < bestD {
			best, bestD = c, d
		}
	}
	if best == "" || bestD > max(1, len(s)/3) {
		return ""
	}
	return best
}

// distance is the optimal-string-alignment distance between a and b:
// insertions, deletions, substitutions and swaps of neighbours each count
// one (by byte; keys are ASCII).
func distance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

// Set puts key: value into the mapping m (replacing the key's value when m
// has it), making m a mapping when it is empty or null.
func Set(m *yaml.Node, key string, value *yaml.Node) {
	if m.Kind != yaml.MappingNode {
		*m = yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content[i+1] = value
			return
		}
	}
	m.Content = append(m.Content, Scalar(key), value)
}

// Get returns the value of key in the mapping m, or nil.
func Get(m *yaml.Node, key string) *yaml.Node {
	_, v := Lookup(m, key)
	return v
}

// Lookup returns the key node and the value node of key in the mapping m,
// or nils.
func Lookup(m *yaml.Node, key string) (k, v *yaml.Node) {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil, nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i], m.Content[i+1]
		}
	}
	return nil, nil
}

// Scalar is a plain scalar node holding s, tagged as YAML would resolve
// it (a number, a boolean, or text).
func Scalar(s string) *yaml.Node {
	n := &yaml.Node{Kind: yaml.ScalarNode, Value: s}
	var v any
	if err := yaml.Unmarshal([]byte(s), &v); err == nil {
		switch v.(type) {
		case int, int64, uint64:
			n.Tag = "!!int"
		case float64:
			n.Tag = "!!float"
		case bool:
			n.Tag = "!!bool"
		}
	}
	if n.Tag == "" {
		n.Tag = "!!str"
	}
	return n
}

// Text is a scalar node that is text whatever it looks like (a prefix
// "1", a model named "yes").
func Text(s string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}
}

// Mapping is an empty mapping node.
func Mapping() *yaml.Node {
	return &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
}
