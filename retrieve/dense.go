package retrieve

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/r2med/r2med/embed"
	"github.com/r2med/r2med/hub"
	"github.com/r2med/r2med/internal/errtext"
	"github.com/r2med/r2med/internal/httpx"
	"github.com/r2med/r2med/internal/yamlx"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/models"
	"github.com/r2med/r2med/vector"
)

// Dense is embedding retrieval: a registry model (package models) with
// its R2MED recipe, or any model an HTTP backend or a local ONNX export
// serves. Documents and queries are embedded with the model's
// instructions, pooling and lengths, and documents are ranked by cosine
// similarity (BEIR's cos_sim), skipping a document whose id is the
// query's (BEIR's DenseRetrievalExactSearch). A query with a dense GAR
// input (Query.Dense) follows R2MED's rule: one combined text, or the
// query's and the generation's embeddings averaged.
type Dense struct {
	Model   string `yaml:"model"`   // registry name or alias, or a model id for HTTP backends
	Backend string `yaml:"backend"` // onnx, openai, tei, voyage; empty: the registry's choice
	// BaseURLs are the HTTP backend's servers: one, or a fleet of servers
	// of the same model (a value may also be a file of URLs,
	// httpx.ReadURLs); empty: the backend's default or environment.
	BaseURLs yamlx.Strings `yaml:"base_url"`
	// ModelDir is a local ONNX model directory (model.onnx or
	// onnx/model.onnx, tokenizer.json); empty: the Hub cache's copy of
	// the registry model, fetched by `r2med model pull`.
	ModelDir string `yaml:"model_dir"`
	// QueryPrefix and DocPrefix replace the registry's instructions when
	// set ("" for a model outside the registry means none).
	QueryPrefix *string `yaml:"query_prefix"`
	DocPrefix   *string `yaml:"doc_prefix"`
	MaxLength   int     `yaml:"max_length"`  // tokens; 0: the registry's
	Dimensions  int     `yaml:"dimensions"`  // requested output dimension (OpenAI, Voyage, Matryoshka); 0: native
	Normalize   bool    `yaml:"normalize"`   // L2-normalize embeddings (cosine scoring normalizes anyway)
	BatchSize   int     `yaml:"batch_size"`  // texts per request, fixed; 0: adapted to the server (HTTP) or the backend's default
	Concurrency int     `yaml:"concurrency"` // HTTP requests in flight per server, fixed; 0: adapted to each server
	// Encoding is what OpenAI-compatible and Voyage servers are asked to
	// write vectors as: auto (base64, floats for a server that refuses
	// it), base64 or float; empty is auto.
	Encoding string `yaml:"encoding"`
	// Pooling (cls, mean, last) says how a local model outside the
	// registry pools token vectors; registry models bring their own.
	Pooling string `yaml:"pooling"`
	// Quantize searches an int8 or binary copy of the document vectors
	// (HAKARI-Bench's embedding variants); Rescore reorders the quantized
	// top candidates by their float32 scores.
	Quantize string `yaml:"quantize"`
	Rescore  bool   `yaml:"rescore"`

	// modelRevision is the version of the model that embeds, read by
	// Resolve: ModelDir's (models.LocalRevision: a hash of the content of
	// its graph, weights, tokenizer and configs), or the commits a registry model's checkpoints resolve to in
	// the Hub cache ("+" between a dual encoder's two), which New then
	// loads (commits), whatever refs/main names by then. An index file's
	// recipe pins the commits its vectors were made with (StoredDense).
	modelRevision string
	commits       []string
}

func init() {
	Register(Kind{
		Name:  "dense",
		Usage: "dense",
		Help:  "embedding retrieval, set by --model, --backend and the other dense flags",
		Parse: func(value *yaml.Node) (Spec, error) {
			var d Dense
			if err := DecodeSettings(value, &d, "dense"); err != nil {
				return nil, err
			}
			return d, nil
		},
		Flags: []Flag{
			{Name: "model", Key: "model", Usage: "dense: a registry model (r2med models) or, with an HTTP backend, any model the server serves"},
			{Name: "backend", Key: "backend", Usage: "dense: onnx (local), openai (any OpenAI-compatible server: vLLM, TEI, Ollama, llama.cpp), tei, voyage; default: the registry's"},
			{Name: "base-url", Key: "base_url", Type: Strings, Usage: "dense: the embedding server's base URL (default: OPENAI_BASE_URL or the backend's); repeat it, or give a file of URLs, for a fleet of servers of one model"},
			{Name: "model-dir", Key: "model_dir", Usage: "dense, onnx: a local model directory (default: the Hub cache's copy from r2med model pull)"},
			{Name: "query-prefix", Key: "query_prefix", Usage: "dense: text put before each query (replaces the registry's instruction)"},
			{Name: "doc-prefix", Key: "doc_prefix", Usage: "dense: text put before each document (replaces the registry's)"},
			{Name: "max-length", Key: "max_length", Type: Int, Usage: "dense: maximum tokens per text (default: the registry's)"},
			{Name: "dimensions", Key: "dimensions", Type: Int, Usage: "dense: output dimension for APIs and Matryoshka models (default: native)"},
			{Name: "batch-size", Key: "batch_size", Type: Int, Usage: "dense: texts per batch, fixed (default: adapted to the server over HTTP, from 64; the backend's locally)"},
			{Name: "concurrency", Key: "concurrency", Type: Int, Usage: "dense, HTTP: requests in flight per server, fixed (default: adapted to each server, from 4)"},
			{Name: "encoding", Key: "encoding", Usage: "dense, openai/voyage: how servers write vectors: auto (base64, floats for a server that refuses it), base64 or float"},
			{Name: "pooling", Key: "pooling", Usage: "dense, onnx: pooling of a model outside the registry: cls, mean, last"},
			{Name: "quantize", Key: "quantize", Usage: "dense: search int8 or binary copies of the document vectors (HAKARI-Bench's variants)"},
			{Name: "rescore", Key: "rescore", Type: Bool, Usage: "dense, with --quantize: reorder the quantized top candidates by their float32 scores"},
			{Name: "normalize", Key: "normalize", Type: Bool, Usage: "dense: L2-normalize embeddings (cosine scoring normalizes anyway; this matters for quantization)"},
		},
	})
}

