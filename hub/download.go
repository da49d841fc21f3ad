package hub

import (
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/r2med/r2med/internal/progress"
)

// fileMeta is what the Hub's HEAD on /resolve/ tells about a file.
type fileMeta struct {
	etag     string
	size     int64  // -1 when not given
	location string // where to GET it: a CDN for LFS files, else the resolve URL
}

func (c *Client) resolveURL(repo Repo, commit, p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return c.endpointString() + repo.webPath() + "/resolve/" + commit + "/" + strings.Join(segs, "/")
}

// head learns a file's ETag, size and download location the way
// huggingface_hub's get_hf_file_metadata does: a HEAD that follows only
// relative redirects (a renamed repository) and stops at an absolute one
// (the CDN), reading X-Linked-Etag and X-Linked-Size, which describe the
// LFS object behind a redirect, before ETag and Content-Length.
func (c *Client) head(ctx context.Context, t target) (fileMeta, error) {
	hdr := http.Header{"Accept-Encoding": {"identity"}} // so Content-Length is the real size
	var meta fileMeta
	err := c.retry(ctx, func() error {
		cur := c.resolveURL(t.repo, t.revision, t.file)
		for hops := 0; ; hops++ {
			resp, cancel, err := c.do(ctx, "HEAD", cur, false, hdr, t)
			if err != nil {
				return err
			}
			resp.Body.Close()
			cancel()
			meta = fileMeta{location: resp.Request.URL.String(), size: -1}
			if resp.StatusCode >= 300 && resp.StatusCode < 400 {
				loc := resp.Header.Get("Location")
				lu, err := resp.Request.URL.Parse(loc)
				if loc == "" || err != nil {
					return newError(fmt.Sprintf("%s@%s: %q: redirect without a usable Location from %s", t.repo, t.revision, t.file, shortURL(resp.Request.URL)))
				}
				if u, _ := url.Parse(loc); u.Host == "" && hops < 5 {
					cur = lu.String()
					continue
				}
				meta.location = lu.String()
			}
			meta.etag = normalizeETag(firstHeader(resp.Header, "X-Linked-Etag", "ETag"))
			if s, err := strconv.ParseInt(firstHeader(resp.Header, "X-Linked-Size", "Content-Length"), 10, 64); err == nil && s >= 0 {
				meta.size = s
			}
			return nil
		}
	})
	if err != nil {
		return fileMeta{}, err
	}
	if !etagRE.MatchString(meta.etag) {
		return fileMeta{}, newError(fmt.Sprintf("%s@%s: %q: %s gave no usable ETag (%q), which names the file in the cache; a proxy or mirror in between may be dropping it",
			t.repo, t.revision, t.file, c.endpointString(), meta.etag))
	}
	return meta, nil
}

func firstHeader(h http.Header, names ...string) string {
	for _, n := range names {
		if v := h.Get(n); v != "" {
			return v
		}
	}
	return ""
}

func normalizeETag(e string) string {
	return strings.Trim(strings.TrimPrefix(strings.TrimSpace(e), "W/"), `"`)
}

// sums are the hashes a download must have; empty fields are not checked.
type sums struct {
	sha256 string
	git    string // git blob sha1: sha1("blob SIZE\x00" + content)
}

// expect decides what a file can be checked against: its LFS sha256, or
// the ETag when it has the form of one; the git blob id only when the Hub's
// listing and its ETag agree on it, since some mirrors use ETags of their
// own.
func expect(f File, meta fileMeta, size int64) sums {
	var s sums
	switch {
	case f.SHA256 != "":
		s.sha256 = f.SHA256
	case sha256RE.MatchString(meta.etag):
		s.sha256 = meta.etag
	case f.BlobID != "" && f.BlobID == meta.etag && size >= 0:
		s.git = meta.etag
	}
	return s
}

type digests struct {
	size   int64
	sha256 hash.Hash
	git    hash.Hash
}

func newDigests(want sums, size int64) *digests {
	d := &digests{size: size}
	d.reset(want)
	return d
}

func (d *digests) reset(want sums) {
	d.sha256, d.git = nil, nil
	if want.sha256 != "" {
		d.sha256 = sha256.New()
	}
	if want.git != "" {
		d.git = sha1.New()
		fmt.Fprintf(d.git, "blob %d\x00", d.size)
	}
}

func (d *digests) Write(p []byte) (int, error) {
	if d.sha256 != nil {
		d.sha256.Write(p)
	}
	if d.git != nil {
		d.git.Write(p)
	}
	return len(p), nil
}

