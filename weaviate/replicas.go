package weaviate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/weaviate/weaviate-go-client/v5/weaviate/fault"

	"github.com/r2med/r2med/internal/errtext"
)

// Replicas is where a collection's shards live and what each replica
// holds, as the cluster reports it: its members (the raft configuration,
// which keeps a node that died), the nodes' status with shard detail
// (/v1/nodes/NAME?output=verbose) and, where the server offers it, the
// sharding state (which nodes hold a replica of which shard).
//
// Object counts are Weaviate's "async" counts: objects flushed to disk
// segments. Writes still in a node's memtable are not counted — for up to
// a minute after a push (Weaviate flushes a memtable after 60 s without
// writes), and for as long as a memtable stays under 4 kB of write-ahead
// log — so counts that differ are a sign, not a proof, that a replica is
// short. Push proves completeness object by object on every replica
// (VerifyReplicas); counts are what a search may check cheaply.
type Replicas struct {
	Factor int           // replication factor
	Nodes  []NodeStatus  // every member of the cluster, by name
	Shards []ShardStatus // the collection's shards, by name
}

// NodeStatus is one node's status: HEALTHY, UNHEALTHY, UNAVAILABLE or
// TIMEOUT as the node status reports it, or GONE for a member of the
// cluster the node status no longer lists (a node that died).
type NodeStatus struct {
	Name   string `json:"name"`
	Status string `json:"status"`
}

// ShardStatus is one shard's replicas.
type ShardStatus struct {
	Name string `json:"name"`
	// Replicas is how many replicas the shard has.
	Replicas int `json:"replicas"`
	// Nodes hold a replica: the sharding state's, or the nodes that
	// report the shard where the server does not offer it.
	Nodes []string `json:"nodes"`
	// Objects is each reporting node's count of the shard's objects on
	// disk.
	Objects map[string]int64 `json:"objects"`
}

// Replicas reads the cluster's members, the nodes' status and the
// sharding state.
func (c *Collection) Replicas(ctx context.Context) (Replicas, error) {
	var r Replicas
	cls, err := c.class(ctx)
	if err != nil {
		return r, err
	}
	r.Factor = replicationFactor(cls.ReplicationConfig)
	var nodes []nodeReply
	if err := c.retry(ctx, "read node status (/v1/nodes) of", func(ctx context.Context) error {
		resp, err := c.client.Cluster().NodesStatusGetter().WithClass(c.cfg.Collection).WithOutput("verbose").Do(ctx)
		if err != nil {
			return err
		}
		nodes = nodes[:0]
		for _, n := range resp.Nodes {
			if n == nil {
				continue
			}
			nr := nodeReply{name: n.Name, status: "UNKNOWN"}
			if n.Status != nil {
				nr.status = *n.Status
			}
			for _, s := range n.Shards {
				if s != nil && s.Class == c.cfg.Collection {
					nr.shards = append(nr.shards, shardReply{name: s.Name, objects: s.ObjectCount, replicas: int(s.NumberOfReplicas)})
				}
			}
			nodes = append(nodes, nr)
		}
		return nil
	}); err != nil {
		return r, err
	}
	members, err := c.members(ctx)
	if err != nil {
		return r, err
	}
	state, err := c.shardingState(ctx)
	if err != nil {
		return r, err
	}
	r.Nodes, r.Shards = joinReplicas(nodes, members, state, r.Factor)
	return r, nil
}

type nodeReply struct {
	name, status string
	shards       []shardReply
}

type shardReply struct {
	name     string
	objects  int64
	replicas int
}

