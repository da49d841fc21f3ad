package weaviate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	wv "github.com/weaviate/weaviate-go-client/v5/weaviate"
	"github.com/weaviate/weaviate-go-client/v5/weaviate/fault"
	"github.com/weaviate/weaviate-go-client/v5/weaviate/graphql"
	wvgrpc "github.com/weaviate/weaviate-go-client/v5/weaviate/grpc"
	"github.com/weaviate/weaviate/entities/models"

	"github.com/r2med/r2med/internal/httpx"
	"github.com/r2med/r2med/vector"
)

// Property names of every object r2med writes.
const (
	PropDocID = "docId"
	PropText  = "text"
	PropHash  = "contentHash"
)

// Collection is one Weaviate collection opened through the official client.
// It is safe for concurrent use.
type Collection struct {
	cfg     Config
	client  *wv.Client
	meta    *Meta        // what made the collection, read from its description; nil until known
	reached atomic.Bool  // a request has been answered: a refused connection now means a node died
	http    *http.Client // REST requests the client lacks: replica reads, cluster statistics
}

// Open connects to the server named by cfg. It does not create the
// collection (Ensure does) and fails only on a bad Config; an unreachable
// server shows at the first call.
func Open(cfg Config) (*Collection, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	client, err := wv.NewClient(wv.Config{
		Host:       cfg.host(),
		Scheme:     cfg.scheme(),
		Timeout:    cfg.timeout(),
		GrpcConfig: &wvgrpc.Config{Host: cfg.GRPCAddr(), Secured: cfg.scheme() == "https"},
	})
	if err != nil {
		return nil, fmt.Errorf("weaviate %s: %w", cfg.URL, err)
	}
	// Replica reads go 16 at a time to the one node: keep as many
	// connections.
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.MaxIdleConnsPerHost = 32
	return &Collection{cfg: cfg, client: client, http: &http.Client{Transport: transport}}, nil
}

// Config is where the collection lives.
func (c *Collection) Config() Config { return c.cfg }

// Name is the collection's name.
func (c *Collection) Name() string { return c.cfg.Collection }

// Vectors says what made the collection's vectors, as recorded when r2med
// created it.
type Vectors struct {
	Model string `json:"model"` // the embedding recipe's name, as the manifest records it
	// Revision is the version of the model that embedded the documents,
	// as the manifest's model_revision records it (a Hub commit, a local
	// model directory's version); "" for a model behind a server, and in
	// collections pushed before r2med recorded it.
	Revision string `json:"revision,omitempty"`
	Dim      int    `json:"dim"`
	Metric   string `json:"metric"` // cosine or dot
}

// String is the vectors' model, its revision, dimension and metric.
func (v Vectors) String() string {
	s := v.Model
	if v.Revision != "" {
		s += " at revision " + v.Revision
	}
	return fmt.Sprintf("%s (dimension %d, %s)", s, v.Dim, v.Metric)
}

// Meta is what r2med records in the collection's description.
type Meta struct {
	R2MED   int      `json:"r2med"` // format version, 1
	Vectors *Vectors `json:"vectors,omitempty"`
	// Digest identifies the corpus the last finished push wrote (Digest
	// of its documents and vectors) and Docs counts them; a push clears
	// Digest before it writes and sets it when the collection is whole,
	// so an empty Digest means no push has finished since.
	Digest string `json:"digest,omitempty"`
	Docs   int    `json:"docs,omitempty"`
	// TextDigest is TextDigest of the pushed documents: a searcher checks
	// the collection holds its task's corpus without embedding it.
	TextDigest string `json:"text_digest,omitempty"`
	// EFLease, while a run has set the collection's ef for its searches
	// (HoldEF), says so.
	EFLease *EFLease `json:"ef_lease,omitempty"`
}

const metaPrefix = "r2med collection "

func (m Meta) description() string {
	b, _ := json.Marshal(m)
	return metaPrefix + string(b)
}