// mismatch describes how the download differs from what was expected, or
// returns "" when it does not.
func (d *digests) mismatch(want sums, got int64) string {
	var bad []string
	if d.size >= 0 && got != d.size {
		bad = append(bad, fmt.Sprintf("%d bytes instead of %d", got, d.size))
	}
	if d.sha256 != nil {
		if h := hex.EncodeToString(d.sha256.Sum(nil)); h != want.sha256 {
			bad = append(bad, fmt.Sprintf("sha256 %s instead of %s", h, want.sha256))
		}
	}
	if d.git != nil {
		if h := hex.EncodeToString(d.git.Sum(nil)); h != want.git {
			bad = append(bad, fmt.Sprintf("git blob id %s instead of %s", h, want.git))
		}
	}
	return strings.Join(bad, ", ")
}

var errStalled = errors.New("no data received for a while")

// download fills blob from loc through blob.incomplete. What is already in
// .incomplete (from an earlier, interrupted run) is kept and the rest is
// asked for with a Range request; cut connections are resumed the same way.
// The finished file is checked and renamed into place; a corrupted one is
// deleted and fetched once more from scratch before giving up.
func (c *Client) download(ctx context.Context, t target, loc, blob string, size int64, want sums) error {
	inc := blob + ".incomplete"
	for round := 1; ; round++ {
		got, d, err := c.fetch(ctx, t, loc, inc, size, want)
		if err != nil {
			return err
		}
		bad := d.mismatch(want, got)
		if bad == "" {
			return os.Rename(inc, blob)
		}
		if err := os.Remove(inc); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		if round == 2 {
			return newError(fmt.Sprintf("%s@%s: %q came corrupted twice (%s); the download was deleted: run again later, and report it to the repository owner if it persists",
				t.repo, t.revision, t.file, bad), ErrCorrupt)
		}
	}
}

// fetch brings inc up to size bytes (or to the end of the body when the
// size is unknown) and returns its length and digests.
func (c *Client) fetch(ctx context.Context, t target, loc, inc string, size int64, want sums) (int64, *digests, error) {
	f, err := os.OpenFile(inc, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return 0, nil, err
	}
	defer f.Close()
	d := newDigests(want, size)
	// Hash what an earlier attempt left; this also puts the offset at its end.
	have, err := io.Copy(d, f)
	if err != nil {
		return 0, nil, err
	}
	var bar *progress.Bar // nil until drawn: Restart on nil does nothing
	restart := func() error {
		d.reset(want)
		have = 0
		bar.Restart()
		if err := f.Truncate(0); err != nil {
			return err
		}
		_, err := f.Seek(0, io.SeekStart)
		return err
	}
	if size >= 0 && have > size {
		if err := restart(); err != nil {
			return 0, nil, err
		}
	}
	total := size
	if size < 0 {
		total = -1
	}
	// The bytes an earlier attempt left show as done but count in
	// neither the rate nor the time left.
	bar = c.Progress.ResumeBytes(total, have, t.file)
	defer bar.Done()

	buf := make([]byte, 256<<10)
	lastByte := time.Now()
	attempt := func() error {
		if size >= 0 && have == size {
			return nil
		}
		actx, cancel := context.WithCancelCause(ctx)
		defer cancel(nil)
		stall := time.AfterFunc(stallTimeout, func() { cancel(errStalled) })
		defer stall.Stop()
		req, err := c.newRequest(actx, "GET", loc)
		if err != nil {
			return err
		}
		req.Header.Set("Accept-Encoding", "identity")
		if have > 0 {
			req.Header.Set("Range", fmt.Sprintf("bytes=%d-", have))
		}
		resp, err := c.httpClient(true).Do(req)
		if err != nil {
			e := c.transportError(ctx.Err(), req.URL, err)
			var tr *transient
			if errors.Is(err, syscall.ECONNREFUSED) && !errors.As(e, &tr) && ctx.Err() == nil {
				// The server answered moments ago: a refused connection
				// now is a restart, worth waiting for.
				e = &transient{err: e}
			}
			return e
		}
		defer resp.Body.Close()
		switch {
		case resp.StatusCode == http.StatusPartialContent:
			if start, ok := rangeStart(resp.Header.Get("Content-Range")); !ok || start != have {
				if err := restart(); err != nil {
					return err
				}
				return &transient{err: newError(fmt.Sprintf("%s@%s: %q: asked to resume at byte %d, got %q", t.repo, t.revision, t.file, have, resp.Header.Get("Content-Range")))}
			}
		case resp.StatusCode == http.StatusOK:
			if have > 0 { // the server ignored Range: take the whole body
				if err := restart(); err != nil {
					return err
				}
			}
		case resp.StatusCode == http.StatusRequestedRangeNotSatisfiable && have > 0:
			if err := restart(); err != nil {
				return err
			}
			return &transient{err: newError(fmt.Sprintf("%s@%s: %q: cannot resume at byte %d (HTTP 416)", t.repo, t.revision, t.file, have))}
		case resp.StatusCode >= 300:
			return c.statusError(resp, t)
		}
		var body io.Reader = resp.Body
		if size >= 0 {
			body = io.LimitReader(resp.Body, size-have+1) // one extra byte reveals an oversized body
		}
		for {
			n, rerr := body.Read(buf)
			if n > 0 {
				lastByte = time.Now()
				stall.Reset(stallTimeout)
				if _, err := f.Write(buf[:n]); err != nil {
					return err
				}
				d.Write(buf[:n])
				have += int64(n)
				bar.Add(n)
			}
			if rerr == io.EOF {
				break
			}
			if rerr != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				if context.Cause(actx) == errStalled {
					rerr = errStalled
				}
				return &transient{err: c.cutError(t, have, size, rerr)}
			}
		}
		if size >= 0 && have < size {
			return &transient{err: c.cutError(t, have, size, io.ErrUnexpectedEOF)}
		}
		return nil
	}
	if err := c.retryResuming(ctx, func() time.Time { return lastByte }, attempt); err != nil {
		var g *gaveUp
		if errors.As(err, &g) {
			of := ""
			if size >= 0 {
				of = fmt.Sprintf(" of %d", size)
			}
			return 0, nil, newError(fmt.Sprintf("%s@%s: download of %q stopped at byte %d%s and gave up after %d attempts over %v without a byte (last: %s); what arrived is kept and the next run resumes from there",
				t.repo, t.revision, t.file, have, of, g.attempts, c.retryFor(), c.redact(g.last.Error())), ErrUnreachable, g.last)
		}
		return 0, nil, err
	}
	if err := f.Sync(); err != nil {
		return 0, nil, err
	}
	return have, d, nil
}

