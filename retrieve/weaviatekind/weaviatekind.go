// Package weaviatekind is the weaviate retriever kind: a Weaviate
// collection searched as one retriever of a pipeline (bm25, vector or
// hybrid). It registers the kind with package retrieve when imported, as
// database/sql drivers register with database/sql, so that the Weaviate
// client (gRPC, its OpenAPI models, BSON; about 140 packages) is linked
// only into programs that ask for the kind:
//
//	import _ "github.com/r2med/r2med/retrieve/weaviatekind"
//
// cmd/r2med imports it; retrieve, pipeline, searchapi and nano do not
// (TestClientStaysOut checks it). It also makes the vectors a collection
// is pushed with (CorpusVectors, IndexVectors), with what made them.
package weaviatekind

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"

	"gopkg.in/yaml.v3"

	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/retrieve"
	"github.com/r2med/r2med/weaviate"
)

// Weaviate searches a Weaviate collection that `r2med index push` filled
// with the task's corpus: Weaviate's BM25, its vector search over the
// vectors pushed with it, or its hybrid of both (package weaviate says
// how each scores). Vector and hybrid queries are embedded here with the
// same recipe as the dense retriever (Query), which must be the model that
// embedded the collection's documents.
//
// Resolve reads the collection before anything runs: the server version,
// its configuration and the digest of the corpus the last finished push
// wrote go into Describe, so manifests carry them and a re-pushed or
// re-tuned collection is not mistaken for the one a finished run
// searched; a collection holding another corpus than the task's, or an
// unfinished push, is refused.
type Weaviate struct {
	Search      string   `yaml:"search"`      // bm25, vector or hybrid
	URL         string   `yaml:"url"`         // REST root, http://HOST:PORT
	GRPC        string   `yaml:"grpc"`        // HOST:PORT; empty: URL's host, port 50051
	Collection  string   `yaml:"collection"`  // as pushed: a capital letter first
	Alpha       *float64 `yaml:"alpha"`       // hybrid: weight of the vector side; default weaviate.DefaultAlpha
	Fusion      string   `yaml:"fusion"`      // hybrid: relativeScoreFusion (default) or rankedFusion
	Consistency string   `yaml:"consistency"` // ONE, QUORUM or ALL; empty: Weaviate's default
	// EF is the HNSW ef for this run (vector, hybrid): the collection's
	// is set for the run and put back after (weaviate.Collection.HoldEF).
	EF *int `yaml:"ef"`
	// CheckExact measures the recall of the approximate vector search
	// against r2med's exact search over the collection's vectors.
	CheckExact bool `yaml:"check_exact"`
	// Query embeds the queries of vector and hybrid search; its keys
	// (model, backend, base_url, …) sit beside the others, as the dense
	// flags set them.
	Query retrieve.Dense `yaml:",inline"`

	state *weaviateState // read by Resolve
	// docRevision is the revision of the model that embedded the
	// collection's vectors, as its push recorded it (Resolve).
	docRevision string
}

// weaviateState is the collection as Resolve found it.
type weaviateState struct {
	info  weaviate.Info
	index weaviate.VectorIndex
}

