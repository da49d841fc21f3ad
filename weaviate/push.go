package weaviate

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-openapi/strfmt"
	"github.com/google/uuid"
	"github.com/weaviate/weaviate-go-client/v5/weaviate/fault"
	"github.com/weaviate/weaviate-go-client/v5/weaviate/graphql"
	"github.com/weaviate/weaviate/entities/models"
	"golang.org/x/sync/errgroup"

	"github.com/r2med/r2med/internal/errtext"
	"github.com/r2med/r2med/internal/httpx"
	"github.com/r2med/r2med/internal/progress"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/vector"
)

// ObjectID is the UUID of a document's object: UUIDv5 of the document id
// in the DNS namespace, as the Python client's generate_uuid5(doc_id).
func ObjectID(docID string) string {
	return uuid.NewSHA1(uuid.NameSpaceDNS, []byte(docID)).String()
}

// ContentHash is the contentHash property of a document's object: sha256
// over the length-prefixed id and text and the vector's float32 bits
// (little-endian), hex, first 32 digits.
func ContentHash(docID, text string, vec []float32) string {
	h := sha256.New()
	var n [8]byte
	for _, s := range []string{docID, text} {
		binary.LittleEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	binary.LittleEndian.PutUint64(n[:], uint64(len(vec)))
	h.Write(n[:])
	for _, x := range vec {
		binary.LittleEndian.PutUint32(n[:4], math.Float32bits(x))
		h.Write(n[:4])
	}
	return hex.EncodeToString(h.Sum(nil))[:32]
}

// PushOptions tune Push; the zero value works.
type PushOptions struct {
	// BatchSize is the number of objects per batch request; 0: 200.
	BatchSize int
	// Workers is the number of batch requests in flight; 0: 2.
	Workers int
	// Retries is how many times a failed batch (or the objects a batch
	// failed to write) is sent again; 0: 6; negative: never.
	Retries int
	// Backoff is the first retry's delay, doubled each retry up to 30 s,
	// with full jitter; 0: 500 ms.
	Backoff time.Duration
	// Consistency is the write consistency level: ONE, QUORUM or ALL;
	// "": ALL on a replicated collection (a write every replica
	// acknowledged), else Weaviate's default. Whatever it is, a push
	// ends only when every replica holds every object (see Push).
	Consistency string
	// RepairRounds bounds how many times the objects that are not on
	// every replica are sent again before the push fails; 0: 3.
	RepairRounds int
	// Repair is what a push does when a replica lacks objects after the
	// writes: RepairRebuild (the default) makes the collection anew and
	// writes every object again, RepairResend writes again only what is
	// missing (quicker, but see Push).
	Repair Repair
	// Progress draws a bar of documents pushed.
	Progress progress.Factory
}

// Repair is how a push mends replicas that lack objects.
type Repair string

const (
	// RepairRebuild makes the collection anew, with the same
	// configuration, and writes every object again: every node's indexes
	// and statistics start clean.
	RepairRebuild Repair = "rebuild"
	// RepairResend writes again, at consistency ALL, the objects some
	// replica lacks. A node that died while writing may still lack, in
	// its vector or inverted index, objects its store holds, and keep
	// BM25 statistics slightly off: searches through it can differ.
	RepairResend Repair = "resend"
)

// ParseRepair reads rebuild or resend; "" is rebuild.
func ParseRepair(s string) (Repair, error) {
	switch Repair(s) {
	case "", RepairRebuild:
		return RepairRebuild, nil
	case RepairResend:
		return RepairResend, nil
	}
	return "", fmt.Errorf("repair %q: want rebuild or resend", s)
}

func (o PushOptions) withDefaults() PushOptions {
	if o.BatchSize <= 0 {
		o.BatchSize = 200
	}
	if o.Workers <= 0 {
		o.Workers = 2
	}
	if o.Retries == 0 {
		o.Retries = 6
	} else if o.Retries < 0 {
		o.Retries = 0
	}
	if o.Backoff <= 0 {
		o.Backoff = 500 * time.Millisecond
	}
	if o.RepairRounds <= 0 {
		o.RepairRounds = 3
	}
	return o
}

// PushStats say what a push did.
type PushStats struct {
	Docs    int // documents in the corpus
	Present int // already in the collection unchanged: skipped
	Written int // objects written now (new or changed), repairs not counted
	Changed int // of Written, objects that were there with other content
	// Repaired counts, per node, the objects a replica on it lacked (or
	// held with other content) after the writes, and that were written
	// again at consistency ALL.
	Repaired map[string]int
	// Rebuilt counts the objects written into the collection made anew
	// because a replica had lost writes (PushOptions.Repair).
	Rebuilt int
	Retries int // requests sent again after a failure
	Objects int // objects the collection holds at the end (= Docs)
	// Replicas is the collection's layout at the end.
	Replicas Replicas
	Elapsed  time.Duration // the whole push, listing and verifying included
}

// Push writes one object per document into the collection (which Ensure
// or Create made): vecs[i] is docs[i]'s vector, and must be given exactly
// when the collection holds vectors. Objects already present with the same
// content are skipped, so a push resumes where an interrupted one stopped
// and a repeated push writes nothing; objects of documents not in docs
// make it fail before writing anything.
//
// A push is complete only when every replica of every shard holds every
// object (VerifyReplicas). On a replicated collection a member of the
// cluster that is not healthy fails the push before anything is written,
// named: its replicas can be neither written nor verified. Writes go at
// consistency ALL unless PushOptions.Consistency says otherwise, but ALL
// is not enough: once Weaviate has marked a node dead it writes ALL to
// the replicas left, and the listing that decides what to write reads one
// replica. So at the end every object is read from every replica — not
// counted: Weaviate's per-replica counts lag behind writes, and a replica
// that missed an update holds as many objects as one that did not — and
// what one lacks is mended (PushOptions.Repair), up to RepairRounds times. On a collection with
// one copy the object count must equal len(docs). Push then waits until
// every vector is indexed (WaitIndexed).
func (c *Collection) Push(ctx context.Context, docs []ir.Doc, vecs [][]float32, opt PushOptions) (PushStats, error) {
	start := time.Now()
	opt = opt.withDefaults()
	st := PushStats{Docs: len(docs)}
	meta, err := c.Meta(ctx)
	if err != nil {
		return st, err
	}
	if err := checkVectors(c.cfg.Collection, meta, docs, vecs); err != nil {
		return st, err
	}
	ids := make(map[string]int, len(docs)) // object UUID → document index
	for i, d := range docs {
		if d.ID == "" {
			return st, fmt.Errorf("document %d has an empty id", i+1)
		}
		u := ObjectID(d.ID)
		if j, dup := ids[u]; dup {
			return st, fmt.Errorf("document id %q appears twice (documents %d and %d); ids must be unique", d.ID, j+1, i+1)
		}
		ids[u] = i
	}
	if st.Replicas, err = c.Replicas(ctx); err != nil {
		return st, err
	}
	replicated := st.Replicas.Factor > 1
	writeLevel := opt.Consistency
	if replicated {
		if err := c.checkNodes(st.Replicas); err != nil {
			return st, err
		}
		if writeLevel == "" {
			writeLevel = "ALL"
		}
	}

	existing, err := c.objects(ctx, opt.Consistency)
	if err != nil {
		return st, err
	}
	var foreign []string
	for u, o := range existing {
		if _, ok := ids[u]; !ok {
			foreign = append(foreign, o.docID)
		}
	}
	if len(foreign) > 0 {
		slices.Sort(foreign)
		return st, fmt.Errorf("collection %s holds %d %s of documents this corpus lacks (%s): it holds another corpus; push into a new collection, or recreate it",
			c.cfg.Collection, len(foreign), errtext.Plural(len(foreign), "object", "objects"), errtext.QuoteList(foreign, 3))
	}

	var todo []*models.Object
	objs := make([]*models.Object, len(docs))
	hashes := make([]string, len(docs))
	for i, d := range docs {
		var v []float32
		if vecs != nil {
			v = vecs[i]
		}
		hash := ContentHash(d.ID, d.Text, v)
		hashes[i] = hash
		u := ObjectID(d.ID)
		objs[i] = &models.Object{
			Class:      c.cfg.Collection,
			ID:         strfmt.UUID(u),
			Properties: map[string]any{PropDocID: d.ID, PropText: d.Text, PropHash: hash},
			Vector:     v,
		}
		if o, ok := existing[u]; ok {
			if o.hash == hash {
				st.Present++
				continue
			}
			st.Changed++
		}
		todo = append(todo, objs[i])
	}

	digest := Digest(docs, hashes)
	done := Meta{R2MED: 1, Vectors: meta.Vectors, Digest: digest, Docs: len(docs), TextDigest: TextDigest(docs)}
	unfinished := false
	// From the first write until the end the collection is not the
	// corpus any push finished: searches refuse it (Searchable).
	unfinish := func() error {
		if unfinished || meta.Digest == "" {
			return nil
		}
		unfinished = true
		pushing := *meta
		pushing.Digest, pushing.Docs, pushing.TextDigest = "", 0, ""
		return c.setMeta(ctx, pushing)
	}
	if len(todo) > 0 {
		if err := unfinish(); err != nil {
			return st, err
		}
	}

	bar := opt.Progress.New(len(docs), "push "+c.cfg.Collection)
	bar.Add(st.Present)
	err = c.writeAll(ctx, todo, writeLevel, opt, bar, &st)
	bar.Done()
	if err != nil {
		return st, c.pushFailed(ctx, err)
	}
	st.Written = len(todo)

	if replicated {
		if err := c.verifyReplicas(ctx, objs, opt, &st, unfinish); err != nil {
			return st, err
		}
	} else if err := c.verifyCount(ctx, len(docs), &st); err != nil {
		return st, err
	}
	// A push ends when its vectors are searchable, also on servers that
	// index in the background.
	if meta.Vectors != nil {
		if err := c.WaitIndexed(ctx); err != nil {
			return st, err
		}
	}
	if *meta != done || unfinished {
		if err := c.setMeta(ctx, done); err != nil {
			return st, err
		}
	}
	st.Elapsed = time.Since(start)
	return st, nil
}

// writeAll writes objs in batches at consistency level, Workers at a time.
func (c *Collection) writeAll(ctx context.Context, objs []*models.Object, level string, opt PushOptions, bar *progress.Bar, st *PushStats) error {
	var retries atomic.Int64
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(opt.Workers)
	for lo := 0; lo < len(objs); lo += opt.BatchSize {
		batch := objs[lo:min(lo+opt.BatchSize, len(objs))]
		g.Go(func() error {
			n, err := c.writeBatch(gctx, batch, level, opt, bar)
			retries.Add(int64(n))
			return err
		})
	}
	err := g.Wait()
	st.Retries += int(retries.Load())
	return err
}

// checkNodes fails when a member of the cluster is not healthy, or a
// replica does not answer: such a replica can be neither written nor
// verified.
func (c *Collection) checkNodes(r Replicas) error {
	down := r.Down()
	if len(down) == 0 {
		return nil
	}
	return fmt.Errorf("collection %s: %s (Weaviate's cluster status via %s): a push must write and verify every replica; start the node (wait until /v1/nodes lists it HEALTHY) and push again: the push resumes and repairs what its replicas missed",
		c.cfg.Collection, strings.Join(down, "; "), c.cfg.URL)
}

// pushFailed words a failed write: when a member of the cluster is not
// healthy, it is the one named.
func (c *Collection) pushFailed(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return err
	}
	if r, rerr := c.Replicas(ctx); rerr == nil && len(r.Down()) > 0 {
		return fmt.Errorf("%w\n(the write that failed: %v)", c.checkNodes(r), err)
	}
	return err
}

