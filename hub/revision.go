package hub

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"path"
	"regexp"
	"sort"
	"strings"
)

// File is one file of a repository revision.
type File struct {
	Path   string `json:"path"`    // slash-separated, relative to the repository root
	Size   int64  `json:"size"`    // bytes; -1 when unknown
	BlobID string `json:"blob_id"` // git blob sha1 (of the LFS pointer, for LFS files)
	SHA256 string `json:"sha256"`  // LFS object id; "" for files kept in git
}

// etag is the name huggingface_hub gives the file's blob in the cache: the
// Hub's ETag, which is the LFS sha256 or, for files kept in git, the blob id.
func (f File) etag() string {
	if f.SHA256 != "" {
		return f.SHA256
	}
	return f.BlobID
}

// Revision is a resolved commit and the files it holds, sorted by path.
type Revision struct {
	Commit string `json:"commit"`
	Files  []File `json:"files"`
}

// Resolve asks the Hub which commit revision (a branch, tag or commit)
// names in repo, and which files that commit holds. It always makes a
// request; Snapshot is the call that uses the cache.
func (c *Client) Resolve(ctx context.Context, repo Repo, revision string) (*Revision, error) {
	if revision == "" {
		revision = DefaultRevision
	}
	if err := repo.validate(); err != nil {
		return nil, err
	}
	if err := validRevision(revision); err != nil {
		return nil, err
	}
	if c.Offline {
		return nil, newError(fmt.Sprintf("resolving %s@%s needs the Hub, but offline mode is on (HF_HUB_OFFLINE is set)", repo, revision), ErrOffline)
	}
	if _, err := c.endpointURL(); err != nil {
		return nil, err
	}
	// blobs=true adds sizes, blob ids and LFS sha256s to the file list, as
	// huggingface_hub's repo_info(files_metadata=True) asks.
	u := c.endpointString() + repo.apiPath() + "/revision/" + url.PathEscape(revision) + "?blobs=true"
	t := target{repo: repo, revision: revision}
	var info apiInfo
	err := c.retry(ctx, func() error {
		resp, cancel, err := c.do(ctx, "GET", u, true, nil, t)
		if err != nil {
			return err
		}
		defer cancel()
		defer resp.Body.Close()
		info = apiInfo{}
		if err := json.NewDecoder(resp.Body).Decode(&info); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return newError(fmt.Sprintf("%s@%s: the answer from %s is not the Hub's JSON (%v); is HF_ENDPOINT a Hub or a mirror of it?",
				repo, revision, shortURL(resp.Request.URL), err))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return info.revision(repo, revision, c.endpointString())
}

type apiInfo struct {
	SHA      string `json:"sha"`
	Siblings []struct {
		RFilename string `json:"rfilename"`
		Size      *int64 `json:"size"`
		BlobID    string `json:"blobId"`
		LFS       *struct {
			SHA256 string `json:"sha256"`
			Size   *int64 `json:"size"`
		} `json:"lfs"`
	} `json:"siblings"`
}

var sha256RE = regexp.MustCompile(`^[0-9a-f]{64}$`)

func (info *apiInfo) revision(repo Repo, revision, endpoint string) (*Revision, error) {
	if !IsCommit(info.SHA) {
		return nil, newError(fmt.Sprintf("%s@%s: %s gave no commit sha for the revision (got %q); is HF_ENDPOINT a Hub or a mirror of it?",
			repo, revision, endpoint, info.SHA))
	}
	rev := &Revision{Commit: info.SHA, Files: make([]File, 0, len(info.Siblings))}
	for _, s := range info.Siblings {
		if !safePath(s.RFilename) {
			return nil, newError(fmt.Sprintf("%s@%s: the Hub lists a file with an unusable path %q", repo, revision, s.RFilename))
		}
		f := File{Path: s.RFilename, Size: -1, BlobID: strings.ToLower(s.BlobID)}
		if s.Size != nil {
			f.Size = *s.Size
		}
		if s.LFS != nil && sha256RE.MatchString(strings.ToLower(s.LFS.SHA256)) {
			f.SHA256 = strings.ToLower(s.LFS.SHA256)
			if s.LFS.Size != nil {
				f.Size = *s.LFS.Size
			}
		}
		rev.Files = append(rev.Files, f)
	}
	sort.Slice(rev.Files, func(i, j int) bool { return rev.Files[i].Path < rev.Files[j].Path })
	return rev, nil
}

// safePath accepts only clean relative paths, because repository paths
// become paths under the snapshot directory.
func safePath(p string) bool {
	if p == "" || strings.HasPrefix(p, "/") || strings.ContainsAny(p, "\\\x00") || path.Clean(p) != p {
		return false
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == ".." || seg == "." {
			return false
		}
	}
	return true
}
