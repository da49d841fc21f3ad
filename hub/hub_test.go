package hub

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/r2med/r2med/hub/hubtest"
	"github.com/r2med/r2med/internal/progress"
)

var bio = Repo{Type: Dataset, ID: "R2MED/Biology"}

// biologyFiles: two files kept in git, three in LFS, one nested two deep.
func biologyFiles() []hubtest.File {
	return []hubtest.File{
		{Path: "README.md", Content: []byte("# Biology\n")},
		{Path: "corpus/corpus.jsonl", Content: bytes.Repeat([]byte(`{"id":"d1","text":"cells"}`+"\n"), 3000), LFS: true},
		{Path: "query/query.jsonl", Content: []byte(`{"id":"0","text":"why?"}` + "\n"), LFS: true},
		{Path: "qrels/qrels.jsonl", Content: []byte(`{"q_id":"0","p_id":"d1","score":1}` + "\n"), LFS: true},
		{Path: "qrels/extra/notes.txt", Content: []byte("notes\n")},
	}
}

// setup serves biologyFiles (and any extra files) at one commit, which
// "main" and the tag "v1.0" name.
func setup(t *testing.T, extra ...hubtest.File) (*hubtest.Server, *Client, string) {
	t.Helper()
	h := hubtest.NewServer(t)
	commit := h.AddRepoFiles(bio.String(), append(biologyFiles(), extra...), hubtest.Refs("v1.0"))
	return h, newClient(t, h), commit
}

// newClient is a Client on h with its own empty cache and quick retries.
func newClient(t *testing.T, h *hubtest.Server) *Client {
	return &Client{Endpoint: h.URL(), CacheDir: t.TempDir(), backoff: time.Millisecond}
}

func readFile(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func checkContents(t *testing.T, s *Snapshot, files []hubtest.File) {
	t.Helper()
	for _, f := range files {
		if !bytes.Equal(readFile(t, s.Path(f.Path)), f.Content) {
			t.Errorf("%s: wrong content", f.Path)
		}
	}
}

func mustErr(t *testing.T, err error, is error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error; want %v", is)
	}
	if is != nil && !errors.Is(err, is) {
		t.Errorf("error %q is not %v", err, is)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("error %q does not mention %q", err, p)
		}
	}
}

func TestResolveBranchToCommit(t *testing.T) {
	h, c, commit := setup(t)
	rev, err := c.Resolve(context.Background(), bio, "main")
	if err != nil {
		t.Fatal(err)
	}
	if rev.Commit != commit {
		t.Fatalf("commit %s, want %s", rev.Commit, commit)
	}
	want := map[string]File{}
	for _, f := range biologyFiles() {
		wf := File{Path: f.Path, Size: int64(len(f.Content)), BlobID: hubtest.GitBlobID(f.Content)}
		if f.LFS {
			wf.BlobID, wf.SHA256 = hubtest.GitBlobID(f.Pointer()), hubtest.SHA256(f.Content)
		}
		want[f.Path] = wf
	}
	if len(rev.Files) != len(want) {
		t.Fatalf("%d files, want %d", len(rev.Files), len(want))
	}
	for i, f := range rev.Files {
		if i > 0 && rev.Files[i-1].Path >= f.Path {
			t.Errorf("files not sorted: %q before %q", rev.Files[i-1].Path, f.Path)
		}
		if f != want[f.Path] {
			t.Errorf("%+v, want %+v", f, want[f.Path])
		}
	}
	if got := h.Count("hub", "GET", "/api/datasets/R2MED/Biology/revision/main"); got != 1 {
		t.Errorf("%d revision requests, want 1", got)
	}

	// A tag resolves too, and Snapshot records the ref as Python does:
	// the bare sha, no newline.
	s, err := c.Snapshot(context.Background(), bio, "v1.0", "README.md")
	if err != nil {
		t.Fatal(err)
	}
	rc, _ := c.repoCache(bio)
	if got := string(readFile(t, filepath.Join(rc.dir, "refs", "v1.0"))); got != commit {
		t.Errorf("refs/v1.0 = %q, want %q", got, commit)
	}
	if s.Commit != commit || s.Dir != filepath.Join(rc.dir, "snapshots", commit) {
		t.Errorf("snapshot %+v", s)
	}
	// A commit needs no ref.
	if _, err := c.Snapshot(context.Background(), bio, commit, "README.md"); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(filepath.Join(rc.dir, "refs")); len(ents) != 1 {
		t.Errorf("refs/ holds %d entries, want only v1.0", len(ents))
	}
}

func TestRevisionWithSlash(t *testing.T) {
	h, c, commit := setup(t)
	h.SetRef(bio.String(), "refs/convert/parquet", commit)
	_, rev, err := ParseURI("hf://datasets/R2MED/Biology@refs%2Fconvert%2Fparquet")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Snapshot(context.Background(), bio, rev, "README.md"); err != nil {
		t.Fatal(err)
	}
	if h.Count("hub", "GET", "/revision/refs%2Fconvert%2Fparquet") != 1 {
		t.Errorf("revision not escaped in the API path: %+v", h.Records())
	}
	rc, _ := c.repoCache(bio)
	if got := string(readFile(t, filepath.Join(rc.dir, "refs", "refs", "convert", "parquet"))); got != commit {
		t.Errorf("nested ref = %q", got)
	}
}