// Kind is "dense".
func (d Dense) Kind() string { return "dense" }

// Name is the model as given.
func (d Dense) Name() string {
	if d.Model == "" {
		return "dense"
	}
	return d.Model
}

// Validate checks that a model is named and the quantization is known.
func (d Dense) Validate() error {
	if d.Model == "" {
		return errors.New("the dense retriever needs a model (--model NAME; `r2med models` lists the registry)")
	}
	switch d.Quantize {
	case "", "int8", "binary":
	default:
		return fmt.Errorf("unknown quantization %q (int8 or binary)", d.Quantize)
	}
	if d.Rescore && d.Quantize == "" {
		return errors.New("rescoring applies to a quantized search (--quantize int8|binary)")
	}
	if _, err := embed.ParseEncoding(d.Encoding); err != nil {
		return err
	}
	if err := d.checkMaxLength(); err != nil {
		return err
	}
	return d.checkPooling()
}

// checkMaxLength refuses a --max-length the backend cannot be asked for,
// which the run's settings and cache keys would record while the server
// cut elsewhere: TEI's /embed cuts at the server's --max-input-length,
// Voyage's API at the model's context, and OpenAI's own API (a hosted
// registry model) takes no length and refuses vLLM's field.
func (d Dense) checkMaxLength() error {
	if d.MaxLength <= 0 {
		return nil
	}
	m, known := models.Lookup(d.Model)
	b := strings.ToLower(d.Backend)
	if b == "" && known {
		b = m.Backends[0]
	}
	switch {
	case b == models.TEI:
		return fmt.Errorf("--max-length %d with --backend tei: TEI's /embed takes no length and cuts at the server's own (its --max-input-length); start TEI with --max-input-length %d and drop --max-length, or serve the model through an OpenAI-compatible route (--backend openai: vLLM's truncate_prompt_tokens)", d.MaxLength, d.MaxLength)
	case b == models.Voyage:
		return fmt.Errorf("--max-length %d with --backend voyage: Voyage's API takes no length and cuts at the model's context; drop --max-length", d.MaxLength)
	case known && m.Hosted:
		return fmt.Errorf("--max-length %d with %s (%s, the provider's API): the API takes no length to cut at and refuses vLLM's truncate_prompt_tokens; drop --max-length", d.MaxLength, m.Name, m.HubID)
	}
	return nil
}

// checkPooling refuses a pooling the run would not apply while its
// settings recorded it: a registry model pools as its recipe says, and a
// server pools its own vectors.
func (d Dense) checkPooling() error {
	if d.Pooling == "" {
		return nil
	}
	p, err := embed.ParsePooling(d.Pooling)
	if err != nil {
		return err
	}
	if m, ok := models.Lookup(d.Model); ok {
		if p != m.Pooling {
			return fmt.Errorf("model %s is in the registry, whose recipe pools %s (r2med model show %s); --pooling %s applies to a local model outside the registry (--model-dir)", m.Name, m.Pooling, m.Name, d.Pooling)
		}
		return nil
	}
	if b := strings.ToLower(d.Backend); b != "" && b != models.ONNX {
		return fmt.Errorf("--pooling %s with --backend %s: the server pools its own vectors; --pooling applies to a local ONNX model (--backend onnx --model-dir)", d.Pooling, d.Backend)
	}
	return nil
}

// Describe records the model and every setting given that can change a
// ranking; the recipe the model resolves to (instructions, revision) is
// noted when the retriever is built ("dense_recipe"), and how texts were
// sent (batch size, requests in flight, encoding: they change speed, not
// vectors) once they were ("embedding"). Keys and URLs are never
// recorded.
func (d Dense) Describe() map[string]any {
	m := map[string]any{"retriever": "dense", "model": d.Model}
	put := func(k string, v any, set bool) {
		if set {
			m[k] = v
		}
	}
	put("backend", d.Backend, d.Backend != "")
	put("query_prefix", deref(d.QueryPrefix), d.QueryPrefix != nil)
	put("doc_prefix", deref(d.DocPrefix), d.DocPrefix != nil)
	put("max_length", d.MaxLength, d.MaxLength > 0)
	put("dimensions", d.Dimensions, d.Dimensions > 0)
	put("normalize", true, d.Normalize)
	put("pooling", d.Pooling, d.Pooling != "")
	put("quantize", d.Quantize, d.Quantize != "")
	put("rescore", true, d.Rescore)
	put(modelRevisionKey, d.modelRevision, d.modelRevision != "")
	return m
}

// modelRevisionKey is where Describe records the model's revision.
const modelRevisionKey = "model_revision"

