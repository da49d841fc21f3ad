package hub

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"

	"github.com/r2med/r2med/internal/fileio"
)

// repoCache is one repository's folder in the cache (see the package
// comment for the layout).
type repoCache struct {
	dir   string // CACHE/datasets--OWNER--NAME
	locks string // CACHE/.locks/datasets--OWNER--NAME
}

func (c *Client) repoCache(repo Repo) (repoCache, error) {
	root, err := c.cacheRoot()
	if err != nil {
		return repoCache{}, err
	}
	return repoCache{
		dir:   filepath.Join(root, repo.folder()),
		locks: filepath.Join(root, ".locks", repo.folder()),
	}, nil
}

func (rc repoCache) snapshotDir(commit string) string {
	return filepath.Join(rc.dir, "snapshots", commit)
}

func (rc repoCache) pointer(commit, p string) string {
	return filepath.Join(rc.snapshotDir(commit), filepath.FromSlash(p))
}

func (rc repoCache) blob(etag string) string { return filepath.Join(rc.dir, "blobs", etag) }

func (rc repoCache) lock(etag string) string { return filepath.Join(rc.locks, etag+".lock") }

func (rc repoCache) refPath(rev string) string {
	return filepath.Join(rc.dir, "refs", filepath.FromSlash(rev))
}

func (rc repoCache) listingPath(commit string) string {
	return filepath.Join(rc.dir, ".r2med", commit+".json")
}

// readRef returns the commit a branch or tag pointed to when last
// resolved, or "" when the cache has no such ref. Python writes refs
// without a newline; one written by hand may have one.
func (rc repoCache) readRef(rev string) string {
	b, err := os.ReadFile(rc.refPath(rev))
	if err != nil {
		return ""
	}
	if c := strings.TrimSpace(string(b)); IsCommit(c) {
		return c
	}
	return ""
}

// writeRef records rev → commit, leaving an up-to-date ref untouched so
// that a read-only shared cache still works.
func (rc repoCache) writeRef(rev, commit string) error {
	if rev == commit || rc.readRef(rev) == commit {
		return nil
	}
	return fileio.WriteAtomic(rc.refPath(rev), func(w io.Writer) error {
		_, err := io.WriteString(w, commit)
		return err
	})
}

// commitFor resolves rev without the network: a full sha stands for
// itself, anything else goes through refs/.
func (rc repoCache) commitFor(rev string) string {
	if IsCommit(rev) {
		return rev
	}
	return rc.readRef(rev)
}

type listing struct {
	Version int `json:"version"`
	Revision
}

const listingVersion = 1

func (rc repoCache) readListing(commit string) (*Revision, bool) {
	b, err := os.ReadFile(rc.listingPath(commit))
	if err != nil {
		return nil, false
	}
	var l listing
	if json.Unmarshal(b, &l) != nil || l.Version != listingVersion || l.Commit != commit {
		return nil, false
	}
	for _, f := range l.Files {
		if !safePath(f.Path) {
			return nil, false
		}
	}
	return &l.Revision, true
}

func (rc repoCache) writeListing(rev *Revision) error {
	return fileio.WriteAtomic(rc.listingPath(rev.Commit), func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", " ")
		return enc.Encode(listing{Version: listingVersion, Revision: *rev})
	})
}

// present reports whether a snapshot entry resolves to a regular file of
// the expected size (any size when want < 0). A dangling symlink, left when
// a blob was deleted by hand, counts as absent.
func present(p string, want int64) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular() && (want < 0 || st.Size() == want)
}

var etagRE = regexp.MustCompile(`^[0-9A-Za-z][0-9A-Za-z._-]*$`)

// cachedFile describes a snapshot entry found on disk. Its blob name is the
// ETag, which tells an LFS sha256 from a git blob id.
func cachedFile(snapshot, rel string) (File, bool) {
	p := filepath.Join(snapshot, filepath.FromSlash(rel))
	st, err := os.Stat(p)
	if err != nil || !st.Mode().IsRegular() {
		return File{}, false
	}
	f := File{Path: rel, Size: st.Size()}
	if target, err := os.Readlink(p); err == nil {
		switch etag := filepath.Base(target); {
		case sha256RE.MatchString(etag):
			f.SHA256 = etag
		case IsCommit(etag): // 40 hex digits: a git blob id
			f.BlobID = etag
		}
	}
	return f, true
}

// walkSnapshot lists the files a snapshot directory holds, for caches that
// have no listing (made by Python, or laid out by hand).
func walkSnapshot(dir string) ([]File, error) {
	var files []File
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		if f, ok := cachedFile(dir, filepath.ToSlash(rel)); ok {
			files = append(files, f)
		}
		return nil
	})
	return files, err // WalkDir visits in lexical order, so files are sorted
}

// symlink is a variable so that tests can take symlinks away.
var symlink = os.Symlink

// link points a snapshot entry at its blob with a relative symlink, exactly
// as huggingface_hub does, so the cache survives being moved; where the
// file system refuses symlinks it copies the blob instead. An existing
// entry is replaced by a rename, never removed first, so that a concurrent
// reader never finds it missing.
func link(blob, ptr string) error {
	if err := os.MkdirAll(filepath.Dir(ptr), 0o755); err != nil {
		return err
	}
	rel, err := filepath.Rel(filepath.Dir(ptr), blob)
	if err != nil {
		return err
	}
	if t, err := os.Readlink(ptr); err == nil && t == rel {
		return nil
	}
	err = symlink(rel, ptr)
	if err == nil {
		return nil
	}
	if errors.Is(err, fs.ErrExist) {
		tmp := fmt.Sprintf("%s.tmp-%d-%d", ptr, os.Getpid(), linkSeq.Add(1))
		if err = symlink(rel, tmp); err == nil {
			if err = os.Rename(tmp, ptr); err == nil {
				return nil
			}
			os.Remove(tmp)
		}
	}
	src, err := os.Open(blob)
	if err != nil {
		return err
	}
	defer src.Close()
	return fileio.WriteAtomic(ptr, func(w io.Writer) error {
		_, err := io.Copy(w, src)
		return err
	})
}

var linkSeq atomic.Int64
