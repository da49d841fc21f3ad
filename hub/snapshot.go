package hub

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
)

// Snapshot is a revision of a repository as it lies in the cache.
type Snapshot struct {
	Dir    string // CACHE/datasets--OWNER--NAME/snapshots/COMMIT
	Commit string
	Files  []File // the files asked for, sorted by path
}

// Path is the local path of a repository file in the snapshot.
func (s *Snapshot) Path(name string) string {
	return filepath.Join(s.Dir, filepath.FromSlash(name))
}

// Snapshot makes the files of repo at revision that match any of patterns
// (all files when none is given) present in the cache, and returns where.
// A pattern is a path.Match pattern over the slash-separated path, in which
// a "**" element matches any number of directories and a trailing "/"
// means everything below; a pattern without wildcards names one file, which
// must exist.
//
// When the cache already holds every file asked for, no request is made.
// In offline mode no request is ever made, and what the cache lacks is an
// error that names it.
func (c *Client) Snapshot(ctx context.Context, repo Repo, revision string, patterns ...string) (*Snapshot, error) {
	if revision == "" {
		revision = DefaultRevision
	}
	if err := repo.validate(); err != nil {
		return nil, err
	}
	if err := validRevision(revision); err != nil {
		return nil, err
	}
	pats, err := compilePatterns(patterns)
	if err != nil {
		return nil, err
	}
	rc, err := c.repoCache(repo)
	if err != nil {
		return nil, err
	}
	if c.Offline {
		return c.offlineSnapshot(rc, repo, revision, pats)
	}
	if s := cachedSnapshot(rc, revision, pats); s != nil {
		return s, nil
	}

	rev, err := c.Resolve(ctx, repo, revision)
	if err != nil {
		return nil, err
	}
	if old, ok := rc.readListing(rev.Commit); ok {
		if diff := changedFiles(old, rev); diff != "" {
			return nil, newError(fmt.Sprintf("%s@%s: %s lists other files for commit %s than it did when this cache fetched that commit (%s); a commit's files never change on the Hub, so the server (or a proxy in between) is not serving that commit as it was, and nothing was fetched. If the new files are the ones you mean, remove the old ones (rm -r %s %s) and run again",
				repo, revision, c.endpointString(), rev.Commit, diff, rc.snapshotDir(rev.Commit), rc.listingPath(rev.Commit)), ErrChanged)
		}
	}
	if err := rc.writeRef(revision, rev.Commit); err != nil {
		return nil, fmt.Errorf("%s: recording %s → %s in the cache: %w", repo, revision, rev.Commit, err)
	}
	// The listing only saves a request next time; a cache we cannot write
	// to (a read-only shared one) must not fail the call.
	_ = rc.writeListing(rev)

	files, err := pats.selectFiles(rev.Files, repo, revision)
	if err != nil {
		return nil, err
	}
	if err := c.fetchAll(ctx, rc, repo, rev.Commit, files); err != nil {
		return nil, err
	}
	return &Snapshot{Dir: rc.snapshotDir(rev.Commit), Commit: rev.Commit, Files: files}, nil
}

// changedFiles describes how two listings of one commit differ (a file's
// size, blob id or LFS sha256, or a file only one has), "" when they
// agree.
func changedFiles(old, cur *Revision) string {
	was := make(map[string]File, len(old.Files))
	for _, f := range old.Files {
		was[f.Path] = f
	}
	var diffs []string
	for _, f := range cur.Files {
		o, ok := was[f.Path]
		delete(was, f.Path)
		switch {
		case !ok:
			diffs = append(diffs, fmt.Sprintf("%q is new", f.Path))
		case o.SHA256 != f.SHA256:
			diffs = append(diffs, fmt.Sprintf("%q has sha256 %s, was %s", f.Path, f.SHA256, o.SHA256))
		case o.BlobID != f.BlobID || o.Size != f.Size:
			diffs = append(diffs, fmt.Sprintf("%q has blob %s of %d bytes, was %s of %d", f.Path, f.BlobID, f.Size, o.BlobID, o.Size))
		}
	}
	for _, f := range old.Files {
		if _, gone := was[f.Path]; gone {
			diffs = append(diffs, fmt.Sprintf("%q is gone", f.Path))
		}
	}
	return listSome(diffs)
}

