package nano

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/r2med/r2med/internal/pynum"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/taskstats"
)

// pyFloat marshals as Python's json.dumps writes a float (500.0, 1e-05),
// so the metadata reads like HAKARI-Bench's.
type pyFloat float64

func (f pyFloat) MarshalJSON() ([]byte, error) {
	return []byte(pynum.Format(float64(f))), nil
}

func (f *pyFloat) UnmarshalJSON(b []byte) error {
	return json.Unmarshal(b, (*float64)(f))
}

// pyNumber marshals an integral value as an int and any other as pyFloat,
// for settings HAKARI writes as ints (rrf_k) that are floats here.
type pyNumber float64

func (f pyNumber) MarshalJSON() ([]byte, error) {
	if x := float64(f); x == math.Trunc(x) && math.Abs(x) < 1<<53 {
		return strconv.AppendInt(nil, int64(x), 10), nil
	}
	return pyFloat(f).MarshalJSON()
}

func (f *pyNumber) UnmarshalJSON(b []byte) error {
	return json.Unmarshal(b, (*float64)(f))
}

// Metadata is metadata/{split}.json: counts, positives per query and
// candidate-subset quality under the field names of HAKARI-Bench's task
// metadata (task_metadata.counts, .positives_per_query, .text_stats_chars,
// .bm25, .candidate_subsets), plus how the set was built.
type Metadata struct {
	SchemaVersion     int              `json:"schema_version"`
	SplitName         string           `json:"split_name"`
	SourceTask        string           `json:"source_task"`
	Counts            Counts           `json:"counts"`
	PositivesPerQuery PositivesStats   `json:"positives_per_query"`
	TextStatsChars    TextStats        `json:"text_stats_chars"`
	BM25              BM25Summary      `json:"bm25"`
	CandidateSubsets  CandidateSubsets `json:"candidate_subsets"`
	Construction      Construction     `json:"construction"`
}

// Counts are the set's sizes; positive_qrels counts judgments.
type Counts struct {
	Queries       int `json:"queries"`
	Documents     int `json:"documents"`
	PositiveQrels int `json:"positive_qrels"`
}

// PositivesStats rounds as HAKARI's task metadata does (6 decimals).
type PositivesStats struct {
	Average              pyFloat `json:"average"`
	Min                  int     `json:"min"`
	Median               pyFloat `json:"median"`
	Max                  int     `json:"max"`
	MultiPositiveQueries int     `json:"multi_positive_queries"`
	MultiPositivePercent pyFloat `json:"multi_positive_query_percent"`
}

// TextStats are mean lengths in Unicode code points (Python's len).
type TextStats struct {
	QueryMean    pyFloat `json:"query_mean"`
	DocumentMean pyFloat `json:"document_mean"`
}

// BM25Summary repeats the bm25 subset's quality unrounded, as HAKARI's
// task metadata does.
type BM25Summary struct {
	NDCGAt10 pyFloat `json:"ndcg_at_10"`
	HitAt10  pyFloat `json:"hit_at_10"`
	Source   string  `json:"source"`
}

// CandidateSubsets holds the quality of each subset built, in HAKARI's
// key order.
type CandidateSubsets struct {
	BM25   *SubsetMetrics `json:"bm25,omitempty"`
	Dense  *SubsetMetrics `json:"dense,omitempty"`
	Hybrid *SubsetMetrics `json:"reranking_hybrid,omitempty"`
}

// SubsetMetrics is scripts/update_benchmark_task_candidate_metadata.py's
// CandidateMetrics, computed by taskstats.ScoreCandidates (see there): nDCG@10
// and hit@10 are means over the judged queries (sorted ids) of the listed
// candidates; recall@100 is micro-averaged over the first 100 candidates
// with the safeguard left out, and so equals relevant_coverage_at_100;
// query_coverage is the share of judged queries with any candidate. Quality
// values are rounded to 10 decimals, the mean count to 6.
type SubsetMetrics struct {
	Config                string  `json:"config"`
	Label                 string  `json:"label"`
	Source                string  `json:"source"`
	TopK                  int     `json:"top_k"`
	NDCGAt10              pyFloat `json:"ndcg_at_10"`
	HitAt10               pyFloat `json:"hit_at_10"`
	RecallAt100           pyFloat `json:"recall_at_100"`
	CandidateCountMin     int     `json:"candidate_count_min"`
	CandidateCountMax     int     `json:"candidate_count_max"`
	CandidateCountMean    pyFloat `json:"candidate_count_mean"`
	QueryCount            int     `json:"query_count"`
	QueryCoverage         pyFloat `json:"query_coverage"`
	RelevantCoverageAt100 pyFloat `json:"relevant_coverage_at_100"`
	SafeguardPositiveRows *int    `json:"safeguard_positive_rows,omitempty"`
	RowsWith101           *int    `json:"rows_with_101_candidates,omitempty"`

	ndcg, hit float64 // unrounded
}

