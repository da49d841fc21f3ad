package weaviate

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/vector"
)

func TestParseTarget(t *testing.T) {
	for _, tc := range []struct {
		in, grpc            string
		url, grpcAddr, coll string
		err                 string
	}{
		{in: "weaviate://localhost:8080/Nfcorpus", url: "http://localhost:8080", grpcAddr: "localhost:50051", coll: "Nfcorpus"},
		{in: "weaviates://search.example:443/R2MED_Biology", url: "https://search.example:443", grpcAddr: "search.example:50051", coll: "R2MED_Biology"},
		{in: "weaviate://127.0.0.1:8080/Demo/", grpc: "127.0.0.1:6000", url: "http://127.0.0.1:8080", grpcAddr: "127.0.0.1:6000", coll: "Demo"},
		{in: "weaviate://[::1]:8080/Demo", url: "http://[::1]:8080", grpcAddr: "[::1]:50051", coll: "Demo"},
		{in: "http://localhost:8080/Demo", err: "want weaviate://HOST:PORT/Collection"},
		{in: "weaviate://localhost:8080", err: "names no collection"},
		{in: "weaviate://localhost:8080/nfcorpus", err: "use Nfcorpus"},
		{in: "weaviate://localhost:8080/My-Docs", err: "collection name \"My-Docs\""},
		{in: "weaviate://localhost:8080/Demo?x=1", err: "no user, query or fragment"},
		{in: "weaviate://localhost:8080/Demo", grpc: "localhost", err: "want HOST:PORT"},
	} {
		c, err := ParseTarget(tc.in, tc.grpc)
		if err == nil {
			// The REST URL a run names directly is checked the same way.
			err = (Config{URL: c.URL, Collection: c.Collection}).Validate()
		}
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseTarget(%q, %q) error %v, want one containing %q", tc.in, tc.grpc, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseTarget(%q): %v", tc.in, err)
			continue
		}
		if c.URL != tc.url || c.GRPCAddr() != tc.grpcAddr || c.Collection != tc.coll {
			t.Errorf("ParseTarget(%q) = %s %s %s, want %s %s %s", tc.in, c.URL, c.GRPCAddr(), c.Collection, tc.url, tc.grpcAddr, tc.coll)
		}
	}
}

// ObjectID must be what Python's uuid.uuid5(uuid.NAMESPACE_DNS, doc_id)
// gives (the Weaviate Python client's generate_uuid5), so collections
// pushed from Python and from r2med name the same objects alike.
func TestConfigRefusesCredentialsInTheURL(t *testing.T) {
	err := (Config{URL: "http://admin:secret@localhost:8080", Collection: "Demo"}).Validate()
	if err == nil || strings.Contains(err.Error(), "secret") || !strings.Contains(err.Error(), "no user or password") {
		t.Errorf("credentials in the URL: %v", err)
	}
}

func TestObjectIDIsPythonUUID5(t *testing.T) {
	for id, want := range map[string]string{
		// python3 -c "import uuid; print(uuid.uuid5(uuid.NAMESPACE_DNS, 'MED-10'))"
		"MED-10": "fb0958c7-2bc9-58fc-bc2d-07a7c37bd649",
		"doc-ü":  "8dca630f-4b68-5c33-9178-821cdaa2f5e2",
	} {
		if got := ObjectID(id); got != want {
			t.Errorf("ObjectID(%q) = %s, want %s", id, got, want)
		}
	}
}

func TestContentHashCoversIDTextAndVector(t *testing.T) {
	base := ContentHash("d1", "text", []float32{1, 2})
	if len(base) != 32 || base != ContentHash("d1", "text", []float32{1, 2}) {
		t.Fatalf("hash %q is not a stable 32-digit hex string", base)
	}
	for name, h := range map[string]string{
		"id":             ContentHash("d2", "text", []float32{1, 2}),
		"text":           ContentHash("d1", "text.", []float32{1, 2}),
		"vector":         ContentHash("d1", "text", []float32{1, 2.0000002}),
		"no vector":      ContentHash("d1", "text", nil),
		"id/text border": ContentHash("d1t", "ext", []float32{1, 2}),
	} {
		if h == base {
			t.Errorf("changing the %s leaves the hash unchanged", name)
		}
	}
}

