// Package plan is the stage plan of a retrieval experiment: what happens
// to queries once they are expanded — one or more retrievers, the fusion
// of their runs, a rerank of the top, the cut to k — with the rules that
// come with those stages, each written here once:
//
//   - depth: how deep each retriever's run is (Depth): k; for several,
//     fused, each run's top max(k, 100) (fusion.Spec.DepthFor); with a
//     rerank, at least its depth; a retriever searches at least
//     SearchDepth (R2MED's 100) and its run is cut after its ties are
//     ranked, so that the cut to k only cuts: a run of k is the top k of
//     a deeper one;
//   - naming: the system's name from its stages' short names (System,
//     by package sysname's rule), and the settings manifests record
//     (Describe);
//   - the safeguard: a NanoR2MED reranking_hybrid list's rank-101
//     positive is reranked with the rest (HAKARI's "reranking") or dropped
//     first (without_safeguard), its candidates shuffled by hash as HAKARI
//     does; other lists have no safeguard to drop;
//   - ties: every stage hands on its run ranked by its tie rule
//     (trec.Rank): a retriever's by retrieve.TiesOf, fusion's and the
//     rerank's as listed, so a stage read back from a file is the run a
//     fresh one makes and every evaluator reads the order r2med meant;
//   - fingerprints: what each stage's output depends on (its settings
//     chained on Data, the fingerprint of what it read), by which a Store
//     reuses stages and a rerank resumes its checkpoint.
//
// A Spec's rules need no validation; a Plan is a Spec validated (New),
// its retrievers resolved first (Spec.Resolve) where they read state of
// their own, and executed on an Input (Execute) with an Env that says how,
// never what: retrievers and a reranker built
// already (a search service opens its indexes once), a Store that keeps
// stage outputs (the pipeline's OUT/stages; nil keeps nothing), the meter
// model calls are counted in, the rerank's checkpoint, progress. A batch
// of queries (the pipeline, `r2med rerank`, `r2med fuse`) and a single
// one (the search service) run the same code, so each gives the ranking
// the others give.
package plan

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/r2med/r2med/expand"
	"github.com/r2med/r2med/fusion"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/models"
	"github.com/r2med/r2med/rerank"
	"github.com/r2med/r2med/retrieve"
	"github.com/r2med/r2med/sysname"
)

// Spec describes a plan's stages. Its zero value is no plan: it needs at
// least one retriever and a K.
type Spec struct {
	// Name names the system; empty derives it from the stages (System).
	Name string
	// Expansion is the generation the queries were expanded with, for the
	// system's name and description: a plan runs on queries expanded
	// already (Input.Queries).
	Expansion expand.Source
	// Retrievers rank the queries; several are fused.
	Retrievers []Retriever
	// Fuse says how several retrievers' runs become one.
	Fuse fusion.Spec
	// Rerank, when set, reorders the top of the (fused) run.
	Rerank *Rerank
	// K is the documents kept per query at the end.
	K int
}

// Retriever is one retriever of a plan.
type Retriever struct {
	Spec retrieve.Spec
	// Name is the retriever in the system's name; empty means
	// Spec.Name(). A search service names an index's part by its file
	// ("nfcorpus:dense"); commands that rerank or fuse run files name the
	// system a file holds ("bm25"), not the file as a retriever
	// ("run:bm25").
	Name string
}

// name is the retriever as the system's name shows it.
func (r Retriever) name() string {
	if r.Name != "" {
		return r.Name
	}
	return r.Spec.Name()
}

// Rerank is a plan's rerank stage.
type Rerank struct {
	// Scorer is the reranker's settings (kind, model, prompts); Execute
	// builds it with rerank.New unless Env.Scorer is one built already
	// (then a Name without a kind will do). Its servers, cache and replay
	// are the caller's; its Meter is set by Execute.
	Scorer rerank.Spec
	// Name is the reranker in the system's name; empty means
	// sysname.Reranker(kind, model).
	Name string
	// Depth is how many documents each query has reranked: 0 means
	// rerank.DefaultDepth (R2MED's 100), -1 every document.
	Depth int
	// KeepTail keeps the documents below Depth after the reranked ones;
	// R2MED keeps only the reranked ones.
	KeepTail bool
	// WithoutSafeguard drops a reranking_hybrid list's rank-101
	// safeguard before reranking (HAKARI's reranking_without_safeguard).
	WithoutSafeguard bool
	// Ties orders equal scores: "input" (the first stage's order) or
	// "hash" (HAKARI-Bench's sha256 candidate order); empty means hash for
	// a reranking_hybrid list, whose reranking HAKARI defines, else input.
	Ties string
	// BatchSize caps the documents of one Score call (0: a query's all);
	// Workers is how many queries are reranked at once (0: one).
	BatchSize, Workers int

	// modelRevision is the version of Scorer.ModelDir's model
	// (models.LocalRevision), read by Spec.Resolve.
	modelRevision string
}

