package hubrepo

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"math"

	"github.com/r2med/r2med/dataset"
	"github.com/r2med/r2med/internal/errtext"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/table"
)

// Candidates are per-query candidate lists published with a dataset, such
// as a Nano set's bm25, dense and reranking_hybrid configs: a first-stage
// ranking to rerank, and what task cards score (ScoreCandidates).
type Candidates struct {
	// Config is the config read (CandidateConfig's resolution of the name
	// asked for), Split its split.
	Config, Split string
	// Queries lists the query ids in file order.
	Queries []string
	// Lists maps a query id to its candidates, best first, exactly as
	// stored: a document listed twice stays listed twice.
	Lists map[string][]string
	// Scores holds the first-stage scores the lists were ranked by, one
	// per candidate, when the config publishes them (a "corpus-scores"
	// column); nil when it publishes ranks alone, as HAKARI-Bench's Nano
	// sets do.
	Scores map[string][]float64
	Files  []string
}

// Field names a candidate row may use, first the one HAKARI-Bench writes;
// its task-card script accepts the others too. Scores are an extension:
// HAKARI-Bench publishes none.
var (
	candidateQueryKeys = []string{"query-id", "query_id", "qid"}
	candidateListKeys  = []string{"corpus-ids", "corpus_ids", "doc_ids"}
	candidateScoreKeys = []string{"corpus-scores", "corpus_scores", "doc_scores", "scores"}
)

// LoadCandidates reads the candidate lists of a config's split from a
// dataset repository downloaded to dir: rows of a query id ("query-id") and
// a list of document ids ("corpus-ids"; null means none), optionally with
// their first-stage scores ("corpus-scores", as many as ids, best first).
// name is resolved to a config by CandidateConfig ("dense" reads NanoR2MED's
// harrier_oss_v1_270m). split may be empty when the config has one split.
// A query may have one row only.
func LoadCandidates(dir, config, split string) (*Candidates, error) {
	src, err := openRepo(dir)
	if err != nil {
		return nil, err
	}
	return src.loadHubCandidates(config, split)
}

// LoadCandidatesFS is LoadCandidates for the directory root of fsys.
func LoadCandidatesFS(fsys fs.FS, root, config, split string) (*Candidates, error) {
	src, err := openRepoFS(fsys, root)
	if err != nil {
		return nil, err
	}
	return src.loadHubCandidates(config, split)
}

