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
	}
	return string(l)
}
