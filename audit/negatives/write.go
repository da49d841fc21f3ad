package negatives

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/r2med/r2med/ir"
)

// Formats are the output formats Write takes.
var Formats = []string{"bge", "triplet", "tevatron"}

// passage is one of Tevatron's passages; Tevatron reads title and text
// (both required), its encoder names passages by docid.
type passage struct {
	DocID string `json:"docid"`
	Title string `json:"title"`
	Text  string `json:"text"`
}

// Write writes results as JSON lines: bge gives one {query, pos, neg}
// line per query (FlagEmbedding's fine-tuning format), triplet one
// {anchor, positive, negative} line per positive and negative
// (sentence-transformers' triplet format), tevatron one {query_id, query,
// positive_passages, negative_passages} line per query, each passage
// {docid, title, text} (Tevatron's training format; titles are empty, as
// r2med's documents hold title and text in one; a training file's
// positive texts have no docid). Positives are the query's positive
// texts, then its positive documents' texts. Queries without
// negatives or without positives get no line (Stats counts them).
func Write(w io.Writer, format string, results []Result, corpus []ir.Doc) error {
	text := make(map[string]string, len(corpus))
	for _, d := range corpus {
		text[d.ID] = d.Text
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for _, r := range results {
		if len(r.Negatives) == 0 {
			continue
		}
		pos := append([]string{}, r.Query.PositiveTexts...)
		posIDs := make([]string, len(pos))
		for _, p := range r.Query.Positives {
			if t, ok := text[p]; ok {
				pos = append(pos, t)
				posIDs = append(posIDs, p)
			}
		}
		if len(pos) == 0 {
			continue
		}
		neg := make([]string, len(r.Negatives))
		for i, n := range r.Negatives {
			neg[i] = n.Text
		}
		switch format {
		case "bge":
			if err := enc.Encode(struct {
				Query string   `json:"query"`
				Pos   []string `json:"pos"`
				Neg   []string `json:"neg"`
			}{r.Query.Text, pos, neg}); err != nil {
				return err
			}
		case "triplet":
			for _, p := range pos {
				for _, n := range neg {
					if err := enc.Encode(struct {
						Anchor   string `json:"anchor"`
						Positive string `json:"positive"`
						Negative string `json:"negative"`
					}{r.Query.Text, p, n}); err != nil {
						return err
					}
				}
			}
		case "tevatron":
			line := struct {
				QueryID string    `json:"query_id"`
				Query   string    `json:"query"`
				Pos     []passage `json:"positive_passages"`
				Neg     []passage `json:"negative_passages"`
			}{QueryID: r.Query.ID, Query: r.Query.Text}
			for i, p := range pos {
				line.Pos = append(line.Pos, passage{DocID: posIDs[i], Text: p})
			}
			for _, n := range r.Negatives {
				line.Neg = append(line.Neg, passage{DocID: n.ID, Text: n.Text})
			}
			if err := enc.Encode(line); err != nil {
				return err
			}
		default:
			return fmt.Errorf("negatives: unknown output format %q; want bge, triplet or tevatron", format)
		}
	}
	return nil
}