func parseMeta(desc string) (*Meta, bool) {
	rest, ok := strings.CutPrefix(desc, metaPrefix)
	if !ok {
		return nil, false
	}
	var m Meta
	if err := json.Unmarshal([]byte(rest), &m); err != nil || m.R2MED != 1 {
		return nil, false
	}
	return &m, true
}

// Schema says how to create a collection. The zero value is a BM25-only
// collection with Weaviate's defaults (one shard per node, no
// replication, HNSW, BM25 k1 = 1.2, b = 0.75, English query stopwords).
type Schema struct {
	// Shards is the number of shards; 0: Weaviate's default (one per node).
	Shards int
	// Replicas is the replication factor; 0 or 1: one copy of each shard.
	Replicas int
	// AsyncReplication repairs replicas in the background after a node
	// was away (Weaviate's asyncEnabled).
	AsyncReplication bool
	// Index is the vector index: "hnsw" (default) or "flat" (exact).
	Index string
	// EF, EFConstruction and MaxConnections tune HNSW; 0 keeps Weaviate's
	// defaults (ef −1 = dynamic, 128, 32).
	EF, EFConstruction, MaxConnections int
	// BM25 overrides Weaviate's k1 and b; nil keeps 1.2 and 0.75.
	BM25 *BM25Params
	// Stopwords is the preset dropped from BM25 queries: "" (Weaviate's
	// default, "en") or "none".
	Stopwords string
	// Vectors says what the vectors will be; nil: no vectors (BM25 only).
	Vectors *Vectors
}

// BM25Params are Weaviate's BM25 k1 and b.
type BM25Params struct{ K1, B float64 }

func (s Schema) validate() error {
	if s.Shards < 0 || s.Replicas < 0 {
		return fmt.Errorf("shards (%d) and replicas (%d) must not be negative", s.Shards, s.Replicas)
	}
	switch s.Index {
	case "", "hnsw", "flat":
	default:
		return fmt.Errorf("vector index %q: want hnsw or flat", s.Index)
	}
	switch s.Stopwords {
	case "", "en", "none":
	default:
		return fmt.Errorf("stopwords %q: want en or none", s.Stopwords)
	}
	if s.EF < -1 || s.EFConstruction < 0 || s.MaxConnections < 0 {
		return fmt.Errorf("HNSW settings must not be negative (ef %d, efConstruction %d, maxConnections %d)", s.EF, s.EFConstruction, s.MaxConnections)
	}
	if s.Index == "flat" && (s.EF != 0 || s.EFConstruction != 0 || s.MaxConnections != 0) {
		return fmt.Errorf("a flat vector index takes no HNSW ef, efConstruction or maxConnections (ef %d, efConstruction %d, maxConnections %d): it searches exactly; drop them, or use hnsw", s.EF, s.EFConstruction, s.MaxConnections)
	}
	if s.BM25 != nil && (s.BM25.K1 < 0 || s.BM25.B < 0 || s.BM25.B > 1) {
		return fmt.Errorf("BM25 k1 %g, b %g: want k1 ≥ 0 and 0 ≤ b ≤ 1", s.BM25.K1, s.BM25.B)
	}
	if v := s.Vectors; v != nil {
		if v.Dim <= 0 {
			return fmt.Errorf("vectors of dimension %d", v.Dim)
		}
		if _, err := vector.ParseMetric(v.Metric); err != nil {
			return err
		}
	}
	return nil
}