func (c *Client) cutError(t target, have, size int64, err error) error {
	of := ""
	if size >= 0 {
		of = fmt.Sprintf(" of %d", size)
	}
	return newError(fmt.Sprintf("%s@%s: download of %q broke off at byte %d%s: %s; what arrived is kept and the next run resumes from there",
		t.repo, t.revision, t.file, have, of, c.redact(err.Error())), ErrUnreachable, err)
}

// rangeStart reads the first byte position of "bytes START-END/TOTAL".
func rangeStart(h string) (int64, bool) {
	rest, ok := strings.CutPrefix(strings.TrimSpace(h), "bytes ")
	if !ok {
		return 0, false
	}
	start, _, ok := strings.Cut(rest, "-")
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(start, 10, 64)
	return n, err == nil
}

// fetchFile makes the snapshot entry for f exist, downloading its blob
// only when no blob of that ETag is in the cache yet.
func (c *Client) fetchFile(ctx context.Context, rc repoCache, repo Repo, commit string, f File) error {
	ptr := rc.pointer(commit, f.Path)
	if t, err := os.Readlink(ptr); err == nil && f.SHA256 != "" {
		// A commit's LFS file is named by its sha256 for good: a link
		// to another (in a cache with no listing to compare, one that
		// Python filled) means the server now serves other content.
		if was := filepath.Base(t); sha256RE.MatchString(was) && was != f.SHA256 {
			return newError(fmt.Sprintf("%s@%s: %q is listed with sha256 %s, but this cache fetched it for that commit as %s; a commit's files never change on the Hub, so the server (or a proxy in between) is not serving that commit as it was, and nothing was fetched. If the new file is the one you mean, remove the old one (rm %s) and run again",
				repo, commit, f.Path, f.SHA256, was, ptr), ErrChanged)
		}
	}
	if ok, err := rc.reusable(ptr, f); ok || err != nil {
		return err
	}
	// The listing already names the blob: another revision may have it.
	if e := f.etag(); etagRE.MatchString(e) {
		if ok, err := rc.reusable(rc.blob(e), f); err != nil {
			return err
		} else if ok {
			return link(rc.blob(e), ptr)
		}
	}
	t := target{repo: repo, revision: commit, file: f.Path}
	meta, err := c.head(ctx, t)
	if err != nil {
		return err
	}
	size := meta.size
	if size < 0 {
		size = f.Size
	}
	blob := rc.blob(meta.etag)
	unlock, err := lockBlob(ctx, rc.lock(meta.etag))
	if err != nil {
		return err
	}
	defer unlock()
	// Absent, or damaged: of the wrong size, or with content its name
	// does not hash to (checked under the lock, which a download holds).
	fine := present(blob, size)
	if fine {
		bad, err := rc.damaged(blob, meta.etag, f)
		if err != nil {
			return err
		}
		fine = bad == ""
	}
	if !fine {
		if err := os.Remove(blob); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(blob), 0o755); err != nil {
			return err
		}
		want := expect(f, meta, size)
		if err := c.download(ctx, t, meta.location, blob, size, want); err != nil {
			return err
		}
		if reuseSums(meta.etag, f) == want {
			// Checked as it arrived: no need to hash it at its first reuse.
			if st, err := os.Stat(blob); err == nil {
				rc.stamp(meta.etag, stampLine(st))
			}
		}
	}
	return link(blob, ptr)
}