// verifyCount checks a collection with one copy of each shard: the count
// must reach the corpus size (it may lag a moment behind the last
// acknowledged write).
func (c *Collection) verifyCount(ctx context.Context, want int, st *PushStats) error {
	for attempt := 0; ; attempt++ {
		var err error
		if st.Objects, err = c.Count(ctx); err != nil {
			return err
		}
		if st.Objects == want {
			return nil
		}
		if attempt == 20 {
			return fmt.Errorf("collection %s holds %d objects after the push, not the corpus's %d; push again to fill it in", c.cfg.Collection, st.Objects, want)
		}
		if err := httpx.Sleep(ctx, 250*time.Millisecond); err != nil {
			return err
		}
	}
}

// verifyReplicas makes sure every replica holds every object: what one
// lacks is written again at ALL, up to RepairRounds times.
func (c *Collection) verifyReplicas(ctx context.Context, objs []*models.Object, opt PushOptions, st *PushStats, unfinish func() error) error {
	check := objs
	for round := 0; ; round++ {
		r, err := c.Replicas(ctx)
		if err != nil {
			return err
		}
		st.Replicas = r
		if err := c.checkNodes(r); err != nil {
			return err
		}
		short, err := c.VerifyReplicas(ctx, r, check, opt.Workers*8)
		if err != nil {
			return err
		}
		if len(short) == 0 {
			st.Objects = len(objs)
			return nil
		}
		if round == opt.RepairRounds {
			return c.incomplete(r, short, len(objs), round)
		}
		if err := unfinish(); err != nil {
			return err
		}
		var again []*models.Object
		if st.Repaired == nil {
			st.Repaired = map[string]int{}
		}
		for _, s := range short {
			again = append(again, s.Object)
			for _, n := range s.Nodes {
				st.Repaired[n]++
			}
		}
		if round == 0 && opt.Repair != RepairResend {
			// A replica that lacks objects lost writes: its node died
			// while writing, or was away. What a node that died holds
			// may be missing from its vector and inverted indexes (a
			// killed node loses the tail of its indexing queue), and
			// its BM25 statistics may be off; Weaviate repairs neither
			// on restart, and writing an unchanged object again changes
			// nothing there. So the collection is made anew, with the
			// same configuration, and every object written again.
			if err := c.recreate(ctx); err != nil {
				return err
			}
			again = objs
			st.Rebuilt = len(objs)
		}
		if err := c.writeAll(ctx, again, "ALL", opt, nil, st); err != nil {
			return c.pushFailed(ctx, err)
		}
		check = again
	}
}