// Construction records the settings and what selection did.
type Construction struct {
	QueryLimit       int          `json:"query_limit"`
	DocLimit         int          `json:"doc_limit"`
	DedupeQueryTexts bool         `json:"dedupe_query_texts"`
	DedupeDocTexts   bool         `json:"dedupe_doc_texts"`
	QrelsScorePolicy string       `json:"qrels_score_policy"`
	QrelsOrder       string       `json:"qrels_order"`
	Selection        Selection    `json:"selection"`
	BM25             BM25Settings `json:"bm25"`
	Dense            *DenseInfo   `json:"dense,omitempty"`
	Hybrid           *HybridInfo  `json:"reranking_hybrid,omitempty"`
}

// BM25Settings are the scorer and analyzer behind the bm25 subset.
type BM25Settings struct {
	Scheme   string  `json:"scheme"`
	K1       pyFloat `json:"k1"`
	B        pyFloat `json:"b"`
	Analyzer string  `json:"analyzer"`
	TopK     int     `json:"top_k"`
}

// DenseInfo names the dense subset's config.
type DenseInfo struct {
	Config string `json:"config"`
	TopK   int    `json:"top_k"`
}

// HybridInfo records how reranking_hybrid was fused and which queries
// got a safeguard, with its 1-based rank.
type HybridInfo struct {
	Method                string      `json:"method"`
	Sources               []string    `json:"sources"`
	RRFK                  pyNumber    `json:"rrf_k"`
	RRFTopK               int         `json:"rrf_top_k"`
	MaxCandidatesPerQuery int         `json:"max_candidates_per_query"`
	Order                 string      `json:"order"`
	RandomSeed            int64       `json:"random_seed"`
	SafeguardPolicy       string      `json:"safeguard_policy"`
	Safeguards            []Safeguard `json:"safeguards"`
}

// Safeguard is one appended positive.
type Safeguard struct {
	QueryID  string `json:"query_id"`
	CorpusID string `json:"corpus_id"`
	Rank     int    `json:"rank"`
}

// Metadata computes the set's metadata.
func (s *Set) Metadata() (*Metadata, error) {
	o := s.opts
	m := &Metadata{
		SchemaVersion: 1,
		SplitName:     s.Split,
		SourceTask:    s.Source,
		Counts:        Counts{Queries: len(s.Queries), Documents: len(s.Corpus), PositiveQrels: s.Qrels.Len()},
	}
	m.PositivesPerQuery = positivesStats(s)
	var qchars, dchars int
	for _, q := range s.Queries {
		qchars += utf8.RuneCountInString(q.Text)
	}
	for _, d := range s.Corpus {
		dchars += utf8.RuneCountInString(d.Text)
	}
	m.TextStatsChars = TextStats{
		QueryMean:    pyFloat(pynum.Round(float64(qchars)/float64(max(1, len(s.Queries))), 6)),
		DocumentMean: pyFloat(pynum.Round(float64(dchars)/float64(max(1, len(s.Corpus))), 6)),
	}
	for i := range s.Subsets {
		sub := &s.Subsets[i]
		sm, err := subsetMetrics(sub, s.Qrels)
		if err != nil {
			return nil, err
		}
		switch sub.Name {
		case "bm25":
			m.CandidateSubsets.BM25 = sm
			m.BM25 = BM25Summary{NDCGAt10: pyFloat(sm.ndcg), HitAt10: pyFloat(sm.hit), Source: "dataset_candidate_subset"}
		case "dense":
			m.CandidateSubsets.Dense = sm
		case "reranking_hybrid":
			m.CandidateSubsets.Hybrid = sm
		}
	}
	m.Construction = Construction{
		QueryLimit:       o.QueryLimit,
		DocLimit:         o.DocLimit,
		DedupeQueryTexts: !o.KeepDuplicateTexts,
		DedupeDocTexts:   !o.KeepDuplicateTexts,
		QrelsScorePolicy: "score > 0 kept as qrels; score <= 0 excluded and used as hard-negative corpus candidates",
		QrelsOrder:       "queries in query-file order, each query's documents by id",
		Selection:        s.Selection,
		BM25: BM25Settings{
			Scheme: string(o.BM25.Scheme), K1: pyFloat(o.BM25.K1), B: pyFloat(o.BM25.B),
			Analyzer: o.Analyzer, TopK: o.CandidateDepth,
		},
	}
	if d := s.Subset("dense"); d != nil {
		m.Construction.Dense = &DenseInfo{Config: d.Config, TopK: d.TopK}
	}
	if h := s.Subset("reranking_hybrid"); h != nil {
		info := &HybridInfo{
			Method:                "reciprocal_rank_fusion",
			Sources:               []string{BM25Config, o.DenseConfig},
			RRFK:                  pyNumber(o.RRFK),
			RRFTopK:               h.TopK,
			MaxCandidatesPerQuery: h.TopK + 1,
			Order:                 "(-score, best_source_rank, doc_id)",
			RandomSeed:            o.Seed,
			SafeguardPolicy:       "when the RRF top list holds no positive, one positive chosen by random.Random(f\"{seed}\\0{split}\\0{query_id}\\0positive_safeguard\").choice(sorted positives) is appended",
			Safeguards:            []Safeguard{},
		}
		for _, q := range s.Queries {
			if doc, ok := h.Safeguards[q.ID]; ok {
				info.Safeguards = append(info.Safeguards, Safeguard{QueryID: q.ID, CorpusID: doc, Rank: len(h.Run[q.ID])})
			}
		}
		m.Construction.Hybrid = info
	}
	return m, nil
}