// The cache must be the one huggingface_hub writes, file for file.
func TestCacheLayoutMatchesPython(t *testing.T) {
	_, c, commit := setup(t)
	s, err := c.Snapshot(context.Background(), bio, "main")
	if err != nil {
		t.Fatal(err)
	}
	root, _ := c.cacheRoot()
	repoDir := filepath.Join(root, "datasets--R2MED--Biology")
	for _, f := range biologyFiles() {
		ptr := filepath.Join(repoDir, "snapshots", commit, filepath.FromSlash(f.Path))
		target, err := os.Readlink(ptr)
		if err != nil {
			t.Fatalf("%s is not a symlink: %v", f.Path, err)
		}
		up := strings.Repeat("../", strings.Count(f.Path, "/")+2)
		if want := up + "blobs/" + f.ETag(); target != want {
			t.Errorf("%s -> %s, want %s", f.Path, target, want)
		}
		if !bytes.Equal(readFile(t, filepath.Join(repoDir, "blobs", f.ETag())), f.Content) {
			t.Errorf("blob of %s has the wrong content", f.Path)
		}
		if _, err := os.Stat(filepath.Join(root, ".locks", "datasets--R2MED--Biology", f.ETag()+".lock")); err != nil {
			t.Errorf("no Python-compatible lock file for %s: %v", f.Path, err)
		}
	}
	if got := string(readFile(t, filepath.Join(repoDir, "refs", "main"))); got != commit {
		t.Errorf("refs/main = %q", got)
	}
	leftovers, _ := filepath.Glob(filepath.Join(repoDir, "blobs", "*.incomplete"))
	if len(leftovers) > 0 {
		t.Errorf("left behind: %v", leftovers)
	}
	if len(s.Files) != len(biologyFiles()) {
		t.Errorf("%d files in the snapshot", len(s.Files))
	}
	checkContents(t, s, biologyFiles())
}

func TestRedirectsAndToken(t *testing.T) {
	h, c, _ := setup(t)
	c.Token = hubtest.ValidToken
	s, err := c.Snapshot(context.Background(), bio, "main", "corpus/corpus.jsonl", "README.md")
	if err != nil {
		t.Fatal(err)
	}
	checkContents(t, s, biologyFiles()[:2])
	var cdnGets, hubHeads, hubGets int
	for _, r := range h.Records() {
		switch {
		case r.Server == "cdn":
			if r.Auth != "" {
				t.Errorf("token sent to the CDN: %+v", r)
			}
			if r.Method == "GET" {
				cdnGets++
			}
		case r.Auth != "Bearer "+hubtest.ValidToken:
			t.Errorf("hub request without the token: %+v", r)
		case r.Method == "HEAD":
			hubHeads++
		case strings.Contains(r.Path, "/resolve/"):
			hubGets++
		}
	}
	// The LFS file: HEAD (not following the CDN redirect), then GET on the
	// CDN location directly; the git file: HEAD and GET on the hub.
	if cdnGets != 1 || hubHeads != 2 || hubGets != 1 {
		t.Errorf("cdn GETs %d, hub HEADs %d, hub resolve GETs %d; log %+v", cdnGets, hubHeads, hubGets, h.Records())
	}
}

