package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/r2med/r2med/embed"
	"github.com/r2med/r2med/expand"
	"github.com/r2med/r2med/hub"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/models"
	"github.com/r2med/r2med/results"
	"github.com/r2med/r2med/vector"
)

// denseChunk is how many documents go to the embedder per call: small
// enough for a lively progress bar, large enough to fill batches.
const denseChunk = 1024

// retrieveDense embeds documents and queries with the model d names, as
// R2MED's recipe for it says (instructions, pooling, length), and ranks
// documents by cosine similarity (BEIR's cos_sim), skipping a document
// whose id is the query's (BEIR's DenseRetrievalExactSearch). With
// generations, each query follows R2MED's dense rule (expand.DenseInput):
// one combined text, or the query's and the generation's embeddings
// averaged.
func retrieveDense(ctx context.Context, in stageInput, d Dense, topK int, opt Options, m *results.Manifest) (ir.Run, error) {
	task := in.task
	r, err := newDenseRecipe(ctx, d, task.Name, opt)
	if err != nil {
		return nil, err
	}
	defer r.close()
	m.Config["dense_recipe"] = r.describe()

	var flat *vector.Flat
	err = m.Time("embed documents", func() error {
		var err error
		flat, err = r.embedCorpus(ctx, task.Corpus, opt)
		return err
	})
	if err != nil {
		return nil, err
	}
	m.Counts["dimensions"] = flat.Dim()

	var qvecs [][]float32
	if err := m.Time("embed queries", func() error {
		var err error
		qvecs, err = r.embedQueries(ctx, task.Queries, in.gens)
		return err
	}); err != nil {
		return nil, err
	}
	if c, ok := r.emb.(*embed.Cache); ok {
		hits, misses, damaged := c.Counts()
		m.Counts["embeddings_cached"] = int(hits)
		m.Counts["embeddings_computed"] = int(misses)
		if damaged > 0 {
			m.Counts["embeddings_damaged_recomputed"] = int(damaged)
		}
	}

	run := make(ir.Run, len(task.Queries))
	err = m.Time("search", func() error {
		qids := make([]string, len(task.Queries))
		for i, q := range task.Queries {
			qids[i] = q.ID
		}
		var index vector.Index = flat
		switch d.Quantize {
		case "int8":
			index = vector.NewInt8(flat)
		case "binary":
			index = vector.NewBinary(flat)
		}
		hits, err := index.Search(qvecs, topK, vector.SearchOptions{Workers: opt.Workers, SkipSelf: true, QueryIDs: qids, Rescore: d.Rescore})
		if err != nil {
			return err
		}
		for i, q := range task.Queries {
			list := make([]ir.Hit, len(hits[i]))
			for j, h := range hits[i] {
				list[j] = ir.Hit{DocID: h.ID, Score: float64(h.Score)}
			}
			run[q.ID] = list
		}
		return nil
	})
	return run, err
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
	truncateDimension int // Matryoshka cut for backends that cannot do it themselves
}

func (r *denseRecipe) close() {
	for _, c := range r.closers {
		c.Close()
	}
}

