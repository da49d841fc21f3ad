// Package ir is the data model every r2med package shares: documents,
// queries, graded judgments (qrels), ranked runs and the loaded task that
// holds them. It imports nothing of ours, so any layer may use it; reading
// and writing these types lives with the formats (dataset for the
// directory layouts, trec for the TREC text formats).
package ir

import "encoding/json"

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

// Qrels maps query id → document id → graded relevance. Grades may be zero or
// negative (judged non-relevant); only grades at or above the evaluator's
// relevance level count as relevant.
type Qrels map[string]map[string]int

// Add records one judgment; it reports false when the pair was already judged.
func (q Qrels) Add(qid, docid string, grade int) bool {
	m := q[qid]
	if m == nil {
		m = make(map[string]int)
		q[qid] = m
	}
	if _, dup := m[docid]; dup {
		return false
	}
	m[docid] = grade
	return true
}

// Len is the number of judgments.
func (q Qrels) Len() int {
	n := 0
	for _, m := range q {
		n += len(m)
	}
	return n
}

// Hit is one retrieved document.
type Hit struct {
	DocID string
	Score float64
}

// Run maps query id → hits in the order the system ranked them (best first).
// trec_eval re-sorts by score (float32, ties by doc id descending) and
// ignores the list order; Rank makes the two agree, as every run r2med
// writes must (see Ties). List order matters on its own only to list-order
// metrics such as HAKARI-Bench's.
type Run map[string][]Hit

// Depth is the length of the run's longest list: how deep it ranks.
func (r Run) Depth() int {
	n := 0
	for _, hits := range r {
		n = max(n, len(hits))
	}
	return n
}

// Layout names the directory layout a task was read from.
type Layout string

const (
	LayoutR2MED Layout = "r2med"
	LayoutBEIR  Layout = "beir"
	// Hugging Face dataset repositories.
	LayoutR2MEDHub Layout = "r2med-hub"
	LayoutNanoHub  Layout = "nano-hub"
	// LayoutBrightHub is BRIGHT's repository (xlangai/BRIGHT).
	LayoutBrightHub Layout = "bright-hub"
)

// Task is one loaded retrieval task.
type Task struct {
	Name    string // directory base name unless set otherwise
	Dir     string
	Layout  Layout
	Split   string // BEIR split whose qrels were read, or a Nano set's split; empty for R2MED
	Corpus  []Doc
	Queries []Query // the queries to evaluate, in file order
	Qrels   Qrels
	Files   []string // every file read, for manifests and checksums

	// UnjudgedQueries counts query-file entries left out of Queries for
	// having no judgment (in BEIR, mostly the other splits' queries), and
	// Unjudged holds their ids, in file order: a run made over the whole
	// query file ranks them too, and they are left out as trec_eval
	// leaves them, not taken for another task's.
	UnjudgedQueries int
	Unjudged        []string

	// EmptyDocs and EmptyQueries count rows left out for an empty text,
	// which HAKARI-Bench's loader leaves out of its Nano sets (Nano
	// repositories only). Judgments of such a document stay in Qrels,
	// relevant but unretrievable, as there; those of such a query are
	// dropped with it.
	EmptyDocs, EmptyQueries int

	// Excluded holds the documents each query must not retrieve (BRIGHT's
	// excluded_ids, an exclusions file); see Exclusions. Nil when none.
	Excluded Exclusions
}
