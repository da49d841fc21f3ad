package weaviate_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/r2med/r2med/weaviate"
	"github.com/r2med/r2med/weaviate/weaviatetest"
)

// TestClusterEFApplied: Weaviate applies a class update node by node, and
// a search routed to a replica on a node that has not applied a new ef
// searches with the old one. So an ef set for a run (HoldEF), and the
// collection's own ef put back after it (Release), count only once every
// node holding a replica has applied them: with a follower frozen (as one
// far behind would be), neither may be claimed, and the error names it;
// once it is back, each node's own schema holds what was confirmed.
func TestClusterEFApplied(t *testing.T) {
	nodes := weaviatetest.StartCluster(t, 3, weaviatetest.Options{})
	ctx := context.Background()
	const name = "EfApplied"
	c, err := weaviate.Open(weaviate.Config{URL: nodes[0].URL(), GRPC: nodes[0].GRPCAddr(), Collection: name})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Ensure(ctx, weaviate.Schema{Shards: 3, Replicas: 3, EF: 512, Vectors: &weaviate.Vectors{Model: "m", Dim: 4, Metric: "cosine"}}); err != nil {
		t.Fatal(err)
	}
	lagger := pickFollower(t, nodes)
	var all []string
	for _, n := range nodes {
		all = append(all, n.Name)
	}
	// localEF is the ef in the node's own copy of the schema.
	localEF := func(n *weaviatetest.Node) int {
		t.Helper()
		resp, err := http.Get(n.URL() + "/v1/schema/" + name + "?consistency=false")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var cls struct {
			VectorIndexConfig struct {
				EF int `json:"ef"`
			} `json:"vectorIndexConfig"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&cls); err != nil {
			t.Fatal(err)
		}
		return cls.VectorIndexConfig.EF
	}
	confirmed := func(what string, a weaviate.EFApplied, ef int) {
		t.Helper()
		if a.EF != ef || !slices.Equal(a.Nodes, all) || a.RaftIndex == 0 {
			t.Errorf("%s: confirmed %+v, want ef %d on %v", what, a, ef, all)
		}
		for _, n := range nodes {
			if got := localEF(n); got != ef {
				t.Errorf("%s: confirmed %s, but %s's schema holds ef %d", what, a, n.Name, got)
			}
		}
	}
	start := time.Now()
	frozen := func(what string, err error) {
		t.Helper()
		t.Logf("%s: %v after the start", what, time.Since(start).Round(time.Millisecond))
		if err == nil {
			t.Fatalf("%s: confirmed with %s frozen", what, lagger.Name)
		}
		t.Logf("%s: %v", what, err)
		if !strings.Contains(err.Error(), "node "+lagger.Name+" ") {
			t.Errorf("%s: the error does not name %s: %v", what, lagger.Name, err)
		}
	}
	t.Logf("requests go to %s; %s will be frozen", nodes[0].Name, lagger.Name)

	weaviate.SetEFConfirmWait(t, 3*time.Second)
	lagger.Pause()
	_, err = c.HoldEF(ctx, 64)
	frozen("HoldEF with a follower frozen", err)
	lagger.Resume()
	t.Logf("resumed %v after the start", time.Since(start).Round(time.Millisecond))

	// Back, the node catches up (and rejoins the cluster's statistics).
	weaviate.SetEFConfirmWait(t, 30*time.Second)
	hold, err := c.HoldEF(ctx, 64)
	if err != nil {
		t.Fatal(err)
	}
	confirmed("HoldEF", hold.Set, 64)
	t.Logf("HoldEF confirmed %v after the start", time.Since(start).Round(time.Millisecond))

	weaviate.SetEFConfirmWait(t, 3*time.Second)
	lagger.Pause()
	_, err = hold.Release()
	frozen("Release with a follower frozen", err)
	lagger.Resume()

	weaviate.SetEFConfirmWait(t, 30*time.Second)
	a, err := c.ConfirmEF(ctx)
	if err != nil {
		t.Fatal(err)
	}
	confirmed("the collection's own ef, put back", a, 512)
}

// pickFollower returns a node other than the first that is not the raft
// leader: freezing it leaves the cluster a leader and a quorum.
func pickFollower(t *testing.T, nodes []*weaviatetest.Node) *weaviatetest.Node {
	t.Helper()
	resp, err := http.Get(nodes[0].URL() + "/v1/cluster/statistics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var stats struct {
		Statistics []struct {
			LeaderID string `json:"leaderId"`
		} `json:"statistics"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&stats); err != nil || len(stats.Statistics) == 0 {
		t.Fatalf("cluster statistics: %v", err)
	}
	for _, n := range nodes[1:] {
		if n.Name != stats.Statistics[0].LeaderID {
			return n
		}
	}
	t.Fatal("no follower")
	return nil
}