// Resolve reads the version of the local model that embeds, so that
// Describe, and with it the manifest and every fingerprint, carries it:
// for ModelDir, a hash of the content of its graph, the weights the graph
// keeps beside it, its tokenizer and configs (as the embedding cache keys
// it), so a model replaced in its directory, even by one of the same size
// and times, is not taken for the one an earlier run embedded with; for a registry
// model run from the Hub cache, the commit of each checkpoint (what
// refs/main names now; fetched when online and missing, as New would),
// which New then loads, so a newer main pulled later is another model, not
// the one a finished run or a kept stage was made with; commits already
// pinned (an index file's, StoredDense) are the ones checked and loaded. A
// model behind a server has no version to read.
func (d Dense) Resolve(ctx context.Context, _ *ir.Task) (Spec, error) {
	m, fromHub := d.hubModel()
	switch {
	case d.ModelDir != "":
		d.modelRevision, d.commits = models.LocalRevision(d.ModelDir), nil
	case fromHub:
		cps, err := d.checkpoints(ctx, m)
		if err != nil {
			return nil, err
		}
		d.commits = nil
		for _, cp := range cps {
			d.commits = append(d.commits, cp.Commit)
		}
		d.modelRevision = strings.Join(d.commits, "+")
	default:
		d.modelRevision, d.commits = "", nil
	}
	return d, nil
}

// pin makes d load the registry model's checkpoints at the commits
// revision names (as Resolve records them), when d runs a registry model
// from the Hub cache and revision is such a record; it reports whether it
// did.
func (d *Dense) pin(revision string) bool {
	m, ok := d.hubModel()
	commits := strings.Split(revision, "+")
	if !ok || len(commits) != len(m.HubIDs()) {
		return false
	}
	for _, c := range commits {
		if !hub.IsCommit(c) {
			return false
		}
	}
	d.commits, d.modelRevision = commits, revision
	return true
}

// localRevision is ModelDir's revision: Resolve's, else read now. Reading
// it hashes every byte of the model, so a resolved Dense does it once.
func (d Dense) localRevision() string {
	if d.modelRevision != "" {
		return d.modelRevision
	}
	return models.LocalRevision(d.ModelDir)
}

// ModelRevision is the version of the model that embeds, as Resolve read
// it (or PinnedTo set it) and Describe records it as model_revision: ""
// before Resolve, and for a model behind a server.
func (d Dense) ModelRevision() string { return d.modelRevision }

// PinnedTo is d loading a registry model's checkpoints from the Hub cache
// at the commits revision names (as ModelRevision records them), whatever
// refs/main names: the model that embedded stored vectors (an index file,
// a Weaviate collection) embeds their queries. Where d runs no such model
// or revision is no such record, d is returned as it is.
func (d Dense) PinnedTo(revision string) Dense {
	d.pin(revision)
	return d
}

// hubModel is the registry model d runs from the Hub cache: a registry
// model, on the local ONNX backend (given, or the registry's first), with
// no ModelDir.
func (d Dense) hubModel() (models.Model, bool) {
	m, ok := models.Lookup(d.Model)
	if !ok || d.ModelDir != "" || !m.Local() {
		return m, false
	}
	b := strings.ToLower(d.Backend)
	if b == "" {
		b = m.Backends[0]
	}
	return m, b == models.ONNX
}

