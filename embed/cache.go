package embed

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/r2med/r2med/cache"
	"github.com/r2med/r2med/internal/httpx"
	"github.com/r2med/r2med/usage"
)

// CacheKind is the cache bucket kind that holds embeddings; the bucket's
// label is Identity.Model.
const CacheKind = "embed"

func init() {
	// The cache's stats read what each entry cost from its usage record.
	cache.RegisterUsage(CacheKind, func(val []byte) (usage.Usage, bool) {
		_, u, _, ok := decodeEntry(val, 0)
		if !ok || u == nil {
			return usage.Usage{}, false
		}
		return *u, true
	})
}

// Identity is everything besides the text that decides an embedding.
// Two runs whose Identity and text agree get the same vector from the
// cache; anything that changes vectors must be in it, or the cache would
// hand back vectors of another configuration.
type Identity struct {
	// Model names the weights: a Hub id, an API model name, or for a
	// dual-encoder model both ids (models.Model.Identity builds it). It
	// also labels the cache bucket, so `r2med cache prune --model` finds it.
	Model string
	// Revision is the commit of the weights when known (a pulled Hub
	// snapshot); "" for API models, whose versions the provider names.
	Revision string
	// Backend is what computed the vectors: onnx, openai, tei, voyage.
	// Backends differ in precision (fp32 ONNX against a bf16 server), so
	// their vectors are kept apart.
	Backend   string
	Pooling   string
	MaxLength int
	// Dimensions is the requested output size (OpenAI's dimensions,
	// Matryoshka truncation); 0 for the model's own. When set, cached
	// vectors of another size are treated as damaged.
	Dimensions int
	Normalize  bool
	// Extra holds any other setting that changes vectors (R2MED's quoted
	// API inputs, a dtype), in a form that is stable across runs.
	Extra string
}

// Key is the cache key of text on the given input side under id. The text
// is what the backend embeds, instruction included, so every instruction
// variant is its own entry.
func (id Identity) Key(input Input, text string) []byte {
	return cache.Key("r2med-embed-1", id.Model, id.Revision, id.Backend, id.Pooling,
		strconv.Itoa(id.MaxLength), strconv.Itoa(id.Dimensions), strconv.FormatBool(id.Normalize),
		id.Extra, input.String(), text)
}

// DefaultCacheChunk is how many missing texts Cache gives its backend at a
// time when Chunk is zero.
const DefaultCacheChunk = 256

// Cache is an Embedder that answers from a cache.Store and sends only
// the texts it lacks to the Embedder it wraps, Chunk texts at a time,
// writing each chunk's vectors before asking for the next: a run stopped
// halfway keeps what it paid for, and the next run resumes where it
// stopped. Identical texts in one call are embedded once.
//
// An entry that cannot be a vector (a length that is not a whole number of
// float32s, a NaN, a size other than Identity.Dimensions when that is set)
// is treated as a miss: it is embedded again and overwritten, since
// recomputing is always right. Cached vectors whose size disagrees with
// what the backend returns now are an error: the model behind the name
// changed, and mixing the two would rank nonsense.
//
// Vectors are stored as little-endian float32, exactly as the backend
// returned them, after a small record of what the text cost to embed
// (tokens and seconds, see Metered); entries written before that record
// existed are read as they are, their tokens estimated.
type Cache struct {
	Embedder Embedder
	Store    *cache.Store // nil: no caching, every text goes to Embedder
	ID       Identity
	Chunk    int // texts per backend call; 0 means DefaultCacheChunk
	// Progress, if set, hears how many of one call's distinct texts are
	// done: once after the cache lookup, then after each chunk.
	Progress func(done, total int)
	// Meter, if set, hears each distinct text's usage: new ones as they
	// are embedded, cached ones with the usage they had when made (kind
	// CacheKind, model ID.Model).
	Meter *usage.Meter
	// Replay answers from the cache only: a text it lacks is an error
	// wrapping ErrReplay, and the Embedder is never called.
	Replay bool

	hits, misses, damaged atomic.Int64
	cut                   [2]atomic.Int64 // by Input: distinct texts the backend cut (Cutter)
	cutUnknown            atomic.Int64    // cached texts of a Cutter whose entry does not say
}