// cachedSnapshot answers from the cache alone when it knows the commit and
// holds every file asked for. Which files a pattern asks for is known from
// the commit's listing, or, for patterns that each name one file, from the
// snapshot itself, which is how a Python-made cache is reused unchanged.
func cachedSnapshot(rc repoCache, revision string, pats patterns) *Snapshot {
	commit := rc.commitFor(revision)
	if commit == "" {
		return nil
	}
	dir := rc.snapshotDir(commit)
	var files []File
	if rev, ok := rc.readListing(commit); ok {
		sel, err := pats.selectFiles(rev.Files, Repo{}, revision)
		if err != nil {
			return nil
		}
		for _, f := range sel {
			if ok, _ := rc.reusable(rc.pointer(commit, f.Path), f); !ok {
				return nil // fetched (again) by the caller
			}
		}
		files = sel
	} else {
		if len(pats) == 0 || !pats.literal() {
			return nil
		}
		for _, p := range pats.sortedLiterals() {
			f, ok := cachedFile(dir, p)
			if !ok {
				return nil
			}
			if ok, _ := rc.reusable(filepath.Join(dir, filepath.FromSlash(p)), f); !ok {
				return nil
			}
			files = append(files, f)
		}
	}
	return &Snapshot{Dir: dir, Commit: commit, Files: files}
}

// offlineSnapshot is Snapshot without the network: the revision must be in
// refs/ (or be a commit) and every file asked for in the snapshot.
func (c *Client) offlineSnapshot(rc repoCache, repo Repo, revision string, pats patterns) (*Snapshot, error) {
	const why = "offline mode is on (HF_HUB_OFFLINE is set), so it cannot be fetched: unset HF_HUB_OFFLINE and run once online"
	commit := rc.commitFor(revision)
	if commit == "" {
		return nil, newError(fmt.Sprintf("%s@%s is not in the cache %s (no refs/%s); %s", repo, revision, rc.dir, revision, why), ErrOffline)
	}
	dir := rc.snapshotDir(commit)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return nil, newError(fmt.Sprintf("%s@%s (commit %s) is not in the cache: %s does not exist; %s", repo, revision, commit, dir, why), ErrOffline)
	}
	var files []File
	var missing []string
	if rev, ok := rc.readListing(commit); ok {
		sel, err := pats.selectFiles(rev.Files, repo, revision)
		if err != nil {
			return nil, err
		}
		for _, f := range sel {
			if !present(rc.pointer(commit, f.Path), f.Size) {
				missing = append(missing, f.Path)
			}
		}
		files = sel
	} else {
		onDisk, err := walkSnapshot(dir)
		if err != nil {
			return nil, err
		}
		files = pats.filter(onDisk)
		found := map[string]bool{}
		for _, f := range files {
			found[f.Path] = true
		}
		for _, p := range pats.sortedLiterals() {
			if !found[p] {
				missing = append(missing, p)
			}
		}
		if len(files) == 0 && len(missing) == 0 {
			what := "no files"
			if len(pats) > 0 {
				what = "no file matching " + pats.String()
			}
			return nil, newError(fmt.Sprintf("%s@%s: the cached snapshot %s holds %s; %s", repo, revision, dir, what, why), ErrOffline)
		}
	}
	if len(missing) > 0 {
		return nil, newError(fmt.Sprintf("%s@%s: %d file(s) asked for are not in the cache: %s; %s",
			repo, revision, len(missing), listSome(missing), why), ErrOffline)
	}
	for _, f := range files {
		ptr := rc.pointer(commit, f.Path)
		bad, err := rc.damaged(ptr, blobName(ptr, f), f)
		if err != nil {
			return nil, err
		}
		if bad != "" {
			real, err := filepath.EvalSymlinks(ptr)
			if err != nil {
				real = ptr
			}
			return nil, newError(fmt.Sprintf("%s@%s: %q is damaged in the cache (%s: %s); delete it (rm %s) and run once with HF_HUB_OFFLINE unset to fetch it again",
				repo, revision, f.Path, real, bad, real), ErrOffline, ErrCorrupt)
		}
	}
	return &Snapshot{Dir: dir, Commit: commit, Files: files}, nil
}

