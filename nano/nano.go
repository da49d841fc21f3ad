// Package nano builds Nano retrieval sets from full tasks the way
// HAKARI-Bench built NanoR2MED (hakari_bench/nano_dataset_builder.py and
// scripts/build_reranking_hybrid_nano_dataset.py), and writes them in the
// Hugging Face hub layout HAKARI-Bench loads.
//
// # Selection (Build)
//
// Texts are stripped of surrounding white space as Python's str.strip does,
// and rows whose id or stripped text is empty are dropped, before anything
// else. Then:
//
//  1. Queries, in source order, skipping those without a positive judgment
//     (grade > 0), repeated ids and texts equal to an earlier kept query's,
//     up to QueryLimit (200).
//  2. Documents, up to DocLimit (10,000): every positive of the kept queries
//     in qrels order; then their non-positive judgments (grade ≤ 0, "hard
//     negatives") round-robin across queries — queries by id, the first
//     negative of each, then the second of each, and so on; then the source
//     corpus in order, looking only at its first max(3·DocLimit,
//     DocLimit+|wanted|) non-empty documents (wanted: the distinct positives
//     and negatives). A document is skipped when its id is already kept or
//     its text equals a kept document's.
//  3. Judgments whose document was not kept are dropped, then queries left
//     without judgments; at most CandidateDepth positives are kept per query
//     (HAKARI caps them at its BM25 depth). Only positives are kept.
//
// "Qrels order" is the order HAKARI read its qrels rows in. ir.Qrels is a
// map and the dataset readers keep no row order, so here it is the order of
// the queries in the query file, each query's documents by id (byte order).
// Qrels files usually list judgments grouped by query in query-file order,
// so mostly the order of documents within a query can differ from HAKARI's.
// That order shows in the Nano corpus's first rows and the qrels rows, and
// decides which positives survive only when the positives alone overflow
// DocLimit or a query has more than CandidateDepth of them.
//
// # Candidate subsets
//
//   - bm25: the top CandidateDepth (500) documents of the Nano corpus by BM25.
//     HAKARI ranks with bm25s' Robertson variant (k1 1.5, b 0.75) and its
//     english_porter_stop tokenizer, which is not reproduced here: the default
//     is our Robertson scheme with the lucene-english analyzer, so rankings are
//     close to, not identical with, the published subsets. As in the
//     reranking_hybrid builder that produced NanoR2MED's bm25 config, missing
//     positives are not forced into the list (the older nano builder's step).
//   - dense: the caller's dense ranking of the Nano corpus (Options.Dense, or
//     Set.AddDense after Build has chosen the corpus), cut to CandidateDepth,
//     under the config name DenseConfig. NanoR2MED's is harrier_oss_v1_270m.
//   - reranking_hybrid: reciprocal rank fusion (k=100) of the bm25 and dense
//     lists, ordered by (−score, best source rank, doc id), cut to
//     min(HybridDepth, |corpus|); when that holds no positive, one positive
//     drawn at random is appended (the rank-101 safeguard). It needs both
//     lists, so it is built only when a dense run is given.
//
// The safeguard draw is HAKARI's exactly: CPython's
// random.Random(f"{seed}\0{split}\0{query_id}\0positive_safeguard")
// .choice(sorted positives in the corpus), reproduced bit for bit (Mersenne
// Twister seeded from the string's SHA-512, choice by rejection sampling on
// getrandbits), with seed 20260524. The split name is part of the seed, so
// Options.Split must be the split name the set is published under.
package nano

import (
	"errors"
	"fmt"
	"strings"

	"github.com/r2med/r2med/bm25"
	"github.com/r2med/r2med/ir"
)

// Defaults, HAKARI-Bench's for NanoR2MED.
const (
	DefaultQueryLimit     = 200
	DefaultDocLimit       = 10_000
	DefaultCandidateDepth = 500
	DefaultHybridDepth    = 100
	DefaultRRFK           = 100
	DefaultSeed           = 20260524
	DefaultAnalyzer       = "lucene-english"
	DefaultDenseConfig    = "dense"
)

