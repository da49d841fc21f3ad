package weaviate

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weaviate/weaviate-go-client/v5/weaviate/fault"
	"github.com/weaviate/weaviate/entities/models"

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
		{Index: "flat", EF: 64}, {Index: "flat", EFConstruction: 64}, {Index: "flat", MaxConnections: 8}, // HNSW settings a flat index would ignore
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
	// Weaviate answers every search error with Unknown: a node that
	// went away is retried, a request it refuses is not.
	if !transient(ctx, status.Error(codes.Unknown, "explorer: get class: vector search: shard s1: connection refused")) {
		t.Error("Unknown from a node that went away is not retried")
	}
	if transient(ctx, status.Error(codes.ResourceExhausted, "grpc: received message larger than max (8441431 vs. 4194304)")) {
		t.Error("an answer over gRPC's size limit is retried")
	}
	for _, msg := range []string{"explorer: get class: vector search: invalid pagination params: query maximum results exceeded", "keyword search (bm25) must have query set"} {
		if transient(ctx, status.Error(codes.Unknown, msg)) {
			t.Errorf("Weaviate's refusal %q is retried", msg)
		}
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if transient(cancelled, status.Error(codes.Unavailable, "x")) {
		t.Error("a cancelled push retries")
	}
	if !transient(ctx, errors.New("dial tcp 127.0.0.1:1: connect: connection refused")) {
		t.Error("a refused connection is not retried")
	}
	// /v1/nodes answers 500 for a few seconds after a node died.
	if !transient(ctx, &fault.WeaviateClientError{IsUnexpectedStatusCode: true, StatusCode: 500, Msg: "node: r2med-node-3: unavailable"}) {
		t.Error("a 500 is not retried")
	}
	if transient(ctx, &fault.WeaviateClientError{IsUnexpectedStatusCode: true, StatusCode: 422, Msg: "bad class"}) {
		t.Error("a 422 is retried")
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

func TestReplicasProblems(t *testing.T) {
	// Three members, n3 died: the node status lists n1 and n2 only.
	nodes := []nodeReply{
		{name: "n2", status: "HEALTHY", shards: []shardReply{{"s1", 10, 3}, {"s2", 7, 3}}},
		{name: "n1", status: "HEALTHY", shards: []shardReply{{"s1", 10, 3}, {"s2", 9, 3}}},
	}
	ns, ss := joinReplicas(nodes, []string{"n3", "n1", "n2"}, nil, 3)
	r := Replicas{Factor: 3, Nodes: ns, Shards: ss}
	if got, want := r.Down(), []string{"node n3 is gone (a member the node status no longer lists)", "shard s1: 2 of 3 replicas answer", "shard s2: 2 of 3 replicas answer"}; !slices.Equal(got, want) {
		t.Errorf("Down = %q, want %q", got, want)
	}
	if got, want := r.Disagreements(), []string{"shard s2: n1 9, n2 7"}; !slices.Equal(got, want) {
		t.Errorf("Disagreements = %q, want %q", got, want)
	}
	if got := r.String(); got != "2 shards, 4 shard replicas, on 3 nodes" {
		t.Errorf("String = %q", got)
	}
	if p := r.Problems(); len(p) != 4 || !strings.Contains(p[0], "n3") || !strings.HasSuffix(p[3], "objects on disk") {
		t.Errorf("Problems = %q", p)
	}
	// The sharding state names the holders, also of a node that is down.
	ns, ss = joinReplicas(nodes, []string{"n1", "n2", "n3"}, map[string][]string{"s1": {"n3", "n1", "n2"}, "s2": {"n2", "n1", "n3"}}, 3)
	r = Replicas{Factor: 3, Nodes: ns, Shards: ss}
	if !slices.Equal(r.Shards[0].Nodes, []string{"n1", "n2", "n3"}) || !slices.Equal(r.holders(), []string{"n1", "n2", "n3"}) {
		t.Errorf("holders from the sharding state: %+v", r.Shards)
	}
	// Replicas whose counts agree show no problem.
	whole := []nodeReply{
		{name: "n1", status: "HEALTHY", shards: []shardReply{{"s1", 10, 2}, {"s2", 9, 2}}},
		{name: "n2", status: "HEALTHY", shards: []shardReply{{"s1", 10, 2}, {"s2", 9, 2}}},
	}
	ns, ss = joinReplicas(whole, []string{"n1", "n2"}, nil, 2)
	r = Replicas{Factor: 2, Nodes: ns, Shards: ss}
	if len(r.Problems()) != 0 {
		t.Errorf("two whole replicas: problems %q", r.Problems())
	}
	// An unhealthy member is named.
	ns, ss = joinReplicas(append(whole, nodeReply{name: "n3", status: "UNHEALTHY"}), nil, nil, 2)
	r = Replicas{Factor: 2, Nodes: ns, Shards: ss}
	if got := r.Down(); !slices.Equal(got, []string{"node n3 is UNHEALTHY"}) {
		t.Errorf("an unhealthy node: %q", got)
	}
}

func TestMeasureRecall(t *testing.T) {
	exact := ir.Run{
		"q1": {{DocID: "a", Score: 0.9}, {DocID: "b", Score: 0.8}, {DocID: "c", Score: 0.7}, {DocID: "d", Score: 0.7}},
		"q2": {{DocID: "x", Score: 0.5}, {DocID: "y", Score: 0.4}, {DocID: "z", Score: 0.1}},
	}
	approx := ir.Run{
		"q1": {{DocID: "a"}, {DocID: "b"}, {DocID: "d"}}, // d is tied with c, the 3rd: found
		"q2": {{DocID: "x"}, {DocID: "z"}, {DocID: "y"}}, // z is not in the exact top 2
	}
	r := MeasureRecall(approx, exact, 2, nil)
	if r.K != 2 || r.Queries != 2 || r.Complete != 1 || math.Abs(r.Recall-0.75) > 1e-12 {
		t.Errorf("recall@2 = %+v, want 0.75 with 1 of 2 complete", r)
	}
	r = MeasureRecall(approx, exact, 3, nil)
	if r.Complete != 2 || r.Recall != 1 {
		t.Errorf("recall@3 = %+v, want 1 (a tie may fall either way)", r)
	}
	if r := MeasureRecall(ir.Run{}, exact, 2, nil); r.Recall != 0 || r.Complete != 0 {
		t.Errorf("nothing answered: %+v", r)
	}
	// A hit beyond the exact list that ties the k-th counts, with scores.
	tail := ir.Run{"q1": {{DocID: "a"}, {DocID: "b"}, {DocID: "e"}}, "q2": exact["q2"]}
	scores := func(qid, id string) (float64, bool) { return 0.7, id == "e" }
	if r := MeasureRecall(tail, exact, 3, nil); r.Complete != 1 {
		t.Errorf("a tie beyond the list, no scores: %+v", r)
	}
	if r := MeasureRecall(tail, exact, 3, scores); r.Complete != 2 || r.Recall != 1 {
		t.Errorf("a tie beyond the list, scored: %+v", r)
	}
}

func TestVectorIndexOf(t *testing.T) {
	hnsw := vectorIndexOf(&models.Class{VectorIndexType: "hnsw", VectorIndexConfig: map[string]any{
		"ef": -1.0, "dynamicEfMin": 100.0, "dynamicEfMax": 500.0, "dynamicEfFactor": 8.0, "efConstruction": 128.0, "maxConnections": 32.0,
		"distance": "cosine", "pq": map[string]any{"enabled": false}, "rq": map[string]any{"enabled": false}}})
	if hnsw.Exact || hnsw.EF != -1 || hnsw.DynamicEFMax != 500 || hnsw.Quantization != "" ||
		hnsw.String() != "HNSW, dynamic ef (8 × k within 100–500), efConstruction 128, maxConnections 32" {
		t.Errorf("dynamic HNSW: %+v %q", hnsw, hnsw)
	}
	fixed := vectorIndexOf(&models.Class{VectorIndexType: "hnsw", VectorIndexConfig: map[string]any{"ef": 64.0, "efConstruction": 8.0, "maxConnections": 4.0, "dynamicEfMax": 500.0}})
	if fixed.EF != 64 || fixed.DynamicEFMax != 500 || fixed.String() != "HNSW, ef 64 (at least k), efConstruction 8, maxConnections 4" {
		t.Errorf("fixed ef: %+v %q", fixed, fixed)
	}
	flat := vectorIndexOf(&models.Class{VectorIndexType: "flat", VectorIndexConfig: map[string]any{"distance": "dot", "bq": map[string]any{"enabled": false}}})
	if !flat.Exact || flat.String() != "flat (exact)" {
		t.Errorf("flat: %+v %q", flat, flat)
	}
	bq := vectorIndexOf(&models.Class{VectorIndexType: "flat", VectorIndexConfig: map[string]any{"bq": map[string]any{"enabled": true}}})
	if bq.Exact || bq.Quantization != "bq" || bq.String() != "flat, bq-quantized" {
		t.Errorf("flat with BQ: %+v %q", bq, bq)
	}
	note := ApproximateNote("weaviate:vector", fixed, []Recall{{K: 10, Recall: 0.5, Complete: 3, Queries: 10}, {K: 100, Recall: 0.75}})
	if want := "weaviate:vector: approximate vector index (HNSW, ef 64); recall@10 0.5000, recall@100 0.7500 against exact search (3 of 10 queries complete at 10)"; note != want {
		t.Errorf("note %q\nwant %q", note, want)
	}
	if note := ApproximateNote("weaviate:vector", hnsw, nil); note != "weaviate:vector: approximate vector index (HNSW, dynamic ef 100–500); recall not measured (--check-exact)" {
		t.Errorf("note without recall: %q", note)
	}
	// A run of 10 asks for 100 hits (plan.SearchDepth): an ef of 64 is
	// then not what searched, and the summary must not say it was.
	fixed.Hits = 100
	if note := ApproximateNote("weaviate:vector", fixed, nil); note != "weaviate:vector: approximate vector index (HNSW, ef 64, raised to 100 by the hits asked); recall not measured (--check-exact)" {
		t.Errorf("note of ef 64 searched for 100 hits: %q", note)
	}
	fixed.Hits = 50
	if note := ApproximateNote("weaviate:vector", fixed, nil); !strings.Contains(note, "(HNSW, ef 64)") {
		t.Errorf("note of ef 64 searched for 50 hits: %q", note)
	}
}

// TestRetryTransientNodeErrors: for a few seconds after a node of a
// cluster dies, /v1/nodes answers 500 although the cluster can answer;
// Info (what a run reads first) sends it again instead of failing, and
// when the error stays, the message names the node that is down, not
// only the healthy one the request went through.
func TestRetryTransientNodeErrors(t *testing.T) {
	var nodeCalls atomic.Int64
	var failCount atomic.Bool
	const failNodes = 3
	cls := Schema{}.class("Docs")
	cls.Description = Meta{R2MED: 1, Digest: "d", Docs: 1}.description()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/v1/meta":
			json.NewEncoder(w).Encode(map[string]any{"version": "1.35.2"})
		case r.URL.Path == "/v1/nodes" && r.URL.RawQuery == "" && nodeCalls.Add(1) <= failNodes:
			w.WriteHeader(500)
			json.NewEncoder(w).Encode(map[string]any{"error": []map[string]string{{"message": "node: r2med-node-3: context deadline exceeded"}}})
		case r.URL.Path == "/v1/nodes":
			json.NewEncoder(w).Encode(map[string]any{"nodes": []map[string]any{{"name": "r2med-node-1", "status": "HEALTHY"}, {"name": "r2med-node-3", "status": "UNAVAILABLE"}}})
		case r.URL.Path == "/v1/schema/Docs":
			json.NewEncoder(w).Encode(cls)
		case r.URL.Path == "/v1/graphql" && failCount.Load():
			w.WriteHeader(500)
			json.NewEncoder(w).Encode(map[string]any{"error": []map[string]string{{"message": "shard s1: replica r2med-node-3: connection refused"}}})
		case r.URL.Path == "/v1/graphql":
			json.NewEncoder(w).Encode(map[string]any{"data": map[string]any{"Aggregate": map[string]any{"Docs": []any{map[string]any{"meta": map[string]any{"count": 1}}}}}})
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	c, err := Open(Config{URL: srv.URL, Collection: "Docs", RetryFor: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	info, err := c.Info(context.Background())
	if err != nil || info.Nodes != 2 || info.Objects != 1 {
		t.Fatalf("Info while /v1/nodes fails %d times: %+v, %v", failNodes, info, err)
	}
	if n := nodeCalls.Load(); n != failNodes+1 {
		t.Errorf("/v1/nodes asked %d times, want %d", n, failNodes+1)
	}

	// A failure that outlasts the retries names the node that is down.
	failCount.Store(true)
	c, _ = Open(Config{URL: srv.URL, Collection: "Docs", RetryFor: 300 * time.Millisecond})
	_, err = c.Info(context.Background())
	if err == nil || !strings.Contains(err.Error(), "node r2med-node-3 is UNAVAILABLE") || !strings.Contains(err.Error(), "sent ") {
		t.Errorf("a lasting 500: %v", err)
	}

	// A server that never answered is not waited for: a wrong address.
	c, _ = Open(Config{URL: "http://127.0.0.1:1", Collection: "Docs"})
	start := time.Now()
	if _, err := c.Exists(context.Background()); err == nil || time.Since(start) > 5*time.Second || !strings.Contains(err.Error(), "is weaviate-server running there?") {
		t.Errorf("nothing listening: %v after %s", err, time.Since(start))
	}
}
