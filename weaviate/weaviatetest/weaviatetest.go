// Package weaviatetest starts real Weaviate servers on loopback for tests:
// one node (Start) or a cluster (StartCluster) whose nodes can be killed
// and restarted. The binary is weaviate-server, built from the Go module
// proxy by .ci/run into .ci/.tools/weaviate-v1.35.2/ (or named by
// $R2MED_WEAVIATE_BIN); without it a test is skipped, except under
// R2MED_CI=1, where it fails.
//
// Every node gets its own data directory in the test's temporary directory
// and its own free loopback ports (REST, gRPC, gossip, data, raft, raft
// RPC); its log is kept and its tail printed when the test fails. All
// processes are stopped by the test's cleanup.
package weaviatetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Version is the Weaviate release the tests run against; .ci/run builds it.
const Version = "1.35.2"

// BinEnv names the environment variable that points at weaviate-server.
const BinEnv = "R2MED_WEAVIATE_BIN"

// readyTimeout bounds a node's start; the raft bootstrap of a cluster on a
// busy 2-core machine takes the longest.
const readyTimeout = 3 * time.Minute

// Binary returns the weaviate-server executable: $R2MED_WEAVIATE_BIN, else
// the repository's .ci/.tools/weaviate-v<Version>/weaviate-server, else one
// on PATH. Without one the test is skipped, or fails under R2MED_CI=1.
func Binary(tb testing.TB) string {
	tb.Helper()
	path, err := findBinary()
	if err == nil {
		return path
	}
	if os.Getenv("R2MED_CI") == "1" {
		tb.Fatalf("R2MED_CI=1 and %v", err)
	}
	tb.Skipf("%v; skipping the test that needs a real Weaviate (set R2MED_CI=1 to make this an error)", err)
	return ""
}

// Install is the command that builds the binary where Binary looks.
const Install = "GOBIN=$PWD/.ci/.tools/weaviate-v" + Version + " go install github.com/weaviate/weaviate/cmd/weaviate-server@v" + Version

func findBinary() (string, error) {
	if p := os.Getenv(BinEnv); p != "" {
		if st, err := os.Stat(p); err != nil || st.IsDir() {
			return "", fmt.Errorf("$%s=%s is not an executable file", BinEnv, p)
		}
		return p, nil
	}
	p := filepath.Join(repoRoot(), ".ci", ".tools", "weaviate-v"+Version, "weaviate-server")
	if _, err := os.Stat(p); err == nil {
		return p, nil
	}
	if p, err := exec.LookPath("weaviate-server"); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("weaviate-server not found (set $%s, or build it: %s)", BinEnv, Install)
}

func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// Node is one running (or stopped) weaviate-server.
type Node struct {
	Name string // CLUSTER_HOSTNAME
	// Ports on 127.0.0.1. Data = Gossip+1 and RaftRPC = Raft+1, as
	// Weaviate's localhost cluster mode assumes.
	HTTP, GRPC, Gossip, Data, Raft, RaftRPC int
	Dir                                     string // PERSISTENCE_DATA_PATH

	bin  string
	env  []string
	tb   testing.TB
	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{} // closed when cmd has exited
	log  *logBuffer
}

// URL is the node's REST root, http://127.0.0.1:PORT.
func (n *Node) URL() string { return "http://127.0.0.1:" + strconv.Itoa(n.HTTP) }

// GRPCAddr is the node's gRPC address, 127.0.0.1:PORT.
func (n *Node) GRPCAddr() string { return "127.0.0.1:" + strconv.Itoa(n.GRPC) }

// Log returns everything the node has written so far, across restarts.
func (n *Node) Log() string { return n.log.String() }

// Running reports whether the process is alive.
func (n *Node) Running() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.cmd == nil {
		return false
	}
	select {
	case <-n.done:
		return false
	default:
		return true
	}
}

// Kill ends the node at once (SIGKILL), as a crash would, and waits for
// the process to be gone. Its data directory stays for Restart.
func (n *Node) Kill() { n.stop(syscall.SIGKILL) }