// Go's client would forward the token across this redirect (it ignores
// ports, and lets huggingface.co's token reach cdn-lfs.huggingface.co).
func TestTokenStrippedWhenGETRedirectsAway(t *testing.T) {
	h, c, _ := setup(t)
	c.Token = hubtest.ValidToken
	h.LFSViaHub(true)
	s, err := c.Snapshot(context.Background(), bio, "main", "corpus/corpus.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	checkContents(t, s, biologyFiles()[1:2])
	if h.Count("hub", "GET", "/lfs/") != 1 || h.Count("cdn", "GET", "/blobs/") != 1 {
		t.Fatalf("redirect not exercised: %+v", h.Records())
	}
	for _, r := range h.Records() {
		if (r.Server == "cdn") == (r.Auth != "") {
			t.Errorf("token sent to the wrong place or missing: %+v", r)
		}
	}
}

func TestRenamedRepoRelativeRedirect(t *testing.T) {
	h := hubtest.NewServer(t)
	old := Repo{Type: Dataset, ID: "R2MED/Biology-old"}
	h.AddRepoFiles(old.String(), biologyFiles())
	h.Rename(old.String(), bio.String())
	c := newClient(t, h)
	s, err := c.Snapshot(context.Background(), old, "main", "README.md", "query/query.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	checkContents(t, s, []hubtest.File{biologyFiles()[0], biologyFiles()[2]})
	if h.Count("hub", "HEAD", "/datasets/R2MED/Biology-old/resolve/") != 2 || h.Count("hub", "HEAD", "/datasets/R2MED/Biology/resolve/") != 2 {
		t.Errorf("relative redirects not followed by HEAD: %+v", h.Records())
	}
	if !strings.Contains(s.Dir, "datasets--R2MED--Biology-old") {
		t.Errorf("cached under %s, want the name asked for, as Python does", s.Dir)
	}
}

func TestResumeAfterCut(t *testing.T) {
	h, c, _ := setup(t)
	corpus := biologyFiles()[1]
	const cut = 1000
	h.CutFirst(corpus.ETag(), cut)
	s, err := c.Snapshot(context.Background(), bio, "main", corpus.Path)
	if err != nil {
		t.Fatal(err)
	}
	checkContents(t, s, []hubtest.File{corpus})
	var ranges []string
	for _, r := range h.Records() {
		if r.Server == "cdn" {
			ranges = append(ranges, r.Range)
		}
	}
	if want := []string{"", fmt.Sprintf("bytes=%d-", cut)}; fmt.Sprint(ranges) != fmt.Sprint(want) {
		t.Errorf("CDN GET ranges %q, want %q", ranges, want)
	}
}

func TestResumeIncompleteFromEarlierRun(t *testing.T) {
	h, c, _ := setup(t)
	corpus := biologyFiles()[1]
	rc, _ := c.repoCache(bio)
	inc := rc.blob(corpus.ETag()) + ".incomplete"
	if err := os.MkdirAll(filepath.Dir(inc), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(inc, corpus.Content[:777], 0o644); err != nil {
		t.Fatal(err)
	}
	var bar bytes.Buffer
	c.Progress = progress.Factory{Out: &bar, Enabled: true}
	s, err := c.Snapshot(context.Background(), bio, "main", corpus.Path)
	if err != nil {
		t.Fatal(err)
	}
	checkContents(t, s, []hubtest.File{corpus})
	recs := h.Records()
	last := recs[len(recs)-1]
	if last.Server != "cdn" || last.Range != "bytes=777-" || h.Count("cdn", "GET", "") != 1 {
		t.Errorf("want one ranged GET from byte 777, got %+v", recs)
	}
	if _, err := os.Stat(inc); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf(".incomplete still there: %v", err)
	}
	// The 777 bytes on disk show as resumed, not as transferred.
	if b := bar.String(); !strings.Contains(b, "corpus/corpus.jsonl (777 B/") || !strings.Contains(b, "777 B resumed") {
		t.Errorf("the bar does not start at the 777 bytes on disk as resumed:\n%q", b)
	}
}

func TestCorruptedDownload(t *testing.T) {
	for _, tc := range []struct {
		name string
		file hubtest.File
		hash string
	}{
		{"lfs sha256", biologyFiles()[1], "sha256"},
		{"git blob id", biologyFiles()[0], "git blob id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, c, _ := setup(t)
			server := "cdn"
			if !tc.file.LFS {
				server = "hub"
			}

			h.Corrupt(tc.file.ETag(), 1) // once: the retry heals it
			s, err := c.Snapshot(context.Background(), bio, "main", tc.file.Path)
			if err != nil {
				t.Fatal(err)
			}
			checkContents(t, s, []hubtest.File{tc.file})
			if n := h.Count(server, "GET", "/"+tc.file.ETag()); server == "cdn" && n != 2 {
				t.Errorf("%d GETs, want 2", n)
			}
			if n := h.Count(server, "GET", "/resolve/"); server == "hub" && n != 2 {
				t.Errorf("%d GETs, want 2", n)
			}

			h2, c2, commit := setup(t)
			h2.Corrupt(tc.file.ETag(), 2)
			_, err = c2.Snapshot(context.Background(), bio, "main", tc.file.Path)
			mustErr(t, err, ErrCorrupt, tc.file.Path, tc.hash, "deleted")
			if n := h2.Count(server, "GET", "/"+tc.file.ETag()) + h2.Count(server, "GET", "/resolve/"); n != 2 {
				t.Errorf("%d GETs, want exactly one retry", n)
			}
			rc, _ := c2.repoCache(bio)
			if left, _ := filepath.Glob(filepath.Join(rc.dir, "blobs", "*")); len(left) != 0 {
				t.Errorf("corrupted data left in the cache: %v", left)
			}
			if _, err := os.Lstat(rc.pointer(commit, tc.file.Path)); err == nil {
				t.Error("snapshot entry created for a corrupted file")
			}
		})
	}
}

func TestUnauthorized(t *testing.T) {
	h, c, _ := setup(t)
	h.SetAccess(bio.String(), hubtest.Access{Private: true})
	ctx := context.Background()

	_, err := c.Snapshot(ctx, bio, "main")
	mustErr(t, err, ErrUnauthorized, "HF_TOKEN is not set", "datasets/R2MED/Biology", h.URL()+"/datasets/R2MED/Biology")
	if !errors.Is(err, ErrRepoNotFound) {
		t.Errorf("a 401 RepoNotFound should also be ErrRepoNotFound: %v", err)
	}

	c.Token = "hf_WrongTokenWrongToken"
	_, err = c.Snapshot(ctx, bio, "main")
	mustErr(t, err, ErrRepoNotFound, "HF_TOKEN")

	c.Token = hubtest.ValidToken
	if _, err := c.Snapshot(ctx, bio, "main", "README.md"); err != nil {
		t.Fatalf("with the right token: %v", err)
	}
}

func TestGated(t *testing.T) {
	h, c, _ := setup(t)
	h.SetAccess(bio.String(), hubtest.Access{Gated: true})
	c.Token = hubtest.ValidToken
	_, err := c.Snapshot(context.Background(), bio, "main", "README.md")
	mustErr(t, err, ErrGated, "accept its terms at "+h.URL()+"/datasets/R2MED/Biology", "HF_TOKEN", "HTTP 403")

	h.SetAccess(bio.String(), hubtest.Access{Gated: true, Accepted: true})
	if _, err := c.Snapshot(context.Background(), bio, "main", "README.md"); err != nil {
		t.Fatalf("after accepting: %v", err)
	}
}

func TestNotFound(t *testing.T) {
	_, c, _ := setup(t, hubtest.File{Path: "ghost.txt", Content: []byte("boo"), Ghost: true})
	ctx := context.Background()
	c.Token = hubtest.ValidToken

	_, err := c.Snapshot(ctx, Repo{Type: Dataset, ID: "R2MED/Nope"}, "main")
	mustErr(t, err, ErrRepoNotFound, "datasets/R2MED/Nope", "not found")
	if errors.Is(err, ErrRevisionNotFound) {
		t.Error("repo error classed as revision error")
	}

	_, err = c.Snapshot(ctx, bio, "no-such-branch")
	mustErr(t, err, ErrRevisionNotFound, `"no-such-branch"`)
	if errors.Is(err, ErrRepoNotFound) {
		t.Error("revision error classed as repo error")
	}

	// Known from the listing: no request beyond it.
	_, err = c.Snapshot(ctx, bio, "main", "corpus.jsonl")
	mustErr(t, err, ErrEntryNotFound, `"corpus.jsonl"`)
	_, err = c.Snapshot(ctx, bio, "main", "*.parquet")
	mustErr(t, err, ErrEntryNotFound, "*.parquet")

	// Listed, but the Hub says 404 EntryNotFound behind /resolve/.
	_, err = c.Snapshot(ctx, bio, "main", "ghost.txt")
	mustErr(t, err, ErrEntryNotFound, `"ghost.txt"`)
}

func TestErrorIsFirstFailingFileInPathOrder(t *testing.T) {
	var ghosts []hubtest.File
	for _, name := range []string{"a-ghost.txt", "b-ghost.txt", "c-ghost.txt"} {
		ghosts = append(ghosts, hubtest.File{Path: name, Content: []byte(name), Ghost: true})
	}
	_, c, _ := setup(t, ghosts...)
	for range 5 {
		_, err := c.Snapshot(context.Background(), bio, "main")
		mustErr(t, err, ErrEntryNotFound, `"a-ghost.txt"`)
	}
}

func TestServerErrorsAreRetried(t *testing.T) {
	h, c, _ := setup(t)
	h.FailAPI(2)
	if _, err := c.Snapshot(context.Background(), bio, "main", "README.md"); err != nil {
		t.Fatal(err)
	}
	if n := h.Count("hub", "GET", "/api/"); n != 3 {
		t.Errorf("%d API requests, want 3", n)
	}

	h2, c2, _ := setup(t)
	h2.FailAPI(1000)
	_, err := c2.Snapshot(context.Background(), bio, "main", "README.md")
	mustErr(t, err, nil, "HTTP 503", "gave up after 6 attempts")
	if n := h2.Count("hub", "GET", "/api/"); n != 1+maxRetries {
		t.Errorf("%d API requests, want %d", n, 1+maxRetries)
	}
}

func TestUnreachable(t *testing.T) {
	dead := httptest.NewServer(nil)
	url := dead.URL
	dead.Close()
	c := &Client{Endpoint: url, CacheDir: t.TempDir(), backoff: time.Millisecond}
	_, err := c.Snapshot(context.Background(), bio, "main")
	mustErr(t, err, ErrUnreachable, "cannot reach "+url+":", "HF_HUB_OFFLINE=1", "HF_ENDPOINT")
}

func TestTokenNeverInErrorsOrPrints(t *testing.T) {
	const secret = "hf_SuperSecretToken0123456789"
	h, c, _ := setup(t)
	c.Token = secret
	ctx := context.Background()
	var errs []error

	// The fake echoes the Authorization header in its 404 message.
	_, err := c.Snapshot(ctx, Repo{Type: Dataset, ID: "R2MED/Nope"}, "main")
	errs = append(errs, err)
	h.SetAccess(bio.String(), hubtest.Access{Gated: true})
	_, err = c.Snapshot(ctx, bio, "main")
	errs = append(errs, err)

	dead := httptest.NewServer(nil)
	dead.Close()
	c2 := &Client{Endpoint: dead.URL, Token: secret, CacheDir: t.TempDir()}
	_, err = c2.Snapshot(ctx, bio, "main")
	errs = append(errs, err)
	c2.Offline = true
	_, err = c2.Snapshot(ctx, bio, "main")
	errs = append(errs, err)

	for i, err := range errs {
		if err == nil {
			t.Fatalf("case %d: no error", i)
		}
		if strings.Contains(err.Error(), secret) || strings.Contains(fmt.Sprintf("%+v %#v", err, err), secret) {
			t.Errorf("case %d: token in error %q", i, err)
		}
	}
	if !strings.Contains(errs[0].Error(), "[token]") {
		t.Errorf("the server's echo should be kept, redacted: %q", errs[0])
	}
	for _, s := range []string{fmt.Sprint(c), fmt.Sprintf("%v %+v %#v %s", *c, *c, *c, c), fmt.Sprintf("%+v", struct{ C *Client }{c})} {
		if strings.Contains(s, secret) {
			t.Errorf("token printed: %s", s)
		}
	}
	if !strings.Contains(fmt.Sprint(c), "Token: set") {
		t.Errorf("String should say a token is set: %s", c)
	}
}

func TestOffline(t *testing.T) {
	h, c, commit := setup(t)
	ctx := context.Background()
	if _, err := c.Snapshot(ctx, bio, "main", "README.md", "corpus/"); err != nil {
		t.Fatal(err)
	}
	h.Reset()
	c.Offline = true

	for _, rev := range []string{"main", commit} {
		s, err := c.Snapshot(ctx, bio, rev, "corpus/**")
		if err != nil {
			t.Fatalf("%s: %v", rev, err)
		}
		if s.Commit != commit || len(s.Files) != 1 || s.Files[0].Path != "corpus/corpus.jsonl" {
			t.Errorf("%s: %+v", rev, s)
		}
	}

	// Known to exist (from the listing) but never downloaded.
	_, err := c.Snapshot(ctx, bio, "main")
	mustErr(t, err, ErrOffline, "HF_HUB_OFFLINE", "query/query.jsonl", "qrels/qrels.jsonl")
	_, err = c.Snapshot(ctx, bio, "v1.0")
	mustErr(t, err, ErrOffline, "HF_HUB_OFFLINE", "@v1.0", "no refs/v1.0")
	_, err = c.Resolve(ctx, bio, "main")
	mustErr(t, err, ErrOffline, "HF_HUB_OFFLINE")

	empty := &Client{Endpoint: h.URL(), CacheDir: t.TempDir(), Offline: true}
	_, err = empty.Snapshot(ctx, bio, "main")
	mustErr(t, err, ErrOffline, "datasets/R2MED/Biology@main", "HF_HUB_OFFLINE")
	if n := h.Requests(); n != 0 {
		t.Errorf("%d requests in offline mode", n)
	}
}

func TestCompleteCacheMakesNoRequest(t *testing.T) {
	h, c, commit := setup(t)
	ctx := context.Background()
	if _, err := c.Snapshot(ctx, bio, "main"); err != nil {
		t.Fatal(err)
	}
	h.Reset()
	fresh := newClient(t, h)
	fresh.CacheDir = c.CacheDir
	for _, tc := range []struct {
		rev  string
		pats []string
	}{
		{"main", nil},
		{commit, nil},
		{"main", []string{"qrels/**"}},
		{commit, []string{"README.md"}},
	} {
		s, err := fresh.Snapshot(ctx, bio, tc.rev, tc.pats...)
		if err != nil {
			t.Fatalf("%s %v: %v", tc.rev, tc.pats, err)
		}
		if s.Commit != commit {
			t.Errorf("commit %s", s.Commit)
		}
		if n := h.Requests(); n != 0 {
			t.Fatalf("%s %v: %d requests with a complete cache: %+v", tc.rev, tc.pats, n, h.Records())
		}
	}

	// A tag never resolved here costs the revision request, and only once.
	for range 2 {
		if _, err := fresh.Snapshot(ctx, bio, "v1.0"); err != nil {
			t.Fatal(err)
		}
	}
	if n := h.Requests(); n != 1 || h.Count("hub", "GET", "/revision/v1.0") != 1 {
		t.Errorf("new tag: %d requests, want 1: %+v", n, h.Records())
	}
	h.Reset()

	// A file that went missing is fetched again, and only it.
	rc, _ := c.repoCache(bio)
	os.Remove(rc.pointer(commit, "README.md"))
	if _, err := fresh.Snapshot(ctx, bio, "main"); err != nil {
		t.Fatal(err)
	}
	if n := h.Count("hub", "HEAD", ""); n != 0 {
		t.Errorf("%d HEADs: the blob was still in the cache", n)
	}
	if _, err := os.Readlink(rc.pointer(commit, "README.md")); err != nil {
		t.Errorf("README.md not relinked: %v", err)
	}
}

// A cache laid out by hand exactly as huggingface_hub writes it.
func pythonCache(t *testing.T, root, commit string, files []hubtest.File) {
	t.Helper()
	repoDir := filepath.Join(root, "datasets--R2MED--Biology")
	write := func(p string, b []byte) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(repoDir, "refs", "main"), []byte(commit))
	for _, f := range files {
		write(filepath.Join(repoDir, "blobs", f.ETag()), f.Content)
		ptr := filepath.Join(repoDir, "snapshots", commit, filepath.FromSlash(f.Path))
		os.MkdirAll(filepath.Dir(ptr), 0o755)
		target := strings.Repeat("../", strings.Count(f.Path, "/")+2) + "blobs/" + f.ETag()
		if err := os.Symlink(target, ptr); err != nil {
			t.Fatal(err)
		}
	}
	os.MkdirAll(filepath.Join(root, ".locks", "datasets--R2MED--Biology"), 0o755)
}

