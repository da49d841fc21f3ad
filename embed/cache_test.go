package embed

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/r2med/r2med/cache"
	"github.com/r2med/r2med/usage"
)

// counting is a fake backend: a text's vector is a function of its side
// and content, and it records every text it was asked for.
type counting struct {
	mu    sync.Mutex
	dim   int
	calls int
	texts []string
	// cancelAfter, if set, cancels after that many calls.
	cancelAfter int
	cancel      context.CancelFunc
}

func fakeVector(input Input, text string, dim int) []float32 {
	v := make([]float32, dim)
	for i := range v {
		h := fnv.New32a()
		fmt.Fprintf(h, "%s|%d|%s", input, i, text)
		v[i] = float32(h.Sum32()%1000)/1000 - 0.5
	}
	return v
}

func (c *counting) Embed(ctx context.Context, input Input, texts []string) ([][]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls++
	c.texts = append(c.texts, texts...)
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = fakeVector(input, t, c.dim)
	}
	if c.cancelAfter > 0 && c.calls == c.cancelAfter {
		c.cancel()
	}
	return out, nil
}

func openStore(t *testing.T, dir string) *cache.Store {
	t.Helper()
	s, err := cache.Open(dir, cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

var testID = Identity{Model: "org/model", Revision: "abc", Backend: "onnx", Pooling: "cls", MaxLength: 512, Normalize: true}

func texts(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("Represent this passage\npassage: document %d", i)
	}
	return out
}

func wantVectors(input Input, ts []string, dim int) [][]float32 {
	out := make([][]float32, len(ts))
	for i, t := range ts {
		out[i] = fakeVector(input, t, dim)
	}
	return out
}

func TestCacheSecondRunMakesNoCalls(t *testing.T) {
	dir := t.TempDir()
	ts := texts(10)
	for run := 0; run < 2; run++ {
		store := openStore(t, dir)
		back := &counting{dim: 8}
		c := Cached(back, store, testID)
		c.Chunk = 3
		got, err := c.Embed(context.Background(), Document, ts)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, wantVectors(Document, ts, 8)) {
			t.Fatalf("run %d: wrong vectors", run)
		}
		hits, misses, _ := c.Counts()
		switch run {
		case 0:
			if back.calls != 4 || len(back.texts) != 10 || hits != 0 || misses != 10 {
				t.Errorf("first run: %d calls for %d texts, %d hits %d misses; want 4 calls (chunks of 3), 10 texts", back.calls, len(back.texts), hits, misses)
			}
		case 1:
			if back.calls != 0 || hits != 10 || misses != 0 {
				t.Errorf("second run: %d backend calls, %d hits; want none and 10", back.calls, hits)
			}
		}
		store.Close()
	}
}

func TestCacheResumesAfterInterruption(t *testing.T) {
	dir := t.TempDir()
	ts := texts(10)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	store := openStore(t, dir)
	back := &counting{dim: 4, cancelAfter: 2, cancel: cancel}
	c := Cached(back, store, testID)
	c.Chunk = 3
	if _, err := c.Embed(ctx, Document, ts); !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted run: %v, want context.Canceled", err)
	}
	store.Close()

	// Two chunks (6 texts) were committed before the interruption; the
	// next run embeds only the other 4.
	store = openStore(t, dir)
	back = &counting{dim: 4}
	c = Cached(back, store, testID)
	c.Chunk = 3
	got, err := c.Embed(context.Background(), Document, ts)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.texts, ts[6:]) {
		t.Errorf("resumed run embedded %q, want the last 4 texts", back.texts)
	}
	if !reflect.DeepEqual(got, wantVectors(Document, ts, 4)) {
		t.Error("resumed run returned wrong vectors")
	}
}

func TestCacheDedupesWithinACall(t *testing.T) {
	store := openStore(t, t.TempDir())
	back := &counting{dim: 3}
	c := Cached(back, store, testID)
	in := []string{"a", "b", "a", "c", "b", "a"}
	got, err := c.Embed(context.Background(), Query, in)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.texts, []string{"a", "b", "c"}) {
		t.Errorf("backend saw %q, want a, b, c once each", back.texts)
	}
	if !reflect.DeepEqual(got, wantVectors(Query, in, 3)) {
		t.Error("wrong vectors for repeated texts")
	}
	// Rows are independent: normalizing one in place leaves its twin.
	Normalize(got[0])
	if reflect.DeepEqual(got[0], got[2]) {
		t.Error("repeated texts share one slice")
	}
}

