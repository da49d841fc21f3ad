// Package hubtest runs a fake Hugging Face Hub on the loopback interface,
// for tests of code that downloads from the Hub, as net/http/httptest does
// for HTTP servers. Point a hub.Client (or HF_ENDPOINT) at Server.URL.
//
// The fake imitates the parts of huggingface.co that huggingface_hub and
// package hub use:
//
//   - GET /api/{datasets,models}/OWNER/NAME/revision/REV[?blobs=true]: the
//     commit a branch, tag or commit names and its files, with sizes, git
//     blob ids and LFS object ids when blobs=true;
//   - HEAD and GET /[datasets/]OWNER/NAME/resolve/REV/PATH: files kept in
//     git are served from the Hub itself (ETag: the git blob id), LFS files
//     are a 302 to a second server standing in for the CDN, with the
//     X-Linked-Etag (the sha256) and X-Linked-Size headers the real Hub
//     sends, and X-Repo-Commit on every answer;
//   - errors as the Hub words them, with X-Error-Code (RepoNotFound,
//     RevisionNotFound, EntryNotFound, GatedRepo), private repositories
//     looking unknown to a client without the token, gated repositories
//     refusing downloads, renamed repositories answering /resolve/ with a
//     relative redirect, and Range requests everywhere.
//
// Every request is recorded (Records, Count, Requests), and methods inject
// the failures a download client must survive: cut or corrupted transfers,
// 503s, servers that ignore Range, slow or held transfers, and restarts
// (Restart, Down, Up: connections refused for a while, then served again
// on the same addresses).
package hubtest

import (
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"
)

// ValidToken is the one token the server accepts for private and gated
// repositories.
const ValidToken = "hf_ValidTokenForTests0123456789"

// LFSThreshold is the size from which AddRepo stores a text file in LFS.
// Smaller text files are kept in git; binary files always go to LFS, as the
// Hub's default .gitattributes sends parquet, arrow and model weights there.
const LFSThreshold = 10 << 10

// The two hosts, as Request.Server names them.
const (
	Hub = "hub" // the Hub's API and /resolve/
	CDN = "cdn" // where LFS downloads are redirected
)

// Request is one request the server received.
type Request struct {
	Server string // Hub or CDN
	Method string
	Path   string // escaped, without the query
	Range  string // the Range header
	Auth   string // the Authorization header
}

// File is a file of a commit.
type File struct {
	Path    string
	Content []byte
	// LFS serves the file through the CDN; its ETag is then the content's
	// sha256 and the API lists the git blob id of its LFS pointer.
	LFS bool
	// Ghost files are listed by the API but answer 404 EntryNotFound
	// behind /resolve/, as a file deleted between the two requests does.
	Ghost bool
}

// GitBlobID is the id git gives content: sha1("blob LEN\x00" + content).
func GitBlobID(content []byte) string {
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", len(content))
	h.Write(content)
	return hex.EncodeToString(h.Sum(nil))
}

// SHA256 is the hex sha256 of content, an LFS object's id.
func SHA256(content []byte) string {
	s := sha256.Sum256(content)
	return hex.EncodeToString(s[:])
}

// Pointer is the LFS pointer file git stores in place of an LFS file.
func (f File) Pointer() []byte {
	return fmt.Appendf(nil, "version https://git-lfs.github.com/spec/v1\noid sha256:%s\nsize %d\n", SHA256(f.Content), len(f.Content))
}

// ETag is what the Hub reports for the file and the name of its blob in a
// huggingface_hub cache: the sha256 for LFS files, else the git blob id.
func (f File) ETag() string {
	if f.LFS {
		return SHA256(f.Content)
	}
	return GitBlobID(f.Content)
}

// BlobID is the git blob id the API lists: for an LFS file, its pointer's.
func (f File) BlobID() string {
	if f.LFS {
		return GitBlobID(f.Pointer())
	}
	return GitBlobID(f.Content)
}