func TestReusesPythonMadeCache(t *testing.T) {
	h := hubtest.NewServer(t)
	files := biologyFiles()
	commit := h.AddRepoFiles(bio.String(), files)
	c := newClient(t, h)
	pythonCache(t, c.CacheDir, commit, files[:4]) // Python fetched all but notes.txt
	ctx := context.Background()

	c.Offline = true
	s, err := c.Snapshot(ctx, bio, "main")
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Files) != 4 {
		t.Fatalf("%d files: %+v", len(s.Files), s.Files)
	}
	for _, f := range s.Files {
		var src hubtest.File
		for _, ff := range files {
			if ff.Path == f.Path {
				src = ff
			}
		}
		if f.Size != int64(len(src.Content)) || (src.LFS && f.SHA256 != src.ETag()) || (!src.LFS && f.BlobID != src.ETag()) {
			t.Errorf("%+v does not describe %s", f, src.Path)
		}
	}
	checkContents(t, s, files[:4])
	_, err = c.Snapshot(ctx, bio, "main", "qrels/extra/notes.txt")
	mustErr(t, err, ErrOffline, "qrels/extra/notes.txt")

	c.Offline = false
	if _, err := c.Snapshot(ctx, bio, "main", "README.md", "corpus/corpus.jsonl"); err != nil {
		t.Fatal(err)
	}
	if n := h.Requests(); n != 0 {
		t.Errorf("named files present: %d requests, want 0", n)
	}
	// A glob needs the file list (one request) but no download.
	if _, err := c.Snapshot(ctx, bio, "main", "q*/*.jsonl"); err != nil {
		t.Fatal(err)
	}
	if n := h.Requests(); n != 1 || h.Count("hub", "GET", "/api/") != 1 {
		t.Errorf("%d requests, want only the revision: %+v", n, h.Records())
	}
	h.Reset()
	if _, err := c.Snapshot(ctx, bio, "main", "q*/*.jsonl"); err != nil {
		t.Fatal(err)
	}
	if n := h.Requests(); n != 0 {
		t.Errorf("second call: %d requests", n)
	}
	// The missing file is downloaded next to Python's.
	s, err = c.Snapshot(ctx, bio, "main")
	if err != nil {
		t.Fatal(err)
	}
	checkContents(t, s, files)
	if n := h.Count("hub", "GET", "/resolve/"); n != 1 {
		t.Errorf("%d downloads, want 1 (notes.txt)", n)
	}
}

