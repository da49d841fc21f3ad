package hubrepo

import (
	"encoding/json"
	"fmt"
	"io/fs"

	"github.com/r2med/r2med/dataset"
	"github.com/r2med/r2med/internal/errtext"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/table"
)

// Candidates are per-query candidate lists published with a dataset, such
// as a Nano set's bm25, dense and reranking_hybrid configs: a first-stage
// ranking to rerank, and what task cards score (ScoreCandidates).
type Candidates struct {
	Config, Split string
	// Queries lists the query ids in file order.
	Queries []string
	// Lists maps a query id to its candidates, best first, exactly as
	// stored: a document listed twice stays listed twice.
	Lists map[string][]string
	Files []string
}

// Field names a candidate row may use, first the one HAKARI-Bench writes;
// its task-card script accepts the others too.
var (
	candidateQueryKeys = []string{"query-id", "query_id", "qid"}
	candidateListKeys  = []string{"corpus-ids", "corpus_ids", "doc_ids"}
)

// LoadCandidates reads the candidate lists of a config's split from a
// dataset repository downloaded to dir: rows of a query id ("query-id") and
// a list of document ids ("corpus-ids"; null means none). split may be
// empty when the config has one split. A query may have one row only.
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

func (s repo) loadHubCandidates(config, split string) (*Candidates, error) {
	hc, err := s.hubConfigs()
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
	cols := append(append([]string{}, candidateQueryKeys...), candidateListKeys...)
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
			seen[qid] = at
			out.Queries = append(out.Queries, qid)
			out.Lists[qid] = list
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
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

// Run turns the lists into a run that keeps their order under any
// evaluator: the candidate at 1-based rank r of a list of n scores n − r,
// so scores fall strictly down the list (the last scores 0) and no
// tie-break can reorder it. A document listed twice keeps its first place
// only, since a run cannot rank a document twice; queries with an empty
// list get no entry.
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
			hits = append(hits, ir.Hit{DocID: doc, Score: float64(len(list) - (i + 1))})
		}
		run[qid] = hits
	}
	return run
}
