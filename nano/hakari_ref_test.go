package nano

import (
	"encoding/json"
	"os"
	"reflect"
	"testing"

	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/rerank"
)

// hakariRefDir holds what HAKARI-Bench's own candidate-list functions
// returned for crafted inputs (see its README).
const hakariRefDir = "../measure/testdata/hakari/"

func readHakariJSON(t *testing.T, name string, v any) {
	t.Helper()
	b, err := os.ReadFile(hakariRefDir + name)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

func listed(ids []string) []ir.Hit {
	hits := make([]ir.Hit, len(ids))
	for i, id := range ids {
		hits[i] = ir.Hit{DocID: id, Score: float64(len(ids) - i)}
	}
	return hits
}

// TestHakariReference checks NanoR2MED's candidate lists against
// HAKARI-Bench's own code, run over crafted splits: addHybrid's
// reranking_hybrid lists and safeguards against rrf_hybrid_rankings (ties in
// the fused score and the best rank, lists shorter than 100, non-ASCII ids,
// CPython's random choice of the safeguard); the safeguard rerank's
// DropSafeguard removes against the ones candidate_safeguard_metadata names
// (only a 101st candidate: a safeguard appended to a shorter list is none);
// and rerank.HashShuffle against _shuffle_reranker_candidate_ids.
func TestHakariReference(t *testing.T) {
	var in struct {
		Hybrid []struct {
			Name, Split string
			Seed        int64
			TopK        int      `json:"top_k"`
			RRFK        float64  `json:"rrf_k"`
			CorpusIDs   []string `json:"corpus_ids"`
			QueryIDs    []string `json:"query_ids"`
			Qrels       map[string][]string
			BM25, Dense map[string][]string
		}
		Order []struct {
			QueryID      string   `json:"query_id"`
			CandidateIDs []string `json:"candidate_ids"`
		}
	}
	var out struct {
		Hybrid map[string]struct {
			Rankings   map[string][]string
			Safeguards map[string]string
			Named      map[string]string `json:"safeguard_corpus_ids_by_query"`
		}
		Order [][]string
	}
	readHakariJSON(t, "candidates_inputs.json", &in)
	readHakariJSON(t, "candidates_outputs.json", &out)
	if len(in.Hybrid) != len(out.Hybrid) || len(in.Order) != len(out.Order) {
		t.Fatalf("%d+%d input cases, %d+%d outputs", len(in.Hybrid), len(in.Order), len(out.Hybrid), len(out.Order))
	}
	for _, c := range in.Hybrid {
		t.Run(c.Name, func(t *testing.T) {
			want := out.Hybrid[c.Name]
			s := &Set{Split: c.Split, Qrels: make(ir.Qrels)}
			s.opts = Options{Split: c.Split, HybridDepth: c.TopK, RRFK: c.RRFK, Seed: c.Seed}.withDefaults(&ir.Task{})
			for _, id := range c.CorpusIDs {
				s.Corpus = append(s.Corpus, ir.Doc{ID: id, Text: "t"})
			}
			for _, q := range c.QueryIDs {
				s.Queries = append(s.Queries, ir.Query{ID: q, Text: q})
				for _, d := range c.Qrels[q] {
					s.Qrels.Add(q, d, 1)
				}
			}
			bm, dense := ir.Run{}, ir.Run{}
			for q, ids := range c.BM25 {
				bm[q] = listed(ids)
			}
			for q, ids := range c.Dense {
				dense[q] = listed(ids)
			}
			s.Subsets = []Subset{
				{Name: "bm25", Config: BM25Config, TopK: 500, Run: bm},
				{Name: "dense", Config: "dense", TopK: 500, Run: dense},
			}
			s.addHybrid()
			h := s.Subset("reranking_hybrid")
			if len(h.Run) != len(want.Rankings) {
				t.Errorf("%d lists, HAKARI-Bench built %d", len(h.Run), len(want.Rankings))
			}
			for q, ids := range want.Rankings {
				if got := docIDs(h.Run[q]); !reflect.DeepEqual(got, ids) && len(got)+len(ids) > 0 {
					t.Errorf("query %s: %v\nHAKARI-Bench built %v", q, got, ids)
				}
			}
			if !reflect.DeepEqual(h.Safeguards, want.Safeguards) && len(h.Safeguards)+len(want.Safeguards) > 0 {
				t.Errorf("safeguards %v, HAKARI-Bench appended %v", h.Safeguards, want.Safeguards)
			}
			for q, hits := range h.Run {
				head, _, err := rerank.Candidates(q, hits, rerank.Options{Safeguard: rerank.DropSafeguard})
				if err != nil {
					t.Fatal(err)
				}
				var dropped string
				if len(head) < len(hits) {
					dropped = hits[len(hits)-1].DocID
				}
				if dropped != want.Named[q] {
					t.Errorf("query %s (%d candidates): DropSafeguard removes %q, HAKARI-Bench's safeguard is %q", q, len(hits), dropped, want.Named[q])
				}
			}
		})
	}
	for i, c := range in.Order {
		hits := listed(c.CandidateIDs)
		rerank.HashShuffle(c.QueryID, hits)
		if got := docIDs(hits); !reflect.DeepEqual(got, out.Order[i]) && len(got)+len(out.Order[i]) > 0 {
			t.Errorf("hash order of query %q: %v\nHAKARI-Bench: %v", c.QueryID, got, out.Order[i])
		}
	}
}
