package expand

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/r2med/r2med/internal/errtext"
	"github.com/r2med/r2med/ir"
)

// Answer is the part of the output R2MED retrieves with: the extracted
// answer for a reasoning LLM, the whole output otherwise.
func (g Generation) Answer() string { return Split(g.LLM, g.HyDoc) }

// BM25Text is the BM25 query string R2MED builds from g (for query
// reasoning, which R2MED lacks, see Reasoning).
func (g Generation) BM25Text() string {
	if q, ok := g.reasoningQuery(); ok {
		return q
	}
	if IsReasoningLLM(g.LLM) {
		return g.Answer()
	}
	switch g.Method {
	case Query2Doc:
		// Python's text*2: the query twice with nothing between.
		return g.Text + g.Text + " " + g.HyDoc
	case LameR:
		return g.Text + " " + g.HyDoc
	}
	return g.HyDoc
}

// DenseInput is what a dense retriever embeds for one query: Query alone, or
// Query and Gen with their embeddings averaged ((e(Query)+e(Gen))/2, not
// renormalized; R2MED scores by cosine, which normalizes later). Query
// takes the retriever's query instruction; whether Gen takes it too is the
// retriever's rule (in R2MED only Instructor, GritLM and NV-Embed).
type DenseInput struct {
	Query   string
	Gen     string // empty and unused unless Average
	Average bool
}

// Texts lists the inputs to embed: one, or the two to average.
func (d DenseInput) Texts() []string {
	if d.Average {
		return []string{d.Query, d.Gen}
	}
	return []string{d.Query}
}

// Dense is the dense-retrieval query input R2MED builds from g (query
// reasoning: one input, see Reasoning).
func (g Generation) Dense() DenseInput {
	if q, ok := g.reasoningQuery(); ok {
		return DenseInput{Query: q}
	}
	switch {
	case IsReasoningLLM(g.LLM):
		return DenseInput{Query: g.Text, Gen: g.Answer(), Average: true}
	case g.Method == Query2Doc:
		return DenseInput{Query: g.Text + "[SEP]" + g.HyDoc}
	}
	return DenseInput{Query: g.Text, Gen: g.HyDoc, Average: true}
}

// maxListed bounds the ids quoted in one error: a generation run that
// stopped early can miss hundreds, and the count says the rest.
const maxListed = 10

// Align returns, for each query in order, its generation. Every query must
// have exactly one and every generation must belong to a query: R2MED
// retrieves the ids of the generation file, so a gap would quietly shrink the
// task and a stray id means the file is from another task.
func Align(queries []ir.Query, gens []Generation) ([]Generation, error) {
	src := label(gens)
	byID := make(map[string]int, len(gens))
	for i, g := range gens {
		if !slices.Contains(methods, g.Method) {
			return nil, fmt.Errorf("%s: query %q: unknown GAR method %q; the methods are %s", src, g.ID, g.Method, strings.Join(methods, ", "))
		}
		if _, dup := byID[g.ID]; dup {
			return nil, fmt.Errorf("%s: query %q has more than one generation", src, g.ID)
		}
		byID[g.ID] = i
	}
	known := make(map[string]bool, len(queries))
	for _, q := range queries {
		known[q.ID] = true
	}
	var stray []string
	for _, g := range gens {
		if !known[g.ID] {
			stray = append(stray, g.ID)
		}
	}
	if len(stray) > 0 {
		return nil, fmt.Errorf("%s: %d %s for queries the task does not have: %s; the generations must come from the same task",
			src, len(stray), errtext.Plural(len(stray), "generation is", "generations are"), errtext.QuoteList(stray, maxListed))
	}
	out := make([]Generation, len(queries))
	var missing []string
	for i, q := range queries {
		j, ok := byID[q.ID]
		if !ok {
			missing = append(missing, q.ID)
			continue
		}
		out[i] = gens[j]
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%s: no generation for %d of %d queries: %s; generate them or evaluate without GAR",
			src, len(missing), len(queries), errtext.QuoteList(missing, maxListed))
	}
	// R2MED's ids are "0", "1", … in every task, so ids alone can pair a
	// query with another task's (or data revision's) generation. R2MED
	// copies each query's text into its generation and retrieves with
	// that copy, so the copies tell: a set made for other queries
	// differs from them nearly everywhere, and is refused when most of
	// the copies differ. A few that differ (queries reworded by a later
	// revision of the data) are R2MED's own case: its published numbers
	// were made with the copies, and so are ours (BM25Text).
	var other []string
	first, compared := -1, 0
	for i, q := range queries {
		if out[i].Text == "" {
			continue // a set that copies no text has nothing to tell
		}
		compared++
		if !sameText(q.Text, out[i].Text) {
			other = append(other, q.ID)
			if first < 0 {
				first = i
			}
		}
	}
	if 2*len(other) > compared {
		return nil, fmt.Errorf("%s: %d of %d generations hold another text than their query's: %s (query %q is %q, its generation's text %q); the generations are of another task or data revision",
			src, len(other), len(queries), errtext.QuoteList(other, maxListed), queries[first].ID, clip(queries[first].Text), clip(out[first].Text))
	}
	return out, nil
}

// sameText compares query texts up to white space (a loader may strip or
// rewrap lines).
func sameText(a, b string) bool {
	return strings.Join(strings.Fields(a), " ") == strings.Join(strings.Fields(b), " ")
}

// clip shortens a text quoted in a message to its first 60 characters.
func clip(s string) string {
	if r := []rune(s); len(r) > 60 {
		return string(r[:60]) + "…"
	}
	return s
}

// Apply returns the queries with Text replaced by their BM25 query strings;
// ids, order and Extra are kept (Extra is copied, not shared).
func Apply(queries []ir.Query, gens []Generation) ([]ir.Query, error) {
	aligned, err := Align(queries, gens)
	if err != nil {
		return nil, err
	}
	out := make([]ir.Query, len(queries))
	for i, q := range queries {
		out[i] = ir.Query{ID: q.ID, Text: aligned[i].BM25Text(), Extra: maps.Clone(q.Extra)}
	}
	return out, nil
}

// label names a generation set in messages: "hyde/qwen-7b generations" when
// they share a source, "generations" otherwise.
func label(gens []Generation) string {
	if len(gens) == 0 {
		return "generations"
	}
	s := Source{gens[0].Method, gens[0].LLM}
	for _, g := range gens[1:] {
		if (Source{g.Method, g.LLM}) != s {
			return "generations"
		}
	}
	return s.String() + " generations"
}