// depth is the rerank depth with 0 read as rerank.DefaultDepth.
func (r Rerank) depth() int {
	if r.Depth == 0 {
		return rerank.DefaultDepth
	}
	return r.Depth
}

// name is the reranker as the system's name shows it.
func (r Rerank) name() string {
	if r.Name != "" {
		return r.Name
	}
	return sysname.Reranker(r.Scorer.Kind, r.Scorer.Model)
}

// Rerank tie orders (Rerank.Ties).
const (
	TiesInput = "input"
	TiesHash  = "hash"
)

// Plan is a validated Spec. Its methods are safe for concurrent use.
type Plan struct {
	spec Spec
}

// New validates spec: at least one retriever, each valid; a fusion valid
// for them; a known reranker with a depth and tie order it takes; a
// positive K. Whether a safeguard can be dropped is known only once the
// retrievers have read their data (retrieve.Resolve), and is checked by
// Execute.
func New(spec Spec) (*Plan, error) {
	if len(spec.Retrievers) == 0 {
		return nil, errors.New("no retriever: a plan ranks with at least one")
	}
	for i, r := range spec.Retrievers {
		if r.Spec == nil {
			return nil, fmt.Errorf("retriever %d is missing", i+1)
		}
		if err := r.Spec.Validate(); err != nil {
			if len(spec.Retrievers) > 1 {
				return nil, fmt.Errorf("retriever %d (%s): %w", i+1, r.Spec.Kind(), err)
			}
			return nil, err
		}
	}
	if spec.K <= 0 {
		return nil, fmt.Errorf("k must be positive, got %d", spec.K)
	}
	if len(spec.Retrievers) > 1 {
		if err := spec.Fuse.Validate(len(spec.Retrievers)); err != nil {
			return nil, err
		}
	}
	if r := spec.Rerank; r != nil {
		switch kind := strings.ToLower(r.Scorer.Kind); {
		case kind == "" && r.Name == "":
			return nil, fmt.Errorf("a rerank needs its kind (%s)", strings.Join(rerank.Kinds, ", "))
		case kind != "" && !slices.Contains(rerank.Kinds, kind):
			return nil, fmt.Errorf("unknown reranker %q (%s)", r.Scorer.Kind, strings.Join(rerank.Kinds, ", "))
		}
		if r.Depth < -1 {
			return nil, fmt.Errorf("rerank depth must be positive, or -1 for every document; got %d", r.Depth)
		}
		if r.Ties != "" && r.Ties != TiesInput && r.Ties != TiesHash {
			return nil, fmt.Errorf("unknown rerank tie order %q (input or hash)", r.Ties)
		}
	}
	spec.Retrievers = slices.Clone(spec.Retrievers)
	return &Plan{spec: spec}, nil
}

// Spec is the plan's description.
func (p *Plan) Spec() Spec {
	s := p.spec
	s.Retrievers = slices.Clone(s.Retrievers)
	return s
}

// SearchDepth is the least depth a retriever searches, R2MED's (its
// BM25 keeps each query's top 100 of a stable sort, BEIR's dense search
// its top 100), whatever the plan's Depth: a retriever's list may hold
// tied scores in an order of its own at its cutoff (R2MED's and bm25s's
// BM25 keep ties, zero scores among them, in corpus order; Anserini's by
// doc id ascending), while its run means them by doc id descending, as
// trec_eval reads them (retrieve.TiesOf). Searched only k deep, a run's
// top k would be another set than the top k of the ranking R2MED
// evaluates, and a run of 10 not the top of a run of 100; searched 100
// deep, ranked and then cut, every k up to 100 is the top k of R2MED's
// ranking. (A run deeper than 100 keeps the retriever's own order at its
// own cutoff, as BRIGHT's 1000 do.)
const SearchDepth = 100

// Rules is what the plan's outputs depend on besides its settings and
// data: how r2med ranks (retrieve.Revision) and, for a plan whose Depth
// is under SearchDepth, that its retrievers search SearchDepth deep
// (which they did not before). Every stage's fingerprint is chained on
// it, and a finished run's (the pipeline's), so that an output made by
// an r2med that ranked otherwise is made again, not reused.
func (s Spec) Rules() map[string]any {
	rules := map[string]any{"revision": retrieve.Revision}
	if s.Depth() < SearchDepth {
		rules["searched"] = SearchDepth
	}
	return rules
}

// fused reports whether several retrievers' runs are fused.
func (s Spec) fused() bool { return len(s.Retrievers) > 1 }

func (p *Plan) fused() bool { return p.spec.fused() }

// Depth is how deep each retriever's run is, the one depth rule: K; for
// several retrievers, fused, the depth each contributes (at least 100,
// fusion.Spec.DepthFor), since fusing only each run's top k would drop
// what one run ranks k+1st and another 1st; with a rerank, at least the
// rerank's depth. The fused run is as deep; the rerank reorders its top,
// and the cut keeps K. A retriever searches deeper when Depth is under
// SearchDepth (SearchDepth says why).
func (s Spec) Depth() int {
	d := s.K
	if s.fused() {
		d = s.Fuse.DepthFor(s.K)
	}
	if s.Rerank != nil {
		d = max(d, s.Rerank.depth())
	}
	return d
}