// recreate deletes the collection and creates it again with the same
// configuration and r2med's record of an unfinished push: every shard
// replica starts empty.
func (c *Collection) recreate(ctx context.Context) error {
	cls, m, err := c.record(ctx)
	if err != nil {
		return err
	}
	pushing := *m
	if l := m.EFLease; l != nil {
		// A run holds ef for its searches: the new collection gets the
		// collection's own, and the run finds its lease gone.
		if idx, ok := cls.VectorIndexConfig.(map[string]any); ok {
			idx["ef"] = l.Restore
		}
	}
	pushing.Digest, pushing.Docs, pushing.TextDigest, pushing.EFLease = "", 0, "", nil
	cls.Description = pushing.description()
	if sc, ok := cls.ShardingConfig.(map[string]any); ok {
		// Weaviate fills these in; a new class must not give them.
		delete(sc, "actualCount")
		delete(sc, "actualVirtualCount")
	}
	if err := c.retry(ctx, "delete (to make anew)", func(ctx context.Context) error {
		return c.client.Schema().ClassDeleter().WithClassName(c.cfg.Collection).Do(ctx)
	}); err != nil {
		return err
	}
	if err := c.retry(ctx, "create anew", func(ctx context.Context) error {
		return c.client.Schema().ClassCreator().WithClass(cls).Do(ctx)
	}); err != nil {
		return fmt.Errorf("%w (the collection was deleted to be made anew: push again to create and fill it)", err)
	}
	c.meta = &pushing
	return nil
}