func init() {
	retrieve.Register(retrieve.Kind{
		Name:   "weaviate",
		Usage:  "weaviate:bm25|vector|hybrid",
		Help:   "a Weaviate collection filled by r2med index push, set by --weaviate-url, --collection and (vector, hybrid) the dense flags",
		ArgKey: "search",
		Parse: func(value *yaml.Node) (retrieve.Spec, error) {
			var w Weaviate
			if err := retrieve.DecodeSettings(value, &w, "weaviate"); err != nil {
				return nil, err
			}
			return w, nil
		},
		Flags: []retrieve.Flag{
			{Name: "weaviate-url", Key: "url", Usage: "weaviate: the server's REST root, http://HOST:PORT"},
			{Name: "weaviate-grpc", Key: "grpc", Usage: "weaviate: the server's gRPC address HOST:PORT (default: the URL's host, port 50051)"},
			{Name: "collection", Key: "collection", Usage: "weaviate: the collection r2med index push filled"},
			{Name: "alpha", Key: "alpha", Type: retrieve.Float, Default: fmt.Sprint(weaviate.DefaultAlpha), Usage: "weaviate:hybrid: weight of the vector side, 0 (BM25) to 1 (vector)"},
			{Name: "fusion", Key: "fusion", Default: string(weaviate.RelativeScoreFusion), Usage: "weaviate:hybrid: relativeScoreFusion or rankedFusion"},
			{Name: "consistency", Key: "consistency", Usage: "weaviate: read consistency level, ONE, QUORUM or ALL (default: Weaviate's)"},
			{Name: "ef", Key: "ef", Type: retrieve.Int, Usage: "weaviate:vector|hybrid: HNSW ef for this run (-1: dynamic); the collection's ef is set for the run and put back after, as Weaviate takes none per query"},
			{Name: "check-exact", Key: "check_exact", Type: retrieve.Bool, Usage: "weaviate:vector|hybrid: measure recall@10 and recall@k of Weaviate's vector search against r2med's exact search over the collection's vectors (in the manifest and the summary)"},
			// The query side of the dense retriever's flags: the same flags
			// set both kinds' entries.
			{Name: "model", Key: "model", Usage: "dense: a registry model (r2med models) or, with an HTTP backend, any model the server serves"},
			{Name: "backend", Key: "backend", Usage: "dense: onnx (local), openai (any OpenAI-compatible server: vLLM, TEI, Ollama, llama.cpp), tei, voyage; default: the registry's"},
			{Name: "base-url", Key: "base_url", Type: retrieve.Strings, Usage: "dense: the embedding server's base URL (default: OPENAI_BASE_URL or the backend's); repeat it, or give a file of URLs, for a fleet of servers of one model"},
			{Name: "model-dir", Key: "model_dir", Usage: "dense, onnx: a local model directory (default: the Hub cache's copy from r2med model pull)"},
			{Name: "query-prefix", Key: "query_prefix", Usage: "dense: text put before each query (replaces the registry's instruction)"},
			{Name: "max-length", Key: "max_length", Type: retrieve.Int, Usage: "dense: maximum tokens per text (default: the registry's)"},
			{Name: "dimensions", Key: "dimensions", Type: retrieve.Int, Usage: "dense: output dimension for APIs and Matryoshka models (default: native)"},
			{Name: "batch-size", Key: "batch_size", Type: retrieve.Int, Usage: "dense: texts per batch (default: the backend's)"},
			{Name: "concurrency", Key: "concurrency", Type: retrieve.Int, Usage: "dense, HTTP: requests in flight (default: the backend's)"},
			{Name: "pooling", Key: "pooling", Usage: "dense, onnx: pooling of a model outside the registry: cls, mean, last"},
			{Name: "normalize", Key: "normalize", Type: retrieve.Bool, Usage: "dense: L2-normalize embeddings (cosine scoring normalizes anyway; this matters for quantization)"},
		},
	})
}

// Kind is "weaviate".
func (w Weaviate) Kind() string { return "weaviate" }

// Name is weaviate:SEARCH, with +MODEL for vector and hybrid.
func (w Weaviate) Name() string {
	name := "weaviate:" + w.Search
	if w.vectors() && w.Query.Model != "" {
		name += "+" + w.Query.Model
	}
	return name
}

func (w Weaviate) mode() (weaviate.Mode, error) {
	if w.Search == "" {
		return 0, errors.New("the weaviate retriever needs a search: bm25, vector or hybrid (--retriever weaviate:hybrid)")
	}
	return weaviate.ParseMode(w.Search)
}

func (w Weaviate) vectors() bool {
	m, err := w.mode()
	return err == nil && m != weaviate.BM25
}

func (w Weaviate) config() weaviate.Config {
	return weaviate.Config{URL: w.URL, GRPC: w.GRPC, Collection: w.Collection}
}