// joinReplicas puts the nodes' replies, the cluster's members (nil when
// unknown) and the sharding state (shard → nodes; nil when the server
// does not offer it) together, sorted by name.
func joinReplicas(nodes []nodeReply, members []string, state map[string][]string, factor int) ([]NodeStatus, []ShardStatus) {
	byShard := map[string]*ShardStatus{}
	shard := func(name string) *ShardStatus {
		s := byShard[name]
		if s == nil {
			s = &ShardStatus{Name: name, Replicas: factor, Objects: map[string]int64{}}
			byShard[name] = s
		}
		return s
	}
	for name, holders := range state {
		s := shard(name)
		s.Nodes = slices.Clone(holders)
		s.Replicas = len(holders)
	}
	var ns []NodeStatus
	listed := map[string]bool{}
	for _, n := range nodes {
		listed[n.name] = true
		ns = append(ns, NodeStatus{Name: n.name, Status: n.status})
		for _, sr := range n.shards {
			s := shard(sr.name)
			s.Objects[n.name] = sr.objects
			if state == nil {
				if !slices.Contains(s.Nodes, n.name) {
					s.Nodes = append(s.Nodes, n.name)
				}
				if sr.replicas > 0 {
					s.Replicas = sr.replicas
				}
			}
		}
	}
	for _, m := range members {
		if !listed[m] {
			ns = append(ns, NodeStatus{Name: m, Status: "GONE"})
		}
	}
	slices.SortFunc(ns, func(a, b NodeStatus) int { return strings.Compare(a.Name, b.Name) })
	var ss []ShardStatus
	for _, s := range byShard {
		slices.Sort(s.Nodes)
		ss = append(ss, *s)
	}
	slices.SortFunc(ss, func(a, b ShardStatus) int { return strings.Compare(a.Name, b.Name) })
	return ns, ss
}

// members lists the cluster's nodes as its raft configuration holds them
// (/v1/cluster/statistics): a node that died stays there while the node
// status forgets it within seconds. Nil when the server does not say.
func (c *Collection) members(ctx context.Context) ([]string, error) {
	var reply clusterStatistics
	err := c.retry(ctx, "read the cluster's members (/v1/cluster/statistics) for", func(ctx context.Context) error {
		return c.getJSON(ctx, "/v1/cluster/statistics", &reply)
	})
	var fe *fault.WeaviateClientError
	if errors.As(err, &fe) && fe.StatusCode >= 400 && fe.StatusCode < 500 {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return reply.members(), nil
}

// clusterStatistics is what r2med reads of /v1/cluster/statistics: each
// node that answers, with its raft state.
type clusterStatistics struct {
	Statistics []nodeStatistics `json:"statistics"`
}

type nodeStatistics struct {
	Name string `json:"name"`
	Raft struct {
		// AppliedIndex is the last schema log entry raft handed to the
		// node's state machine; FSMPending how many batches wait for it.
		AppliedIndex        string `json:"appliedIndex"`
		FSMPending          string `json:"fsmPending"`
		LatestConfiguration []struct {
			ID string `json:"id"`
		} `json:"latestConfiguration"`
	} `json:"raft"`
}

// members are the raft configuration's node names; nil when not given.
func (s clusterStatistics) members() []string {
	var out []string
	if len(s.Statistics) > 0 {
		for _, m := range s.Statistics[0].Raft.LatestConfiguration {
			out = append(out, m.ID)
		}
	}
	return out
}

// shardingState reads which nodes hold a replica of which shard
// (/v1/replication/sharding-state); nil when the server does not offer it
// (replica movement is off by default: 501).
func (c *Collection) shardingState(ctx context.Context) (map[string][]string, error) {
	var reply struct {
		ShardingState struct {
			Shards []struct {
				Shard    string   `json:"shard"`
				Replicas []string `json:"replicas"`
			} `json:"shards"`
		} `json:"shardingState"`
	}
	probe := c.getJSON(ctx, "/v1/replication/sharding-state?collection="+url.QueryEscape(c.cfg.Collection), &reply)
	var fe *fault.WeaviateClientError
	if errors.As(probe, &fe) && (fe.StatusCode == http.StatusNotFound || fe.StatusCode == http.StatusNotImplemented) {
		return nil, nil
	}
	if probe != nil {
		if err := c.retry(ctx, "read the sharding state of", func(ctx context.Context) error {
			return c.getJSON(ctx, "/v1/replication/sharding-state?collection="+url.QueryEscape(c.cfg.Collection), &reply)
		}); err != nil {
			return nil, err
		}
	}
	out := map[string][]string{}
	for _, s := range reply.ShardingState.Shards {
		out[s.Shard] = s.Replicas
	}
	return out, nil
}

// getJSON GETs path from the REST root into v; an answer other than 200
// is a *fault.WeaviateClientError, as the client's own calls give.
func (c *Collection) getJSON(ctx context.Context, path string, v any) error {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.timeout())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(c.cfg.URL, "/")+path, nil)
	if err != nil {
		return err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return &fault.WeaviateClientError{IsUnexpectedStatusCode: true, StatusCode: resp.StatusCode, Msg: strings.TrimSpace(string(body))}
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("GET %s: %v in %.200s", path, err, body)
	}
	return nil
}