// ErrReplay is wrapped by the errors of calls refused in replay mode.
var ErrReplay = httpx.ErrReplay

// Metered is an Embedder that also says what each text cost: the HTTP
// backends share each request's usage (the server's token count, else
// estimated) and wall time among its texts. Cache estimates the usage of
// other Embedders itself (usage.EstimateTokens, the call's wall time).
type Metered interface {
	Embedder
	EmbedMetered(ctx context.Context, input Input, texts []string) ([][]float32, []usage.Usage, error)
}

// Cached wraps e with store under id.
func Cached(e Embedder, store *cache.Store, id Identity) *Cache {
	return &Cache{Embedder: e, Store: store, ID: id}
}

// InFlight is the wrapped Embedder's (see InFlighter), zero if it has
// none.
func (c *Cache) InFlight() (texts, batch int) {
	if in, ok := c.Embedder.(InFlighter); ok {
		return in.InFlight()
	}
	return 0, 0
}

// Counts reports the distinct texts answered from the cache (hits), sent
// to the backend (misses), and among the misses those whose entry was
// damaged, over the Cache's life.
func (c *Cache) Counts() (hits, misses, damaged int64) {
	return c.hits.Load(), c.misses.Load(), c.damaged.Load()
}

// Truncated reports, for a backend that says what it cut (Cutter), the
// distinct queries and documents cut to the model's maximum length over
// the Cache's life, embedded now or answered from the cache, and the
// cached texts whose entry does not say (written before entries recorded
// it). All are zero for other backends.
func (c *Cache) Truncated() (queries, documents, unknown int64) {
	return c.cut[Query].Load(), c.cut[Document].Load(), c.cutUnknown.Load()
}

func (c *Cache) bucket() string { return cache.Bucket(CacheKind, c.ID.Model) }

