package main

import (
	"context"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/r2med/r2med/demo"
	"github.com/r2med/r2med/embed/embedtest"
	"github.com/r2med/r2med/weaviate"
	"github.com/r2med/r2med/weaviate/weaviatetest"
)

// TestIndexPush pushes the demo task into a real Weaviate as a user
// would, pushes it again (nothing written), and searches what it pushed.
func TestIndexPush(t *testing.T) {
	node := weaviatetest.Start(t, weaviatetest.Options{})
	u, _ := url.Parse(node.URL())
	to := "weaviate://" + u.Host + "/Demo"
	args := []string{"index", "push", "--task", "demo", "--to", to, "--weaviate-grpc", node.GRPCAddr(), "--shards", "2", "--quiet"}
	task, err := demo.Load()
	if err != nil {
		t.Fatal(err)
	}
	n := len(task.Corpus)

	out, errOut, code := r2med(t, "", args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"new collection; Weaviate " + weaviatetest.Version + ", 1 node", strconv.Itoa(n) + " documents: " + strconv.Itoa(n) + " written (0 changed), 0 already there", "the collection holds " + strconv.Itoa(n) + " objects"} {
		if !strings.Contains(out, want) {
			t.Errorf("first push: output lacks %q:\n%s", want, out)
		}
	}
	out, errOut, code = r2med(t, "", args...)
	if code != 0 || !strings.Contains(out, "existing collection") || !strings.Contains(out, "0 written (0 changed), "+strconv.Itoa(n)+" already there") {
		t.Errorf("second push: exit %d, %s%s", code, out, errOut)
	}

	c, err := weaviate.Open(weaviate.Config{URL: node.URL(), GRPC: node.GRPCAddr(), Collection: "Demo"})
	if err != nil {
		t.Fatal(err)
	}
	info, err := c.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if sc, _ := info.Config["shardingConfig"].(map[string]any); sc["desiredCount"] != 2.0 {
		t.Errorf("--shards 2 gave sharding %v", info.Config["shardingConfig"])
	}
	q := task.Queries[0]
	hits, err := c.Search(context.Background(), weaviate.Query{ID: q.ID, Text: q.Text}, weaviate.SearchOptions{K: 5})
	if err != nil || len(hits) == 0 {
		t.Fatalf("bm25 search of the pushed demo: %v, %v", hits, err)
	}

	// --recreate starts over; a changed shard count on an existing
	// collection is refused.
	out, errOut, code = r2med(t, "", append(args, "--recreate")...)
	if code != 0 || !strings.Contains(out, "new collection") {
		t.Errorf("--recreate: exit %d, %s%s", code, out, errOut)
	}
	_, errOut, code = r2med(t, "", "index", "push", "--task", "demo", "--to", to, "--weaviate-grpc", node.GRPCAddr(), "--shards", "3", "--quiet")
	if code == 0 || !strings.Contains(errOut, "exists with 2 shards, not 3") {
		t.Errorf("changing the shard count: exit %d, %s", code, errOut)
	}
}

func TestIndexPushRefusesBadInput(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"index", "push", "--task", "demo"}, `required flag(s) "to" not set`},
		{[]string{"index", "push", "--task", "demo", "--to", "http://localhost:8080/Demo"}, "want weaviate://HOST:PORT/Collection"},
		{[]string{"index", "push", "--task", "demo", "--to", "weaviate://localhost:8080/demo"}, "use Demo"},
		{[]string{"index", "push", "--task", "demo", "--to", "weaviate://localhost:8080/Demo", "--vector-index", "ivf"}, `vector index "ivf": want hnsw or flat`},
		{[]string{"index", "push", "--task", "all", "--to", "weaviate://localhost:8080/Demo"}, "a collection holds one corpus"},
		{[]string{"index", "push", "--task", "demo", "--to", "weaviate://127.0.0.1:1/Demo", "--weaviate-grpc", "127.0.0.1:1"}, "is weaviate-server running there?"},
		{[]string{"index", "push", "--index", "x.idx", "--task", "demo", "--to", "weaviate://localhost:8080/Demo"}, "--index x.idx gives the corpus; drop --task and --data"},
		{[]string{"index", "push", "--index", "x.idx", "--model", "bge", "--to", "weaviate://localhost:8080/Demo"}, "drop the dense flags"},
		{[]string{"index", "push", "--index", "nowhere.idx", "--to", "weaviate://127.0.0.1:1/Demo", "--weaviate-grpc", "127.0.0.1:1"}, "no such file"},
	} {
		_, errOut, code := r2med(t, "", c.args...)
		if code == 0 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stderr %q, want %q", c.args, code, errOut, c.want)
		}
	}
}

// TestIndexPushFromIndex pushes an index file's documents and vectors
// into a real Weaviate, then pushes the same task embedded afresh by the
// dense flags into the same collection: nothing is written, so the
// objects (ids, texts and vectors, which their content hashes cover) are
// the ones an embedding push makes.
func TestIndexPushFromIndex(t *testing.T) {
	node := weaviatetest.Start(t, weaviatetest.Options{})
	srv := embedtest.NewServer(t, embedtest.Options{Dim: 16})
	dense := []string{"--model", "stand-in", "--backend", "openai", "--base-url", srv.URL}
	idx := filepath.Join(t.TempDir(), "demo.idx")
	if _, stderr, code := r2med(t, "", append([]string{"index", "build", "--quiet", "--no-cache", "--task", "demo", "--retriever", "bm25,dense", "--out", idx}, dense...)...); code != 0 {
		t.Fatal(stderr)
	}
	u, _ := url.Parse(node.URL())
	to := "weaviate://" + u.Host + "/Demoidx"
	base := []string{"index", "push", "--to", to, "--weaviate-grpc", node.GRPCAddr(), "--vector-index", "flat", "--quiet"}
	out, errOut, code := r2med(t, "", append(base, "--index", idx)...)
	if code != 0 || !strings.Contains(out, "demo → ") || !strings.Contains(out, "79 documents: 79 written (0 changed), 0 already there") {
		t.Fatalf("push --index: exit %d: %s%s", code, out, errOut)
	}
	out, errOut, code = r2med(t, "", append(append(base, "--task", "demo", "--no-cache"), dense...)...)
	if code != 0 || !strings.Contains(out, "0 written (0 changed), 79 already there") {
		t.Errorf("the same corpus embedded afresh: exit %d: %s%s", code, out, errOut)
	}
	c, err := weaviate.Open(weaviate.Config{URL: node.URL(), GRPC: node.GRPCAddr(), Collection: "Demoidx"})
	if err != nil {
		t.Fatal(err)
	}
	info, err := c.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if info.Objects != 79 {
		t.Errorf("the collection holds %d objects", info.Objects)
	}
}