func TestPatternsSelectDownloads(t *testing.T) {
	h, c, _ := setup(t)
	s, err := c.Snapshot(context.Background(), bio, "main", "qrels/*.jsonl", "**/query.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range s.Files {
		got = append(got, f.Path)
	}
	if want := "[qrels/qrels.jsonl query/query.jsonl]"; fmt.Sprint(got) != want {
		t.Errorf("files %v, want %s", got, want)
	}
	if n := h.Count("hub", "HEAD", ""); n != 2 {
		t.Errorf("%d HEADs, want 2", n)
	}
	if _, err := os.Lstat(s.Path("README.md")); err == nil {
		t.Error("README.md fetched though not asked for")
	}
	_, err = c.Snapshot(context.Background(), bio, "main", "corpus/[")
	mustErr(t, err, nil, `"corpus/["`, "syntax error")
}

func TestMatch(t *testing.T) {
	for _, tc := range []struct {
		pattern, name string
		want          bool
	}{
		{"*.jsonl", "corpus.jsonl", true},
		{"*.jsonl", "corpus/corpus.jsonl", false}, // path.Match: * stops at /
		{"**/*.jsonl", "corpus.jsonl", true},
		{"**/*.jsonl", "a/b/c.jsonl", true},
		{"corpus/**", "corpus/a/b.txt", true},
		{"corpus/**", "corpus", true},
		{"corpus/**", "corpusx/a", false},
		{"a/**/z", "a/z", true},
		{"a/**/z", "a/b/c/z", true},
		{"a/**/**/z", "a/b/z", true},
		{"a/**/z", "a/b/c/y", false},
		{"**", "x/y/z", true},
		{"q?ery/*", "query/q.jsonl", true},
		{"[ab]*.txt", "c.txt", false},
		{"README.md", "README.md", true},
		{"README.md", "docs/README.md", false},
	} {
		if got := Match(tc.pattern, tc.name); got != tc.want {
			t.Errorf("Match(%q, %q) = %v, want %v", tc.pattern, tc.name, got, tc.want)
		}
	}
	ps, err := compilePatterns([]string{"qrels/"})
	if err != nil || !ps.match("qrels/extra/notes.txt") || ps.match("query/query.jsonl") {
		t.Errorf("a trailing / should mean everything below: %v %v", ps, err)
	}
}