func TestSchemaClass(t *testing.T) {
	s := Schema{Shards: 3, Replicas: 3, EF: 512, BM25: &BM25Params{K1: 0.9, B: 0.4}, Stopwords: "none",
		Vectors: &Vectors{Model: "hash-128", Dim: 128, Metric: "dot"}}
	if err := s.validate(); err != nil {
		t.Fatal(err)
	}
	cls := s.class("Docs")
	idx := cls.VectorIndexConfig.(map[string]any)
	if cls.Vectorizer != "none" || cls.VectorIndexType != "hnsw" || idx["ef"] != 512 || idx["distance"] != "dot" {
		t.Errorf("vector settings: vectorizer %q, index %q %v", cls.Vectorizer, cls.VectorIndexType, idx)
	}
	if cls.ReplicationConfig.Factor != 3 || cls.ShardingConfig.(map[string]any)["desiredCount"] != 3 {
		t.Errorf("replication %v, sharding %v", cls.ReplicationConfig, cls.ShardingConfig)
	}
	if cls.InvertedIndexConfig.Bm25.K1 != 0.9 || cls.InvertedIndexConfig.Bm25.B != 0.4 || cls.InvertedIndexConfig.Stopwords.Preset != "none" {
		t.Errorf("inverted index %+v", cls.InvertedIndexConfig)
	}
	m, ok := parseMeta(cls.Description)
	if !ok || *m.Vectors != *s.Vectors {
		t.Errorf("description %q does not round-trip the vectors record", cls.Description)
	}
	if z := (Schema{}).class("Docs"); z.ReplicationConfig != nil || z.ShardingConfig != nil || z.InvertedIndexConfig.Bm25 != nil {
		t.Errorf("the zero Schema overrides Weaviate's defaults: %+v", z)
	}
	for _, bad := range []Schema{
		{Index: "ivf"}, {Stopwords: "de"}, {Replicas: -1}, {EF: -2}, {BM25: &BM25Params{K1: 1, B: 2}},
		{Vectors: &Vectors{Dim: 0, Metric: "cosine"}}, {Vectors: &Vectors{Dim: 8, Metric: "l2"}},
	} {
		if err := bad.validate(); err == nil {
			t.Errorf("%+v validated", bad)
		}
	}
}

func TestSearchOptionsValidate(t *testing.T) {
	if err := (SearchOptions{}).Validate(); err != nil {
		t.Errorf("zero options: %v", err)
	}
	for _, bad := range []SearchOptions{{Alpha: 1.5}, {Alpha: -0.1}, {K: -1}, {Fusion: "rrf"}, {Consistency: "MOST"}, {Mode: 7}} {
		if err := bad.Validate(); err == nil {
			t.Errorf("%+v validated", bad)
		}
	}
	for _, s := range []string{"bm25", "vector", "hybrid"} {
		if m, err := ParseMode(s); err != nil || m.String() != s {
			t.Errorf("ParseMode(%q) = %v, %v", s, m, err)
		}
	}
	if _, err := ParseMode("dense"); err == nil {
		t.Error("ParseMode(dense) succeeded")
	}
}

func TestTransientAndBackoff(t *testing.T) {
	ctx := context.Background()
	if !transient(ctx, status.Error(codes.Unavailable, "node down")) {
		t.Error("Unavailable is not retried")
	}
	if transient(ctx, status.Error(codes.InvalidArgument, "bad vector")) {
		t.Error("InvalidArgument is retried")
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if transient(cancelled, status.Error(codes.Unavailable, "x")) {
		t.Error("a cancelled push retries")
	}
	if !transient(ctx, errors.New("dial tcp 127.0.0.1:1: connect: connection refused")) {
		t.Error("a refused connection is not retried")
	}
	for attempt := range 20 {
		d := backoff(100*time.Millisecond, attempt)
		limit := min(100*time.Millisecond<<min(attempt, 10), 30*time.Second)
		if d <= 0 || d > limit+time.Millisecond {
			t.Errorf("backoff(attempt %d) = %s, want (0, %s]", attempt, d, limit)
		}
	}
}

func TestFlatVectors(t *testing.T) {
	flat := vector.NewFlat(2, vector.Dot)
	flat.Add("b", []float32{3, 4})
	flat.Add("a", []float32{1, 2})
	vecs, err := FlatVectors([]ir.Doc{{ID: "a"}, {ID: "b"}}, flat)
	if err != nil || len(vecs) != 2 || vecs[0][1] != 2 || vecs[1][0] != 3 {
		t.Fatalf("FlatVectors = %v, %v", vecs, err)
	}
	if _, err := FlatVectors([]ir.Doc{{ID: "a"}, {ID: "c"}}, flat); err == nil || !strings.Contains(err.Error(), `1 document has no vector ("c")`) {
		t.Errorf("a missing row: %v", err)
	}
}
