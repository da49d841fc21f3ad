package leaderboard

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
)

// SettingsText is the settings of one of our systems (its manifest's,
// Config) as one line people read and tools split: key=value pairs in
// the manifest's words, separated by spaces; nested settings by dotted
// paths ("rerank.kind=insertrank", "retrievers.2.retriever=run:out/bm25/run.trec",
// list entries numbered from 1), lists of plain values joined by commas,
// a value holding spaces, "=" or quotes quoted. The retriever comes
// first, then the stages in the order data flows, then the rest by name.
// It is "" for systems without settings (published and external ones).
//
// A system's name stays short (sysname); this is the full text, for
// hovers and for the settings column and field of exports.
func (s *System) SettingsText() string {
	if len(s.Config) == 0 {
		return ""
	}
	var pairs []string
	flatten(&pairs, "", s.Config)
	return strings.Join(pairs, " ")
}

// The settings that say what a system is come first (keyHead), the
// stages after the retriever's own knobs (keyTail), in the order data
// flows; the rest by name between them.
var (
	keyHead = []string{"name", "retriever", "kind", "method", "model", "retrievers"}
	keyTail = []string{"fusion", "gar_method", "gar_llm", "generate", "rerank", "top_k"}
)

func keyRank(k string) int {
	if i := slices.Index(keyHead, k); i >= 0 {
		return i
	}
	if i := slices.Index(keyTail, k); i >= 0 {
		return len(keyHead) + 1 + i
	}
	return len(keyHead)
}

func flatten(pairs *[]string, prefix string, v any) {
	switch v := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.SortFunc(keys, func(a, b string) int {
			if ra, rb := keyRank(a), keyRank(b); ra != rb {
				return ra - rb
			}
			return strings.Compare(a, b)
		})
		for _, k := range keys {
			flatten(pairs, prefix+k+".", v[k])
		}
	case []any:
		if !slices.ContainsFunc(v, nested) {
			vals := make([]string, len(v))
			for i, x := range v {
				vals[i] = scalar(x)
			}
			*pairs = append(*pairs, strings.TrimSuffix(prefix, ".")+"="+quote(strings.Join(vals, ",")))
			return
		}
		for i, x := range v {
			flatten(pairs, prefix+strconv.Itoa(i+1)+".", x)
		}
	case []string:
		*pairs = append(*pairs, strings.TrimSuffix(prefix, ".")+"="+quote(strings.Join(v, ",")))
	case []map[string]any:
		for i, x := range v {
			flatten(pairs, prefix+strconv.Itoa(i+1)+".", x)
		}
	default:
		*pairs = append(*pairs, strings.TrimSuffix(prefix, ".")+"="+quote(scalar(v)))
	}
}

func nested(v any) bool {
	switch v.(type) {
	case map[string]any, []any:
		return true
	}
	return false
}

// scalar writes a plain value as settings are written: numbers in their
// shortest form, strings as they are.
func scalar(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	case nil:
		return "none"
	}
	data, err := json.Marshal(v)
	if err != nil {
		return "?"
	}
	return string(data)
}

func quote(s string) string {
	if s == "" || strings.ContainsAny(s, " \t\n=\"'") {
		return strconv.Quote(s)
	}
	return s
}

// About is the system as a hover says it: its name, where its numbers
// come from and, for ours, its full settings (SettingsText): "bm25 #3f2a —
// ours: retriever=bm25 analyzer=lucene-english …"; "nv — published: R2MED's
// released result files; also printed in Chen et al. … as NV-Embed-v2";
// "RaDeR-gte-Qwen2-7B — external: Chen et al. …; evaluated by …".
func (s *System) About() string {
	var b strings.Builder
	b.WriteString(s.Name + " — " + string(s.Origin()))
	switch {
	case s.External != nil:
		b.WriteString(": " + s.External.Source())
	case s.Published:
		b.WriteString(": R2MED's released result files")
	default:
		if t := s.SettingsText(); t != "" {
			b.WriteString(": " + t)
		}
	}
	for _, e := range s.Reprinted {
		b.WriteString("; also printed in " + e.Source())
	}
	return b.String()
}

// Source is where the external figures come from, as one line: the
// reference, the name the source prints the system under when another
// row shows it (Printed), who evaluated it and the note.
func (e *External) Source() string {
	s := e.Reference
	if e.Printed != "" {
		s += " as " + e.Printed
	}
	if e.EvaluatedBy != "" {
		s += "; evaluated by " + e.EvaluatedBy
	}
	if e.Note != "" {
		s += "; " + e.Note
	}
	return s
}
