package hub

import (
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeHub imitates the parts of huggingface.co that huggingface_hub uses:
// the revision API, HEAD/GET on /resolve/ with LFS files redirected to a
// CDN on another host, and the X-Error-Code headers. Its knobs inject the
// failures the tests need.
type fakeHub struct {
	t        *testing.T
	hub, cdn *httptest.Server
	token    string // the one valid token

	mu    sync.Mutex
	repos map[string]*fakeRepo // by Repo.String(), aliases included
	log   []reqRecord

	// knobs, keyed by the blob's etag
	cutFirst map[string]int64 // first GET without Range stops after N bytes
	corrupt  map[string]int   // serve that many corrupted copies
	hold     map[string]chan struct{}
	fail5xx  int // answer that many API requests with 503
	// lfsViaHub makes LFS locations absolute URLs on the hub itself, which
	// redirect to the CDN only on GET, as some mirrors do.
	lfsViaHub bool
	noRange   bool          // answer ranged GETs with the whole body
	delay     time.Duration // per blob GET, to observe concurrency

	requests atomic.Int64
	inflight atomic.Int64
	maxIn    atomic.Int64
}

type reqRecord struct {
	server, method, path, rng, auth string
}

type fakeRepo struct {
	repo     Repo
	alias    string // canonical id when this entry is an old name
	refs     map[string]string
	commits  map[string][]fakeFile
	private  bool
	gated    bool
	accepted bool // whether the valid token's account accepted the terms
}

type fakeFile struct {
	path    string
	content []byte
	lfs     bool
	ghost   bool // listed by the API but missing behind /resolve/
}

func gitBlobID(b []byte) string {
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", len(b))
	h.Write(b)
	return hex.EncodeToString(h.Sum(nil))
}

func sha256hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func (f fakeFile) pointer() []byte {
	return []byte(fmt.Sprintf("version https://git-lfs.github.com/spec/v1\noid sha256:%s\nsize %d\n", sha256hex(f.content), len(f.content)))
}

// etag is what the Hub reports: the sha256 for LFS files, else the git blob id.
func (f fakeFile) etag() string {
	if f.lfs {
		return sha256hex(f.content)
	}
	return gitBlobID(f.content)
}

func newFakeHub(t *testing.T) *fakeHub {
	h := &fakeHub{
		t:        t,
		token:    "hf_ValidTokenForTests0123456789",
		repos:    map[string]*fakeRepo{},
		cutFirst: map[string]int64{},
		corrupt:  map[string]int{},
		hold:     map[string]chan struct{}{},
	}
	h.hub = httptest.NewServer(h.record("hub", h.serveHub))
	h.cdn = httptest.NewServer(h.record("cdn", h.serveCDN))
	t.Cleanup(h.hub.Close)
	t.Cleanup(h.cdn.Close)
	return h
}

// client is a Client on this fake with its own empty cache and quick retries.
func (h *fakeHub) client(t *testing.T) *Client {
	return &Client{Endpoint: h.hub.URL, CacheDir: t.TempDir(), backoff: time.Millisecond}
}

func commitFor(seed string) string {
	s := sha1.Sum([]byte(seed))
	return hex.EncodeToString(s[:])
}

// addRepo registers a repository whose branch "main" points to one commit
// holding files, and returns that commit.
func (h *fakeHub) addRepo(repo Repo, files ...fakeFile) (*fakeRepo, string) {
	commit := commitFor(repo.String() + "@1")
	r := &fakeRepo{repo: repo, refs: map[string]string{"main": commit, "v1.0": commit}, commits: map[string][]fakeFile{commit: files}}
	h.mu.Lock()
	h.repos[repo.String()] = r
	h.mu.Unlock()
	return r, commit
}

func (h *fakeHub) record(server string, next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		h.requests.Add(1)
		h.mu.Lock()
		h.log = append(h.log, reqRecord{server, r.Method, r.URL.EscapedPath(), r.Header.Get("Range"), r.Header.Get("Authorization")})
		h.mu.Unlock()
		next(w, r)
	}
}