// Access is who may read a repository.
type Access struct {
	// Private repositories answer as unknown ones to a request without
	// ValidToken.
	Private bool
	// Gated repositories list their files to anyone but serve them only to
	// ValidToken, and only once Accepted (the token's account accepted the
	// repository's terms).
	Gated, Accepted bool
}

type repo struct {
	key     string // "datasets/OWNER/NAME"
	id      string // "OWNER/NAME"
	refs    map[string]string
	commits map[string][]File
	access  Access
}

// Server is a fake Hub and its CDN. Its methods are safe for concurrent use.
type Server struct {
	t            testing.TB
	hub, cdn     *httptest.Server
	hubLn, cdnLn *switchListener

	mu      sync.Mutex
	repos   map[string]*repo  // by key
	aliases map[string]string // old key → current key
	log     []Request

	// failure injection, the per-blob ones keyed by ETag
	cutFirst  map[string]int64
	restart   map[string]restartAt
	corrupt   map[string]int
	hold      map[string]chan struct{}
	failAPI   int
	lfsViaHub bool
	noRange   bool
	delay     time.Duration

	requests atomic.Int64
	inflight atomic.Int64
	maxIn    atomic.Int64
}

// NewServer starts a fake Hub with no repositories; it is closed when the
// test ends.
func NewServer(t testing.TB) *Server {
	s := &Server{
		t:        t,
		repos:    map[string]*repo{},
		aliases:  map[string]string{},
		cutFirst: map[string]int64{},
		restart:  map[string]restartAt{},
		corrupt:  map[string]int{},
		hold:     map[string]chan struct{}{},
	}
	s.hub, s.hubLn = startSwitchable(s.record(Hub, s.serveHub))
	s.cdn, s.cdnLn = startSwitchable(s.record(CDN, s.serveCDN))
	t.Cleanup(s.Close)
	return s
}

// startSwitchable starts a test server whose listener can be taken down
// and brought back on the same address (Restart).
func startSwitchable(h http.Handler) (*httptest.Server, *switchListener) {
	srv := httptest.NewUnstartedServer(h)
	ln := &switchListener{ln: srv.Listener, addr: srv.Listener.Addr().String(), up: make(chan struct{}), conns: map[net.Conn]struct{}{}}
	close(ln.up)
	srv.Listener = ln
	srv.Start()
	return srv, ln
}

// switchListener is a listener that can go down (its socket closed, so
// connections are refused, and every open connection dropped) and come
// back on the same address, as a restarted server does. While it is down
// Accept waits instead of failing, so the http.Server keeps serving.
type switchListener struct {
	addr   string
	mu     sync.Mutex
	ln     net.Listener // nil while down
	up     chan struct{}
	closed bool
	conns  map[net.Conn]struct{}
}

func (l *switchListener) Accept() (net.Conn, error) {
	for {
		l.mu.Lock()
		ln, up, closed := l.ln, l.up, l.closed
		l.mu.Unlock()
		if closed {
			return nil, net.ErrClosed
		}
		if ln == nil {
			<-up
			continue
		}
		c, err := ln.Accept()
		l.mu.Lock()
		if err != nil {
			current := l.ln == ln && !l.closed
			l.mu.Unlock()
			if current {
				return nil, err
			}
			continue // taken down (or closed): look again
		}
		tc := &trackedConn{Conn: c, l: l}
		l.conns[tc] = struct{}{}
		l.mu.Unlock()
		return tc, nil
	}
}

func (l *switchListener) Addr() net.Addr {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ln != nil {
		return l.ln.Addr()
	}
	a, _ := net.ResolveTCPAddr("tcp", l.addr)
	return a
}

func (l *switchListener) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	l.closed = true
	if l.ln == nil {
		close(l.up)
		return nil
	}
	return l.ln.Close()
}

// down closes the socket and drops every connection.
func (l *switchListener) down() {
	l.mu.Lock()
	ln := l.ln
	if ln == nil || l.closed {
		l.mu.Unlock()
		return
	}
	l.ln = nil
	l.up = make(chan struct{})
	conns := l.conns
	l.conns = map[net.Conn]struct{}{}
	l.mu.Unlock()
	ln.Close()
	for c := range conns {
		c.Close()
	}
}