func listSome(names []string) string {
	const most = 10
	if len(names) <= most {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:most], ", ") + fmt.Sprintf(" and %d more", len(names)-most)
}

// fetchAll downloads files with a bounded number of workers. The error
// returned is that of the first failing file in path order, whatever the
// timing: after a failure no new file is started, but those under way (all
// earlier in order) finish, so the first failing one always runs.
func (c *Client) fetchAll(ctx context.Context, rc repoCache, repo Repo, commit string, files []File) error {
	errs := make([]error, len(files))
	next := make(chan int)
	var failed sync.Once
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range min(c.workers(), len(files)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if errs[i] = c.fetchFile(ctx, rc, repo, commit, files[i]); errs[i] != nil {
					failed.Do(func() { close(stop) })
				}
			}
		}()
	}
feed:
	for i := range files {
		select {
		case next <- i:
		case <-stop:
			break feed
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return ctx.Err()
}

// patterns select repository files.
type patterns []string

func compilePatterns(in []string) (patterns, error) {
	out := make(patterns, 0, len(in))
	for _, p := range in {
		if strings.HasSuffix(p, "/") {
			p += "**"
		}
		if p == "" || strings.HasPrefix(p, "/") {
			return nil, fmt.Errorf("pattern %q: want a path relative to the repository root", p)
		}
		for _, seg := range strings.Split(p, "/") {
			if _, err := path.Match(seg, ""); err != nil {
				return nil, fmt.Errorf("pattern %q: %w", p, err)
			}
		}
		out = append(out, p)
	}
	return out, nil
}

func (ps patterns) String() string { return strings.Join(ps, " or ") }

func (ps patterns) match(name string) bool {
	if len(ps) == 0 {
		return true
	}
	for _, p := range ps {
		if Match(p, name) {
			return true
		}
	}
	return false
}

func (ps patterns) filter(files []File) []File {
	var out []File
	for _, f := range files {
		if ps.match(f.Path) {
			out = append(out, f)
		}
	}
	return out
}

func isLiteral(p string) bool { return !strings.ContainsAny(p, `*?[\`) }

func (ps patterns) literal() bool {
	for _, p := range ps {
		if !isLiteral(p) {
			return false
		}
	}
	return true
}

// sortedLiterals returns the patterns that name a single file, in path
// order and without duplicates.
func (ps patterns) sortedLiterals() []string {
	var out []string
	seen := map[string]bool{}
	for _, p := range ps {
		if isLiteral(p) && !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// selectFiles picks the files a call asks for, failing when a named file
// does not exist or when patterns were given and nothing matches, which is
// almost always a typo rather than a wish for an empty snapshot.
func (ps patterns) selectFiles(files []File, repo Repo, revision string) ([]File, error) {
	sel := ps.filter(files)
	have := map[string]bool{}
	for _, f := range files {
		have[f.Path] = true
	}
	for _, p := range ps.sortedLiterals() {
		if !have[p] {
			return nil, newError(fmt.Sprintf("%s@%s has no file %q", repo, revision, p), ErrEntryNotFound)
		}
	}
	if len(ps) > 0 && len(sel) == 0 {
		return nil, newError(fmt.Sprintf("%s@%s has no file matching %s (it has %d files)", repo, revision, ps, len(files)), ErrEntryNotFound)
	}
	return sel, nil
}

// Match reports whether a slash-separated path matches a Hub file pattern:
// path.Match applied element by element ("*", "?" and classes stay within
// one element), where an element "**" matches any number (zero included)
// of whole elements. Snapshot's patterns and a dataset card's data_files
// globs both use it.
func Match(pattern, name string) bool {
	return matchElems(strings.Split(pattern, "/"), strings.Split(name, "/"))
}

func matchElems(p, n []string) bool {
	for len(p) > 0 {
		if p[0] == "**" {
			for len(p) > 1 && p[1] == "**" {
				p = p[1:]
			}
			for i := 0; i <= len(n); i++ {
				if matchElems(p[1:], n[i:]) {
					return true
				}
			}
			return false
		}
		if len(n) == 0 {
			return false
		}
		if ok, _ := path.Match(p[0], n[0]); !ok {
			return false
		}
		p, n = p[1:], n[1:]
	}
	return len(n) == 0
}
