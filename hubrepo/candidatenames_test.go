package hubrepo

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/r2med/r2med/ir"
)

// writeFiles writes files (slash path → content) under dir.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// nanoCard is a Nano set's card declaring a config per name.
func nanoCard(configs ...string) string {
	var b strings.Builder
	b.WriteString("---\nconfigs:\n")
	for _, c := range configs {
		b.WriteString("  - config_name: " + c + "\n    data_files:\n      - split: N\n        path: " + c + "/N.jsonl\n")
	}
	b.WriteString("---\n")
	return b.String()
}

func TestCandidateConfig(t *testing.T) {
	list := `{"query-id": "q1", "corpus-ids": ["a", "b"]}` + "\n"
	files := map[string]string{
		"README.md":                   nanoCard("corpus", "queries", "qrels", "bm25", "harrier_oss_v1_270m", "reranking_hybrid"),
		"bm25/N.jsonl":                list,
		"harrier_oss_v1_270m/N.jsonl": list,
		"reranking_hybrid/N.jsonl":    list,
		"corpus/N.jsonl":              `{"_id": "a", "text": "x"}` + "\n",
		"queries/N.jsonl":             `{"_id": "q1", "text": "y"}` + "\n",
		"qrels/N.jsonl":               `{"query-id": "q1", "corpus-id": "a"}` + "\n",
	}
	cards := map[string]string{
		// nano build's metadata/{split}.json
		"nano build": `{"split_name": "N", "candidate_subsets": {"bm25": {"config": "bm25", "label": "BM25"}, "dense": {"config": "harrier_oss_v1_270m", "label": "Dense"}, "reranking_hybrid": {"config": "reranking_hybrid", "label": "Reranking hybrid"}}}`,
		// HAKARI-Bench's task card
		"HAKARI-Bench": `{"task_metadata": {"candidate_subsets": {"bm25": {"config": "bm25", "label": "BM25"}, "dense": {"config": "harrier_oss_v1_270m", "label": "Dense"}, "reranking_hybrid": {"config": "reranking_hybrid", "label": "Reranking hybrid"}}}}`,
		"no card":      "",
	}
	for kind, card := range cards {
		dir := t.TempDir()
		writeFiles(t, dir, files)
		if card != "" {
			writeFiles(t, dir, map[string]string{"metadata/N.json": card})
		}
		hc, err := ReadConfigs(dir)
		if err != nil {
			t.Fatal(err)
		}
		for name, want := range map[string]string{
			"bm25": "bm25", "BM25": "bm25", "dense": "harrier_oss_v1_270m", "Dense": "harrier_oss_v1_270m",
			"harrier_oss_v1_270m": "harrier_oss_v1_270m", "Reranking hybrid": "reranking_hybrid", "reranking-hybrid": "reranking_hybrid",
		} {
			for _, split := range []string{"N", ""} {
				got, err := hc.CandidateConfig(name, split)
				if err != nil || got != want {
					t.Errorf("%s, split %q: %q resolves to %q, %v; want %q", kind, split, name, got, err, want)
				}
			}
		}
		_, err = hc.CandidateConfig("sparse", "N")
		if !errors.Is(err, ErrNoCandidateList) || !strings.Contains(err.Error(), "its candidate lists: bm25, harrier_oss_v1_270m") {
			t.Errorf("%s: an unknown name: %v", kind, err)
		}
		if card != "" && !strings.Contains(err.Error(), "harrier_oss_v1_270m (dense)") {
			t.Errorf("%s: the error does not give the card's name: %v", kind, err)
		}
		c, err := LoadCandidates(dir, "dense", "N")
		if err != nil || c.Config != "harrier_oss_v1_270m" || c.HasScores() {
			t.Errorf("%s: LoadCandidates(dense): %+v, %v", kind, c, err)
		}
	}

	// Two candidate configs besides bm25 and reranking_hybrid, no card:
	// "dense" is either.
	dir := t.TempDir()
	writeFiles(t, dir, files)
	writeFiles(t, dir, map[string]string{"README.md": nanoCard("corpus", "queries", "qrels", "bm25", "harrier_oss_v1_270m", "e5", "reranking_hybrid"), "e5/N.jsonl": list})
	hc, err := ReadConfigs(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := hc.CandidateConfig("dense", "N"); !errors.Is(err, ErrNoCandidateList) || !strings.Contains(err.Error(), "harrier_oss_v1_270m, e5") {
		t.Errorf("ambiguous dense: %v", err)
	}
	// A card that names a config the set lacks, and one that is no card.
	writeFiles(t, dir, map[string]string{"metadata/N.json": `{"candidate_subsets": {"dense": {"config": "gone", "label": "Dense"}}}`})
	if _, err := LoadCandidates(dir, "dense", "N"); err == nil || !strings.Contains(err.Error(), `metadata/N.json calls config "gone" the "dense" candidate list`) {
		t.Errorf("a card naming a missing config: %v", err)
	}
	writeFiles(t, dir, map[string]string{"metadata/N.json": `[1, 2]`})
	if _, err := LoadCandidates(dir, "dense", "N"); err == nil || errors.Is(err, ErrNoCandidateList) || !strings.Contains(err.Error(), "not a task card") {
		t.Errorf("a broken card: %v", err)
	}
}

// Candidate lists may carry the first-stage scores they were ranked by;
// the run then carries them.
func TestCandidateScores(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"scored/N.jsonl": `{"query-id": "q1", "corpus-ids": ["a", "b", "a", "c"], "corpus-scores": [9.5, 7.25, 7.25, -1]}
{"query-id": "q2", "corpus-ids": [], "corpus-scores": []}
{"query-id": "q3", "corpus-ids": null}
`})
	c, err := LoadCandidates(dir, "scored", "N")
	if err != nil {
		t.Fatal(err)
	}
	want := ir.Run{"q1": {{DocID: "a", Score: 9.5}, {DocID: "b", Score: 7.25}, {DocID: "c", Score: -1}}}
	if !c.HasScores() || !reflect.DeepEqual(c.Run(), want) {
		t.Errorf("scores %v, run %v; want %v", c.Scores, c.Run(), want)
	}
	path := filepath.Join(dir, "scored", "N.jsonl")
	for body, wantErr := range map[string]string{
		`{"query-id": "q1", "corpus-ids": ["a", "b"], "corpus-scores": [1, 2]}`:                                            path + `:1: query "q1": "corpus-scores": the candidate at rank 2 scores 2, above rank 1's 1; a list is best first, its scores never rising`,
		`{"query-id": "q1", "corpus-ids": ["a", "b"], "corpus-scores": [1]}`:                                               path + `:1: query "q1": 1 scores in "corpus-scores" for 2 candidates; give one score per candidate`,
		`{"query-id": "q1", "corpus-ids": ["a"], "corpus-scores": "high"}`:                                                 path + `:1: query "q1": "corpus-scores" is a string, want a list of numbers (the candidates' first-stage scores)`,
		`{"query-id": "q1", "corpus-ids": ["a"], "corpus-scores": [1]}` + "\n" + `{"query-id": "q2", "corpus-ids": ["b"]}`: path + `:2: some rows have first-stage scores (` + path + `:1) and some have none (` + path + `:2); publish scores for every list or for none`,
	} {
		os.WriteFile(path, []byte(body+"\n"), 0o644)
		if _, err := LoadCandidates(dir, "scored", "N"); err == nil || err.Error() != wantErr {
			t.Errorf("%s:\n got %v\nwant %s", body, err, wantErr)
		}
	}
}