// back listens on the address again.
func (l *switchListener) back() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed || l.ln != nil {
		return nil
	}
	ln, err := net.Listen("tcp", l.addr)
	if err != nil {
		return err
	}
	l.ln = ln
	close(l.up)
	return nil
}

type trackedConn struct {
	net.Conn
	l *switchListener
}

func (c *trackedConn) Close() error {
	c.l.mu.Lock()
	delete(c.l.conns, c)
	c.l.mu.Unlock()
	return c.Conn.Close()
}

// URL is the Hub's base URL, what HF_ENDPOINT or hub.Client.Endpoint take.
func (s *Server) URL() string { return s.hub.URL }

// Close shuts both servers down, releasing held transfers; later requests
// fail to connect. It may be called more than once.
func (s *Server) Close() {
	s.mu.Lock()
	for etag, ch := range s.hold {
		close(ch)
		delete(s.hold, etag)
	}
	s.mu.Unlock()
	s.hub.Close()
	s.cdn.Close()
}

// RepoOption adjusts AddRepo and AddRepoFiles.
type RepoOption func(*repoOptions)

type repoOptions struct {
	commit string
	refs   []string
}

// Commit gives the new commit this sha (40 lowercase hex digits) instead of
// one derived from the repository and its files, so that a repository can
// be served at a revision pinned elsewhere.
func Commit(sha string) RepoOption { return func(o *repoOptions) { o.commit = sha } }

// Refs points these branches or tags at the new commit, besides "main".
func Refs(names ...string) RepoOption {
	return func(o *repoOptions) { o.refs = append(o.refs, names...) }
}

var commitRE = regexp.MustCompile(`^[0-9a-f]{40}$`)

// AddRepo adds a commit of files (path → content) to a repository, creating
// the repository when needed, points "main" (and any Refs) at it and
// returns it. Earlier commits stay reachable by their sha. id is OWNER/NAME
// for a dataset, or datasets/OWNER/NAME or models/OWNER/NAME.
//
// Text files under LFSThreshold are kept in git; larger or binary ones
// (with a NUL byte, or not UTF-8) in LFS.
func (s *Server) AddRepo(id string, files map[string][]byte, opts ...RepoOption) (commit string) {
	s.t.Helper()
	var list []File
	for p, c := range files {
		list = append(list, File{Path: p, Content: c, LFS: isLFS(c)})
	}
	return s.AddRepoFiles(id, list, opts...)
}

func isLFS(content []byte) bool {
	return len(content) >= LFSThreshold || bytes.IndexByte(content, 0) >= 0 || !utf8.Valid(content)
}