// Down lists the members of the cluster that are not HEALTHY (or GONE:
// the node status no longer lists them), and the shards some of whose
// replicas do not answer: "node r2med-node-3 is gone (…)", "shard a: 2 of
// 3 replicas answer".
func (r Replicas) Down() []string {
	var out []string
	for _, n := range r.Nodes {
		switch n.Status {
		case "HEALTHY":
		case "GONE":
			out = append(out, fmt.Sprintf("node %s is gone (a member the node status no longer lists)", n.Name))
		default:
			out = append(out, fmt.Sprintf("node %s is %s", n.Name, n.Status))
		}
	}
	for _, s := range r.Shards {
		if len(s.Objects) < max(s.Replicas, len(s.Nodes)) {
			out = append(out, fmt.Sprintf("shard %s: %d of %d replicas answer", s.Name, len(s.Objects), max(s.Replicas, len(s.Nodes))))
		}
	}
	return out
}

// Disagreements lists the shards whose replicas report different object
// counts: "shard a: r2med-node-1 1211, r2med-node-2 1211, r2med-node-3 583".
func (r Replicas) Disagreements() []string {
	var out []string
	for _, s := range r.Shards {
		var parts []string
		seen := map[int64]bool{}
		for _, n := range s.Nodes {
			if k, ok := s.Objects[n]; ok {
				seen[k] = true
				parts = append(parts, fmt.Sprintf("%s %d", n, k))
			}
		}
		if len(seen) > 1 {
			out = append(out, fmt.Sprintf("shard %s: %s", s.Name, strings.Join(parts, ", ")))
		}
	}
	return out
}

// Problems is Down and Disagreements in words, one line each; empty when
// every member is healthy, every replica answers and the replicas of each
// shard report the same count.
func (r Replicas) Problems() []string {
	var out []string
	for _, d := range r.Down() {
		out = append(out, d)
	}
	for _, d := range r.Disagreements() {
		out = append(out, d+" objects on disk")
	}
	return out
}

// holders lists the nodes that hold a replica of any shard.
func (r Replicas) holders() []string {
	var out []string
	for _, s := range r.Shards {
		for _, n := range s.Nodes {
			if !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
	}
	slices.Sort(out)
	return out
}

// String summarizes the layout: "3 shards × 3 replicas on 3 nodes".
func (r Replicas) String() string {
	n := 0
	for _, s := range r.Shards {
		n += len(s.Nodes)
	}
	return fmt.Sprintf("%d %s, %d shard %s, on %d %s", len(r.Shards), errtext.Plural(len(r.Shards), "shard", "shards"),
		n, errtext.Plural(n, "replica", "replicas"), len(r.Nodes), errtext.Plural(len(r.Nodes), "node", "nodes"))
}

// ReplicaWarning words replicas that disagree (Problems) for a searcher:
// what it means and what to do.
func ReplicaWarning(cfg Config, r Replicas) string {
	return fmt.Sprintf("collection %s's replicas disagree (Weaviate's node status via %s: %s): a search answered by a short replica misses documents; push the corpus again (r2med index push --to weaviate://%s/%s, as before), which verifies every replica and repairs what is missing (the counts are of objects flushed to disk, which lag up to a minute behind a push)",
		cfg.Collection, cfg.URL, strings.Join(r.Problems(), "; "), cfg.host(), cfg.Collection)
}