// Config names of the subsets every set or hybrid set has.
const (
	BM25Config   = "bm25"
	HybridConfig = "reranking_hybrid"
)

// Options tune Build. The zero value gives HAKARI-Bench's settings; zero
// fields take the defaults above.
type Options struct {
	// Split is the name the set is published under (NanoR2MEDBiology); it
	// seeds the safeguard draw. Empty means the task's name.
	Split string

	QueryLimit int
	DocLimit   int
	// KeepDuplicateTexts keeps queries and documents whose text repeats an
	// earlier one's (HAKARI's dedupe_*_texts=False).
	KeepDuplicateTexts bool

	// CandidateDepth is the length of the bm25 and dense lists, and the cap
	// on positives per query.
	CandidateDepth int
	// BM25 defaults to the Robertson scheme with k1 1.5, b 0.75.
	BM25 bm25.Params
	// Analyzer names the analysis analyzer for BM25.
	Analyzer string
	// Workers for indexing and search; 0 means GOMAXPROCS.
	Workers int

	// Dense, when given, is a dense ranking of the Nano corpus for the Nano
	// queries (best first). Its documents must all be in the Nano corpus;
	// queries it lacks get empty lists. It is written under DenseConfig.
	Dense       ir.Run
	DenseConfig string

	// HybridDepth is how many fused documents reranking_hybrid keeps before
	// the safeguard; RRFK the fusion constant; Seed the safeguard seed.
	HybridDepth int
	RRFK        float64
	Seed        int64
}

func (o Options) withDefaults(task *ir.Task) Options {
	if o.Split == "" {
		o.Split = task.Name
	}
	if o.QueryLimit == 0 {
		o.QueryLimit = DefaultQueryLimit
	}
	if o.DocLimit == 0 {
		o.DocLimit = DefaultDocLimit
	}
	if o.CandidateDepth == 0 {
		o.CandidateDepth = DefaultCandidateDepth
	}
	if o.BM25.Scheme == "" {
		o.BM25 = bm25.DefaultParams(bm25.Robertson)
	}
	if o.Analyzer == "" {
		o.Analyzer = DefaultAnalyzer
	}
	if o.DenseConfig == "" {
		o.DenseConfig = DefaultDenseConfig
	}
	if o.HybridDepth == 0 {
		o.HybridDepth = DefaultHybridDepth
	}
	if o.RRFK == 0 {
		o.RRFK = DefaultRRFK
	}
	if o.Seed == 0 {
		o.Seed = DefaultSeed
	}
	return o
}

func (o Options) validate() error {
	switch {
	case o.QueryLimit < 0, o.DocLimit < 0, o.CandidateDepth < 0, o.HybridDepth < 0:
		return fmt.Errorf("nano: query limit, document limit and depths must be positive")
	case !(o.RRFK > 0):
		return fmt.Errorf("nano: RRF constant must be positive, got %v", o.RRFK)
	case o.DenseConfig == BM25Config || o.DenseConfig == HybridConfig || reservedConfig(o.DenseConfig):
		return fmt.Errorf("nano: dense config name %q is taken by another config", o.DenseConfig)
	case !validSplit(o.Split):
		return fmt.Errorf("nano: split name %q is not a Hugging Face split name (letters, digits and '_', groups joined by '.')", o.Split)
	case !validName(o.DenseConfig):
		return fmt.Errorf("nano: config name %q must be non-empty letters, digits, '_', '-' or '.'", o.DenseConfig)
	}
	return nil
}

func reservedConfig(name string) bool {
	switch name {
	case "corpus", "queries", "qrels", "metadata":
		return true
	}
	return false
}

// validSplit accepts what the datasets library accepts as a split name,
// \w+(\.\w+)* in ASCII; such names are also safe in paths and YAML.
func validSplit(s string) bool {
	for _, part := range strings.Split(s, ".") {
		if part == "" || strings.Trim(part, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") != "" {
			return false
		}
	}
	return true
}

