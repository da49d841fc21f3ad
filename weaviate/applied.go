package weaviate

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/weaviate/weaviate-go-client/v5/weaviate/fault"

	"github.com/r2med/r2med/internal/httpx"
)

// A class update (ef, the lease in the description) is a raft log entry:
// Weaviate acknowledges it once the raft leader has applied it, and every
// other node applies it when raft hands it to the node's state machine,
// which sets the new ef in each of the node's shards. A search routed to
// a replica on a node that has not applied it yet searches with the old
// ef. Weaviate 1.35 offers no per-node read of a class's configuration
// through one node, and no ef per query; what it offers is each node's
// raft progress (/v1/cluster/statistics, asked of every node by the one
// the request goes to): the index of the last entry raft handed to the
// node's state machine, and how many batches of entries wait for it. A
// node whose applied index has reached the update's, with none waiting,
// has applied the update or is applying it at that moment (raft counts
// an entry applied when it hands it over; the state machine sets ef in
// the same step that changes the node's schema).

// EFApplied is an ef the cluster confirmed: every node holding a replica
// of the collection's shards had applied the class update that set it.
type EFApplied struct {
	EF int `json:"ef"`
	// RaftIndex is the index of the schema log the nodes had applied: at
	// or after the update that set ef (the leader's applied index once the
	// update was acknowledged).
	RaftIndex uint64 `json:"raft_index"`
	// Nodes are the nodes that hold a replica (and any member not healthy,
	// whose replicas cannot be read), each of which had applied it.
	Nodes []string `json:"nodes"`
	// Waited is how long the confirmation took.
	Waited time.Duration `json:"waited_ns"`
}

func (a EFApplied) String() string {
	return fmt.Sprintf("ef %d applied on %s (raft index %d)", a.EF, strings.Join(a.Nodes, ", "), a.RaftIndex)
}

// efConfirmWait bounds the wait for every node to apply an ef.
var efConfirmWait = 30 * time.Second

// notApplied is an ef that was set but not applied on every node in time.
type notApplied struct{ msg string }

func (e *notApplied) Error() string { return e.msg }

// ConfirmEF waits until every node holding a replica of the collection
// has applied the collection's HNSW ef as it stands (confirmEF): what a
// run records when it searches with the collection's own ef.
func (c *Collection) ConfirmEF(ctx context.Context) (EFApplied, error) {
	vi, err := c.VectorIndex(ctx)
	if err != nil {
		return EFApplied{}, err
	}
	if vi.Type != "hnsw" {
		return EFApplied{}, fmt.Errorf("collection %s has a %s vector index; ef applies to hnsw only", c.cfg.Collection, vi.Type)
	}
	return c.confirmEF(ctx, vi.EF)
}

// confirmEF waits until every node holding a replica of the collection
// (and every member not healthy, whose replicas the cluster cannot say)
// reports having applied the schema log up to the leader's applied index
// at the first reading, with nothing waiting for its state machine. A node
// that does not within efConfirmWait fails it, named (*notApplied).
func (c *Collection) confirmEF(ctx context.Context, ef int) (EFApplied, error) {
	start := time.Now()
	want, err := c.efNodes(ctx)
	if err != nil {
		return EFApplied{}, err
	}
	return c.confirmOn(ctx, ef, want, start)
}

// efNodes are the nodes that must apply an ef: those holding a replica,
// and any member not healthy (the cluster cannot say what it holds).
func (c *Collection) efNodes(ctx context.Context) ([]string, error) {
	r, err := c.Replicas(ctx)
	if err != nil {
		return nil, err
	}
	want := r.holders()
	for _, n := range r.Nodes {
		if n.Status != "HEALTHY" && !slices.Contains(want, n.Name) {
			want = append(want, n.Name)
		}
	}
	slices.Sort(want)
	return want, nil
}