// AddRepoFiles is AddRepo with each file's storage chosen by the caller.
func (s *Server) AddRepoFiles(id string, files []File, opts ...RepoOption) (commit string) {
	s.t.Helper()
	key := s.key(id)
	var o repoOptions
	for _, opt := range opts {
		opt(&o)
	}
	files = slices.Clone(files)
	slices.SortFunc(files, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	for i, f := range files {
		if f.Path == "" || strings.HasPrefix(f.Path, "/") || (i > 0 && files[i-1].Path == f.Path) {
			s.t.Fatalf("hubtest: %s: bad or repeated file path %q", id, f.Path)
		}
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repos[key]
	if r == nil {
		_, rest, _ := strings.Cut(key, "/")
		r = &repo{key: key, id: rest, refs: map[string]string{}, commits: map[string][]File{}}
		s.repos[key] = r
	}
	commit = o.commit
	if commit == "" {
		// Like git, a new commit whatever its tree: its history is part of it.
		h := sha1.New()
		fmt.Fprintf(h, "%s\x00%d\x00", key, len(r.commits))
		for _, f := range files {
			fmt.Fprintf(h, "%s\x00%s\x00", f.Path, f.ETag())
		}
		commit = hex.EncodeToString(h.Sum(nil))
	} else if !commitRE.MatchString(commit) {
		s.t.Fatalf("hubtest: commit %q is not 40 lowercase hex digits", commit)
	}
	r.commits[commit] = files
	for _, ref := range append([]string{"main"}, o.refs...) {
		r.refs[ref] = commit
	}
	return commit
}

// key turns an id into "datasets/OWNER/NAME" or "models/OWNER/NAME".
func (s *Server) key(id string) string {
	s.t.Helper()
	return repoKey(s.t, id)
}

func repoKey(tb testing.TB, id string) string {
	tb.Helper()
	if !strings.HasPrefix(id, "datasets/") && !strings.HasPrefix(id, "models/") {
		id = "datasets/" + id
	}
	if parts := strings.Split(id, "/"); len(parts) != 3 || parts[1] == "" || parts[2] == "" {
		tb.Fatalf("hubtest: repository %q: want OWNER/NAME, datasets/OWNER/NAME or models/OWNER/NAME", id)
	}
	return id
}

func (s *Server) repo(id string) *repo {
	s.t.Helper()
	r := s.repos[s.key(id)]
	if r == nil {
		s.t.Fatalf("hubtest: no repository %q", id)
	}
	return r
}

// SetRef points a branch or tag of a repository at one of its commits.
func (s *Server) SetRef(id, ref, commit string) {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repo(id)
	if _, ok := r.commits[commit]; !ok {
		s.t.Fatalf("hubtest: %s has no commit %s", id, commit)
	}
	r.refs[ref] = commit
}

// SetAccess makes a repository private or gated.
func (s *Server) SetAccess(id string, a Access) {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.repo(id).access = a
}

// Rename gives a repository the new id newID; the old one keeps working as
// on the Hub: /resolve/ answers it with a relative redirect to the new name,
// and the API answers for the repository under either name.
func (s *Server) Rename(oldID, newID string) {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	oldKey, newKey := s.key(oldID), s.key(newID)
	r := s.repo(oldID)
	if _, taken := s.repos[newKey]; taken || strings.Split(oldKey, "/")[0] != strings.Split(newKey, "/")[0] {
		s.t.Fatalf("hubtest: cannot rename %s to %s", oldKey, newKey)
	}
	delete(s.repos, oldKey)
	_, r.id, _ = strings.Cut(newKey, "/")
	r.key = newKey
	s.repos[newKey] = r
	s.aliases[oldKey] = newKey
}

// CutFirst makes the first GET of the blob with this ETag that has no Range
// header stop after n bytes, the connection dropped.
func (s *Server) CutFirst(etag string, n int64) {
	s.mu.Lock()
	s.cutFirst[etag] = n
	s.mu.Unlock()
}

type restartAt struct {
	at   int64
	down time.Duration
}

// Restart makes the first GET of the blob with this ETag that has no Range
// header stop after n bytes, as a server restart does: both servers (Hub
// and CDN) stop listening, so new connections are refused, every open
// connection is dropped, and after down they listen again on the same
// addresses.
func (s *Server) Restart(etag string, n int64, down time.Duration) {
	s.mu.Lock()
	s.restart[etag] = restartAt{n, down}
	s.mu.Unlock()
}

// Down takes both servers down (connections refused, open ones dropped)
// for d, or until Up when d is 0.
func (s *Server) Down(d time.Duration) {
	s.hubLn.down()
	s.cdnLn.down()
	if d > 0 {
		time.AfterFunc(d, s.Up)
	}
}

// Up brings servers taken down by Down or Restart back.
func (s *Server) Up() {
	for _, l := range []*switchListener{s.hubLn, s.cdnLn} {
		if err := l.back(); err != nil {
			s.t.Errorf("hubtest: listening again on %s: %v", l.addr, err)
		}
	}
}

// Corrupt serves the next times GETs of the blob with this ETag with one
// byte flipped.
func (s *Server) Corrupt(etag string, times int) {
	s.mu.Lock()
	s.corrupt[etag] = times
	s.mu.Unlock()
}

// Hold makes every GET of the blob with this ETag send half of it, then wait
// until release is called (or the client goes away) and drop the
// connection.
func (s *Server) Hold(etag string) (release func()) {
	ch := make(chan struct{})
	s.mu.Lock()
	s.hold[etag] = ch
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.hold[etag] == ch {
			close(ch)
			delete(s.hold, etag)
		}
	}
}

// FailAPI answers the next n API requests with 503 Service Unavailable.
func (s *Server) FailAPI(n int) {
	s.mu.Lock()
	s.failAPI = n
	s.mu.Unlock()
}

// LFSViaHub makes LFS redirects point at the Hub itself, which redirects
// GETs on to the CDN, as some mirrors do: a client following redirects
// would carry the token to the CDN.
func (s *Server) LFSViaHub(on bool) {
	s.mu.Lock()
	s.lfsViaHub = on
	s.mu.Unlock()
}

// IgnoreRange answers ranged GETs with the whole body and 200.
func (s *Server) IgnoreRange(on bool) {
	s.mu.Lock()
	s.noRange = on
	s.mu.Unlock()
}

// Delay makes every blob GET wait d before answering, so that overlapping
// downloads can be observed (MaxConcurrentGETs).
func (s *Server) Delay(d time.Duration) {
	s.mu.Lock()
	s.delay = d
	s.mu.Unlock()
}

// Requests is the number of requests received since the start or Reset.
func (s *Server) Requests() int64 { return s.requests.Load() }

// MaxConcurrentGETs is the most blob GETs the servers answered at once.
func (s *Server) MaxConcurrentGETs() int64 { return s.maxIn.Load() }

// Records lists the requests received since the start or Reset, in order.
func (s *Server) Records() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.log)
}

