package expand

import (
	"fmt"
	"strings"
)

// Query reasoning, as BRIGHT (Su et al., 2024, arXiv 2407.12883) evaluates
// it with its --reasoning queries: an LLM is asked to identify the
// essential problem of the query, reason step by step about what a
// relevant document would contain, and draft an answer; that written
// reasoning is then the query.
//
//   - Reasoning ("reasoning") replaces the query by the reasoning, as
//     BRIGHT does, for BM25 and dense retrievers alike (one input, no
//     averaging).
//   - ReasoningAppend ("reasoning-append") keeps the query and appends the
//     reasoning to it, separated by a space, for both retrievers.
//
// Both read and write one generation set, <root>/reasoning/<llm>/
// query_with_hydoc.jsonl in R2MED's layout ({id, text, hy_doc}: text the
// query, hy_doc the LLM's output), so one generation serves both modes.
// R2MED publishes no such sets; BRIGHT's per-LLM reasoning queries (its
// "<llm>_reason" configurations) fit the layout with hy_doc = BRIGHT's
// rewritten query and text = the original one, which is how
// hubrepo.ReadReasoning reads them from BRIGHT's repository. The LLM label's rule
// applies as for every method: a reasoning model's label (qwq-32b, …)
// stores "<think>…</think>answer" and the answer after the thinking is
// what is retrieved with (Generation.Answer); any other label retrieves
// with the whole output.
const (
	Reasoning       = "reasoning"
	ReasoningAppend = "reasoning-append"
)

// ReasoningMethod is the method of a query-reasoning mode as a pipeline
// file names it: "replace" (or "") is Reasoning, "append" ReasoningAppend.
func ReasoningMethod(mode string) (string, error) {
	switch strings.ToLower(strings.TrimSpace(mode)) {
	case "", "replace":
		return Reasoning, nil
	case "append":
		return ReasoningAppend, nil
	}
	return "", fmt.Errorf("unknown query-reasoning mode %q; want replace (the reasoning is the query, as BRIGHT) or append (the query, then the reasoning)", mode)
}

// MethodDir is the directory under a task (or --gar-dir) that holds a
// method's generations: the method's own name, except that both
// query-reasoning modes read the one "reasoning" set.
func MethodDir(method string) string {
	if method == ReasoningAppend {
		return Reasoning
	}
	return method
}

// reasoningQuery is the query text of a query-reasoning generation, for
// BM25 and dense retrievers alike; ok is false for other methods.
func (g Generation) reasoningQuery() (q string, ok bool) {
	switch g.Method {
	case Reasoning:
		return g.Answer(), true
	case ReasoningAppend:
		return g.Text + " " + g.Answer(), true
	}
	return "", false
}
