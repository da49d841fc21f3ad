package hubrepo

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"path"
	"slices"
	"strings"
)

// Candidate list names of HAKARI-Bench's Nano sets: the config of the BM25
// and the hybrid lists are named after them; the dense one after its model
// (NanoR2MED's harrier_oss_v1_270m), and the task cards call it "dense".
const (
	CandidatesBM25   = "bm25"
	CandidatesDense  = "dense"
	CandidatesHybrid = "reranking_hybrid"
)

// CandidateConfig resolves the name of a published candidate list to the
// config that holds it. It is the one rule wherever r2med takes such a
// name (candidates:NAME, r2med stats, LoadCandidates), so that the names a
// set's card prints work as config names do:
//
//   - a config of the repository, by its name (bm25, harrier_oss_v1_270m);
//   - a name or label the set's task card gives the list: the
//     candidate_subsets of metadata/{split}.json (nano build's, or
//     HAKARI-Bench's task_metadata.candidate_subsets), "dense" or "Dense"
//     for harrier_oss_v1_270m, "Reranking hybrid" for reranking_hybrid;
//   - in a Nano set without such a card (the Hub's NanoR2MED is fetched
//     without it), "dense" is its one candidate config besides bm25 and
//     reranking_hybrid.
//
// Names compare without case, spaces and hyphens read as underscores. An
// unknown or ambiguous name is an error naming the lists there are.
func (h *Configs) CandidateConfig(name, split string) (string, error) {
	if _, err := h.Config(name); err == nil {
		return name, nil
	}
	key := candidateKey(name)
	cands := h.candidateConfigs()
	for _, c := range cands {
		if candidateKey(c) == key {
			return c, nil
		}
	}
	card, cardFile, err := h.cardSubsets(split)
	if err != nil {
		return "", err
	}
	for _, k := range slices.Sorted(maps.Keys(card)) {
		sub := card[k]
		if candidateKey(k) == key || sub.Label != "" && candidateKey(sub.Label) == key {
			if _, err := h.Config(sub.Config); err != nil {
				return "", fmt.Errorf("%s calls config %q the %q candidate list, but %w", cardFile, sub.Config, k, err)
			}
			return sub.Config, nil
		}
	}
	if key == CandidatesDense {
		var others []string
		for _, c := range cands {
			if c != CandidatesBM25 && c != CandidatesHybrid {
				others = append(others, c)
			}
		}
		if len(others) == 1 {
			return others[0], nil
		}
		if len(others) > 1 {
			return "", missingList{fmt.Sprintf("%s: %q could be any of the candidate configs %s; name one", h.where(), name, strings.Join(others, ", "))}
		}
	}
	return "", missingList{fmt.Sprintf("%s has no candidate list %q; %s", h.where(), name, h.listCandidates(cands, card))}
}

// ErrNoCandidateList is what CandidateConfig's error for a name that names
// no one list of the repository matches (errors.Is): an absence to skip,
// not a broken repository.
var ErrNoCandidateList = errors.New("no such candidate list")

type missingList struct{ msg string }

func (e missingList) Error() string        { return e.msg }
func (e missingList) Is(target error) bool { return target == ErrNoCandidateList }

// candidateKey is how candidate names compare.
func candidateKey(s string) string {
	return strings.NewReplacer(" ", "_", "-", "_").Replace(strings.ToLower(strings.TrimSpace(s)))
}

// candidateConfigs are the configs other than a task's corpus, queries
// and judgments and R2MED's generations: those that may hold candidate
// lists, in the card's order.
func (h *Configs) candidateConfigs() []string {
	var out []string
	for _, c := range h.Configs {
		switch c.Name {
		case "corpus", "queries", "query", "qrels", "metadata", "default":
			continue
		}
		out = append(out, c.Name)
	}
	return out
}

// cardSubset is a task card's entry for one candidate list.
type cardSubset struct {
	Config string `json:"config"`
	Label  string `json:"label"`
}

// cardSubsets reads the candidate_subsets of the split's task card,
// metadata/{split}.json (the only one when split is empty), when the
// repository has it: nano build's top-level key or HAKARI-Bench's
// task_metadata.candidate_subsets.
func (h *Configs) cardSubsets(split string) (map[string]cardSubset, string, error) {
	var file string
	if split != "" {
		file = path.Join("metadata", split+".json")
		if _, ok := slices.BinarySearch(h.files, file); !ok {
			return nil, "", nil
		}
	} else {
		for _, f := range h.files {
			if path.Dir(f) == "metadata" && path.Ext(f) == ".json" {
				if file != "" {
					return nil, "", nil // several tasks' cards: none is the one
				}
				file = f
			}
		}
		if file == "" {
			return nil, "", nil
		}
	}
	rc, err := h.src.Open(file)
	if err != nil {
		return nil, "", err
	}
	defer rc.Close()
	data, err := io.ReadAll(rc)
	if err != nil {
		return nil, "", err
	}
	var card struct {
		Subsets      map[string]cardSubset `json:"candidate_subsets"`
		TaskMetadata struct {
			Subsets map[string]cardSubset `json:"candidate_subsets"`
		} `json:"task_metadata"`
	}
	if err := json.Unmarshal(data, &card); err != nil {
		return nil, "", fmt.Errorf("%s: not a task card: %v", h.src.Show(file), err)
	}
	subs := card.Subsets
	if subs == nil {
		subs = card.TaskMetadata.Subsets
	}
	return subs, h.src.Show(file), nil
}

// listCandidates says which candidate lists there are, with the card's
// names for them.
func (h *Configs) listCandidates(configs []string, card map[string]cardSubset) string {
	if len(configs) == 0 {
		return "it publishes none; " + h.listConfigs()
	}
	names := make([]string, len(configs))
	for i, c := range configs {
		names[i] = c
		for _, k := range slices.Sorted(maps.Keys(card)) {
			if card[k].Config == c && k != c {
				names[i] = fmt.Sprintf("%s (%s)", c, k)
			}
		}
	}
	return "its candidate lists: " + strings.Join(names, ", ")
}
