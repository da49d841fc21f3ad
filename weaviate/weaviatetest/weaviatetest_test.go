package weaviatetest

import (
	"maps"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFreePortsAreDistinctAndPaired(t *testing.T) {
	ports, err := freePorts(3)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, p := range ports {
		// REST, gRPC, gossip and gossip+1 (data), raft and raft+1 (raft RPC)
		for _, port := range []int{p[0], p[1], p[2], p[2] + 1, p[3], p[3] + 1} {
			if port <= 0 || seen[port] {
				t.Fatalf("port %d repeats or is invalid: %v", port, ports)
			}
			seen[port] = true
		}
	}
}

func TestEmbedderIsDeterministicAndCarriesSignal(t *testing.T) {
	corpus := []string{"iron deficiency anemia", "vitamin d bone density", "statins and muscle pain", "anemia in pregnancy"}
	e := NewEmbedder(64, corpus)
	a, b := e.Embed("anemia"), NewEmbedder(64, corpus).Embed("anemia")
	var norm float64
	for i := range a {
		if a[i] != b[i] {
			t.Fatal("the same text gave two vectors")
		}
		norm += float64(a[i]) * float64(a[i])
	}
	if math.Abs(norm-1) > 1e-5 {
		t.Errorf("norm² %g, want 1", norm)
	}
	dot := func(x, y []float32) (s float32) {
		for i := range x {
			s += x[i] * y[i]
		}
		return s
	}
	docs := e.EmbedAll(corpus)
	if dot(a, docs[0]) <= dot(a, docs[1]) || dot(a, docs[3]) <= dot(a, docs[2]) {
		t.Errorf("documents with the query's term are not closer: %v", []float32{dot(a, docs[0]), dot(a, docs[1]), dot(a, docs[2]), dot(a, docs[3])})
	}
	if v := e.Embed(""); v[0] != 1 {
		t.Errorf("an empty text gave %v, want the fixed unit vector", v[:3])
	}
}

func TestLogBufferKeepsTheTail(t *testing.T) {
	var b logBuffer
	line := strings.Repeat("x", 99) + "\n"
	for range 50_000 { // 5 MB
		b.Write([]byte(line))
	}
	b.Write([]byte("last line\n"))
	if n := len(b.String()); n > logLimit {
		t.Errorf("kept %d bytes, over the %d limit", n, logLimit)
	}
	tail := b.Tail(250)
	if !strings.HasPrefix(tail, "…\n"+strings.Repeat("x", 99)) || !strings.HasSuffix(tail, "last line\n") {
		t.Errorf("tail %q does not start at a line and end with the last", tail)
	}
}

func TestFindBinaryNamesTheFix(t *testing.T) {
	t.Setenv(BinEnv, t.TempDir())
	if _, err := findBinary(); err == nil || !strings.Contains(err.Error(), "is not an executable file") {
		t.Errorf("a directory in $%s: %v", BinEnv, err)
	}
}

// TestReadmeClusterRecipe: README's 3-node recipe runs the nodes as the
// cluster tests do (Settings and ClusterSettings), so what the tests
// prove holds for what users start.
func TestReadmeClusterRecipe(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot(), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	start := strings.Index(readme, "for i in 1 2 3; do\n")
	end := strings.Index(readme[max(start, 0):], "\ndone\n")
	if start < 0 || end < 0 {
		t.Fatal("README has no 3-node cluster recipe (for i in 1 2 3; do … done)")
	}
	recipe := map[string]string{}
	for _, f := range strings.Fields(readme[start : start+end]) {
		if k, v, ok := strings.Cut(f, "="); ok && k == strings.ToUpper(k) && !strings.ContainsAny(k, "$(") {
			recipe[k] = v
		}
	}
	want := maps.Clone(Settings)
	maps.Copy(want, ClusterSettings)
	for k, v := range want {
		// Weaviate's defaults need not be spelled out.
		if v == "" || k == "LOG_LEVEL" && v == "info" {
			continue
		}
		if got, ok := recipe[k]; !ok || got != v {
			t.Errorf("README's cluster recipe sets %s=%q, the tests %q", k, got, v)
		}
	}
}
