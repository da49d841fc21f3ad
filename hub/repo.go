package hub

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
)

// RepoType is the kind of Hub repository.
type RepoType string

const (
	Dataset RepoType = "dataset"
	Model   RepoType = "model"
)

// DefaultRevision is what an unpinned reference means, as on the Hub.
const DefaultRevision = "main"

// Repo names a Hub repository.
type Repo struct {
	Type RepoType
	ID   string // "OWNER/NAME"
}

// String gives the form used in hf:// URIs and in messages,
// "datasets/OWNER/NAME".
func (r Repo) String() string { return string(r.Type) + "s/" + r.ID }

// folder is the repository's directory name in the cache; huggingface_hub
// derives it the same way (repo_folder_name).
func (r Repo) folder() string {
	return string(r.Type) + "s--" + strings.ReplaceAll(r.ID, "/", "--")
}

// webPath is where the repository lives under the endpoint, both for its web
// page and for /resolve/ URLs: models have no type prefix.
func (r Repo) webPath() string {
	if r.Type == Model {
		return "/" + r.ID
	}
	return "/" + string(r.Type) + "s/" + r.ID
}

func (r Repo) apiPath() string { return "/api/" + string(r.Type) + "s/" + r.ID }

var namePart = regexp.MustCompile(`^[A-Za-z0-9_](?:[A-Za-z0-9_.-]*[A-Za-z0-9_])?$`)

// validate applies the Hub's own rules for repo ids (huggingface_hub's
// validate_repo_id), restricted to the OWNER/NAME form, which also keeps the
// id safe to use in cache paths.
func (r Repo) validate() error {
	if r.Type != Dataset && r.Type != Model {
		return fmt.Errorf("repository type %q: want %q or %q", r.Type, Dataset, Model)
	}
	owner, name, ok := strings.Cut(r.ID, "/")
	if !ok || !namePart.MatchString(owner) || !namePart.MatchString(name) ||
		strings.Contains(r.ID, "--") || strings.Contains(r.ID, "..") || len(r.ID) > 96 {
		return fmt.Errorf("repository id %q: want OWNER/NAME of letters, digits, '-', '_' and '.', without '--' or '..', at most 96 characters", r.ID)
	}
	return nil
}

var commitRE = regexp.MustCompile(`^[0-9a-f]{40}$`)

// IsCommit reports whether rev is a full commit sha rather than a branch or
// tag; only full shas name snapshot directories.
func IsCommit(rev string) bool { return commitRE.MatchString(rev) }

// validRevision rejects revisions that could escape refs/ when used as a
// path. Slashes are allowed: branches such as refs/convert/parquet are
// stored as nested files, as Python does.
func validRevision(rev string) error {
	if rev == "" || strings.HasPrefix(rev, "/") || strings.HasSuffix(rev, "/") ||
		strings.ContainsAny(rev, "\\\x00") {
		return fmt.Errorf("revision %q is not a branch, tag or commit name", rev)
	}
	for _, seg := range strings.Split(rev, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return fmt.Errorf("revision %q is not a branch, tag or commit name", rev)
		}
	}
	return nil
}

const uriForm = "hf://datasets/OWNER/NAME[@REVISION] or hf://models/OWNER/NAME[@REVISION]"

// ParseURI reads "hf://datasets/OWNER/NAME[@REVISION]" (or hf://models/…)
// and returns the repository and the revision, "main" when none is given.
// A revision containing "/" must be URL-encoded, as huggingface_hub's
// HfFileSystem writes it (@refs%2Fconvert%2Fparquet), so that a path after
// the repository is never mistaken for part of a revision.
func ParseURI(uri string) (Repo, string, error) {
	bad := func(why string) (Repo, string, error) {
		return Repo{}, "", fmt.Errorf("%q is not a Hub repository URI (%s); want %s", uri, why, uriForm)
	}
	rest, ok := strings.CutPrefix(uri, "hf://")
	if !ok {
		return bad("no hf:// scheme")
	}
	kind, rest, _ := strings.Cut(rest, "/")
	var repo Repo
	switch kind {
	case "datasets":
		repo.Type = Dataset
	case "models":
		repo.Type = Model
	default:
		return bad(fmt.Sprintf("%q is not datasets or models", kind))
	}
	id, rev, hasRev := strings.Cut(rest, "@")
	if strings.Count(id, "/") != 1 {
		return bad("the repository must be OWNER/NAME, with nothing after it but @REVISION")
	}
	repo.ID = id
	if err := repo.validate(); err != nil {
		return bad(err.Error())
	}
	if !hasRev {
		return repo, DefaultRevision, nil
	}
	if strings.Contains(rev, "/") {
		return bad(fmt.Sprintf("revision %q contains '/': paths inside the repository are not part of the URI, and a revision with '/' is written URL-encoded (refs%%2Fconvert%%2Fparquet)", rev))
	}
	rev, err := url.PathUnescape(rev)
	if err != nil {
		return bad(fmt.Sprintf("revision: %v", err))
	}
	if err := validRevision(rev); err != nil {
		return bad(err.Error())
	}
	return repo, rev, nil
}