// confirmOn waits until every node of want has applied ef, for
// efConfirmWait from start.
func (c *Collection) confirmOn(ctx context.Context, ef int, want []string, start time.Time) (EFApplied, error) {
	var target uint64
	var lagging []string
	for attempt := 0; ; attempt++ {
		var st clusterStatistics
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := c.getJSON(rctx, "/v1/cluster/statistics", &st)
		cancel()
		switch {
		case err != nil && ctx.Err() != nil:
			return EFApplied{}, ctx.Err()
		case err != nil:
			lagging = []string{fmt.Sprintf("the cluster's statistics did not answer (%v)", err)}
		default:
			if target == 0 {
				target = st.maxApplied()
			}
			if lagging = st.lagging(want, target); len(lagging) == 0 {
				return EFApplied{EF: ef, RaftIndex: target, Nodes: want, Waited: time.Since(start)}, nil
			}
		}
		wait := min(50*time.Millisecond<<min(attempt, 5), time.Second)
		if time.Since(start)+wait > efConfirmWait {
			if err != nil {
				// The statistics wait for every node; name the ones
				// that do not answer.
				if silent := c.silent(ctx, want); len(silent) > 0 {
					lagging = silent
				}
			}
			return EFApplied{}, &notApplied{fmt.Sprintf("collection %s: ef %d was set, but %s (Weaviate's raft statistics via %s, waited %s): a search routed to a replica there would search with the old ef; start the node or wait until it catches up, and run again",
				c.cfg.Collection, ef, strings.Join(lagging, "; "), c.cfg.URL, efConfirmWait)}
		}
		if err := httpx.Sleep(ctx, wait); err != nil {
			return EFApplied{}, err
		}
	}
}

// maxApplied is the highest raft applied index any node reports: the
// leader's, which has applied every update it acknowledged.
func (s clusterStatistics) maxApplied() uint64 {
	var top uint64
	for _, n := range s.Statistics {
		if i, err := strconv.ParseUint(n.Raft.AppliedIndex, 10, 64); err == nil && i > top {
			top = i
		}
	}
	return top
}

// lagging words the nodes of want that have not applied the schema log up
// to target: missing from the statistics (not answering), behind, or with
// entries waiting for their state machine.
func (s clusterStatistics) lagging(want []string, target uint64) []string {
	var out []string
	for _, name := range want {
		i := slices.IndexFunc(s.Statistics, func(n nodeStatistics) bool { return n.Name == name })
		if i < 0 {
			out = append(out, fmt.Sprintf("node %s did not confirm applying it (it does not answer: the cluster's statistics leave it out)", name))
			continue
		}
		n := s.Statistics[i]
		applied, err := strconv.ParseUint(n.Raft.AppliedIndex, 10, 64)
		switch {
		case err != nil:
			out = append(out, fmt.Sprintf("node %s did not confirm applying it (raft applied index %q)", name, n.Raft.AppliedIndex))
		case applied < target:
			out = append(out, fmt.Sprintf("node %s has not applied it (raft applied index %d, the update's is at least %d)", name, applied, target))
		case n.Raft.FSMPending != "0":
			out = append(out, fmt.Sprintf("node %s has not applied it yet (%s batches of schema changes wait for its state machine)", name, n.Raft.FSMPending))
		}
	}
	return out
}

// silent words the nodes of want that do not answer a read from their own
// replica (an object that does not exist, asked of that node alone)
// within two seconds.
func (c *Collection) silent(ctx context.Context, want []string) []string {
	out := make([]string, len(want))
	var wg sync.WaitGroup
	for i, node := range want {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			defer cancel()
			var reply struct{}
			err := c.getJSON(rctx, "/v1/objects/"+url.PathEscape(c.cfg.Collection)+"/00000000-0000-0000-0000-000000000000?node_name="+url.QueryEscape(node), &reply)
			var fe *fault.WeaviateClientError
			if err != nil && !(errors.As(err, &fe) && fe.StatusCode < 500) {
				out[i] = fmt.Sprintf("node %s did not confirm applying it (it does not answer: a read from its replica failed: %v)", node, err)
			}
		}()
	}
	wg.Wait()
	return slices.DeleteFunc(out, func(s string) bool { return s == "" })
}