func (w Weaviate) options() (weaviate.SearchOptions, error) {
	mode, err := w.mode()
	if err != nil {
		return weaviate.SearchOptions{}, err
	}
	// A document whose id is the query's is skipped where r2med's dense
	// search skips it (BEIR's exact search), not by BM25, which r2med's
	// own BM25 ranks it in.
	o := weaviate.SearchOptions{Mode: mode, Alpha: weaviate.DefaultAlpha, Fusion: weaviate.Fusion(w.Fusion), Consistency: w.Consistency, SkipSelf: mode != weaviate.BM25}
	if w.Alpha != nil {
		o.Alpha = *w.Alpha
	}
	if o.Fusion, err = weaviate.ParseFusion(w.Fusion); err != nil {
		return o, err
	}
	return o, o.Validate()
}

// Validate checks the settings without reaching the server.
func (w Weaviate) Validate() error {
	o, err := w.options()
	if err != nil {
		return err
	}
	if w.URL == "" || w.Collection == "" {
		return errors.New("the weaviate retriever needs --weaviate-url http://HOST:PORT and --collection NAME (what r2med index push --to weaviate://HOST:PORT/NAME filled)")
	}
	if err := w.config().Validate(); err != nil {
		return err
	}
	if o.Mode != weaviate.Hybrid && (w.Alpha != nil || w.Fusion != "") {
		return fmt.Errorf("alpha and fusion apply to weaviate:hybrid, not weaviate:%s", w.Search)
	}
	if o.Mode == weaviate.BM25 && (w.EF != nil || w.CheckExact) {
		return errors.New("ef and check_exact apply to Weaviate's vector search (weaviate:vector, weaviate:hybrid), not weaviate:bm25")
	}
	if w.EF != nil && (*w.EF < -1 || *w.EF == 0) {
		return fmt.Errorf("ef %d: want -1 (dynamic) or a positive number", *w.EF)
	}
	if o.Mode != weaviate.BM25 {
		if w.Query.Model == "" {
			return fmt.Errorf("weaviate:%s embeds its queries: give the model that embedded the collection (--model, with --backend and --base-url as for --retriever dense)", w.Search)
		}
		if w.Query.Quantize != "" || w.Query.Rescore {
			return errors.New("quantize and rescore apply to r2med's own dense search, not to Weaviate's")
		}
		return w.Query.Validate()
	}
	return nil
}

// Describe records the search, the collection, and once resolved the
// server's version, the collection's configuration and the digest of the
// corpus in it; vector and hybrid add the query model's settings.
func (w Weaviate) Describe() map[string]any {
	m := map[string]any{"retriever": "weaviate", "search": w.Search, "url": w.URL, "collection": w.Collection}
	o, err := w.options()
	if err == nil && o.Mode == weaviate.Hybrid {
		m["alpha"], m["fusion"] = o.Alpha, string(o.Fusion)
	}
	if w.Consistency != "" {
		m["consistency"] = w.Consistency
	}
	if w.vectors() {
		q := w.Query.Describe()
		delete(q, "retriever")
		m["query_embedding"] = q
		if w.docRevision != "" {
			m["document_model_revision"] = w.docRevision
		}
		if w.EF != nil {
			m["ef"] = *w.EF
		}
		if w.CheckExact {
			m["check_exact"] = true
		}
	}
	if s := w.state; s != nil {
		m["server_version"] = s.info.ServerVersion
		m["corpus_digest"] = s.info.Digest
		m["collection_config"] = maps.Clone(s.info.Config)
		if w.vectors() {
			m["vector_index"] = s.index
		}
	}
	return m
}

// Inputs is none: the collection is checked by Resolve.
func (w Weaviate) Inputs(*ir.Task) ([]string, error) { return nil, nil }

// UsesCache is true for vector and hybrid search, which embed queries.
func (w Weaviate) UsesCache() bool { return w.vectors() }