func TestContextCancel(t *testing.T) {
	h, c, _ := setup(t)
	corpus := biologyFiles()[1]
	defer h.Hold(corpus.ETag())()
	rc, _ := c.repoCache(bio)
	inc := rc.blob(corpus.ETag()) + ".incomplete"
	half := int64(len(corpus.Content) / 2)
	ctx, cancel := context.WithCancel(context.Background())
	var canceledAt time.Time
	go func() { // cancel once the server is holding the connection half-way
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			if st, err := os.Stat(inc); err == nil && st.Size() == half {
				break
			}
		}
		canceledAt = time.Now()
		cancel()
	}()
	_, err := c.Snapshot(ctx, bio, "main", corpus.Path)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if d := time.Since(canceledAt); d > 2*time.Second {
		t.Errorf("took %v to notice the cancellation", d)
	}
	st, err := os.Stat(inc)
	if err != nil || st.Size() != half {
		t.Errorf("the partial download should stay for resuming: %v %v", st, err)
	}
}

func TestBoundedParallelDownloads(t *testing.T) {
	h := hubtest.NewServer(t)
	var files []hubtest.File
	for i := range 8 {
		files = append(files, hubtest.File{Path: fmt.Sprintf("shard-%d.bin", i), Content: bytes.Repeat([]byte{byte(i)}, 5000), LFS: true})
	}
	h.AddRepoFiles(bio.String(), files)
	h.Delay(50 * time.Millisecond)
	c := newClient(t, h)
	c.Workers = 3
	s, err := c.Snapshot(context.Background(), bio, "main")
	if err != nil {
		t.Fatal(err)
	}
	checkContents(t, s, files)
	if m := h.MaxConcurrentGETs(); m > 3 || m < 2 {
		t.Errorf("%d downloads at once, want 2 or 3 with Workers=3", m)
	}
}

func TestCopiesWhereSymlinksFail(t *testing.T) {
	_, c, _ := setup(t)
	symlink = func(string, string) error { return &os.LinkError{Op: "symlink", Err: errors.ErrUnsupported} }
	defer func() { symlink = os.Symlink }()
	s, err := c.Snapshot(context.Background(), bio, "main")
	if err != nil {
		t.Fatal(err)
	}
	checkContents(t, s, biologyFiles())
	st, err := os.Lstat(s.Path("corpus/corpus.jsonl"))
	if err != nil || !st.Mode().IsRegular() {
		t.Errorf("want a regular file: %v %v", st, err)
	}
}

func TestModelRepo(t *testing.T) {
	h := hubtest.NewServer(t)
	model := Repo{Type: Model, ID: "org/tiny-encoder"}
	files := []hubtest.File{{Path: "config.json", Content: []byte("{}")}, {Path: "model.safetensors", Content: bytes.Repeat([]byte{7}, 4096), LFS: true}}
	h.AddRepoFiles(model.String(), files)
	c := newClient(t, h)
	s, err := c.Snapshot(context.Background(), model, "")
	if err != nil {
		t.Fatal(err)
	}
	checkContents(t, s, files)
	if !strings.Contains(s.Dir, "models--org--tiny-encoder") || h.Count("hub", "HEAD", "/org/tiny-encoder/resolve/") != 2 || h.Count("hub", "GET", "/api/models/org/tiny-encoder/") != 1 {
		t.Errorf("dir %s, log %+v", s.Dir, h.Records())
	}
}

func TestProgressBarPerFile(t *testing.T) {
	_, c, _ := setup(t)
	var out bytes.Buffer
	c.Progress = progress.Factory{Out: &out, Enabled: true}
	if _, err := c.Snapshot(context.Background(), bio, "main", "corpus/corpus.jsonl"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "corpus/corpus.jsonl") {
		t.Errorf("no bar for the file: %q", out.String())
	}
}