// Short is an object that some replicas lack, or hold with other content.
type Short struct {
	Object *models.Object
	Nodes  []string // the nodes whose replica lacks it
}

// VerifyReplicas reads every object of objs from every node holding a
// replica of the collection (GET /v1/objects/CLASS/ID?node_name=NODE,
// workers at a time) and returns those some replica lacks or holds with
// another content hash. Where not every node holds every shard, a node
// that holds none of an object's shard says so and is skipped; an object
// must then be found on as many nodes as the replication factor.
func (c *Collection) VerifyReplicas(ctx context.Context, r Replicas, objs []*models.Object, workers int) ([]Short, error) {
	holders := r.holders()
	type result struct {
		present int
		lacking []string
	}
	results := make([]result, len(objs))
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(max(1, workers))
	for i, o := range objs {
		want := o.Properties.(map[string]any)[PropHash].(string)
		for _, node := range holders {
			g.Go(func() error {
				hash, state, err := c.replicaObject(gctx, node, string(o.ID))
				if err != nil {
					return err
				}
				mu.Lock()
				defer mu.Unlock()
				switch {
				case state == replicaElsewhere:
				case state == replicaHolds && hash == want:
					results[i].present++
				default:
					results[i].lacking = append(results[i].lacking, node)
				}
				return nil
			})
		}
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	var short []Short
	for i, res := range results {
		if len(res.lacking) > 0 || res.present < r.Factor {
			slices.Sort(res.lacking)
			short = append(short, Short{Object: objs[i], Nodes: res.lacking})
		}
	}
	return short, nil
}

const (
	replicaHolds     = iota // the node's replica holds the object
	replicaLacks            // the node holds the object's shard, not the object
	replicaElsewhere        // the node holds no replica of the object's shard
)

// replicaObject reads one object from one node's replica: its content
// hash, and whether the replica holds it.
func (c *Collection) replicaObject(ctx context.Context, node, id string) (string, int, error) {
	var reply struct {
		Properties map[string]any `json:"properties"`
	}
	state := replicaHolds
	err := c.retry(ctx, "read an object from node "+node+"'s replica of", func(ctx context.Context) error {
		err := c.getJSON(ctx, "/v1/objects/"+url.PathEscape(c.cfg.Collection)+"/"+url.PathEscape(id)+"?node_name="+url.QueryEscape(node), &reply)
		var fe *fault.WeaviateClientError
		switch {
		case errors.As(err, &fe) && fe.StatusCode == http.StatusNotFound:
			state = replicaLacks
			return nil
		case errors.As(err, &fe) && strings.Contains(fe.Msg, "does not exist locally"):
			state = replicaElsewhere
			return nil
		}
		return err
	})
	if err != nil {
		return "", 0, err
	}
	hash, _ := reply.Properties[PropHash].(string)
	return hash, state, nil
}

// incomplete words a push whose repairs did not make every replica whole.
func (c *Collection) incomplete(r Replicas, short []Short, total, rounds int) error {
	lacking := map[string][]string{}
	for _, s := range short {
		id, _ := s.Object.Properties.(map[string]any)[PropDocID].(string)
		for _, n := range s.Nodes {
			lacking[n] = append(lacking[n], id)
		}
	}
	var where []string
	for _, n := range slices.Sorted(maps.Keys(lacking)) {
		where = append(where, fmt.Sprintf("node %s lacks %d (%s)", n, len(lacking[n]), errtext.QuoteList(lacking[n], 3)))
	}
	if d := r.Problems(); len(d) > 0 {
		where = append(where, "Weaviate's node status: "+strings.Join(d, "; "))
	}
	return fmt.Errorf("collection %s (%s): %d of %d objects are not on every replica after %d %s of writing them again at consistency ALL: %s; the collection is left unfinished (searches refuse it): check those nodes' logs and disks, then push again",
		c.cfg.Collection, r, len(short), total, rounds, errtext.Plural(rounds, "round", "rounds"), strings.Join(where, "; "))
}

// TextDigest identifies a corpus by its ids and texts alone: Digest with
// each document's ContentHash taken without a vector.
func TextDigest(docs []ir.Doc) string {
	hashes := make([]string, len(docs))
	for i, d := range docs {
		hashes[i] = ContentHash(d.ID, d.Text, nil)
	}
	return Digest(docs, hashes)
}

// Digest identifies a corpus as pushed: sha256 over its documents' ids and
// content hashes (ContentHash, which covers text and vector), in id order,
// hex.
func Digest(docs []ir.Doc, hashes []string) string {
	order := make([]int, len(docs))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return strings.Compare(docs[a].ID, docs[b].ID) })
	h := sha256.New()
	for _, i := range order {
		h.Write([]byte(docs[i].ID))
		h.Write([]byte{0})
		h.Write([]byte(hashes[i]))
		h.Write([]byte{'\n'})
	}
	return hex.EncodeToString(h.Sum(nil))
}