func (s Schema) class(name string) *models.Class {
	no, yes := false, true
	cls := &models.Class{
		Class:       name,
		Description: Meta{R2MED: 1, Vectors: s.Vectors}.description(),
		Vectorizer:  "none",
		Properties: []*models.Property{
			{Name: PropDocID, DataType: []string{"text"}, Tokenization: models.PropertyTokenizationField, IndexFilterable: &yes, IndexSearchable: &no, Description: "the corpus document id"},
			{Name: PropText, DataType: []string{"text"}, Tokenization: models.PropertyTokenizationWord, IndexFilterable: &no, IndexSearchable: &yes, Description: "the document text BM25 searches"},
			{Name: PropHash, DataType: []string{"text"}, Tokenization: models.PropertyTokenizationField, IndexFilterable: &no, IndexSearchable: &no, Description: "sha256 of id, text and vector: a re-push skips unchanged objects"},
		},
		InvertedIndexConfig: &models.InvertedIndexConfig{},
	}
	idx := map[string]any{}
	metric := "cosine"
	if s.Vectors != nil {
		metric = s.Vectors.Metric
	}
	idx["distance"] = metric
	cls.VectorIndexType = "hnsw"
	if s.Index == "flat" {
		cls.VectorIndexType = "flat"
	} else {
		if s.EF != 0 {
			idx["ef"] = s.EF
		}
		if s.EFConstruction != 0 {
			idx["efConstruction"] = s.EFConstruction
		}
		if s.MaxConnections != 0 {
			idx["maxConnections"] = s.MaxConnections
		}
	}
	cls.VectorIndexConfig = idx
	if s.BM25 != nil {
		cls.InvertedIndexConfig.Bm25 = &models.BM25Config{K1: float32(s.BM25.K1), B: float32(s.BM25.B)}
	}
	if s.Stopwords != "" {
		cls.InvertedIndexConfig.Stopwords = &models.StopwordConfig{Preset: s.Stopwords}
	}
	if s.Shards > 0 {
		cls.ShardingConfig = map[string]any{"desiredCount": s.Shards}
	}
	if s.Replicas > 1 || s.AsyncReplication {
		f := int64(s.Replicas)
		if f == 0 {
			f = 1
		}
		cls.ReplicationConfig = &models.ReplicationConfig{Factor: f, AsyncEnabled: s.AsyncReplication}
	}
	return cls
}

// Exists reports whether the collection exists.
func (c *Collection) Exists(ctx context.Context) (bool, error) {
	var ok bool
	err := c.retry(ctx, "check collection", func(ctx context.Context) error {
		var err error
		ok, err = c.client.Schema().ClassExistenceChecker().WithClassName(c.cfg.Collection).Do(ctx)
		return err
	})
	return ok, err
}

// Create makes the collection as s says; it fails if it exists.
func (c *Collection) Create(ctx context.Context, s Schema) error {
	if err := s.validate(); err != nil {
		return fmt.Errorf("collection %s: %w", c.cfg.Collection, err)
	}
	if err := c.client.Schema().ClassCreator().WithClass(s.class(c.cfg.Collection)).Do(ctx); err != nil {
		return c.wrap("create collection", err)
	}
	c.meta = &Meta{R2MED: 1, Vectors: s.Vectors}
	return nil
}

// Ensure creates the collection when it is missing, and otherwise checks
// that the existing one was made by r2med with the same vectors and, where
// s sets them, the same shards and replication factor. It reports whether
// it created the collection.
func (c *Collection) Ensure(ctx context.Context, s Schema) (created bool, err error) {
	if err := s.validate(); err != nil {
		return false, fmt.Errorf("collection %s: %w", c.cfg.Collection, err)
	}
	ok, err := c.Exists(ctx)
	if err != nil {
		return false, err
	}
	if !ok {
		return true, c.Create(ctx, s)
	}
	cls, m, err := c.record(ctx)
	if err != nil {
		return false, err
	}
	name := c.cfg.Collection
	switch {
	case m.Vectors == nil && s.Vectors != nil:
		return false, fmt.Errorf("collection %s exists without vectors (pushed BM25-only); push the vectors into a new collection, or recreate it", name)
	case m.Vectors != nil && s.Vectors == nil:
		return false, fmt.Errorf("collection %s holds vectors of %s (dimension %d); give the same dense flags, or push BM25-only into a new collection", name, m.Vectors.Model, m.Vectors.Dim)
	case m.Vectors != nil && *m.Vectors != *s.Vectors:
		return false, fmt.Errorf("collection %s holds vectors of %s, not of %s; push into a new collection, or recreate it", name, m.Vectors, s.Vectors)
	}
	if s.Shards > 0 {
		if got := shardCount(cls); got != s.Shards {
			return false, fmt.Errorf("collection %s exists with %d shards, not %d; shards are fixed at creation: recreate it, or leave the shard count out", name, got, s.Shards)
		}
	}
	if s.Replicas > 0 {
		if got := replicationFactor(cls.ReplicationConfig); got != s.Replicas {
			return false, fmt.Errorf("collection %s exists with replication factor %d, not %d; recreate it, or leave the replication factor out", name, got, s.Replicas)
		}
	}
	if diff := s.differences(cls, m); len(diff) > 0 {
		return false, fmt.Errorf("collection %s exists with other settings than those given: %s; a push does not change them: recreate it (--recreate), push into a new collection, or leave those settings out",
			name, strings.Join(diff, "; "))
	}
	return false, nil
}

