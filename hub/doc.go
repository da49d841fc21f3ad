// Package hub fetches dataset and model repositories from the Hugging Face
// Hub into the same on-disk cache that the Python huggingface_hub library
// uses, so a cache filled by `hf download`, `datasets` or `transformers` is
// reused here without a single request, and a cache filled here is reused by
// Python.
//
// # Cache layout
//
// The cache directory is $HF_HUB_CACHE, else $HF_HOME/hub, else
// ~/.cache/huggingface/hub (see [FromEnv]). Each repository has one folder,
// named after its type and id with "/" turned into "--":
//
//	datasets--OWNER--NAME/
//	    blobs/ETAG                  file contents, named by the Hub's ETag:
//	                                the git blob sha1 for files kept in git,
//	                                the sha256 for LFS files
//	    blobs/ETAG.incomplete       a download in progress; resumed with a
//	                                Range request when it is picked up again
//	    refs/REVISION               the commit sha a branch or tag pointed to
//	                                (no trailing newline, like Python writes it)
//	    snapshots/COMMIT/PATH       a relative symlink to ../../blobs/ETAG (one
//	                                more ../ per directory level of PATH), or a
//	                                copy where the file system has no symlinks
//	    .r2med/COMMIT.json          our addition: the file list of that commit
//	    .r2med/verified/ETAG        our addition: the sizes and times at which
//	                                the blob (or a copy) hashed to its ETag
//
// Downloads take the same per-blob lock file as Python
// (CACHE/.locks/datasets--OWNER--NAME/ETAG.lock, with flock on Unix, which is
// what Python's filelock uses there), so the two can fill one cache at once.
// A blob appears only by renaming a complete, verified .incomplete file.
//
// The first addition, .r2med/COMMIT.json, lets [Client.Snapshot] know that a
// snapshot already holds every file a call asks for, and so answer from the
// cache without asking the Hub anything. huggingface_hub's cache scanner
// (`hf cache ls`, scan_cache_dir) reads only refs/ and snapshots/ and ignores
// it. A Python-made cache has no such file: the first online Snapshot then
// costs one request (the file list) and no download.
//
// # Differences from huggingface_hub
//
// A branch or tag is resolved through refs/ when the cache already holds
// everything asked for; Python would ask the Hub whether the branch moved.
// Pin a commit (hf://datasets/OWNER/NAME@SHA) to make this irrelevant.
//
// Patterns follow path.Match, where "*" stops at "/", plus "**" for any
// number of directories; Python's fnmatch lets "*" cross "/".
//
// Downloads are verified: the size always, the sha256 when the ETag or the
// LFS object id is one, and the git blob sha1 when the ETag is the file's git
// blob id. Python checks the size only. A file already in the cache is
// checked the same way before it is reused (once per size and modification
// time, recorded in .r2med/verified/): a damaged blob is fetched again
// when online, and is an error naming it when offline, where Python would
// read it.
//
// A commit's files never change on the Hub. When the server lists other
// files for a commit than the cache recorded for it, or an LFS file with
// another sha256 than its snapshot entry links to, the call fails
// (ErrChanged) rather than mix the two in one snapshot; Python would
// fetch the new file beside the old ones.
//
// With HF_HUB_OFFLINE set, nothing is requested: the revision is resolved
// through refs/ (or taken as a commit) and the files must be in the cache.
// Without it, a Hub that cannot be reached is an error that says so, rather
// than a silent fall-back to whatever the cache holds.
package hub
