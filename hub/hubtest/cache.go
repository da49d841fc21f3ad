package hubtest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Cache is a Hugging Face cache directory (what HF_HUB_CACHE names) filled
// as the Python huggingface_hub library fills it (`hf download`,
// transformers): blobs named by their ETag, each snapshot's files relative
// symlinks to them, refs/ naming the commit a branch points at, and
// nothing of package hub's own (no file lists). It stands for a cache
// another tool filled, such as a newer main pulled after a run.
type Cache struct {
	Dir string
	tb  testing.TB
}

// NewCache is an empty cache in dir.
func NewCache(tb testing.TB, dir string) *Cache {
	return &Cache{Dir: dir, tb: tb}
}

// Put lays files (path → content) out as the snapshot commit (40 lowercase
// hex digits) of repository id (OWNER/NAME for a dataset, or
// datasets/OWNER/NAME or models/OWNER/NAME) and points main at it, as
// downloading main at that commit does.
func (c *Cache) Put(id, commit string, files map[string][]byte) {
	c.tb.Helper()
	if !commitRE.MatchString(commit) {
		c.tb.Fatalf("hubtest: commit %q is not 40 lowercase hex digits", commit)
	}
	repo := c.repoDir(id)
	for p, content := range files {
		f := File{Path: p, Content: content, LFS: isLFS(content)}
		blob := filepath.Join(repo, "blobs", f.ETag())
		link := filepath.Join(repo, "snapshots", commit, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(blob), 0o755); err != nil {
			c.tb.Fatal(err)
		}
		if err := os.WriteFile(blob, content, 0o644); err != nil {
			c.tb.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
			c.tb.Fatal(err)
		}
		up := strings.Repeat("../", 2+strings.Count(p, "/"))
		if err := os.Remove(link); err != nil && !os.IsNotExist(err) {
			c.tb.Fatal(err)
		}
		if err := os.Symlink(up+"blobs/"+f.ETag(), link); err != nil {
			c.tb.Fatal(err)
		}
	}
	c.SetRef(id, "main", commit)
}

// SetRef points branch or tag ref of repository id at commit, as
// huggingface_hub writes it (no trailing newline).
func (c *Cache) SetRef(id, ref, commit string) {
	c.tb.Helper()
	path := filepath.Join(c.repoDir(id), "refs", filepath.FromSlash(ref))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		c.tb.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(commit), 0o644); err != nil {
		c.tb.Fatal(err)
	}
}

// repoDir is the repository's folder: CACHE/models--OWNER--NAME.
func (c *Cache) repoDir(id string) string {
	c.tb.Helper()
	key := repoKey(c.tb, id)
	kind, name, _ := strings.Cut(key, "/")
	return filepath.Join(c.Dir, kind+"--"+strings.ReplaceAll(name, "/", "--"))
}

// Use points package hub's environment (hub.FromEnv) at the cache for the
// rest of the test, with none of the user's Hub settings (home, token,
// mirror): offline (HF_HUB_OFFLINE=1) when endpoint is "", else online
// with HF_ENDPOINT=endpoint (a Server's URL).
func (c *Cache) Use(endpoint string) {
	c.tb.Helper()
	for _, k := range []string{"HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_TOKEN_PATH", "HUGGINGFACE_HUB_CACHE", "TRANSFORMERS_OFFLINE", "XDG_CACHE_HOME"} {
		c.tb.Setenv(k, "")
	}
	c.tb.Setenv("HF_HOME", c.tb.TempDir())
	c.tb.Setenv("HF_HUB_CACHE", c.Dir)
	c.tb.Setenv("HF_ENDPOINT", endpoint)
	if endpoint == "" {
		c.tb.Setenv("HF_HUB_OFFLINE", "1")
	} else {
		c.tb.Setenv("HF_HUB_OFFLINE", "")
	}
}