func (h *fakeHub) records() []reqRecord {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]reqRecord(nil), h.log...)
}

func (h *fakeHub) reset() {
	h.mu.Lock()
	h.log = nil
	h.mu.Unlock()
	h.requests.Store(0)
}

func (h *fakeHub) count(server, method, pathPart string) int {
	n := 0
	for _, r := range h.records() {
		if r.server == server && r.method == method && strings.Contains(r.path, pathPart) {
			n++
		}
	}
	return n
}

func writeHubError(w http.ResponseWriter, status int, code, msg string) {
	if code != "" {
		w.Header().Set("X-Error-Code", code)
	}
	w.Header().Set("X-Error-Message", msg)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]string{"error": msg})
}

// access decides as the Hub does: unknown and private repositories look
// the same to someone without a valid token (401 without one, 404 with a
// wrong one).
func (h *fakeHub) access(w http.ResponseWriter, r *http.Request, id string, resolve bool) (*fakeRepo, bool) {
	h.mu.Lock()
	repo := h.repos[id]
	h.mu.Unlock()
	auth := r.Header.Get("Authorization")
	valid := auth == "Bearer "+h.token
	if repo == nil || (repo.private && !valid) {
		if auth == "" {
			writeHubError(w, 401, "RepoNotFound", "Invalid username or password.")
		} else {
			// Some servers echo what they were sent; the client must not.
			writeHubError(w, 404, "RepoNotFound", "Repository not found for "+auth)
		}
		return nil, false
	}
	if resolve && repo.gated && !(valid && repo.accepted) {
		status := 401
		if auth != "" {
			status = 403
		}
		writeHubError(w, status, "GatedRepo", "Access to dataset "+repo.repo.ID+" is restricted. You must have access to it and be authenticated to access it. Please log in.")
		return nil, false
	}
	return repo, true
}

func (h *fakeHub) serveHub(w http.ResponseWriter, r *http.Request) {
	esc := r.URL.EscapedPath()
	if rest, ok := strings.CutPrefix(esc, "/api/"); ok {
		h.serveAPI(w, r, rest)
		return
	}
	if etag, ok := strings.CutPrefix(esc, "/lfs/"); ok {
		w.Header().Set("Location", h.cdn.URL+"/blobs/"+etag)
		w.WriteHeader(http.StatusFound)
		return
	}
	h.serveResolve(w, r, esc)
}

func (h *fakeHub) serveAPI(w http.ResponseWriter, r *http.Request, rest string) {
	h.mu.Lock()
	fail := h.fail5xx > 0
	if fail {
		h.fail5xx--
	}
	h.mu.Unlock()
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
	repo, ok := h.access(w, r, parts[0]+"/"+parts[1]+"/"+parts[2], false)
	if !ok {
		return
	}
	commit, files, ok := repo.lookup(rev)
	if !ok {
		writeHubError(w, 404, "RevisionNotFound", "Invalid rev id: "+rev)
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
		s := sibling{RFilename: f.path}
		if blobs {
			n := len(f.content)
			s.Size = &n
			s.BlobID = gitBlobID(f.content)
			if f.lfs {
				p := f.pointer()
				s.BlobID = gitBlobID(p)
				s.LFS = &lfsInfo{SHA256: sha256hex(f.content), Size: n, PointerSize: len(p)}
			}
		}
		sib = append(sib, s)
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"id": repo.repo.ID, "sha": commit, "siblings": sib, "private": repo.private})
}

func (r *fakeRepo) lookup(rev string) (string, []fakeFile, bool) {
	commit := rev
	if c, ok := r.refs[rev]; ok {
		commit = c
	}
	files, ok := r.commits[commit]
	return commit, files, ok
}