// checkpoints are the Hub cache's files of registry model m: at the
// commits Resolve read or an index pinned, else at main.
func (d Dense) checkpoints(ctx context.Context, m models.Model) ([]models.Checkpoint, error) {
	c := hub.FromEnv()
	ids := m.HubIDs()
	if len(d.commits) != len(ids) {
		cps, err := m.Pull(ctx, c, "")
		if err != nil {
			return nil, fmt.Errorf("%w (r2med model pull %s fetches it; --model-dir DIR uses a local copy)", err, m.Name)
		}
		return cps, nil
	}
	var cps []models.Checkpoint
	for i, id := range ids {
		cp, err := models.Pull(ctx, c, id, d.commits[i])
		if err != nil {
			return nil, fmt.Errorf("model %s: %w (r2med model pull %s --revision %s fetches that commit; --model-dir DIR uses a local copy)", m.Name, err, id, d.commits[i])
		}
		cps = append(cps, cp)
	}
	return cps, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// Inputs is none: models are identified by their revision in the cache
// keys and the recipe.
func (d Dense) Inputs(*ir.Task) ([]string, error) { return nil, nil }

// UsesCache is true: embeddings are cached, and embedding a corpus takes
// long enough that pipelines keep the run to resume from.
func (d Dense) UsesCache() bool { return true }

// denseChunk is how many documents go to the embedder per call: small
// enough for a lively progress bar, large enough to fill batches.
const denseChunk = 1024

// New embeds the corpus (stage "embed documents") into the search index
// the settings ask for.
func (d Dense) New(ctx context.Context, task *ir.Task, env Env) (Retriever, error) {
	r, err := newDenseRecipe(ctx, d, task.Name, env)
	if err != nil {
		return nil, err
	}
	r.note(env)
	var flat *vector.Flat
	err = env.Time("embed documents", func() error {
		var err error
		flat, err = r.embedCorpus(ctx, task.Corpus, env)
		return err
	})
	if err != nil {
		r.close()
		return nil, err
	}
	env.Count("dimensions", flat.Dim())
	dr := &denseRetriever{recipe: r, env: env, index: flat}
	switch d.Quantize {
	case "int8":
		dr.index = vector.NewInt8(flat)
	case "binary":
		dr.index = vector.NewBinary(flat)
	}
	return dr, nil
}

// Over is the retriever over document vectors made elsewhere (a stored
// index) with d's recipe: only queries are embedded. docs must hold the
// vectors d's recipe makes of task's corpus, in the form d.Quantize
// names; d.Rescore applies as in New.
func (d Dense) Over(ctx context.Context, task string, docs vector.Index, env Env) (Retriever, error) {
	if err := d.Validate(); err != nil {
		return nil, err
	}
	r, err := newDenseRecipe(ctx, d, task, env)
	if err != nil {
		return nil, err
	}
	r.note(env)
	return &denseRetriever{recipe: r, env: env, index: docs}, nil
}

// CorpusVectors embeds task's documents with d's recipe exactly as the
// dense retriever does (instructions, lengths, the cache), in corpus
// order: the vectors an index file stores (r2med index build) and a
// Weaviate collection is pushed (r2med index push).
func (d Dense) CorpusVectors(ctx context.Context, task *ir.Task, env Env) (*vector.Flat, error) {
	if err := d.Validate(); err != nil {
		return nil, err
	}
	r, err := newDenseRecipe(ctx, d, task.Name, env)
	if err != nil {
		return nil, err
	}
	defer r.close()
	flat, err := r.embedCorpus(ctx, task.Corpus, env)
	if err == nil {
		// What the local encoder cut is said as a run says it.
		(&denseRetriever{recipe: r, env: env}).countTruncated()
	}
	return flat, err
}

// denseRetriever searches embedded documents.
type denseRetriever struct {
	recipe *denseRecipe
	env    Env
	index  vector.Index
}

// Close releases a local model.
func (r *denseRetriever) Close() error {
	r.recipe.close()
	return nil
}

// Search embeds the queries (stage "embed queries") and scans the index
// (stage "search").
func (r *denseRetriever) Search(ctx context.Context, queries []Query, k int) (ir.Run, error) {
	var qvecs [][]float32
	rt := newRate()
	if err := r.env.Time("embed queries", func() error {
		var err error
		qvecs, err = r.recipe.embedQueries(ctx, queries)
		return err
	}); err != nil {
		return nil, err
	}
	tokens := 0
	for _, q := range queries {
		tokens += embed.EstimateTokens(r.recipe.queryPrefix + q.denseInput().Query)
	}
	rt.add(len(queries), tokens)
	r.recipe.noteEmbedding(r.env, "queries", rt)
	r.countCache()
	run := make(ir.Run, len(queries))
	err := r.env.Time("search", func() error {
		qids := make([]string, len(queries))
		for i, q := range queries {
			qids[i] = q.ID
		}
		hits, err := r.index.Search(qvecs, k, vector.SearchOptions{Workers: r.env.Workers, SkipSelf: true, QueryIDs: qids, Rescore: r.recipe.d.Rescore})
		if err != nil {
			return err
		}
		for i, q := range queries {
			run[q.ID] = denseHits(hits[i])
		}
		return nil
	})
	return run, err
}

// countCache records the embedding cache's running totals (a search
// service's metrics read them after every query), and the texts the local
// encoder cut.
func (r *denseRetriever) countCache() {
	if c, ok := r.recipe.emb.(*embed.Cache); ok {
		hits, misses, damaged := c.Counts()
		r.env.Count("embeddings_cached", int(hits))
		r.env.Count("embeddings_computed", int(misses))
		if damaged > 0 {
			r.env.Count("embeddings_damaged_recomputed", int(damaged))
		}
	}
	r.countTruncated()
}

// countTruncated records, for the local encoder, how many distinct
// queries and documents were cut to the maximum length (counts
// embeddings_truncated_queries and _documents, cached texts included), and
// says so in the run's summary when any were: the model read only their
// start. A cached text whose entry predates the record is counted as
// embeddings_truncation_unknown. A server's cuts are not reported to us
// (the recipe says where it was asked to cut).
func (r *denseRetriever) countTruncated() {
	l := r.recipe.encoder
	if l == nil {
		return
	}
	var q, d, unknown int64
	if c, ok := r.recipe.emb.(*embed.Cache); ok {
		q, d, unknown = c.Truncated()
	} else {
		q, d = l.Truncated()
	}
	r.env.Count("embeddings_truncated_queries", int(q))
	r.env.Count("embeddings_truncated_documents", int(d))
	if unknown > 0 {
		r.env.Count("embeddings_truncation_unknown", int(unknown))
	}
	if q+d == 0 {
		return
	}
	line := fmt.Sprintf("truncated: %d %s cut at %d tokens, %d %s at %d (the model read only their start; --max-length sets the limit)",
		d, errtext.Plural(int(d), "document", "documents"), l.MaxLength(embed.Document), q, errtext.Plural(int(q), "query", "queries"), l.MaxLength(embed.Query))
	if unknown > 0 {
		line += fmt.Sprintf("; %d cached %s made before r2med recorded truncation not counted", unknown, errtext.Plural(int(unknown), "text", "texts"))
	}
	r.env.Summary("truncated", line)
}

// SearchOne embeds one query and scans the index on the calling goroutine.
func (r *denseRetriever) SearchOne(ctx context.Context, q Query, k int) ([]ir.Hit, error) {
	qvecs, err := r.recipe.embedQueries(ctx, []Query{q})
	if err != nil {
		return nil, err
	}
	r.countCache()
	hits, err := r.index.Search(qvecs, k, vector.SearchOptions{Workers: 1, SkipSelf: true, QueryIDs: []string{q.ID}, Rescore: r.recipe.d.Rescore})
	if err != nil {
		return nil, err
	}
	return denseHits(hits[0]), nil
}

func denseHits(hs []vector.Hit) []ir.Hit {
	list := make([]ir.Hit, len(hs))
	for j, h := range hs {
		list[j] = ir.Hit{DocID: h.ID, Score: float64(h.Score)}
	}
	return list
}

// denseRecipe is a ready embedder and the texts it wants around queries
// and documents.
type denseRecipe struct {
	d                 Dense
	model             models.Model
	known             bool
	backend           string
	emb               embed.Embedder
	queryPrefix       string
	docPrefix         string
	instructHyDoc     bool
	closers           []io.Closer
	revision, served  string
	truncateDimension int                                   // Matryoshka cut for backends that cannot do it themselves
	instruction       models.Instruction                    // the registry's, before the user's prefixes replace it
	http              interface{ Stats() embed.AdaptStats } // the HTTP backend, nil for a local one
	embedNote         map[string]any                        // per stage, for the "embedding" note
	maxLength         int                                   // a local model outside the registry: the length its files give
	encoder           *embed.Local                          // the local encoder, nil for a server
	askDoc, askQuery  int                                   // the lengths an OpenAI-compatible server is asked to cut at
	taskMaxLength     int                                   // the length the instruction's source evaluated the task with (BRIGHT's), unless --max-length
}

func (r *denseRecipe) close() {
	for _, c := range r.closers {
		c.Close()
	}
}

// note records the recipe ("dense_recipe") and says, on env.Log and in
// the run's summary, where a server embeds what the recipe does not: a
// recipe that appends EOS to every text (BMRetriever's last-bmr: cut at
// L−1 tokens, then EOS, whose state is pooled) gets the text alone from
// r2med, so the vectors are the recipe's only if the server appends it.
func (r *denseRecipe) note(env Env) {
	env.Note("dense_recipe", r.describe())
	if line := r.eosNote(); line != "" {
		env.Logf("r2med: %s", line)
		env.Summary("append_eos", line)
	}
	if line := r.hostedNote(); line != "" {
		env.Logf("r2med: %s", line)
		env.Summary("r2med_inputs", line)
	}
}

// truncation says who cuts texts past the maximum length, and where.
func (r *denseRecipe) truncation() string {
	switch {
	case r.encoder != nil:
		return fmt.Sprintf("r2med's tokenizer cuts documents at %d tokens and queries at %d, keeping their start", r.encoder.MaxLength(embed.Document), r.encoder.MaxLength(embed.Query))
	case r.askDoc > 0 || r.askQuery > 0:
		return fmt.Sprintf("the server, asked to cut documents at %d tokens and queries at %d, keeping their start (vLLM's truncate_prompt_tokens; a server without the field ignores it)", r.askDoc, r.askQuery)
	case r.backend == models.TEI:
		return "the server's own length (TEI's --max-input-length): /embed takes none"
	case r.backend == models.Voyage:
		return "the API's own length (the model's context): it takes none"
	}
	return "none asked: the server embeds each text whole, or refuses one too long"
}

// hostedNote is what note says of a hosted registry model whose R2MED run
// prepared its inputs in a way r2med does not, "" for others.
func (r *denseRecipe) hostedNote() string {
	if !r.known || !r.model.Hosted || r.model.R2MEDName == "" {
		return ""
	}
	return fmt.Sprintf("%s: %s; r2med sends each text whole and as written, so its vectors are not R2MED's for any text", r.model.Name, r.model.Note)
}

// eosNote is what note says of EOS, "" where nothing need be said.
func (r *denseRecipe) eosNote() string {
	if !r.known || !r.model.AppendEOS || r.backend == models.ONNX {
		return ""
	}
	n := cmp.Or(r.d.MaxLength, r.taskMaxLength, r.model.MaxLength)
	return fmt.Sprintf("%s's recipe cuts each text at %d tokens and appends EOS, whose state it pools; r2med sends the %s server the text alone, so these vectors are the recipe's only if the server appends EOS (vLLM and TEI do not by default)",
		r.model.Name, n-1, r.backend)
}

func (r *denseRecipe) describe() map[string]any {
	m := map[string]any{
		"backend":      r.backend,
		"model":        r.served,
		"query_prefix": r.queryPrefix,
		"doc_prefix":   r.docPrefix,
		"truncation":   r.truncation(),
		// Documents are ranked by cosine whatever the model's own
		// normalization (BEIR's cos_sim, as R2MED scores every model).
		"similarity": "cosine",
	}
	if r.known {
		m["registry"] = r.model.Name
		m["pooling"] = r.model.Pooling.String()
		m["normalize"] = r.model.Normalize || r.d.Normalize
		if !r.model.Hosted {
			// A hosted model's length is where R2MED cut its inputs
			// itself; r2med does not (hostedNote).
			m["max_length"] = r.model.MaxLength
		}
		if n := r.model.MaxLengthFor(embed.Document); n != r.model.MaxLength && r.taskMaxLength == 0 && r.d.MaxLength == 0 {
			m["doc_max_length"] = n
		}
		m["instruct_hy_doc"] = r.instructHyDoc
		if r.model.AppendEOS {
			m["append_eos"] = "the recipe's; not sent by r2med (text only): the server's to append"
		}
		if r.d.QueryPrefix == nil || r.d.DocPrefix == nil {
			m["instruction_source"] = r.instruction.Source.String()
			if r.instruction.Generic {
				m["instruction_generic"] = true
			}
		}
	}
	if !r.known && r.backend == models.ONNX {
		m["pooling"] = r.d.Pooling
		m["normalize"] = r.d.Normalize
	}
	if r.encoder != nil {
		// A server's batches are in the "embedding" note, as they
		// settled.
		m["batch_size"] = r.encoder.BatchSize()
	}
	if r.revision != "" {
		m["revision"] = r.revision
	}
	if r.maxLength > 0 {
		m["max_length"] = r.maxLength
	}
	if r.taskMaxLength > 0 {
		// What the task's source evaluated with, not the model's own.
		m["max_length"] = r.taskMaxLength
		m["max_length_source"] = r.instruction.Source.String()
	}
	if r.d.MaxLength > 0 {
		m["max_length"] = r.d.MaxLength
	}
	if r.d.Quantize != "" {
		m["quantize"] = r.d.Quantize
		m["rescore"] = r.d.Rescore
	}
	return m
}

func newDenseRecipe(ctx context.Context, d Dense, task string, env Env) (*denseRecipe, error) {
	r := &denseRecipe{d: d}
	r.model, r.known = models.Lookup(d.Model)
	r.backend = strings.ToLower(d.Backend)
	switch {
	case r.known && r.backend == "":
		r.backend = r.model.Backends[0]
	case r.known && !r.model.Supports(r.backend):
		return nil, fmt.Errorf("model %s is served by %s, not --backend %s", r.model.Name, strings.Join(r.model.Backends, ", "), r.backend)
	case !r.known && r.backend == "":
		if d.ModelDir == "" {
			return nil, fmt.Errorf("%w; a model outside the registry needs --backend openai|tei|voyage (a server that serves it) or --backend onnx with --model-dir", models.Unknown(d.Model))
		}
		r.backend = models.ONNX
	}
	r.prefixes(task, env)
	var id embed.Identity
	var err error
	if r.backend == models.ONNX {
		id, err = r.local(ctx)
	} else {
		id, err = r.remote(env)
	}
	if err != nil {
		r.close()
		return nil, err
	}
	if n := cmp.Or(d.MaxLength, r.taskMaxLength); n > 0 {
		id.MaxLength = n
	}
	// A local encoder's vectors are cached whole and cut afterwards
	// (Matryoshka), so every truncation shares them; a server cuts them
	// itself, so its dimension is part of what it returned.
	if d.Dimensions > 0 && r.backend != models.ONNX {
		id.Dimensions = d.Dimensions
	}
	id.Normalize = id.Normalize || d.Normalize
	switch {
	case env.Cache != nil:
		c := embed.Cached(r.emb, env.Cache, id)
		c.Meter, c.Replay = env.Meter, env.Replay
		r.emb = c
	case env.Replay:
		r.close()
		return nil, errors.New("replay answers from the cache, and this run has none (drop --no-cache)")
	}
	return r, nil
}

// prefixes sets the query and document instructions: the registry's for
// the task, replaced by the user's where given. A registry model without
// published instructions for the task takes its generic ones, said on
// env.Log and recorded in the recipe.
func (r *denseRecipe) prefixes(task string, env Env) {
	if r.known {
		r.instructHyDoc = r.model.InstructHyDoc()
		r.instruction = r.model.Instruction(task)
		if r.d.MaxLength == 0 {
			r.taskMaxLength = r.instruction.MaxLength
		}
		r.queryPrefix, r.docPrefix = r.instruction.Query, r.instruction.Doc
		if r.instruction.Generic && (r.d.QueryPrefix == nil || r.d.DocPrefix == nil) && env.Log != nil {
			fmt.Fprintf(env.Log, "r2med: %s publishes no instruction for task %q; using its generic one, query %q (%s); set --query-prefix and --doc-prefix to choose\n",
				r.model.Name, task, r.instruction.Query, r.instruction.Source)
		}
	}
	if r.d.QueryPrefix != nil {
		r.queryPrefix = *r.d.QueryPrefix
	}
	if r.d.DocPrefix != nil {
		r.docPrefix = *r.d.DocPrefix
	}
}

// local opens the ONNX encoder: the user's directory, or the registry
// model's checkpoints from the Hub cache (downloaded when online).
func (r *denseRecipe) local(ctx context.Context) (embed.Identity, error) {
	d := r.d
	var dir string
	var opts embed.LocalOptions
	var id embed.Identity
	switch {
	case r.known:
		var cps []models.Checkpoint
		if d.ModelDir != "" {
			ids := r.model.HubIDs()
			if len(ids) != 1 {
				return id, fmt.Errorf("model %s has %d encoders (%s); --model-dir gives one directory, so pull the model instead (r2med model pull %s)", r.model.Name, len(ids), strings.Join(ids, ", "), r.model.Name)
			}
			cps = []models.Checkpoint{{HubID: ids[0], Dir: d.ModelDir}}
			r.revision = d.localRevision()
		} else {
			var err error
			if cps, err = d.checkpoints(ctx, r.model); err != nil {
				return id, err
			}
			var revs []string
			for _, cp := range cps {
				revs = append(revs, cp.Commit)
			}
			r.revision = strings.Join(revs, "+")
		}
		var err error
		if dir, opts, err = r.model.LocalOptions(cps); err != nil {
			return id, err
		}
		id = r.model.Identity(models.ONNX, r.revision)
		r.served = strings.Join(r.model.HubIDs(), "+")
	default:
		p, err := embed.ParsePooling(d.Pooling)
		if d.Pooling == "" {
			return id, fmt.Errorf("model %s is not in the registry; say how to pool its token vectors with --pooling cls|mean|last", d.Model)
		}
		if err != nil {
			return id, err
		}
		dir, opts.Pooling, opts.Normalize = d.ModelDir, p, d.Normalize
		r.revision = d.localRevision()
		r.served = d.Model
		id = embed.Identity{Model: d.Model, Revision: r.revision, Backend: models.ONNX, Pooling: p.String(), Normalize: d.Normalize}
	}
	if n := cmp.Or(d.MaxLength, r.taskMaxLength); n > 0 {
		opts.MaxLength, opts.QueryMaxLength = n, n
	}
	if d.Normalize {
		opts.Normalize = true
	}
	if d.BatchSize > 0 {
		opts.BatchSize = d.BatchSize
	}
	l, err := embed.NewLocal(dir, opts)
	if err != nil {
		return id, err
	}
	if !r.known {
		// The length the directory's files give (sentence_bert_config.json,
		// tokenizer_config.json, tokenizer.json) decides the vectors, so
		// it keys them.
		id.MaxLength = l.MaxLength(embed.Document)
		r.maxLength = id.MaxLength
	}
	r.closers = append(r.closers, l)
	r.emb, r.encoder = l, l
	r.truncateDimension = d.Dimensions
	return id, nil
}

// remote connects to an embedding server; keys come from the environment
// only, so they never reach a pipeline file or a manifest.
func (r *denseRecipe) remote(env Env) (embed.Identity, error) {
	d := r.d
	r.served = d.Model
	if r.known && r.model.HubID != "" {
		r.served = r.model.HubID
	}
	urls, err := httpx.ReadURLs(d.BaseURLs)
	if err != nil {
		return embed.Identity{}, err
	}
	ho := embed.HTTPOptions{BatchSize: d.BatchSize, Concurrency: d.Concurrency, Fleet: env.Fleet,
		MaxAttempts: env.HTTP.MaxAttempts, Timeout: env.HTTP.Timeout, Notify: env.HTTP.Notify, Replay: env.Replay}
	if ho.Concurrency == 0 {
		ho.Concurrency = env.Fleet.PerEndpoint
	}
	enc, err := embed.ParseEncoding(d.Encoding)
	if err != nil {
		return embed.Identity{}, fmt.Errorf("--encoding: %w", err)
	}
	o := embed.RemoteOptions{Model: r.served, Dimensions: d.Dimensions, Encoding: enc, HTTPOptions: ho}
	// An open-weight model's server is asked to cut texts where the recipe
	// does (or at --max-length): vLLM refuses longer ones otherwise, or
	// embeds them whole when started longer. A hosted API is asked
	// nothing (OpenAI's refuses unknown fields; R2MED cut its inputs
	// itself).
	switch {
	case d.MaxLength > 0:
		o.TruncateTokens, o.QueryTruncateTokens = d.MaxLength, d.MaxLength
	case r.known && !r.model.Hosted && r.taskMaxLength > 0:
		o.TruncateTokens, o.QueryTruncateTokens = r.taskMaxLength, r.taskMaxLength
	case r.known && !r.model.Hosted:
		o.TruncateTokens, o.QueryTruncateTokens = r.model.MaxLengthFor(embed.Document), r.model.MaxLengthFor(embed.Query)
	}
	if len(urls) > 0 {
		o.BaseURL, o.BaseURLs = urls[0], urls[1:]
	}
	if r.backend == models.OpenAI {
		r.askDoc, r.askQuery = o.TruncateTokens, o.QueryTruncateTokens
	}
	e, err := embed.NewHTTP(r.backend, o)
	if err != nil {
		return embed.Identity{}, err
	}
	r.emb = e
	r.http, _ = e.(interface{ Stats() embed.AdaptStats })
	var id embed.Identity
	if r.known {
		id = r.model.Identity(r.backend, "")
	} else {
		id = embed.Identity{Model: d.Model, Backend: r.backend, Normalize: d.Normalize}
	}
	// The backend's own description lists what its vectors depend on
	// (model, dimensions, text preparation), never the key or URL.
	id.Extra = strings.Trim(id.Extra+","+fmt.Sprint(e), ",")
	return id, nil
}

// embedCorpus embeds every document (instruction prefixed) into a cosine
// store. Documents go longest first, as BEIR encodes them, which keeps
// padding low; the store keeps corpus order. Chunks of documents overlap
// for an HTTP backend (embed.Chunks), so its servers never wait for the
// next; the bar shows documents and tokens per second.
func (r *denseRecipe) embedCorpus(ctx context.Context, docs []ir.Doc, env Env) (*vector.Flat, error) {
	order := make([]int, len(docs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return len(docs[b].Text) - len(docs[a].Text) })
	vecs := make([][]float32, len(docs))
	const desc = "embedding documents"
	bar := env.Progress.New(len(docs), desc)
	defer bar.Done()
	rate := newRate()
	err := embed.Chunks(ctx, r.emb, len(order), denseChunk, func(ctx context.Context, lo, hi int) error {
		texts := make([]string, 0, hi-lo)
		tokens := 0
		for _, i := range order[lo:hi] {
			texts = append(texts, r.docPrefix+docs[i].Text)
			tokens += embed.EstimateTokens(texts[len(texts)-1])
		}
		out, err := r.emb.Embed(ctx, embed.Document, texts)
		if err != nil {
			return fmt.Errorf("embedding documents: %w", err)
		}
		if err := embed.Check(out, len(texts), 0); err != nil {
			return fmt.Errorf("embedding documents: %w", err)
		}
		for j, i := range order[lo:hi] {
			vecs[i] = r.cut(out[j])
		}
		bar.Add(hi - lo)
		bar.Describe(desc + " (" + rate.add(hi-lo, tokens) + ")")
		return nil
	})
	if err != nil {
		return nil, err
	}
	r.noteEmbedding(env, "documents", rate)
	flat := vector.NewFlat(0, vector.Cosine)
	flat.Grow(len(docs))
	for i, d := range docs {
		if err := flat.Add(d.ID, vecs[i]); err != nil {
			return nil, err
		}
	}
	return flat, nil
}

// rate counts texts and their estimated tokens since it was made, for a
// progress bar's description and the manifest.
type rate struct {
	mu            sync.Mutex
	start         time.Time
	texts, tokens int
}

func newRate() *rate { return &rate{start: time.Now()} }

// add counts texts and tokens done and says the rates so far.
func (r *rate) add(texts, tokens int) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.texts += texts
	r.tokens += tokens
	secs := time.Since(r.start).Seconds()
	return fmt.Sprintf("%.0f docs/s, %s estimated tokens/s", float64(r.texts)/secs, humanCount(float64(r.tokens)/secs))
}