func positivesStats(s *Set) PositivesStats {
	counts := make([]int, 0, len(s.Queries))
	for _, q := range s.Queries {
		counts = append(counts, len(s.Qrels[q.ID]))
	}
	slices.Sort(counts)
	var st PositivesStats
	if len(counts) == 0 {
		return st
	}
	total, multi := 0, 0
	for _, c := range counts {
		total += c
		if c > 1 {
			multi++
		}
	}
	n := len(counts)
	median := float64(counts[n/2])
	if n%2 == 0 {
		median = float64(counts[n/2-1]+counts[n/2]) / 2
	}
	st.Average = pyFloat(pynum.Round(float64(total)/float64(n), 6))
	st.Min, st.Max = counts[0], counts[n-1]
	st.Median = pyFloat(median)
	st.MultiPositiveQueries = multi
	st.MultiPositivePercent = pyFloat(pynum.Round(float64(multi)/float64(n)*100, 6))
	return st
}

// subsetMetrics scores a subset with the task-card computation the
// dataset package shares with anything reading a published set back, so a
// set's metadata and a card made from its files cannot disagree.
func subsetMetrics(sub *Subset, qrels ir.Qrels) (*SubsetMetrics, error) {
	lists := make(map[string][]string, len(sub.Run))
	for qid, hits := range sub.Run {
		lists[qid] = docIDs(hits)
	}
	raw, err := taskstats.ScoreCandidates(qrels, lists, taskstats.CandidateSubset{
		Name: sub.Name, Config: sub.Config, Label: sub.Label, TopK: sub.TopK, Safeguard: sub.Safeguards != nil,
	})
	if err != nil {
		return nil, fmt.Errorf("nano: scoring the %s subset: %w", sub.Name, err)
	}
	r := raw.Rounded()
	return &SubsetMetrics{
		Config: r.Config, Label: r.Label, Source: r.Source, TopK: r.TopK,
		NDCGAt10: pyFloat(r.NDCGAt10), HitAt10: pyFloat(r.HitAt10), RecallAt100: pyFloat(r.RecallAt100),
		CandidateCountMin: r.CandidateCountMin, CandidateCountMax: r.CandidateCountMax,
		CandidateCountMean: pyFloat(r.CandidateCountMean),
		QueryCount:         r.QueryCount, QueryCoverage: pyFloat(r.QueryCoverage),
		RelevantCoverageAt100: pyFloat(r.RelevantCoverageAt100),
		SafeguardPositiveRows: r.SafeguardPositiveRows, RowsWith101: r.RowsWith101,
		ndcg: raw.NDCGAt10, hit: raw.HitAt10,
	}, nil
}