// differences lists the settings s gives (beside vectors, shards and
// replicas, which Ensure checks) that the existing class has otherwise:
// a push into it must not leave the user believing they apply.
func (s Schema) differences(cls *models.Class, m *Meta) []string {
	var out []string
	vi := vectorIndexOf(cls)
	if s.Index != "" && s.Index != vi.Type {
		out = append(out, fmt.Sprintf("vector index %s, not %s", vi.Type, s.Index))
	}
	if vi.Type == "hnsw" {
		ef := vi.EF
		if m.EFLease != nil {
			ef = m.EFLease.Restore // a run holds another for its searches
		}
		for _, c := range []struct {
			name      string
			got, want int
		}{{"ef", ef, s.EF}, {"efConstruction", vi.EFConstruction, s.EFConstruction}, {"maxConnections", vi.MaxConnections, s.MaxConnections}} {
			if c.want != 0 && c.want != c.got {
				out = append(out, fmt.Sprintf("HNSW %s %d, not %d", c.name, c.got, c.want))
			}
		}
	} else if s.EF != 0 || s.EFConstruction != 0 || s.MaxConnections != 0 {
		out = append(out, fmt.Sprintf("a %s vector index, which takes no HNSW ef, efConstruction or maxConnections", vi.Type))
	}
	inv := cls.InvertedIndexConfig
	if s.BM25 != nil {
		k1, b := float32(1.2), float32(0.75)
		if inv != nil && inv.Bm25 != nil {
			k1, b = inv.Bm25.K1, inv.Bm25.B
		}
		if k1 != float32(s.BM25.K1) || b != float32(s.BM25.B) {
			out = append(out, fmt.Sprintf("BM25 k1 %g, b %g, not k1 %g, b %g", k1, b, s.BM25.K1, s.BM25.B))
		}
	}
	if s.Stopwords != "" {
		preset := "en"
		if inv != nil && inv.Stopwords != nil && inv.Stopwords.Preset != "" {
			preset = inv.Stopwords.Preset
		}
		if preset != s.Stopwords {
			out = append(out, fmt.Sprintf("stopwords %s, not %s", preset, s.Stopwords))
		}
	}
	if s.AsyncReplication && (cls.ReplicationConfig == nil || !cls.ReplicationConfig.AsyncEnabled) {
		out = append(out, "no asynchronous replication")
	}
	return out
}

// replicationFactor is the number of copies of each shard.
func replicationFactor(rc *models.ReplicationConfig) int {
	if rc != nil && rc.Factor > 0 {
		return int(rc.Factor)
	}
	return 1
}

func shardCount(cls *models.Class) int {
	if m, ok := cls.ShardingConfig.(map[string]any); ok {
		for _, key := range []string{"desiredCount", "actualCount"} {
			if v, ok := m[key].(float64); ok && v > 0 {
				return int(v)
			}
			if v, ok := m[key].(json.Number); ok {
				if n, err := v.Int64(); err == nil && n > 0 {
					return int(n)
				}
			}
		}
	}
	return 0
}