// Stages are the system's stages by their short names, what the one
// naming rule (sysname) names it by.
func (s Spec) Stages() sysname.Stages {
	st := sysname.Stages{Expansion: sysname.Expansion(s.Expansion.Method, s.Expansion.LLM), Fusion: s.Fuse.Name()}
	for _, r := range s.Retrievers {
		st.Retrievers = append(st.Retrievers, r.name())
	}
	if r := s.Rerank; r != nil {
		st.Reranker, st.Depth = r.name(), max(r.depth(), 0)
	}
	return st
}

// System is the system's name: Name when set, else its stages by
// sysname's rule: "bm25", "hyde/gpt4 → bm25",
// "rrf(bm25,bge) → insertrank:deepseek-r1@20".
func (s Spec) System() string {
	if s.Name != "" {
		return s.Name
	}
	return s.Stages().Name()
}

// Tag is the system's name as a TREC run tag (sysname.Tag), what a run
// file of the system carries.
func (s Spec) Tag() string { return sysname.Tag(s.System()) }

// Describe is every setting of the stages that changes the ranking, and
// nothing else, as manifests record it and fingerprints hash it. One
// retriever's settings sit at the top level; several are listed under
// "retrievers" with the "fusion" that combines them (with the parts'
// names, as the system's name lists them), which is how a fused system is
// told apart.
func (s Spec) Describe() map[string]any {
	var m map[string]any
	if s.fused() {
		var rs []map[string]any
		for _, r := range s.Retrievers {
			rs = append(rs, r.Spec.Describe())
		}
		f := s.Fuse.Describe()
		f["retrievers"] = s.Stages().Retrievers
		m = map[string]any{"retrievers": rs, "fusion": f}
	} else {
		m = s.Retrievers[0].Spec.Describe()
	}
	m["top_k"] = s.K
	if s.Name != "" {
		// The display name is the system's identity in leaderboards: a
		// renamed system is rewritten, not reused under its old name.
		m["name"] = s.Name
	}
	if s.Expansion.Method != "" {
		m["gar_method"] = s.Expansion.Method
		m["gar_llm"] = s.Expansion.LLM
	}
	if r := s.Rerank; r != nil {
		d := map[string]any{"kind": r.Scorer.Kind, "depth": r.depth()}
		if r.Scorer.Model != "" {
			d["model"] = r.Scorer.Model
		}
		if r.KeepTail {
			d["keep_tail"] = true
		}
		if r.WithoutSafeguard {
			d["without_safeguard"] = true
		}
		if r.Ties != "" {
			d["ties"] = r.Ties
		}
		if r.modelRevision != "" {
			// A local cross-encoder: which model, and how it reads.
			d["model_revision"] = r.modelRevision
		}
		if ce := r.Scorer.CrossEncoder; ce.MaxLength != 0 || ce.Head != 0 {
			d["max_length"], d["head"] = ce.MaxLength, ce.Head
		}
		if settings, _ := r.Scorer.Settings(); settings != nil {
			// The reasoning rerankers' prompts and knobs change the
			// rankings.
			d["settings"] = settings
		}
		m["rerank"] = d
	}
	return m
}

// Resolve reads what the retrievers' rankings and names depend on outside
// their settings (retrieve.Resolve: a run file's tag, the config a
// candidate list's name stands for and whether it has scores, an index
// file, a search server's collection, a local model's version), and the
// version of a local reranker's model, so that the system's name, its
// description, every fingerprint and the safeguard rule carry it.
func (s Spec) Resolve(ctx context.Context, task *ir.Task) (Spec, error) {
	s.Retrievers = slices.Clone(s.Retrievers)
	for i, r := range s.Retrievers {
		var err error
		if s.Retrievers[i].Spec, err = retrieve.Resolve(ctx, r.Spec, task); err != nil {
			return s, err
		}
	}
	if r := s.Rerank; r != nil && r.Scorer.ModelDir != "" {
		rr := *r
		rr.modelRevision = models.LocalRevision(r.Scorer.ModelDir)
		s.Rerank = &rr
	}
	return s, nil
}

// Inputs lists the files the retrievers read for task besides the task's
// own (run files, candidate lists, index files), once each, so that a
// changed file is not mistaken for the one an earlier run read.
func (s Spec) Inputs(task *ir.Task) ([]string, error) {
	var files []string
	for _, r := range s.Retrievers {
		fs, err := r.Spec.Inputs(task)
		if err != nil {
			return nil, err
		}
		for _, f := range fs {
			if !slices.Contains(files, f) {
				files = append(files, f)
			}
		}
	}
	return files, nil
}
