package hubtest_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/r2med/r2med/hub/hubtest"
)

type listing struct {
	SHA      string `json:"sha"`
	Siblings []struct {
		RFilename string `json:"rfilename"`
		LFS       *struct {
			SHA256 string `json:"sha256"`
		} `json:"lfs"`
	} `json:"siblings"`
}

func revision(t *testing.T, s *hubtest.Server, repo, rev string) (int, listing) {
	t.Helper()
	resp, err := http.Get(s.URL() + "/api/" + repo + "/revision/" + rev + "?blobs=true")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var l listing
	if resp.StatusCode == http.StatusOK {
		if err := json.NewDecoder(resp.Body).Decode(&l); err != nil {
			t.Fatal(err)
		}
	}
	return resp.StatusCode, l
}

// get fetches a file as a client that follows redirects would.
func get(t *testing.T, s *hubtest.Server, repo, rev, file string) (int, []byte, http.Header) {
	t.Helper()
	resp, err := http.Get(s.URL() + "/" + repo + "/resolve/" + rev + "/" + file)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b, resp.Header
}

// AddRepo's rule decides where a file is served from, and so which ETag a
// client caches it under.
func TestAddRepoChoosesLFS(t *testing.T) {
	s := hubtest.NewServer(t)
	big := bytes.Repeat([]byte("a"), hubtest.LFSThreshold)
	files := map[string][]byte{
		"README.md":         []byte("# small text\n"),
		"corpus.jsonl":      big,
		"data/x.parquet":    {'P', 'A', 'R', '1', 0, 1, 2},
		"almost-binary.txt": {0xff, 0xfe, 'a'},
		"below/limit.jsonl": big[:hubtest.LFSThreshold-1],
	}
	commit := s.AddRepo("org/set", files)
	code, l := revision(t, s, "datasets/org/set", "main")
	if code != http.StatusOK || l.SHA != commit || len(l.Siblings) != len(files) {
		t.Fatalf("HTTP %d, %+v; want commit %s and %d files", code, l, commit, len(files))
	}
	wantLFS := map[string]bool{"corpus.jsonl": true, "data/x.parquet": true, "almost-binary.txt": true}
	for _, sib := range l.Siblings {
		if (sib.LFS != nil) != wantLFS[sib.RFilename] {
			t.Errorf("%s: LFS %v, want %v", sib.RFilename, sib.LFS != nil, wantLFS[sib.RFilename])
		}
		code, body, hdr := get(t, s, "datasets/org/set", commit, sib.RFilename)
		// After the CDN redirect, the headers are the CDN's.
		if code != http.StatusOK || !bytes.Equal(body, files[sib.RFilename]) || (!wantLFS[sib.RFilename] && hdr.Get("X-Repo-Commit") != commit) {
			t.Errorf("%s: HTTP %d, %d bytes, commit %q", sib.RFilename, code, len(body), hdr.Get("X-Repo-Commit"))
		}
	}
	if s.Count(hubtest.CDN, "GET", "/blobs/") != len(wantLFS) {
		t.Errorf("LFS files not served through the CDN: %+v", s.Records())
	}
}

func TestCommitsAndRefs(t *testing.T) {
	s := hubtest.NewServer(t)
	pinned := strings.Repeat("ab", 20)
	if got := s.AddRepo("org/set", map[string][]byte{"a.txt": []byte("v1")}, hubtest.Commit(pinned), hubtest.Refs("v1.0")); got != pinned {
		t.Fatalf("commit %s, want %s", got, pinned)
	}
	second := s.AddRepo("org/set", map[string][]byte{"a.txt": []byte("v2")})
	if second == pinned {
		t.Fatal("a new commit got the old sha")
	}
	for rev, want := range map[string]string{"main": "v2", "v1.0": "v1", pinned: "v1", second: "v2"} {
		if code, body, _ := get(t, s, "datasets/org/set", rev, "a.txt"); code != http.StatusOK || string(body) != want {
			t.Errorf("@%s: HTTP %d %q, want %q", rev, code, body, want)
		}
	}
	if code, _ := revision(t, s, "datasets/org/set", "nope"); code != http.StatusNotFound {
		t.Errorf("unknown revision: HTTP %d", code)
	}
	if code, _ := revision(t, s, "datasets/org/other", "main"); code != http.StatusUnauthorized {
		t.Errorf("unknown repository: HTTP %d, want 401 as the Hub answers without a token", code)
	}

	s.AddRepo("models/org/enc", map[string][]byte{"config.json": []byte("{}")})
	if code, body, _ := get(t, s, "org/enc", "main", "config.json"); code != http.StatusOK || string(body) != "{}" {
		t.Errorf("model repository: HTTP %d %q", code, body)
	}

	s.Rename("org/set", "org/renamed")
	if code, body, _ := get(t, s, "datasets/org/set", "main", "a.txt"); code != http.StatusOK || string(body) != "v2" {
		t.Errorf("old name: HTTP %d %q", code, body)
	}
	if s.Count(hubtest.Hub, "GET", "/datasets/org/renamed/resolve/") != 1 {
		t.Errorf("the old name did not redirect: %+v", s.Records())
	}
}