// Reset forgets the requests received so far.
func (s *Server) Reset() {
	s.mu.Lock()
	s.log = nil
	s.mu.Unlock()
	s.requests.Store(0)
}

// Count is the number of recorded requests to server (Hub or CDN) with
// this method whose path contains pathPart ("" for any).
func (s *Server) Count(server, method, pathPart string) int {
	n := 0
	for _, r := range s.Records() {
		if r.Server == server && r.Method == method && strings.Contains(r.Path, pathPart) {
			n++
		}
	}
	return n
}

func (s *Server) record(server string, next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s.requests.Add(1)
		s.mu.Lock()
		s.log = append(s.log, Request{server, r.Method, r.URL.EscapedPath(), r.Header.Get("Range"), r.Header.Get("Authorization")})
		s.mu.Unlock()
		next(w, r)
	}
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	if code != "" {
		w.Header().Set("X-Error-Code", code)
	}
	w.Header().Set("X-Error-Message", msg)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]string{"error": msg})
}

// view is what one request sees of a repository, copied under the lock.
type view struct {
	id      string // the current OWNER/NAME
	renamed bool   // asked for by an old name
	refs    map[string]string
	commits map[string][]File
	access  Access
}

func (v *view) lookup(rev string) (string, []File, bool) {
	commit := rev
	if c, ok := v.refs[rev]; ok {
		commit = c
	}
	files, ok := v.commits[commit]
	return commit, files, ok
}

// access decides as the Hub does: unknown and private repositories look
// the same to someone without a valid token (401 without one, 404 with a
// wrong one).
func (s *Server) access(w http.ResponseWriter, r *http.Request, key string, resolve bool) (*view, bool) {
	s.mu.Lock()
	var v *view
	rp, renamed := s.repos[key], false
	if rp == nil {
		if k, ok := s.aliases[key]; ok {
			rp, renamed = s.repos[k], true
		}
	}
	if rp != nil {
		v = &view{id: rp.id, renamed: renamed, refs: maps.Clone(rp.refs), commits: maps.Clone(rp.commits), access: rp.access}
	}
	s.mu.Unlock()
	auth := r.Header.Get("Authorization")
	valid := auth == "Bearer "+ValidToken
	if v == nil || (v.access.Private && !valid) {
		if auth == "" {
			writeError(w, 401, "RepoNotFound", "Invalid username or password.")
		} else {
			// Some servers echo what they were sent; clients must not.
			writeError(w, 404, "RepoNotFound", "Repository not found for "+auth)
		}
		return nil, false
	}
	if resolve && v.access.Gated && !(valid && v.access.Accepted) {
		status := 401
		if auth != "" {
			status = 403
		}
		writeError(w, status, "GatedRepo", "Access to dataset "+v.id+" is restricted. You must have access to it and be authenticated to access it. Please log in.")
		return nil, false
	}
	return v, true
}

