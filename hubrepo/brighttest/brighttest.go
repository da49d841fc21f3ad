// Package brighttest puts a repository laid out like BRIGHT's
// (xlangai/BRIGHT) on a fake Hub (hubtest.Server), built from the built-in
// demo task, so that the BRIGHT suite can be tested end to end without the
// network: registry → hub cache → reader → exclusions → retrieval →
// evaluation.
//
// The repository has BRIGHT's configs as parquet files, one per split
// ({config}/{split}-00000-of-00001.parquet, the Hub's naming, found
// through the card's configs by glob):
//
//   - documents: id, content;
//   - long_documents: the demo's documents joined per page (the id without
//     its "-N" part: "endo-pheo-1" and "endo-pheo-2" are parts of the page
//     "endo-pheo"), for biology only, as BRIGHT has none for LeetCode;
//   - examples: query, reasoning, id, excluded_ids, gold_ids_long,
//     gold_ids, gold_answer, in BRIGHT's column order, lists as three-level
//     LIST columns like the Hub's;
//   - gpt4_reason: the same rows with query replaced by "reasoning" that
//     quotes the query's first relevant document, so that retrieval with it
//     does visibly better than with the query.
//
// Split biology is the whole demo task. Its odd-numbered queries (q1, q3,
// …) exclude every document of their body system that is not relevant to
// them (the distractors BM25 ranks high: q1 excludes endo-addison-1 and the
// other endocrine pages but pheochromocytoma's); the others have BRIGHT's
// ["N/A"]. Split leetcode is the demo's first five queries over the
// documents of their systems, each excluding its system's distractors, so
// that fetching one task's files alone shows.
package brighttest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/r2med/r2med/demo"
	"github.com/r2med/r2med/hub/hubtest"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/tasks"
	"github.com/r2med/r2med/trec"
)

// Row types, with BRIGHT's column names.
type (
	// DocRow is a row of documents and long_documents.
	DocRow struct {
		ID      string `parquet:"id"`
		Content string `parquet:"content"`
	}
	// ExampleRow is a row of examples and of the <llm>_reason configs.
	ExampleRow struct {
		Query       string   `parquet:"query"`
		Reasoning   string   `parquet:"reasoning"`
		ID          string   `parquet:"id"`
		ExcludedIDs []string `parquet:"excluded_ids,list"`
		GoldIDsLong []string `parquet:"gold_ids_long,list"`
		GoldIDs     []string `parquet:"gold_ids,list"`
		GoldAnswer  string   `parquet:"gold_answer"`
	}
)

// Readme is the card's front matter: every config with a split per task,
// its files named by a glob as BRIGHT's card names them.
const Readme = `---
license: cc-by-4.0
configs:
  - config_name: documents
    data_files:
      - split: biology
        path: documents/biology-*
      - split: leetcode
        path: documents/leetcode-*
  - config_name: long_documents
    data_files:
      - split: biology
        path: long_documents/biology-*
  - config_name: examples
    data_files:
      - split: biology
        path: examples/biology-*
      - split: leetcode
        path: examples/leetcode-*
  - config_name: gpt4_reason
    data_files:
      - split: biology
        path: gpt4_reason/biology-*
      - split: leetcode
        path: gpt4_reason/leetcode-*
---

# BRIGHT (a test fixture: the r2med demo task in BRIGHT's layout)
`

// Split is what one split holds, as written.
type Split struct {
	Docs, LongDocs []DocRow
	Examples       []ExampleRow
	Reasoning      []ExampleRow
	// Excluded is each query's exclusions ("N/A" left out).
	Excluded ir.Exclusions
}

// Repo is what Serve added.
type Repo struct {
	Commit            string // tasks.BrightRevision
	Files             map[string][]byte
	Biology, Leetcode Split
}

// ShardSuffix ends every data file's name, as the Hub names single-shard
// splits.
const ShardSuffix = "-00000-of-00001.parquet"

// Serve adds the repository to srv at the revision the registry pins.
func Serve(t testing.TB, srv *hubtest.Server) *Repo {
	t.Helper()
	r := Build(t)
	r.Commit = srv.AddRepo(tasks.BrightRepo, r.Files, hubtest.Commit(tasks.BrightRevision))
	return r
}

