package audit

import (
	"fmt"
	"slices"
	"strings"

	"github.com/r2med/r2med/ir"
)

// Kind says what a benchmark text is.
type Kind string

// The kinds of benchmark text, as benchmark_kind writes them.
const (
	QueryKind    Kind = "query"
	DocumentKind Kind = "document"
)

// Scope says which documents of a task a leakage audit checks.
type Scope string

// The document scopes.
const (
	// Positives are the documents judged relevant (grade > 0) to an
	// evaluated query: a model trained on them has seen the answers.
	Positives Scope = "positives"
	// AllDocs is the whole corpus.
	AllDocs Scope = "all"
	// NoDocs checks queries only.
	NoDocs Scope = "none"
)

// ParseScope reads a scope name.
func ParseScope(s string) (Scope, error) {
	switch Scope(strings.ToLower(s)) {
	case "", Positives:
		return Positives, nil
	case AllDocs:
		return AllDocs, nil
	case NoDocs:
		return NoDocs, nil
	}
	return "", fmt.Errorf("unknown document scope %q; want positives, all or none", s)
}

// item is one benchmark text checked for leakage.
type item struct {
	task int
	kind Kind
	id   string
	text string
}

// benchmarkItems lists the texts a leakage audit checks, task by task:
// the evaluated queries in file order, then the documents in scope in
// corpus order. Judged documents the corpus lacks are counted in missing.
func benchmarkItems(tasks []*ir.Task, scope Scope) (items []item, missing []int) {
	missing = make([]int, len(tasks))
	for ti, t := range tasks {
		for _, q := range t.Queries {
			items = append(items, item{task: ti, kind: QueryKind, id: q.ID, text: q.Text})
		}
		if scope == NoDocs {
			continue
		}
		pos := positives(t)
		inCorpus := make(map[string]bool, len(pos))
		for _, d := range t.Corpus {
			if scope == AllDocs || pos[d.ID] {
				items = append(items, item{task: ti, kind: DocumentKind, id: d.ID, text: d.Text})
				inCorpus[d.ID] = true
			}
		}
		for id := range pos {
			if !inCorpus[id] {
				missing[ti]++
			}
		}
	}
	return items, missing
}

// positives are the documents judged relevant (grade > 0) to an evaluated
// query of t.
func positives(t *ir.Task) map[string]bool {
	out := make(map[string]bool)
	for _, q := range t.Queries {
		for d, g := range t.Qrels[q.ID] {
			if g > 0 {
				out[d] = true
			}
		}
	}
	return out
}

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// snippet cuts s to at most n runes, marking a cut with an ellipsis.
func snippet(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	i := 0
	for j := range s {
		if i == n {
			return s[:j] + "…"
		}
		i++
	}
	return s
}