func (r *rate) seconds() float64 { return time.Since(r.start).Seconds() }

// humanCount writes a rate with k or M.
func humanCount(x float64) string {
	switch {
	case x >= 1e6:
		return fmt.Sprintf("%.1fM", x/1e6)
	case x >= 1e3:
		return fmt.Sprintf("%.1fk", x/1e3)
	}
	return fmt.Sprintf("%.0f", x)
}

// noteEmbedding records, for the manifest ("embedding"), the stage's
// throughput over all its texts (cached ones included; tokens estimated)
// and, for an HTTP backend, what its servers did and settled on: texts
// and server-counted tokens per second from the first request to the
// last answer, the batch size, and per server the requests in flight and
// the encoding it answered in.
func (r *denseRecipe) noteEmbedding(env Env, stage string, rt *rate) {
	secs := rt.seconds()
	m := map[string]any{}
	stageNote := map[string]any{"texts": rt.texts, "seconds": round3(secs), "estimated_tokens": rt.tokens}
	if secs > 0 {
		stageNote["texts_per_second"] = round3(float64(rt.texts) / secs)
		stageNote["estimated_tokens_per_second"] = round3(float64(rt.tokens) / secs)
	}
	if r.embedNote == nil {
		r.embedNote = map[string]any{}
	}
	r.embedNote[stage] = stageNote
	for k, v := range r.embedNote {
		m[k] = v
	}
	if r.http != nil {
		st := r.http.Stats()
		srv := map[string]any{"batch_size": st.BatchSize, "adaptive": st.Adaptive, "requests": st.Requests,
			"texts": st.Texts, "tokens": st.Tokens, "seconds": round3(st.Seconds)}
		if st.Seconds > 0 {
			srv["texts_per_second"] = round3(st.TextsPerSecond())
			srv["tokens_per_second"] = round3(st.TokensPerSecond())
		}
		var servers []map[string]any
		encodings := map[string]bool{}
		for _, s := range st.Servers {
			one := map[string]any{"url": s.URL, "concurrency": s.Concurrency, "requests": s.Requests, "texts": s.Texts}
			if s.Encoding != "" {
				one["encoding"] = string(s.Encoding)
				encodings[string(s.Encoding)] = true
			}
			if s.EncodingNote != "" {
				one["encoding_note"] = s.EncodingNote
			}
			servers = append(servers, one)
		}
		srv["servers"] = servers
		if len(st.Served) > 0 {
			srv["served_models"] = st.Served
			r.noteServed(env, st.Served)
		}
		switch len(encodings) {
		case 0:
			srv["encoding"] = "none (no request sent)"
		case 1:
			for e := range encodings {
				srv["encoding"] = e
			}
		default:
			srv["encoding"] = "mixed (see servers)"
		}
		m["server"] = srv
	}
	env.Note("embedding", m)
}