func TestParseURI(t *testing.T) {
	for _, tc := range []struct {
		uri, repo, rev, err string
	}{
		{uri: "hf://datasets/R2MED/Biology", repo: "datasets/R2MED/Biology", rev: "main"},
		{uri: "hf://datasets/hakari-bench/NanoR2MED@v1.0", repo: "datasets/hakari-bench/NanoR2MED", rev: "v1.0"},
		{uri: "hf://models/BAAI/bge-large-en-v1.5@" + strings.Repeat("ab", 20), repo: "models/BAAI/bge-large-en-v1.5", rev: strings.Repeat("ab", 20)},
		{uri: "hf://datasets/R2MED/Biology@refs%2Fconvert%2Fparquet", repo: "datasets/R2MED/Biology", rev: "refs/convert/parquet"},
		{uri: "https://huggingface.co/datasets/R2MED/Biology", err: "no hf:// scheme"},
		{uri: "hf://spaces/a/b", err: `"spaces" is not datasets or models`},
		{uri: "hf://datasets/Biology", err: "OWNER/NAME"},
		{uri: "hf://datasets/R2MED/Biology/corpus.jsonl", err: "OWNER/NAME"},
		{uri: "hf://datasets/R2MED/Biology@main/corpus.jsonl", err: "URL-encoded"},
		{uri: "hf://datasets/R2MED/Bio--logy", err: "'--'"},
		{uri: "hf://datasets/R2MED/-Biology", err: "repository id"},
		{uri: "hf://datasets/R2MED/Biology@", err: "revision"},
		{uri: "hf://datasets/R2MED/Biology@..%2F..%2Fx", err: "revision"},
	} {
		repo, rev, err := ParseURI(tc.uri)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), "hf://datasets/OWNER/NAME") {
				t.Errorf("%s: error %v, want one mentioning %q and the accepted form", tc.uri, err, tc.err)
			}
			continue
		}
		if err != nil || repo.String() != tc.repo || rev != tc.rev {
			t.Errorf("%s: %v %q %v, want %s %q", tc.uri, repo, rev, err, tc.repo, tc.rev)
		}
	}
}

func TestFromEnv(t *testing.T) {
	for _, k := range []string{"HF_ENDPOINT", "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_TOKEN_PATH", "HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "XDG_CACHE_HOME"} {
		t.Setenv(k, "")
	}
	home := t.TempDir()
	t.Setenv("HF_HOME", home)
	os.WriteFile(filepath.Join(home, "token"), []byte("hf_fromLoginFile\n"), 0o600)

	c := FromEnv()
	if c.Endpoint != "" || c.CacheDir != filepath.Join(home, "hub") || c.Token != "hf_fromLoginFile" || c.Offline {
		t.Errorf("defaults: %+v token %q", c, c.Token)
	}
	if c.endpointString() != DefaultEndpoint {
		t.Errorf("endpoint %s", c.endpointString())
	}

	t.Setenv("HF_ENDPOINT", "https://hf-mirror.example/")
	t.Setenv("HF_TOKEN", " hf_fromEnv ")
	t.Setenv("HF_HUB_CACHE", "$HF_HOME/elsewhere")
	t.Setenv("HF_HUB_OFFLINE", "yes")
	c = FromEnv()
	if c.Endpoint != "https://hf-mirror.example" || c.Token != "hf_fromEnv" || c.CacheDir != filepath.Join(home, "elsewhere") || !c.Offline {
		t.Errorf("from env: %+v token %q", c, c.Token)
	}
	for v, want := range map[string]bool{"1": true, "TRUE": true, "on": true, "0": false, "no": false} {
		t.Setenv("HF_HUB_OFFLINE", v)
		if got := FromEnv().Offline; got != want {
			t.Errorf("HF_HUB_OFFLINE=%s: offline %v", v, got)
		}
	}
	// As in Python, TRANSFORMERS_OFFLINE counts only when HF_HUB_OFFLINE is unset.
	t.Setenv("HF_HUB_OFFLINE", "")
	t.Setenv("TRANSFORMERS_OFFLINE", "1")
	if !FromEnv().Offline {
		t.Error("TRANSFORMERS_OFFLINE=1 ignored")
	}

	var zero Client
	dir, err := zero.cacheRoot()
	if h, _ := os.UserHomeDir(); err != nil || dir != filepath.Join(h, ".cache", "huggingface", "hub") {
		t.Errorf("zero Client cache %s %v", dir, err)
	}
}

// Mirrors and proxies may answer without X-Error-Code.
func TestStatusWithoutErrorCode(t *testing.T) {
	c := &Client{Endpoint: "https://mirror.example", Token: "hf_SomeTokenValue1234"}
	req := httptest.NewRequest("HEAD", "https://mirror.example/datasets/R2MED/Biology/resolve/abc/x.txt?sig=1", nil)
	for _, tc := range []struct {
		status int
		file   string
		is     error
		parts  []string
	}{
		{403, "x.txt", ErrUnauthorized, []string{"HTTP 403", "rejected", "HF_TOKEN", "accept its terms at https://mirror.example/datasets/R2MED/Biology"}},
		{401, "", ErrUnauthorized, []string{"HTTP 401", "HF_TOKEN"}},
		{404, "x.txt", ErrEntryNotFound, []string{`"x.txt"`}},
		{404, "", ErrRepoNotFound, []string{"datasets/R2MED/Biology", "not found"}},
		{400, "", nil, []string{"unexpected HTTP 400", "https://mirror.example/datasets/R2MED/Biology/resolve/abc/x.txt"}},
	} {
		resp := &http.Response{StatusCode: tc.status, Header: http.Header{}, Body: http.NoBody, Request: req}
		err := c.statusError(resp, target{repo: bio, revision: "abc", file: tc.file})
		mustErr(t, err, tc.is, tc.parts...)
		if strings.Contains(err.Error(), "sig=1") {
			t.Errorf("signed query in the message: %v", err)
		}
	}
	resp := &http.Response{StatusCode: 502, Header: http.Header{"Retry-After": {"3"}}, Body: http.NoBody, Request: req}
	var tr *transient
	if err := c.statusError(resp, target{repo: bio}); !errors.As(err, &tr) || tr.after != 3*time.Second {
		t.Errorf("502 should be transient with Retry-After 3s: %#v", err)
	}
}

