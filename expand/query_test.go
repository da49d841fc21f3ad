package expand

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/r2med/r2med/ir"
)

func TestBM25TextAndDense(t *testing.T) {
	const (
		text  = "Why do I sneeze?"
		plain = "Sneezing clears the nose."
		think = "<think>\nirritants…\n</think>\n\nSneezing clears the nose.\n"
		ans   = "Sneezing clears the nose."
	)
	avg := func(a, b string) DenseInput { return DenseInput{Query: a, Gen: b, Average: true} }
	cases := []struct {
		method, llm, hy string
		bm25            string
		dense           DenseInput
	}{
		{HyDE, "qwen-7b", plain, plain, avg(text, plain)},
		{Query2Doc, "qwen-7b", plain, text + text + " " + plain, DenseInput{Query: text + "[SEP]" + plain}},
		{LameR, "gpt4", plain, text + " " + plain, avg(text, plain)},
		{SearchO1, "llama-70b", plain, plain, avg(text, plain)},
		{SearchR1, "o3-mini", plain, plain, avg(text, plain)},
		// A non-reasoning LLM keeps its whole output, think block and all.
		{HyDE, "qwen-72b", think, think, avg(text, think)},
		{LameR, "qwen3-14b", think, text + " " + think, avg(text, think)},

		// Reasoning LLMs: the query is dropped for BM25 and averaged for
		// dense retrieval, whatever the method.
		{HyDE, "r1-qwen-32b", think, ans, avg(text, ans)},
		{Query2Doc, "qwq-32b", think, ans, avg(text, ans)},
		{LameR, "qwen3-32b", think, ans, avg(text, ans)},
		{HyDE, "huatuo-o1-70b", "## Thinking\nx\n## Final Response\n" + ans, ans, avg(text, ans)},
		{SearchO1, "qwq-32b", think, ans, avg(text, ans)},
		{SearchR1, "qwen-7b-ins", "<think>q</think><search>x</search><answer> " + ans + " </answer>", ans, avg(text, ans)},
		{SearchR1, "qwen-3b-ins", "no answer tag " + ans, "no answer tag " + ans, avg(text, "no answer tag "+ans)},
		// Missing markers: the raw output, still without the query.
		{Query2Doc, "r1-llama-70b", "cut off <think> mid", "cut off <think> mid", avg(text, "cut off <think> mid")},
	}
	for _, c := range cases {
		g := Generation{ID: "7", Text: text, HyDoc: c.hy, Method: c.method, LLM: c.llm}
		if got := g.BM25Text(); got != c.bm25 {
			t.Errorf("%s/%s BM25Text = %q, want %q", c.method, c.llm, got, c.bm25)
		}
		if got := g.Dense(); got != c.dense {
			t.Errorf("%s/%s Dense = %+v, want %+v", c.method, c.llm, got, c.dense)
		}
	}
}

func TestDenseTexts(t *testing.T) {
	if got := (DenseInput{Query: "q[SEP]d"}).Texts(); !reflect.DeepEqual(got, []string{"q[SEP]d"}) {
		t.Errorf("one input: %q", got)
	}
	if got := (DenseInput{Query: "q", Gen: "", Average: true}).Texts(); !reflect.DeepEqual(got, []string{"q", ""}) {
		t.Errorf("average with an empty generation: %q", got)
	}
}

func gen(id, method, llm string) Generation {
	return Generation{ID: id, Text: "q" + id, HyDoc: "doc " + id, Method: method, LLM: llm}
}

func queries(ids ...string) []ir.Query {
	qs := make([]ir.Query, len(ids))
	for i, id := range ids {
		qs[i] = ir.Query{ID: id, Text: "q" + id}
	}
	return qs
}