// Embed implements Embedder.
func (c *Cache) Embed(ctx context.Context, input Input, texts []string) ([][]float32, error) {
	if c.ID.Model == "" {
		return nil, fmt.Errorf("embedding cache: the identity names no model")
	}
	// Distinct texts, in first-seen order; where[i] is texts[i]'s index.
	var uniq []string
	where := make([]int, len(texts))
	seen := make(map[string]int, len(texts))
	for i, t := range texts {
		j, ok := seen[t]
		if !ok {
			j = len(uniq)
			seen[t] = j
			uniq = append(uniq, t)
		}
		where[i] = j
	}

	vecs := make([][]float32, len(uniq))
	keys := make([][]byte, len(uniq))
	for i, t := range uniq {
		keys[i] = c.ID.Key(input, t)
	}
	cachedDim := 0
	if c.Store != nil {
		raw, err := c.Store.GetMany(c.bucket(), keys)
		if err != nil {
			return nil, fmt.Errorf("embedding cache: %w", err)
		}
		for i, r := range raw {
			if r == nil {
				continue
			}
			v, u, tr, ok := decodeEntry(r, c.ID.Dimensions)
			if !ok || (cachedDim != 0 && len(v) != cachedDim) {
				c.damaged.Add(1)
				continue
			}
			if _, cutter := c.Embedder.(Cutter); cutter {
				switch tr {
				case truncCut:
					c.cut[input%2].Add(1)
				case truncUnknown:
					c.cutUnknown.Add(1)
				}
			}
			if u == nil { // written before usage was recorded
				u = &usage.Usage{PromptTokens: usage.EstimateTokens(uniq[i]), Estimated: usage.Estimator}
			}
			c.Meter.Add(CacheKind, c.ID.Model, *u, true)
			cachedDim = len(v)
			vecs[i] = v
		}
	}
	var missing []int
	for i, v := range vecs {
		if v == nil {
			missing = append(missing, i)
		}
	}
	c.hits.Add(int64(len(uniq) - len(missing)))
	done := len(uniq) - len(missing)
	if c.Progress != nil {
		c.Progress(done, len(uniq))
	}
	if c.Replay && len(missing) > 0 {
		return nil, fmt.Errorf("embedding cache: %w: %d of %d texts are not in the cache for %s (first: %q); import the run's cache file (r2med cache import) or run without replay", ErrReplay, len(missing), len(uniq), c.ID.Model, snippet(uniq[missing[0]]))
	}

	chunk := c.Chunk
	if chunk <= 0 {
		chunk = DefaultCacheChunk
	}
	// Chunks of a remote backend overlap, so its servers never wait for
	// the next one; each is written as it comes back.
	fromCache := cachedDim != 0
	var mu sync.Mutex
	err := Chunks(ctx, c.Embedder, len(missing), chunk, func(ctx context.Context, lo, hi int) error {
		idx := missing[lo:hi]
		batch := make([]string, len(idx))
		for j, i := range idx {
			batch[j] = uniq[i]
		}
		got, use, cuts, err := embedMetered(ctx, c.Embedder, input, batch)
		if err != nil {
			return err
		}
		for _, n := range cuts {
			if n > 0 {
				c.cut[input%2].Add(1)
			}
		}
		if err := Check(got, len(batch), c.ID.Dimensions); err != nil {
			return fmt.Errorf("%s: %w", c.ID.Model, err)
		}
		mu.Lock()
		switch d := len(got[0]); {
		case d == cachedDim || cachedDim == 0:
		case fromCache:
			mu.Unlock()
			return fmt.Errorf("%s: the cache holds %d-dimensional vectors for this model but the backend now returns %d dimensions: the model behind the name has changed; drop the old ones with `r2med cache prune --model %s` (cache %s)", c.ID.Model, cachedDim, d, c.ID.Model, c.Store.Dir())
		default:
			mu.Unlock()
			return fmt.Errorf("%s: the backend returned %d-dimensional vectors, then %d-dimensional ones", c.ID.Model, cachedDim, d)
		}
		cachedDim = len(got[0])
		mu.Unlock()
		c.misses.Add(int64(len(batch)))
		for _, u := range use {
			c.Meter.Add(CacheKind, c.ID.Model, u, false)
		}
		if c.Store != nil {
			ks := make([][]byte, len(idx))
			vs := make([][]byte, len(idx))
			for j, i := range idx {
				ks[j] = keys[i]
				tr := truncUnknown
				switch {
				case cuts == nil:
				case cuts[j] > 0:
					tr = truncCut
				default:
					tr = truncFit
				}
				vs[j] = encodeEntry(got[j], use[j], tr)
			}
			if err := c.Store.PutMany(c.bucket(), ks, vs); err != nil {
				return fmt.Errorf("embedding cache: %w", err)
			}
		}
		mu.Lock()
		defer mu.Unlock()
		for j, i := range idx {
			vecs[i] = got[j]
		}
		done += len(idx)
		if c.Progress != nil {
			c.Progress(done, len(uniq))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}

	out := make([][]float32, len(texts))
	used := make([]bool, len(uniq))
	for i, j := range where {
		if used[j] {
			// A repeated text gets its own copy, so a caller that
			// normalizes in place cannot change another row.
			out[i] = append([]float32(nil), vecs[j]...)
			continue
		}
		used[j] = true
		out[i] = vecs[j]
	}
	return out, nil
}

// embedMetered embeds texts with their usage: from a Metered backend, or
// estimated here (tokens by usage.EstimateTokens, the call's wall time
// shared in proportion); and, from a Cutter, the tokens cut from each
// (nil from other backends).
func embedMetered(ctx context.Context, e Embedder, input Input, texts []string) ([][]float32, []usage.Usage, []int, error) {
	if m, ok := e.(Metered); ok {
		v, u, err := m.EmbedMetered(ctx, input, texts)
		if err == nil && len(u) != len(texts) {
			err = fmt.Errorf("the backend reported the usage of %d texts for %d", len(u), len(texts))
		}
		return v, u, nil, err
	}
	start := time.Now()
	var v [][]float32
	var cuts []int
	var err error
	if c, ok := e.(Cutter); ok {
		v, cuts, err = c.EmbedCut(ctx, input, texts)
		if err == nil && len(cuts) != len(texts) {
			err = fmt.Errorf("the backend said what it cut of %d texts for %d", len(cuts), len(texts))
		}
	} else {
		v, err = e.Embed(ctx, input, texts)
	}
	if err != nil {
		return nil, nil, nil, err
	}
	u := make([]usage.Usage, len(texts))
	apportion(u, texts, -1, time.Since(start).Seconds())
	return v, u, cuts, nil
}

func snippet(s string) string {
	if len(s) <= 60 {
		return s
	}
	return cutRunes(s, 60) + "…"
}

// An entry is the vector as little-endian float32s, after a usage record
// that starts with usageMark, a float32 NaN that no stored vector can
// start with (vectors with NaN are refused), so entries written before
// the record existed still read: a leading NaN means a record follows.
//
//	mark (4 bytes) | uvarint prompt tokens | uvarint microseconds | flags | vector
//
// Flags: 1 the tokens are estimated; 2 the backend cut the text to the
// model's maximum length, 4 it embedded the text whole (neither: not
// known, as from an HTTP server or an entry written before the flags).
const usageMark = 0x7FC15553

const (
	flagEstimated = 1
	flagCut       = 2
	flagFit       = 4
)

// truncation is what an entry says of its text's truncation.
type truncation uint8

const (
	truncUnknown truncation = iota
	truncCut
	truncFit
)

func encodeEntry(v []float32, u usage.Usage, tr truncation) []byte {
	b := make([]byte, 4, 4+2*binary.MaxVarintLen64+1+4*len(v))
	binary.LittleEndian.PutUint32(b, usageMark)
	b = binary.AppendUvarint(b, uint64(max(u.PromptTokens, 0)))
	b = binary.AppendUvarint(b, uint64(max(math.Round(u.Seconds*1e6), 0)))
	var flags byte
	if u.Estimated != "" {
		flags |= flagEstimated
	}
	switch tr {
	case truncCut:
		flags |= flagCut
	case truncFit:
		flags |= flagFit
	}
	return append(append(b, flags), encodeVector(v)...)
}

// encodeVector is the vector alone, as entries were written before they
// carried usage.
func encodeVector(v []float32) []byte {
	b := make([]byte, 0, 4*len(v))
	for _, x := range v {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
	}
	return b
}

// decodeEntry reads an entry; the usage is nil for an entry without a
// record.
func decodeEntry(b []byte, dim int) ([]float32, *usage.Usage, truncation, bool) {
	if len(b) < 4 || binary.LittleEndian.Uint32(b) != usageMark {
		v, ok := decodeVector(b, dim)
		return v, nil, truncUnknown, ok
	}
	rest := b[4:]
	tokens, n := binary.Uvarint(rest)
	if n <= 0 || tokens > math.MaxInt32 {
		return nil, nil, 0, false
	}
	rest = rest[n:]
	micros, n := binary.Uvarint(rest)
	if n <= 0 || len(rest) < n+1 {
		return nil, nil, 0, false
	}
	flags := rest[n]
	rest = rest[n+1:]
	if flags&^(flagEstimated|flagCut|flagFit) != 0 || flags&(flagCut|flagFit) == flagCut|flagFit {
		return nil, nil, 0, false
	}
	v, ok := decodeVector(rest, dim)
	if !ok {
		return nil, nil, 0, false
	}
	u := &usage.Usage{PromptTokens: int(tokens), TotalTokens: int(tokens), Seconds: float64(micros) / 1e6}
	if flags&flagEstimated != 0 {
		u.Estimated = usage.Estimator
	}
	tr := truncUnknown
	switch {
	case flags&flagCut != 0:
		tr = truncCut
	case flags&flagFit != 0:
		tr = truncFit
	}
	return v, u, tr, true
}

func decodeVector(b []byte, dim int) ([]float32, bool) {
	if len(b) == 0 || len(b)%4 != 0 || (dim > 0 && len(b) != 4*dim) {
		return nil, false
	}
	v := make([]float32, len(b)/4)
	for i := range v {
		x := math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return nil, false
		}
		v[i] = x
	}
	return v, true
}