// Stop ends the node gracefully (SIGTERM, then SIGKILL after 20 s).
func (n *Node) Stop() { n.stop(syscall.SIGTERM) }

// Pause freezes the node (SIGSTOP), as a node that lags far behind the
// cluster would: it answers nothing and applies nothing until Resume.
// The test's cleanup resumes it.
func (n *Node) Pause() {
	n.tb.Helper()
	if err := n.signal(syscall.SIGSTOP); err != nil {
		n.tb.Fatal(err)
	}
	n.tb.Cleanup(n.Resume)
}

// Resume lets a paused node go on (SIGCONT).
func (n *Node) Resume() { _ = n.signal(syscall.SIGCONT) }

func (n *Node) signal(sig syscall.Signal) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.cmd == nil {
		return fmt.Errorf("node %s is not running", n.Name)
	}
	return n.cmd.Process.Signal(sig)
}

func (n *Node) stop(sig syscall.Signal) {
	n.mu.Lock()
	cmd, done := n.cmd, n.done
	n.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(sig)
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		_ = cmd.Process.Kill()
		<-done
	}
}

// Restart starts a stopped node again with the same name, ports and data,
// and waits until it is ready.
func (n *Node) Restart(ctx context.Context) error {
	if n.Running() {
		return fmt.Errorf("node %s is still running", n.Name)
	}
	if err := n.start(); err != nil {
		return err
	}
	return n.WaitReady(ctx)
}

func (n *Node) start() error {
	cmd := exec.Command(n.bin, "--host", "127.0.0.1", "--port", strconv.Itoa(n.HTTP), "--scheme", "http")
	cmd.Env = n.env
	cmd.Dir = n.Dir
	cmd.Stdout = n.log
	cmd.Stderr = n.log
	setDeathSignal(cmd)
	fmt.Fprintf(n.log, "==== r2med weaviatetest: starting %s at %s\n", n.Name, time.Now().Format(time.RFC3339))
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start weaviate-server %s: %w", n.Name, err)
	}
	done := make(chan struct{})
	go func() {
		err := cmd.Wait()
		fmt.Fprintf(n.log, "==== r2med weaviatetest: %s exited: %v\n", n.Name, err)
		close(done)
	}()
	n.mu.Lock()
	n.cmd, n.done = cmd, done
	n.mu.Unlock()
	return nil
}