// Delete removes the collection and its objects; a missing one is no error.
func (c *Collection) Delete(ctx context.Context) error {
	ok, err := c.Exists(ctx)
	if err != nil || !ok {
		return err
	}
	if err := c.client.Schema().ClassDeleter().WithClassName(c.cfg.Collection).Do(ctx); err != nil {
		return c.wrap("delete collection", err)
	}
	c.meta = nil
	return nil
}

func (c *Collection) class(ctx context.Context) (*models.Class, error) {
	var cls *models.Class
	err := c.retry(ctx, "read collection", func(ctx context.Context) error {
		var err error
		cls, err = c.client.Schema().ClassGetter().WithClassName(c.cfg.Collection).Do(ctx)
		return err
	})
	if err != nil {
		var fe *fault.WeaviateClientError
		if errors.As(err, &fe) && fe.StatusCode == 404 {
			return nil, fmt.Errorf("collection %s not found at %s: push a corpus into it first (r2med index push --to weaviate://%s/%s)", c.cfg.Collection, c.cfg.URL, c.cfg.host(), c.cfg.Collection)
		}
		return nil, err
	}
	return cls, nil
}

// record reads the class and r2med's record in it.
func (c *Collection) record(ctx context.Context) (*models.Class, *Meta, error) {
	cls, err := c.class(ctx)
	if err != nil {
		return nil, nil, err
	}
	m, err := c.checkMeta(cls)
	if err != nil {
		return nil, nil, err
	}
	return cls, m, nil
}

// checkMeta reads r2med's record from the class and checks the class has
// the properties r2med writes.
func (c *Collection) checkMeta(cls *models.Class) (*Meta, error) {
	m, ok := parseMeta(cls.Description)
	if !ok {
		return nil, fmt.Errorf("collection %s was not made by r2med (its description lacks r2med's record); push into a new collection", c.cfg.Collection)
	}
	have := map[string]bool{}
	for _, p := range cls.Properties {
		have[p.Name] = true
	}
	for _, want := range []string{PropDocID, PropText, PropHash} {
		if !have[want] {
			return nil, fmt.Errorf("collection %s lacks the %s property r2med writes; push into a new collection", c.cfg.Collection, want)
		}
	}
	c.meta = m
	return m, nil
}

// Meta returns what r2med recorded when it created the collection.
func (c *Collection) Meta(ctx context.Context) (*Meta, error) {
	if c.meta != nil {
		return c.meta, nil
	}
	cls, err := c.class(ctx)
	if err != nil {
		return nil, err
	}
	return c.checkMeta(cls)
}

// setMeta writes m into the collection's description, keeping the ef
// lease the description holds now.
func (c *Collection) setMeta(ctx context.Context, m Meta) error {
	cls, err := c.class(ctx)
	if err != nil {
		return err
	}
	m.EFLease = nil
	if now, ok := parseMeta(cls.Description); ok {
		m.EFLease = now.EFLease
	}
	cls.Description = m.description()
	if err := c.updateClass(ctx, "record the push in", cls); err != nil {
		return err
	}
	c.meta = &m
	return nil
}

// Searchable returns r2med's record of the collection, or an error when
// no push into it has finished (an empty or interrupted collection).
func (c *Collection) Searchable(ctx context.Context) (*Meta, error) {
	m, err := c.Meta(ctx)
	if err != nil {
		return nil, err
	}
	if m.Digest == "" {
		return nil, fmt.Errorf("collection %s holds no finished push (an interrupted one resumes with r2med index push --to weaviate://%s/%s)", c.cfg.Collection, c.cfg.host(), c.cfg.Collection)
	}
	return m, nil
}

