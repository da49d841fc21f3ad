package negatives

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/r2med/r2med/ir"
)

// Formats are the output formats Write takes.
var Formats = []string{"bge", "triplet"}

// Write writes results as JSON lines: bge gives one {query, pos, neg}
// line per query (FlagEmbedding's fine-tuning format), triplet one
// {anchor, positive, negative} line per positive and negative
// (sentence-transformers' triplet format). Positives are the query's
// positive texts, then its positive documents' texts. Queries without
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
		for _, p := range r.Query.Positives {
			if t, ok := text[p]; ok {
				pos = append(pos, t)
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
		default:
			return fmt.Errorf("negatives: unknown output format %q; want bge or triplet", format)
		}
	}
	return nil
}
