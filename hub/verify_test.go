package hub

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/r2med/r2med/hub/hubtest"
)

// damage rewrites p in place with one byte changed, keeping its size, and
// gives it a modification time of its own, as an editor or a stray
// process writing into the cache would.
func damage(t *testing.T, p string) {
	t.Helper()
	b := readFile(t, p)
	b[len(b)/2] ^= 0x20
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	when := time.Now().Add(time.Hour)
	if err := os.Chtimes(p, when, when); err != nil {
		t.Fatal(err)
	}
}

// TestDamagedCacheIsNotReused: a blob damaged on disk but of the right
// size is not read as the data: online it is fetched again, offline it is
// an error naming it and saying what to do. An undamaged cache is still
// reused without a request.
func TestDamagedCacheIsNotReused(t *testing.T) {
	h, c, commit := setup(t)
	ctx := context.Background()
	if _, err := c.Snapshot(ctx, bio, "main"); err != nil {
		t.Fatal(err)
	}
	rc, _ := c.repoCache(bio)
	files := biologyFiles()
	readme, corpus := files[0], files[1] // one kept in git, one in LFS

	// A download is checked as it arrives, and recorded so.
	for _, f := range []hubtest.File{readme, corpus} {
		if _, err := os.Stat(rc.stampPath(f.ETag())); err != nil {
			t.Errorf("%s: no record of its check: %v", f.Path, err)
		}
	}

	h.Reset()
	fresh := newClient(t, h)
	fresh.CacheDir = c.CacheDir
	if _, err := fresh.Snapshot(ctx, bio, "main"); err != nil {
		t.Fatal(err)
	}
	if n := h.Requests(); n != 0 {
		t.Fatalf("an undamaged cache: %d requests", n)
	}

	for _, f := range []hubtest.File{readme, corpus} {
		damage(t, rc.blob(f.ETag()))
	}
	offline := newClient(t, h)
	offline.CacheDir, offline.Offline = c.CacheDir, true
	_, err := offline.Snapshot(ctx, bio, "main")
	mustErr(t, err, ErrCorrupt, `"README.md" is damaged in the cache`, "git blob id", "rm "+rc.blob(readme.ETag()), "HF_HUB_OFFLINE unset")
	if !errors.Is(err, ErrOffline) {
		t.Errorf("not ErrOffline: %v", err)
	}
	_, err = offline.Snapshot(ctx, bio, "main", "corpus/corpus.jsonl")
	mustErr(t, err, ErrCorrupt, `"corpus/corpus.jsonl" is damaged in the cache`, "sha256", "rm "+rc.blob(corpus.ETag()))

	h.Reset()
	s, err := fresh.Snapshot(ctx, bio, "main")
	if err != nil {
		t.Fatal(err)
	}
	checkContents(t, s, files)
	if n := h.Count("cdn", "GET", "/"+corpus.ETag()); n != 1 {
		t.Errorf("corpus fetched %d times, want once more", n)
	}
	if n := h.Count("hub", "GET", "/resolve/main/README.md") + h.Count("hub", "GET", "/resolve/"+commit+"/README.md"); n != 1 {
		t.Errorf("README.md fetched %d times, want once more: %+v", n, h.Records())
	}
	if n := h.Count("cdn", "GET", "/"+files[2].ETag()); n != 0 {
		t.Errorf("an undamaged file was fetched again")
	}
	if _, err := offline.Snapshot(ctx, bio, "main"); err != nil {
		t.Errorf("offline after the repair: %v", err)
	}
}

// pythonServed serves biologyFiles and lays them out in the client's
// cache as huggingface_hub would have (no listing, no record of checks).
func pythonServed(t *testing.T) (*hubtest.Server, *Client, string) {
	h := hubtest.NewServer(t)
	commit := h.AddRepoFiles(bio.String(), biologyFiles())
	c := newClient(t, h)
	pythonCache(t, c.CacheDir, commit, biologyFiles())
	return h, c, commit
}