// SetEF changes the HNSW ef of the collection's vector index for good
// (−1: dynamic), and returns once every node holding a replica has
// applied it. Higher is slower and closer to exact. HoldEF sets it for
// the time a run searches.
func (c *Collection) SetEF(ctx context.Context, ef int) error {
	if ef < -1 || ef == 0 {
		return fmt.Errorf("ef %d: want −1 (dynamic) or a positive number", ef)
	}
	cls, m, err := c.record(ctx)
	if err != nil {
		return err
	}
	if cls.VectorIndexType != "hnsw" {
		return fmt.Errorf("collection %s has a %s vector index; ef applies to hnsw only", c.cfg.Collection, cls.VectorIndexType)
	}
	_, err = c.setEF(ctx, cls, *m, ef, m.EFLease)
	return err
}

// updateClass writes the class's new configuration.
func (c *Collection) updateClass(ctx context.Context, what string, cls *models.Class) error {
	return c.retry(ctx, what, func(ctx context.Context) error {
		return c.client.Schema().ClassUpdater().WithClass(cls).Do(ctx)
	})
}

// Count returns how many objects the collection holds.
func (c *Collection) Count(ctx context.Context) (int, error) {
	var resp *models.GraphQLResponse
	if err := c.retry(ctx, "count objects of", func(ctx context.Context) error {
		var err error
		resp, err = c.client.GraphQL().Aggregate().WithClassName(c.cfg.Collection).
			WithFields(graphql.Field{Name: "meta", Fields: []graphql.Field{{Name: "count"}}}).Do(ctx)
		return err
	}); err != nil {
		return 0, err
	}
	if len(resp.Errors) > 0 {
		return 0, fmt.Errorf("weaviate %s: count objects of %s: %s", c.cfg.URL, c.cfg.Collection, resp.Errors[0].Message)
	}
	var out struct {
		Aggregate map[string][]struct {
			Meta struct {
				Count *float64 `json:"count"`
			} `json:"meta"`
		}
	}
	b, _ := json.Marshal(resp.Data)
	if err := json.Unmarshal(b, &out); err != nil {
		return 0, fmt.Errorf("weaviate %s: count objects: unexpected answer %.200s", c.cfg.URL, b)
	}
	rows := out.Aggregate[c.cfg.Collection]
	if len(rows) != 1 || rows[0].Meta.Count == nil {
		return 0, fmt.Errorf("weaviate %s: count objects: unexpected answer %.200s", c.cfg.URL, b)
	}
	return int(*rows[0].Meta.Count), nil
}

// WaitIndexed waits until every node's shards of the collection have
// indexed every vector they hold: no vector queue left (servers with
// ASYNC_INDEXING=true index in the background) and every shard READY. It
// returns at once on a server that indexes as it writes.
func (c *Collection) WaitIndexed(ctx context.Context) error {
	for {
		var resp *models.NodesStatusResponse
		if err := c.retry(ctx, "read indexing status of", func(ctx context.Context) error {
			var err error
			resp, err = c.client.Cluster().NodesStatusGetter().WithClass(c.cfg.Collection).WithOutput("verbose").Do(ctx)
			return err
		}); err != nil {
			return err
		}
		pending := ""
		for _, n := range resp.Nodes {
			for _, s := range n.Shards {
				if s.Class != c.cfg.Collection {
					continue
				}
				if s.VectorQueueLength > 0 || (s.VectorIndexingStatus != "" && s.VectorIndexingStatus != "READY") {
					pending = fmt.Sprintf("node %s shard %s: %s, %d vectors queued", n.Name, s.Name, s.VectorIndexingStatus, s.VectorQueueLength)
				}
			}
		}
		if pending == "" {
			return nil
		}
		if err := httpx.Sleep(ctx, 200*time.Millisecond); err != nil {
			return fmt.Errorf("weaviate %s: collection %s still indexing (%s): %w", c.cfg.URL, c.cfg.Collection, pending, err)
		}
	}
}