func TestApply(t *testing.T) {
	qs := queries("0", "1", "2")
	qs[1].Extra = map[string]json.RawMessage{"body_system": json.RawMessage(`"Respiratory"`)}
	// Generations in another order than the queries.
	gens := []Generation{gen("2", LameR, "qwen-7b"), gen("0", LameR, "qwen-7b"), gen("1", LameR, "qwen-7b")}
	got, err := Apply(qs, gens)
	if err != nil {
		t.Fatal(err)
	}
	want := []ir.Query{
		{ID: "0", Text: "q0 doc 0"},
		{ID: "1", Text: "q1 doc 1", Extra: map[string]json.RawMessage{"body_system": json.RawMessage(`"Respiratory"`)}},
		{ID: "2", Text: "q2 doc 2"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Apply = %+v\nwant %+v", got, want)
	}
	got[1].Extra["x"] = nil
	if _, shared := qs[1].Extra["x"]; shared {
		t.Error("Apply's queries share Extra with its input")
	}
	if qs[0].Text != "q0" {
		t.Error("Apply changed its input")
	}
}

func TestAlignErrors(t *testing.T) {
	many := make([]string, 13)
	for i := range many {
		many[i] = string(rune('a' + i))
	}
	cases := []struct {
		name string
		qs   []ir.Query
		gens []Generation
		want string
	}{
		{"missing", queries("0", "1", "2", "3"), []Generation{gen("0", HyDE, "qwen-7b"), gen("2", HyDE, "qwen-7b")},
			`hyde/qwen-7b generations: no generation for 2 of 4 queries: "1", "3"; generate them or evaluate without GAR`},
		{"missing, listed up to ten", queries(many...), nil,
			`generations: no generation for 13 of 13 queries: "a", "b", "c", "d", "e", "f", "g", "h", "i", "j" and 3 more; generate them or evaluate without GAR`},
		{"unknown query", queries("0"), []Generation{gen("0", HyDE, "gpt4"), gen("9", HyDE, "gpt4")},
			`hyde/gpt4 generations: 1 generation is for queries the task does not have: "9"; the generations must come from the same task`},
		{"unknown reported before missing", queries("0", "1"), []Generation{gen("8", LameR, "gpt4"), gen("9", LameR, "gpt4")},
			`lamer/gpt4 generations: 2 generations are for queries the task does not have: "8", "9"; the generations must come from the same task`},
		{"duplicate", queries("0"), []Generation{gen("0", HyDE, "gpt4"), gen("0", HyDE, "gpt4")},
			`hyde/gpt4 generations: query "0" has more than one generation`},
		{"mixed sources, unknown method", queries("0", "1"), []Generation{gen("0", HyDE, "gpt4"), gen("1", "rewrite", "gpt4")},
			`generations: query "1": unknown GAR method "rewrite"; the methods are hyde, query2doc, lamer, search-o1, search-r1, reasoning, reasoning-append`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Align(c.qs, c.gens)
			if err == nil || err.Error() != c.want {
				t.Errorf("error %v\nwant      %s", err, c.want)
			}
			if _, err2 := Apply(c.qs, c.gens); err2 == nil || err2.Error() != c.want {
				t.Errorf("Apply error %v", err2)
			}
		})
	}
}

// TestAlignChecksQueryTexts: R2MED's query ids are "0", "1", … in every
// task, so ids alone match a generation file to another task's or data
// revision's queries. R2MED's generate_hydoc copies each query's text into
// the file (query_with_hydoc.jsonl "text"), and its BM25 and dense runs
// query with that text: a generation whose text is not its query's is of
// another task or data revision, and is refused, where it was retrieved
// with under the wrong query. White space may differ (a loader that strips
// lines).
func TestAlignChecksQueryTexts(t *testing.T) {
	qs := queries("0", "1", "2")
	gens := []Generation{gen("0", HyDE, "gpt4"), gen("1", HyDE, "gpt4"), gen("2", HyDE, "gpt4")}
	gens[0].Text = "  q0\n"
	if _, err := Align(qs, gens); err != nil {
		t.Fatalf("white space only: %v", err)
	}
	gens[1].Text, gens[2].Text = "q2", "q1"
	_, err := Align(qs, gens)
	want := `hyde/gpt4 generations: 2 of 3 generations hold another text than their query's: "1", "2" (query "1" is "q1", its generation's text "q2"); the generations are of another task or data revision`
	if err == nil || err.Error() != want {
		t.Errorf("error %v\nwant  %s", err, want)
	}
	// One query reworded (a later data revision) is R2MED's own case:
	// the set is taken, and retrieves with its copy, as R2MED's did.
	gens[1].Text, gens[2].Text = "q1", "q2 reworded"
	got, err := Align(qs, gens)
	if err != nil || got[2].Text != "q2 reworded" {
		t.Errorf("one reworded query of three: %v, %+v", err, got)
	}
	// A set that copies no texts is paired by id alone.
	for i := range gens {
		gens[i].Text = ""
	}
	if _, err := Align(qs, gens); err != nil {
		t.Errorf("generations without texts: %v", err)
	}
}