// Resolve reads the collection: it must hold a finished push of task's
// corpus (the same documents and texts), and for vector and hybrid search
// the vectors of the query model.
func (w Weaviate) Resolve(ctx context.Context, task *ir.Task) (retrieve.Spec, error) {
	if err := w.Validate(); err != nil {
		return nil, err
	}
	c, err := weaviate.Open(w.config())
	if err != nil {
		return nil, err
	}
	m, err := c.Searchable(ctx)
	if err != nil {
		return nil, err
	}
	if want := weaviate.TextDigest(task.Corpus); m.TextDigest != want {
		return nil, fmt.Errorf("collection %s holds another corpus than task %s (%d documents pushed, the task has %d, or their texts differ): push the task into it (r2med index push --recreate) or name its collection", w.Collection, task.Name, m.Docs, len(task.Corpus))
	}
	if w.vectors() {
		switch {
		case m.Vectors == nil:
			return nil, fmt.Errorf("collection %s holds no vectors (pushed BM25-only): weaviate:%s needs them; push with the dense flags", w.Collection, w.Search)
		case m.Vectors.Model != w.Query.Model:
			return nil, fmt.Errorf("collection %s holds vectors of %s; its queries must be embedded by the same model, not %s", w.Collection, m.Vectors.Model, w.Query.Model)
		}
		// The query model resolved as the dense retriever resolves its
		// own: a registry model of the Hub cache at the commit that
		// embedded the documents, whatever main names since; a local
		// model directory must still be the version that did.
		q, err := w.Query.PinnedTo(m.Vectors.Revision).Resolve(ctx, task)
		if err != nil {
			return nil, err
		}
		w.Query = q.(retrieve.Dense)
		if got, want := w.Query.ModelRevision(), m.Vectors.Revision; want != "" && got != want {
			return nil, fmt.Errorf("collection %s holds vectors of %s at revision %s, and the query model %s is at revision %s: its queries would be embedded by another model than its documents; push again (r2med index push --recreate) or use the model that made them",
				w.Collection, m.Vectors.Model, want, w.Query.Model, cmp.Or(got, "none (a model behind a server)"))
		}
		w.docRevision = m.Vectors.Revision
		// The ef recorded must be the one searched with.
		if err := c.CheckLease(ctx); err != nil {
			return nil, err
		}
	}
	info, err := c.Info(ctx)
	if err != nil {
		return nil, err
	}
	vi, err := c.VectorIndex(ctx)
	if err != nil {
		return nil, err
	}
	if w.EF != nil && vi.Type != "hnsw" {
		return nil, fmt.Errorf("collection %s has a %s vector index: ef applies to HNSW only", w.Collection, vi)
	}
	w.state = &weaviateState{info: info, index: vi}
	return w, nil
}

// New opens the collection and, for vector and hybrid search, the query
// embedder; the manifest notes the collection as the server reports it.
func (w Weaviate) New(ctx context.Context, task *ir.Task, env retrieve.Env) (retrieve.Retriever, error) {
	if w.state == nil {
		s, err := w.Resolve(ctx, task)
		if err != nil {
			return nil, err
		}
		w = s.(Weaviate)
	}
	o, err := w.options()
	if err != nil {
		return nil, err
	}
	c, err := weaviate.Open(w.config())
	if err != nil {
		return nil, err
	}
	r := &weaviateRetriever{c: c, opts: o, env: env, name: w.Name(), corpus: task.Corpus, checkExact: w.CheckExact, index: w.state.index}
	env.Note("weaviate", w.state.info)
	if err := r.checkReplicas(ctx); err != nil {
		return nil, err
	}
	if o.Mode == weaviate.BM25 || o.Mode == weaviate.Hybrid && o.Alpha < 1 { // alpha 1: the vector side alone
		env.Note("weaviate_bm25_searcher", w.state.info.BM25Searcher())
		if line := weaviate.BM25Note(r.name, w.state.info); line != "" {
			env.Summary(r.name+" bm25", line)
		}
	}
	if w.vectors() {
		if r.queryEnc, err = w.Query.QueryEncoder(ctx, task.Name, env); err != nil {
			return nil, err
		}
		env.Note("dense_recipe", r.queryEnc.Recipe())
		// The ef recorded is one every node holding a replica has
		// applied: Weaviate applies a class update node by node.
		switch {
		case w.EF != nil:
			if r.hold, err = c.HoldEF(ctx, *w.EF); err != nil {
				r.Close()
				return nil, err
			}
			r.index.EF = *w.EF
			env.Note("weaviate_ef_applied", r.hold.Set)
		case r.index.Type == "hnsw":
			applied, err := c.ConfirmEF(ctx)
			if err != nil {
				r.Close()
				return nil, err
			}
			env.Note("weaviate_ef_applied", applied)
		}
		if !r.index.Exact {
			env.Summary(r.name, weaviate.ApproximateNote(r.name, r.index, nil))
		}
	}
	return r, nil
}

