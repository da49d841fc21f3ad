package hub

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/r2med/r2med/internal/fileio"
)

// A file already in the cache is checked before it is reused, as a
// download is: a blob named by a sha256 must hash to it, and one named by
// a git blob id (a file kept in git, its id confirmed by the listing) must
// hash to that, so that a blob damaged on disk (overwritten in place, cut
// short, edited by hand) is never read as the data. huggingface_hub trusts
// any blob that exists; here a damaged one is fetched again when online
// and is an error naming it when offline.
//
// Hashing a large corpus on every run would cost seconds, so a check that
// passed is recorded beside the blob's size and modification time in
// .r2med/verified/ETAG (one "SIZE MTIME-NS" line per copy checked); a file
// whose size and time still match a line is taken as checked. A file
// rewritten in place gets a new time and is hashed again. Where the cache
// cannot be written to (a shared, read-only one), the record goes to the
// user's own cache directory (r2med/hub-verified/REPO-FOLDER/ETAG).

// reuseSums says what a cached file can be checked against: the name of
// its blob when that is a sha256, or a git blob id that the listing gives
// for the file. Anything else (a mirror's own ETag) cannot be checked.
func reuseSums(name string, f File) sums {
	switch {
	case sha256RE.MatchString(name):
		return sums{sha256: name}
	case IsCommit(name) && f.SHA256 == "" && f.BlobID == name:
		return sums{git: name}
	}
	return sums{}
}

func (rc repoCache) stampPath(name string) string {
	return filepath.Join(rc.dir, ".r2med", "verified", name)
}

// stampPaths are where a check of the blob name may be recorded: in the
// cache, else in the user's cache directory.
func (rc repoCache) stampPaths(name string) []string {
	paths := []string{rc.stampPath(name)}
	if d, err := userCacheDir(); err == nil {
		paths = append(paths, filepath.Join(d, "r2med", "hub-verified", filepath.Base(rc.dir), name))
	}
	return paths
}

// userCacheDir is a variable so that tests can point it elsewhere.
var userCacheDir = os.UserCacheDir

// stampLine identifies one state of a file: its size and modification
// time.
func stampLine(st os.FileInfo) string {
	return fmt.Sprintf("%d %d", st.Size(), st.ModTime().UnixNano())
}

func (rc repoCache) stamped(name, line string) bool {
	for _, p := range rc.stampPaths(name) {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		for _, l := range strings.Split(string(b), "\n") {
			if l == line {
				return true
			}
		}
	}
	return false
}

// stamp records that the file in the state line hashed to name, in the
// first place that can be written. Errors are ignored: the record only
// saves hashing the file again.
func (rc repoCache) stamp(name, line string) {
	if rc.stamped(name, line) {
		return
	}
	for _, p := range rc.stampPaths(name) {
		old, _ := os.ReadFile(p)
		err := fileio.WriteAtomic(p, func(w io.Writer) error {
			var buf bytes.Buffer
			for _, l := range strings.Split(string(old), "\n") {
				if l != "" {
					buf.WriteString(l + "\n")
				}
			}
			buf.WriteString(line + "\n")
			_, err := w.Write(buf.Bytes())
			return err
		})
		if err == nil {
			return
		}
	}
}

// damaged checks the cached file p (a snapshot entry, a symlink to its
// blob or a copy of it, or a blob itself) of the repository file f, whose
// blob is named name. It returns how the file differs from what its name
// says, or "" when it matches or cannot be checked.
func (rc repoCache) damaged(p, name string, f File) (string, error) {
	want := reuseSums(name, f)
	if want == (sums{}) {
		return "", nil
	}
	st, err := os.Stat(p)
	if err != nil {
		return "", err
	}
	line := stampLine(st)
	if rc.stamped(name, line) {
		return "", nil
	}
	r, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer r.Close()
	d := newDigests(want, st.Size())
	n, err := io.Copy(d, r)
	if err != nil {
		return "", fmt.Errorf("checking the cached %s: %w", p, err)
	}
	if bad := d.mismatch(want, n); bad != "" {
		return bad, nil
	}
	rc.stamp(name, line)
	return "", nil
}

// blobName is the name of the blob a snapshot entry stands for: the
// target of its symlink, else (a copy) the ETag the listing gives.
func blobName(ptr string, f File) string {
	if t, err := os.Readlink(ptr); err == nil {
		return filepath.Base(t)
	}
	return f.etag()
}

// reusable reports whether the snapshot entry ptr of f is present with
// the expected size and passes damaged's check.
func (rc repoCache) reusable(ptr string, f File) (bool, error) {
	if !present(ptr, f.Size) {
		return false, nil
	}
	bad, err := rc.damaged(ptr, blobName(ptr, f), f)
	return bad == "" && err == nil, err
}