func TestCacheKeysSeparateConfigurations(t *testing.T) {
	base := testID.Key(Query, "Instruct: Given a Biology post\nQuery: why?")
	variants := map[string][]byte{
		"instruction": testID.Key(Query, "Instruct: Given a Medical Exam\nQuery: why?"),
		"side":        testID.Key(Document, "Instruct: Given a Biology post\nQuery: why?"),
	}
	mod := func(name string, f func(*Identity)) {
		id := testID
		f(&id)
		variants[name] = id.Key(Query, "Instruct: Given a Biology post\nQuery: why?")
	}
	mod("model", func(id *Identity) { id.Model = "org/other" })
	mod("revision", func(id *Identity) { id.Revision = "def" })
	mod("backend", func(id *Identity) { id.Backend = "tei" })
	mod("pooling", func(id *Identity) { id.Pooling = "mean" })
	mod("max length", func(id *Identity) { id.MaxLength = 256 })
	mod("dimensions", func(id *Identity) { id.Dimensions = 256 })
	mod("normalize", func(id *Identity) { id.Normalize = false })
	mod("extra", func(id *Identity) { id.Extra = "quoted" })
	seen := map[string]string{string(base): "base"}
	for name, k := range variants {
		if prev, dup := seen[string(k)]; dup {
			t.Errorf("%s changes nothing in the key (same as %s)", name, prev)
		}
		seen[string(k)] = name
	}

	// And through the store: another max length is a miss.
	store := openStore(t, t.TempDir())
	back := &counting{dim: 2}
	if _, err := Cached(back, store, testID).Embed(context.Background(), Query, []string{"q"}); err != nil {
		t.Fatal(err)
	}
	other := testID
	other.MaxLength = 128
	if _, err := Cached(back, store, other).Embed(context.Background(), Query, []string{"q"}); err != nil {
		t.Fatal(err)
	}
	if back.calls != 2 {
		t.Errorf("max length 128 was answered from max length 512's entry (%d calls)", back.calls)
	}
}

func TestCacheDamagedEntryIsRecomputed(t *testing.T) {
	store := openStore(t, t.TempDir())
	bucket := cache.Bucket(CacheKind, testID.Model)
	// Three kinds of damage: a length that is not whole float32s, a NaN, a
	// size other than the requested dimensions.
	id := testID
	id.Dimensions = 2
	nan := encodeVector([]float32{float32(math.NaN()), 1})
	err := store.PutMany(bucket,
		[][]byte{id.Key(Query, "a"), id.Key(Query, "b"), id.Key(Query, "c")},
		[][]byte{{1, 2, 3}, nan, encodeVector([]float32{1, 2, 3})})
	if err != nil {
		t.Fatal(err)
	}
	back := &counting{dim: 2}
	c := Cached(back, store, id)
	got, err := c.Embed(context.Background(), Query, []string{"a", "b", "c"})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, wantVectors(Query, []string{"a", "b", "c"}, 2)) {
		t.Error("damaged entries were returned")
	}
	if _, _, damaged := c.Counts(); damaged != 3 {
		t.Errorf("damaged = %d, want 3", damaged)
	}
	// They were overwritten: the next call is all hits.
	back2 := &counting{dim: 2}
	if _, err := Cached(back2, store, id).Embed(context.Background(), Query, []string{"a", "b", "c"}); err != nil || back2.calls != 0 {
		t.Errorf("after overwrite: %d calls, %v", back2.calls, err)
	}
}

func TestCacheRefusesDimensionChange(t *testing.T) {
	store := openStore(t, t.TempDir())
	if _, err := Cached(&counting{dim: 4}, store, testID).Embed(context.Background(), Query, []string{"a"}); err != nil {
		t.Fatal(err)
	}
	_, err := Cached(&counting{dim: 8}, store, testID).Embed(context.Background(), Query, []string{"a", "b"})
	if err == nil || !strings.Contains(err.Error(), "r2med cache prune --model org/model") {
		t.Errorf("mixed dimensions: %v", err)
	}
}

func TestCacheChecksBackend(t *testing.T) {
	store := openStore(t, t.TempDir())
	short := Func(func(ctx context.Context, input Input, texts []string) ([][]float32, error) {
		return [][]float32{{1}}, nil
	})
	if _, err := Cached(short, store, testID).Embed(context.Background(), Query, []string{"a", "b"}); err == nil {
		t.Error("a short answer was accepted")
	}
	if st, _ := store.Stats(); len(st) != 0 {
		t.Errorf("a bad answer was cached: %+v", st)
	}
}

func TestCacheWithoutStore(t *testing.T) {
	back := &counting{dim: 2}
	c := Cached(back, nil, testID)
	for i := 0; i < 2; i++ {
		if _, err := c.Embed(context.Background(), Query, []string{"a"}); err != nil {
			t.Fatal(err)
		}
	}
	if back.calls != 2 {
		t.Errorf("without a store: %d calls, want 2", back.calls)
	}
}

func TestCacheProgress(t *testing.T) {
	store := openStore(t, t.TempDir())
	var seen []string
	c := Cached(&counting{dim: 2}, store, testID)
	c.Chunk = 2
	c.Progress = func(done, total int) { seen = append(seen, fmt.Sprintf("%d/%d", done, total)) }
	if _, err := c.Embed(context.Background(), Query, texts(5)); err != nil {
		t.Fatal(err)
	}
	if want := []string{"0/5", "2/5", "4/5", "5/5"}; !reflect.DeepEqual(seen, want) {
		t.Errorf("progress %v, want %v", seen, want)
	}
}