func checkVectors(name string, meta *Meta, docs []ir.Doc, vecs [][]float32) error {
	if meta.Vectors == nil {
		if vecs != nil {
			return fmt.Errorf("collection %s was created without vectors; push BM25-only (no dense flags), or into a new collection", name)
		}
		return nil
	}
	if vecs == nil {
		return fmt.Errorf("collection %s holds vectors of %s: give its vectors (the same dense flags)", name, meta.Vectors.Model)
	}
	if len(vecs) != len(docs) {
		return fmt.Errorf("%d vectors for %d documents", len(vecs), len(docs))
	}
	for i, v := range vecs {
		if len(v) != meta.Vectors.Dim {
			return fmt.Errorf("document %q: vector of dimension %d, collection %s holds dimension %d", docs[i].ID, len(v), name, meta.Vectors.Dim)
		}
		for _, x := range v {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return fmt.Errorf("document %q: its vector holds %v", docs[i].ID, x)
			}
		}
	}
	return nil
}

// writeBatch sends one batch, retrying the whole request on transient
// errors and the objects the server failed to write; it returns how many
// requests it sent again.
func (c *Collection) writeBatch(ctx context.Context, objs []*models.Object, level string, opt PushOptions, bar *progress.Bar) (int, error) {
	retries := 0
	pending := objs
	for attempt := 0; ; attempt++ {
		resp, err := c.client.Batch().ObjectsBatcher().WithObjects(pending...).WithConsistencyLevel(level).Do(ctx)
		var failed []*models.Object
		var firstErr string
		if err == nil {
			if len(resp) != len(pending) {
				err = fmt.Errorf("weaviate answered %d results for %d objects", len(resp), len(pending))
			}
			for i := range resp {
				if r := resp[i].Result; r != nil && r.Errors != nil && len(r.Errors.Error) > 0 {
					failed = append(failed, pending[i])
					if firstErr == "" {
						firstErr = fmt.Sprintf("document %q: %s", pending[i].Properties.(map[string]any)[PropDocID], r.Errors.Error[0].Message)
					}
				}
			}
			if err == nil {
				bar.Add(len(pending) - len(failed))
				if len(failed) == 0 {
					return retries, nil
				}
				pending = failed
			}
		}
		if err != nil && !transient(ctx, err) {
			return retries, c.wrap("batch import into", err)
		}
		if attempt >= opt.Retries {
			if err != nil {
				return retries, fmt.Errorf("%w (after %d retries)", c.wrap("batch import into", err), retries)
			}
			return retries, fmt.Errorf("weaviate %s: batch import into %s at consistency %s: %d of %d objects not written after %d retries; first: %s",
				c.cfg.URL, c.cfg.Collection, levelName(level), len(failed), len(objs), retries, firstErr)
		}
		if err := httpx.Sleep(ctx, backoff(opt.Backoff, attempt)); err != nil {
			return retries, err
		}
		retries++
	}
}