// Info is what a manifest records about the collection a run searched.
type Info struct {
	URL           string         `json:"url"`
	GRPC          string         `json:"grpc"`
	Collection    string         `json:"collection"`
	ServerVersion string         `json:"server_version"` // /v1/meta
	Digest        string         `json:"digest"`         // of the corpus the last finished push wrote (Meta.Digest)
	Nodes         int            `json:"nodes"`
	Objects       int            `json:"objects"`
	Config        map[string]any `json:"config"` // the collection as the server reports it (/v1/schema/NAME)
}

// Info reads the server version, the cluster size, the object count and
// the collection's configuration.
func (c *Collection) Info(ctx context.Context) (Info, error) {
	info := Info{URL: c.cfg.URL, GRPC: c.cfg.GRPCAddr(), Collection: c.cfg.Collection}
	if err := c.retry(ctx, "read /v1/meta for", func(ctx context.Context) error {
		meta, err := c.client.Misc().MetaGetter().Do(ctx)
		if err == nil {
			info.ServerVersion = meta.Version
		}
		return err
	}); err != nil {
		return info, err
	}
	if err := c.retry(ctx, "read /v1/nodes for", func(ctx context.Context) error {
		nodes, err := c.client.Cluster().NodesStatusGetter().Do(ctx)
		if err == nil {
			info.Nodes = len(nodes.Nodes)
		}
		return err
	}); err != nil {
		return info, err
	}
	cls, m, err := c.record(ctx)
	if err != nil {
		return info, err
	}
	info.Digest = m.Digest
	b, err := json.Marshal(cls)
	if err != nil {
		return info, err
	}
	if err := json.Unmarshal(b, &info.Config); err != nil {
		return info, err
	}
	if info.Objects, err = c.Count(ctx); err != nil {
		return info, err
	}
	return info, nil
}

// wrap names the server and collection in an error from the client, and
// says what to do when the server is not there.
func (c *Collection) wrap(what string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("weaviate %s: %s %s: %w", c.cfg.URL, what, c.cfg.Collection, err)
	}
	msg := err.Error()
	if strings.Contains(msg, "connection refused") || strings.Contains(msg, "no such host") {
		return fmt.Errorf("weaviate %s: %s %s: %w (is weaviate-server running there? see README, Scaling out)", c.cfg.URL, what, c.cfg.Collection, err)
	}
	return fmt.Errorf("weaviate %s: %s %s: %w", c.cfg.URL, what, c.cfg.Collection, err)
}

// BM25Searcher names the BM25 searcher that answers the collection's BM25
// (and hybrid's keyword side), as its configuration records it:
// "blockmax-wand" (Weaviate's default since 1.30) or "exhaustive" (a
// collection created on a server started with USE_INVERTED_SEARCHABLE=false).
// They score differently, and Weaviate 1.35.2's BlockMax WAND leaves out of
// some queries' top hits a document that scores above one it keeps,
// depending on the segment layout: its answers change as segments compact,
// without a push (README, Scaling out).
func (i Info) BM25Searcher() string {
	inv, _ := i.Config["invertedIndexConfig"].(map[string]any)
	if on, _ := inv["usingBlockMaxWAND"].(bool); on {
		return "blockmax-wand"
	}
	return "exhaustive"
}

// BM25Note is the warning line a run's summary carries when a BlockMax WAND
// searcher answered its BM25 (BM25Searcher); "" for the exhaustive one.
func BM25Note(name string, info Info) string {
	if info.BM25Searcher() != "blockmax-wand" {
		return ""
	}
	return fmt.Sprintf("warning: %s: collection %s's BM25 is Weaviate's BlockMax WAND searcher, which in Weaviate %s can leave a document out of a query's top hits that scores above one it keeps, and answer differently as segments compact; a collection pushed to a server started with USE_INVERTED_SEARCHABLE=false uses the exhaustive searcher (README, Scaling out)",
		name, info.Collection, info.ServerVersion)
}