func TestServerIgnoringRangeRestarts(t *testing.T) {
	h, c, _ := setup(t)
	h.IgnoreRange(true)
	corpus := biologyFiles()[1]
	rc, _ := c.repoCache(bio)
	os.MkdirAll(filepath.Join(rc.dir, "blobs"), 0o755)
	// A leftover that must not be kept: the 200 answer starts at byte 0.
	os.WriteFile(rc.blob(corpus.ETag())+".incomplete", []byte("stale bytes"), 0o644)
	var bar bytes.Buffer
	c.Progress = progress.Factory{Out: &bar, Enabled: true}
	s, err := c.Snapshot(context.Background(), bio, "main", corpus.Path)
	if err != nil {
		t.Fatal(err)
	}
	checkContents(t, s, []hubtest.File{corpus})
	if n := h.Count("cdn", "GET", ""); n != 1 {
		t.Errorf("%d GETs, want 1", n)
	}
	// The bar started at the 11 stale bytes as resumed and went back to
	// zero, with nothing resumed, when the whole body came, so it never
	// counts them twice.
	b := bar.String()
	if !strings.Contains(b, "corpus/corpus.jsonl (0 B/81.0 kB, 0 B resumed)") {
		t.Errorf("the bar did not start over with the download:\n%q", b)
	}
	if over := fmt.Sprintf("(%d B/", len(corpus.Content)+11); strings.Contains(b, over) {
		t.Errorf("the bar counted the stale bytes on top of the whole body (%s):\n%q", over, b)
	}
}

// Two clients on one cache, as two processes would be: the blob is
// downloaded once, and both snapshots are complete.
func TestConcurrentClientsShareOneDownload(t *testing.T) {
	h, c, _ := setup(t)
	h.Delay(100 * time.Millisecond)
	c2 := newClient(t, h)
	c2.CacheDir = c.CacheDir
	corpus := biologyFiles()[1]
	errs := make(chan error, 2)
	for _, cl := range []*Client{c, c2} {
		go func() {
			s, err := cl.Snapshot(context.Background(), bio, "main", corpus.Path)
			if err == nil && !present(s.Path(corpus.Path), int64(len(corpus.Content))) {
				err = errors.New("snapshot entry missing")
			}
			errs <- err
		}()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if n := h.Count("cdn", "GET", ""); n != 1 {
		t.Errorf("%d downloads of one blob", n)
	}
}

func TestEndpointThatIsNotAHub(t *testing.T) {
	portal := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<html>Please log in to the Wi-Fi</html>")
	}))
	defer portal.Close()
	c := &Client{Endpoint: portal.URL, CacheDir: t.TempDir()}
	_, err := c.Snapshot(context.Background(), bio, "main")
	mustErr(t, err, nil, "not the Hub's JSON", "HF_ENDPOINT")

	c.Endpoint = "ftp://example.org"
	_, err = c.Snapshot(context.Background(), bio, "main")
	mustErr(t, err, nil, `"ftp://example.org"`, "HF_ENDPOINT")
}

// bigLFS is a large LFS file for the restart tests.
func bigLFS() hubtest.File {
	b := make([]byte, 4<<20)
	for i := range b {
		b[i] = byte(i*7 + i>>9)
	}
	return hubtest.File{Path: "corpus/big.bin", Content: b, LFS: true}
}

// A server restart in the middle of a download (the connection dropped,
// then connections refused for 4 seconds) does not abort it: the client
// retries with backoff and resumes where the body broke off.
func TestDownloadSurvivesServerRestart(t *testing.T) {
	t.Parallel() // seven seconds of waiting
	big := bigLFS()
	h, _, _ := setup(t, big)
	c := &Client{Endpoint: h.URL(), CacheDir: t.TempDir()} // the default backoff: 1 s, 2 s, 4 s, …
	const cut = 1 << 20
	h.Restart(big.ETag(), cut, 4*time.Second)
	start := time.Now()
	s, err := c.Snapshot(context.Background(), bio, "main", big.Path)
	if err != nil {
		t.Fatalf("download aborted by a 4-second restart: %v", err)
	}
	checkContents(t, s, []hubtest.File{big})
	if d := time.Since(start); d < 4*time.Second {
		t.Errorf("finished in %v, before the server came back", d)
	}
	var ranges []string
	for _, r := range h.Records() {
		if r.Server == "cdn" && r.Method == "GET" {
			ranges = append(ranges, r.Range)
		}
	}
	if want := []string{"", fmt.Sprintf("bytes=%d-", cut)}; fmt.Sprint(ranges) != fmt.Sprint(want) {
		t.Errorf("CDN GET ranges %q, want %q (the restart resumed, not restarted)", ranges, want)
	}
}

// A server that does not come back is given up on after RetryFor, with
// what arrived kept for the next run.
func TestDownloadGivesUpAfterRetryFor(t *testing.T) {
	t.Parallel()
	big := bigLFS()
	h, _, _ := setup(t, big)
	c := &Client{Endpoint: h.URL(), CacheDir: t.TempDir(), backoff: 100 * time.Millisecond, RetryFor: 1500 * time.Millisecond}
	h.Restart(big.ETag(), 1<<20, time.Hour)
	start := time.Now()
	_, err := c.Snapshot(context.Background(), bio, "main", big.Path)
	mustErr(t, err, ErrUnreachable, "gave up after", "the next run resumes")
	if d := time.Since(start); d < 1500*time.Millisecond || d > 10*time.Second {
		t.Errorf("gave up after %v; want about RetryFor (1.5 s)", d)
	}
	h.Up()
}
