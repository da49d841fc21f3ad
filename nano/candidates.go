package nano

import (
	"context"
	"fmt"

	"github.com/r2med/r2med/fusion"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/retrieve"
	"github.com/r2med/r2med/trec"
)

// addBM25 ranks the Nano corpus for every Nano query with retrieve's BM25.
func (s *Set) addBM25() error {
	ctx := context.Background()
	spec := retrieve.BM25{Analyzer: s.opts.Analyzer, Params: s.opts.BM25}
	r, err := retrieve.New(ctx, spec, &ir.Task{Name: s.Split, Corpus: s.Corpus}, retrieve.Env{Workers: s.opts.Workers})
	if err != nil {
		return fmt.Errorf("nano: %w", err)
	}
	run, err := r.Search(ctx, retrieve.Queries(s.Queries), s.opts.CandidateDepth)
	if err != nil {
		return fmt.Errorf("nano: %w", err)
	}
	s.Subsets = append(s.Subsets, Subset{Name: "bm25", Config: BM25Config, Label: "BM25", TopK: s.opts.CandidateDepth, Run: run})
	return nil
}

// addDense takes the caller's dense ranking, cut to the candidate depth. A
// document outside the Nano corpus means the ranking was made over another
// corpus, whose top list is not the Nano corpus's, so it is an error rather
// than something to filter.
func (s *Set) addDense(dense ir.Run) error {
	inCorpus := make(map[string]bool, len(s.Corpus))
	for _, d := range s.Corpus {
		inCorpus[d.ID] = true
	}
	run := make(ir.Run, len(s.Queries))
	for _, q := range s.Queries {
		hits := dense[q.ID]
		seen := make(map[string]bool, min(len(hits), s.opts.CandidateDepth))
		for _, h := range hits {
			if !inCorpus[h.DocID] {
				return fmt.Errorf("nano: the dense run ranks document %q for query %q, which is not in the Nano corpus; rank the Nano corpus", h.DocID, q.ID)
			}
			if seen[h.DocID] {
				return fmt.Errorf("nano: the dense run ranks document %q twice for query %q", h.DocID, q.ID)
			}
			seen[h.DocID] = true
		}
		run[q.ID] = append([]ir.Hit{}, hits[:min(len(hits), s.opts.CandidateDepth)]...)
	}
	s.Subsets = append(s.Subsets, Subset{Name: "dense", Config: s.opts.DenseConfig, Label: "Dense", TopK: s.opts.CandidateDepth, Run: run})
	return nil
}

// addHybrid fuses the bm25 and dense lists and adds the rank-101 safeguard.
func (s *Set) addHybrid() {
	o := s.opts
	fused := fusion.RRF([]ir.Run{s.Subset("bm25").Run, s.Subset("dense").Run}, o.RRFK, 0)
	limit := min(o.HybridDepth, len(s.Corpus))
	run := make(ir.Run, len(s.Queries))
	safeguards := make(map[string]string)
	for _, q := range s.Queries {
		all := fused[q.ID]
		list := append([]ir.Hit{}, all[:min(len(all), limit)]...)
		positives := trec.QueryIDs(s.Qrels[q.ID]) // every judged document is in the corpus
		found := false
		for _, h := range list {
			if _, ok := s.Qrels[q.ID][h.DocID]; ok {
				found = true
				break
			}
		}
		if len(positives) > 0 && !found {
			doc := positives[choiceIndex(SafeguardSeed(o.Seed, s.Split, q.ID), len(positives))]
			// The appended positive keeps its fused score when it has one
			// (lower than every listed score); otherwise 0.
			var score float64
			for _, h := range all[len(list):] {
				if h.DocID == doc {
					score = h.Score
					break
				}
			}
			list = append(list, ir.Hit{DocID: doc, Score: score})
			safeguards[q.ID] = doc
		}
		run[q.ID] = list
	}
	s.Subsets = append(s.Subsets, Subset{Name: "reranking_hybrid", Config: HybridConfig, Label: "Reranking hybrid", TopK: o.HybridDepth, Run: run, Safeguards: safeguards})
}

// SafeguardSeed is the string HAKARI-Bench seeds Python's random.Random with
// to draw a query's safeguard positive.
func SafeguardSeed(seed int64, split, qid string) string {
	return fmt.Sprintf("%d\x00%s\x00%s\x00positive_safeguard", seed, split, qid)
}
