package hub

import (
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

// TestDamagedPythonCache: a cache filled by huggingface_hub has no record
// of checks; its blobs are hashed at their first reuse, and a damaged one
// is found.
func TestDamagedPythonCache(t *testing.T) {
	h := hubtest.NewServer(t)
	files := biologyFiles()
	commit := h.AddRepoFiles(bio.String(), files)
	c := newClient(t, h)
	pythonCache(t, c.CacheDir, commit, files)
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