func (s repo) loadHubCandidates(name, split string) (*Candidates, error) {
	hc, err := s.hubConfigs()
	if err != nil {
		return nil, err
	}
	config, err := hc.CandidateConfig(name, split)
	if err != nil {
		return nil, err
	}
	c, err := hc.Config(config)
	if err != nil {
		return nil, err
	}
	if split == "" {
		if len(c.Splits) != 1 {
			return nil, fmt.Errorf("%s: config %q has %d splits; name one: %s", hc.where(), config, len(c.Splits), splitNames(c))
		}
		split = c.Splits[0].Name
	}
	files, err := hc.Files(config, split)
	if err != nil {
		return nil, err
	}
	out := &Candidates{Config: config, Split: split, Lists: make(map[string][]string)}
	seen := make(map[string]table.At)
	cols := append(append(append([]string{}, candidateQueryKeys...), candidateListKeys...), candidateScoreKeys...)
	var scored, unscored table.At // the first rows with and without scores
	for _, rel := range files {
		out.Files = append(out.Files, s.Show(rel))
		err := table.Each(s.Dir, rel, cols, func(m map[string]json.RawMessage, at table.At) error {
			qk := dataset.IDKeys{ID: firstKey(m, candidateQueryKeys)}
			qid, err := dataset.ID(m, qk, "candidate row")
			if err != nil {
				return at.Errorf("%v", err)
			}
			lk := dataset.IDKeys{ID: firstKey(m, candidateListKeys)}
			raw, ok := m[lk.ID]
			if !ok {
				return at.Errorf("missing %q field; every candidate row needs its list of document ids", lk.ID)
			}
			var list []string
			switch errtext.JSONKind(raw) {
			case "null":
			case "an array":
				if list, err = idsField(m, lk, "candidate"); err != nil {
					return at.Errorf("%v", err)
				}
			default:
				return at.Errorf("%q is %s, want a list of document ids", lk.ID, errtext.JSONKind(raw))
			}
			if prev, dup := seen[qid]; dup {
				return at.Errorf("query %q already has its candidates at %s; keep one row per query", qid, prev)
			}
			scores, err := candidateScores(m, len(list))
			if err != nil {
				return at.Errorf("query %q: %v", qid, err)
			}
			if len(list) > 0 {
				if scores != nil && scored == (table.At{}) {
					scored = at
				} else if scores == nil && unscored == (table.At{}) {
					unscored = at
				}
				if scored != (table.At{}) && unscored != (table.At{}) {
					return at.Errorf("some rows have first-stage scores (%s) and some have none (%s); publish scores for every list or for none", scored, unscored)
				}
			}
			seen[qid] = at
			out.Queries = append(out.Queries, qid)
			out.Lists[qid] = list
			if scores != nil {
				if out.Scores == nil {
					out.Scores = make(map[string][]float64)
				}
				out.Scores[qid] = scores
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// candidateScores reads a row's first-stage scores, if it has them: n
// finite numbers, best first (none rising down the list). nil when the row
// has no score column (or it is null).
func candidateScores(m map[string]json.RawMessage, n int) ([]float64, error) {
	key := firstKey(m, candidateScoreKeys)
	raw, ok := m[key]
	if !ok || errtext.JSONKind(raw) == "null" {
		return nil, nil
	}
	var scores []float64
	if err := json.Unmarshal(raw, &scores); err != nil {
		return nil, fmt.Errorf("%q is %s, want a list of numbers (the candidates' first-stage scores)", key, errtext.JSONKind(raw))
	}
	if len(scores) != n {
		return nil, fmt.Errorf("%d scores in %q for %d candidates; give one score per candidate", len(scores), key, n)
	}
	for i, v := range scores {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("%q: score %d is %v; scores must be finite", key, i+1, v)
		}
		if i > 0 && v > scores[i-1] {
			return nil, fmt.Errorf("%q: the candidate at rank %d scores %v, above rank %d's %v; a list is best first, its scores never rising", key, i+1, v, i, scores[i-1])
		}
	}
	return scores, nil
}

// firstKey is the first of names m has, or the first name when it has none
// (so that the missing-field message names the usual spelling).
func firstKey(m map[string]json.RawMessage, names []string) string {
	for _, n := range names {
		if raw, ok := m[n]; ok && errtext.JSONKind(raw) != "null" {
			return n
		}
	}
	for _, n := range names {
		if _, ok := m[n]; ok {
			return n
		}
	}
	return names[0]
}

// Run turns the lists into a run. With published scores each candidate
// carries its score; without, the candidate at 1-based rank r of a list of
// n scores n − r, so scores fall strictly down the list (the last scores
// 0) and no tie-break can reorder it — numbers that stand for ranks, not
// for any retriever's judgement (HasScores says which). A document listed
// twice keeps its first place only, since a run cannot rank a document
// twice; queries with an empty list get no entry.
func (c *Candidates) Run() ir.Run {
	run := make(ir.Run, len(c.Lists))
	for qid, list := range c.Lists {
		if len(list) == 0 {
			continue
		}
		hits := make([]ir.Hit, 0, len(list))
		seen := make(map[string]bool, len(list))
		for i, doc := range list {
			if seen[doc] {
				continue
			}
			seen[doc] = true
			score := float64(len(list) - (i + 1))
			if scores := c.Scores[qid]; scores != nil {
				score = scores[i]
			}
			hits = append(hits, ir.Hit{DocID: doc, Score: score})
		}
		run[qid] = hits
	}
	return run
}

// HasScores reports whether the lists come with first-stage scores; false
// means that Run's scores only stand for ranks.
func (c *Candidates) HasScores() bool { return c.Scores != nil }