// BenchmarkCache measures a corpus pass through the cache: miss (embed by
// a free fake backend, encode, commit per chunk) and hit (look up, decode),
// 10,000 texts of 1024 dimensions, about a Nano task's corpus.
func BenchmarkCache(b *testing.B) {
	const n, dim = 10000, 1024
	ts := make([]string, n)
	for i := range ts {
		ts[i] = fmt.Sprintf("document %d %s", i, strings.Repeat("x", 200))
	}
	vec := make([]float32, dim)
	free := Func(func(_ context.Context, _ Input, texts []string) ([][]float32, error) {
		out := make([][]float32, len(texts))
		for i := range out {
			out[i] = vec
		}
		return out, nil
	})
	b.Run("miss", func(b *testing.B) {
		b.SetBytes(n * dim * 4)
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			s, err := cache.Open(b.TempDir(), cache.Options{})
			if err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			if _, err := Cached(free, s, testID).Embed(context.Background(), Document, ts); err != nil {
				b.Fatal(err)
			}
			s.Close()
			if fi, err := os.Stat(s.Path()); err == nil {
				b.ReportMetric(float64(fi.Size())/(n*dim*4), "file/vectors")
			}
		}
	})
	b.Run("hit", func(b *testing.B) {
		s, err := cache.Open(b.TempDir(), cache.Options{})
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		if _, err := Cached(free, s, testID).Embed(context.Background(), Document, ts); err != nil {
			b.Fatal(err)
		}
		b.SetBytes(n * dim * 4)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if _, err := Cached(free, s, testID).Embed(context.Background(), Document, ts); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// cutting is a Cutter: it cuts every text longer than 10 bytes by one
// token.
type cutting struct{ counting }

func (c *cutting) EmbedCut(ctx context.Context, input Input, texts []string) ([][]float32, []int, error) {
	v, err := c.Embed(ctx, input, texts)
	cuts := make([]int, len(texts))
	for i, t := range texts {
		if len(t) > 10 {
			cuts[i] = 1
		}
	}
	return v, cuts, err
}

// TestCacheCountsTruncated checks that a Cutter's cut texts are counted
// per side whether embedded now or answered from the cache (the entry
// keeps what the backend said), that entries written before that record
// are counted as unknown, and that a backend that does not say counts
// nothing.
func TestCacheCountsTruncated(t *testing.T) {
	dir := t.TempDir()
	store := openStore(t, dir)
	id := Identity{Model: "m"}
	docs := []string{"short", "a longer document", "another long one", "short", "a longer document"}
	queries := []string{"a long query text", "q"}
	ctx := context.Background()
	run := func(e Embedder) (q, d, unknown int64) {
		t.Helper()
		c := Cached(e, store, id)
		if _, err := c.Embed(ctx, Document, docs); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Embed(ctx, Query, queries); err != nil {
			t.Fatal(err)
		}
		return c.Truncated()
	}
	if q, d, u := run(&cutting{counting{dim: 4}}); q != 1 || d != 2 || u != 0 {
		t.Errorf("embedded: %d queries, %d documents cut, %d unknown; want 1, 2, 0", q, d, u)
	}
	backend := &cutting{counting{dim: 4}}
	if q, d, u := run(backend); q != 1 || d != 2 || u != 0 || backend.calls != 0 {
		t.Errorf("from the cache: %d queries, %d documents cut, %d unknown, %d calls; want 1, 2, 0, 0", q, d, u, backend.calls)
	}
	// An entry as written before entries said what was cut.
	old := encodeEntry(fakeVector(Document, docs[1], 4), usage.Usage{PromptTokens: 3}, truncUnknown)
	if err := store.PutMany(cache.Bucket(CacheKind, "m"), [][]byte{id.Key(Document, docs[1])}, [][]byte{old}); err != nil {
		t.Fatal(err)
	}
	if q, d, u := run(&cutting{counting{dim: 4}}); q != 1 || d != 1 || u != 1 {
		t.Errorf("with an older entry: %d queries, %d documents cut, %d unknown; want 1, 1, 1", q, d, u)
	}
	if q, d, u := run(&counting{dim: 4}); q != 0 || d != 0 || u != 0 {
		t.Errorf("a backend that says nothing of cuts: %d, %d, %d; want zeros", q, d, u)
	}
	// What an entry says survives the round trip; a flag set that cannot
	// be (cut and whole) is damage.
	for _, tr := range []truncation{truncUnknown, truncCut, truncFit} {
		if _, _, got, ok := decodeEntry(encodeEntry([]float32{1}, usage.Usage{PromptTokens: 3}, tr), 1); !ok || got != tr {
			t.Errorf("entry with truncation %d read back as %d (ok %v)", tr, got, ok)
		}
	}
	bad := encodeEntry([]float32{1}, usage.Usage{PromptTokens: 3}, truncCut)
	bad[6] |= flagFit // mark, one-byte tokens, one-byte micros, flags
	if _, _, _, ok := decodeEntry(bad, 1); ok {
		t.Error("an entry both cut and whole was read")
	}
}