// TestDamagedPythonCache: a cache filled by huggingface_hub has no record
// of checks; its blobs are hashed at their first reuse, and a damaged one
// is found.
func TestDamagedPythonCache(t *testing.T) {
	_, c, _ := pythonServed(t)
	files := biologyFiles()
	c.Offline = true
	ctx := context.Background()
	if _, err := c.Snapshot(ctx, bio, "main", "corpus/corpus.jsonl"); err != nil {
		t.Fatal(err)
	}
	damage(t, filepath.Join(c.CacheDir, "datasets--R2MED--Biology", "blobs", files[3].ETag()))
	_, err := c.Snapshot(ctx, bio, "main")
	mustErr(t, err, ErrCorrupt, `"qrels/qrels.jsonl" is damaged in the cache`)
	_, err = c.Snapshot(ctx, bio, "main", "qrels/qrels.jsonl")
	mustErr(t, err, ErrCorrupt, `"qrels/qrels.jsonl" is damaged in the cache`)

	// Online, the literal pattern is not answered from the cache.
	c.Offline = false
	s, err := c.Snapshot(ctx, bio, "main", "qrels/qrels.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	checkContents(t, s, files[3:4])
}

// changedBiology is biologyFiles with the corpus and the queries
// replaced, as a server that swapped them under the same commit serves
// them.
func changedBiology() []hubtest.File {
	files := biologyFiles()
	files[1].Content = append(bytes.Clone(files[1].Content), `{"id":"d2","text":"new"}`+"\n"...)
	files[2].Content = []byte(`{"id":"0","text":"how?"}` + "\n")
	return files
}

// TestCommitChangedOnServer: a server that lists other files for a
// pinned commit than when the cache fetched it is refused, naming the
// files, and the cached snapshot is left as it was, not silently mixed
// with the new files.
func TestCommitChangedOnServer(t *testing.T) {
	h, c, commit := setup(t)
	ctx := context.Background()
	if _, err := c.Snapshot(ctx, bio, commit, "README.md", "corpus/corpus.jsonl"); err != nil {
		t.Fatal(err)
	}
	h.AddRepoFiles(bio.String(), changedBiology(), hubtest.Commit(commit))
	h.Reset()
	_, err := c.Snapshot(ctx, bio, commit)
	rc, _ := c.repoCache(bio)
	mustErr(t, err, ErrChanged, "commit "+commit, `"corpus/corpus.jsonl" has sha256`, `"query/query.jsonl" has sha256`, "rm -r "+rc.snapshotDir(commit))
	if n := h.Count("cdn", "GET", "") + h.Count("hub", "GET", "/resolve/"); n != 0 {
		t.Errorf("%d downloads after the change was seen", n)
	}
	s := &Snapshot{Dir: rc.snapshotDir(commit)}
	checkContents(t, s, biologyFiles()[:2])
}

// TestCommitChangedUnderPythonCache: with no listing to compare (a cache
// Python filled), a snapshot entry linked to another sha256 than the
// server now lists is refused, not relinked to the new file.
func TestCommitChangedUnderPythonCache(t *testing.T) {
	h, c, commit := pythonServed(t)
	h.AddRepoFiles(bio.String(), changedBiology(), hubtest.Commit(commit))
	_, err := c.Snapshot(context.Background(), bio, "main")
	mustErr(t, err, ErrChanged, `"corpus/corpus.jsonl" is listed with sha256 `+hubtest.SHA256(changedBiology()[1].Content), "fetched it for that commit as "+biologyFiles()[1].ETag(), "rm ")
	s := &Snapshot{Dir: filepath.Join(c.CacheDir, "datasets--R2MED--Biology", "snapshots", commit)}
	checkContents(t, s, biologyFiles())
}

// TestCheckRecordedOutsideReadOnlyCache: where the cache cannot take the
// record of a check (here .r2med is a file, so nothing can be made under
// it), the record goes to the user's cache directory, and the next reuse
// is not hashed again.
func TestCheckRecordedOutsideReadOnlyCache(t *testing.T) {
	_, c, _ := pythonServed(t)
	files := biologyFiles()
	rc, _ := c.repoCache(bio)
	if err := os.WriteFile(filepath.Join(rc.dir, ".r2med"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	user := t.TempDir()
	old := userCacheDir
	userCacheDir = func() (string, error) { return user, nil }
	t.Cleanup(func() { userCacheDir = old })

	c.Offline = true
	if _, err := c.Snapshot(context.Background(), bio, "main", "corpus/corpus.jsonl"); err != nil {
		t.Fatal(err)
	}
	corpus := files[1]
	rec := filepath.Join(user, "r2med", "hub-verified", "datasets--R2MED--Biology", corpus.ETag())
	if _, err := os.Stat(rec); err != nil {
		t.Fatalf("no record of the check in the user's cache directory: %v", err)
	}
	st, err := os.Stat(rc.blob(corpus.ETag()))
	if err != nil {
		t.Fatal(err)
	}
	if !rc.stamped(corpus.ETag(), stampLine(st)) {
		t.Error("the record is not found again")
	}
}
