// Package dataset reads retrieval tasks (documents, queries, graded
// judgments, into package ir's types) from the directory layouts tasks
// ship in: R2MED's own (corpus.jsonl, query.jsonl, qrels.jsonl|qrels.txt)
// and BEIR's (corpus.jsonl, queries.jsonl, qrels/<split>.tsv), gzip
// accepted, streaming. Its field rules and checks are exported (Dir, ID,
// Text, Grade, CheckKnown) for the readers built on it: hubrepo (Hugging
// Face dataset repositories) and table (parquet and JSON tables);
// taskstats profiles a loaded task. Per-query exclusions (BRIGHT's
// excluded_ids, an exclusions file) are read here for every layout; see
// exclude.go.
package dataset

import "github.com/r2med/r2med/ir"

// layoutName is the layout's name as its authors write it, for messages.
func layoutName(l ir.Layout) string {
	switch l {
	case ir.LayoutR2MED:
		return "R2MED"
	case ir.LayoutBEIR:
		return "BEIR"
	case ir.LayoutR2MEDHub:
		return "R2MED hub"
	case ir.LayoutNanoHub:
		return "Nano hub"
	case ir.LayoutBrightHub:
		return "BRIGHT hub"
	}
	return string(l)
}
