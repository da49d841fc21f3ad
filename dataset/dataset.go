// Package dataset is the retrieval data model (documents, queries, graded
// judgments) and the readers for the directory layouts tasks ship in: R2MED's
// own (corpus.jsonl, query.jsonl, qrels.jsonl|qrels.txt) and BEIR's
// (corpus.jsonl, queries.jsonl, qrels/<split>.tsv), and for Hugging Face
// dataset repositories downloaded to a directory (LoadHub): R2MED's own and
// HAKARI-Bench's Nano sets, parquet or JSON, found through the configs of
// the repository's card (ReadHubConfigs), with their published candidate
// lists (LoadHubCandidates) and GAR generations (ReadHubGenerations).
//
// Stats profiles a task; with ScoreCandidates it gives the numbers of
// HAKARI-Bench's task cards, computed as the cards' script computes them.
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
	// Hugging Face dataset repositories (LoadHub).
	LayoutR2MEDHub Layout = "r2med-hub"
	LayoutNanoHub  Layout = "nano-hub"
)

// layoutName is the layout's name as its authors write it, for messages.
func layoutName(l Layout) string {
	switch l {
	case LayoutR2MED:
		return "R2MED"
	case LayoutBEIR:
		return "BEIR"
	case LayoutR2MEDHub:
		return "R2MED hub"
	case LayoutNanoHub:
		return "Nano hub"
	}
	return string(l)
}

// Task is one loaded retrieval task.
type Task struct {
	Name    string // directory base name unless set otherwise
	Dir     string
	Layout  Layout
	Split   string // BEIR split whose qrels were read, or a Nano set's split; empty for R2MED
	Corpus  []Doc
	Queries []Query // the queries to evaluate, in file order
	Qrels   trec.Qrels
	Files   []string // every file read, for manifests and checksums

	// UnjudgedQueries counts query-file entries left out of Queries for
	// having no judgment (in BEIR, mostly the other splits' queries).
	UnjudgedQueries int

	// EmptyDocs and EmptyQueries count rows left out for an empty text,
	// which HAKARI-Bench's loader leaves out of its Nano sets (LoadHub,
	// Nano repositories only). Judgments of such a document stay in Qrels,
	// relevant but unretrievable, as there; those of such a query are
	// dropped with it.
	EmptyDocs, EmptyQueries int
}