// validName accepts config names safe as path components and YAML scalars.
func validName(s string) bool {
	if s == "" || s[0] == '.' {
		return false
	}
	for _, c := range s {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '-', c == '.':
		default:
			return false
		}
	}
	return true
}

// Set is a built Nano set: one split of each config.
type Set struct {
	Split  string
	Source string // the full task's name
	// Queries and Corpus in selection order, texts stripped; queries carry
	// no extra fields.
	Queries []ir.Query
	Corpus  []ir.Doc
	// Qrels holds the kept positive judgments with their source grades (the
	// hub's qrels config has no grade column).
	Qrels ir.Qrels
	// Subsets are bm25, then dense and reranking_hybrid when built.
	Subsets []Subset
	// Selection counts what each selection rule did.
	Selection Selection

	opts Options // resolved, for the metadata
}

// Subset is one candidate config: per query, candidates best first.
type Subset struct {
	Name   string // key in metadata: bm25, dense, reranking_hybrid
	Config string // hub config name
	Label  string
	TopK   int // list length before any safeguard
	Run    ir.Run
	// Safeguards maps a query to the positive appended after the fused
	// list because the list held none (reranking_hybrid only).
	Safeguards map[string]string
}

// Subset returns the subset with the given metadata name, or nil.
func (s *Set) Subset(name string) *Subset {
	for i := range s.Subsets {
		if s.Subsets[i].Name == name {
			return &s.Subsets[i]
		}
	}
	return nil
}

// Selection counts the selection rules' effects, under the names
// HAKARI-Bench's split metadata uses.
type Selection struct {
	SourceQueries            int `json:"source_queries"`
	SkippedEmptyQueries      int `json:"skipped_queries_without_text"`
	SkippedWithoutPositives  int `json:"skipped_queries_without_positive_qrels"`
	SkippedDuplicateQueryIDs int `json:"skipped_duplicate_query_ids"`
	SkippedDuplicateQueries  int `json:"skipped_duplicate_query_texts"`
	RemovedQueriesNoQrels    int `json:"removed_queries_after_corpus_filter"`

	SourceDocs             int `json:"source_documents"`
	SkippedEmptyDocs       int `json:"skipped_documents_without_text"`
	FillScanLimit          int `json:"fill_candidate_limit"`
	PositiveDocs           int `json:"positive_doc_count"`
	HardNegativeCandidates int `json:"source_hard_negative_doc_candidates"`
	KeptHardNegatives      int `json:"kept_hard_negative_docs"`
	MissingPositiveDocs    int `json:"missing_positive_docs"`
	MissingHardNegatives   int `json:"missing_hard_negative_docs"`
	DuplicateDocTexts      int `json:"duplicate_doc_texts_removed"`

	SourcePositiveQrels    int `json:"source_positive_qrels"`
	SourceNonPositiveQrels int `json:"source_non_positive_qrels"`
	RemovedQrelsOverCap    int `json:"removed_qrels_over_cap"`
}

// Build selects a Nano set from task and computes its candidate subsets.
func Build(task *ir.Task, opts Options) (*Set, error) {
	opts = opts.withDefaults(task)
	if err := opts.validate(); err != nil {
		return nil, err
	}
	s, err := selectSet(task, opts)
	if err != nil {
		return nil, err
	}
	if err := s.addBM25(); err != nil {
		return nil, err
	}
	if opts.Dense != nil {
		if err := s.AddDense(opts.Dense); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// AddDense adds the dense subset and the reranking_hybrid subset fused from
// it and bm25, as Options.Dense does in Build. A dense retriever can rank
// the Nano corpus only once Build has chosen it, so this is the usual way:
// Build, rank s.Corpus for s.Queries, AddDense.
func (s *Set) AddDense(dense ir.Run) error {
	switch {
	case s.Subset("bm25") == nil:
		return errors.New("nano: the set has no bm25 subset to fuse with; make it with Build")
	case s.Subset("dense") != nil:
		return errors.New("nano: the set already has a dense subset")
	}
	if err := s.addDense(dense); err != nil {
		return err
	}
	s.addHybrid()
	return nil
}