// Build makes the repository's files.
func Build(t testing.TB) *Repo {
	t.Helper()
	task, err := demo.Load()
	if err != nil {
		t.Fatal(err)
	}
	r := &Repo{Files: map[string][]byte{"README.md": []byte(Readme)}}
	r.Biology = split(task, task.Queries, func(i int) bool { return i%2 == 1 })
	r.Leetcode = split(task, task.Queries[:5], func(int) bool { return false })
	// The leetcode corpus: its queries' systems only.
	systems := map[string]bool{}
	for _, q := range task.Queries[:5] {
		systems[system(trec.QueryIDs(task.Qrels[q.ID])[0])] = true
	}
	r.Leetcode.Docs = slices.DeleteFunc(r.Leetcode.Docs, func(d DocRow) bool { return !systems[system(d.ID)] })
	r.Leetcode.LongDocs = nil

	for name, s := range map[string]*Split{"biology": &r.Biology, "leetcode": &r.Leetcode} {
		r.Files["documents/"+name+ShardSuffix] = Parquet(t, s.Docs)
		r.Files["examples/"+name+ShardSuffix] = Parquet(t, s.Examples)
		r.Files["gpt4_reason/"+name+ShardSuffix] = Parquet(t, s.Reasoning)
		if s.LongDocs != nil {
			r.Files["long_documents/"+name+ShardSuffix] = Parquet(t, s.LongDocs)
		}
	}
	return r
}

// system is a demo document's body system: "endo" for "endo-pheo-1".
func system(docID string) string {
	s, _, _ := strings.Cut(docID, "-")
	return s
}

// page is the long document a demo document is part of: "endo-pheo" for
// "endo-pheo-1".
func page(docID string) string {
	if i := strings.LastIndexByte(docID, '-'); i > 0 {
		return docID[:i]
	}
	return docID
}

func split(task *ir.Task, queries []ir.Query, plain func(i int) bool) Split {
	s := Split{Excluded: ir.Exclusions{}}
	text := map[string]string{}
	var pages []string
	pageText := map[string][]string{}
	for _, d := range task.Corpus {
		s.Docs = append(s.Docs, DocRow{ID: d.ID, Content: d.Text})
		text[d.ID] = d.Text
		p := page(d.ID)
		if pageText[p] == nil {
			pages = append(pages, p)
		}
		pageText[p] = append(pageText[p], d.Text)
	}
	for _, p := range pages {
		s.LongDocs = append(s.LongDocs, DocRow{ID: p, Content: strings.Join(pageText[p], "\n\n")})
	}
	for i, q := range queries {
		gold := trec.QueryIDs(task.Qrels[q.ID])
		var long []string
		for _, g := range gold {
			if p := page(g); !slices.Contains(long, p) {
				long = append(long, p)
			}
		}
		excluded := []string{"N/A"}
		if !plain(i) {
			excluded = nil
			for _, d := range task.Corpus {
				if system(d.ID) == system(gold[0]) && task.Qrels[q.ID][d.ID] == 0 {
					excluded = append(excluded, d.ID)
					s.Excluded.Add(q.ID, d.ID)
				}
			}
		}
		var answer string
		json.Unmarshal(q.Extra["answer"], &answer)
		ex := ExampleRow{Query: q.Text, Reasoning: "Gold reasoning for " + q.ID + ".", ID: q.ID,
			ExcludedIDs: excluded, GoldIDsLong: long, GoldIDs: gold, GoldAnswer: answer}
		s.Examples = append(s.Examples, ex)
		ex.Query = fmt.Sprintf("1. The essential problem: %s 2. A relevant document would say: %s", q.Text, text[gold[0]])
		s.Reasoning = append(s.Reasoning, ex)
	}
	return s
}

// Parquet writes rows as a parquet file with the writer the fixture uses.
func Parquet[T any](t testing.TB, rows []T) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[T](&buf, parquet.Compression(&parquet.Snappy))
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
