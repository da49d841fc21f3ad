package weaviate

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-openapi/strfmt"
	"github.com/google/uuid"
	"github.com/weaviate/weaviate/entities/models"
	"golang.org/x/sync/errgroup"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

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
	// Consistency is the write consistency level: ONE, QUORUM (Weaviate's
	// default) or ALL.
	Consistency string
	// Progress draws a bar of documents pushed.
	Progress progress.Factory
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
	return o
}

// PushStats say what a push did.
type PushStats struct {
	Docs    int           // documents in the corpus
	Present int           // already in the collection unchanged: skipped
	Written int           // objects written now (new or changed)
	Changed int           // of Written, objects that were there with other content
	Retries int           // requests sent again after a failure
	Objects int           // objects the collection holds at the end (= Docs)
	Elapsed time.Duration // the whole push, listing and verifying included
}

// Push writes one object per document into the collection (which Ensure
// or Create made): vecs[i] is docs[i]'s vector, and must be given exactly
// when the collection holds vectors. Objects already present with the same
// content are skipped, so a push resumes where an interrupted one stopped
// and a repeated push writes nothing; objects of documents not in docs
// make it fail before writing anything. At the end the collection's object
// count must equal len(docs), and Push waits until every vector is
// indexed (WaitIndexed).
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
	hashes := make([]string, len(docs))
	for i, d := range docs {
		var v []float32
		if vecs != nil {
			v = vecs[i]
		}
		hash := ContentHash(d.ID, d.Text, v)
		hashes[i] = hash
		u := ObjectID(d.ID)
		if o, ok := existing[u]; ok {
			if o.hash == hash {
				st.Present++
				continue
			}
			st.Changed++
		}
		todo = append(todo, &models.Object{
			Class:      c.cfg.Collection,
			ID:         strfmt.UUID(u),
			Properties: map[string]any{PropDocID: d.ID, PropText: d.Text, PropHash: hash},
			Vector:     v,
		})
	}

	digest := Digest(docs, hashes)
	done := Meta{R2MED: 1, Vectors: meta.Vectors, Digest: digest, Docs: len(docs), TextDigest: TextDigest(docs)}
	if len(todo) > 0 && meta.Digest != "" {
		// From here until the end the collection is not the corpus any
		// push finished: searches refuse it (Searchable).
		pushing := *meta
		pushing.Digest, pushing.Docs, pushing.TextDigest = "", 0, ""
		if err := c.setMeta(ctx, pushing); err != nil {
			return st, err
		}
	}

	bar := opt.Progress.New(len(docs), "push "+c.cfg.Collection)
	bar.Add(st.Present)
	var retries atomic.Int64
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(opt.Workers)
	for lo := 0; lo < len(todo); lo += opt.BatchSize {
		batch := todo[lo:min(lo+opt.BatchSize, len(todo))]
		g.Go(func() error {
			n, err := c.writeBatch(gctx, batch, opt, bar)
			retries.Add(int64(n))
			return err
		})
	}
	err = g.Wait()
	bar.Done()
	st.Retries = int(retries.Load())
	if err != nil {
		return st, err
	}
	st.Written = len(todo)

	// Verify: the count must reach the corpus size (it may lag a moment
	// behind the last acknowledged write on a replicated collection).
	for attempt := 0; ; attempt++ {
		if st.Objects, err = c.Count(ctx); err != nil {
			return st, err
		}
		if st.Objects == len(docs) {
			break
		}
		if attempt == 20 {
			return st, fmt.Errorf("collection %s holds %d objects after the push, not the corpus's %d; push again to fill it in", c.cfg.Collection, st.Objects, len(docs))
		}
		if err := httpx.Sleep(ctx, 250*time.Millisecond); err != nil {
			return st, err
		}
	}
	// A push ends when its vectors are searchable, also on servers that
	// index in the background.
	if meta.Vectors != nil {
		if err := c.WaitIndexed(ctx); err != nil {
			return st, err
		}
	}
	if *meta != done {
		if err := c.setMeta(ctx, done); err != nil {
			return st, err
		}
	}
	st.Elapsed = time.Since(start)
	return st, nil
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
func (c *Collection) writeBatch(ctx context.Context, objs []*models.Object, opt PushOptions, bar *progress.Bar) (int, error) {
	retries := 0
	pending := objs
	for attempt := 0; ; attempt++ {
		resp, err := c.client.Batch().ObjectsBatcher().WithObjects(pending...).WithConsistencyLevel(opt.Consistency).Do(ctx)
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
			return retries, fmt.Errorf("weaviate %s: %d of %d objects not written after %d retries; first: %s", c.cfg.URL, len(failed), len(objs), retries, firstErr)
		}
		if err := httpx.Sleep(ctx, backoff(opt.Backoff, attempt)); err != nil {
			return retries, err
		}
		retries++
	}
}

// transient reports whether a failed request may succeed when sent again.
func transient(ctx context.Context, err error) bool {
	if ctx.Err() != nil || errors.Is(err, context.Canceled) {
		return false
	}
	if s, ok := status.FromError(err); ok {
		switch s.Code() {
		case codes.Unavailable, codes.DeadlineExceeded, codes.ResourceExhausted, codes.Aborted, codes.Internal, codes.Unknown:
			return true
		}
		return false
	}
	return errors.Is(err, context.DeadlineExceeded) || strings.Contains(err.Error(), "connection refused") || strings.Contains(err.Error(), "connection reset")
}

// backoff is the full-jitter delay before retry attempt+1.
func backoff(base time.Duration, attempt int) time.Duration {
	d := base << min(attempt, 10)
	if max := 30 * time.Second; d > max || d <= 0 {
		d = max
	}
	return time.Duration(rand.Int64N(int64(d))) + time.Millisecond
}

type object struct{ docID, hash string }

// objects lists every object of the collection (UUID → doc id and
// content hash) with Weaviate's cursor API.
func (c *Collection) objects(ctx context.Context, consistency string) (map[string]object, error) {
	out := map[string]object{}
	after := ""
	for {
		s := c.client.Experimental().Search().WithCollection(c.cfg.Collection).WithLimit(1000).
			WithProperties(PropDocID, PropHash).WithConsistencyLevel(consistency)
		if after != "" {
			s = s.WithAfter(after)
		}
		res, err := s.Do(ctx)
		if err != nil {
			return nil, c.wrap("list objects of", err)
		}
		for _, r := range res {
			id, _ := r.Properties[PropDocID].(string)
			hash, _ := r.Properties[PropHash].(string)
			out[r.ID] = object{docID: id, hash: hash}
		}
		if len(res) < 1000 {
			return out, nil
		}
		after = res[len(res)-1].ID
	}
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