func (h *fakeHub) serveResolve(w http.ResponseWriter, r *http.Request, esc string) {
	kind := "models"
	if rest, ok := strings.CutPrefix(esc, "/datasets/"); ok {
		kind, esc = "datasets", "/"+rest
	}
	parts := strings.SplitN(strings.TrimPrefix(esc, "/"), "/", 5)
	if len(parts) != 5 || parts[2] != "resolve" {
		http.NotFound(w, r)
		return
	}
	id := kind + "/" + parts[0] + "/" + parts[1]
	rev, _ := url.PathUnescape(parts[3])
	file, _ := url.PathUnescape(parts[4])
	repo, ok := h.access(w, r, id, true)
	if !ok {
		return
	}
	if repo.alias != "" { // a renamed repository: a relative redirect, as the Hub sends
		prefix := "/"
		if kind == "datasets" {
			prefix = "/datasets/"
		}
		w.Header().Set("Location", prefix+repo.alias+"/resolve/"+parts[3]+"/"+parts[4])
		w.WriteHeader(http.StatusTemporaryRedirect)
		return
	}
	commit, files, ok := repo.lookup(rev)
	if !ok {
		writeHubError(w, 404, "RevisionNotFound", "Invalid rev id: "+rev)
		return
	}
	w.Header().Set("X-Repo-Commit", commit)
	for _, f := range files {
		if f.path != file || f.ghost {
			continue
		}
		if f.lfs {
			w.Header().Set("ETag", `"`+gitBlobID(f.pointer())+`"`)
			w.Header().Set("X-Linked-Etag", `"`+f.etag()+`"`)
			w.Header().Set("X-Linked-Size", fmt.Sprint(len(f.content)))
			w.Header().Set("Location", h.cdn.URL+"/blobs/"+f.etag()+"?X-Amz-Signature=s3cr3t&Expires=1")
			if h.lfsViaHub {
				w.Header().Set("Location", h.hub.URL+"/lfs/"+f.etag())
			}
			w.WriteHeader(http.StatusFound)
			return
		}
		w.Header().Set("ETag", `"`+f.etag()+`"`)
		h.serveBlob(w, r, f.etag(), f.content)
		return
	}
	writeHubError(w, 404, "EntryNotFound", file+" does not exist on \""+rev+"\"")
}

func (h *fakeHub) serveCDN(w http.ResponseWriter, r *http.Request) {
	etag, ok := strings.CutPrefix(r.URL.Path, "/blobs/")
	if !ok {
		http.NotFound(w, r)
		return
	}
	h.mu.Lock()
	var content []byte
	for _, repo := range h.repos {
		for _, files := range repo.commits {
			for _, f := range files {
				if f.lfs && f.etag() == etag {
					content = f.content
				}
			}
		}
	}
	h.mu.Unlock()
	if content == nil {
		http.NotFound(w, r)
		return
	}
	h.serveBlob(w, r, etag, content)
}

// serveBlob serves content with Range support, applying the knobs.
func (h *fakeHub) serveBlob(w http.ResponseWriter, r *http.Request, etag string, content []byte) {
	if r.Method == http.MethodGet {
		n := h.inflight.Add(1)
		defer h.inflight.Add(-1)
		for {
			m := h.maxIn.Load()
			if n <= m || h.maxIn.CompareAndSwap(m, n) {
				break
			}
		}
		h.mu.Lock()
		delay := h.delay
		cut, doCut := h.cutFirst[etag]
		doCut = doCut && r.Header.Get("Range") == ""
		if doCut {
			delete(h.cutFirst, etag)
		}
		hold := h.hold[etag]
		if h.corrupt[etag] > 0 {
			h.corrupt[etag]--
			bad := bytes.Clone(content)
			bad[len(bad)/2] ^= 0xff
			content = bad
		}
		h.mu.Unlock()
		time.Sleep(delay)
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
	if h.noRange {
		r.Header.Del("Range")
	}
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(content))
}