func (s *Server) serveHub(w http.ResponseWriter, r *http.Request) {
	esc := r.URL.EscapedPath()
	if rest, ok := strings.CutPrefix(esc, "/api/"); ok {
		s.serveAPI(w, r, rest)
		return
	}
	if etag, ok := strings.CutPrefix(esc, "/lfs/"); ok {
		w.Header().Set("Location", s.cdn.URL+"/blobs/"+etag)
		w.WriteHeader(http.StatusFound)
		return
	}
	s.serveResolve(w, r, esc)
}

func (s *Server) serveAPI(w http.ResponseWriter, r *http.Request, rest string) {
	s.mu.Lock()
	fail := s.failAPI > 0
	if fail {
		s.failAPI--
	}
	s.mu.Unlock()
	if fail {
		http.Error(w, "upstream unavailable", http.StatusServiceUnavailable)
		return
	}
	parts := strings.SplitN(rest, "/", 5)
	if len(parts) != 5 || parts[3] != "revision" {
		http.NotFound(w, r)
		return
	}
	rev, _ := url.PathUnescape(parts[4])
	v, ok := s.access(w, r, parts[0]+"/"+parts[1]+"/"+parts[2], false)
	if !ok {
		return
	}
	commit, files, ok := v.lookup(rev)
	if !ok {
		writeError(w, 404, "RevisionNotFound", "Invalid rev id: "+rev)
		return
	}
	blobs := r.URL.Query().Get("blobs") == "true"
	type lfsInfo struct {
		SHA256      string `json:"sha256"`
		Size        int    `json:"size"`
		PointerSize int    `json:"pointerSize"`
	}
	type sibling struct {
		RFilename string   `json:"rfilename"`
		Size      *int     `json:"size,omitempty"`
		BlobID    string   `json:"blobId,omitempty"`
		LFS       *lfsInfo `json:"lfs,omitempty"`
	}
	var sib []sibling
	for _, f := range files {
		sb := sibling{RFilename: f.Path}
		if blobs {
			n := len(f.Content)
			sb.Size = &n
			sb.BlobID = f.BlobID()
			if f.LFS {
				sb.LFS = &lfsInfo{SHA256: SHA256(f.Content), Size: n, PointerSize: len(f.Pointer())}
			}
		}
		sib = append(sib, sb)
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"id": v.id, "sha": commit, "siblings": sib, "private": v.access.Private})
}