func (r *denseRecipe) describe() map[string]any {
	m := map[string]any{
		"backend":      r.backend,
		"model":        r.served,
		"query_prefix": r.queryPrefix,
		"doc_prefix":   r.docPrefix,
	}
	if r.known {
		m["registry"] = r.model.Name
		m["pooling"] = r.model.Pooling.String()
		m["max_length"] = r.model.MaxLength
		m["instruct_hy_doc"] = r.instructHyDoc
	}
	if r.revision != "" {
		m["revision"] = r.revision
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

func newDenseRecipe(ctx context.Context, d Dense, task string, opt Options) (*denseRecipe, error) {
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
	if err := r.prefixes(task); err != nil {
		return nil, err
	}
	var id embed.Identity
	var err error
	if r.backend == models.ONNX {
		id, err = r.local(ctx)
	} else {
		id, err = r.remote()
	}
	if err != nil {
		r.close()
		return nil, err
	}
	if d.MaxLength > 0 {
		id.MaxLength = d.MaxLength
	}
	// A local encoder's vectors are cached whole and cut afterwards
	// (Matryoshka), so every truncation shares them; a server cuts them
	// itself, so its dimension is part of what it returned.
	if d.Dimensions > 0 && r.backend != models.ONNX {
		id.Dimensions = d.Dimensions
	}
	id.Normalize = id.Normalize || d.Normalize
	if opt.Cache != nil {
		r.emb = embed.Cached(r.emb, opt.Cache, id)
	}
	return r, nil
}

// prefixes sets the query and document instructions: the registry's for
// the task, replaced by the user's where given.
func (r *denseRecipe) prefixes(task string) error {
	if r.known {
		r.instructHyDoc = r.model.InstructHyDoc()
		var qerr, derr error
		if r.d.QueryPrefix == nil {
			r.queryPrefix, qerr = r.model.QueryInstruction(task)
		}
		if r.d.DocPrefix == nil {
			r.docPrefix, derr = r.model.DocInstruction(task)
		}
		if err := errors.Join(qerr, derr); err != nil {
			return err
		}
	}
	if r.d.QueryPrefix != nil {
		r.queryPrefix = *r.d.QueryPrefix
	}
	if r.d.DocPrefix != nil {
		r.docPrefix = *r.d.DocPrefix
	}
	return nil
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
			r.revision = localRevision(d.ModelDir)
		} else {
			var err error
			if cps, err = r.model.Pull(ctx, hub.FromEnv(), ""); err != nil {
				return id, fmt.Errorf("%w (r2med model pull %s fetches it; --model-dir DIR uses a local copy)", err, r.model.Name)
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
		r.revision = localRevision(d.ModelDir)
		r.served = d.Model
		id = embed.Identity{Model: d.Model, Revision: r.revision, Backend: models.ONNX, Pooling: p.String(), Normalize: d.Normalize}
	}
	if d.MaxLength > 0 {
		opts.MaxLength, opts.QueryMaxLength = d.MaxLength, d.MaxLength
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
	r.closers = append(r.closers, l)
	r.emb = l
	r.truncateDimension = d.Dimensions
	return id, nil
}

// remote connects to an embedding server; keys come from the environment
// only, so they never reach a pipeline file or a manifest.
func (r *denseRecipe) remote() (embed.Identity, error) {
	d := r.d
	r.served = d.Model
	if r.known && r.model.HubID != "" {
		r.served = r.model.HubID
	}
	e, err := embed.NewHTTP(r.backend, embed.RemoteOptions{BaseURL: d.BaseURL, Model: r.served, Dimensions: d.Dimensions,
		HTTPOptions: embed.HTTPOptions{BatchSize: d.BatchSize, Concurrency: d.Concurrency}})
	if err != nil {
		return embed.Identity{}, err
	}
	r.emb = e
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
// padding low; the store keeps corpus order.
func (r *denseRecipe) embedCorpus(ctx context.Context, docs []ir.Doc, opt Options) (*vector.Flat, error) {
	order := make([]int, len(docs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return len(docs[b].Text) - len(docs[a].Text) })
	vecs := make([][]float32, len(docs))
	bar := opt.Progress.New(len(docs), "embedding documents")
	defer bar.Done()
	texts := make([]string, 0, denseChunk)
	for lo := 0; lo < len(order); lo += denseChunk {
		hi := min(lo+denseChunk, len(order))
		texts = texts[:0]
		for _, i := range order[lo:hi] {
			texts = append(texts, r.docPrefix+docs[i].Text)
		}
		out, err := r.emb.Embed(ctx, embed.Document, texts)
		if err != nil {
			return nil, fmt.Errorf("embedding documents: %w", err)
		}
		if err := embed.Check(out, len(texts), 0); err != nil {
			return nil, fmt.Errorf("embedding documents: %w", err)
		}
		for j, i := range order[lo:hi] {
			vecs[i] = r.cut(out[j])
		}
		bar.Add(hi - lo)
	}
	flat := vector.NewFlat(0, vector.Cosine)
	flat.Grow(len(docs))
	for i, d := range docs {
		if err := flat.Add(d.ID, vecs[i]); err != nil {
			return nil, err
		}
	}
	return flat, nil
}

// embedQueries embeds the queries, or with generations R2MED's dense GAR
// inputs: the averaged pair takes the query instruction on the
// generation only for models that take instructions as a separate prompt
// (INSTRUCTOR, GritLM, NV-Embed), as R2MED's code does. The average is not
// renormalized; cosine scoring normalizes it.
func (r *denseRecipe) embedQueries(ctx context.Context, queries []ir.Query, gens []expand.Generation) ([][]float32, error) {
	texts := make([]string, 0, len(queries)*2)
	pairs := make([][2]int, len(queries)) // indexes into texts; second -1 without averaging
	for i, q := range queries {
		pairs[i] = [2]int{len(texts), -1}
		if gens == nil {
			texts = append(texts, r.queryPrefix+q.Text)
			continue
		}
		in := gens[i].Dense()
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

// localRevision stands for a local model directory's version in cache
// keys: the size and modification time of the graph, the tokenizer and the
// config, so replacing any of them (a new export, another truncation
// length) does not reuse the old vectors.
func localRevision(dir string) string {
	var parts []string
	for _, name := range []string{"model.onnx", filepath.Join("onnx", "model.onnx"), "tokenizer.json", "config.json"} {
		if st, err := os.Stat(filepath.Join(dir, name)); err == nil {
			parts = append(parts, fmt.Sprintf("%s:%d:%d", name, st.Size(), st.ModTime().UnixNano()))
		}
	}
	return "local:" + strings.Join(parts, ",")
}
