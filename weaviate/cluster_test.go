package weaviate_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/weaviate"
	"github.com/r2med/r2med/weaviate/weaviatetest"
)

// TestCluster runs NFCorpus on a 3-node Weaviate cluster on loopback with
// replication factor 3.
//
// First a push is cut short by killing a node: the push must fail naming
// that node (not the healthy one it went through), what a run reads first
// must answer at once though the node just died, a push while the node is
// down must fail, and once the node is back — holding fewer objects, a
// replica short — a push must make every replica whole: every node then
// holds every object and answers every BM25 and vector query as the
// others do.
//
// Then it kills a node in the middle of a stream of queries and restarts
// it: every query must answer, with the results the whole cluster gave
// before, no document may be lost, and the restarted node must answer the
// same once it is back.
func TestCluster(t *testing.T) {
	f := nfcorpus(t)
	// ClusterSettings make "the same results" a fair demand: the HNSW
	// commit log survives a kill, and BM25 is exhaustive.
	nodes := weaviatetest.StartCluster(t, 3, weaviatetest.Options{Env: weaviatetest.ClusterSettings})
	ctx := context.Background()
	open := func(n *weaviatetest.Node) *weaviate.Collection {
		c, err := weaviate.Open(weaviate.Config{URL: n.URL(), GRPC: n.GRPCAddr(), Collection: "Replicated"})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	c := open(nodes[0])
	docs := f.task.Corpus
	if _, err := c.Ensure(ctx, weaviate.Schema{Shards: 3, Replicas: 3, EF: 512, EFConstruction: 256, Vectors: f.vectors()}); err != nil {
		t.Fatal(err)
	}
	victim := pickVictim(t, nodes)
	t.Logf("requests go to %s; %s will be killed", nodes[0].Name, victim.Name)

	// A push at QUORUM goes on while a node is away, and leaves its
	// replicas short.
	pushed := make(chan error, 1)
	go func() {
		_, err := c.Push(ctx, docs, f.vecs, weaviate.PushOptions{Consistency: "QUORUM"})
		pushed <- err
	}()
	// A push that ends (or fails) before a third is written, or that
	// makes no headway for two minutes, fails the test rather than
	// keeping it waiting for the package's timeout.
	for start := time.Now(); ; time.Sleep(50 * time.Millisecond) {
		n, err := c.Count(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if n >= len(docs)/3 {
			break
		}
		select {
		case err := <-pushed:
			t.Fatalf("the push ended with %d of %d objects counted, before a node could be killed during it: %v", n, len(docs), err)
		default:
		}
		if time.Since(start) > 2*time.Minute {
			t.Fatalf("the push wrote %d of %d objects in %v", n, len(docs), time.Since(start))
		}
	}
	victim.Kill()
	t.Logf("killed %s during the push", victim.Name)
	// What a run reads first answers at once, though the node just died.
	if _, err := c.Info(ctx); err != nil {
		t.Errorf("Info right after %s died: %v", victim.Name, err)
	}
	if r, err := c.Replicas(ctx); err != nil {
		t.Errorf("Replicas right after %s died: %v", victim.Name, err)
	} else if warn := weaviate.ReplicaWarning(c.Config(), r); len(r.Problems()) == 0 || !strings.Contains(warn, victim.Name) {
		t.Errorf("with %s down the replicas show no problem: %s", victim.Name, warn)
	}
	blamed := func(what string, err error) {
		t.Helper()
		if err == nil {
			t.Errorf("%s: no error with %s down", what, victim.Name)
			return
		}
		t.Logf("%s: %v", what, err)
		if !strings.Contains(err.Error(), "node "+victim.Name) || strings.Contains(err.Error(), "node "+nodes[0].Name) {
			t.Errorf("%s: the error does not name %s alone as the node that failed: %v", what, victim.Name, err)
		}
	}
	blamed("the push cut short", <-pushed)
	_, err := c.Push(ctx, docs, f.vecs, weaviate.PushOptions{})
	blamed("a push with a node down", err)

	if err := victim.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if err := open(victim).WaitIndexed(ctx); err != nil {
		t.Fatal(err)
	}
	held, err := open(victim).DocIDs(ctx, "ONE")
	if err != nil {
		t.Fatal(err)
	}
	if len(held) >= len(docs) {
		t.Fatalf("%s came back holding %d of %d objects: its replicas are not short, nothing to repair", victim.Name, len(held), len(docs))
	}
	t.Logf("%s came back holding %d of %d objects", victim.Name, len(held), len(docs))
	for _, n := range nodes {
		if err := n.WaitFlushed(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if r, err := c.Replicas(ctx); err != nil || len(r.Disagreements()) == 0 {
		t.Errorf("a short replica, flushed: the replicas' counts agree (%v, %v)", r, err)
	} else {
		t.Logf("what a run warns: %s", weaviate.ReplicaWarning(c.Config(), r))
	}

	st, err := c.Push(ctx, docs, f.vecs, weaviate.PushOptions{})
	if err != nil {
		t.Fatalf("push after %s came back: %v", victim.Name, err)
	}
	t.Logf("push after %s came back: %d written, %d present, repaired %v, rebuilt %d; %s; %s", victim.Name, st.Written, st.Present, st.Repaired, st.Rebuilt, st.Replicas, st.Elapsed.Round(time.Millisecond))
	if st.Objects != len(docs) || st.Repaired[victim.Name] == 0 || len(st.Repaired) != 1 {
		t.Errorf("the repairing push: %+v; want objects repaired on %s alone", st, victim.Name)
	}
	// Every node holds every object, and answers alone (ONE, through it)
	// what the others answer.
	for _, n := range nodes {
		got, err := open(n).DocIDs(ctx, "ONE")
		if err != nil {
			t.Fatal(err)
		}
		if missing := missingDocs(docs, got); len(missing) > 0 || len(got) != len(docs) {
			t.Errorf("%s holds %d objects, %d of the corpus missing", n.Name, len(got), len(missing))
		}
	}
	for _, n := range nodes {
		if err := n.WaitFlushed(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if r, err := c.Replicas(ctx); err != nil || len(r.Problems()) > 0 {
		t.Errorf("after the repair: %v, %v", r.Problems(), err)
	}
	qs := f.queries()
	for _, m := range []weaviate.Mode{weaviate.BM25, weaviate.Vector} {
		var first ir.Run
		for i, n := range nodes {
			run, err := open(n).SearchAll(ctx, qs, weaviate.SearchOptions{Mode: m, K: 20, Consistency: "ONE"})
			if err != nil {
				t.Fatal(err)
			}
			if i == 0 {
				first = run
				continue
			}
			differ := 0
			for _, q := range qs {
				if !sameTop(first[q.ID], run[q.ID], 10, 1e-4) {
					if differ++; differ <= 3 {
						t.Logf("%s %s through %s: %v\n through %s: %v", m, q.ID, n.Name, run[q.ID], nodes[0].Name, first[q.ID])
					}
				}
			}
			if differ > 0 {
				t.Errorf("%s through %s: %d of %d queries answer otherwise than through %s", m, n.Name, differ, len(qs), nodes[0].Name)
			}
		}
	}

	modes := []weaviate.Mode{weaviate.BM25, weaviate.Vector}
	base := map[weaviate.Mode]ir.Run{}
	for _, m := range modes {
		run, err := c.SearchAll(ctx, qs, weaviate.SearchOptions{Mode: m, K: 20, Consistency: "ALL"})
		if err != nil {
			t.Fatal(err)
		}
		base[m] = run
	}
	// The same answers as the baseline: the same top 10, where only
	// documents tied (within Weaviate's float32 score drift) may trade
	// places.
	same := func(m weaviate.Mode, qid string, got []ir.Hit) bool {
		want := base[m][qid]
		return len(got) == min(10, len(want)) && sameTop(want, got, 10, 1e-4)
	}

	victim = pickVictim(t, nodes)
	t.Logf("the query stream goes to %s; %s will be killed", nodes[0].Name, victim.Name)

	// The stream: queries at consistency QUORUM (2 of 3 replicas agree),
	// one after another, through the first node.
	var answered, failed, differ atomic.Int64
	var firstErr atomic.Value
	var phase atomic.Value
	phase.Store("before the kill")
	var diffs []string
	var diffMu sync.Mutex
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			q, m := qs[i%len(qs)], modes[(i/len(qs))%len(modes)]
			hits, err := c.Search(ctx, q, weaviate.SearchOptions{Mode: m, K: 10, Consistency: "QUORUM"})
			switch {
			case err != nil:
				failed.Add(1)
				firstErr.CompareAndSwap(nil, fmt.Sprintf("%s, %s %s: %v", phase.Load(), m, q.ID, err))
			case !same(m, q.ID, hits):
				differ.Add(1)
				diffMu.Lock()
				diffs = append(diffs, fmt.Sprintf("%s, %s %s: %v\n want %v", phase.Load(), m, q.ID, hits, base[m][q.ID]))
				diffMu.Unlock()
			default:
				answered.Add(1)
			}
		}
	}()
	waitFor := func(n int64) {
		for answered.Load()+failed.Load()+differ.Load() < n {
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitFor(100)
	victim.Kill()
	phase.Store("node down")
	atKill := answered.Load() + failed.Load() + differ.Load()
	t.Logf("killed %s after %d queries", victim.Name, atKill)

	// While it is down: every document is still there.
	got, err := c.DocIDs(ctx, "QUORUM")
	if err != nil {
		t.Errorf("listing documents with a node down: %v", err)
	} else if missing := missingDocs(docs, got); len(missing) > 0 {
		t.Errorf("with %s down, %d documents are missing, e.g. %v", victim.Name, len(missing), missing[:min(3, len(missing))])
	}
	waitFor(atKill + 300)

	phase.Store("restarting")
	if err := victim.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	phase.Store("restarted")
	if err := open(victim).WaitIndexed(ctx); err != nil {
		t.Fatal(err)
	}
	atRestart := answered.Load() + failed.Load() + differ.Load()
	t.Logf("%s is back after %d queries with it down", victim.Name, atRestart-atKill)
	waitFor(atRestart + 100)
	close(stop)
	wg.Wait()
	total := answered.Load() + failed.Load() + differ.Load()
	t.Logf("query stream: %d queries, %d answered as before, %d failed, %d answered differently", total, answered.Load(), failed.Load(), differ.Load())
	if failed.Load() > 0 || differ.Load() > 0 {
		t.Errorf("the stream lost queries: %d failed, %d differ; first error: %v", failed.Load(), differ.Load(), firstErr.Load())
		for _, d := range diffs[:min(5, len(diffs))] {
			t.Log(d)
		}
	}

	// Back in the cluster, the restarted node answers alone (consistency
	// ONE, through it) what the whole cluster answered, and holds every
	// document.
	back := open(victim)
	for _, m := range modes {
		run, err := back.SearchAll(ctx, qs, weaviate.SearchOptions{Mode: m, K: 10, Consistency: "ONE"})
		if err != nil {
			t.Fatalf("%s through %s after it rejoined: %v", m, victim.Name, err)
		}
		n := 0
		for _, q := range qs {
			if !same(m, q.ID, run[q.ID]) {
				n++
				if n < 6 {
					t.Logf("%s %s: got %v\n want %v", m, q.ID, run[q.ID], base[m][q.ID])
				}
			}
		}
		if n > 0 {
			t.Errorf("%s through %s after it rejoined: %d of %d queries differ from before", m, victim.Name, n, len(qs))
		}
	}
	got, err = back.DocIDs(ctx, "ALL")
	if err != nil {
		t.Fatal(err)
	}
	if missing := missingDocs(docs, got); len(missing) > 0 || len(got) != len(docs) {
		t.Errorf("after the rejoin the cluster holds %d objects (%d of the corpus missing)", len(got), len(missing))
	}
	info, err := back.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rc, _ := info.Config["replicationConfig"].(map[string]any)
	if info.Nodes != 3 || info.Objects != len(docs) || rc["factor"] != 3.0 {
		t.Errorf("info after the rejoin: %d nodes, %d objects, replication %v", info.Nodes, info.Objects, rc)
	}
}

// pickVictim returns the raft leader when it is not the node the queries
// go through (the harder case: the cluster elects a new leader), else the
// last node.
func pickVictim(t *testing.T, nodes []*weaviatetest.Node) *weaviatetest.Node {
	resp, err := http.Get(nodes[0].URL() + "/v1/cluster/statistics")
	if err == nil {
		defer resp.Body.Close()
		var stats struct {
			Statistics []struct {
				Name     string `json:"name"`
				LeaderID string `json:"leaderId"`
			} `json:"statistics"`
		}
		if json.NewDecoder(resp.Body).Decode(&stats) == nil && len(stats.Statistics) > 0 {
			for _, n := range nodes[1:] {
				if n.Name == stats.Statistics[0].LeaderID {
					return n
				}
			}
		}
	}
	return nodes[len(nodes)-1]
}

func missingDocs(docs []ir.Doc, got []string) []string {
	have := map[string]bool{}
	for _, id := range got {
		have[id] = true
	}
	var missing []string
	for _, d := range docs {
		if !have[d.ID] {
			missing = append(missing, d.ID)
		}
	}
	slices.Sort(missing)
	return missing
}