// WaitReady polls /v1/.well-known/ready until it answers 200, the process
// exits, or ctx (bounded by readyTimeout) ends.
func (n *Node) WaitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	n.mu.Lock()
	done := n.done
	n.mu.Unlock()
	client := &http.Client{Timeout: 2 * time.Second}
	start := time.Now()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, n.URL()+"/v1/.well-known/ready", nil)
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				fmt.Fprintf(n.log, "==== r2med weaviatetest: %s ready after %s\n", n.Name, time.Since(start).Round(time.Millisecond))
				return nil
			}
		}
		select {
		case <-done:
			return fmt.Errorf("weaviate-server %s exited before it was ready; log tail:\n%s", n.Name, n.log.Tail(4000))
		case <-ctx.Done():
			return fmt.Errorf("weaviate-server %s not ready at %s after %s: %w", n.Name, n.URL(), time.Since(start).Round(time.Second), ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// WaitFlushed waits until the node has flushed every memtable to disk
// segments: no non-empty write-ahead log (*.wal) is left in its data
// directory. Searches after it see the state every later search sees;
// right after a push, Weaviate's BM25 reads its memtables, ranks
// differently and is many times slower.
func (n *Node) WaitFlushed(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	for {
		pending := ""
		err := filepath.WalkDir(n.Dir, func(path string, d os.DirEntry, err error) error {
			if err != nil || pending != "" {
				return nil // files come and go while the server works
			}
			if !d.IsDir() && strings.HasSuffix(path, ".wal") {
				if info, err := d.Info(); err == nil && info.Size() > 0 {
					pending = path
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		if pending == "" {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("weaviate-server %s: %s still unflushed: %w", n.Name, pending, ctx.Err())
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// Settings are what every node runs with, beside its name, ports, data
// directory and peers. README's recipes give the same (a test checks it).
var Settings = map[string]string{
	"AUTHENTICATION_ANONYMOUS_ACCESS_ENABLED": "true",
	"DEFAULT_VECTORIZER_MODULE":               "none",
	"ENABLE_MODULES":                          "",
	// Without it the node advertises the machine's IPv6 address
	// unbracketed and dies with "too many colons in address".
	"CLUSTER_ADVERTISE_ADDR": "127.0.0.1",
	"CLUSTER_BIND_ADDR":      "127.0.0.1",
	"CLUSTER_IN_LOCALHOST":   "true",
	// A killed node is noticed in seconds, not half a minute.
	"MEMBERLIST_FAST_FAILURE_DETECTION": "true",
	// The profiler would listen on :6060 on every interface.
	"GO_PROFILING_DISABLE": "true",
	"DISABLE_TELEMETRY":    "true",
	"LOG_LEVEL":            "info",
	// Flush memtables after 2 s without writes (Weaviate's own test
	// setup does the same; the default is 60 s): WaitFlushed then
	// returns soon after a push. BM25 ranks differently, and far
	// slower, while the last writes are still in memtables.
	"PERSISTENCE_MEMTABLES_FLUSH_IDLE_AFTER_SECONDS": "2",
	// and flush small memtables too (Weaviate keeps writing to a
	// write-ahead log under 4 kB instead of flushing it).
	"PERSISTENCE_MAX_REUSE_WAL_SIZE": "0",
	"QUERY_MAXIMUM_RESULTS":          "100000",
}

// ClusterSettings are what the cluster tests add to Settings, for
// results that hold when a node dies (see docs/BENCHMARKS.md, Weaviate):
// asynchronous indexing flushes the HNSW commit log after every indexed
// batch — without it the log's buffered tail is lost when a node is
// killed, and the node comes back with its last vectors missing from its
// graph; and the exhaustive BM25 searcher — the default BlockMax WAND
// searcher of 1.35.2 drops a clearly qualifying document from a few
// queries' top 10 depending on the segment layout.
var ClusterSettings = map[string]string{
	"ASYNC_INDEXING":          "true",
	"USE_INVERTED_SEARCHABLE": "false",
}

// Options tune the nodes a test starts; the zero value is what the tests
// need.
type Options struct {
	// Env adds or overrides environment variables of every node.
	Env map[string]string
}

// Start runs one node (a one-voter raft cluster) and waits until it is
// ready. The test's cleanup stops it and prints its log when the test
// failed.
func Start(tb testing.TB, opt Options) *Node {
	tb.Helper()
	return StartCluster(tb, 1, opt)[0]
}

// StartCluster runs n nodes that form one cluster (RAFT_BOOTSTRAP_EXPECT=n,
// every node a voter) and waits until all are ready.
func StartCluster(tb testing.TB, n int, opt Options) []*Node {
	tb.Helper()
	bin := Binary(tb)
	var lastErr error
	// Free ports are found by binding and releasing them; another process
	// may take one before the server binds it, so a failed start is retried
	// on new ports.
	for attempt := 0; attempt < 3; attempt++ {
		nodes, err := startCluster(tb, bin, n, opt)
		if err == nil {
			return nodes
		}
		lastErr = err
		if !strings.Contains(err.Error(), "address already in use") {
			break
		}
	}
	tb.Fatal(lastErr)
	return nil
}

func startCluster(tb testing.TB, bin string, n int, opt Options) ([]*Node, error) {
	ports, err := freePorts(n)
	if err != nil {
		return nil, err
	}
	nodes := make([]*Node, n)
	var raftJoin, gossipJoin []string
	for i := range nodes {
		p := ports[i]
		nodes[i] = &Node{
			Name: fmt.Sprintf("r2med-node-%d", i+1),
			HTTP: p[0], GRPC: p[1], Gossip: p[2], Data: p[2] + 1, Raft: p[3], RaftRPC: p[3] + 1,
			Dir: tb.TempDir(),
			bin: bin, tb: tb, log: &logBuffer{},
		}
		raftJoin = append(raftJoin, fmt.Sprintf("%s:%d", nodes[i].Name, nodes[i].Raft))
		gossipJoin = append(gossipJoin, fmt.Sprintf("127.0.0.1:%d", nodes[i].Gossip))
	}
	for _, nd := range nodes {
		env := map[string]string{
			"PERSISTENCE_DATA_PATH": nd.Dir,
			"CLUSTER_HOSTNAME":      nd.Name,
			// Several nodes on one host: raft ports come from RAFT_JOIN and
			// each node's raft RPC port is its raft port + 1.
			"CLUSTER_GOSSIP_BIND_PORT": strconv.Itoa(nd.Gossip),
			"CLUSTER_DATA_BIND_PORT":   strconv.Itoa(nd.Data),
			"RAFT_PORT":                strconv.Itoa(nd.Raft),
			"RAFT_INTERNAL_RPC_PORT":   strconv.Itoa(nd.RaftRPC),
			"RAFT_JOIN":                strings.Join(raftJoin, ","),
			"RAFT_BOOTSTRAP_EXPECT":    strconv.Itoa(n),
			"GRPC_PORT":                strconv.Itoa(nd.GRPC),
		}
		for k, v := range Settings {
			env[k] = v
		}
		if n > 1 {
			env["CLUSTER_JOIN"] = strings.Join(gossipJoin, ",")
		}
		for k, v := range opt.Env {
			env[k] = v
		}
		nd.env = append(os.Environ(), flatten(env)...)
	}
	tb.Cleanup(func() {
		var wg sync.WaitGroup
		for _, nd := range nodes {
			wg.Add(1)
			go func() { defer wg.Done(); nd.Stop() }()
		}
		wg.Wait()
		if tb.Failed() {
			for _, nd := range nodes {
				tb.Logf("weaviate-server %s log (tail):\n%s", nd.Name, nd.log.Tail(8000))
			}
		}
	})
	for _, nd := range nodes {
		if err := nd.start(); err != nil {
			return nil, err
		}
	}
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i, nd := range nodes {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = nd.WaitReady(context.Background()) }()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		for _, nd := range nodes {
			nd.Kill()
		}
		return nil, err
	}
	return nodes, nil
}

func flatten(env map[string]string) []string {
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	return out
}

// freePorts finds, for each of n nodes, four free loopback ports: REST,
// gRPC, and two bases of consecutive pairs (gossip/data, raft/raft RPC).
// All are held open until every one is found, so none repeats.
func freePorts(n int) ([][4]int, error) {
	var held []net.Listener
	defer func() {
		for _, l := range held {
			l.Close()
		}
	}()
	listen := func(port int) (int, bool) {
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			return 0, false
		}
		held = append(held, l)
		return l.Addr().(*net.TCPAddr).Port, true
	}
	single := func() (int, error) {
		p, ok := listen(0)
		if !ok {
			return 0, errors.New("no free loopback port")
		}
		return p, nil
	}
	pair := func() (int, error) {
		for range 50 {
			p, ok := listen(0)
			if !ok {
				break
			}
			if p < 65535 {
				if _, ok := listen(p + 1); ok {
					return p, nil
				}
			}
		}
		return 0, errors.New("no two consecutive free loopback ports")
	}
	out := make([][4]int, n)
	for i := range out {
		var err error
		for j, f := range []func() (int, error){single, single, pair, pair} {
			if out[i][j], err = f(); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// logBuffer keeps a process's output, bounded to its last 4 MB.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

const logLimit = 4 << 20

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf.Write(p)
	if b.buf.Len() > logLimit {
		b.buf.Next(b.buf.Len() - logLimit/2)
	}
	return len(p), nil
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Tail returns the last n bytes, starting at a line.
func (b *logBuffer) Tail(n int) string {
	s := b.String()
	if len(s) <= n {
		return s
	}
	s = s[len(s)-n:]
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return "…\n" + s
}