func round3(x float64) float64 { return math.Round(x*1000) / 1000 }

// noteServed says, in the run's summary, which models the server said
// embedded the texts where that is not the model asked for (a gateway
// that routed the name elsewhere, a server that serves one model whatever
// it is asked): the vectors, and the cache entries made now under the
// asked name, are theirs.
func (r *denseRecipe) noteServed(env Env, served map[string]int64) {
	var other []string
	for _, name := range slices.Sorted(maps.Keys(served)) {
		if name != r.served {
			other = append(other, fmt.Sprintf("%s (%d %s)", name, served[name], errtext.Plural(int(served[name]), "text", "texts")))
		}
	}
	if len(other) == 0 {
		return
	}
	line := fmt.Sprintf("served model: %s asked for, the server said %s embedded", r.served, strings.Join(other, ", "))
	env.Summary("served_model", line)
}

// embedQueries embeds each query's dense input: the query alone, or with
// GAR R2MED's combined text or the query and generation to average. The
// averaged pair takes the query instruction on the generation only for
// models that take instructions as a separate prompt (INSTRUCTOR, GritLM,
// NV-Embed), as R2MED's code does. The average is not renormalized;
// cosine scoring normalizes it.
func (r *denseRecipe) embedQueries(ctx context.Context, queries []Query) ([][]float32, error) {
	texts := make([]string, 0, len(queries)*2)
	pairs := make([][2]int, len(queries)) // indexes into texts; second -1 without averaging
	for i, q := range queries {
		in := q.denseInput()
		pairs[i] = [2]int{len(texts), -1}
		texts = append(texts, r.queryPrefix+in.Query)
		if in.Average {
			prefix := ""
			if r.instructHyDoc {
				prefix = r.queryPrefix
			}
			pairs[i][1] = len(texts)
			texts = append(texts, prefix+in.Gen)
		}
	}
	out, err := r.emb.Embed(ctx, embed.Query, texts)
	if err != nil {
		return nil, fmt.Errorf("embedding queries: %w", err)
	}
	if err := embed.Check(out, len(texts), 0); err != nil {
		return nil, fmt.Errorf("embedding queries: %w", err)
	}
	vecs := make([][]float32, len(queries))
	for i, p := range pairs {
		v := r.cut(out[p[0]])
		if p[1] >= 0 {
			g := r.cut(out[p[1]])
			avg := make([]float32, len(v))
			for j := range v {
				avg[j] = (v[j] + g[j]) / 2
			}
			v = avg
		}
		vecs[i] = v
	}
	return vecs, nil
}

// cut applies a Matryoshka truncation the backend could not apply itself.
func (r *denseRecipe) cut(v []float32) []float32 {
	if r.truncateDimension > 0 && r.truncateDimension < len(v) {
		return v[:r.truncateDimension:r.truncateDimension]
	}
	return v
}