// object is what a listing says of one object: its document id and its
// content hash.
type object struct{ docID, hash string }

// listPage is how many objects one cursor request lists.
const listPage = 1000

// objects lists every object of the collection (UUID → doc id and
// content hash) with Weaviate's cursor API, at consistency level.
func (c *Collection) objects(ctx context.Context, level string) (map[string]object, error) {
	out := map[string]object{}
	err := c.scan(ctx, level, 0, func(r graphql.SearchResult) {
		id, _ := r.Properties[PropDocID].(string)
		hash, _ := r.Properties[PropHash].(string)
		out[r.ID] = object{docID: id, hash: hash}
	})
	return out, err
}

// listBytes bounds the vectors one listing page carries: gRPC clients
// take answers of up to 4 MB, and Weaviate 1.35 sends each vector twice
// (as a vector and among the named vectors), 8 bytes a dimension.
const listBytes = 2 << 20

// scan calls fn with every object of the collection (its docId and
// contentHash properties, its vector of dim dimensions when dim > 0),
// page by page with Weaviate's cursor API, at consistency level.
func (c *Collection) scan(ctx context.Context, level string, dim int, fn func(graphql.SearchResult)) error {
	after := ""
	page := listPage
	vectors := dim > 0
	if vectors {
		page = max(1, min(listPage, listBytes/(8*dim)))
	}
	for {
		var res []graphql.SearchResult
		if err := c.retry(ctx, "list objects of", func(ctx context.Context) error {
			s := c.client.Experimental().Search().WithCollection(c.cfg.Collection).WithLimit(page).
				WithProperties(PropDocID, PropHash).WithConsistencyLevel(level).
				WithMetadata(&graphql.Metadata{ID: true, Vector: vectors})
			if after != "" {
				s = s.WithAfter(after)
			}
			var err error
			res, err = s.Do(ctx)
			return err
		}); err != nil {
			if (strings.Contains(err.Error(), "query maximum results exceeded") || strings.Contains(err.Error(), "larger than max")) && page > 1 {
				// A server whose QUERY_MAXIMUM_RESULTS is below a
				// page, or a page over gRPC's 4 MB.
				page /= 2
				continue
			}
			return err
		}
		for _, r := range res {
			fn(r)
		}
		if len(res) < page {
			return nil
		}
		after = res[len(res)-1].ID
	}
}

func levelName(level string) string {
	if level == "" {
		return "Weaviate's default"
	}
	return level
}

// DocIDs lists the document ids of every object in the collection, in no
// particular order; consistency is the read consistency level ("" for
// Weaviate's default).
func (c *Collection) DocIDs(ctx context.Context, consistency string) ([]string, error) {
	objs, err := c.objects(ctx, consistency)
	if err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(objs))
	for _, o := range objs {
		ids = append(ids, o.docID)
	}
	return ids, nil
}

// FlatVectors returns, for each document, its row of flat (looked up by
// id), ready for Push: the way to push vectors r2med already holds (an
// embedded corpus, a vector file). A document flat lacks is an error.
func FlatVectors(docs []ir.Doc, flat *vector.Flat) ([][]float32, error) {
	out := make([][]float32, len(docs))
	var missing []string
	for i, d := range docs {
		r, ok := flat.Lookup(d.ID)
		if !ok {
			missing = append(missing, d.ID)
			continue
		}
		out[i] = flat.Row(r)
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%d %s no vector (%s)", len(missing), errtext.Plural(len(missing), "document has", "documents have"), errtext.QuoteList(missing, 3))
	}
	return out, nil
}