func (s *Server) serveResolve(w http.ResponseWriter, r *http.Request, esc string) {
	kind := "models"
	if rest, ok := strings.CutPrefix(esc, "/datasets/"); ok {
		kind, esc = "datasets", "/"+rest
	}
	parts := strings.SplitN(strings.TrimPrefix(esc, "/"), "/", 5)
	if len(parts) != 5 || parts[2] != "resolve" {
		http.NotFound(w, r)
		return
	}
	rev, _ := url.PathUnescape(parts[3])
	file, _ := url.PathUnescape(parts[4])
	v, ok := s.access(w, r, kind+"/"+parts[0]+"/"+parts[1], true)
	if !ok {
		return
	}
	if v.renamed { // a relative redirect, as the Hub sends
		prefix := "/"
		if kind == "datasets" {
			prefix = "/datasets/"
		}
		w.Header().Set("Location", prefix+v.id+"/resolve/"+parts[3]+"/"+parts[4])
		w.WriteHeader(http.StatusTemporaryRedirect)
		return
	}
	commit, files, ok := v.lookup(rev)
	if !ok {
		writeError(w, 404, "RevisionNotFound", "Invalid rev id: "+rev)
		return
	}
	w.Header().Set("X-Repo-Commit", commit)
	for _, f := range files {
		if f.Path != file || f.Ghost {
			continue
		}
		if f.LFS {
			w.Header().Set("ETag", `"`+f.BlobID()+`"`)
			w.Header().Set("X-Linked-Etag", `"`+f.ETag()+`"`)
			w.Header().Set("X-Linked-Size", fmt.Sprint(len(f.Content)))
			s.mu.Lock()
			viaHub := s.lfsViaHub
			s.mu.Unlock()
			if viaHub {
				w.Header().Set("Location", s.hub.URL+"/lfs/"+f.ETag())
			} else {
				w.Header().Set("Location", s.cdn.URL+"/blobs/"+f.ETag()+"?X-Amz-Signature=s3cr3t&Expires=1")
			}
			w.WriteHeader(http.StatusFound)
			return
		}
		w.Header().Set("ETag", `"`+f.ETag()+`"`)
		s.serveBlob(w, r, f.ETag(), f.Content)
		return
	}
	writeError(w, 404, "EntryNotFound", file+" does not exist on \""+rev+"\"")
}

func (s *Server) serveCDN(w http.ResponseWriter, r *http.Request) {
	etag, ok := strings.CutPrefix(r.URL.Path, "/blobs/")
	if !ok {
		http.NotFound(w, r)
		return
	}
	var content []byte
	s.mu.Lock()
	for _, rp := range s.repos {
		for _, files := range rp.commits {
			for _, f := range files {
				if f.LFS && f.ETag() == etag {
					content = f.Content
				}
			}
		}
	}
	s.mu.Unlock()
	if content == nil {
		http.NotFound(w, r)
		return
	}
	s.serveBlob(w, r, etag, content)
}

// serveBlob serves content with Range support, applying the injected
// failures.
func (s *Server) serveBlob(w http.ResponseWriter, r *http.Request, etag string, content []byte) {
	s.mu.Lock()
	noRange := s.noRange
	s.mu.Unlock()
	if r.Method == http.MethodGet {
		n := s.inflight.Add(1)
		defer s.inflight.Add(-1)
		for {
			m := s.maxIn.Load()
			if n <= m || s.maxIn.CompareAndSwap(m, n) {
				break
			}
		}
		s.mu.Lock()
		delay := s.delay
		cut, doCut := s.cutFirst[etag]
		doCut = doCut && r.Header.Get("Range") == ""
		if doCut {
			delete(s.cutFirst, etag)
		}
		rs, doRestart := s.restart[etag]
		doRestart = doRestart && r.Header.Get("Range") == ""
		if doRestart {
			delete(s.restart, etag)
		}
		hold := s.hold[etag]
		if s.corrupt[etag] > 0 {
			s.corrupt[etag]--
			bad := bytes.Clone(content)
			bad[len(bad)/2] ^= 0xff
			content = bad
		}
		s.mu.Unlock()
		time.Sleep(delay)
		if doRestart {
			w.Header().Set("Content-Length", fmt.Sprint(len(content)))
			w.WriteHeader(http.StatusOK)
			w.Write(content[:rs.at])
			w.(http.Flusher).Flush()
			s.Down(rs.down)
			panic(http.ErrAbortHandler)
		}
		if doCut || hold != nil {
			if !doCut {
				cut = int64(len(content) / 2)
			}
			w.Header().Set("Content-Length", fmt.Sprint(len(content)))
			w.WriteHeader(http.StatusOK)
			w.Write(content[:cut])
			w.(http.Flusher).Flush()
			if hold != nil {
				select {
				case <-hold:
				case <-r.Context().Done():
				}
			}
			panic(http.ErrAbortHandler) // drop the connection mid-body
		}
	}
	if noRange {
		r.Header.Del("Range")
	}
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(content))
}
