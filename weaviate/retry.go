package weaviate

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/weaviate/weaviate-go-client/v5/weaviate/fault"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/r2med/r2med/internal/httpx"
)

// For a few seconds after a node of a cluster dies, the nodes that remain
// answer some requests with errors although the replicas left could
// answer them: /v1/nodes fails with 500 until the survivors mark the node
// dead, and a search or read routed to a replica on it fails with
// Unavailable or Internal until Weaviate routes around it. Requests that
// fail so are sent again for a bounded time (Config.RetryFor), and an
// error that remains names the nodes Weaviate reports as not healthy
// rather than only the node the request went through.

// retryFor is how long a request that fails with a transient error is
// sent again: Config.RetryFor, 0: 1 minute, negative: never.
func (c Config) retryFor() time.Duration {
	switch {
	case c.RetryFor < 0:
		return 0
	case c.RetryFor == 0:
		return time.Minute
	}
	return c.RetryFor
}

// attemptTimeout bounds one try of a retried request: Config.Timeout, or
// 15 s. A request routed to a node that just died can hang until then
// (a schema read goes to the raft leader), and the next try finds the
// cluster routing around it.
func (c Config) attemptTimeout() time.Duration {
	if c.Timeout > 0 {
		return c.Timeout
	}
	return 15 * time.Second
}

// transient reports whether a failed request may succeed when sent again:
// gRPC's unavailable, deadline, exhausted, aborted, internal and unknown
// codes, HTTP 429 and 5xx answers, and connections refused, reset or cut.
func transient(ctx context.Context, err error) bool {
	if ctx.Err() != nil || errors.Is(err, context.Canceled) {
		return false
	}
	if s, ok := status.FromError(err); ok {
		switch s.Code() {
		case codes.Unknown, codes.Internal:
			// Weaviate answers every error of a search with Unknown,
			// a request it refuses too: that one fails again.
			return !refusedRequest(s.Message())
		case codes.ResourceExhausted:
			// An answer over the client's size limit is as large again.
			return !strings.Contains(s.Message(), "larger than max")
		case codes.Unavailable, codes.DeadlineExceeded, codes.Aborted:
			return true
		}
		return false
	}
	var fe *fault.WeaviateClientError
	if errors.As(err, &fe) && fe.IsUnexpectedStatusCode {
		return fe.StatusCode == http.StatusTooManyRequests || fe.StatusCode >= 500
	}
	if errors.Is(err, context.DeadlineExceeded) || refused(err) {
		return true
	}
	msg := err.Error()
	for _, s := range []string{"connection reset", "EOF", "context deadline exceeded", "Client.Timeout exceeded", "i/o timeout"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// refusals are what Weaviate 1.35 says, with gRPC code Unknown, of a
// search it refuses for what the request asks (usecases/traverser,
// usecases/objects): sending it again cannot help.
var refusals = []string{
	"query maximum results exceeded", // offset + limit above QUERY_MAXIMUM_RESULTS
	"invalid pagination params",
	"must have query set", // an empty BM25 query
	"conflict:",           // arguments that exclude each other
	"vector lengths don't match",
	"could not find class",
}

// refusedRequest reports whether a search's error message is one of
// Weaviate's refusals of the request itself.
func refusedRequest(msg string) bool {
	for _, r := range refusals {
		if strings.Contains(msg, r) {
			return true
		}
	}
	return false
}

// refused reports whether err says nothing listens where the request went.
func refused(err error) bool {
	return strings.Contains(err.Error(), "connection refused") || strings.Contains(err.Error(), "no such host")
}

// backoff is the full-jitter delay before retry attempt+1.
func backoff(base time.Duration, attempt int) time.Duration {
	d := base << min(attempt, 10)
	if max := 30 * time.Second; d > max || d <= 0 {
		d = max
	}
	return time.Duration(rand.Int64N(int64(d))) + time.Millisecond
}

// retry runs fn until it succeeds, fails for good, or has failed with
// transient errors for Config.RetryFor; the error it returns names the
// request (what), the server, the retries and the nodes that are not
// healthy. A refused connection to a server never reached is not retried:
// that is a wrong address, not a node that died.
func (c *Collection) retry(ctx context.Context, what string, fn func(context.Context) error) error {
	start := time.Now()
	window := c.cfg.retryFor()
	for attempt := 0; ; attempt++ {
		actx, cancel := context.WithTimeout(ctx, c.cfg.attemptTimeout())
		err := fn(actx)
		cancel()
		if err == nil {
			c.reached.Store(true)
			return nil
		}
		if !transient(ctx, err) || (refused(err) && !c.reached.Load()) {
			return c.fail(ctx, what, err, attempt, start)
		}
		wait := backoff(100*time.Millisecond, attempt)
		if time.Since(start)+wait > window {
			return c.fail(ctx, what, err, attempt, start)
		}
		if httpx.Sleep(ctx, wait) != nil {
			return c.fail(ctx, what, err, attempt, start)
		}
	}
}

// fail words a request's error: the server and collection, how long it
// was retried, and which nodes Weaviate reports as not healthy (the node
// that failed, when the request went through a healthy one).
func (c *Collection) fail(ctx context.Context, what string, err error, retries int, since time.Time) error {
	if retries > 0 {
		err = fmt.Errorf("%w (sent %d times over %s)", err, retries+1, time.Since(since).Round(100*time.Millisecond))
	}
	if ctx.Err() == nil && transient(ctx, err) && c.reached.Load() {
		if down := c.unhealthy(ctx); len(down) > 0 {
			return fmt.Errorf("weaviate cluster at %s: %s %s failed: %s not healthy (Weaviate's node status), %s: %w",
				c.cfg.URL, what, c.cfg.Collection, strings.Join(down, ", "), nodesHint(len(down)), err)
		}
	}
	return c.wrap(what, err)
}

func nodesHint(n int) string {
	if n == 1 {
		return "start it, or wait until the cluster answers without it"
	}
	return "start them, or wait until the cluster answers without them"
}

// unhealthy lists the cluster's members that Weaviate's node status
// reports as not HEALTHY, or no longer lists (a node that died), as "node
// NAME is STATUS", from one quick request each; it is empty when the
// status cannot be read.
func (c *Collection) unhealthy(ctx context.Context) []string {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	resp, err := c.client.Cluster().NodesStatusGetter().Do(ctx)
	if err != nil {
		return nil
	}
	var out []string
	listed := map[string]bool{}
	for _, n := range resp.Nodes {
		if n == nil {
			continue
		}
		listed[n.Name] = true
		if n.Status != nil && *n.Status != "HEALTHY" {
			out = append(out, fmt.Sprintf("node %s is %s", n.Name, *n.Status))
		}
	}
	var members clusterStatistics
	if c.getJSON(ctx, "/v1/cluster/statistics", &members) == nil {
		for _, m := range members.members() {
			if !listed[m] {
				out = append(out, fmt.Sprintf("node %s is gone (a member the node status no longer lists)", m))
			}
		}
	}
	slices.Sort(out)
	return out
}
