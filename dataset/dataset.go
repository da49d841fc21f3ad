// Package dataset is the retrieval data model (documents, queries, graded
// judgments) and the readers for the directory layouts tasks ship in: R2MED's
// own (corpus.jsonl, query.jsonl, qrels.jsonl|qrels.txt) and BEIR's
// (corpus.jsonl, queries.jsonl, qrels/<split>.tsv).
package dataset

import (
	"encoding/json"

	"github.com/r2med/r2med/trec"
)

// Doc is one corpus document. For BEIR corpora Text already holds
// title + " " + text when the title is non-empty.
type Doc struct {
	ID   string
	Text string
}

// Query is one query. Extra keeps every field besides id and text verbatim
// (R2MED's body_system, answer, doc_id…) so reports can break results down by
// them without the reader knowing them.
type Query struct {
	ID    string
	Text  string
	Extra map[string]json.RawMessage
}

// Layout names a directory layout.
type Layout string

const (
	LayoutR2MED Layout = "r2med"
	LayoutBEIR  Layout = "beir"
)

// layoutName is the layout's name as its authors write it, for messages.
func layoutName(l Layout) string {
	switch l {
	case LayoutR2MED:
		return "R2MED"
	case LayoutBEIR:
		return "BEIR"
	}
	return string(l)
}

// Task is one loaded retrieval task.
type Task struct {
	Name    string // directory base name unless set otherwise
	Dir     string
	Layout  Layout
	Split   string // BEIR split whose qrels were read; empty for R2MED
	Corpus  []Doc
	Queries []Query // the queries to evaluate, in file order
	Qrels   trec.Qrels
	Files   []string // every file read, for manifests and checksums

	// UnjudgedQueries counts query-file entries left out of Queries for
	// having no judgment (in BEIR, mostly the other splits' queries).
	UnjudgedQueries int
}