type weaviateRetriever struct {
	c          *weaviate.Collection
	opts       weaviate.SearchOptions
	env        retrieve.Env
	name       string
	queryEnc   *retrieve.QueryEncoder // nil for BM25
	corpus     []ir.Doc
	index      weaviate.VectorIndex // as searched: the run's ef
	checkExact bool
	hold       *weaviate.EFHold // the run's ef, put back by Close
}

// Close releases a local query encoder and puts back the collection's ef,
// noting in the manifest that every node applied it, or warning that one
// did not.
func (r *weaviateRetriever) Close() error {
	if r.queryEnc != nil {
		r.queryEnc.Close()
	}
	if r.hold == nil {
		return nil
	}
	restored, err := r.hold.Release()
	if err != nil {
		r.env.Logf("warning: putting the collection's ef back: %v", err)
		r.env.Summary(r.name+" ef", "warning: putting the collection's ef back: "+err.Error())
		return err
	}
	if len(restored.Nodes) > 0 {
		r.env.Note("weaviate_ef_restored", restored)
	}
	return nil
}

// checkReplicas warns when the collection's replicas disagree: a search
// answered by a short replica misses documents.
func (r *weaviateRetriever) checkReplicas(ctx context.Context) error {
	rep, err := r.c.Replicas(ctx)
	if err != nil {
		return err
	}
	r.env.Note("weaviate_replicas", rep)
	if problems := rep.Problems(); len(problems) > 0 {
		line := weaviate.ReplicaWarning(r.c.Config(), rep)
		r.env.Logf("warning: %s", line)
		r.env.Summary(r.name+" replicas", "warning: "+line)
	}
	return nil
}

func (r *weaviateRetriever) queries(ctx context.Context, queries []retrieve.Query) ([]weaviate.Query, error) {
	out := make([]weaviate.Query, len(queries))
	for i, q := range queries {
		out[i] = weaviate.Query{ID: q.ID, Text: q.Text}
	}
	if r.queryEnc == nil {
		return out, nil
	}
	var qvecs [][]float32
	err := r.env.Time("embed queries", func() error {
		var err error
		qvecs, err = r.queryEnc.Embed(ctx, queries)
		return err
	})
	for i := range out {
		if err == nil {
			out[i].Vector = qvecs[i]
		}
	}
	return out, err
}

// Search embeds the queries when it must and sends them to Weaviate,
// Workers at a time (stage "search").
func (r *weaviateRetriever) Search(ctx context.Context, queries []retrieve.Query, k int) (ir.Run, error) {
	wq, err := r.queries(ctx, queries)
	if err != nil {
		return nil, err
	}
	o := r.opts
	o.K, o.Workers, o.Progress = k, r.env.NumWorkers(), r.env.Progress
	var run ir.Run
	err = r.env.Time("search", func() error {
		run, err = r.c.SearchAll(ctx, wq, o)
		return err
	})
	if err == nil && r.queryEnc != nil && !r.index.Exact {
		r.index.Hits = k // what searched: a fixed ef below k is raised to k
		r.env.Summary(r.name, weaviate.ApproximateNote(r.name, r.index, nil))
	}
	if err != nil || !r.checkExact {
		return run, err
	}
	var recalls []weaviate.Recall
	err = r.env.Time("check exact", func() error {
		var err error
		recalls, err = r.c.CheckExact(ctx, r.corpus, wq, run, o)
		return err
	})
	if err != nil {
		return nil, err
	}
	r.env.Note("weaviate_exact_check", map[string]any{"recall": recalls, "compared": weaviate.ExactComparison(r.opts.Mode)})
	r.env.Summary(r.name, weaviate.ApproximateNote(r.name, r.index, recalls))
	return run, nil
}

// SearchOne sends one query.
func (r *weaviateRetriever) SearchOne(ctx context.Context, q retrieve.Query, k int) ([]ir.Hit, error) {
	wq, err := r.queries(ctx, []retrieve.Query{q})
	if err != nil {
		return nil, err
	}
	o := r.opts
	o.K = k
	return r.c.Search(ctx, wq[0], o)
}
